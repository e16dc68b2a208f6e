"""The sandbox launcher: isolates itself, then ``exec``s the untrusted program.

Run by ``structbench.sandbox.runner`` as ``python -I -S -B _launcher.py CONFIG.json`` in a fresh
process (never imported: it must work with the standard library only, and it runs in a child that
``fork``ed from a possibly multi-threaded parent only through ``exec``, so ``preexec_fn`` is avoided).

First the launcher splits in two (``supervise``): the parent stays on the host as the program's supervisor,
the child isolates itself and becomes the program. When the process that started it dies (its parent-death
signal, SIGHUP: ``kill -9`` of the run included), the supervisor kills the program (and its PID namespace),
waits for them, deletes the sandbox's directory and ends. The runner's SIGTERM (the wall-clock limit) makes
it kill the program and wait the same way. It relays the program's exit status otherwise.

The child's steps, each recorded in a JSON report written to ``report_fd`` just before ``exec``:

1. ``unshare`` the mount, network, PID, IPC and UTS namespaces (plus a user namespace when not root);
2. ``fork`` so that the program is PID 1 of the new PID namespace (when it dies, the kernel kills
   every process left in it) and relay its exit status;
3. build a minimal read-only root (tmpfs with read-only binds of the system and Python directories,
   a few device nodes, and at ``/sandbox`` a size-limited tmpfs holding a copy of the work directory) and
   ``pivot_root`` into it;
4. as root, switch to an unprivileged per-run uid/gid; set resource limits, no-new-privileges and
   parent-death signal (every process on the way to the program dies with the one before it);
5. ``exec`` the interpreter with a bootstrap that installs in-process guards (audit hooks) when asked.

With ``namespaces == "auto"`` a step the kernel refuses is skipped and reported; with ``"require"``
the launcher exits with status 125 and the reason on stderr. Any other failure before ``exec`` exits with
status 126 and the error on stderr: the program never ran.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import resource
import shutil
import signal
import sys
import time
from typing import NoReturn

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

SYS_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41}

SETUP_FAILED = 125
"""Exit status when ``namespaces == "require"`` and isolation could not be set up."""
LAUNCH_FAILED = 126
"""Exit status when the launcher failed otherwise before ``exec`` (the program never ran)."""
TEARDOWN_WAIT = 2.0
"""Seconds the supervisor waits for what is left of a killed program (its PID namespace) before it goes on."""

DEVICES = ("null", "zero", "full", "random", "urandom")

# Runs inside the sandbox before the program. It installs audit hooks (PEP 578) that refuse network
# use, process creation, ctypes and file access outside the work directory. Audit hooks are a
# best-effort in-process guard (native code can bypass them), used when namespaces are unavailable.
BOOTSTRAP = r"""
import sys
def _sandbox_guard(cfg):
    import os
    work = os.path.realpath(os.getcwd())
    reads = tuple(os.path.realpath(p) for p in cfg["read_roots"]) + (work,)
    # Everything the hook reads is immutable: a program that reaches the hook's frame (through a
    # traceback of a denied call) finds nothing it can change.
    net_events = frozenset({"socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
                  "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"})
    spawn_events = frozenset({"os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
                    "subprocess.Popen", "os.startfile", "pty.spawn"})
    write_events = frozenset({"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.chmod", "os.chown",
                    "os.link", "os.chdir", "os.symlink", "os.truncate", "os.utime", "os.chflags",
                    "os.lchflags", "os.mkfifo", "os.mknod", "shutil.rmtree", "shutil.copyfile", "shutil.move",
                    "shutil.chown"})
    list_events = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.walk", "os.fwalk"})
    # Ways to reach the guard's own state or to start processes without the events above.
    introspection_events = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                                      "sys._current_frames"})
    # A denied call's traceback reaches the hook's frame and so its helpers, whose code a program could then replace
    # (``deny.__code__ = ...``) to switch the guard off: neither frames of tracebacks or generators nor a function's
    # code or defaults may be touched.
    frame_attributes = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
    function_attributes = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
    blocked_modules = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "_xxsubinterpreters", "_testcapi"})
    guard_net, guard_fs = bool(cfg["net"]), bool(cfg["fs"])  # plain locals: nothing to mutate later
    wflags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    disk_bytes, disk_files = int(cfg["disk"]["bytes"]), int(cfg["disk"]["inodes"])
    realpath, fspath, isabs, join, sep = os.path.realpath, os.fspath, os.path.isabs, os.path.join, os.sep

    def resolve(p):
        p = fspath(p)
        if isinstance(p, bytes):
            p = p.decode("utf-8", "surrogateescape")
        return realpath(p if isabs(p) else join(os.getcwd(), p))

    def inside(p, roots):
        return any(p == r or p.startswith(r.rstrip(sep) + sep) for r in roots)

    def deny(event):
        raise PermissionError(f"sandbox: {event} is not allowed")

    def full():
        # Whether the work directory holds its limit, walked at each open for writing: files opened before may still
        # grow to the file-size limit each and native code is not watched, but file after file no longer fills the disk.
        used, count, folders = 0, 1, [work]
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    count += 1
                    info = entry.stat(follow_symlinks=False)
                    used += info.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
        return used >= disk_bytes or count >= disk_files

    def hook(event, args):
        if event in introspection_events or event.startswith("ctypes."):
            deny(event)
        if (event == "object.__getattr__" and args[1] in frame_attributes) or (
                event == "object.__setattr__" and args[1] in function_attributes):
            deny(f"{event}({args[1]!r})")
        if event == "import" and args[0] in blocked_modules:  # as if absent: libraries that can do without go on
            raise ModuleNotFoundError(f"sandbox: import {args[0]} is not allowed", name=args[0])
        if guard_net and (event in net_events or event in spawn_events):
            deny(event)
        if not guard_fs:
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & wflags)
            if not inside(resolve(path), (work,) if writing else reads):
                deny(f"open({fspath(path)!r})")
            if writing and full():
                raise OSError(28, "No space left on device (sandbox: the program's directory is full)", fspath(path))
        elif event in write_events or event in list_events:
            roots = (work,) if event in write_events else reads
            for a in args:
                if isinstance(a, (str, bytes)) or hasattr(a, "__fspath__"):
                    if not inside(resolve(a), roots):
                        deny(f"{event}({fspath(a)!r})")
    sys.addaudithook(hook)

