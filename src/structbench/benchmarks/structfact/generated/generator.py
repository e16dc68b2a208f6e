"""Generate StructFact questions: per task, the label mix, one seeded draw per question, labels by execution.

For question ``i`` of a task, a generator seeded by ``(seed, task, i)`` draws a fine-grained category
of the task (so the difficulty annotations are balanced), a template of it, a database, a table and a
candidate, and drafts a question aiming at that question's label; a share of drafts also get rows of
another table of the same database as a distractor (never when the claim reads a whole table, whose
"entries listed" must be unambiguous). The draft is kept when its evidence renders so that it reads
back unchanged, fits ``budget`` tokens (the paper's 2,500 by default, counted as the run truncates, so
nothing is ever cut), its claim, executed on the evidence (``execute.py``), gives the wanted label, and
its question and evidence are not those of a question already in the set (a repeat would count one
question twice); else the next draw is tried. Which questions are already in the set is decided in one
order whatever the chunks (``Generator.stream``), so the set is the same under forking; a draw that is
not a repeat consumes the generator exactly as before repeats were skipped, so a seed whose set never drew
a repeat gives the same set as then. Where the tables hold no more questions of a label, the search for it
stops (``STOP_AFTER``) rather than spend every further question's draws on repeats. With ``check`` the
independent evaluator (``verify.py``) re-derives every label from the EVIDENCE strings; a disagreement is a
bug and raises ``LabelMismatch``. The same tables, seed and settings give the same questions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections import Counter, deque
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from structbench.backends.tokens import TokenCounter
from structbench.benchmarks.structfact.generated.claims import tables_read_whole, to_json
from structbench.benchmarks.structfact.generated.execute import Executor
from structbench.benchmarks.structfact.generated.profile import Profile, World
from structbench.benchmarks.structfact.generated.templates import TASKS, TEMPLATES, Template
from structbench.benchmarks.structfact.generated.templates.common import (
    ARITHMETIC,
    COMBINING,
    COMPOSITION,
    MULTIHOP,
    SPACETIME,
    pick_rows,
    table_view,
)
from structbench.benchmarks.structfact.generated.verify import verify
from structbench.benchmarks.structfact.generated.views import Evidence, Unrenderable
from structbench.benchmarks.structfact.loader import LABELS
from structbench.core.forkmap import ahead, fork_imap

log = logging.getLogger(__name__)

PAPER_COUNTS: dict[str, tuple[int, int, int]] = {
    ARITHMETIC: (1438, 1235, 69),
    SPACETIME: (1602, 1717, 112),
    MULTIHOP: (1694, 1621, 79),
    COMPOSITION: (683, 925, 24),
    COMBINING: (1226, 913, 69),
}
"""Fact. / Non-fact. / NEI questions per task in the paper's Table 2."""
LABEL_MIXES: dict[str, Mapping[str, tuple[int, int, int]]] = {
    "paper": PAPER_COUNTS,
    "balanced": dict.fromkeys(TASKS, (1, 1, 1)),
}
CODES = {ARITHMETIC: "arith", SPACETIME: "spacetime", MULTIHOP: "multihop", COMPOSITION: "composition",
         COMBINING: "combining"}
"""Task -> the prefix of its question ids."""
MAX_ATTEMPTS = 200
STOP_AFTER = 20
"""Questions of one task and label in a row (in the order they are settled) that no draw made though some of their
draws found a question already in the set, after which that task's further questions of that label are not drawn
(``Generator.stream``). Such a run spends 20 x 200 draws whose every question found was a repeat (about 1 s). It
changes a set only where a new question of the label was still to come after it. At 3,000 per task over a five-row
table (name, code, population; seed 0 with the paper's mix, seed 3 balanced), Arithmetic YES ran into repeats at
most 14 questions in a row and went on finding new ones, so 20 leaves it drawing; Multi-hop YES and NEI ran out,
with a new question now and then even after runs of up to 277 (one a draw finds once in thousands), which no bound short
of those waits for. Stopping after 20 left out 11 of 10,639 and 10 of 10,878 questions, where 10 left out 34 and 12
(and stopped Arithmetic YES) for 11-13% fewer draws; either drew under half of what no stop did."""
DISTRACTOR_SHARE = 0.3
"""The share of questions whose evidence also shows rows of another table of the database (as the
release's evidence often holds related but unneeded tables and lists)."""
BUDGET = 2500
"""The paper's evidence budget (tokens)."""
CHUNK = 500
"""Questions of one task a forked child drafts at a time (``Generator.stream`` under ``forkmap.forking``)."""
DRAFTED_HERE = 200
"""The most questions a reader may want (``first``) for them to be drafted in this process even under
``forkmap.forking``: a question takes about 4 ms, a fork 20-50 ms (more in a process that holds much), so
``export -n 10`` is quicker without children."""


