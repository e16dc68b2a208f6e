"""The manifest's record of the sandbox: the weakest isolation over a run's sessions, each session's own, and nothing
for a run (or a session) that ran no sandboxed program; a manifest written before the field existed still reads."""

from __future__ import annotations

import json
from pathlib import Path

from structbench.runfiles.manifest import Manifest, Session, read_manifest
from structbench.runfiles.runconfig import RunConfig

CONFIG = RunConfig.model_validate({"model": "m", "benches": ["toy"]})


def session(manifest: Manifest, level: str | None) -> Session:
    began = Session(started="2026-01-01T00:00:00+00:00", jobs=1)
    manifest.sessions.append(began)
    manifest.isolated(began, level)
    return began


def test_the_run_keeps_the_weakest_isolation_of_its_sessions_and_each_session_its_own() -> None:
    manifest = Manifest(config=CONFIG)
    session(manifest, "namespaces")
    session(manifest, "guard")  # resumed in a container without namespaces
    session(manifest, None)  # resumed with nothing left to run in the sandbox
    session(manifest, "namespaces")
    data = manifest.to_json()
    assert data["sandbox"] == {"isolation": "guard"}
    assert [s.get("sandbox") for s in data["sessions"]] == ["namespaces", "guard", None, "namespaces"]
    assert "sandbox" not in data["sessions"][2]  # absent, not null


def test_off_and_none_are_weaker_than_guard_and_an_unknown_level_weakest() -> None:
    for levels, weakest in ((["guard", "off"], "off"), (["off", "none"], "none"), (["none", "cage"], "cage")):
        manifest = Manifest(config=CONFIG)
        for level in levels:
            session(manifest, level)
        assert manifest.sandbox is not None and manifest.sandbox.isolation == weakest


def test_a_run_without_sandboxed_programs_has_no_sandbox_field() -> None:
    manifest = Manifest(config=CONFIG)
    session(manifest, None)
    data = manifest.to_json()
    assert "sandbox" not in data and "sandbox" not in data["sessions"][0]


def test_a_manifest_without_the_field_reads_and_one_with_it_reads_back(tmp_path: Path) -> None:
    manifest = Manifest(config=CONFIG, format_version="1.3")
    session(manifest, None)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest.to_json()))
    read = read_manifest(tmp_path)
    assert read is not None and read.sandbox is None and read.sessions[0].sandbox is None
    session(read, "off")
    (tmp_path / "manifest.json").write_text(json.dumps(read.to_json()))
    again = read_manifest(tmp_path)
    assert again is not None and again.sandbox is not None and again.sandbox.isolation == "off"
    assert [s.sandbox for s in again.sessions] == [None, "off"]
