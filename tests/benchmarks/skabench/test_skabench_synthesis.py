"""The LLM noisy-row synthesis pipeline, driven by a scripted MockBackend."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from structbench.backends.base import Request
from structbench.backends.mock import MockBackend, prompt_text
from structbench.benchmarks.skabench.instances import read_instances
from structbench.benchmarks.skabench.synthesis import (
    CHECK_PROMPT,
    parse_check,
    parse_rows,
    synthesize_noisy_rows,
    with_noisy_rows,
)
from structbench.benchmarks.skabench.units import Instance, Row, Triple
from structbench.testing.cli import invoke

INSTANCE = Instance(
    id="cs",
    knowledge_type="table",
    question="which date the colorado state team scored no points?",
    answers=["September 20, 1997"],
    header=["Date", "Winning team", "Losing team", "Losing team score"],
    positive_units=[Row(("September 20, 1997", "Air Force", "Colorado State", "0"), 1)],
    noisy_units=[Row(("September 6, 1980", "Colorado State", "Air Force", "9"), 0)],
)


class Scripted:
    """Condition -> one line; generation -> rows (some bad); check -> 1 when a row has Colorado State losing 0."""

    def __init__(self) -> None:
        self.rounds = 0

    def __call__(self, request: Request) -> str:
        text = prompt_text(request)
        if 'summarize the "conditions"' in text:
            return "Conditions: The knowledge unit involves Colorado State as the losing team with a score of 0."
        if text.startswith("Table:"):
            self.rounds += 1
            base = 10 * self.rounds
            return "\n".join(
                [
                    "Here are the rows:",
                    "|Date|Winning team|Losing team|Losing team score|",
                    f"|October {base}, 1990|Utah|Colorado State|0|",  # would change the answer
                    f"|October {base + 1}, 1990|Utah|Wyoming|14|",
                    f"|October {base + 2}, 1990|BYU|Air Force|7|",
                    "|September 6, 1980|Colorado State|Air Force|9|",  # repeats a table row
                    "|too|few|cells|",
                ]
            )
        units = text.split("### Noisy Units:\n", 1)[1].split("### Positive Unit Condition:", 1)[0]
        return "1" if re.search(r"\|Colorado State\|0\|", units) else "0"


def test_row_mode_rejects_rows_meeting_the_condition() -> None:
    backend = MockBackend(reply=Scripted())
    report = asyncio.run(synthesize_noisy_rows(INSTANCE, backend.generate, target=4, check="row"))
    assert report.condition.startswith("The knowledge unit involves Colorado State")
    assert len(report.rows) == 4
    assert all("Colorado State" not in r.cells or r.cells[3] != "0" for r in report.rows)
    assert report.rejected == 2 and report.malformed >= 2
    assert [r.order for r in report.rows] == [2, 3, 4, 5]
    # Each batch was checked with the paper's Fig. 14 prompt and the derived condition.
    checks = [prompt_text(c) for c in backend.calls if "Positive Unit Condition" in prompt_text(c)]
    assert checks and all("Conditions: The knowledge unit involves" in c for c in checks)
    assert CHECK_PROMPT.split("{units}")[1].split("{condition}")[1] in checks[0]
    # The generation prompt shows the table so far (header, rows, accepted rows) and asks for 20 rows.
    gens = [prompt_text(c) for c in backend.calls if prompt_text(c).startswith("Table:")]
    assert "generate 20 noisy rows" in gens[0] and "|September 20, 1997|Air Force|Colorado State|0|" in gens[0]
    assert "|October 11, 1990|Utah|Wyoming|14|" in gens[1]


def test_batch_mode_regenerates_a_failing_batch() -> None:
    backend = MockBackend(reply=Scripted())
    report = asyncio.run(synthesize_noisy_rows(INSTANCE, backend.generate, target=4, check="batch", max_calls=6))
    # Every batch holds a Colorado State 0 row, so the paper's batch check rejects them all.
    assert report.rows == [] and report.rejected == report.generated > 0
    assert report.calls == 5  # condition + two generate-and-check rounds; no room for a third
    assert report.stalled and report.rounds == 2


def _numbered_rows(request: Request) -> str:
    """20 fresh rows per generation request, numbered by the request's seed; every fifth loses with 0."""
    seed = request.params.seed or 0
    lines = [f"|May {seed}-{k}, 2001|Team {k}|{'Colorado State' if k % 5 == 0 else 'Navy'}|{0 if k % 5 == 0 else k}|"
             for k in range(20)]
    return "Sure:\n" + "\n".join(lines)


