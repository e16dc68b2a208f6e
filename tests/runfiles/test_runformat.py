"""The run files' format version: written in manifest.json and metrics.json, a newer major version refused with one
clear line and exit 2, older (unversioned) runs read and resumed, a newer minor version's fields kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import structbench
from faults import child_pythonpath
from structbench.core.errors import DataError
from structbench.runfiles.manifest import read_manifest
from structbench.runfiles.results import read_metrics
from structbench.runfiles.runformat import FORMAT_VERSION, check_format
from structbench.testing.cli import Invocation, invoke


def sb(cwd: Path, *args: str) -> Invocation:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(cwd / "cache"))
    return invoke(*args, env=env, cwd=cwd)


def oracle_run(path: Path) -> Path:
    structbench.evaluate("oracle", "structext:test", limit=3, out=path, progress=False)
    return path


def rewrite(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


def test_both_files_carry_the_format_version(tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "run")
    # 1.1: a sweep's fields; 1.2: the tool loop's; 1.3: the robustness intervals; 1.4: the turn limit scored,
    # replies_unclosed, the sandbox's isolation
    assert FORMAT_VERSION == "1.4"
    assert json.loads((run / "manifest.json").read_text())["format_version"] == "1.4"
    assert json.loads((run / "metrics.json").read_text())["format_version"] == "1.4"


def test_versions_are_read_by_major_version(tmp_path: Path) -> None:
    where = tmp_path / "x.json"
    assert check_format(None, where) == (1, 0)  # written before versions: 1.0
    assert check_format("1.7", where) == (1, 7)
    with pytest.raises(DataError, match=r"x.json: written in run format 2.0, newer than the 1.4 this structbench "
                                        r"reads; upgrade structbench"):
        check_format("2.0", where)
    with pytest.raises(DataError, match="format_version 'one': expected MAJOR.MINOR"):
        check_format("one", where)


@pytest.mark.parametrize("name", ["manifest.json", "metrics.json"])
def test_a_newer_major_version_is_refused_with_exit_2(tmp_path: Path, name: str) -> None:
    run = oracle_run(tmp_path / "run")
    rewrite(run / name, format_version="2.0")
    for args in (["report", "run"], ["run", "--resume", "run", "--no-progress"]):
        if name == "metrics.json" and args[0] == "run":
            continue  # resuming reads the manifest, and writes metrics.json anew
        proc = sb(tmp_path, *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == (f"error: run/{name}: written in run format 2.0, newer than the 1.4 this "
                                       "structbench reads; upgrade structbench (pip install -U structbench) to read it")
    assert json.loads((run / name).read_text())["format_version"] == "2.0"  # nothing overwritten


def test_an_unversioned_run_is_read_and_resumed(tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "run")
    rewrite(run / "manifest.json", format_version=None)
    rewrite(run / "metrics.json", format_version=None)
    assert read_metrics(run / "metrics.json").results[0].headline.value == 1.0
    manifest = read_manifest(run)
    assert manifest is not None and manifest.config.benches == ["structext:test"]
    report = sb(tmp_path, "report", "run")
    assert report.returncode == 0 and "| structext | test |" in report.stdout, report.stderr
    resumed = sb(tmp_path, "run", "--resume", "run", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((run / "manifest.json").read_text())["format_version"] == "1.4"  # written anew


def test_a_newer_minor_version_keeps_its_manifest_fields(tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "run")
    rewrite(run / "manifest.json", format_version="1.5", carbon={"grams": 12})
    manifest = read_manifest(run)
    assert manifest is not None and manifest.model_extra == {"carbon": {"grams": 12}}
    again = structbench.api.resume(run, settings=structbench.api.RunSettings(progress=False))
    assert again.results[0].headline == 1.0
    assert json.loads((run / "manifest.json").read_text())["carbon"] == {"grams": 12}
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["format_version"] = "1.5"
    metrics["results"][0]["cost"] = 0.5
    (run / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(DataError, match=r"metrics.json: not a metrics file \(results.0.cost: Extra inputs are not "
                                        r"permitted\) \(written in run format 1.5, newer than the 1.4 this"):
        read_metrics(run / "metrics.json")


def test_a_damaged_manifest_names_the_file_and_field(tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "run")
    rewrite(run / "manifest.json", config={"model": "oracle"})
    with pytest.raises(DataError, match=r"run/manifest.json: not a structbench run manifest \(config.benches: Field "
                                        r"required\)"):
        read_manifest(run)
