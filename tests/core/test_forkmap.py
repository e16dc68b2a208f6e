"""fork_map: shares computed in forked children come back in order; failures surface in the caller."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from structbench.core import forkmap
from structbench.core.forkmap import fork_map
from threads import single_threaded

pytestmark = pytest.mark.skipif(not forkmap.can_fork(), reason="needs fork and a single-threaded process")


@pytest.fixture(autouse=True)
def _single_threaded() -> None:
    """With a thread alive ``fork_map`` runs every share here (killing the test process): let what earlier tests
    left end first (``threads.single_threaded``)."""
    single_threaded(5.0)
    assert forkmap.can_fork()


class ShareError(RuntimeError):
    """A failure raised inside a worker."""


def _pid_and_square(share: int) -> tuple[int, int]:
    return os.getpid(), share * share


def test_results_in_share_order_from_other_processes() -> None:
    results = fork_map(_pid_and_square, [3, 1, 4, 1, 5])
    assert [square for _, square in results] == [9, 1, 16, 1, 25]
    pids = [pid for pid, _ in results]
    assert pids[0] == os.getpid()  # the first share runs here
    assert len(set(pids)) == 5  # every other share in its own child


def test_large_results_come_back_intact() -> None:
    text = "x" * 3_000_000  # far beyond a pipe's buffer: the child never waits for the caller

    def work(k: int) -> str:
        return text + str(k)

    assert fork_map(work, [0, 1, 2]) == [text + "0", text + "1", text + "2"]


def test_a_child_exception_is_raised_in_the_caller() -> None:
    def work(share: int) -> int:
        if share == 2:
            raise ShareError("generator bug in share 2")
        return share

    with pytest.raises(ShareError, match="generator bug in share 2"):
        fork_map(work, [0, 1, 2])


def test_an_exception_that_does_not_pickle_travels_as_text() -> None:
    class Local(Exception):  # a local class cannot be pickled by reference
        pass

    def work(share: int) -> int:
        if share:
            raise Local("cannot pickle me")
        return share

    with pytest.raises(RuntimeError, match="Local: cannot pickle me"):
        fork_map(work, [0, 1])


def test_a_killed_child_is_an_error_not_a_missing_result() -> None:
    def work(share: int) -> int:
        if share:
            os.kill(os.getpid(), signal.SIGKILL)
        return share

    with pytest.raises(RuntimeError, match="ended without a result"):
        fork_map(work, [0, 1])


def test_the_callers_failure_stops_the_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"

    def work(share: int) -> int:
        if share == 0:
            while not pid_file.exists():  # wait until the child is surely running
                time.sleep(0.001)
            raise ShareError("caller failed")
        part = tmp_path / "child.part"
        part.write_text(str(os.getpid()))
        part.rename(pid_file)  # appears whole
        signal.pause()  # would wait forever if not killed
        return share

    with pytest.raises(ShareError, match="caller failed"):
        fork_map(work, [0, 1])
    child = int(pid_file.read_text())
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)  # killed and reaped: not even a zombie is left
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_runs_here_while_another_thread_is_alive() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forkmap.can_fork()
        results = fork_map(_pid_and_square, [2, 3])
    finally:
        stop.set()
        thread.join()
    assert results == [(os.getpid(), 4), (os.getpid(), 9)]


def test_imap_streams_results_in_order_from_children_a_few_ahead() -> None:
    results = list(forkmap.fork_imap(_pid_and_square, range(7), children=2))
    assert [square for _, square in results] == [x * x for x in range(7)]
    assert os.getpid() not in {pid for pid, _ in results}
    assert [s for _, s in forkmap.fork_imap(_pid_and_square, range(3), children=0)] == [0, 1, 4]


def test_imap_forks_only_under_forking() -> None:
    assert forkmap.ahead() == 0
    assert {pid for pid, _ in forkmap.fork_imap(_pid_and_square, range(3))} == {os.getpid()}
    with forkmap.forking(2):
        assert forkmap.ahead() == 2
        assert os.getpid() not in {pid for pid, _ in forkmap.fork_imap(_pid_and_square, range(3))}
    assert forkmap.ahead() == 0


def _fail_at_two(share: int) -> int:
    if share == 2:
        raise ShareError("two")
    return share


def test_imap_raises_a_childs_error_when_its_result_is_read_and_stops_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(forkmap.os, "fork", fork)
    stream = forkmap.fork_imap(_fail_at_two, range(6), children=3)
    assert next(stream) == 0 and next(stream) == 1
    with pytest.raises(ShareError, match="two"):
        next(stream)
    stream.close()
    assert len(forked) >= 4  # the shares 0-3 at least were forked (three ahead of the one read)
    for pid in forked:  # every child of the stream reaped (the test process may have children of its own)
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_thread_pool_left_running_is_shut_down_before_the_fork_tests() -> None:
    """An idle pool whose first task came from a daemon thread (as an in-process vLLM engine's grammar pool's does,
    from the backend's thread) keeps a daemon thread while anything holds it; the fork tests' setup shuts it down."""
    from concurrent.futures import ThreadPoolExecutor

    held: list[ThreadPoolExecutor] = []

    def start() -> None:
        pool = ThreadPoolExecutor()
        pool.submit(lambda: None).result()
        held.append(pool)

    starter = threading.Thread(target=start, daemon=True)
    starter.start()
    starter.join()
    assert not forkmap.can_fork() and all(t.daemon for t in held[0]._threads)
    single_threaded(1.0)
    assert forkmap.can_fork()
