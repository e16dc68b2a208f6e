"""What a sandbox that cannot run programs tells the user to change (``sandbox.remedy``), and that it is the machine's
error (``MachineError``, exit 2), never a program's outcome."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from sandbox.modes import degraded_python
from structbench.core.errors import ExitCode, MachineError
from structbench.sandbox import SandboxUnavailableError, quietly, remedy, run_python


def test_the_first_folder_closed_to_other_users_is_named() -> None:
    top = Path(tempfile.mkdtemp(prefix="structbench-remedy-"))  # (pytest's own folders are closed to others)
    closed = top / "home"
    (closed / "venv" / "bin").mkdir(parents=True)
    python = closed / "venv" / "bin" / "python"
    python.write_text("")
    try:
        top.chmod(0o755)
        python.chmod(0o755)
        closed.chmod(0o700)
        assert remedy.closed_folder(str(python), "run") == str(closed)
        closed.chmod(0o755)
        assert remedy.closed_folder(str(python), "run") is None
        python.chmod(0o754)  # runnable by its owner and group only
        assert remedy.closed_folder(str(python), "run") == str(python)
        assert remedy.closed_folder(str(python), "read") is None  # readable by others all the same
    finally:
        shutil.rmtree(top)


def test_as_root_without_namespaces_the_message_says_why_and_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remedy.os, "geteuid", lambda: 0)
    monkeypatch.setattr(remedy, "closed_folder", lambda path, action: "/root")
    failure = {"exec_error": "cannot start /root/py/bin/python3.11 as uid 1500000007: [Errno 13] Permission denied",
               "action": "run", "path": "/root/py/bin/python3.11", "reason": "Permission denied", "uid": 1500000007}
    off = remedy.cannot_start(failure, {"filesystem": "guard", "notes": []}, "off")
    assert off == (
        "sandbox: as root without namespaces (sandbox=off), each program runs as a fresh unprivileged uid "
        "(1500000007), which cannot run /root/py/bin/python3.11 (Permission denied) because /root is not open to "
        "other users. Run structbench as a non-root user, or let the sandbox use namespaces (sandbox=auto), or use a "
        "Python other users can run (e.g. a virtual environment made with /usr/bin/python3 -m venv, outside /root)")
    refused = remedy.cannot_start(failure, {"filesystem": "guard", "notes": ["unshare(mount, net, ipc, uts): "
                                                                             "Operation not permitted (errno 1)"]},
                                  "auto")
    assert "(the kernel refused them: unshare(mount, net, ipc, uts): Operation not permitted (errno 1))" in refused
    assert "with the privileges namespaces need (CAP_SYS_ADMIN; in Docker, --privileged)" in refused
    data = remedy.cannot_start({**failure, "action": "read", "path": "/root/data/db.sqlite"}, {"filesystem": "shared"},
                               "off")
    assert "cannot read /root/data/db.sqlite" in data and "keep the data where other users can read it" in data
    libraries = remedy.cannot_start({**failure, "action": "import", "path": "/root/venv/lib/pandas"},
                                    {"filesystem": "shared"}, "off")
    assert "cannot import /root/venv/lib/pandas" in libraries and "install the libraries where" in libraries


def test_required_namespaces_refused_say_how_to_allow_them(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = "sandbox setup failed: unshare(user): Operation not permitted (errno 1)"
    monkeypatch.setattr(remedy.os, "geteuid", lambda: 1000)
    user = remedy.refused(reason)
    assert user.startswith("sandbox: namespaces are required (sandbox=require) but the kernel refused them "
                           "(unshare(user): Operation not permitted (errno 1)). Allow them: enable unprivileged user "
                           "namespaces")
    assert user.endswith("or set sandbox=auto to run programs with weaker isolation (resource limits and in-process "
                         "guards, not a security boundary)")
    monkeypatch.setattr(remedy.os, "geteuid", lambda: 0)
    assert "CAP_SYS_ADMIN" in remedy.refused(reason)


def test_an_interpreter_that_cannot_be_started_is_the_machines_error(tmp_path: Path) -> None:
    python = tmp_path / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o644)  # exists, cannot be executed (root neither)
    with pytest.raises(SandboxUnavailableError, match=f"sandbox: cannot start the interpreter {python}: Permission "
                                                      "denied") as raised:
        run_python("print(1)", python=str(python))
    assert isinstance(raised.value, MachineError) and raised.value.exit_code == ExitCode.USAGE


def test_as_root_a_mount_other_users_cannot_read_stops_before_the_program(tmp_path: Path) -> None:
    """The program's fresh uid could not open the file: said before it runs, naming the closed folder."""
    python = degraded_python()
    if os.geteuid() != 0 or python is None:
        pytest.skip("needs root and a python3 an ordinary user can run")
    closed = Path(tempfile.mkdtemp(prefix="structbench-closed-"))
    try:
        (closed / "db.sqlite").write_text("data")
        closed.chmod(0o700)
        with pytest.raises(SandboxUnavailableError) as raised:
            run_python("print(open('db').read())", mounts={"db": closed / "db.sqlite"}, namespaces="off",
                       python=python)
        assert f"cannot read {closed}/db.sqlite (Permission denied) because {closed} is not open to other users" in \
            str(raised.value)
        closed.chmod(0o755)
        with quietly():  # (the weaker isolation's warning, left for the tests that look for it)
            ran = run_python("print(open('db').read())", mounts={"db": closed / "db.sqlite"}, namespaces="off",
                             python=python)
        assert ran.stdout == "data\n"
    finally:
        shutil.rmtree(closed)