import json as _json, runpy as _runpy
_cfg = _json.loads(sys.argv[1])
del sys.argv[:2]
if _cfg["libraries"]:  # links to the libraries it was given (read-only), and nothing else of their site directory
    sys.path.append(__import__("os").path.join(__import__("os").getcwd(), ".libraries"))
if _cfg["net"] or _cfg["fs"]:
    for _name in _cfg["preload"]:  # imported before the guard, which refuses what they do at import (ctypes)
        try:
            __import__(_name)
        except ImportError:
            pass
    _sandbox_guard(_cfg)
_globals = {}
if _cfg["tables"]:  # the tables it was given, as DataFrames: each a global of its name, all in ``tables``
    import pandas as _pandas
    _globals["tables"] = {_name: _pandas.read_csv(_path) for _name, _path in _cfg["tables"].items()}
    _globals.update(_globals["tables"])
    del _pandas
del _json, _cfg, _sandbox_guard
_runpy.run_path(sys.argv[0], init_globals=_globals, run_name="__main__")
"""


class SetupError(Exception):
    """A kernel refused an isolation step."""


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {err})")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _locked_flags(path: str) -> int:
    """Per-mount flags of ``path``'s mount that a user namespace may not clear on remount."""
    f = os.statvfs(path).f_flag
    pairs = (
        (os.ST_NOSUID, MS_NOSUID),
        (os.ST_NODEV, MS_NODEV),
        (os.ST_NOEXEC, MS_NOEXEC),
        (os.ST_NOATIME, MS_NOATIME),
        (os.ST_NODIRATIME, MS_NODIRATIME),
        (os.ST_RELATIME, MS_RELATIME),
    )
    return sum(ms for st, ms in pairs if f & st)


