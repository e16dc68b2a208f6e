"""Run untrusted Python in a separate, isolated, resource-limited process: ``run_python``."""

from __future__ import annotations

import contextlib
import errno
import json
import keyword
import logging
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from structbench.core.errors import LoggedWarning, MachineError, StructbenchError
from structbench.sandbox import levels
from structbench.sandbox.config import GuardMode, Isolation, Limits, NamespaceMode, SandboxResult
from structbench.sandbox.libraries import THREAD_ENV, resolve
from structbench.sandbox.remedy import cannot_start, refused

log = logging.getLogger(__name__)

LAUNCHER = Path(__file__).with_name("_launcher.py")
SETUP_FAILED = 125
"""The launcher's exit status when isolation was required but refused (keep in sync with _launcher)."""

SYSTEM_RO_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache", "/etc/localtime")
"""Read-only in the sandbox's root; the launcher adds the interpreter's own prefix."""

UNRUNNABLE = frozenset({errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.ENOEXEC, errno.ELOOP})
"""Why ``exec`` of the interpreter fails every time (not a passing shortage of processes or memory)."""

PAGE = os.sysconf("SC_PAGE_SIZE")
"""tmpfs counts a file's size in whole pages."""

UID_BASE = 1_500_000_000
"""As root, each run gets a uid in [UID_BASE, UID_BASE + 10**8): owned by no account, unique per run, so
RLIMIT_NPROC counts only that run's processes and runs cannot signal one another."""


class SandboxError(StructbenchError):
    """The sandbox could not run the program at all (the launcher failed before it started): a failure of the
    harness or the machine, never an outcome of the program."""


class SandboxUnavailableError(SandboxError, MachineError):
    """The sandbox cannot run programs on this machine: isolation was required (``namespaces="require"``) but the
    kernel refused it, or the interpreter, a library or a mounted file cannot be run or read as the program's uid.
    The same for every program, so a run stops at the first (``MachineError``, exit 2); the message says what to
    change."""


class SandboxWarning(LoggedWarning):
    """The sandbox runs with weaker isolation than namespaces give (see ``Isolation``); logged too."""


def interpreter() -> str:
    """The base interpreter (no virtual environment: the program only gets the standard library)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def _own_process_count() -> int:
    """Processes of this uid: RLIMIT_NPROC counts them too when the sandbox keeps our uid."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def _read_capped(path: Path, cap: int) -> tuple[str, bool]:
    with path.open("rb") as fh:
        data = fh.read(cap + 1)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)  # never a library's own files


