"""JSONL files of pydantic models, one object a line, for SKA-Bench's instance and context files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from structbench.core.errors import DataError

M = TypeVar("M", bound=BaseModel)


def _problem(err: ValidationError) -> str:
    """Pydantic's first complaint as ``field.path: message`` (the message alone for a whole-line problem)."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def read_models(path: Path, model: type[M], what: str, key: Callable[[M], str]) -> list[M]:
    """Every ``model`` in ``path`` (``iter_models``), held."""
    return list(iter_models(path, model, what, key))


def iter_models(path: Path, model: type[M], what: str, key: Callable[[M], str]) -> Iterator[M]:
    """Every ``model`` in ``path``, each made when it is read, so that a file of large objects (an SKA-Bench instance
    holds a whole table's units) is never held whole; blank lines skipped. The file is opened at once; a malformed
    line, a repeated ``key`` or an empty file raises ``DataError`` naming the file, line and field when the reading
    reaches it (``what`` names the objects: ``instance``, ``context``)."""
    try:
        fh = path.open("rb")
    except OSError as err:
        raise DataError(f"{path}: cannot read {what}s ({err})") from err
    return _models(fh, path, model, what, key)


def _models(fh: BinaryIO, path: Path, model: type[M], what: str, key: Callable[[M], str]) -> Iterator[M]:
    seen: set[str] = set()
    offset = 0
    with fh:
        try:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise DataError(f"{path}:{number}: not UTF-8 text (byte 0x{raw[err.start]:02x} at offset "
                                    f"{offset + err.start}: {err.reason})") from None
                offset += len(raw)
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
                yield item
        except OSError as err:
            raise DataError(f"{path}: cannot read {what}s ({err})") from err
    if not seen:
        raise DataError(f"{path}: no {what}s")
