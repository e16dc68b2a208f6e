"""Build SKA-Bench instances from a relational database, without human annotation.

1. Templates (``templates``) propose questions with SQL; the gold answers are the SQL's result.
2. The query's lineage is the rows whose removal (leave-one-out, re-running the SQL without that row)
   changes the answer; the lineage alone must give the same answer (sufficiency). Questions failing
   either check, or without an answer, are dropped.
3. Positive units are the units of the rows the question's conditions select (the template's candidate
   set, which holds the lineage): answering "which has the highest X among Y", "which Y has X above T"
   or "how many Y" means looking at every Y row, not only the one that wins, as the paper's annotators
   marked every unit needed to derive the answer. For lookups, lists and comparisons the two sets are
   equal. Noisy units are all other units, so a context without the positive units holds no row the
   question's conditions select: the negative rejection testbed's contexts leave every question
   unanswerable, except counts (whose honest answer is then 0), which stay out of it.
4. Units of each knowledge type (``forms``):
   - Table: rows under the table's header; positive units are the candidate rows, noisy units the others.
   - KG: each row's (entity, attribute, value) triples; positive triples are the candidate rows' triples
     of the columns the question references; every other triple is noise.
   - KG+Text and Table+Text: one column the question references (its answer column when possible)
     plus up to two unreferenced ones move out of the triples/table into one paragraph per entity
     ("<entity>: The <column> of <entity> is <value>. ..."); the question then needs both kinds of unit.
     A question that references fewer than two columns besides the subject cannot be made hybrid.
   Tables over ``MAX_ROWS`` rows contribute the candidate rows plus a seeded sample of their other rows.
   Noisy units of one entity that the question could be checked against (its triples of referenced
   columns, its row and its paragraph) share a ``group`` and are drawn together.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from structbench.benchmarks.skabench.database import Database, Value, quote
from structbench.benchmarks.skabench.forms import TableProfile, profile
from structbench.benchmarks.skabench.templates import TEMPLATES, Query
from structbench.benchmarks.skabench.units import (
    KNOWLEDGE_TYPES,
    Instance,
    KnowledgeType,
    Passage,
    Row,
    Triple,
)

MAX_LINEAGE_CANDIDATES = 80
MAX_ROWS = 5000
"""Rows of one table that make up an instance's knowledge base: enough for 128k-token contexts in every
form (5,000 rows of 3+ columns), without materializing 10^5-row tables for each question."""
MAX_KEPT_ROWS = 100 * MAX_ROWS
"""The most rows ``max_rows`` may keep of a table (``core.bounds``)."""
MAX_QUESTIONS = 100_000
"""The most questions a build may ask (``core.bounds``): each gives up to four instances, some fifty times the
paper's."""
DRAWS_PER_QUESTION = 60
"""Draws (a template over a table picked at random) allowed per question asked: where the tables hold fewer distinct
questions than asked, the search ends there (or at ``stall_limit``), with the shortfall noted (``shortfall``)."""
STALL_MIN = 10_000
"""The fewest draws in a row without a new question that end the draws, however few were found (``stall_limit``)."""
MISSES = {
    "repeated": "repeats",
    "unanswered": "with no answer",
    "no_lineage": f"with no lineage (over {MAX_LINEAGE_CANDIDATES} candidate rows, or not decided by a few of them)",
    "impossible": "of a template the drawn table cannot ask",
}
"""Why a draw that was not a repeat gave no question (``iter_questions``), as the shortfall note says it."""


def format_value(value: Value) -> str:
    """An SQL result as answer text."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def run_query(
    db: Database, query: Query, *, exclude: Iterable[int] = (), only: Iterable[int] | None = None
) -> list[str]:
    """The query's answers (distinct, sorted) on its table without the ``exclude`` rows (or on ``only``)."""
    if only is not None:
        rows = ",".join(str(int(r)) for r in only) or "NULL"
        where = f" WHERE rowid IN ({rows})"
    else:
        rows = ",".join(str(int(r)) for r in exclude)
        where = f" WHERE rowid NOT IN ({rows})" if rows else ""
    result = db.execute(f"WITH t AS ({db.rows_sql(query.relation, where)}) {query.sql}", query.params)
    return sorted({format_value(r[0]) for r in result if r[0] is not None})


