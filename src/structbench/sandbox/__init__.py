"""Run untrusted Python (model-written programs) in a separate, isolated, resource-limited process.

``run_python(code)`` writes ``code`` to ``main.py`` in a fresh private directory and runs it with the
base interpreter as ``python -I -S -B`` (standard library only, no inherited environment), through a
launcher (``_launcher.py``) that isolates itself before ``exec``. ``run_python(code, libraries=("pandas",))``
lets it import installed libraries too (read-only, see ``sandbox.libraries``), and ``tables={"df": csv_text}``
hands it tables, loaded as pandas DataFrames before it starts; ``mounts={"db.sqlite": path}`` shows it a host file
read-only without a copy:

- **Resources**: RLIMIT_CPU, RLIMIT_AS (memory), RLIMIT_FSIZE (file size, captured output included),
  RLIMIT_NPROC (processes), RLIMIT_NOFILE, no core dumps; a wall-clock timeout kills the process group. In
  namespaces the private directory is a tmpfs of ``disk_mb`` and ``max_files`` beyond what the program was given:
  writing past them fails with ENOSPC (the program's own ``OSError``), never on the host's disk.
- **Processes**: the program is PID 1 of its own PID namespace, so everything it forks dies with it;
  no-new-privileges is set. The launcher's supervisor, which stays outside, dies with the process that
  called ``run_python`` (parent-death signal, ``kill -9`` included), kills the program, waits for its
  namespace to empty and deletes the private directory; every process between it and the program dies
  with the one before it.
- **Network**: an empty network namespace (loopback down): every connect fails, host loopback included.
- **Filesystem**: a mount namespace whose root is a read-only tmpfs with read-only binds of ``/usr``,
  ``/bin``, ``/lib*``, two files of ``/etc``, the interpreter's prefix, the given libraries' files and mounts,
  ``/dev/{null,zero,full,random,urandom}``, and a copy of the private directory read-write at ``/sandbox`` (the
  size-limited tmpfs; ``pivot_root``, old root detached). Captured stdout and stderr stay outside it, on the host.
  Nothing else of the host (``/tmp``, ``/home``, ``/root``, the repository, ``/proc``) is visible.
- **Identity**: as root the program runs as a fresh unprivileged uid/gid per run (no account, no
  capabilities); as a normal user, inside a user namespace that maps the user's own uid, so it keeps no
  capabilities after ``exec``.
- **Environment**: only PATH, LANG/LC_ALL, HOME/TMPDIR (the private directory) and a run id.

Where the kernel refuses namespaces (containers without CAP_SYS_ADMIN, disabled unprivileged user
namespaces), ``namespaces="auto"`` degrades with a ``SandboxWarning`` and installs in-process audit-hook
guards instead: sockets, process creation, ctypes, writes outside the private directory and reads
outside it, the standard library and the given libraries raise PermissionError (the libraries named are
imported before the guards, which would refuse the ctypes some of them load). Audit hooks are not a
security boundary (native code can bypass them); ``namespaces="require"`` refuses to run without namespaces.
Without namespaces the program writes to the private directory on the host's disk: the guard refuses to open a file
for writing (ENOSPC) once it holds ``disk_mb`` or ``max_files``, which bounds Python's writes but not native code's.

A sandbox that cannot run programs on this machine at all raises ``SandboxUnavailableError``, a ``MachineError`` (the
run stops at its first sample, exit 2): namespaces required and refused, or, as root without namespaces, an
interpreter, library or mounted file the program's fresh uid cannot run or read (under ``/root``, say); its message
says what to change (``remedy``).

Each program's isolation, in one word (``namespaces``, ``guard``, ``off`` or ``none``: ``levels``), is kept per
process; a run takes the weakest its programs got into its manifest (``sandbox.isolation``).
"""

from structbench.sandbox.config import (
    MAX_MEGABYTES,
    MAX_SECONDS,
    GuardMode,
    Isolation,
    Limits,
    NamespaceMode,
    SandboxResult,
)
from structbench.sandbox.runner import (
    SandboxError,
    SandboxUnavailableError,
    SandboxWarning,
    interpreter,
    probe,
    quietly,
    run_python,
)

__all__ = [
    "MAX_MEGABYTES",
    "MAX_SECONDS",
    "GuardMode",
    "Isolation",
    "Limits",
    "NamespaceMode",
    "SandboxError",
    "SandboxResult",
    "SandboxUnavailableError",
    "SandboxWarning",
    "interpreter",
    "probe",
    "quietly",
    "run_python",
]