def _bind(src: str, dst: str, *, readonly: bool, extra: int = 0) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "a"):
            pass
    _mount(src, dst, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | _locked_flags(src) | extra | (MS_RDONLY if readonly else 0)
    _mount(None, dst, None, flags)


def _unshare(flags: int, what: str) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), f"unshare({what})")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_namespaces(report: dict) -> bool:
    """Unshare every namespace; returns whether a PID namespace was created (the caller must fork)."""
    base = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() != 0:
        uid, gid = os.geteuid(), os.getegid()
        _unshare(CLONE_NEWUSER, "user")
        # Map our own ids to themselves: the process keeps its capabilities inside the new namespace
        # until exec, where a non-zero uid loses them.
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        report["user_namespace"] = True
    _unshare(base, "mount, net, ipc, uts")
    report["network"] = "namespace"
    try:
        _unshare(CLONE_NEWPID, "pid")
    except SetupError as err:
        report["notes"].append(str(err))
        return False
    return True


def interpreter_paths() -> list[str]:
    """Where this interpreter (the one the program gets) keeps its binary and standard library."""
    paths = [sys.base_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)]
    return [os.path.realpath(p) for p in paths]


def readonly_paths(system: list[str]) -> list[str]:
    """``system`` plus the interpreter's paths, without paths already inside an earlier (real) directory."""
    chosen: list[str] = []
    for path in [*system, *interpreter_paths()]:
        covered = any(path.startswith(c.rstrip("/") + "/") for c in chosen if not os.path.islink(c))
        if not covered and path not in chosen and os.path.lexists(path):
            chosen.append(path)
    return chosen


def build_root(cfg: dict, report: dict) -> None:
    """A minimal read-only root with a copy of the work directory read-write at ``/sandbox`` (``private_dir``); then
    pivot into it."""
    root = cfg["rootdir"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in readonly_paths(cfg["ro_paths"]):
        if os.path.islink(path) and os.path.dirname(path) == "/":
            os.symlink(os.readlink(path), root + path)  # /bin -> usr/bin on merged-/usr systems
        elif os.path.exists(path):
            _bind(path, root + path, readonly=True)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(f"/dev/{name}", f"{root}/dev/{name}", readonly=False, extra=MS_NOSUID)
    private_dir(cfg["workdir"], f"{root}/sandbox", cfg["disk"], cfg.get("drop_to"))
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(platform.machine().lower())
    if number is not None:
        _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
        report["filesystem"] = "pivot_root"
    else:
        os.chroot(".")
        report["filesystem"] = "chroot"
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/sandbox")


def private_dir(src: str, dst: str, disk: dict, owner: list | None) -> None:
    """The program's directory at ``dst``: a tmpfs of ``disk["bytes"]`` and ``disk["inodes"]`` holding a copy of
    ``src`` (links kept as links), owned by ``owner`` (uid, gid) as root. What the program writes past it fails with
    ENOSPC: the host's disk never sees it, and the memory it takes is bounded."""
    os.makedirs(dst, exist_ok=True)
    ids = (int(owner[0]), int(owner[1])) if owner and os.geteuid() == 0 else None
    options = f"size={disk['bytes']},nr_inodes={disk['inodes']},mode=0700"
    _mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, options + (f",uid={ids[0]},gid={ids[1]}" if ids else ""))
    for dirpath, dirnames, filenames in os.walk(src):
        target = os.path.join(dst, os.path.relpath(dirpath, src))
        for name in [*dirnames, *filenames]:
            path, copy = os.path.join(dirpath, name), os.path.join(target, name)
            if os.path.islink(path):
                os.symlink(os.readlink(path), copy)
            elif os.path.isdir(path):
                os.mkdir(copy, os.stat(path).st_mode & 0o7777)
            else:
                shutil.copy2(path, copy, follow_symlinks=False)
            if ids:
                os.chown(copy, *ids, follow_symlinks=False)


