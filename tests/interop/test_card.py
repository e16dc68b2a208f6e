"""``interop.card``: the dataset card of runs whose names are hostile renders them as text."""

from __future__ import annotations

from pathlib import Path

from extras import require_extra

require_extra("datasets", "datasets")

from hostile import checked_markdown, hostile_run  # noqa: E402
from structbench.interop.card import dataset_card  # noqa: E402
from structbench.interop.rundir import read_run  # noqa: E402


def test_hostile_names_in_the_card_are_text(tmp_path: Path) -> None:
    card = dataset_card([read_run(hostile_run(tmp_path))], ["hostile"], ["parsed"], repo=None, split="train",
                        tables={})
    header, body = card.split("\n---\n", 1)
    assert header.startswith("---\n")
    assert "\r" not in body and "\u2028" not in body
    checked_markdown(body)
