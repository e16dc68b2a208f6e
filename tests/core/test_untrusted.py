"""``core.untrusted``: what a model wrote, read as JSON (``loads``, ``raw_decode``, ``repaired``) and made fit for a
JSON line (``writable``); the file-name and archive checks are tested with the readers that use them
(``tests/interop/test_untrusted.py``)."""

from __future__ import annotations

import json

import pytest

from structbench.core.untrusted import MAX_NESTING, TooDeep, loads, raw_decode, repaired, writable


def test_lone_surrogates_become_replacement_characters_and_pairs_stay() -> None:
    value = json.loads('{"k\\udfff": ["\\ud800x", "\\ud83d\\ude00", 1, null], "ok": "plain"}')
    mended, changed = writable(value)
    assert changed and mended == {"k\ufffd": ["\ufffdx", "\U0001f600", 1, None], "ok": "plain"}
    json.dumps(mended, ensure_ascii=False).encode()  # every text encodes now


def test_containers_nested_too_deep_become_a_text_saying_so() -> None:
    deep = json.loads("[" * 900 + "]" * 900)  # deeper than pydantic writes; walked without recursion
    mended, changed = writable({"parsed": deep}, max_depth=10)
    assert changed
    inner = mended["parsed"]  # the dict is level 0, its list level 1: levels 0-9 are kept
    for _ in range(8):
        inner = inner[0]
    assert inner == ["(list nested more than 10 levels deep: not kept)"]


def test_a_value_that_needs_nothing_is_unchanged_and_tuples_become_lists() -> None:
    shared = [1, "a"]
    mended, changed = writable({"a": (shared, shared), "b": 2.5})
    assert not changed and mended == {"a": [[1, "a"], [1, "a"]], "b": 2.5}
    assert mended["a"][0] is mended["a"][1]  # a shared container stays one (rebuilt once)


def test_a_container_inside_itself_does_not_loop() -> None:
    cycle: list[object] = ["\ud800"]
    cycle.append(cycle)
    mended, changed = writable(cycle)
    assert changed and mended[0] == "\ufffd" and mended[1] is mended


def _nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.mark.parametrize("levels", [150, 100_000])  # past MAX_NESTING (json reads it), past json's own limit
def test_a_value_nested_too_deep_is_a_value_error_from_each_reader(levels: int) -> None:
    text = '{"a": ' + _nested(levels) + "}"
    for read in (loads, lambda t: raw_decode(t + " and more")[0], repaired):
        with pytest.raises(TooDeep):
            read(text)
    assert issubclass(TooDeep, ValueError)  # a caller that needs not tell catches ValueError alone


def test_ordinary_json_is_read_as_json_reads_it() -> None:
    text = '{"a": [1, "x", null], "b": ' + _nested(MAX_NESTING - 2) + "}"  # MAX_NESTING levels: read
    assert loads(text) == json.loads(text) and loads(text.encode()) == json.loads(text)
    assert raw_decode(text + ' {"next": 1}') == (json.loads(text), len(text))
    assert repaired("{'a': [1, 'x',], b: 2") == {"a": [1, "x"], "b": 2}
    with pytest.raises(ValueError) as err:
        loads('{"a": 1} x')
    assert not isinstance(err.value, TooDeep)


def test_loads_without_a_depth_limit_refuses_only_what_the_parser_cannot_read() -> None:
    assert loads(_nested(500), max_depth=None) == json.loads(_nested(500))
    with pytest.raises(TooDeep):
        loads(_nested(100_000), max_depth=None)


def test_raw_decode_keeps_its_decoders_rules() -> None:
    def no_constants(name: str) -> None:
        raise ValueError(name)

    with pytest.raises(ValueError, match="NaN"):
        raw_decode("[NaN]", json.JSONDecoder(parse_constant=no_constants))


def test_what_json_repair_cannot_mend_is_no_error_and_its_own_depth_limit_is_too_deep() -> None:
    assert repaired("no json here") == ""
    with pytest.raises(TooDeep):  # json-repair raises a ValueError of its own at some hundreds of levels
        repaired("[" * 500 + "1")