def _checking(request: Request) -> str:
    text = prompt_text(request)
    if 'summarize the "conditions"' in text:
        return "Conditions: Colorado State loses with 0 points."
    units = text.split("### Noisy Units:\n", 1)[1].split("### Positive Unit Condition:", 1)[0]
    return "1" if re.search(r"\|Colorado State\|0\|", units) else "0"


def test_reaches_the_requested_row_count_with_two_alternating_models() -> None:
    first, second = MockBackend(reply=_numbered_rows), MockBackend(reply=_numbered_rows)
    checker = MockBackend(reply=_checking)
    report = asyncio.run(
        synthesize_noisy_rows(
            INSTANCE, [first.generate, second.generate], checker=checker.generate, target=150, check="row"
        )
    )
    # far beyond the old ten-call cap (about 80 rows): 150 accepted rows, none that changes the answer
    assert len(report.rows) == 150 and not report.stalled
    assert len({r.cells for r in report.rows}) == 150
    assert not any(r.cells[2:] == ("Colorado State", "0") for r in report.rows)
    assert [r.order for r in report.rows] == list(range(2, 152))
    # the generators take turns, each round with its own seed; the checker alone derives and checks
    assert [c.params.seed for c in first.calls] == list(range(1, report.rounds + 1, 2))
    assert [c.params.seed for c in second.calls] == list(range(2, report.rounds + 1, 2))
    assert report.rounds == 10 and report.accepted_by_model[0] == 80 and report.accepted_by_model[1] == 70
    assert all(prompt_text(c).startswith("Table:") for c in [*first.calls, *second.calls])
    assert not any(prompt_text(c).startswith("Table:") for c in checker.calls)
    # four losing rows a round are rejected; the last round stops checking once 150 rows are in
    assert report.rejected == 9 * 4 + 2 and report.calls == 1 + 10 + len(checker.calls) - 1


def test_a_model_that_repeats_itself_stops_after_patience_rounds() -> None:
    stuck = MockBackend(reply=lambda r: "|May 1, 2001|Utah|Wyoming|3|" if prompt_text(r).startswith("Table:") else "0")
    report = asyncio.run(synthesize_noisy_rows(INSTANCE, stuck.generate, target=50, patience=3))
    assert len(report.rows) == 1 and report.stalled and report.rounds == 4


def test_table_text_instances_get_rows_over_their_table_columns() -> None:
    hybrid = Instance(
        id="h",
        knowledge_type="table+text",
        question=INSTANCE.question,
        answers=INSTANCE.answers,
        header=INSTANCE.header,
        positive_units=[*INSTANCE.positive_units, "Colorado State: The nickname of Colorado State is Rams."],
        noisy_units=INSTANCE.noisy_units,
    )
    backend = MockBackend(reply=lambda r: _numbered_rows(r) if prompt_text(r).startswith("Table:") else _checking(r))
    report = asyncio.run(synthesize_noisy_rows(hybrid, backend.generate, target=30, check="row"))
    assert len(report.rows) == 30 and all(len(r.cells) == 4 for r in report.rows)
    condition = prompt_text(backend.calls[0])
    assert "The nickname of Colorado State is Rams." in condition  # the positive paragraph is shown
    bigger = with_noisy_rows(hybrid, report.rows)
    assert bigger.knowledge_type == "table+text" and len(bigger.noisy_units) == 31


def test_accepted_rows_extend_the_instance() -> None:
    def clean(request: Request) -> str:
        text = prompt_text(request)
        if text.startswith("Table:"):
            return "|May 1, 2001|Utah|Wyoming|3|\n|May 2, 2001|Navy|Army|6|"
        return "0" if "Positive Unit Condition" in text else "Conditions: losing team Colorado State scoring 0"

    report = asyncio.run(synthesize_noisy_rows(INSTANCE, MockBackend(reply=clean).generate, target=2))
    assert len(report.rows) == 2 and report.calls == 3
    bigger = with_noisy_rows(INSTANCE, report.rows)
    assert len(bigger.noisy_units) == 3 and bigger.positive_units == INSTANCE.positive_units


def test_only_tables_and_parsers() -> None:
    kg = Instance(id="k", knowledge_type="kg", question="q", answers=["a"], positive_units=[Triple("a", "b", "c")])
    with pytest.raises(ValueError, match="table instance"):
        asyncio.run(synthesize_noisy_rows(kg, MockBackend().generate))
    assert parse_rows("| a | b |\n|---|---|\na|b|c\n|x|y|", 2) == [("a", "b"), ("x", "y")]
    assert parse_check("The answer is 0.") == 0 and parse_check("2") == 2 and parse_check("none") is None


