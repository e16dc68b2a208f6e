"""The LLM noisy-row synthesis pipeline, driven by a scripted MockBackend."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from structbench.backends.base import Request
from structbench.backends.mock import MockBackend, prompt_text
from structbench.benchmarks.skabench.build import main
from structbench.benchmarks.skabench.instances import read_instances
from structbench.benchmarks.skabench.synthesis import (
    CHECK_PROMPT,
    parse_check,
    parse_rows,
    synthesize_noisy_rows,
    with_noisy_rows,
)
from structbench.benchmarks.skabench.units import Instance, Row, Triple

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
    rows = ["name,team,goals,apps"] + [f"Player {i},Team {i % 5},{i * 7 % 97},{i}" for i in range(60)]
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "players.csv").write_text("\n".join(rows) + "\n")
    script = tmp_path / "mock.json"
    script.write_text(
        json.dumps(
            {
                "rules": [
                    {"match": "summarize the", "reply": "Conditions: rows of the asked player"},
                    {"match": "^Table:", "reply": "|Zed Zero|Team Z|1|999|\n|Yan Young|Team Y|2|998|"},
                    {"match": "Positive Unit Condition", "reply": "0"},
                ],
                "default": "",
            }
        )
    )
    out = tmp_path / "built.jsonl"
    argv = ["--csv", str(tmp_path / "tables"), "--questions", "3", "--knowledge", "table,kg", "--out", str(out)]
    assert main([*argv, "--synthesize-model", f"mock:{script}", "--synthesize-rows", "2"]) == 0
    instances = read_instances(out)
    assert {i.knowledge_type for i in instances} == {"table", "kg"}
    for inst in instances:
        if inst.knowledge_type == "table":
            names = [u.cells[0] for u in inst.noisy_units if isinstance(u, Row)]
            assert names[-2:] == ["Zed Zero", "Yan Young"] and len(names) + len(inst.positive_units) == 62
    assert main(["--csv", str(tmp_path / "tables"), "--knowledge", "graph", "--out", str(out)]) == 2
