"""Instances built from real databases: gold answers agree with independent SQL (DuckDB over the raw CSV
files), lineage rows are exactly those whose removal changes the answer, positive units are the rows the
question's conditions select, and the unit forms are right."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from structbench.benchmarks.skabench import builder
from structbench.benchmarks.skabench.builder import (
    BuiltQuestion,
    build_instances,
    generate_questions,
    iter_questions,
    shortfall,
)
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.metrics import normalize
from structbench.benchmarks.skabench.sources import load_rfqa_database, load_scitab_database
from structbench.benchmarks.skabench.templates import TEMPLATES
from structbench.benchmarks.skabench.units import Instance, Passage, Row, Triple
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext
from structbench.testing.cli import invoke

DATABASES = ["galois/world_1", "bird/disney", "qatch/nobel_prize", "galois/presidents", "spider1/geo"]
NULLS = ["", "null", "NULL", "Null", "nan", "NaN", "Nan", "NAN"]


class RawTables:
    """The database's CSV files read by DuckDB as text, with each row's position: independent of the builder."""

    def __init__(self, folder: Path) -> None:
        self.con = duckdb.connect()
        for path in sorted(folder.glob("*.csv")):
            self.con.execute(
                f'CREATE TABLE "{path.stem}" AS SELECT row_number() OVER () - 1 AS __pos, * FROM '
                f"read_csv('{path}', header=true, all_varchar=true, nullstr={NULLS})"
            )

    def answer(
        self, table: str, spec: dict[str, Any], drop: frozenset[int] = frozenset(), keep: set[int] | None = None
    ) -> set[str]:
        where: list[str] = ["TRUE"]
        params: list[Any] = []
        for column, op, value in spec.get("where", []):
            if op == "=":
                where.append(f'"{column}" = ?')
                params.append(value)
            else:
                where.append(f'TRY_CAST("{column}" AS DOUBLE) {op} ?')
                params.append(float(value))
        if drop:
            where.append(f"__pos NOT IN ({','.join(map(str, drop))})")
        if keep is not None:
            where.append(f"__pos IN ({','.join(map(str, keep)) or 'NULL'})")
        cond = " AND ".join(where)
        if spec.get("count"):
            (n,) = self.con.execute(f'SELECT COUNT(*) FROM "{table}" WHERE {cond}', params).fetchone()  # type: ignore[misc]
            return {str(n)} if n else set()
        for key in ("argmax", "argmin"):
            if key in spec:
                rows = self.con.execute(
                    f'SELECT "{spec["select"]}", TRY_CAST("{spec[key]}" AS DOUBLE) AS v FROM "{table}" WHERE {cond} '
                    f"AND v IS NOT NULL ORDER BY v {'DESC' if key == 'argmax' else 'ASC'} LIMIT 2",
                    params,
                ).fetchall()
                if not rows or (len(rows) == 2 and rows[0][1] == rows[1][1]):
                    return set()
                return {rows[0][0]}
        if "compare" in spec:
            a, b = spec["values"]
            extra = cond.replace("TRUE", "", 1)
            values = dict(
                self.con.execute(
                    f'SELECT "{spec["key"]}", TRY_CAST("{spec["compare"]}" AS DOUBLE) FROM "{table}" '
                    f'WHERE "{spec["key"]}" IN (?, ?) {extra}',
                    [a, b, *params],
                ).fetchall()
            )
            if a not in values or b not in values:
                return set()
            higher = a if values[a] > values[b] else b
            lower = b if higher == a else a
            return {higher if spec["op"] == ">" else lower}
        rows = self.con.execute(f'SELECT "{spec["select"]}" FROM "{table}" WHERE {cond}', params).fetchall()
        return {r[0] for r in rows if r[0] is not None}


def _norm(values: set[str] | list[str]) -> set[str]:
    return {normalize(v) for v in values}


@pytest.fixture(scope="module")
def questions(shared_data: DataContext) -> dict[str, tuple[Database, list[BuiltQuestion]]]:
    return {
        name: (db := load_rfqa_database(name, shared_data), generate_questions(db, 12, seed=11)) for name in DATABASES
    }


def test_gold_agrees_with_independent_sql(
    questions: dict[str, tuple[Database, list[BuiltQuestion]]], shared_datasets: Path
) -> None:
    templates: Counter[str] = Counter()
    for name, (_, built) in questions.items():
        raw = RawTables(shared_datasets / "relationalfactqa" / "dataset" / "data" / name)
        assert len(built) == 12, name
        for b in built:
            expected = raw.answer(b.query.relation, b.query.spec)
            assert expected, (name, b.query.question)
            assert _norm(expected) == _norm(b.answers), (name, b.query.question, expected, b.answers)
            templates[b.query.template] += 1
    assert set(templates) == set(TEMPLATES.names())


def test_lineage_is_leave_one_out_and_sufficient(
    questions: dict[str, tuple[Database, list[BuiltQuestion]]], shared_datasets: Path
) -> None:
    for name in ("galois/world_1", "qatch/nobel_prize"):
        db, built = questions[name]
        raw = RawTables(shared_datasets / "relationalfactqa" / "dataset" / "data" / name)
        for b in built:
            gold = _norm(b.answers)
            table, spec = b.query.relation, b.query.spec
            for row in b.lineage:
                assert _norm(raw.answer(table, spec, drop=frozenset({row}))) != gold, (b.query.question, row)
            assert _norm(raw.answer(table, spec, keep=set(b.lineage))) == gold
            assert set(b.lineage) <= set(b.candidates)
            assert _norm(raw.answer(table, spec, keep=set(b.candidates))) == gold
            # Rows outside the lineage: dropping any one (sampled) leaves the answer unchanged.
            others = [r for r in range(len(db.relations[table].cells)) if r not in b.lineage]
            for row in others[:: max(1, len(others) // 5)]:
                assert _norm(raw.answer(table, spec, drop=frozenset({row}))) == gold


def test_answer_stable_on_every_built_table_context(world: Database, shared_datasets: Path) -> None:
    from structbench.backends.tokens import token_counter
    from structbench.benchmarks.skabench.testbeds import NOISE, ContextBuilder, Skipped

    raw = RawTables(shared_datasets / "relationalfactqa" / "dataset" / "data" / "galois/world_1")
    builder = ContextBuilder(token_counter("cl100k-approx"))
    checked = 0
    for instance in build_instances(world, 12, seed=5, knowledge_types=("table",)):
        for budget in (1000, 4000):
            context = builder.build(instance, NOISE, budget, "original")
            if isinstance(context, Skipped):
                continue
            rows = {u.order or 0 for u in context.structured if isinstance(u, Row)}
            assert _norm(raw.answer(instance.meta["table"], instance.meta["spec"], keep=rows)) == _norm(
                instance.answers
            )
            checked += 1
    assert checked >= 12


def test_unit_forms(world: Database) -> None:
    instances = build_instances(world, 12, seed=5)
    by_type = Counter(i.knowledge_type for i in instances)
    assert by_type["kg"] == by_type["table"] == 12 and by_type["kg+text"] and by_type["table+text"]
    table = world.relations
    for inst in instances:
        spec, candidates = inst.meta["spec"], inst.meta["candidate_rows"]
        assert set(inst.meta["lineage_rows"]) <= set(candidates)
        rel = table[inst.meta["table"]]
        referenced = {c for c, _, _ in spec.get("where", [])} | {
            spec.get(k) for k in ("select", "argmax", "argmin", "compare", "key") if spec.get(k)
        }
        positives = inst.positive_units
        if inst.knowledge_type == "table":
            assert inst.header == rel.columns
            assert sorted(u.order or 0 for u in positives if isinstance(u, Row)) == candidates
            assert len(positives) + len(inst.noisy_units) == len(rel.cells)
        if inst.knowledge_type.startswith("kg"):
            triples = [u for u in positives if isinstance(u, Triple)]
            assert triples and {t.relation for t in triples} <= referenced
            lines = " ".join(u.line() for u in positives)
            if spec.get("count"):  # every row of the counted group, matching the threshold or not
                assert len({t.subject for t in triples}) == len(candidates) >= int(inst.answers[0])
            else:
                assert all(a in lines for a in inst.answers), (inst.question, inst.answers, lines)
        if inst.knowledge_type.endswith("+text"):
            text_columns = inst.meta["text_columns"]
            assert any(isinstance(u, Passage) for u in positives)
            assert any(not isinstance(u, Passage) for u in positives)
            assert text_columns[0] in referenced
            if inst.knowledge_type == "table+text":
                assert inst.header is not None and not set(text_columns) & set(inst.header)
            else:
                assert not any(t.relation in text_columns for t in inst.noisy_units if isinstance(t, Triple))
        # Noisy units never contain a positive one.
        assert not {u.line() for u in positives} & {u.line() for u in inst.noisy_units if isinstance(u, Triple)}


def test_csv_folder_errors(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3\n")
    with pytest.raises(DataError, match=r"t.csv:3: 1 fields, the header has 2"):
        Database.from_csv_folder(tmp_path)
    with pytest.raises(DataError, match="no CSV files"):
        Database.from_csv_folder(tmp_path / "nothing")


def test_column_types_keep_codes_as_text(tmp_path: Path) -> None:
    (tmp_path / "z.csv").write_text("zip,n,x\n007,1,1.5\n123,null,2\n")
    db = Database.from_csv_folder(tmp_path)
    assert db.relations["z"].types == ["VARCHAR", "BIGINT", "DOUBLE"]
    assert db.relations["z"].cells == [["007", "1", "1.5"], ["123", None, "2"]]
    assert db.execute('SELECT COUNT(*) FROM "z" WHERE "n" IS NULL') == [(1,)]


def test_scitab_tables_build(shared_datasets: Path) -> None:
    db = load_scitab_database(shared_datasets / "scitab" / "dataset" / "sci_tab.json", limit=40)
    assert len(db.relations) == 40
    assert not any("[BOLD]" in c for rel in db.relations.values() for row in rel.cells for c in row if c)
    instances = build_instances(db, 8, seed=2, min_rows=4, knowledge_types=("table", "kg"))
    assert instances
    for inst in instances:
        assert isinstance(inst, Instance)
        rel = db.relations[inst.meta["table"]]
        if inst.knowledge_type == "table":
            assert len(inst.positive_units) == len(inst.meta["candidate_rows"]) and inst.header == rel.columns


def test_large_tables_are_sampled_around_the_lineage(world: Database) -> None:
    instances = build_instances(world, 6, seed=4, knowledge_types=("table", "kg"), max_rows=300)
    city = [i for i in instances if i.meta["table"] == "city"]
    assert city
    for inst in city:
        rows = {u.order for u in [*inst.positive_units, *inst.noisy_units] if isinstance(u, Row)}
        subjects = {u.subject for u in [*inst.positive_units, *inst.noisy_units] if isinstance(u, Triple)}
        assert len(rows or subjects) == 300
        if rows:
            assert set(inst.meta["candidate_rows"]) <= rows
    same_question = [i for i in city if i.id.endswith("-table") or i.id.endswith("-kg")]
    by_q: dict[str, list[Instance]] = {}
    for i in same_question:
        by_q.setdefault(i.id.rsplit("-", 1)[0], []).append(i)
    for pair in by_q.values():
        if len(pair) == 2:  # the KG and Table forms of a question draw the same rows
            table_i, kg_i = sorted(pair, key=lambda i: i.knowledge_type != "table")
            shown = [u.order for u in [*table_i.positive_units, *table_i.noisy_units] if isinstance(u, Row)]
            kg_subjects = {u.subject for u in [*kg_i.positive_units, *kg_i.noisy_units] if isinstance(u, Triple)}
            assert len(kg_subjects) == len(shown)


EIGHT_PLAYERS = "name,team,goals\n" + "".join(f"Player {i},Team {i % 3},{i * 7 % 11}\n" for i in range(8))
"""8 rows: ``lookup`` asks at most 32 questions (2 keys with unique values, name and goals, x 8 rows x 2 targets)."""


def test_more_questions_than_the_tables_hold_are_one_note(tmp_path: Path) -> None:
    """``generate skabench --questions N`` past what the tables hold silently wrote fewer (``--questions 2000`` over
    a 12-row table: 784 questions, exit 0, nothing said); it writes what there is and says so in one stderr line."""
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "players.csv").write_text(EIGHT_PLAYERS)
    out = tmp_path / "built.jsonl"
    lookups = ("generate", "skabench", "--csv", str(tmp_path / "tables"), "--templates", "lookup", "--out", str(out))
    done = invoke(*lookups, "--knowledge", "table,kg", "--questions", "40")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    questions = Counter(line["meta"]["question"] for line in lines)
    assert len(questions) == len({line["question"] for line in lines}) == 32 and set(questions.values()) == {2}
    assert done.stderr.splitlines() == [
        "note: 32 of 40 questions: 2,400 draws (60 per question asked) over table players found only 32 distinct "
        "questions; the others were 2,368 repeats"
    ]
    assert done.stdout == f"wrote 64 instances to {out}\n"
    enough = invoke(*lookups, "--knowledge", "table", "--questions", "32")
    assert enough.returncode == 0 and enough.stderr == "" and len(out.read_text().splitlines()) == 32


def test_the_shortfall_says_why_the_draws_gave_no_question() -> None:
    missed = Counter(repeated=1_000, unanswered=20, no_lineage=3, impossible=7)
    line = shortfall(5, 20, missed, ["b", "a", "c"])
    assert line == (
        "5 of 20 questions: 1,035 draws (60 per question asked) over tables a, b, c found only 5 distinct questions; "
        "the others were 1,000 repeats, 20 with no answer, 3 with no lineage (over 80 candidate rows, or not decided "
        "by a few of them), 7 of a template the drawn table cannot ask"
    )
    assert "over 4 tables found" in shortfall(5, 20, missed, ["a", "b", "c", "d"])


def test_a_huge_ask_over_a_small_table_stops_once_the_draws_find_nothing_new(tmp_path: Path) -> None:
    """``--questions 100000`` over an 8-row table drew 6,000,000 times (60 per question asked) for its 32 questions,
    minutes of CPU; the draws stop after ``STALL_MIN`` in a row find no new question, and the note says so."""
    (tmp_path / "players.csv").write_text(EIGHT_PLAYERS)
    notes: list[str] = []
    made = list(iter_questions(Database.from_csv_folder(tmp_path), 100_000, templates=["lookup"], note=notes.append))
    assert len(made) == 32
    assert notes == [
        "32 of 100,000 questions: 10,238 draws (stopped early: the last 10,000 found no new question; budget "
        "6,000,000, 60 per question asked) over table players found only 32 distinct questions; the others were "
        "10,206 repeats"
    ]


TWELVE_PLAYERS = "name,team,position,goals,assists\n" + "".join(
    f"Player {i},Team {i % 3},{'FW' if i % 4 == 3 else ['FW', 'MF', 'DF'][i % 4]},{i * 7 % 11},{i * 5 % 13}\n"
    for i in range(12)
)
"""12 rows of 5 columns: 743 distinct questions over all templates; with seed 3 the last comes 27,366 draws in, after
4,290 in a row that found none new (within the budget of 44,580 for 743)."""


@pytest.mark.parametrize(
    ("table", "templates", "seeds", "asks"),
    [
        (EIGHT_PLAYERS, ["lookup"], range(5), [1, 31, 32]),
        (TWELVE_PLAYERS, None, [0], [300]),
        (TWELVE_PLAYERS, None, [3], [743]),
    ],
)
def test_the_stop_never_changes_an_ask_the_budget_fills(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    table: str,
    templates: list[str] | None,
    seeds: range | list[int],
    asks: range | list[int],
) -> None:
    """Every ask here is one the budget alone fills, and the stop leaves its seeded questions as they were: those of
    the draws without the stop (``STALL_MIN`` past any budget), question by question."""
    (tmp_path / "players.csv").write_text(table)
    db = Database.from_csv_folder(tmp_path)
    for seed in seeds:
        for n in asks:
            now = [q.query.question for q in generate_questions(db, n, seed=seed, templates=templates)]
            with monkeypatch.context() as budget_only:
                budget_only.setattr(builder, "STALL_MIN", 10**12)
                before = [q.query.question for q in generate_questions(db, n, seed=seed, templates=templates)]
            assert len(before) == n and now == before
