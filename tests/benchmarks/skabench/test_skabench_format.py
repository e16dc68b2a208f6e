"""Instance JSONL format, prompts, answer parsing and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.benchmarks.skabench.instances import read_instances, write_instances
from structbench.benchmarks.skabench.metrics import answer_f1, normalize
from structbench.benchmarks.skabench.parsing import parse_answer_list, parse_rejection
from structbench.benchmarks.skabench.prompts import qa_prompt, rejection_prompt, render_knowledge
from structbench.benchmarks.skabench.units import Instance, Passage, Row, Triple
from structbench.core.errors import DataError


def _write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text("\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n")
    return path


TABLE = {
    "id": "t1",
    "knowledge_type": "table+text",
    "question": "What are the goals of the athlete who became player-manager of Middlesbrough in 1994?",
    "answers": [40],
    "header": ["Name", "Goals"],
    "positive_units": [{"cells": ["Bryan Robson", 40], "order": 2}, "Bryan Robson: manager of Middlesbrough."],
    "noisy_units": [{"cells": ["Ray Barlow", "48"]}, {"kind": "row", "cells": ["Billy Bassett", "77"], "order": 0}],
}


def test_jsonl_short_forms_and_round_trip(tmp_path: Path) -> None:
    kg = {
        "id": "k1",
        "knowledge_type": "kg",
        "question": "Which nation has the Alta Verapaz Department?",
        "answers": "Guatemala",
        "positive_units": [["Guatemala", "location.country.administrative_divisions", "Alta Verapaz Department"]],
        "noisy_units": [{"subject": "Denmark", "relation": "location.location.containedby", "object": "Scandinavia"}],
    }
    instances = read_instances(_write(tmp_path, [TABLE, "", kg]))
    table, graph = instances
    assert table.answers == ["40"]
    assert table.positive_units[0] == Row(("Bryan Robson", "40"), 2)
    assert table.positive_units[1] == Passage("Bryan Robson: manager of Middlesbrough.")
    # A row without ``order`` takes its place in the positive-then-noisy listing.
    assert [u.order for u in table.noisy_units if isinstance(u, Row)] == [1, 0]
    assert graph.positive_units[0] == Triple(
        "Guatemala", "location.country.administrative_divisions", "Alta Verapaz Department"
    )
    assert graph.answers == ["Guatemala"]
    out = tmp_path / "again.jsonl"
    assert write_instances(instances, out) == 2
    assert read_instances(out) == instances


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({**TABLE, "header": None}, "header"),
        ({**TABLE, "knowledge_type": "kg"}, "row unit cannot be part of a kg instance"),
        ({**TABLE, "positive_units": []}, "positive_units"),
        ({**TABLE, "noisy_units": [{"cells": ["only one"]}]}, "1 cells for a header of 2 columns"),
        ({**TABLE, "answers": []}, "answers"),
        ({k: v for k, v in TABLE.items() if k != "question"}, "question"),
    ],
)
def test_jsonl_errors_name_file_line_and_field(tmp_path: Path, broken: dict[str, object], message: str) -> None:
    path = _write(tmp_path, [TABLE | {"id": "ok"}, broken])
    with pytest.raises(DataError, match=message) as err:
        read_instances(path)
    assert f"{path}:2:" in str(err.value)


def test_jsonl_rejects_bad_json_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r":1: not JSON"):
        read_instances(_write(tmp_path, ["{oops"]))
    with pytest.raises(DataError, match=r":2: duplicate instance id 't1'"):
        read_instances(_write(tmp_path, [TABLE, TABLE]))


def test_prompts_quote_appendix_c() -> None:
    kg = render_knowledge("kg", [Triple("Guatemala", "containedby", "North America")], [])
    prompt = qa_prompt("kg", kg, "What language is spoken there?")
    assert prompt.startswith("### Triples:\n(Guatemala, containedby, North America)\n")
    assert "**Task Description:** Based on the triples provided above, please answer the following questions." in prompt
    assert prompt.endswith(
        'What language is spoken there?\nReturn the final result as JSON in the format {"answer": <YOUR ANSWER LIST>} '
        "in the last line."
    )
    table = render_knowledge(
        "table+text", [Row(("Ray Barlow", "48"))], [Passage("Ray Barlow: a half-back.")], ["Name", "Goals"]
    )
    assert table == "### Table:\n|Name|Goals|\n|Ray Barlow|48|\n### Texts:\nRay Barlow: a half-back."
    rejection = rejection_prompt("table", table, "Q?")
    assert "Please look at the table, and then judge whether the following questions can be answered." in rejection
    assert rejection.endswith('{"answer": "yes"} or {"answer": "no"} in the last line.')


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"answer": ["Guatemala"]}', ["Guatemala"]),
        ('Reasoning {"answer": ["x"]} first.\nSo:\n{"answer": ["Spanish", "Mayan"]}', ["Spanish", "Mayan"]),
        ('{"answer": 3}', ["3"]),
        ('{"answer": [5.0, "a"]}', ["5", "a"]),
        ("{'answer': ['single quotes']}", ["single quotes"]),
        ('```json\n{"answer": ["fenced"]}\n```', ["fenced"]),
        ('{"answer": ["unclosed"', ["unclosed"]),
        ("I think it is Guatemala.", None),
        ('Return the final result as JSON in the format {"answer": <YOUR ANSWER LIST>} in the last line.', None),
        ('{"answer": ["Lima"]}\nformat {"answer": <YOUR ANSWER LIST>}', ["Lima"]),
        ('{"answer": null}', None),
    ],
)
def test_parse_answer_list(reply: str, expected: list[str] | None) -> None:
    assert parse_answer_list(reply) == expected


def test_an_answer_nested_past_a_hundred_levels_is_no_answer() -> None:
    """Python's parser raises past some thousand levels, whole or cut off, and a value it reads from further up
    would fail when written as text; an answer before it still counts."""
    for nested in ("[" * 100_000 + "]" * 100_000, "[" * 5000, "[" * 300 + '"x"' + "]" * 300, "[" * 500):
        assert parse_answer_list('{"answer": ' + nested + "}") is None, nested[:5]
        assert parse_answer_list('{"answer": ["a"]}\n{"answer": ' + nested + "}") == ["a"]
    inner = "[" * 48 + '"x"' + "]" * 48  # 50 levels: read, its inner list written as Python writes it
    assert parse_answer_list('{"answer": [[' + inner + "]]}") == [str(json.loads(inner))]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [('{"answer": "no"}', "no"), ('maybe\n{"answer": "Yes"}', "yes"), ('{"answer": ["no"]}', "no"), ("No.", None)],
)
def test_parse_rejection(reply: str, expected: str | None) -> None:
    assert parse_rejection(reply) == expected


def test_normalize_and_f1() -> None:
    assert normalize("1,780,000") == normalize("1780000") == "1780000"
    assert normalize("83600.0") == normalize("83600") and normalize("$5") == "5"
    assert normalize("0.50") == normalize(".5")
    assert normalize("The  Jungle Book!") == "jungle book"
    assert normalize("5.3") != normalize("53")
    assert answer_f1(["jungle book"], ["The Jungle Book"]) == 1.0
    assert answer_f1(["a", "b"], ["a"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert answer_f1(["a", "b", "c"], ["a", "b", "d", "e"]) == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert answer_f1(["x"], ["a"]) == 0.0
    assert answer_f1([], ["a"]) == 0.0
    assert answer_f1(None, ["a"]) == 0.0
    assert answer_f1(["a", "A", "a."], ["a"]) == 1.0


def test_instance_row_order_default() -> None:
    inst = Instance(
        id="x",
        knowledge_type="table",
        question="q",
        answers=["a"],
        header=["h"],
        positive_units=[Row(("p",))],
        noisy_units=[Row(("n0",)), Row(("n1",), 7)],
    )
    assert [u.order for u in [*inst.positive_units, *inst.noisy_units] if isinstance(u, Row)] == [0, 1, 7]


def test_f1_strips_accents_and_reads_numbers_like_rfqa() -> None:
    assert answer_f1(["São Paulo"], ["Sao Paulo"]) == 1.0
    assert answer_f1(["3 million"], ["3000000"]) == 1.0
    assert answer_f1(["1.000,5", "Zürich"], ["1000.5", "zurich"]) == 1.0
    assert normalize("1e5") == normalize("100000") and normalize("-.5") == normalize("-0.5")
    assert answer_f1(["3 million"], ["3"]) == 0.0
    assert normalize("5 km") == "5 km"  # a suffix that is no shorthand leaves text
