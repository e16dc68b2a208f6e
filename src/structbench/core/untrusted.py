"""What a user hands over is untrusted input: names read from a run directory or a log become file names only when
they are safe ones, an archive's sizes are checked before anything is inflated, and a schema error is one line.

The readers of run directories (``interop.rundir``) and of Inspect logs (``report.inspect_runs``) come through here,
as the writers of files named after what they read (``convert``): a strategy called ``../../x`` in a crafted
``metrics.json`` never names a file outside ``--out``, and a small ``.eval`` whose ``header.json`` inflates to
gigabytes is refused unread.

What a model wrote is untrusted too: its replies and its tool calls' arguments are read as JSON through ``loads``,
``raw_decode`` and ``repaired`` here, which give a ``ValueError`` (``TooDeep``) for a value nested past what a caller
can walk instead of a ``RecursionError`` or a value that breaks whatever reads it next.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

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


MAX_NESTING = 100
"""The deepest a value read from a model's reply or written to a JSON line may nest: an answer nests a few levels;
Python's parser gives up at some thousand, and what reads a value walks it by recursion (pydantic writes some 250
levels and reads back fewer)."""


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (``[[1]]``: 2), walked a level at a
    time without recursion."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [v for item in level for v in (item.values() if isinstance(item, dict) else item)
                 if isinstance(v, dict | list)]
    return False


class TooDeep(ValueError):
    """A JSON text nested more than ``MAX_NESTING`` levels deep, or past what Python's parser reads."""


def loads(text: str | bytes, *, max_depth: int | None = MAX_NESTING) -> Any:
    """``json.loads(text)``; ``TooDeep`` for a value nested more than ``max_depth`` levels deep (None: only past
    the parser's limit, for a caller that cuts the value itself, as ``writable`` does)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep("nested past the parser's limit") from None
    return _shallow(value, max_depth)


_DECODER = json.JSONDecoder()


def raw_decode(text: str, decoder: json.JSONDecoder = _DECODER) -> tuple[Any, int]:
    """``decoder.raw_decode(text)``: the JSON value at the start of ``text`` and where it ends (what follows is left
    to the caller); ``TooDeep`` for one nested more than ``MAX_NESTING`` levels deep."""
    try:
        value, end = decoder.raw_decode(text)
    except RecursionError:
        raise TooDeep("nested past the parser's limit") from None
    return _shallow(value, MAX_NESTING), end


def repaired(text: str) -> Any:
    """``json_repair.loads(text)``: ``text`` read as JSON once what models commonly break is mended (quotes, trailing
    commas, brackets left open), ``""`` where nothing is recovered; ``TooDeep`` for a value nested more than
    ``MAX_NESTING`` levels deep, a ``ValueError`` for any other failure of json-repair (it raises assorted errors on
    hopeless input, ``ValueError`` and ``RecursionError`` on deep input)."""
    import json_repair

    try:
        value = json_repair.loads(text)
    except Exception as err:
        if isinstance(err, RecursionError) or isinstance(err.__cause__, RecursionError):
            raise TooDeep("nested past the parser's limit") from None
        raise ValueError(f"json-repair: {type(err).__name__}: {err}") from None
    return _shallow(value, MAX_NESTING)


def _shallow(value: Any, max_depth: int | None) -> Any:
    if max_depth is not None and too_deep(value, max_depth):
        raise TooDeep(f"nested more than {max_depth} levels deep")
    return value


def writable(value: Any, max_depth: int = MAX_NESTING) -> tuple[Any, bool]:
    """``value`` as a JSON line can hold it, and whether that changed it: each lone surrogate in its texts as U+FFFD
    (Python's ``json`` decodes a model's ``"\\ud800"`` into one, which no UTF-8 text can hold), and each container
    nested deeper than ``max_depth`` as a text saying so (a model's JSON nests as deep as the parser lets it). Dicts
    (their keys too), lists and tuples come back rebuilt as dicts and lists, walked without recursion; anything
    else is kept as it is."""
    changed = False

    def mend(text: str) -> str:
        nonlocal changed
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            changed = True
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text

    root: list[Any] = [value]
    stack: list[tuple[Any, Any, int]] = [(root, 0, 0)]
    rebuilt_of: dict[int, Any] = {}  # a container met again (shared, or inside itself) is its one rebuilt copy
    while stack:
        holder, key, depth = stack.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = mend(item)
        elif isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                changed = True
                holder[key] = f"({type(item).__name__} nested more than {max_depth} levels deep: not kept)"
                continue
            rebuilt = rebuilt_of.get(id(item))
            if rebuilt is None:
                if isinstance(item, dict):
                    rebuilt = {mend(k) if isinstance(k, str) else k: v for k, v in item.items()}
                    stack.extend((rebuilt, k, depth + 1) for k in rebuilt)
                else:
                    rebuilt = list(item)
                    stack.extend((rebuilt, i, depth + 1) for i in range(len(rebuilt)))
                rebuilt_of[id(item)] = rebuilt
            holder[key] = rebuilt
    return root[0], changed
