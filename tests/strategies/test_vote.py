"""Majority vote: None ignored, the most frequent value wins, ties go to the earliest."""

from __future__ import annotations

from structbench.strategies.vote import majority


def test_most_frequent_wins_and_none_is_ignored() -> None:
    assert majority(["no", None, "yes", "yes", None, None]) == "yes"
    assert majority([None, "no"]) == "no"


def test_ties_go_to_the_earliest() -> None:
    assert majority(["b", "a", "a", "b"]) == "b"
    assert majority([None, "c", "a", "b"]) == "c"


def test_nothing_parsed_gives_none() -> None:
    assert majority([]) is None
    assert majority([None, None]) is None


def test_key_groups_equal_values_and_returns_the_first_occurrence() -> None:
    votes = [["x"], ["B", "a"], ["y"], ["a", "b"], None]
    assert majority(votes, key=lambda v: frozenset(s.lower() for s in v)) == ["B", "a"]
    assert majority(["Yes", "no", "YES", "No", "no"], key=str.lower) == "no"
