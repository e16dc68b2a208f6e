"""Whether a run directory is still being filled, read without touching it.

The manifest says ``running`` from the start of a session until it records how it ended, so a killed process leaves
it saying so forever. Two signs tell a live session from a dead one, neither written by the view: the run's lock
(``.lock``, held with ``flock`` by the process filling the directory; Linux lists held locks in ``/proc/locks``, so
it is read there instead of being tried, which could get in the way of a run starting), and the age of its
``progress.json``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from structbench.runfiles.heartbeat import Heartbeat

PROC_LOCKS = Path("/proc/locks")
STALE = 15.0
"""Seconds without a new ``progress.json`` after which its session is taken for gone (it is rewritten every second;
a machine under load may delay a write by a few)."""


def lock_held(lock: Path, table: Path = PROC_LOCKS) -> bool | None:
    """Whether some process holds a ``flock`` on ``lock``; None where it cannot be told (no ``/proc/locks``)."""
    try:
        st = lock.stat()
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        text = table.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return any(len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == wanted
               for fields in (line.split() for line in text.splitlines()))


def parse_time(text: str) -> datetime | None:
    """A run file's ISO 8601 time (UTC where it names no zone); None when it is not one."""
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def age(beat: Heartbeat, now: datetime | None = None) -> float | None:
    """Seconds since ``beat`` was written (None: its time cannot be read)."""
    written = parse_time(beat.updated)
    return None if written is None else ((now or datetime.now(UTC)) - written).total_seconds()


def alive(beat: Heartbeat | None, lock: Path) -> bool:
    """Whether the session the manifest calls ``running`` is: its lock is held, or its heartbeat is fresh. Where
    neither can be read (a run of a structbench before heartbeats, on a system without ``/proc/locks``) the manifest
    is believed."""
    held = lock_held(lock)
    if held:
        return True
    if beat is not None and not beat.ended:
        seconds = age(beat)
        if seconds is not None and seconds < STALE:
            return True
    return held is None and beat is None
