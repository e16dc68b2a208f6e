"""Generated sets: every label re-derived by the independent check, the paper's tasks, labels and categories,
the release's fields, the evidence budget, order invariance, and determinism."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.evidence import parse_evidence
from structbench.benchmarks.structfact.generated import generator
from structbench.benchmarks.structfact.generated.generator import (
    PAPER_COUNTS,
    Generator,
    Question,
    label_counts,
)
from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.release import write_release
from structbench.benchmarks.structfact.generated.synthetic import synthetic_tables
from structbench.benchmarks.structfact.generated.tables import csv_tables
from structbench.benchmarks.structfact.generated.templates import TASKS
from structbench.benchmarks.structfact.generated.verify import verify
from structbench.benchmarks.structfact.generated.views import pipe_table
from structbench.benchmarks.structfact.loader import LABELS, record_to_sample
from structbench.benchmarks.structfact.options import StructFactOptions
from structbench.benchmarks.structfact.prompts import Prompter
from structbench.core import forkmap
from structbench.data.evidence import Graph, ItemList, StructuredText, Table, Text

CATEGORIES = {
    "Arithmetic Calculation": {"Numerical Matching", "Numerical Comparison", "Computational Analysis"},
    "Spatiotemporal Cognition": {"Temporal", "Spatial", "Spatiotemporal"},
    "Multi-hop Reasoning": {"1-hop", "2-hop", "3-hop", "4-hop"},
    "Composition Understanding": {"Complex Structures", "Missing Values", "Incomplete Descriptions"},
    "Combining Structural and Unstructural": {"Text Fact", "Table + Text"},
}


def records(questions: list[Question]) -> list[dict[str, Any]]:
    """The questions as they are saved and shared: through JSON."""
    data: list[dict[str, Any]] = json.loads(json.dumps([q.record() for q in questions]))
    return data


def test_label_counts_follow_the_weights() -> None:
    assert label_counts(600, PAPER_COUNTS["Arithmetic Calculation"]) == [315, 270, 15]
    assert label_counts(10, (1, 1, 1)) == [4, 3, 3]
    assert sum(label_counts(7, (683, 925, 24))) == 7


@pytest.mark.shared
def test_every_label_re_derived_by_the_independent_check(
    rfqa_questions: list[Question], scitab_questions: list[Question]
) -> None:
    checked = 0
    for record in records(rfqa_questions) + records(scitab_questions):
        assert verify(record["EVIDENCE"], record["QUERY"]) == record["LABEL"], record["QUESTION"]
        checked += 1
    assert checked >= 3000 + 800


@pytest.mark.shared
def test_labels_depend_on_the_evidence(rfqa_questions: list[Question]) -> None:
    """Without evidence nothing is known; with the table rows shuffled nothing changes."""
    rng = random.Random(0)
    for record in records(rfqa_questions)[:1500]:
        assert verify([], record["QUERY"]) == "NOT SURE ENOUGH"
        assert verify(shuffled(record["EVIDENCE"], rng), record["QUERY"]) == record["LABEL"], record["QUESTION"]


def shuffled(evidence: list[str], rng: random.Random) -> list[str]:
    """The evidence with the rows of every table, items of every list and triples of every graph permuted."""
    out = []
    for text in evidence:
        for piece in parse_evidence(text):
            if isinstance(piece, Table):
                rows = rng.sample(piece.rows, len(piece.rows))
                if any(piece.header):
                    out.append(f"### {piece.caption}\n{pipe_table(piece.header, rows)}")
                else:
                    body = "\n".join(f"| {k} | {v} |" for k, v in rows)
                    out.append(f"| {piece.caption} |\n| --- | --- |\n{body}")
            elif isinstance(piece, ItemList):
                items = "\n".join(f"* {item}" for item in rng.sample(piece.items, len(piece.items)))
                out.append(f"### {piece.title}\n{items}")
            elif isinstance(piece, Graph):
                out.append("\n".join(f"({s}, {r}, {o})" for s, r, o in rng.sample(piece.triples, len(piece.triples))))
            else:
                assert isinstance(piece, Text)
                out.append(piece.text)
    return out


@pytest.mark.shared
def test_wrong_constants_flip_yes_to_no(rfqa_questions: list[Question]) -> None:
    flipped = 0
    for record in records(rfqa_questions):
        query = record["QUERY"]
        if record["LABEL"] != "YES" or query["op"] != "compare" or query["cmp"] != "=" or query["kind"] != "number":
            continue
        if query["right"]["op"] != "const":
            continue
        query["right"]["value"] += 1000 * (query["tol"] + 1)
        assert verify(record["EVIDENCE"], query) == "NO", record["QUESTION"]
        flipped += 1
    assert flipped > 100


@pytest.mark.shared
def test_tasks_labels_and_categories_follow_the_paper(rfqa_questions: list[Question]) -> None:
    by_task = Counter(q.task for q in rfqa_questions)
    assert by_task == dict.fromkeys(TASKS, 600)
    for task in TASKS:
        labels = Counter(q.label for q in rfqa_questions if q.task == task)
        assert [labels[label] for label in LABELS] == label_counts(600, PAPER_COUNTS[task])
        assert {q.difficulty for q in rfqa_questions if q.task == task} >= CATEGORIES[task]
    assert [q.task for q in rfqa_questions[:5]] == list(TASKS)  # interleaved, so --limit takes every task
    assert len({q.id for q in rfqa_questions}) == len(rfqa_questions)


@pytest.mark.shared
def test_balanced_mix_on_scitab(scitab_questions: list[Question]) -> None:
    tasks = {q.task for q in scitab_questions}
    assert "Spatiotemporal Cognition" not in tasks  # scientific results tables have no dates or places
    assert len(tasks) == 4
    for task in tasks:
        labels = Counter(q.label for q in scitab_questions if q.task == task)
        assert sorted(labels.values()) == [66, 67, 67]
    assert {q.source for q in scitab_questions} == {"scitab"}


@pytest.mark.shared
def test_records_have_the_release_fields_and_load_as_samples(rfqa_questions: list[Question]) -> None:
    demo_fields = ["CHALLENGE", "LABEL", "QUESTION", "EVIDENCE"]
    kinds: Counter[str] = Counter()
    structures: set[str] = set()
    for i, record in enumerate(records(rfqa_questions)):
        assert list(record)[:4] == demo_fields
        assert record["SOURCE"].startswith("rfqa/")
        assert ("NEW_EVIDENCE" in record) == (record["CHALLENGE"] == "Combining Structural and Unstructural")
        sample = record_to_sample(record, record["ID"], "generated", f"record {i}", 0)
        assert sample.meta["difficulty"] == record["DIFFICULTY"]
        assert not any(isinstance(p, StructuredText) for p in sample.evidence)  # every table parses
        kinds.update(p.kind for p in sample.evidence)
        structures.add(sample.meta["structure"])
    assert set(kinds) == {"table", "list", "graph", "text"}
    assert len(structures) >= 4


@pytest.mark.shared
def test_evidence_fits_the_papers_budget_and_is_never_cut(rfqa_questions: list[Question]) -> None:
    prompter = Prompter(StructFactOptions())
    counter = token_counter("regex")
    longest = 0
    for i, record in enumerate(records(rfqa_questions)):
        sample = record_to_sample(record, record["ID"], "generated", f"record {i}", 0)
        data = prompter.evidence(sample)
        assert not data.truncated
        longest = max(longest, counter.count(data.text))
    assert 300 < longest <= 2500


@pytest.mark.shared
def test_same_seed_same_questions(rfqa_world: World, rfqa_questions: list[Question]) -> None:
    """A new generator with the same seed makes the same questions: the first 300 of the 3,000 (every task's first 60;
    each question is seeded on its own, by task and index, so these stand for the rest)."""
    again = list(itertools.islice(Generator(rfqa_world, token_counter("regex")).stream(600, seed=0, first=300), 300))
    assert records(again) == records(rfqa_questions[:300])
    other = Generator(rfqa_world, token_counter("regex")).generate(20, seed=1)
    assert {q.question for q in other}.isdisjoint({q.question for q in rfqa_questions[:100]})


def test_drafting_in_forked_children_makes_the_same_questions_in_the_same_order(atlas_world: World) -> None:
    """``export`` drafts the questions a chunk at a time in forked children (``forkmap.forking``): the same questions
    in the same order as one at a time here, across chunk boundaries."""
    here = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    with patch.object(generator, "CHUNK", 16), forkmap.forking(2):
        forked = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    assert records(forked) == records(here)
    assert len(here) > 16 * len(TASKS)


def test_csv_folder_makes_every_task(atlas_world: World, tmp_path: Path) -> None:
    questions = Generator(atlas_world, token_counter("regex")).generate(60, "balanced", seed=5)
    assert {q.task for q in questions} == set(TASKS)
    assert {q.label for q in questions} == set(LABELS)
    for record in records(questions):
        assert verify(record["EVIDENCE"], record["QUERY"]) == record["LABEL"]
    assert {q.source for q in questions} == {"csv/atlas"}


def test_a_reader_of_the_first_questions_gets_them_drafted_in_small_chunks(atlas_world: World) -> None:
    """``export -n 250`` reads 250 questions: its children draft 50 of each task's at a time, not ``CHUNK`` (500);
    ``export -n 10`` wants too few to fork for (``DRAFTED_HERE``): they are drafted here, one at a time. Either way
    they are the questions drafted one at a time here."""
    import itertools

    here = Generator(atlas_world, token_counter("regex")).generate(70, "balanced", seed=3)
    imap = generator.fork_imap

    def read(first: int) -> tuple[list[Any], list[int], set[int | None]]:
        sizes: list[int] = []
        children: set[int | None] = set()

        def counting(work: Any, shares: Any, given: int | None = None) -> Any:
            children.add(given)
            for chunk in imap(work, shares, given):
                sizes.append(len(chunk))
                yield chunk

        with patch.object(generator, "fork_imap", counting), forkmap.forking(2):
            stream = Generator(atlas_world, token_counter("regex")).stream(70, "balanced", seed=3, first=first)
            questions = list(itertools.islice(stream, first))
            stream.close()
        return questions, sizes, children

    many, sizes, children = read(250)
    assert generator.DRAFTED_HERE < 250 and children == {None}  # forked, ``ahead()`` children
    assert records(many) == records(here[:250]) and max(sizes) == -(-250 // len(TASKS))
    few, sizes, children = read(10)
    assert children == {0} and set(sizes) == {1}
    assert records(few) == records(here[:10])


FIVE_ROWS = "name,code,population\nFrance,FRA,5\nGermany,GER,22\nJapan,JAP,39\nBrazil,BRA,56\nKenya,KEN,73\n"
"""A table small enough that a few hundred questions per task exhaust it (no dates or places: four tasks)."""


@pytest.fixture(scope="module")
def five_rows(tmp_path_factory: pytest.TempPathFactory) -> World:
    folder = tmp_path_factory.mktemp("tables") / "m5"  # the folder names the source (``csv/m5``): pinned below
    folder.mkdir()
    (folder / "t.csv").write_text(FIVE_ROWS, encoding="utf-8")
    return World.of(csv_tables(folder))


def pairs(questions: list[Question]) -> set[tuple[str, tuple[str, ...]]]:
    return {(q.question, tuple(q.evidence)) for q in questions}


def release_sha256(questions: list[Question], path: Path) -> str:
    """The sha256 of the file ``generate structfact`` writes for ``questions``."""
    write_release([q.record() for q in questions], path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


MAIN_SHA256 = {
    ("synthetic", 100, "paper", 0): "1a80dd91410d16d8e8fc5b3c9647a8eb4f57a2e0070cbe5d2e32489d92337b85",
    ("synthetic", 100, "balanced", 7): "4da35a3a717d0a152f9c7bf704913094f3eb9ff97e8c9485d990c98859e725ef",
    ("atlas", 70, "balanced", 3): "692d396088178e8b8675b39758380f1d761a0b9d270fffb77f43685d90d76642",
    ("atlas", 40, "paper", 2): "bc4c9d4901d7b7e80b49edc90d915df44b319bf98d5f96737b3073c676c8e22d",
    ("m5", 400, "paper", 0): "2bf69c074204d9b0cc8c57215c58ea28b598c2669ecbf5561bd2785e9079325c",
}
"""sha256 of the release file of ``Generator(World.of(tables), token_counter("regex")).generate(per_task, mix,
seed=seed)`` (``write_release``'s text: ``json.dumps(records, ensure_ascii=False, indent=1) + "\\n"``), computed
with the generator of commit d27ceb8, before repeats were skipped; ``tables``: ``load_tables("synthetic")``, the
``atlas`` fixture's folder, or ``five_rows``'s. The first four drew no repeat; ``m5`` drew 456 (1,144 distinct
questions of 1,600)."""


@pytest.mark.parametrize(("tables", "per_task", "mix", "seed"), [k for k in MAIN_SHA256 if k[0] != "m5"])
def test_a_set_that_drew_no_repeat_is_byte_identical_to_before(atlas_world: World, tmp_path: Path, tables: str,
                                                               per_task: int, mix: str, seed: int) -> None:
    """Skipping repeats uses the generator's seeded draws only where a draw repeats, so a seed's set that never drew
    one is the same file as before: same questions, order and ids."""
    world = World.of(synthetic_tables()) if tables == "synthetic" else atlas_world
    questions = Generator(world, token_counter("regex")).generate(per_task, mix, seed=seed)
    assert len(pairs(questions)) == len(questions)
    assert release_sha256(questions, tmp_path / "set.json") == MAIN_SHA256[tables, per_task, mix, seed]


def test_only_the_questions_that_repeated_one_change(five_rows: World, tmp_path: Path) -> None:
    """A large set over one small table repeated a third of its questions (the same question and evidence under two
    ids, counted twice as if independent): now every question is distinct, and the only ones that changed are those
    whose first draw repeated a question of the set. With every draw unique (as before), the set is the one pinned."""
    before_skipping = itertools.count()
    with patch.object(generator, "pair_key", lambda *_: next(before_skipping)):
        before = Generator(five_rows, token_counter("regex")).generate(400, seed=0)
    assert release_sha256(before, tmp_path / "before.json") == MAIN_SHA256["m5", 400, "paper", 0]
    assert len(pairs(before)) == 1144 < len(before) == 1600

    after = Generator(five_rows, token_counter("regex")).generate(400, seed=0)
    assert len(pairs(after)) == len(after) == 1600 and len({q.id for q in after}) == 1600
    now = {q.id: q for q in after}
    settled: set[tuple[str, tuple[str, ...]]] = set()  # in the order questions are settled: every task's first ...
    changed = 0
    for old in sorted(before, key=lambda q: (int(q.id.rsplit("-", 1)[1]), TASKS.index(q.task))):
        repeats = (old.question, tuple(old.evidence)) in settled
        assert (now[old.id] != old) == repeats, old.id
        changed += repeats
        settled.add((now[old.id].question, tuple(now[old.id].evidence)))
    assert changed == 515  # the 456 repeats, and questions that drew one of the questions drawn in their place


def test_repeats_are_skipped_alike_in_forked_children(five_rows: World) -> None:
    """Chunks drafted in forked children know only the questions settled when they were handed out: a draft that
    repeats a question settled since is drafted again, so the set is the one drafted one at a time here."""
    here = Generator(five_rows, token_counter("regex")).generate(150, "balanced", seed=3)
    with patch.object(generator, "CHUNK", 16), forkmap.forking(2):
        forked = Generator(five_rows, token_counter("regex")).generate(150, "balanced", seed=3)
    assert records(forked) == records(here)
    assert len(pairs(here)) == len(here) == 600


def test_a_task_the_table_cannot_fill_without_repeats_is_short_and_says_so(five_rows: World) -> None:
    """Where the draws of a question find only repeats, the question is not made: its task comes out short, in one
    note that counts the repeats among what the draws gave."""
    notes: list[str] = []
    with patch.object(generator, "MAX_ATTEMPTS", 5):
        questions = list(Generator(five_rows, token_counter("regex")).stream(300, seed=0, note=notes.append))
    assert len(pairs(questions)) == len(questions) == 1151
    assert notes[1:] == [
        "task Arithmetic Calculation: 281 of 300 questions: for 19 (19 YES) none of 5 draws made one: 1 drafted no "
        "claim for the label, 94 repeated a question already in the set (same question and evidence)",
        "task Multi-hop Reasoning: 270 of 300 questions: for 30 (25 YES, 5 NO) none of 5 draws made one: 150 repeated "
        "a question already in the set (same question and evidence)",
    ]


@dataclass(frozen=True)
class Exhausted:
    """A build that asks the five-row table for more Multi-hop YES questions than it holds."""

    questions: list[Question]
    notes: list[str]
    drawn: list[int]
    """The indices of the Multi-hop YES questions drawn (``Generator.drafted``), in order."""
    wanted: list[int]
    """The indices of every Multi-hop YES question asked, in order."""


@pytest.fixture(scope="module")
def exhausted(five_rows: World) -> Exhausted:
    """1,200 per task, the paper's mix, seed 0, drafted here one question at a time."""
    drawn: list[int] = []
    draft = Generator.drafted

    def spy(self: Generator, task: str, index: int, want: str, *args: Any) -> Any:
        if (task, want) == ("Multi-hop Reasoning", "YES"):
            drawn.append(index)
        return draft(self, task, index, want, *args)

    notes: list[str] = []
    made = Generator(five_rows, token_counter("regex"))
    with patch.object(Generator, "drafted", spy):
        questions = list(made.stream(1200, seed=0, note=notes.append))
    wanted = [i for i, label in enumerate(made._wanted("Multi-hop Reasoning", 1200, "paper", 0)) if label == "YES"]
    return Exhausted(questions, notes, drawn, wanted)


def test_the_search_for_a_label_the_tables_hold_no_more_of_stops(exhausted: Exhausted) -> None:
    """Past the Multi-hop YES questions the table holds, every further one would spend its 200 draws on repeats:
    after ``STOP_AFTER`` such questions in a row, the rest are not drawn, and the task's note says so."""
    made = {int(q.id.rsplit("-", 1)[1]) for q in exhausted.questions if (q.task, q.label) == ("Multi-hop Reasoning",
                                                                                                "YES")}
    assert len(exhausted.wanted) == 599 and len(made) == 429
    assert exhausted.drawn == exhausted.wanted[:472]  # drawn once each, in order, up to the stop; none after it
    assert made.isdisjoint(exhausted.drawn[-generator.STOP_AFTER:])  # the run that stopped it: none made
    assert exhausted.notes[1:] == [
        "task Multi-hop Reasoning: 1,030 of 1,200 questions: for 43 (43 YES) none of 200 draws made one: 8,600 "
        "repeated a question already in the set (same question and evidence); for 127 more (127 YES) none was "
        "drawn: the search for YES stopped after 20 questions of the label in a row whose draws found only questions "
        "already in the set"
    ]
    assert len(pairs(exhausted.questions)) == len(exhausted.questions) == 4 * 1200 - 43 - 127


def test_the_search_stops_alike_in_forked_children(five_rows: World, exhausted: Exhausted) -> None:
    """The stop is settled in the order questions are settled: chunks drafted ahead in forked children, before or
    after it, give the set drafted one at a time here, and the same note."""
    notes: list[str] = []
    with patch.object(generator, "CHUNK", 100), forkmap.forking(2):
        forked = list(Generator(five_rows, token_counter("regex")).stream(1200, seed=0, note=notes.append))
    assert records(forked) == records(exhausted.questions)
    assert notes == exhausted.notes
