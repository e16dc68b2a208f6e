"""A real oracle run over SciTab and StrucText-Eval (every strategy), made with the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interop_runs import LIMIT, sb


@pytest.fixture(scope="session")
def oracle_run(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``structbench run -m oracle -b scitab,structext -s all -n 4``: 14 entries (6 SciTab, 8 StrucText-Eval
    strategies), each scoring 1.0."""
    root = tmp_path_factory.mktemp("oracle")
    sb(root, "run", "-m", "oracle", "-b", "scitab,structext", "-s", "all", "-n", str(LIMIT), "--data-dir",
       str(shared_datasets), "--out", "run", "--no-progress")
    run = root / "run"
    metrics = json.loads((run / "metrics.json").read_text())
    assert len(metrics["results"]) == 14 and all(e["headline"]["value"] == 1.0 for e in metrics["results"])
    return run
