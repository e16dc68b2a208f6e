"""JSON recovery and reading tables out of model replies."""

from __future__ import annotations

import json
import math
import random

from structbench.benchmarks.rfqa.metrics import attribute_key
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


def _completed_by_copies(text: str) -> str | None:
    """``complete_truncated`` as it first read: a copy of the open brackets at every close (quadratic in the depth)."""
    stack: list[str] = []
    in_string = escaped = False
    last_good, at_good = -1, []
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            last_good, at_good = i, list(stack)
    if not stack or last_good < 0:
        return None
    return text[: last_good + 1].rstrip().rstrip(",") + "".join(reversed(at_good))


def test_truncated_json_is_completed_as_by_copying_the_open_brackets_at_each_close() -> None:
    """The brackets still open at the last close are the open ones' first entries (only opens follow it), so
    ``complete_truncated`` needs no copy at each close: every cut of random nested JSON completes alike."""
    rng = random.Random(3)

    def value(depth: int) -> object:
        if depth > 4 or rng.random() < 0.3:
            return rng.choice([1, "a]", 'b"}', "c\\", None, 2.5])
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randint(0, 3))}

    cuts = 0
    for _ in range(200):
        text = json.dumps(value(0))
        for end in range(len(text) + 1):
            assert complete_truncated(text[:end]) == _completed_by_copies(text[:end]), text[:end]
            cuts += 1
    assert cuts > 2000


def test_a_reply_nested_deeper_than_a_table_is_invalid() -> None:
    """Python's parser raises on some thousand levels and what reads the value walks it by recursion: a reply nested
    more than ``MAX_NESTING`` levels deep is invalid however deep it goes, whole or cut off (the cut one read in
    linear time: 50,000 levels)."""
    assert recover_json("[" * 100 + "]" * 100).how == "json"
    for depth in (101, 990, 50_000):
        assert recover_json("[" * depth + "]" * depth).how == "invalid"
        assert recover_json("[" * depth + "1, 2" + "]" * 50).how == "invalid"
    assert recover_json('[{"a": ' + "[" * 300 + "1" + "]" * 300 + "}]").how == "invalid"
    assert parse_table("{" + '"a": {' * 5000 + "}" * 5001, COLS) == (None, "invalid")


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


def _json_key(columns: list[str], rec: dict[str, object]) -> str:
    """The key a row had before ``RowMerger.key`` kept JSON for rows of non-scalars only: its values' JSON text."""
    keys = [attribute_key(c) for c in columns]
    keyed = {attribute_key(k): v for k, v in rec.items()}
    return json.dumps([keyed.get(k) for k in keys] if any(k in keyed for k in keys) else rec, default=str)


def test_merge_keys_rows_alike_exactly_when_their_json_is_alike() -> None:
    """``RowMerger.key``'s tuples of scalars are equal exactly when the JSON texts of the rows are: 1, 1.0, True and
    "1" apart, -0.0 and 0.0 apart, every NaN alike, a missing attribute as null, the last of two keys read alike,
    lists and objects in cells, records with none of the attributes."""
    rng = random.Random(7)
    cells: list[object] = [1, 1.0, True, False, 0, 0.0, -0.0, "1", "true", None, math.nan, math.inf, -math.inf, 2**70,
                           "NaN", "a", "é", [1], [1.0], {"a": 1}, {"a": True}, "", 1e300, 1.5, "1.5"]
    names = ["name", "Name", "party", "PARTY ", "other", "x"]
    columns = ["name", "party"]
    records = []
    for _ in range(3000):
        keys = rng.sample(names, rng.randint(0, 4))
        records.append({k: rng.choice(cells) for k in keys})
    merger = RowMerger(columns)
    new = [merger.key(r) for r in records]
    old = [_json_key(columns, r) for r in records]
    assert len(set(old)) > 100
    for i in range(0, len(records), 7):
        for j in range(len(records)):
            assert (new[i] == new[j]) == (old[i] == old[j]), (records[i], records[j])
