"""``structbench run`` on local models: hf and vllm backends by path, --model-option/--device/--dtype.

The commands run in this process (``structbench.testing.cli.invoke``): each one as a subprocess started another
interpreter that imported torch and transformers again, for nothing the test checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toybench  # noqa: F401  (registers the toy benchmark the commands run)
from backends.tiny_models import build_tiny_model, require
from faults import child_pythonpath
from patience import patience
from structbench.testing.cli import Invocation, invoke


def sb(tmp_path: Path, *args: str, check: int | None = 0) -> Invocation:
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    proc = invoke(*args, env=env, cwd=tmp_path)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def sb_process(tmp_path: Path, *args: str, check: int = 0) -> subprocess.CompletedProcess[str]:
    """``sb`` in a process of its own: vLLM's engine client (threads, sockets, its spawned engine's shutdown) stays out
    of the test process, whose captured output once read as a closed file in every later test of its worker. Its engine
    starts in processes of its own, as a user's does (``tests/conftest.py`` keeps the other tests' engines in the test
    process)."""
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1",
               PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench", VLLM_ENABLE_V1_MULTIPROCESSING="1")
    proc = subprocess.run([sys.executable, "-m", "structbench", *args], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=patience(900))
    assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("torch")
    require("transformers")
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.mark.slow
def test_hf_run_records_model_options_and_identity(tiny: Path, tmp_path: Path) -> None:
    sb(tmp_path, "run", "-m", f"hf:{tiny}", "-b", "toy", "-n", "6", "--dtype", "float32", "-M", "batch_size=4",
       "--max-tokens", "4", "--out", "r")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["config"]["model_options"] == {"batch_size": "4", "dtype": "float32"}
    assert manifest["backend"]["backend"] == "hf" and 'dtype="float32"' in manifest["backend"]["base_url"]
    assert "torch" in manifest["packages"] and "transformers" in manifest["packages"]
    records = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["error"] is None and r["calls"] == 1 for r in records)
    # the same command again is answered from the response cache; another dtype is another run
    sb(tmp_path, "run", "-m", f"hf:{tiny}", "-b", "toy", "-n", "6", "--dtype", "float32", "-M", "batch_size=4",
       "--max-tokens", "4", "--out", "r2")
    assert all(json.loads(line)["cached_calls"] == 1 for line in (tmp_path / "r2" / "samples.jsonl").open())
    err = sb(tmp_path, "run", "--resume", "r", "--dtype", "bfloat16", check=2).stderr
    assert "--dtype" in err and "would change it" in err
    err = sb(tmp_path, "run", "--resume", "r", "-M", "batch_size=2", check=2).stderr
    assert "--model-option" in err and "would change it" in err
    # the run's own options (given either way) and options left out resume it
    sb(tmp_path, "run", "--resume", "r", "-M", "dtype=float32", "-M", "batch_size=4")
    sb(tmp_path, "run", "--resume", "r", "--dtype", "float32")
    sb(tmp_path, "run", "--resume", "r")


def test_local_model_usage_errors_exit_2(tiny: Path, tmp_path: Path) -> None:
    err = sb(tmp_path, "run", "-m", "oracle", "-b", "toy", "-M", "dtype=float32", check=2).stderr
    assert err.strip() == "error: --model-option dtype: not an option of the oracle backend (known: none)"
    assert "--model-option 'dtype': expected KEY=VALUE" in sb(tmp_path, "run", "-m", f"hf:{tiny}", "-b", "toy",
                                                         "-M", "dtype", check=2).stderr
    assert "no such model directory" in sb(tmp_path, "run", "-m", f"hf:{tmp_path}/none", "-b", "toy", check=2).stderr
    assert "expected one of auto" in sb(tmp_path, "run", "-m", f"hf:{tiny}", "-b", "toy", "--dtype", "int3",
                                        check=2).stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_vllm_run_on_the_cpu(tiny: Path, tmp_path: Path) -> None:
    require("vllm")
    done = sb_process(tmp_path, "run", "-m", f"vllm:{tiny}", "-b", "toy", "-n", "6", "--dtype", "float32",
                      "--max-tokens", "4", "-M", f"kv_cache_memory_bytes={64 << 20}", "-M", "enforce_eager=true",
                      "--out", "r")
    # the engine's processes are stopped after SHUTDOWN_SECONDS, not reported: vLLM's 5 s grace ran out on every run
    # (its worker's interpreter was still collecting its heap), and it warned that it force-killed them
    assert "force killing" not in done.stdout + done.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["backend"]["backend"] == "vllm" and manifest["status"] == "complete"
    records = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["error"] is None for r in records)
    assert "--model-option max_num_sequences" in sb(tmp_path, "run", "-m", f"vllm:{tiny}", "-b", "toy",
                                                 "-M", "max_num_sequences=2", check=2).stderr
