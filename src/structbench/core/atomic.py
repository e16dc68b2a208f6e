"""Files that appear whole or not at all: written under a temporary name beside the target, then renamed.

The temporary file gets the mode an ordinary ``open`` would give it (``0o666`` less the umask), not
``mkstemp``'s owner-only ``0o600``, so results, manifests and exports stay readable by whoever can read the
directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from structbench.core.redact import HOLE, redact, redact_around


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
"""The mode of a newly created file, read once at import (changing the umask is process-wide)."""


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` if the block succeeds, removed if not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    tmp = Path(name)
    try:
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` durably (fsync before the rename)."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str, allow_nan=False)


def json_text(data: Any, verbatim: str | None = None) -> str:
    """``data`` as redacted JSON; its top-level ``verbatim`` part (the run's configuration: what the user wrote, which
    a resumed run compares) loses only registered secrets, so a credential-like word of a prompt stays as it was."""
    if verbatim is None or not isinstance(data, dict) or verbatim not in data:
        return redact(_dumps(data)) + "\n"
    part = _dumps(data[verbatim]).replace("\n", "\n  ")  # indented as a top-level value
    return redact_around(_dumps({**data, verbatim: HOLE}), part) + "\n"


def write_json_atomic(path: Path, data: Any, verbatim: str | None = None) -> None:
    """Write JSON (secrets redacted, but for its ``verbatim`` part's credential-like words) to a temporary file and
    rename it over ``path``: readers never see half a file."""
    write_text_atomic(path, json_text(data, verbatim))