def candidate_rows(db: Database, query: Query) -> list[int]:
    """The rows the question's conditions select (the template's candidate set), in table order."""
    found = db.execute(f"WITH t AS ({db.rows_sql(query.relation)}) {query.candidates_sql}", query.candidate_params)
    return sorted(int(r[0]) for r in found)  # type: ignore[arg-type]


def lineage(db: Database, query: Query, answers: list[str], candidates: Sequence[int]) -> list[int] | None:
    """Rows among ``candidates`` whose removal changes the answer, if they alone reproduce it; None otherwise."""
    if not candidates or len(candidates) > MAX_LINEAGE_CANDIDATES:
        return None
    rows = sorted(r for r in candidates if run_query(db, query, exclude=[r]) != answers)
    if not rows or run_query(db, query, only=rows) != answers:
        return None
    return rows


@dataclass(frozen=True)
class BuiltQuestion:
    """A templated question with its gold answers (by execution) and lineage rows."""

    query: Query
    answers: list[str]
    lineage: list[int]
    """Rows whose removal changes the answer."""
    candidates: list[int]
    """Rows the question's conditions select (holds the lineage): the rows the answer is derived from."""


def generate_questions(
    db: Database,
    n: int,
    *,
    seed: int = 0,
    templates: Sequence[str] | None = None,
    min_rows: int = 8,
    min_columns: int = 3,
) -> list[BuiltQuestion]:
    """Up to ``n`` distinct questions, cycling through ``templates`` over tables picked at random."""
    return list(iter_questions(db, n, seed=seed, templates=templates, min_rows=min_rows, min_columns=min_columns))


def iter_questions(
    db: Database,
    n: int,
    *,
    seed: int = 0,
    templates: Sequence[str] | None = None,
    min_rows: int = 8,
    min_columns: int = 3,
    note: Callable[[str], None] | None = None,
) -> Iterator[BuiltQuestion]:
    """``generate_questions``, each question made when it is read (the SQL of its answer and lineage runs then). The
    draws end at ``DRAWS_PER_QUESTION`` per question asked, or earlier after ``stall_limit`` draws in a row without a
    new question; where they made fewer than ``n``, ``note`` is given one line saying how many and why
    (``shortfall``) once the last is read."""
    names = list(templates) if templates else TEMPLATES.names()
    tables = [
        profile(rel) for rel in db.relations.values() if len(rel.cells) >= min_rows and len(rel.columns) >= min_columns
    ]
    if not tables:
        return
    rng = random.Random(seed)
    built = 0
    seen: set[str] = set()
    missed: Counter[str] = Counter()
    attempts = stalled = 0
    while built < n and attempts < DRAWS_PER_QUESTION * n and stalled < stall_limit(built, len(names) * len(tables)):
        template = TEMPLATES.get(names[attempts % len(names)])
        attempts += 1
        stalled += 1
        query = template(rng.choice(tables), rng)
        if query is None or query.question in seen:
            missed["impossible" if query is None else "repeated"] += 1
            continue
        answers = run_query(db, query)
        if not answers:
            missed["unanswered"] += 1
            continue
        candidates = candidate_rows(db, query)
        rows = lineage(db, query, answers, candidates)
        if rows is None or not set(rows) <= set(candidates):
            missed["no_lineage"] += 1
            continue
        seen.add(query.question)
        built += 1
        stalled = 0
        yield BuiltQuestion(query=query, answers=answers, lineage=rows, candidates=candidates)
    if built < n and note is not None:
        stopped = stalled if attempts < DRAWS_PER_QUESTION * n else 0
        note(shortfall(built, n, missed, [t.relation.name for t in tables], stalled=stopped))


def stall_limit(found: int, pairs: int) -> int:
    """Draws in a row without a new question after which the draws stop: ``DRAWS_PER_QUESTION`` for each question
    found so far in each of the ``pairs`` (templates x tables), at least ``STALL_MIN``.

    The draws do not depend on the ask, so the stop only ends a build sooner than its budget, with the same questions
    so far: it changes a set the budget fills only if a new question was still to come after such a run. A question
    still to come, of a pair whose questions are mostly found (else that pair's others come sooner), is drawn about
    once in ``pairs * found * h`` draws (the pair once in ``pairs``, its questions near uniformly: ``h`` a small
    factor), so the run misses it with a chance near ``exp(-DRAWS_PER_QUESTION / h)``. Measured over small tables,
    the longest run before a question still to come was a thirtieth of the limit (docs/benchmarks/skabench.md)."""
    return max(STALL_MIN, DRAWS_PER_QUESTION * pairs * found)


