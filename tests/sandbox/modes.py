"""Interpreters for the sandbox's degraded mode."""

from __future__ import annotations

import os
import shutil

from structbench.sandbox import SandboxUnavailableError, probe


def degraded_python() -> str | None:
    """An interpreter the degraded mode can run (as root it must be readable by an unprivileged uid)."""
    for candidate in (None, "/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3")):
        if candidate is not None and not os.path.exists(candidate):
            continue
        try:
            probe("off", candidate)
        except SandboxUnavailableError:
            continue
        return candidate
    return None
