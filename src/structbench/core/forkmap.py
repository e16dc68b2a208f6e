"""Run a CPU-bound function over a few shares of work in forked processes, results back by pickle.

Generation of large synthetic suites is pure Python plus C parsers, so threads do not help; a forked
child starts in a few milliseconds with every module already imported and every cache warm, which a
``spawn`` or ``forkserver`` pool cannot match. Forking is only safe in a single-threaded process, so
``fork_map`` runs the shares one after another here whenever forking is unavailable or another thread
is alive. A child's exception is raised again in the caller; a child killed by a signal is an error.

A child writes its pickled result to an unlinked scratch file (a ``memfd`` on Linux), not a pipe: a
pipe would hold it blocked after 64 KiB until the caller, busy with its own share, gets round to
reading, and the caller then reads the whole result at once.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cpu_count() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether forking is available and safe now (POSIX, only the main thread alive)."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def _scratch() -> int:
    """A file descriptor of an anonymous file (unlinked, so it disappears with its last descriptor)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("structbench-forkmap", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as file:
        return os.dup(file.fileno())


def _child(work: Callable[[T], R], share: T, fd: int) -> None:
    """Compute one share and write ``(ok, result or exception)`` to ``fd``; never returns."""
    code = 0
    try:
        try:
            payload = pickle.dumps((True, work(share)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as err:  # every failure, KeyboardInterrupt included, goes to the caller
            try:
                payload = pickle.dumps((False, err), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # an exception that does not pickle travels as text
                payload = pickle.dumps((False, RuntimeError(f"{type(err).__name__}: {err}")))
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
    except BaseException:  # the caller sees the missing payload
        code = 1
    finally:
        os._exit(code)


def _result(status: int, fd: int) -> object:
    """The result an exited child (its wait ``status``) wrote to ``fd``."""
    size = os.fstat(fd).st_size
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not size:
        raise RuntimeError(f"a worker process ended without a result (wait status {status})")
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as payload:
        ok, value = pickle.loads(payload)
    if not ok:
        raise value
    return value


def fork_map(work: Callable[[T], R], shares: Sequence[T]) -> list[R]:
    """``[work(share) for share in shares]``, the first share here and each other in a forked child.

    Falls back to running every share here when ``can_fork()`` is false.
    """
    if len(shares) < 2 or not can_fork():
        return [work(share) for share in shares]
    children: list[tuple[int, int]] = []  # (pid, scratch file)
    try:
        for share in shares[1:]:
            fd = _scratch()
            try:
                pid = os.fork()
            except BaseException:
                os.close(fd)
                raise
            if pid == 0:  # pragma: no cover - runs in the child, which exits inside _child
                _child(work, share, fd)
            children.append((pid, fd))
        results = [work(shares[0])]
        while children:
            pid, fd = children[0]
            _, status = os.waitpid(pid, 0)
            children.pop(0)
            try:
                results.append(_result(status, fd))  # type: ignore[arg-type]
            finally:
                os.close(fd)
        return results
    finally:
        for pid, fd in children:  # only left on an error: stop and reap the other workers
            os.close(fd)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
