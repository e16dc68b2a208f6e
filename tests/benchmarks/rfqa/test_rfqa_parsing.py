"""JSON recovery and reading tables out of model replies."""

from __future__ import annotations

from structbench.benchmarks.rfqa.parsing import RowMerger, complete_truncated, parse_table, recover_json

COLS = ["name", "party"]


def test_text_around_json_is_ignored() -> None:
    reply = 'Sure! Here it is:\n```json\n[{"name": "Lincoln", "party": "Republican"}]\n```\nHope it helps.'
    assert parse_table(reply, COLS) == ([{"name": "Lincoln", "party": "Republican"}], "json")


def test_truncated_json_is_completed_to_the_last_whole_row() -> None:
    reply = '[{"name": "Lincoln", "party": "Republican"}, {"name": "Grant", "party": "Repub'
    records, how = parse_table(reply, COLS)
    assert how == "truncated" and records == [{"name": "Lincoln", "party": "Republican"}]
    assert complete_truncated('{"rows": [{"a": 1}, {"a": 2}, {"a"') == '{"rows": [{"a": 1}, {"a": 2}]}'
    assert complete_truncated('[{"a": "}"}]') is None  # balanced: nothing to complete


def test_malformed_json_is_repaired() -> None:
    reply = "[{'name': 'Lincoln', 'party': 'Republican',}, {name: \"Grant\", \"party\": \"Republican\"}]"
    records, how = parse_table(reply, COLS)
    assert how == "repaired" and records is not None and len(records) == 2


def test_unrecoverable_and_empty_replies() -> None:
    assert parse_table("I don't know any.", COLS) == (None, "invalid")
    assert parse_table("{}", COLS) == ([], "json")
    assert parse_table('{"presidents": []}', COLS) == ([], "json")
    assert not recover_json("no json here").valid


def test_table_shapes() -> None:
    wrapped = '{"rows": [{"name": "A", "party": "B"}]}'
    assert parse_table(wrapped, COLS)[0] == [{"name": "A", "party": "B"}]
    assert parse_table('{"name": "A", "party": "B"}', COLS)[0] == [{"name": "A", "party": "B"}]
    assert parse_table('[["A", "B"]]', COLS)[0] == [{"name": "A", "party": "B"}]
    assert parse_table("[3, 4]", ["count"])[0] == [{"count": 3}, {"count": 4}]


def test_merge_keeps_only_new_rows() -> None:
    merged = [{"name": "A", "party": "B"}]
    merger = RowMerger(COLS, merged)
    assert merger.add([{"Name": "A", "Party": "B"}, {"name": "C", "party": "D"}]) == 1
    assert merged[-1] == {"name": "C", "party": "D"}
    # a later round drops what any earlier round read; a row repeated within one reply is kept twice
    assert merger.add([{"name": "C", "party": "D"}, {"name": "E", "party": "F"}, {"name": "E", "party": "F"}]) == 2
    assert merger.add([{"NAME": "E", "party": "F"}]) == 0
    assert [r["name"] for r in merged] == ["A", "C", "E", "E"]