def set_limits(limits: dict) -> None:
    """Resource limits of the program (soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL)."""
    table = {
        "cpu_seconds": resource.RLIMIT_CPU,
        "memory_bytes": resource.RLIMIT_AS,
        "file_size_bytes": resource.RLIMIT_FSIZE,
        "max_processes": resource.RLIMIT_NPROC,
        "max_open_files": resource.RLIMIT_NOFILE,
    }
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which in table.items():
        value = limits.get(key)
        if value is None:
            continue
        hard = value + 1 if key == "cpu_seconds" else value
        _, ceiling = resource.getrlimit(which)  # a hard limit the user set (ulimit) cannot be raised: kept
        if ceiling != resource.RLIM_INFINITY:
            hard = min(hard, ceiling)
            value = min(value, hard)
        resource.setrlimit(which, (value, hard))


def relay(pid: int) -> NoReturn:
    """Wait for the PID-namespace init and leave with its status (re-raising the signal that killed it)."""
    leave_as(_wait(pid))


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def leave_as(status: int) -> NoReturn:
    """Exit the way the process with wait ``status`` did (re-raising the signal that killed it)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def die_with(parent: int) -> None:
    """SIGKILL when ``parent`` dies (asked again after each change of credentials, which clears the request);
    leave at once if it is gone already."""
    _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(LAUNCH_FAILED)


def supervise(cfg: dict, base: str) -> int:
    """Fork; return the supervisor's pid in the child (which goes on to become the program), never return in the
    parent, the supervisor.

    The supervisor gets SIGHUP when the process that started it dies (``cfg["parent_pid"]``, the run: its
    parent-death signal) and SIGTERM when the runner stops the program at its wall-clock limit. Either way it
    SIGKILLs the child and waits for it and for a PID namespace's init (reparented to the supervisor, a child
    subreaper, when the relay between them died first); after SIGHUP nobody is left to read the results, so it
    also deletes ``base`` (the sandbox's directory) and kills its process group."""
    killed: list[int] = []
    child = 0

    def stop(signum: int, _: object) -> None:
        killed.append(signum)  # SIGHUP may come more than once: each thread of the dying run hands it on
        if child:
            with contextlib.suppress(ProcessLookupError):  # reaped already
                os.kill(child, signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    # SIGHUP rather than SIGTERM: the death of the run's thread is told apart from the runner's timeout
    _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGHUP), 0, 0, 0)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    supervisor = os.getpid()
    if os.getppid() != cfg["parent_pid"]:  # the run died before the request above took effect
        killed.append(signal.SIGHUP)
    else:
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
            die_with(supervisor)
            return supervisor
        if killed:  # told to stop while forking
            os.kill(child, signal.SIGKILL)
    os.close(cfg["report_fd"])
    status = _wait(child) if child else 0
    if killed:  # the program may have left a PID namespace's init behind its relay: wait for the teardown
        deadline = time.monotonic() + TEARDOWN_WAIT
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.01)
            except ChildProcessError:
                break
    if signal.SIGHUP in killed:  # the run is gone: nobody reads the results or cleans up
        shutil.rmtree(base, ignore_errors=True)
        os.killpg(os.getpgrp(), signal.SIGKILL)
    leave_as(status)


def fail(message: str) -> None:
    os.write(2, f"sandbox setup failed: {message}\n".encode())
    os._exit(SETUP_FAILED)


