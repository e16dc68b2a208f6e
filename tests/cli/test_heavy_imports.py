"""A run imports only what it uses: the default run and the overhead benchmark's run (``benchmarks/overhead.py``) hold
none of the heavy libraries (scipy, pandas, pyarrow, matplotlib, transformers, torch, ray, inspect_ai, datasets) when
their first request goes out, nor at the end (``docs/develop/performance.md``: scipy.stats alone, imported by every run
through Holm's correction, took longer than the rest of the start-up). Nor numpy or yaml at the first request: the
columns records are kept in (numpy) are made while the first requests are out, yaml is read only for a YAML file
(a suite, a prices file) or a benchmark that parses YAML (StrucText-Eval's generator checks its YAML texts with
libyaml, so the overhead run has it), and duckdb only for a strategy with an SQL tool; the default run reads no YAML,
and its llama.cpp backend brings numpy itself. Nor structbench's batch collector, which only ``--batch`` needs, its
papers' tables and experiment trackers, nor the other commands' modules.

Each run goes in a fresh interpreter (modules another test imported would hide an import), through the command line
(``structbench.testing.cli.invoke``), with a hook on the model caller that writes the modules of the process making the
first request: the run's own (one process), or a forked worker (``--workers 2``). Structural, not timed: it holds
under any load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faults import child_pythonpath, serve

HEAVY = ("scipy", "pandas", "pyarrow", "matplotlib", "transformers", "torch", "ray", "inspect_ai", "datasets")
LATER = ("numpy", "yaml", "duckdb")
"""Not heavy, but not needed before a run's first request either (0.1-0.3 s of imports each): numpy for the columns
records are kept in, yaml for a YAML file, duckdb for a strategy's SQL tool."""
OWN = ("structbench.runner.batch", "structbench.papers", "structbench.interop.trackers", *(
    f"structbench.cli.{name}" for name in ("batches_cmd", "export_cmd", "generate_cmd", "interop_cmds", "list_cmd",
                                           "log_cmd", "report_cmds", "score_cmd", "view_cmd")))
"""structbench's own modules that only some runs need, off the path of the others: the batch collector (``--batch``),
the papers' tables (``paper``, the report's paper sections), the experiment trackers (``--log-to``), and the other
commands' modules (``cli.app`` imports only the command's own)."""

SCRIPT = r"""
import json, os, sys

from structbench.runner.calls import ModelCaller
from structbench.testing.cli import invoke

heavy = set(json.loads(os.environ["HEAVY"]))
out = os.environ["OUT"]
call = ModelCaller.__call__


def loaded():
    return sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))


async def first_request(self, request):
    # the run's model only: the warm-up before workers fork asks the oracle
    if self.backend.backend != "oracle" and not os.path.exists(f"{out}.first.{os.getpid()}"):
        with open(f"{out}.first.{os.getpid()}", "w") as f:
            json.dump(loaded(), f)
        if os.environ.get("STOP_AT_FIRST") == "1":
            os._exit(0)
    return await call(self, request)


ModelCaller.__call__ = first_request
result = invoke(*sys.argv[1:])
with open(f"{out}.end", "w") as f:
    json.dump({"returncode": result.returncode, "stderr": result.stderr[-3000:], "modules": loaded()}, f)
"""


def _run(tmp_path: Path, *args: str, stop_at_first: bool = False, env: dict[str, str] | None = None,
         path: str | None = None) -> tuple[list[list[str]], dict | None]:
    """The heavy modules loaded in each process at its first request, and the run's outcome and heavy modules at the
    end (None when it was stopped at the first request). ``path`` goes before the source on ``PYTHONPATH``."""
    out = tmp_path / "modules"
    pythonpath = os.pathsep.join([path, child_pythonpath()]) if path else child_pythonpath()
    full_env = dict(os.environ, PYTHONPATH=pythonpath, HEAVY=json.dumps(HEAVY + LATER + OWN), OUT=str(out),
                    STOP_AT_FIRST="1" if stop_at_first else "0", **(env or {}))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], env=full_env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    firsts = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("modules.first.*"))]
    end = tmp_path / "modules.end"
    return firsts, json.loads(end.read_text()) if end.exists() else None


def _overhead_run(url: str, limit: int, workers: int, out: Path) -> list[str]:
    """``benchmarks/overhead.py``'s run (``structext:test`` prompts against the loopback server), smaller."""
    return ["run", "-m", "openai:overhead", "--base-url", url, "-b", "structext:test", "--limit", str(limit),
            "-c", "8", "--workers", str(workers), "--no-cache", "--no-progress", "--out", str(out)]


def test_the_overhead_benchmarks_run_imports_no_heavy_library(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "0.01") as server:
        firsts, end = _run(tmp_path, *_overhead_run(server.url, 8, 2, tmp_path / "run"))
    assert end is not None and end["returncode"] == 0, end
    assert len(firsts) == 2, "each of the two workers makes requests"
    # each worker, at its first request (yaml: StrucText-Eval's generator parses the YAML texts it wrote)
    assert all([m for m in modules if m.split(".")[0] != "yaml"] == [] for modules in firsts), firsts
    assert _heavy(end["modules"]) == []  # the run's process, once metrics.json and the report are written


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


@pytest.mark.slow
def test_the_default_run_imports_no_heavy_library(tmp_path: Path) -> None:
    """The default suite on the embedded model (llama.cpp, one process), up to its first request."""
    firsts, _ = _run(tmp_path, "run", "--offline", "--no-cache", "--no-progress", stop_at_first=True)
    assert len(firsts) == 1
    assert [m for m in firsts[0] if not m.startswith("numpy")] == []  # numpy: llama_cpp imports it


def test_a_heavy_import_is_seen(tmp_path: Path) -> None:
    """The check can fail: scipy imported before the run (by a plugin) is reported at the first request."""
    pytest.importorskip("scipy")
    (tmp_path / "heavyplugin.py").write_text("import scipy.stats  # noqa: F401\n")
    with serve(tmp_path, "--latency", "0") as server:
        firsts, _ = _run(tmp_path, *_overhead_run(server.url, 1, 1, tmp_path / "run"), stop_at_first=True,
                         env={"STRUCTBENCH_PLUGINS": "heavyplugin"}, path=str(tmp_path))
    assert len(firsts) == 1 and "scipy.stats" in firsts[0]
