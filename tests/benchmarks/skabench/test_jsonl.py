"""SKA-Bench's JSONL reader: every malformed file is one DataError naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, field_validator

from structbench.benchmarks.skabench.jsonl import iter_models, read_models
from structbench.core.errors import DataError


class Item(BaseModel):
    id: str
    size: int

    @field_validator("size")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("size must be positive")
        return value


def _read(tmp_path: Path, *lines: str) -> list[Item]:
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_models(path, Item, "item", key=lambda i: i.id)


def test_blank_lines_are_skipped_and_order_kept(tmp_path: Path) -> None:
    assert [i.id for i in _read(tmp_path, '{"id": "b", "size": 1}', "", '{"id": "a", "size": 2}')] == ["b", "a"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (('{"id": "a", "size": 1}', "{oops"), r"items\.jsonl:2: not JSON \("),
        (('{"id": "a", "size": 0}',), r"items\.jsonl:1: size: size must be positive$"),
        (('{"id": "a"}',), r"items\.jsonl:1: size: Field required$"),
        (('["a", 1]',), r"items\.jsonl:1: Input should be a valid dictionary"),
        (('{"id": "a", "size": 1}', '{"id": "a", "size": 2}'), r"items\.jsonl:2: duplicate item id 'a'$"),
        (("", "  "), r"items\.jsonl: no items$"),
    ],
)
def test_a_bad_file_names_file_line_and_field(tmp_path: Path, lines: tuple[str, ...], message: str) -> None:
    with pytest.raises(DataError, match=message):
        _read(tmp_path, *lines)


def test_an_unreadable_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"missing\.jsonl: cannot read items \("):
        read_models(tmp_path / "missing.jsonl", Item, "item", key=lambda i: i.id)


def test_models_are_read_one_at_a_time(tmp_path: Path) -> None:
    """A file of large objects is never held whole: each line is read when its model is, so a bad line further on
    raises only when the reading reaches it (naming its line), and a file that cannot be opened raises at once."""
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "a", "size": 1}\n\n{"id": "b", "size": 2}\n{"id": "\xff"}\n')
    items = iter_models(path, Item, "item", key=lambda i: i.id)
    assert [next(items).id, next(items).id] == ["a", "b"]
    with pytest.raises(DataError, match=r"items\.jsonl:4: not UTF-8 text \(byte 0xff at offset 55: invalid start "):
        next(items)
    with pytest.raises(DataError, match=r"missing\.jsonl: cannot read items \("):
        iter_models(tmp_path / "missing.jsonl", Item, "item", key=lambda i: i.id)
