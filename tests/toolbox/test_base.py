"""``toolbox.base``: a function call's arguments as the model wrote them (hostile input like any other)."""

from __future__ import annotations

from structbench.toolbox import parse_arguments


def test_arguments_that_are_no_object_are_none() -> None:
    assert parse_arguments('{"query": "SELECT 1"}') == {"query": "SELECT 1"}
    assert parse_arguments("") == {} and parse_arguments("[1, 2]") == {} and parse_arguments("{not json") == {}
    # nested past Python's parser's limit: no arguments (the call then fails), nothing raised out of the tool loop
    assert parse_arguments('{"query": ' + "[" * 100_000 + "]" * 100_000 + "}") == {}


def test_arguments_nested_deeper_than_a_record_holds_are_none() -> None:
    """150 levels parse, and 500 would fail to be written (orjson writes 254): past ``MAX_NESTING`` the call fails."""
    for levels in (150, 500):
        assert parse_arguments('{"query": "SELECT 1", "x": ' + "[" * levels + "]" * levels + "}") == {}
