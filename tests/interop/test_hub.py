"""``structbench publish``: a folder ``datasets.load_dataset`` loads (``samples``: the run's records; ``results``: at
least a row per entry), its dataset card, and the upload through ``huggingface_hub`` (a local stand-in for the
Hub: no test touches the network)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest

from extras import require_extra

require_extra("datasets", "datasets")

import datasets  # noqa: E402
import yaml  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from interop_runs import LIMIT, run_records, sb  # noqa: E402
from structbench.cli.app import app  # noqa: E402
from structbench.interop.hub import UploadError, sample_schema  # noqa: E402
from structbench.runfiles.results import MetricsFile  # noqa: E402


def _load(folder: Path, config: str) -> list[dict[str, Any]]:
    cache = folder.parent / "datasets-cache"  # the test's own: nothing cached elsewhere is read
    return list(datasets.load_dataset(str(folder), config, split="train", cache_dir=str(cache)))


@pytest.mark.shared
def test_the_folder_loads_with_datasets_and_holds_the_runs(oracle_run: Path, tmp_path: Path) -> None:
    second = tmp_path / "runs" / "second"
    shutil.copytree(oracle_run, second)  # a second run, so the folder holds two files per configuration
    sb(tmp_path, "publish", str(oracle_run), str(second), "--out", "pub")
    folder = tmp_path / "pub"
    _, as_json = sample_schema()

    records = run_records(oracle_run)
    rows = _load(folder, "samples")
    assert len(rows) == 2 * len(records) == 2 * 14 * LIMIT
    for row in rows:
        decoded = {k: json.loads(v) if k in as_json and v is not None else v for k, v in row.items()}
        run = decoded.pop("run")
        assert run in ("run", "second")
        key = (decoded["benchmark"], decoded["variant"], decoded["strategy"], decoded["model"], decoded["id"])
        assert decoded == records[key]

    metrics = MetricsFile.model_validate_json((oracle_run / "metrics.json").read_text())
    results = _load(folder, "results")
    for run in ("run", "second"):
        for entry in metrics.results:
            mine = [r for r in results if r["run"] == run and (r["benchmark"], r["variant"], r["strategy"]) ==
                    (entry.benchmark, entry.variant, entry.strategy)]
            (head,) = [r for r in mine if r["headline"] and r["breakdown"] is None]
            assert head["metric"] == entry.headline.name and head["value"] == 1.0 and head["n"] == LIMIT
            assert (head["ci_low"], head["ci_high"]) == (entry.headline.ci_low, entry.headline.ci_high)
            assert head["baseline_majority"] == entry.baselines.get("majority")
            overall = {r["metric"]: r["value"] for r in mine if r["breakdown"] is None}
            assert overall == entry.metrics
            groups = {(r["breakdown"], r["group"]) for r in mine if r["breakdown"] is not None}
            assert groups == {(k, g) for k, v in entry.breakdowns.items() for g in v}

    card = (folder / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"]: c["data_files"][0]["path"] for c in header["configs"]} == {
        "results": "data/results/*.parquet", "samples": "data/samples/*.parquet"}
    assert header["license"] == "mit"  # SciTab and StrucText-Eval both release their data under MIT
    assert "Copyright (c) 2023 Lu Xinyuan" in card and "Copyright (c) 2024 Haoning Ye" in card
    assert "@inproceedings{lu2023scitab" in card and "@misc{gu2025structexteval" in card
    assert "`oracle`" in card and "`pot`" in card and "`official_hint`" in card
    manifest = json.loads((folder / "runs" / "second" / "manifest.json").read_text())
    assert manifest["config"]["benches"] == ["scitab", "structext"]
    assert MetricsFile.model_validate_json((folder / "runs" / "run" / "metrics.json").read_text()) == metrics
    for info in header["dataset_info"]:  # rows and bytes, as the split's Arrow data holds them (num_bytes was 0)
        files = sorted((folder / "data" / info["config_name"]).glob("*.parquet"))
        arrow = sum(pq.read_table(f).nbytes for f in files)
        (split,) = info["splits"]
        assert split["num_examples"] == sum(pq.read_metadata(f).num_rows for f in files)
        assert split["num_bytes"] == info["dataset_size"] == pytest.approx(arrow, rel=0.01)  # (buffers as written)


@pytest.mark.shared
def test_out_must_be_new_empty_or_an_earlier_publish(oracle_run: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    line = sb(tmp_path, "publish", str(oracle_run), "--out", "taken", check=2).stderr.strip()
    assert "taken" in line and "publish" in line and len(line.splitlines()) == 1
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    sb(tmp_path, "publish", str(oracle_run), "--out", "pub")
    sb(tmp_path, "publish", str(oracle_run), "--out", "pub")  # replaced whole
    again = f"{oracle_run.parent}/../{oracle_run.parent.name}/{oracle_run.name}"  # the same folder, spelt otherwise
    twice = sb(tmp_path, "publish", str(oracle_run), again, "--out", "pub2", check=2).stderr.strip()
    assert twice == f"error: {again}: given twice (as {oracle_run} too); give each run directory once"
    assert not (tmp_path / "pub2").exists()
    assert len(_load(tmp_path / "pub", "samples")) == 14 * LIMIT
    assert sorted(p.name for p in tmp_path.iterdir() if "publish" in p.name) == []  # nothing left behind


class FakeHub:
    """``huggingface_hub.HfApi`` as the tests need it: records each call and copies the folder it is given."""

    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []
    remote: ClassVar[Path]
    fail: ClassVar[str | None] = None

    def __init__(self, **kwargs: Any) -> None:
        pass

    def create_repo(self, **kwargs: Any) -> None:
        FakeHub.calls.append(("create_repo", kwargs))
        if FakeHub.fail:
            raise RuntimeError(FakeHub.fail)

    def upload_folder(self, **kwargs: Any) -> Any:
        FakeHub.calls.append(("upload_folder", kwargs))
        shutil.copytree(kwargs["folder_path"], FakeHub.remote / kwargs["repo_id"], dirs_exist_ok=True)
        return type("CommitInfo", (), {"commit_url": f"https://hub.test/{kwargs['repo_id']}/commit/1"})()


@pytest.mark.shared
def test_repo_uploads_the_folder_with_huggingface_hub(oracle_run: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub)
    FakeHub.calls, FakeHub.remote, FakeHub.fail = [], tmp_path / "hub", None
    out = tmp_path / "pub"
    result = CliRunner().invoke(app, ["publish", str(oracle_run), "--out", str(out), "--repo", "lab/results",
                                      "--private"])
    assert result.exit_code == 0, result.output
    assert [name for name, _ in FakeHub.calls] == ["create_repo", "upload_folder"]
    assert FakeHub.calls[0][1] == {"repo_id": "lab/results", "repo_type": "dataset", "private": True,
                                   "exist_ok": True}
    assert FakeHub.calls[1][1]["repo_type"] == "dataset" and FakeHub.calls[1][1]["folder_path"] == str(out)
    remote = FakeHub.remote / "lab" / "results"
    uploaded = sorted(p.relative_to(remote) for p in remote.rglob("*"))
    assert uploaded == sorted(p.relative_to(out) for p in out.rglob("*"))
    assert 'load_dataset("lab/results", "results"' in (out / "README.md").read_text()
    assert "https://hub.test/lab/results/commit/1" in result.output

    FakeHub.calls, FakeHub.fail = [], "401 Unauthorized: invalid token"
    result = CliRunner().invoke(app, ["publish", str(oracle_run), "--out", str(out), "--repo", "lab/results"])
    error = result.exception
    assert isinstance(error, UploadError) and error.exit_code == 2  # ``structbench`` exits with it, one line
    message = str(error)
    assert "upload failed" in message and "401 Unauthorized" in message and str(out) in message
    assert len(message.splitlines()) == 1
    assert (out / "README.md").is_file()  # the folder stays, complete
