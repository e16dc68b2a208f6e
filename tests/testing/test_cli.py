"""``testing.cli.invoke``: a command run in this process as a new process would run it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import structbench.benchmarks  # noqa: F401  (the registry loaded before, as by any earlier test in the process)
from structbench.testing.cli import invoke


def test_the_plugins_the_environment_names_are_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process started with ``STRUCTBENCH_PLUGINS`` imports its modules when it loads the registry; an in-process
    command does too, though this process loaded the registry earlier under another environment (tests that ran
    after others failed with "unknown benchmark 'toy'")."""
    (tmp_path / "marked_plugin.py").write_text("IMPORTED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "marked_plugin", raising=False)
    proc = invoke("list", env=dict(os.environ, STRUCTBENCH_PLUGINS="marked_plugin"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "marked_plugin" in sys.modules
    monkeypatch.delitem(sys.modules, "marked_plugin")