def shortfall(made: int, asked: int, missed: Counter[str], tables: Sequence[str], *, stalled: int = 0) -> str:
    """The line for a build that made ``made`` of ``asked`` questions, from the draws that ``missed`` (counted by
    kind): how many distinct questions the draws found over which tables, whether they stopped early (the last
    ``stalled`` in a row found no new question, ``stall_limit``) or spent the budget, and why the others gave none,
    so that a user can tell small tables from a narrow ``--templates`` or a strict ``--min-rows``."""
    draws = made + sum(missed.values())
    why = ", ".join(f"{missed[k]:,} {v}" for k, v in MISSES.items() if missed[k])
    over = f"{len(tables)} tables" if len(tables) > 3 else ("table " if len(tables) == 1 else "tables ") + ", ".join(
        sorted(tables)
    )
    spent = (
        f"{draws:,} draws (stopped early: the last {stalled:,} found no new question; budget "
        f"{DRAWS_PER_QUESTION * asked:,}, {DRAWS_PER_QUESTION} per question asked)"
        if stalled
        else f"{draws:,} draws ({DRAWS_PER_QUESTION} per question asked)"
    )
    return (
        f"{made:,} of {asked:,} questions: {spent} over {over} found only {made:,} distinct questions; the others "
        f"were {why}"
    )


def _text_columns(table: TableProfile, query: Query, rng: random.Random) -> list[int] | None:
    """The columns a hybrid instance moves into paragraphs, or None when the question cannot be hybrid."""
    referenced = [j for j in dict.fromkeys(query.columns) if j != table.subject_column]
    if len(referenced) < 2:
        return None
    first = query.answer_column if query.answer_column in referenced else rng.choice(referenced)
    assert first is not None
    spare = [
        j
        for j in range(len(table.columns))
        if j not in query.columns and j != table.subject_column and j != table.name_column
    ]
    return [first, *rng.sample(spare, min(2, len(spare)))]


def _kg_units(
    table: TableProfile, built: BuiltQuestion, text_columns: list[int], rows: Sequence[int]
) -> tuple[list[Triple | Row | Passage], list[Triple | Row | Passage]]:
    referenced = set(built.query.columns)
    structured = [j for j in table.attribute_columns() if j not in text_columns]
    needed = set(built.candidates)
    positive: list[Triple | Row | Passage] = []
    noisy: list[Triple | Row | Passage] = []
    for row in rows:
        group = f"row{row}"
        is_needed = row in needed
        for column, triple in table.triples(row, structured, None if is_needed else group, referenced):
            (positive if is_needed and column in referenced else noisy).append(triple)
        if text_columns:
            passage = table.passage(row, text_columns, None if is_needed else group)
            if passage is not None:
                (positive if is_needed else noisy).append(passage)
    return positive, noisy


def _table_units(
    table: TableProfile, built: BuiltQuestion, text_columns: list[int], rows: Sequence[int]
) -> tuple[list[str], list[Triple | Row | Passage], list[Triple | Row | Passage]]:
    kept = [j for j in range(len(table.columns)) if j not in text_columns]
    header = [table.columns[j] for j in kept]
    needed = set(built.candidates)
    positive: list[Triple | Row | Passage] = []
    noisy: list[Triple | Row | Passage] = []
    for row in rows:
        cells = table.relation.cells[row]
        group = f"row{row}" if text_columns and row not in needed else None
        unit = Row(tuple(cells[j] or "" for j in kept), row, group)
        passage = table.passage(row, text_columns, group) if text_columns else None
        target = positive if row in needed else noisy
        target.append(unit)
        if passage is not None:
            target.append(passage)
    return header, positive, noisy


def knowledge_rows(n_rows: int, needed: Sequence[int], max_rows: int | None, seed: int) -> list[int]:
    """The table rows an instance's knowledge base is made of: all of them, or for tables over
    ``max_rows`` the ``needed`` (candidate) rows plus a seeded sample of the others (in table order)."""
    if max_rows is None or n_rows <= max_rows:
        return list(range(n_rows))
    keep = set(needed)
    others = [r for r in range(n_rows) if r not in keep]
    keep.update(random.Random(seed).sample(others, max(0, max_rows - len(keep))))
    return sorted(keep)


