"""``--preset robust-databench``: DataBench Lite's direct prompt over 7 table formats x 4 perturbations."""

from __future__ import annotations

import json
from pathlib import Path

from structbench.testing.cli import invoke


def test_the_preset_runs_its_grid_and_the_oracle_is_right_in_every_cell(generated: Path, tmp_path: Path) -> None:
    listed = invoke("list").stdout
    assert "robust-databench  robustness grid, 28 cells" in listed
    done = invoke("run", "-m", "oracle", "--preset", "robust-databench", "--limit", "2", "--data-dir", str(generated),
                  "--no-cache", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    results = metrics["results"]
    assert len(results) == 28 and {(r["variant"], r["strategy"]) for r in results} == {("lite", "direct")}
    assert all(r["metrics"]["accuracy"] == 1.0 and r["n"] == 2 for r in results)
    (summary,) = metrics["robustness"]
    assert summary["reference"] == "perturbation=none;serialization=markdown"
