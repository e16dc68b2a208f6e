"""The Ray executor's address check: an address where nothing listens fails at once (Ray would retry it for
minutes), before Ray is even imported; and an actor's stop when the machine cannot run a strategy."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults import child_pythonpath, closed_port
from patience import patience
from structbench.core.errors import UsageError
from structbench.runner.cluster import check_reachable

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""


def test_an_address_where_nothing_listens_is_a_usage_error() -> None:
    with closed_port() as port, pytest.raises(UsageError, match=rf"^ray_address=127.0.0.1:{port}: nothing answers"):
        check_reachable(f"127.0.0.1:{port}")  # a library call: Python's words (the command line's are checked below)
    with pytest.raises(UsageError, match="expected HOST:PORT"):
        check_reachable("somewhere")


def test_a_listening_address_and_rays_own_lookups_pass() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_reachable(f"127.0.0.1:{port}")
        check_reachable(f"ray://127.0.0.1:{port}")
    for address in (None, "auto", "local"):
        check_reachable(address)


def test_the_run_stops_with_one_line_and_exit_2(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
               STRUCTBENCH_CACHE=str(tmp_path / "c"))
    started = time.monotonic()
    with closed_port() as port:
        proc = subprocess.run([sys.executable, "-m", "structbench", "run", "-m", "oracle", "-b", "toy", "-n", "2",
                               "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--out", "r"],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=patience(120))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"error: --ray-address 127.0.0.1:{port}: nothing answers")
    assert time.monotonic() - started < patience(60)
    assert not (tmp_path / "r").exists()  # nothing written


def test_a_ray_actor_that_meets_a_machine_error_stops_the_run_with_no_record() -> None:
    """The actor halts (the driver hears ``halt`` of kind ``machine`` and raises it as a ``MachineError``, exit 2),
    and sends no ``done``: the job is left for the next run, never recorded as a harness error."""
    import asyncio

    from structbench.core.errors import MachineError
    from structbench.runner.cluster import RayWorker
    from structbench.runner.control import RunControl
    from structbench.runner.dispatch import _stop_error

    class Broken:
        async def run(self, ticket: object) -> object:
            raise MachineError("sandbox: cannot start the interpreter /x/python: Permission denied")

    actor = RayWorker.__new__(RayWorker)  # (without Ray: the actor's own state, as __init__ sets it)
    actor.messages, actor.tasks, actor.others, actor.runner = [], set(), None, Broken()
    actor.control = RunControl(notify=lambda text: None, on_halt=actor._halted)
    messages = asyncio.run(actor.run((0, 0, 0, 0), None))  # type: ignore[arg-type]
    assert messages == [("halt", "machine", "sandbox: cannot start the interpreter /x/python: Permission denied",
                         False)]
    assert actor.control.stopped
    stop = _stop_error(*messages[0][1:3])
    assert isinstance(stop, MachineError) and stop.exit_code == 2
