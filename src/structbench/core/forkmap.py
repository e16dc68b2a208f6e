"""Run a CPU-bound function over a few shares of work in forked processes, results back by pickle (``fork_map``:
all at once; ``fork_imap``: a stream of shares, a few computed ahead while the caller uses the results in order).

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
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

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


def _fork(work: Callable[[Any], object], share: object) -> tuple[int, int]:
    """A forked child computing ``work(share)`` into a scratch file: its pid and the file."""
    fd = _scratch()
    try:
        pid = os.fork()
    except BaseException:
        os.close(fd)
        raise
    if pid == 0:  # pragma: no cover - runs in the child, which exits inside _child
        _child(work, share, fd)
    return pid, fd


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
            children.append(_fork(work, share))
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


_AHEAD: ContextVar[int] = ContextVar("structbench_fork_ahead", default=0)


def ahead() -> int:
    """How many shares a streaming producer may compute ahead in forked children now (0: none, compute in
    process): set by ``forking`` around a command whose process is the only thing the producer shares a core with
    (``export``, ``convert``); a run leaves it 0, so its process tree stays as measured."""
    return _AHEAD.get()


@contextmanager
def forking(children: int | None = None) -> Iterator[None]:
    """Within this block, streaming producers (``fork_imap`` with ``children=None``) compute up to ``children``
    shares ahead in forked children (default: one per CPU)."""
    token = _AHEAD.set(max(1, children if children is not None else cpu_count()))
    try:
        yield
    finally:
        _AHEAD.reset(token)


class _Pending:
    """One share on its way: computed by a forked child (``pid``, its scratch ``fd``) or, where forking is not
    possible, here when collected."""

    def __init__(self, work: Callable[[Any], object], share: object) -> None:
        self.pid, self.fd = 0, -1
        self.work, self.share = work, share
        if can_fork():
            self.pid, self.fd = _fork(work, share)

    def collect(self) -> object:
        if not self.pid:
            return self.work(self.share)
        try:
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
            return _result(status, self.fd)
        finally:
            self.close()

    def close(self) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = 0
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def fork_imap(work: Callable[[T], R], shares: Iterable[T], children: int | None = None) -> Iterator[R]:
    """``work(share)`` for each share, yielded in order, each computed in a forked child with up to ``children``
    (default: ``ahead()``) running ahead of the one the caller reads, so the caller uses one result while the next
    are computed. A share is computed here, when read, where ``children`` is 0 or forking is not safe at the time it
    is started. A child's exception is raised here when its result is read; closing the iterator stops the
    children."""
    limit = ahead() if children is None else children
    if limit < 1:
        for share in shares:
            yield work(share)
        return
    queue: deque[_Pending] = deque()
    try:
        for share in shares:
            if len(queue) >= limit:
                yield cast(R, queue.popleft().collect())
            queue.append(_Pending(work, share))
        while queue:
            yield cast(R, queue.popleft().collect())
    finally:
        for pending in queue:
            pending.close()
