"""How often Python's garbage collector passes over the newest objects while structbench runs: less often than its
default, because a command allocates far more short-lived objects than it keeps (imports, replies, records); and not
at all while a command starts (``pause``, ``resume``), nor as the interpreter exits (``freeze_at_exit``)."""

from __future__ import annotations

import atexit
import gc

YOUNG_COLLECTION = 10_000
"""Allocations between the collector's passes over its youngest generation (Python's default: 700). Each request of a
run allocates a few thousand short-lived objects (the reply, the record, its line); at the default the collector ran
some 370 times in the 2,000 requests of ``benchmarks/overhead.py`` in one process (7 % of its CPU), and 140 times in
the imports before the first (0.1 s); at 10,000, some 20 and 10 times. The older generations keep their
thresholds."""


def collect_less() -> tuple[int, int, int]:
    """Raise the youngest generation's threshold to ``YOUNG_COLLECTION`` (a higher one is kept); returns the
    thresholds before, for ``gc.set_threshold`` to restore."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_COLLECTION), before[1], before[2])
    return before


_paused = False


def pause() -> None:
    """Stop the collector until ``resume``, if it runs. A command's start-up (its imports, a run's configuration and
    samples) allocates much and leaves little cyclic garbage, and the collector's passes over it were 30-45 ms of a
    run's start-up (issue 44). A run resumes it where it freezes what it has loaded (``Run._work``, before forking its
    workers); every other command when it starts (``cli.app.main``)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Start the collector again if ``pause`` stopped it (one stopped by someone else stays stopped)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


_freezes_at_exit = False


def freeze_at_exit() -> None:
    """Freeze every object out of the collector when the interpreter exits (after the exit handlers registered later,
    before those registered earlier): Python's last collections would pass over all of a large process's objects to
    free memory that exiting frees anyway, 90-100 ms at the end of a run (issue 44). Objects are still released as
    their modules are cleared."""
    global _freezes_at_exit
    if not _freezes_at_exit:
        _freezes_at_exit = True
        atexit.register(gc.freeze)