def to_instance(
    db: Database,
    built: BuiltQuestion,
    knowledge_type: KnowledgeType,
    instance_id: str,
    rng: random.Random,
    table: TableProfile | None = None,
    max_rows: int | None = MAX_ROWS,
) -> Instance | None:
    """The question as an instance of ``knowledge_type``; None when it cannot take that form."""
    table = table or profile(db.relations[built.query.relation])
    rows = knowledge_rows(
        len(table.relation.cells), built.candidates, max_rows, seed=zlib.crc32(built.query.question.encode())
    )
    text_columns: list[int] = []
    if knowledge_type.endswith("+text"):
        chosen = _text_columns(table, built.query, rng)
        if chosen is None or (knowledge_type == "table+text" and table.subject_column is None):
            return None
        text_columns = chosen
    header: list[str] | None = None
    if knowledge_type.startswith("kg"):
        positive, noisy = _kg_units(table, built, text_columns, rows)
    else:
        header, positive, noisy = _table_units(table, built, text_columns, rows)
    if not positive:
        return None
    if text_columns and not (
        any(isinstance(u, Passage) for u in positive) and any(not isinstance(u, Passage) for u in positive)
    ):
        return None
    query = built.query
    # Consistent by construction; validating ~10^5 units per instance would dominate the build time.
    return Instance.model_construct(
        id=instance_id,
        knowledge_type=knowledge_type,
        question=query.question,
        answers=built.answers,
        header=header,
        positive_units=positive,
        noisy_units=noisy,
        negative_rejection=query.negative_rejection,
        meta={
            "database": db.name,
            "table": query.relation,
            "template": query.template,
            "sql": f"WITH t AS (SELECT * FROM {quote(query.relation)}) {query.sql}",
            "params": list(query.params),
            "spec": query.spec,
            "lineage_rows": built.lineage,
            "candidate_rows": built.candidates,
            "text_columns": [table.columns[j] for j in text_columns],
        },
    )


def build_instances(
    db: Database,
    questions: int,
    *,
    knowledge_types: Sequence[KnowledgeType] = KNOWLEDGE_TYPES,
    seed: int = 0,
    templates: Sequence[str] | None = None,
    min_rows: int = 8,
    min_columns: int = 3,
    max_rows: int | None = MAX_ROWS,
    note: Callable[[str], None] | None = None,
) -> list[Instance]:
    """Instances of every requested knowledge type for up to ``questions`` generated questions (a shortfall: one line
    to ``note``, see ``iter_questions``)."""
    return list(
        iter_instances(
            db, questions, knowledge_types=knowledge_types, seed=seed, templates=templates, min_rows=min_rows,
            min_columns=min_columns, max_rows=max_rows, note=note,
        )
    )


def iter_instances(
    db: Database,
    questions: int,
    *,
    knowledge_types: Sequence[KnowledgeType] = KNOWLEDGE_TYPES,
    seed: int = 0,
    templates: Sequence[str] | None = None,
    min_rows: int = 8,
    min_columns: int = 3,
    max_rows: int | None = MAX_ROWS,
    note: Callable[[str], None] | None = None,
) -> Iterator[Instance]:
    """``build_instances``, question by question as they are read: a load that takes the first few samples builds
    the first few instances (each holds a whole table's units), not all of them. The same instances in the same
    order: the question draw and the hybrids' column draw each have their own seeded generator."""
    rng = random.Random(seed + 1)
    prefix = db.name.replace("/", "_")
    profiles: dict[str, TableProfile] = {}
    for k, built in enumerate(
        iter_questions(
            db, questions, seed=seed, templates=templates, min_rows=min_rows, min_columns=min_columns, note=note
        )
    ):
        name = built.query.relation
        table = profiles.get(name)
        if table is None:
            table = profiles[name] = profile(db.relations[name])
        for kt in knowledge_types:
            instance = to_instance(db, built, kt, f"{prefix}-q{k:03d}-{kt}", rng, table, max_rows)
            if instance is not None:
                instance.meta["question"] = f"{prefix}-q{k:03d}"  # the instances of one question, one per type
                yield instance