MISSES = {
    "no_draft": "drafted no claim for the label",
    "unrenderable": "had evidence that would not read back unchanged",
    "over_budget": "had evidence over the {budget:,}-token budget (--max-evidence-tokens)",
    "other_label": "executed to another label",
    "repeated": "repeated a question already in the set (same question and evidence)",
}
"""Why a draw gave no question (``Generator.one``), as a task's shortfall note says it."""


@dataclass(frozen=True)
class Missed:
    """A question no draw made (``Generator.one``): the label it aimed at, and what each of its draws gave."""

    label: str
    draws: Counter[str] = field(default_factory=Counter)
    stopped: bool = False
    """Not drawn at all: the search for its task's questions of its label had stopped (``STOP_AFTER``)."""


class LabelMismatch(RuntimeError):
    """The generator's executed label and the independent check disagree (a bug in one of them)."""


@dataclass(frozen=True)
class Question:
    """One generated question, ready to become a release record."""

    id: str
    task: str
    label: str
    question: str
    evidence: list[str]
    new_evidence: list[str] | None
    """The evidence without its text, for tasks that have text (Combining)."""
    source: str
    table: str
    """The source table the question is asked of (``<source>/<name>``): its cluster."""
    difficulty: str
    template: str
    query: dict[str, Any]

    def record(self) -> dict[str, Any]:
        """The question in the release's JSON format (the demo's fields first)."""
        out: dict[str, Any] = {
            "CHALLENGE": self.task,
            "LABEL": self.label,
            "QUESTION": self.question,
            "EVIDENCE": self.evidence,
            "SOURCE": self.source,
            "TABLE": self.table,
        }
        if self.new_evidence is not None:
            out["NEW_EVIDENCE"] = self.new_evidence
        out |= {"ID": self.id, "DIFFICULTY": self.difficulty, "TEMPLATE": self.template, "QUERY": self.query}
        return out


@dataclass(frozen=True)
class _Drafted:
    """What ``Generator.drafted`` gave for one question, with what its check against the set needs."""

    result: Question | Missed
    key: bytes | None
    """The question's ``pair_key`` (None for ``Missed``)."""
    repeats: tuple[bytes, ...]
    """The keys of the draws skipped as repeats: the result stands for a set that holds them all and not ``key``."""
    undrawn: bool = False
    """Not drawn: a forked child guessed that the search for its label had stopped; it never stands (the parent
    decides whether the search stopped, and draws it if not)."""

    def stands(self, made: Container[bytes]) -> bool:
        """Whether the same draws, checked against the questions ``made`` before this one, give the same result."""
        return not self.undrawn and all(k in made for k in self.repeats) and (self.key is None or self.key not in made)

    def ran_into_repeats(self) -> bool:
        """Whether no draw made the question though some found one already in the set (``STOP_AFTER``)."""
        return isinstance(self.result, Missed) and self.result.draws["repeated"] > 0


