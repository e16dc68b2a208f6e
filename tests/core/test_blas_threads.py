"""The command line sets OpenBLAS's idle spin before numpy is loaded, and keeps a user's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from faults import child_pythonpath, serve
from structbench.core.blas_threads import SPIN, TIMEOUT, sleep_when_idle

SCRIPT = r"""
import os, runpy, sys

class Watch:
    # what OPENBLAS_THREAD_TIMEOUT was when numpy was first looked for: what its OpenBLAS reads as it loads
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            with open(os.environ["OUT"], "a") as f:
                f.write(repr(os.environ.get("OPENBLAS_THREAD_TIMEOUT")) + "\n")
        return None

sys.meta_path.insert(0, Watch())
sys.argv = ["structbench", *sys.argv[1:]]
runpy.run_module("structbench", run_name="__main__")
"""


def test_it_is_set_unless_the_user_set_it() -> None:
    environ: dict[str, str] = {}
    sleep_when_idle(environ)
    assert environ == {TIMEOUT: SPIN}
    mine = {TIMEOUT: "20"}
    sleep_when_idle(mine)
    assert mine == {TIMEOUT: "20"}


@pytest.mark.parametrize(("given", "seen"), [(None, repr(SPIN)), ("12", repr("12"))])
def test_a_run_loads_numpy_with_it_set(tmp_path: Path, given: str | None, seen: str) -> None:
    """A real run through ``python -m structbench`` (numpy comes with the columns its records are kept in)."""
    out = tmp_path / "seen"
    env = {k: v for k, v in os.environ.items() if k != TIMEOUT}
    env.update(PYTHONPATH=child_pythonpath(), OUT=str(out), STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    if given is not None:
        env[TIMEOUT] = given
    with serve(tmp_path, "--latency", "0") as server:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, "run", "-m", "openai:overhead", "--base-url", server.url, "-b",
             "structext:test", "--limit", "2", "--workers", "1", "--no-progress", "--out", str(tmp_path / "run")],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.exists(), "the run never imported numpy: the test needs another way to see OpenBLAS load"
    assert out.read_text().splitlines()[:1] == [seen]
