"""JSONL files of pydantic models, one object a line, for SKA-Bench's instance and context files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from structbench.core.errors import DataError
from structbench.data.datasets import read_data_text

M = TypeVar("M", bound=BaseModel)


def _problem(err: ValidationError) -> str:
    """Pydantic's first complaint as ``field.path: message`` (the message alone for a whole-line problem)."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def read_models(path: Path, model: type[M], what: str, key: Callable[[M], str]) -> list[M]:
    """Every ``model`` in ``path``, blank lines skipped; a malformed line, a repeated ``key`` or an empty file raises
    ``DataError`` naming the file, line and field (``what`` names the objects: ``instance``, ``context``)."""
    text = read_data_text(path, what=f"{what}s")
    items: list[M] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as err:
            raise DataError(f"{path}:{number}: not JSON ({err})") from None
        try:
            item = model.model_validate(data)
        except ValidationError as err:
            raise DataError(f"{path}:{number}: {_problem(err)}") from None
        ident = key(item)
        if ident in seen:
            raise DataError(f"{path}:{number}: duplicate {what} id {ident!r}")
        seen.add(ident)
        items.append(item)
    if not items:
        raise DataError(f"{path}: no {what}s")
    return items