def pair_key(question: str, evidence: Sequence[str]) -> bytes:
    """A 16-byte digest of a question and its evidence: two questions are the same when these are (their label,
    executed on the evidence, is then the same too)."""
    text = json.dumps([question, list(evidence)], ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def label_counts(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders get the leftovers)."""
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    counts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


class _Pool:
    """A template's candidates grouped by database and table, so every database is drawn alike."""

    def __init__(self, template: Template, candidates: Sequence[Any]) -> None:
        self.template = template
        grouped: dict[str, dict[str, list[Any]]] = {}
        for c in candidates:
            table = template.table_of(c)
            grouped.setdefault(table.table.group, {}).setdefault(table.name, []).append(c)
        self.groups = [list(tables.values()) for tables in grouped.values()]

    def draw(self, rng: random.Random) -> Any:
        tables = self.groups[rng.randrange(len(self.groups))]
        candidates = tables[rng.randrange(len(tables))]
        return candidates[rng.randrange(len(candidates))]


class Generator:
    """Questions from one set of tables (see the module docstring)."""

    def __init__(self, world: World, counter: TokenCounter, *, budget: int = BUDGET, check: bool = True) -> None:
        self.counter = counter
        self.budget = budget
        self.check = check
        self.executor = Executor()
        self.databases: dict[str, list[Profile]] = {}
        for p in world.profiles:
            if p.key is not None:
                self.databases.setdefault(p.table.group, []).append(p)
        self.pools: dict[str, dict[str, list[_Pool]]] = {}
        """Task -> category -> the pools of its templates that have candidates."""
        for task in TASKS:
            by_category: dict[str, list[_Pool]] = {}
            for template in TEMPLATES[task]:
                candidates = template.candidates(world)
                if candidates:
                    by_category.setdefault(template.category, []).append(_Pool(template, candidates))
            self.pools[task] = by_category

    def tasks(self) -> list[str]:
        """The tasks these tables can make questions for."""
        return [t for t in TASKS if self.pools[t]]

    def generate(self, per_task: int, label_mix: str = "paper", *, seed: int = 0) -> list[Question]:
        """``per_task`` questions for every task the tables allow, interleaved task by task."""
        return list(self.stream(per_task, label_mix, seed=seed))

    def stream(self, per_task: int, label_mix: str = "paper", *, seed: int = 0, first: int | None = None,
               note: Callable[[str], None] | None = None) -> Iterator[Question]:
        """``generate``'s questions in its order, each made when it is read: the first question of every task, then
        the second ... (a task that runs out of questions drops out), so a set of any size is never held. A task that
        gets fewer than ``per_task`` (left out, or questions no draw made, repeats included) is one line to ``note``
        (default: a logged warning) once its last question is read (``shortfall``).

        A draw that repeats a question already in the set is skipped: which are already in it is settled question by
        question in one order, every task's first, then every task's second ... (``settle``), whatever the chunks.
        A chunk is drafted against the questions settled when it is (a forked child's copy of them) and its own; a
        question whose skipped repeats are not all among those settled before it, or that repeats one of them
        (``_Drafted.stands``), is drafted again here against them. The set of settled keys costs about 80 bytes a
        question (16-byte digests: some 8 MB for 100,000). Under
        ``forkmap.forking`` (``export``) the questions are drafted ``CHUNK`` at a time in forked children, a few
        chunks ahead of the reader, or fewer where the reader wants only the ``first`` questions (``export -n 10``
        drafted 500 of each task's questions to show two), and here where it wants no more than ``DRAFTED_HERE``;
        each question is seeded on its own, so they are the same questions whatever the chunks.

        Where the tables hold no new question of a label, each further question of it would spend its
        ``MAX_ATTEMPTS`` draws on repeats (3,000 per task over a five-row table: 80 s, where keeping repeats took
        5 s). So once ``STOP_AFTER`` questions of one task and label in a row, in the settle order, ended ``Missed``
        with a repeat among their draws (``_Drafted.ran_into_repeats``), the task's further questions of that label
        are ``Missed`` undrawn (``Missed.stopped``, which the task's note counts apart). The stop reads only the
        outcomes settled before, in the one order, so the set is the same whatever the chunks: a child that sees the
        stop (in its copy of ``stops``) or guesses it from its own chunk (``guess``) returns the questions undrawn,
        and those never stand, so the question is drawn here unless the stop is settled. Only a question that drew
        a repeat counts towards a stop, so a set that never drew a repeat is drawn exactly as without the rule."""
        say = note or (lambda line: log.warning("structfact:generated: %s", line))
        wanted: dict[str, list[str]] = {}
        for task in TASKS:
            if not self.pools[task]:
                say(f"task {task}: 0 of {per_task:,} questions: these tables support no such question; the task is "
                    "left out")
                continue
            wanted[task] = self._wanted(task, per_task, label_mix, seed)

        order = list(wanted)
        children = 0 if first is not None and first <= DRAFTED_HERE else None  # None: ``ahead()``
        size = min(CHUNK, -(-first // max(1, len(order)))) if first else CHUNK
        size = size if ahead() and children is None else 1  # in process: one question at a time, as it is read

        def draft(chunk: tuple[str, int]) -> list[_Drafted]:
            task, start = chunk
            own: set[bytes] = set()  # the chunk's own questions, after those settled when it was handed out
            mine = _Either(settled, own)
            guess = _Stops()  # the chunk's own runs: where the parent's will stop, unless a draft here does not stand
            out = []
            for i, want in enumerate(wanted[task][start:start + size], start):
                if stops.stopped_for(task, want) or guess.stopped_for(task, want):
                    out.append(_Drafted(Missed(want, stopped=True), None, (), undrawn=True))
                    continue
                one = self.drafted(task, i, want, seed, mine)
                guess.count(task, one)
                if one.key is not None:
                    own.add(one.key)
                out.append(one)
            return out

        def chunks() -> Iterator[tuple[str, int]]:
            return ((task, start) for start in range(0, per_task, size) for task in order if start < len(wanted[task]))

        handed, drafted = chunks(), fork_imap(draft, chunks(), children)  # whose each drafted chunk is, and the chunks
        settled: set[bytes] = set()  # the keys of the questions in the set so far (``pair_key``)
        stops = _Stops()  # the searches stopped so far, in the order questions are settled
        turns = ((task, i) for i in range(per_task) for task in order if i < len(wanted[task]))
        pending: dict[str, deque[_Drafted]] = {task: deque() for task in order}
        ready: dict[str, deque[Question]] = {task: deque() for task in order}
        left = {task: len(w) for task, w in wanted.items()}  # questions not yet settled
        made = dict.fromkeys(order, 0)
        missed: dict[str, list[Missed]] = {task: [] for task in order}

        def settle() -> None:
            """Settle the next question in turn (every task's first, then every task's second ...): its draft, read
            from the chunks in the order they were handed out, or drafted again here if it does not stand."""
            task, index = next(turns)
            want = wanted[task][index]
            while not pending[task]:
                owner, _ = next(handed)
                pending[owner].extend(next(drafted))
            one = pending[task].popleft()
            if stops.stopped_for(task, want):
                one = _Drafted(Missed(want, stopped=True), None, ())
            else:
                if not one.stands(settled):
                    one = self.drafted(task, index, want, seed, settled)
                stops.count(task, one)
            left[task] -= 1
            if isinstance(one.result, Question) and one.key is not None:
                settled.add(one.key)
                ready[task].append(one.result)
            elif isinstance(one.result, Missed):
                missed[task].append(one.result)

        def fill(task: str) -> None:
            """Settle questions in turn until ``task`` has one ready or none left."""
            while not ready[task] and left[task]:
                settle()

        tasks = order
        while tasks:
            going = []
            for task in tasks:
                fill(task)
                if ready[task]:
                    going.append(task)
                    made[task] += 1
                    yield ready[task].popleft()
            tasks = going
        for task in order:
            if made[task] < per_task:
                say(shortfall(task, made[task], per_task, missed[task], self.budget))

    def _wanted(self, task: str, per_task: int, label_mix: str, seed: int) -> list[str]:
        """The label each question of ``task`` aims at, in order."""
        wanted = [
            label
            for label, n in zip(LABELS, label_counts(per_task, LABEL_MIXES[label_mix][task]), strict=True)
            for _ in range(n)
        ]
        random.Random(f"{seed}:{task}:labels").shuffle(wanted)
        return wanted

    def one(self, task: str, index: int, want: str, seed: int, made: Container[bytes] = frozenset()
            ) -> Question | Missed:
        """Question ``index`` of ``task`` with label ``want``, none of ``made`` (``pair_key``s) again (``Missed`` when
        no draw makes one)."""
        return self.drafted(task, index, want, seed, made).result

    def drafted(self, task: str, index: int, want: str, seed: int, made: Container[bytes]) -> _Drafted:
        """``one``'s result, with its key and the keys of the draws it skipped as repeats (``_Drafted``)."""
        rng = random.Random(f"{seed}:{task}:{index}")
        categories = list(self.pools[task].values())
        missed = Missed(want)
        repeats: list[bytes] = []
        for _ in range(MAX_ATTEMPTS):
            pools = categories[rng.randrange(len(categories))]
            pool = pools[rng.randrange(len(pools))]
            draft = pool.template.draft(pool.draw(rng), rng, want)
            if draft is None:
                missed.draws["no_draft"] += 1
                continue
            whole = tables_read_whole(draft.claim)
            asked = draft.evidence.views[0]  # the table the question is about (a distractor may go first)
            if rng.random() < DISTRACTOR_SHARE and not whole:  # "the entries listed" must name one table
                self.distract(draft.evidence, rng)
            try:
                strings = draft.evidence.strings()
            except Unrenderable:
                missed.draws["unrenderable"] += 1
                continue
            if any(sum(v.name == t for v in draft.evidence.views) != 1 for t in whole) or any(
                v.form != "table" for v in draft.evidence.views if v.name in whole
            ):
                raise ValueError(f"{pool.template.name}: an aggregate must read exactly one table-form view")
            if not self.counter.fits("\n".join(s.strip() for s in strings), self.budget):
                missed.draws["over_budget"] += 1
                continue
            label = self.executor.label(draft.claim, draft.evidence)
            if label != want:
                missed.draws["other_label"] += 1
                continue
            key = pair_key(draft.question, strings)
            if key in made:  # after every use of ``rng``, so a draw that is not a repeat goes on as before
                missed.draws["repeated"] += 1
                repeats.append(key)
                continue
            query = to_json(draft.claim)
            if self.check:
                checked = verify(strings, query)
                if checked != label:
                    where = f"{task} #{index} ({pool.template.name})"
                    raise LabelMismatch(f"{where}: executed {label}, re-derived {checked}: {draft.question}")
            views = draft.evidence.views
            has_text = any(v.form == "text" for v in views)
            return _Drafted(Question(
                id=f"{CODES[task]}-{index:05d}",
                task=task,
                label=label,
                question=draft.question,
                evidence=strings,
                new_evidence=draft.evidence.structured_strings() if has_text else None,
                source=views[0].profile.source,
                table=f"{asked.profile.source}/{asked.name}",
                difficulty=pool.template.category,
                template=pool.template.name,
                query=query,
            ), key, tuple(repeats))
        return _Drafted(missed, None, tuple(repeats))

    def distract(self, evidence: Evidence, rng: random.Random) -> None:
        """Add some rows of another table of the same database that the claim does not read."""
        first = evidence.views[0].profile
        shown = {v.name for v in evidence.views}
        others = [p for p in self.databases.get(first.table.group, []) if p.name not in shown]
        if not others:
            return
        other = others[rng.randrange(len(others))]
        rows = pick_rows(other, rng, rng.randint(3, 8))
        view = table_view(other, rng, rows, [], rng.randint(2, 4))
        evidence.views.insert(rng.randint(0, len(evidence.views)), view)


class _Stops:
    """Where the searches for a task's questions of a label stopped: after ``STOP_AFTER`` of them in a row, in the
    order they are counted, that no draw made though some draws found a question already in the set."""

    def __init__(self) -> None:
        self.runs: Counter[tuple[str, str]] = Counter()
        self.stopped: set[tuple[str, str]] = set()

    def count(self, task: str, one: _Drafted) -> None:
        """Count the next question of ``task`` with its label (not one whose search had stopped)."""
        key = (task, one.result.label)
        self.runs[key] = self.runs[key] + 1 if one.ran_into_repeats() else 0
        if self.runs[key] >= STOP_AFTER:
            self.stopped.add(key)

    def stopped_for(self, task: str, label: str) -> bool:
        return (task, label) in self.stopped


class _Either:
    """Keys in either of two sets (those settled, a chunk's own), without copying them into one."""

    def __init__(self, first: Container[bytes], second: Container[bytes]) -> None:
        self.first, self.second = first, second

    def __contains__(self, key: object) -> bool:
        return key in self.first or key in self.second


def shortfall(task: str, made: int, asked: int, missed: Sequence[Missed], budget: int) -> str:
    """The line for a task that got ``made`` of ``asked`` questions: which labels fell short, what the draws of the
    questions no draw made gave, and for which labels the search stopped (``STOP_AFTER``) so that the rest were not
    drawn, so that a user can tell a tight budget from tables that cannot ask for a label or hold no more of it."""
    drawn = [m for m in missed if not m.stopped]
    stopped = [m for m in missed if m.stopped]
    draws: Counter[str] = Counter()
    for m in drawn:
        draws.update(m.draws)
    why = ", ".join(f"{draws[k]:,} {v.format(budget=budget)}" for k, v in MISSES.items() if draws[k])
    parts = [f"for {len(drawn):,} ({_labels(drawn)}) none of {MAX_ATTEMPTS} draws made one: {why}"] if drawn else []
    if stopped:
        which = " and ".join(label for label in LABELS if any(m.label == label for m in stopped))
        parts.append(
            f"for {len(stopped):,} more ({_labels(stopped)}) none was drawn: the search for {which} stopped after "
            f"{STOP_AFTER} questions of the label in a row whose draws found only questions already in the set"
        )
    return f"task {task}: {made:,} of {asked:,} questions: " + "; ".join(parts)


def _labels(missed: Sequence[Missed]) -> str:
    """How many of ``missed`` aim at each label (``2 YES, 1 NO``)."""
    short = Counter(m.label for m in missed)
    return ", ".join(f"{short[label]:,} {label}" for label in LABELS if short[label])