def test_build_command_writes_instances_and_synthesizes(tmp_path: Path) -> None:
    rows = ["name,team,goals,apps,city"] + [f"Player {i},Team {i % 5},{i * 7 % 97},{i},City {i % 7}" for i in range(60)]
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "players.csv").write_text("\n".join(rows) + "\n")
    scripts = []
    for k, cells in enumerate([["Zed Zero", "Team Z", "1", "999", "City Z"], ["Yan Young", "Team Y", "2", "998", "Y"]]):
        # a row of each width: a Table+Text instance's table has fewer columns (some went into its paragraphs)
        reply = "\n".join("|" + "|".join(cells[:width]) + "|" for width in range(2, 6))
        script = tmp_path / f"gen{k}.json"
        script.write_text(json.dumps({"rules": [], "default": reply}))
        scripts.append(f"mock:{script}")
    checker = tmp_path / "check.json"
    checker.write_text(
        json.dumps(
            {"rules": [{"match": "summarize the", "reply": "Conditions: rows of the asked player"}], "default": "0"}
        )
    )
    out = tmp_path / "built.jsonl"
    cache = tmp_path / "responses.sqlite"
    argv = ["generate", "skabench", "--csv", str(tmp_path / "tables"), "--questions", "4", "--knowledge",
            "table,table+text,kg", "--out", str(out), "--synthesize-model", ",".join(scripts), "--check-model",
            f"mock:{checker}", "--synthesize-rows", "2", "--cache", str(cache)]
    done = invoke(*argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote ") and done.stdout.endswith(f" instances to {out}\n")
    first = done.stderr
    instances = read_instances(out)
    assert {i.knowledge_type for i in instances} >= {"table", "kg"}
    synthesized = set()
    for inst in instances:
        names = [u.cells[0] for u in inst.noisy_units if isinstance(u, Row)]
        if inst.knowledge_type in ("table", "table+text"):
            assert names[-2:] == ["Zed Zero", "Yan Young"]  # one row from each model, in turn
            synthesized.add(inst.knowledge_type)
        if inst.knowledge_type == "table":
            assert len(names) + len(inst.positive_units) == 62
    assert synthesized == {"table", "table+text"}
    assert "2 of 2 rows kept (1 from model 1, 1 from model 2)" in first
    again = invoke(*argv)  # everything again from the response cache: not one model call
    assert again.returncode == 0 and "\n0 model calls" in again.stderr
    bad = invoke("generate", "skabench", "--csv", str(tmp_path / "tables"), "--knowledge", "graph", "--out", str(out))
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown knowledge type(s): graph")
    neither = invoke("generate", "skabench", "--out", str(out))
    assert neither.returncode == 2 and "give exactly one of --rfqa, --csv, --scitab" in neither.stderr


def test_build_command_writes_nothing_when_a_model_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from structbench.backends.base import BackendError
    from structbench.benchmarks.skabench import build

    async def failing(*args: object, **kwargs: object) -> None:
        raise BackendError("HTTP 500 after 6 retries")

    monkeypatch.setattr(build, "synthesize_noisy_rows", failing)
    rows = ["name,team,goals"] + [f"Player {i},Team {i % 5},{i}" for i in range(30)]
    (tmp_path / "players.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "built.jsonl"
    done = invoke("generate", "skabench", "--csv", str(tmp_path), "--knowledge", "table", "--out", str(out),
                  "--synthesize-model", "mock", "--no-cache")
    assert done.returncode == 3 and not out.exists()
    assert done.stderr.startswith("error: a synthesis model call failed for good: HTTP 500 after 6 retries")
    assert list(tmp_path.iterdir()) == [tmp_path / "players.csv"]  # no partial file left beside it


def test_tables_that_give_no_question_write_nothing_and_exit_2(tmp_path: Path) -> None:
    """An empty set was written with exit 0, which ``run -b skabench`` then refused."""
    (tmp_path / "players.csv").write_text("name,team,goals\n" + "".join(f"P{i},T{i},{i}\n" for i in range(5)))
    out = tmp_path / "built.jsonl"
    done = invoke("generate", "skabench", "--csv", str(tmp_path), "--knowledge", "table", "--min-rows", "1000",
                  "--out", str(out))
    assert done.returncode == 2 and not out.exists(), done.stderr
    assert done.stderr.startswith(f"error: {out}: no question could be built from the tables"), done.stderr
