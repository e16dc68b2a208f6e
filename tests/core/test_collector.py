"""``core.collector``: the youngest generation is collected less often, never more often than it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from structbench.core.collector import YOUNG_COLLECTION, collect_less


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_raises_the_youngest_threshold_and_returns_the_earlier_ones() -> None:
    gc.set_threshold(700, 11, 12)
    assert collect_less() == (700, 11, 12)
    assert gc.get_threshold() == (YOUNG_COLLECTION, 11, 12)


def test_a_higher_threshold_is_kept() -> None:
    gc.set_threshold(YOUNG_COLLECTION * 3, 10, 10)
    collect_less()
    assert gc.get_threshold() == (YOUNG_COLLECTION * 3, 10, 10)


def test_an_in_process_command_leaves_the_collector_as_it_was() -> None:
    from structbench.testing.cli import invoke

    gc.set_threshold(700, 10, 10)
    assert invoke("--help").returncode == 0
    assert gc.get_threshold() == (700, 10, 10)
