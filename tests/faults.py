"""Fault injection for tests: misbehaving OpenAI-compatible servers in their own process, real read-only
or full filesystems (a tmpfs of a few hundred KiB; mounting needs root, so those tests skip without it), and FIFOs
where a run's files belong."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Server:
    """A running ``structbench.testing.openai_server``."""

    url: str
    port: int
    log: Path

    def answered(self) -> list[str]:
        """Digests of the requests answered normally, in order (one per line of the request log)."""
        return [line.split()[0] for line in self.log.read_text().splitlines()] if self.log.exists() else []


def child_pythonpath() -> str:
    """``PYTHONPATH`` for a CLI subprocess: the tests (plugins such as ``toybench``), then the source being tested, so
    a checkout other than the installed one (a git worktree) runs its own code."""
    import structbench

    tests = Path(__file__).resolve().parent
    return os.pathsep.join([str(tests), str(Path(structbench.__file__).resolve().parents[1])])


def send_sigint(proc: subprocess.Popen[str]) -> None:
    """Ctrl-C to ``proc``, first failing with the reason when it cannot handle one: a process started with SIGINT
    ignored or blocked (inherited from this test process, whatever an earlier test in it left) ignores it for good,
    and the test would fail later on an exit code or a run that went on to its end."""
    import signal

    status = dict(line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                  if ":" in line) if sys.platform.startswith("linux") else {}
    bit = 1 << (signal.SIGINT - 1)
    blocked_here = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    for field in ("SigIgn", "SigBlk"):
        assert not int(status.get(field, "0"), 16) & bit, (
            f"the child ({field}) cannot handle SIGINT; this test process: handler "
            f"{signal.getsignal(signal.SIGINT)!r}, blocked {blocked_here}")
    proc.send_signal(signal.SIGINT)


def free_port() -> int:
    """A port free a moment ago (for servers that must be given one, such as Ray's head); prefer ``serve``'s own
    port or ``closed_port``, which no other test process can take in between."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port where nothing listens: held bound (not listening) meanwhile, so a connection is refused and no
    server of a parallel test can take it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@contextmanager
def serve(tmp_path: Path, *args: str, port: int | None = None) -> Iterator[Server]:
    """The loopback server with extra ``args`` (``--fault no-choices`` ...) on ``port``, or on a port the OS gives it
    (then ``Server.port`` says which; serve again with ``port=`` for a server that comes back at the same address)."""
    log = tmp_path / "requests.log"
    port_file = tmp_path / f"port-{uuid.uuid4().hex}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "structbench.testing.openai_server", "--port", str(port or 0), "--log", str(log),
         "--port-file", str(port_file), *args],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(400):
            if port_file.exists() or proc.poll() is not None:
                break
            time.sleep(0.025)
        assert port_file.exists(), "the loopback server did not start"
        bound = int(port_file.read_text())
        yield Server(f"http://127.0.0.1:{bound}/v1", bound, log)
    finally:
        proc.kill()
        proc.wait()
        port_file.unlink(missing_ok=True)


@functools.cache
def can_mount() -> bool:
    """True when this process may mount a tmpfs (root with CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        return False
    probe = Path(f"/tmp/.structbench-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)],
                            capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", str(probe)], check=True)
        return ok
    finally:
        probe.rmdir()


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``256k``) mounted at ``path``: a real filesystem that fills up."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(path))
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def remount(path: Path, options: str) -> None:
    """Change a ``small_disk``'s mount options: ``ro``, ``rw``, ``size=1m`` ..."""
    _mount("-o", f"remount,{options}", str(path))


def fill(disk: Path, leave: int = 0) -> None:
    """Take every free block of ``disk`` but ``leave`` bytes."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
        os.close(fd)


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """Make the existing file or directory ``path`` read-only for this machine's user: a read-only bind mount
    when we are root (root ignores file modes), ``chmod`` otherwise."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    if not can_mount():
        pytest.skip("a read-only bind mount needs root with CAP_SYS_ADMIN")
    _mount("--bind", str(path), str(path))
    try:
        _mount("-o", "remount,bind,ro", str(path))
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@contextmanager
def fifo(path: Path) -> Iterator[list[int]]:
    """A FIFO at ``path`` (in place of the file there) for the block; a reader that waits in ``open()`` for a writer
    is released (it reads an empty file) instead of hanging the test, each release counted in the list yielded."""
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    released: list[int] = []
    done = threading.Event()

    def release() -> None:
        while not done.wait(0.2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader waits
                continue
            released.append(1)
            os.close(fd)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield released
    finally:
        done.set()
        thread.join()


def spy_folder_syncs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each folder ``core.atomic.fsync_dir`` is given, in order (the real sync still done)."""
    from structbench.core import atomic

    synced: list[Path] = []
    real = atomic.fsync_dir

    def spy(path: Path) -> None:
        synced.append(Path(path))
        real(path)

    monkeypatch.setattr(atomic, "fsync_dir", spy)
    return synced
