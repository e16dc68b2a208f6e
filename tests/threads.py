"""One thread in the test process, for the tests that fork: the runner and ``forkmap`` fork only from a process
running no other thread (``forkmap.can_fork``), and an xdist worker runs many tests before them."""

from __future__ import annotations

import gc
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from patience import patience


def single_threaded(seconds: float = 10.0) -> None:
    """Wait until this process runs one thread: tqdm's monitor stopped (``datasets`` in the export tests), then
    garbage collected where a thread is still alive (an unreachable response cache keeps its pool's threads; a
    collection walks the whole heap, seconds in a busy worker), then, as a last resort, every idle thread pool still
    on the heap shut down and named on stderr (an in-process vLLM engine's grammar pool, whose first task came from
    the backend's daemon thread, outlived its engine once in CI). Fails naming the threads left."""
    if "tqdm" in sys.modules:
        from tqdm._monitor import TMonitor

        for thread in threading.enumerate():
            if isinstance(thread, TMonitor):
                thread.exit()  # tqdm starts a new one when it needs it again
    if threading.active_count() > 1:
        gc.collect()
    if not _wait(patience(seconds) / 2):
        pools = [o for o in gc.get_objects() if isinstance(o, ThreadPoolExecutor) and getattr(o, "_threads", None)]
        for pool in pools:
            names = sorted(t.name for t in pool._threads)
            print(f"tests/threads.py: shutting down a thread pool left running ({', '.join(names)})", file=sys.stderr)
            pool.shutdown(wait=False, cancel_futures=True)
        _wait(patience(seconds) / 2)
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]


def _wait(seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    return threading.active_count() == 1
