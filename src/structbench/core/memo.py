"""What a process keeps of work it need not repeat: a bounded map, and the identity of the files a value came from.

A second load of files that have not changed (a test's, a sweep's cells, a suite's entries) finds its work kept by
the files' identity (their resolved path, modification time and size), so it reads and computes nothing again; a
changed file has a new identity, so it is read again. ``Memo`` holds at most ``at_most`` entries, dropping the oldest
to make room, so a long process does not keep every version of every file it read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

FileIdentity = tuple[str, int, int]
"""A file's resolved path, modification time (ns) and size."""
FolderIdentity = tuple[str, tuple[tuple[str, int, int], ...]]
"""A folder's resolved path and, for each file it holds that matches a pattern, its name, modification time (ns) and
size, in name order."""


def file_identity(path: Path) -> FileIdentity:
    """What ``path`` is now: a changed file (its size or modification time) has another identity."""
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


def folder_identity(folder: Path, pattern: str) -> FolderIdentity:
    """What the files of ``folder`` matching ``pattern`` are now: one changed, added or removed changes it."""
    folder = folder.resolve()
    stats = [(p.name, p.stat()) for p in sorted(folder.glob(pattern))]
    return str(folder), tuple((name, st.st_mtime_ns, st.st_size) for name, st in stats)


class Memo(Generic[K, V]):
    """A per-process map of at most ``at_most`` entries: what was made for a key, made once while it is kept (the
    oldest entry is dropped to make room for a new one). Safe to share between threads (a value may then be made
    twice, never kept wrong)."""

    __slots__ = ("_entries", "_lock", "at_most")

    def __init__(self, at_most: int) -> None:
        if at_most < 1:
            raise ValueError(f"a memo keeps at least one entry, not {at_most}")
        self.at_most = at_most
        self._entries: dict[K, V] = {}
        self._lock = threading.Lock()

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, or ``make()``'s, kept for the next call (an exception keeps nothing)."""
        try:
            return self._entries[key]
        except KeyError:
            pass
        value = make()
        self.put(key, value)
        return value

    def get(self, key: K) -> V | None:
        """The value kept for ``key``, if one is."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, dropping the oldest entries to make room."""
        with self._lock:
            entries = self._entries
            entries.pop(key, None)
            while len(entries) >= self.at_most:
                del entries[next(iter(entries))]
            entries[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
