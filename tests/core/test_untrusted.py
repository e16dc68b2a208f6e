"""``core.untrusted.writable``: what a model wrote, made fit for a JSON line (the file-name and archive checks are
tested with the readers that use them, ``tests/interop/test_untrusted.py``)."""

from __future__ import annotations

import json

from structbench.core.untrusted import writable


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