def _private_disk(work: Path, limits: Limits) -> dict[str, int]:
    """The tmpfs the program's directory becomes in namespaces (``_launcher.private_dir``): ``disk_mb`` and
    ``max_files`` beyond what ``work`` holds already (each entry a page, and each file's own pages)."""
    pages = entries = 0
    for dirpath, dirnames, filenames in os.walk(work):
        for name in [*dirnames, *filenames]:
            info = os.lstat(os.path.join(dirpath, name))
            entries += 1
            pages += 1 + (-(-info.st_size // PAGE) if stat.S_ISREG(info.st_mode) else 0)
    return {"bytes": (limits.disk_mb << 20) + pages * PAGE, "inodes": limits.max_files + entries + 1}


def _link_libraries(folder: Path, paths: Sequence[str]) -> None:
    """A directory of links to the libraries' top-level entries: the program's ``sys.path`` entry for them, which
    lists them and nothing else of their site directories."""
    folder.mkdir()
    for path in paths:
        link = folder / os.path.basename(path)
        if not link.is_symlink():  # the first site directory wins, as on sys.path
            link.symlink_to(path)


_warned: set[tuple[str, str]] = set()


def _warn_degraded(isolation: Isolation, namespaces: NamespaceMode) -> None:
    """Warn, once a process for each kind of isolation, that programs run without the kernel's isolation."""
    key = isolation.describe()
    if isolation.uid >= UID_BASE:  # as root, a fresh uid each program: one warning for them all
        key = key.replace(f"uid={isolation.uid}", "a fresh uid each program")
    if (namespaces, key) in _warned:
        return
    _warned.add((namespaces, key))
    why = ("namespaces are turned off (sandbox=off)" if namespaces == "off" else
           "Linux namespaces are unavailable")
    message = (
        f"structbench sandbox: {why}, so untrusted programs run with weaker isolation ({key}). Resource limits, a "
        "clean environment and in-process audit-hook guards still apply, but they are not a security boundary: a "
        "program can read what this user can and reach the network"
        + ("." if namespaces == "off" else "; run as root or enable unprivileged user namespaces.")
    )
    log.warning(message)
    warnings.warn(message, SandboxWarning, stacklevel=3)


def run_python(
    code: str,
    *,
    limits: Limits | None = None,
    files: Mapping[str, str | bytes] | None = None,
    stdin: str | bytes | None = None,
    namespaces: NamespaceMode = "auto",
    guard: GuardMode = "auto",
    python: str | None = None,
    libraries: Sequence[str] = (),
    tables: Mapping[str, str | bytes] | None = None,
    mounts: Mapping[str, str | os.PathLike[str]] | None = None,
) -> SandboxResult:
    """Run ``code`` as ``main.py`` in a private temporary directory (deleted afterwards) and return its output.

    ``files`` are written beside it (relative paths). The program gets the standard library, the installed
    ``libraries`` it is given (``("pandas",)``: pandas, numpy and what they require, read-only; see
    ``sandbox.libraries``), an environment with no inherited variables, and the limits in ``limits``.
    ``tables`` (name -> CSV text) are written to ``tables/NAME.csv`` and loaded with ``pandas.read_csv``
    before the program starts, each a global of its name and all in the global dict ``tables`` (pandas is
    added to ``libraries``). ``mounts`` (relative path -> host file or directory) show host data to the
    program read-only at those paths of its directory, without a copy (a database too large to copy per run).
    See the package docstring for what is isolated. ``python`` overrides the interpreter (default: this one's
    base interpreter; with ``libraries`` it must be the same Python version). As root without namespaces, the
    interpreter, the libraries and the mounted files must be readable by an unprivileged uid; where they are not, or
    the interpreter cannot be started at all, ``SandboxUnavailableError`` says which folder is closed and what to do.
    """
    limits = limits or Limits()
    python = os.path.realpath(python) if python else interpreter()
    tables = dict(tables or {})
    for name in tables:
        if not name.isidentifier() or keyword.iskeyword(name) or name == "tables":
            raise ValueError(f"sandbox table {name!r} must be a Python identifier other than 'tables'")
    if tables and "pandas" not in libraries:
        libraries = (*libraries, "pandas")
    found = resolve(tuple(libraries))
    shared = {rel: os.path.realpath(host) for rel, host in (mounts or {}).items()}
    for rel, host in shared.items():
        if not os.path.exists(host):
            raise ValueError(f"sandbox mount {rel!r}: {host} does not exist")
    base = Path(tempfile.mkdtemp(prefix="structbench-sandbox-"))
    run_id = base.name
    try:
        os.chmod(base, 0o711)  # the sandbox uid may pass through, not list
        work = base / "work"
        rootdir = base / "root"
        work.mkdir()
        rootdir.mkdir()
        (work / "main.py").write_text(code, encoding="utf-8")
        for rel, content in (files or {}).items():
            target = (work / rel).resolve()
            if not target.is_relative_to(work.resolve()) or rel == "main.py":
                raise ValueError(f"sandbox file {rel!r} must be a relative path other than main.py")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        if found:
            _link_libraries(work / ".libraries", found)
        for rel, host in shared.items():
            link = (work / rel).resolve()
            if not link.is_relative_to(work.resolve()) or link == work.resolve() or link.exists():
                raise ValueError(f"sandbox mount {rel!r} must be a new relative path inside the program's directory")
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(host)  # the host path itself is bound read-only in the sandbox's root
        if tables:
            (work / "tables").mkdir()
        for name, content in tables.items():
            (work / "tables" / f"{name}.csv").write_bytes(content.encode() if isinstance(content, str) else content)
        drop_to = None
        extra_procs = 0
        if os.geteuid() == 0:
            uid = UID_BASE + secrets.randbelow(10**8)
            drop_to = [uid, uid]
            _chown_tree(work, uid, uid)
        else:
            extra_procs = _own_process_count() + 1  # the launcher's supervisor keeps our uid
        report_r, report_w = os.pipe()
        config = {
            "python": python,
            "program": "main.py",
            "workdir": str(work),
            "rootdir": str(rootdir),
            "ro_paths": [*SYSTEM_RO_PATHS, *found, *shared.values()],
            "libraries": list(found),
            "mounts": list(shared.values()),
            "preload": list(libraries),
            "tables": {name: f"tables/{name}.csv" for name in tables},
            "namespaces": namespaces,
            "guard": guard,
            "drop_to": drop_to,
            "limits": limits.rlimits(extra_procs),
            "disk": _private_disk(work, limits),
            "report_fd": report_w,
            "parent_pid": os.getpid(),
            "env": {
                "PATH": "/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8",
                "STRUCTBENCH_SANDBOX_RUN": run_id,
                **(THREAD_ENV if found else {}),
            },
        }
        config_path = base / "config.json"
        config_path.write_text(json.dumps(config))
        stdin_path = base / "stdin"
        stdin_path.write_bytes(stdin.encode() if isinstance(stdin, str) else (stdin or b""))
        out_path, err_path = base / "stdout", base / "stderr"
        started = time.perf_counter()
        timed_out = False
        raw_report: bytes | None = None
        with (
            stdin_path.open("rb") as fin,
            out_path.open("wb") as fout,
            err_path.open("wb") as ferr,
            os.fdopen(report_r, "rb", buffering=0) as report_pipe,
        ):
            try:
                proc = subprocess.Popen(
                    [python, "-I", "-S", "-B", str(LAUNCHER), str(config_path)],
                    stdin=fin,
                    stdout=fout,
                    stderr=ferr,
                    cwd=base,
                    env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
                    start_new_session=True,
                    pass_fds=(report_w,),
                )
            except OSError as err:
                if err.errno not in UNRUNNABLE:
                    raise
                raise SandboxUnavailableError(f"sandbox: cannot start the interpreter {python}: "
                                              f"{err.strerror or err}") from err  # no program ever will
            finally:
                os.close(report_w)
            try:
                proc.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
                raw_report = _drain(report_r)  # complete: the launcher writes it just before exec
                _stop(proc)
            finally:
                _kill_group(proc.pid)
                proc.wait()
            seconds = time.perf_counter() - started
            if raw_report is None:
                raw_report = _drain(report_pipe.fileno())
        parsed, failure = _parse_report(raw_report)
        report = parsed or None
        stdout, out_cut = _read_capped(out_path, limits.max_output_bytes)
        stderr, err_cut = _read_capped(err_path, limits.max_output_bytes)
        if failure is not None:
            raise SandboxUnavailableError(cannot_start(failure, parsed, namespaces))
        if report is None and proc.returncode == SETUP_FAILED:
            raise SandboxUnavailableError(refused(stderr.strip() or "sandbox setup failed"))
        if report is None:  # the launcher never reached the program: nothing here is the program's doing
            why = (f"not started within the wall-clock limit of {limits.wall_seconds:g} s" if timed_out else
                   stderr.strip().splitlines()[-1] if stderr.strip() else f"launcher exit status {proc.returncode}")
            raise SandboxError(f"sandbox: the program could not be started: {why}")
        isolation = Isolation.from_report(report)
        levels.saw(levels.level_of(isolation, namespaces))  # what the run's manifest records (``levels.take``)
        if namespaces != "require" and not isolation.complete:
            _warn_degraded(isolation, namespaces)
        return SandboxResult(
            stdout=stdout,
            stderr=stderr,
            returncode=proc.returncode,
            timed_out=timed_out,
            seconds=round(seconds, 4),
            isolation=isolation,
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes], grace: float = 3.0) -> None:
    """Ask the launcher's supervisor to kill the program (and its PID namespace) and wait for the teardown; the
    caller then SIGKILLs the group (``_kill_group``) in case that failed."""
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)


