"""What a user hands over is untrusted input: names read from a run directory or a log become file names only when
they are safe ones, an archive's sizes are checked before anything is inflated, and a schema error is one line.

The readers of run directories (``interop.rundir``) and of Inspect logs (``report.inspect_runs``) come through here,
as the writers of files named after what they read (``convert``): a strategy called ``../../x`` in a crafted
``metrics.json`` never names a file outside ``--out``, and a small ``.eval`` whose ``header.json`` inflates to
gigabytes is refused unread.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from pydantic import ValidationError

from structbench.core.errors import DataError

MAX_NAME = 200
"""Characters a name read from a file may have to become part of a file name."""
MAX_MEMBER_BYTES = 256 * 2**20
"""The largest member of an archive (an Inspect ``.eval`` log's ``header.json``, a sample) inflated: a log's
header is kilobytes, a sample rarely a megabyte."""
MAX_ARCHIVE_BYTES = 2 * 2**30
"""The most an archive's members may inflate to, together (a log of a few hundred thousand samples)."""


def unsafe_name(name: str) -> str | None:
    """Why ``name`` cannot be part of a file name (a path separator, ``..``, a control character ...), or None."""
    if not name:
        return "it is empty"
    if len(name) > MAX_NAME:
        return f"it has more than {MAX_NAME} characters"
    if "/" in name or "\\" in name:
        return "it holds a path separator"
    if name in (".", "..") or name.startswith("."):
        return "it starts with a dot"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "it holds a control character"
    return None


def file_name(name: str, what: str) -> str:
    """``name`` if it can be (part of) a file name, else a ``DataError`` saying which name of which file (``what``)."""
    why = unsafe_name(name)
    if why is not None:
        raise DataError(f"{what} {name[:80]!r} cannot name a file ({why}); not a name structbench writes")
    return name


def inside(path: Path, root: Path, what: str) -> Path:
    """``path``, checked to lie under ``root`` once resolved (a ``DataError`` naming ``what`` otherwise)."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise DataError(f"{what}: {path} would be written outside {root}; not a name structbench writes")
    return path


def check_archive(path: Path, *, member_limit: int = MAX_MEMBER_BYTES, total_limit: int = MAX_ARCHIVE_BYTES) -> None:
    """Refuse a zip archive (an ``.eval`` log) before it is read when a member declares more than ``member_limit``
    bytes inflated, or all of them more than ``total_limit`` (``zipfile`` never inflates past what a member
    declares); a file that is no zip archive is left to its reader."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return
    total = 0
    for member in members:
        if member.file_size > member_limit:
            raise DataError(f"{path}: its member {member.filename[:80]!r} inflates to {member.file_size:,} bytes, more "
                            f"than the {member_limit:,} read from a log ({member.compress_size:,} bytes stored); not "
                            "read")
        total += member.file_size
    if total > total_limit:
        raise DataError(f"{path}: its members inflate to {total:,} bytes, more than the {total_limit:,} read from a "
                        "log; not read")


def check_size(path: Path, limit: int = MAX_ARCHIVE_BYTES) -> None:
    """Refuse a file larger than ``limit`` bytes before it is read."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size > limit:
        raise DataError(f"{path}: {size:,} bytes, more than the {limit:,} read; not read")


def schema_error(err: BaseException) -> str:
    """An error of reading untrusted data, in one line: where and what for a validation error, else its type and
    first line."""
    if isinstance(err, ValidationError):
        problem = err.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        return f"{where + ': ' if where else ''}{problem['msg']}"
    first = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__
