"""``structbench run`` with no arguments: the default suite, offline, on the embedded model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_default_run_on_embedded_model(tmp_path: Path) -> None:
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "structbench", "run", "--offline"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| structext | test | naive | llamacpp | rougeL |" in proc.stdout
    run_dir = next((tmp_path / "runs").iterdir())
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 8 and all(r["error"] is None for r in records)
    assert all(r["calls"] == 1 and r["output"] for r in records)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["backend"]["model"] == "gemma-3-270m-q4_k_m" and manifest["status"] == "complete"
