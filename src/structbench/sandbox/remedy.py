"""What to change when the sandbox cannot run programs on this machine: the messages of ``SandboxUnavailableError``.

Two causes are the machine's, the same for every program: the kernel refused the namespaces ``namespaces="require"``
asks for; or, as root where programs share the host's filesystem (``namespaces="off"``, or namespaces refused), the
fresh unprivileged uid each program runs as cannot run the interpreter, or read a library or a mounted file, because
a folder on the way (``/root``, say) is not open to other users.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import Any

PRIVATE_ROOTS = ("pivot_root", "chroot")
"""The launcher's ``filesystem`` when the program got a root of its own (the host's paths bound into it)."""

ROOT_NAMESPACES = "run structbench with the privileges namespaces need (CAP_SYS_ADMIN; in Docker, --privileged)"
USER_NAMESPACES = ("enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where it exists, "
                   "user.max_user_namespaces above 0, and on Ubuntu 23.10 and later "
                   "kernel.apparmor_restrict_unprivileged_userns=0; in Docker, --privileged)")

FIX = {
    "run": "use a Python other users can run (e.g. a virtual environment made with /usr/bin/python3 -m venv{outside})",
    "import": "install the libraries where other users can read them (e.g. a virtual environment made with "
              "/usr/bin/python3 -m venv{outside})",
    "read": "keep the data where other users can read it (--data-dir and STRUCTBENCH_CACHE{outside})",
}
"""The third way out, by what the program's uid could not do with the path (the launcher's ``action``)."""


def closed_folder(path: str, action: str = "read") -> str | None:
    """The first folder on the way to ``path`` that other users cannot enter, else ``path`` itself where they cannot
    read it (``run``: execute it); None when every step is open to them (an ACL, or a cause other than modes)."""
    parts = os.path.abspath(path).split(os.sep)
    steps = [os.sep.join(parts[:i]) for i in range(2, len(parts))]
    try:
        for folder in steps:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return folder
        mode = os.stat(path).st_mode
    except OSError:
        return None
    need = stat.S_IXOTH if action == "run" else stat.S_IROTH
    if stat.S_ISDIR(mode):
        need |= stat.S_IROTH | stat.S_IXOTH
    return path if mode & need != need else None


def cannot_start(failure: Mapping[str, Any], report: Mapping[str, Any], namespaces: str) -> str:
    """The message for a program the launcher could not start (its ``exec_error`` line, ``failure``), after its
    isolation ``report``: as root without a root of its own, why the program's uid cannot and what to change."""
    message = f"sandbox: {failure.get('exec_error', 'the program could not be started')}"
    path, action, uid = failure.get("path"), str(failure.get("action", "run")), failure.get("uid")
    if os.geteuid() != 0 or not isinstance(path, str) or uid in (None, 0):
        return message
    folder = closed_folder(path, action)
    why = f" because {folder} is not open to other users" if folder else ""
    if report.get("filesystem") in PRIVATE_ROOTS:  # namespaces were there: the path's own mode is the cause
        return f"{message}{why}; each program runs as a fresh unprivileged uid: make {path} readable by other users"
    notes = [str(note) for note in report.get("notes") or ()]
    off = namespaces == "off"
    without = "sandbox=off" if off else "the kernel refused them" + (f": {notes[0]}" if notes else "")
    allow = "let the sandbox use namespaces (sandbox=auto)" if off else ROOT_NAMESPACES
    outside = f", outside {folder}" if folder and folder != path else ""
    reason = failure.get("reason") or "refused"
    return (f"sandbox: as root without namespaces ({without}), each program runs as a fresh unprivileged uid "
            f"({uid}), which cannot {action} {path} ({reason}){why}. Run structbench "
            f"as a non-root user, or {allow}, or {FIX.get(action, FIX['read']).format(outside=outside)}")


def refused(reason: str) -> str:
    """The message for isolation ``namespaces="require"`` asked for and the kernel refused (the launcher's ``reason``):
    how to allow it, or to run with less."""
    reason = reason.removeprefix("sandbox setup failed: ").strip()
    allow = ROOT_NAMESPACES if os.geteuid() == 0 else USER_NAMESPACES
    return (f"sandbox: namespaces are required (sandbox=require) but the kernel refused them ({reason}). Allow them: "
            f"{allow}; or set sandbox=auto to run programs with weaker isolation (resource limits and in-process "
            "guards, not a security boundary)")
