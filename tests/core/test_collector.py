"""``core.collector``: the youngest generation is collected less often, never more often than it was; and not at all
while a command starts."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.backends.base import Request, Response
from structbench.backends.mock import MockBackend
from structbench.core.collector import YOUNG_COLLECTION, collect_less, pause, resume


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_raises_the_youngest_threshold_and_returns_the_earlier_ones() -> None:
    gc.set_threshold(700, 11, 12)
    assert collect_less() == (700, 11, 12)
    assert gc.get_threshold() == (YOUNG_COLLECTION, 11, 12)


def test_a_higher_threshold_is_kept() -> None:
    gc.set_threshold(YOUNG_COLLECTION * 3, 10, 10)
    collect_less()
    assert gc.get_threshold() == (YOUNG_COLLECTION * 3, 10, 10)


def test_an_in_process_command_leaves_the_collector_as_it_was() -> None:
    from structbench.testing.cli import invoke

    gc.set_threshold(700, 10, 10)
    assert invoke("--help").returncode == 0
    assert gc.get_threshold() == (700, 10, 10)


def test_pause_stops_a_running_collector_until_resume() -> None:
    assert gc.isenabled()
    pause()
    try:
        assert not gc.isenabled()
        pause()  # twice: still one pause
        assert not gc.isenabled()
    finally:
        resume()
    assert gc.isenabled()
    resume()  # nothing paused: nothing changes
    assert gc.isenabled()


def test_a_collector_stopped_by_someone_else_stays_stopped() -> None:
    gc.disable()
    try:
        pause()
        resume()
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("args", [("--help",), ("run", "--bogus")])
def test_an_in_process_command_resumes_the_collector(args: tuple[str, ...]) -> None:
    from structbench.testing.cli import invoke

    assert invoke(*args).returncode in (0, 2)  # a run stopped before its requests too
    assert gc.isenabled()


def test_a_run_starts_its_requests_with_the_collector_running(tmp_path: Path) -> None:
    from structbench.testing.cli import invoke

    seen: list[bool] = []
    real = MockBackend.generate

    async def watching(self: MockBackend, request: Request) -> Response:
        seen.append(gc.isenabled())
        return await real(self, request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MockBackend, "generate", watching)
        done = invoke("run", "-m", "mock", "-b", "structext:test", "--limit", "3", "--workers", "1", "--no-cache",
                      "--no-progress", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert seen == [True, True, True] and gc.isenabled()


def test_a_command_leaves_the_collector_out_of_the_interpreters_exit() -> None:
    import subprocess
    import sys

    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"  # runs after main's
            "sys.argv = ['structbench', 'list']\n"
            "from structbench.cli.app import main\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("frozen at exit: True")
