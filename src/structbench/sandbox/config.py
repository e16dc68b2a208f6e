"""What a sandboxed run may use (``Limits``) and what came back (``SandboxResult``, ``Isolation``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

NamespaceMode = Literal["auto", "require", "off"]
"""``auto``: use Linux namespaces where the kernel allows, else degrade with a warning; ``require``: fail
(``SandboxUnavailableError``) without them; ``off``: never try (resource limits, clean environment and
in-process guards only)."""

GuardMode = Literal["auto", "on", "off"]
"""In-process audit-hook guards: ``auto`` turns them on for whatever the namespaces did not isolate."""


MAX_SECONDS = 86_400
"""The longest CPU or wall-clock limit a program may get (a day)."""
MAX_MEGABYTES = 1 << 20
"""The largest memory, file-size or disk limit (1 TiB): a larger one overflows what ``setrlimit`` takes."""
MAX_COUNT = 1 << 20
"""The most processes, open files or files written (Linux refuses more open files than this by default)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed program, checked when made (``ValueError`` naming the field): a limit the
    kernel would refuse fails every program in the launcher, before it runs."""

    cpu_seconds: int = 5
    """CPU time (RLIMIT_CPU): SIGXCPU at the limit, SIGKILL one second later."""
    wall_seconds: float = 10.0
    """Wall-clock time, after which the whole process group (and PID namespace) is killed."""
    memory_mb: int = 512
    """Address space (RLIMIT_AS) per process; allocations beyond it raise MemoryError. The worst case
    for the whole run is ``memory_mb * max_processes``: lower ``max_processes`` when memory matters."""
    file_size_mb: int = 16
    """Largest file the program may write (RLIMIT_FSIZE), its captured stdout and stderr included."""
    max_processes: int = 8
    """Processes of the sandbox's uid (RLIMIT_NPROC); as root each run gets a uid of its own, so 1 means
    "no fork at all". As a normal user the limit is added to the user's current process count."""
    max_open_files: int = 64
    """Open file descriptors (RLIMIT_NOFILE)."""
    max_output_bytes: int = 1 << 20
    """How much of stdout and of stderr is read back (the rest is reported as truncated)."""
    disk_mb: int = 128
    """All the program may write in its directory together, beyond what it was given (``main.py``, files, tables):
    in namespaces its directory is a tmpfs of that size, so writing past it fails with ENOSPC (an ``OSError`` of the
    program's own). tmpfs pages are the host's memory: the worst case of a run is ``memory_mb * max_processes +
    disk_mb``. Without namespaces the audit-hook guard refuses to open a file for writing (ENOSPC) once the directory
    holds this much: files opened before may still grow to ``file_size_mb`` each, and native code is not watched."""
    max_files: int = 4096
    """Files and folders the program may create in its directory (the tmpfs's inodes; the guard counts them the same
    way as ``disk_mb``)."""

    def __post_init__(self) -> None:
        bounds: dict[str, tuple[float, float]] = {
            "cpu_seconds": (1, MAX_SECONDS), "memory_mb": (1, MAX_MEGABYTES), "file_size_mb": (0, MAX_MEGABYTES),
            "max_processes": (1, MAX_COUNT), "max_open_files": (3, MAX_COUNT), "max_output_bytes": (0, 1 << 40),
            "disk_mb": (1, MAX_MEGABYTES), "max_files": (1, MAX_COUNT),
        }
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"sandbox limit {name}={value!r}: expected a whole number from {low} to {high}")
        if not 0 < self.wall_seconds <= MAX_SECONDS:  # also refuses NaN
            raise ValueError(f"sandbox limit wall_seconds={self.wall_seconds!r}: expected seconds above 0, at most "
                             f"{MAX_SECONDS}")

    def rlimits(self, extra_processes: int = 0) -> dict[str, int]:
        """The values the launcher passes to ``setrlimit``."""
        return {
            "cpu_seconds": self.cpu_seconds,
            "memory_bytes": self.memory_mb << 20,
            "file_size_bytes": self.file_size_mb << 20,
            "max_processes": self.max_processes + extra_processes,
            "max_open_files": self.max_open_files,
        }


@dataclass(frozen=True)
class Isolation:
    """What the launcher actually achieved for one run (reported by the launcher itself)."""

    network: str
    """``namespace`` (own network namespace, no interfaces up), ``guard`` (audit hook) or ``shared``."""
    filesystem: str
    """``pivot_root``/``chroot`` (minimal read-only root), ``guard`` (audit hook) or ``shared``."""
    pid_namespace: bool
    """The program is PID 1 of its own PID namespace: everything it started dies with it."""
    user_namespace: bool
    uid: int
    """The uid the program runs as (outside any user namespace)."""
    guard: bool
    """Whether in-process audit-hook guards were installed."""
    notes: tuple[str, ...] = ()
    """Steps the kernel refused, with the reason."""

    @property
    def complete(self) -> bool:
        """Kernel-level isolation of network, filesystem and processes."""
        return self.network == "namespace" and self.filesystem in ("pivot_root", "chroot") and self.pid_namespace

    @classmethod
    def from_report(cls, report: dict[str, Any]) -> Isolation:
        return cls(
            network=str(report["network"]),
            filesystem=str(report["filesystem"]),
            pid_namespace=bool(report["pid_namespace"]),
            user_namespace=bool(report["user_namespace"]),
            uid=int(report["uid"]),
            guard=bool(report["guard"]),
            notes=tuple(str(n) for n in report.get("notes", ())),
        )

    def describe(self) -> str:
        parts = [f"network={self.network}", f"filesystem={self.filesystem}", f"pid_namespace={self.pid_namespace}"]
        parts.append(f"uid={self.uid}")
        if self.guard:
            parts.append("audit-hook guard")
        return ", ".join(parts) + (f" ({'; '.join(self.notes)})" if self.notes else "")


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of one program."""

    stdout: str
    stderr: str
    returncode: int | None
    """Exit status; negative when a signal ended it (as in ``subprocess``)."""
    timed_out: bool
    """Killed at the wall-clock limit."""
    seconds: float
    isolation: Isolation | None
    """None when the program never started (setup failed)."""
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        """Exited normally with status 0."""
        return self.returncode == 0 and not self.timed_out

    @property
    def signal(self) -> str | None:
        """Name of the signal that ended the program (SIGXCPU for the CPU limit, SIGKILL ...)."""
        import signal

        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def status(self) -> str:
        """A short description: ``ok``, ``timeout``, ``SIGXCPU``, ``exit 1`` ..."""
        if self.timed_out:
            return "timeout"
        if self.signal:
            return self.signal
        return "ok" if self.returncode == 0 else f"exit {self.returncode}"