def _kill_group(pgid: int) -> None:
    """SIGKILL the launcher's process group (whatever is left of it; the PID namespace dies with its init)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _drain(fd: int) -> bytes:
    """Whatever the launcher wrote to the report pipe so far (never blocks)."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_report(raw: bytes) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The launcher's isolation report ({} if none), and its ``exec_error`` line when the program could not be started
    (the interpreter not run, a library or mount not readable as the program's uid)."""
    report: dict[str, Any] = {}
    failure: dict[str, Any] | None = None
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "exec_error" in obj:
            failure = obj
        elif isinstance(obj, dict):
            report = obj
    return report, failure


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Programs run within are the harness's own trials (``probe``, the runner's warm-up), not a run's: they neither
    count among the levels this process's programs got (``levels.take``) nor use up its once-a-process warning, which
    the programs run after still give (their own ``SandboxWarning`` is not shown)."""
    warned, seen = set(_warned), levels.seen()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SandboxWarning)
            yield
    finally:
        _warned.clear()
        _warned.update(warned)
        levels.restore(seen)


@cache
def probe(namespaces: NamespaceMode = "auto", python: str | None = None) -> Isolation:
    """The isolation this machine gives (one trivial run, cached per process)."""
    with quietly():
        result = run_python("pass", namespaces=namespaces, limits=Limits(wall_seconds=30), python=python)
    if result.isolation is None:
        raise SandboxUnavailableError(f"the sandbox could not start a program: {result.stderr.strip()}")
    return result.isolation