def main() -> None:
    with open(sys.argv[1]) as fh:
        cfg = json.load(fh)
    report_fd = cfg["report_fd"]
    os.set_inheritable(report_fd, False)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    supervisor = supervise(cfg, os.path.dirname(os.path.abspath(sys.argv[1])))
    report: dict = {
        "network": "shared",
        "filesystem": "shared",
        "pid_namespace": False,
        "user_namespace": False,
        "uid": os.geteuid(),
        "guard": False,
        "notes": [],
    }
    mode = cfg["namespaces"]
    in_mount_ns = False
    if mode != "off":
        try:
            if enter_namespaces(report):
                die_with(supervisor)  # a new user namespace changed our credentials
                pid = os.fork()
                if pid:
                    os.close(report_fd)
                    # The runner's timeout: kill the namespace's init; the kernel then kills everything
                    # else in it before our wait returns, so nothing outlives the run.
                    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
                    relay(pid)
                report["pid_namespace"] = True
                # Set before anything else can go wrong, so a killed launcher takes us down too.
                _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            in_mount_ns = True
        except SetupError as err:
            if mode == "require":
                fail(str(err))
            report["notes"].append(str(err))
            die_with(supervisor)
    if in_mount_ns:
        try:
            build_root(cfg, report)
        except (SetupError, OSError) as err:
            if mode == "require":
                fail(str(err))
            report["notes"].append(f"filesystem isolation: {err}")
            report["filesystem"] = "shared"
            os.chdir(cfg["workdir"])
    else:
        os.chdir(cfg["workdir"])
    drop = cfg.get("drop_to")
    if drop and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(drop[1])
        os.setuid(drop[0])
        report["uid"] = drop[0]
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if report["pid_namespace"]:  # our parent, the relay, is outside the namespace: getppid() says 0
        _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)  # setuid cleared the earlier setting
    else:
        die_with(supervisor)
    guard = cfg["guard"]
    net_guard = guard == "on" or (guard == "auto" and report["network"] != "namespace")
    fs_guard = guard == "on" or (guard == "auto" and report["filesystem"] == "shared")
    report["guard"] = net_guard or fs_guard
    if net_guard and report["network"] == "shared":
        report["network"] = "guard"
    if fs_guard and report["filesystem"] == "shared":
        report["filesystem"] = "guard"
    env = dict(cfg["env"], HOME=os.getcwd(), TMPDIR=os.getcwd())
    set_limits(cfg["limits"])
    os.write(report_fd, json.dumps(report).encode() + b"\n")  # closed by exec (not inheritable)
    libraries = cfg["libraries"]
    guard_cfg = json.dumps({"net": net_guard, "fs": fs_guard, "read_roots": [*interpreter_paths(), "/dev", *libraries,
                                                                             *cfg["mounts"]],
                            "libraries": bool(libraries), "preload": cfg["preload"], "tables": cfg["tables"],
                            "disk": cfg["disk"]})
    argv = [cfg["python"], "-I", "-S", "-B", "-X", "utf8", "-c", BOOTSTRAP, guard_cfg, cfg["program"]]
    for action, paths in (("import", libraries), ("read", cfg["mounts"])):  # what the program would fail to open
        for path in paths:
            if not os.access(path, os.R_OK | (os.X_OK if os.path.isdir(path) else 0)):
                cannot(report_fd, action, path, "Permission denied", f"cannot read {path} as uid {os.geteuid()}")
    try:
        os.execve(cfg["python"], argv, env)
    except OSError as err:
        cannot(report_fd, "run", cfg["python"], err.strerror or str(err),
               f"cannot start {cfg['python']} as uid {os.geteuid()}: {err}")


def cannot(report_fd: int, action: str, path: str, reason: str, message: str) -> NoReturn:
    """The program cannot be started as this uid (the interpreter not run, a library or mount not read): say so on
    the report pipe and exit without running it."""
    failure = {"exec_error": message, "action": action, "path": path, "reason": reason, "uid": os.geteuid()}
    os.write(report_fd, json.dumps(failure).encode() + b"\n")
    os._exit(SETUP_FAILED)


if __name__ == "__main__":
    try:
        main()
    except BaseException as err:  # before exec (after it this code is gone): the program never ran
        os.write(2, f"sandbox launcher failed: {type(err).__name__}: {err}\n".encode())
        os._exit(LAUNCH_FAILED)
