"""The sandbox against hostile programs, with kernel namespaces and in the degraded (guard-only) mode."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import structbench
from patience import patience
from sandbox.modes import degraded_python
from structbench.sandbox import (
    Limits,
    SandboxError,
    SandboxResult,
    SandboxWarning,
    probe,
    run_python,
)
from structbench.sandbox import runner as sandbox_runner

FAST = Limits(cpu_seconds=2, wall_seconds=4, memory_mb=256, file_size_mb=1, max_processes=8)


def run(code: str, mode: dict[str, Any], limits: Limits = FAST, **kw: Any) -> SandboxResult:
    return run_python(textwrap.dedent(code), limits=limits, **mode, **kw)


def outlived(run_id: str) -> list[int]:
    """Processes of the sandboxed run ``run_id`` still alive a moment after it returned (a killed process is gone once
    its parent reaps it). Only this run's: other test workers run sandboxed programs at the same time."""
    deadline = time.monotonic() + patience(5)
    while (found := running(run_id)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_runs_a_program_with_files_and_stdin(mode: dict[str, Any]) -> None:
    result = run(
        """
        import sys
        print(open("data/in.txt").read().strip(), sys.stdin.read().strip())
        open("out.txt", "w").write("inside is fine")
        print(open("out.txt").read())
        """,
        mode,
        files={"data/in.txt": "hello"},
        stdin="world",
    )
    assert result.ok, result.stderr
    assert result.stdout.split("\n")[:2] == ["hello world", "inside is fine"]
    assert result.isolation is not None


def test_private_directory_is_deleted(mode: dict[str, Any]) -> None:
    result = run("import os; print(os.environ['STRUCTBENCH_SANDBOX_RUN']); open('f', 'w').write('x')", mode)
    assert result.ok, result.stderr
    assert not (Path(tempfile.gettempdir()) / result.stdout.strip()).exists()


def test_infinite_loop_is_stopped_by_the_cpu_limit(mode: dict[str, Any]) -> None:
    result = run("while True:\n    pass\n", mode, Limits(cpu_seconds=1, wall_seconds=30))
    assert not result.ok and not result.timed_out  # the CPU limit, not the wall clock, ended it
    assert result.signal in ("SIGXCPU", "SIGKILL")


def test_sleeping_program_is_stopped_by_the_wall_clock(mode: dict[str, Any]) -> None:
    result = run("import time; time.sleep(60)", mode, Limits(wall_seconds=1))
    assert result.timed_out and result.status() == "timeout"
    assert result.seconds < patience(20)


def test_fork_bomb_is_contained(mode: dict[str, Any]) -> None:
    code = """
    import os
    print(os.environ["STRUCTBENCH_SANDBOX_RUN"], flush=True)
    while True:
        try:
            os.fork()
        except OSError:
            pass
    """
    result = run(code, mode, Limits(cpu_seconds=2, wall_seconds=1, max_processes=8))
    assert not result.ok and result.seconds < patience(20)
    assert outlived(result.stdout.split()[0]) == []


def test_process_count_is_limited(mode: dict[str, Any]) -> None:
    code = """
    import os, time
    made = 0
    for _ in range(50):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        made += 1
    print(made)
    """
    result = run(code, mode, Limits(wall_seconds=4, max_processes=6))
    assert result.ok, result.stderr
    if mode["namespaces"] == "off":  # the degraded guard refuses fork altogether
        assert int(result.stdout) == 0
    else:
        assert 0 < int(result.stdout) < 6


def test_detached_children_die_with_the_program(mode: dict[str, Any]) -> None:
    if mode["namespaces"] == "off":
        pytest.skip("without a PID namespace a detached child could outlive the process group")
    code = """
    import os, time
    print(os.environ["STRUCTBENCH_SANDBOX_RUN"], flush=True)
    if os.fork() == 0:
        os.setsid()
        time.sleep(30)
    print("parent done")
    """
    result = run(code, mode, Limits(wall_seconds=25))
    assert result.ok and result.seconds < min(patience(20), 29)  # did not wait for the 30 s sleeper
    assert outlived(result.stdout.split()[0]) == []


def running(run_id: str) -> list[int]:
    """Processes of one sandboxed run (``STRUCTBENCH_SANDBOX_RUN``) still alive."""
    mark = f"STRUCTBENCH_SANDBOX_RUN={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


CALLER = """
import sys
from structbench.sandbox import Limits, run_python
run_python("import time\\nwhile True:\\n    time.sleep(0.1)", limits=Limits(wall_seconds=60), **eval(sys.argv[1]))
"""


def test_the_program_and_its_directory_go_with_a_killed_caller(mode: dict[str, Any]) -> None:
    """``kill -9`` of the process that called ``run_python``: the program dies long before its wall-clock limit and
    its private directory is deleted (the launcher's supervisor dies with the caller and cleans up)."""
    tmp = Path(tempfile.mkdtemp(prefix="structbench-killed-caller-"))
    tmp.chmod(0o755)  # the degraded mode's unprivileged uid passes through it
    src = Path(structbench.__file__).resolve().parents[1]
    caller = subprocess.Popen([sys.executable, "-c", CALLER, repr(mode)],
                              env=dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(src)))
    try:
        run_ids: list[str] = []
        for _ in range(400):
            run_ids = [p.name for p in tmp.iterdir()]
            if run_ids and running(run_ids[0]):
                break
            time.sleep(0.05)
        assert run_ids and running(run_ids[0]), "the program did not start"
        caller.kill()
        caller.wait()
        for _ in range(100):
            if not running(run_ids[0]) and not any(tmp.iterdir()):
                break
            time.sleep(0.05)
        assert running(run_ids[0]) == [] and list(tmp.iterdir()) == []
    finally:
        caller.kill()
        caller.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def test_memory_bomb_raises_memory_error(mode: dict[str, Any]) -> None:
    code = """
    hoard = []
    while True:
        hoard.append(bytearray(16 << 20))
    """
    result = run(code, mode, Limits(memory_mb=128, wall_seconds=8))
    assert result.returncode == 1
    assert "MemoryError" in result.stderr


def test_huge_file_and_output_are_capped(mode: dict[str, Any]) -> None:
    code = """
    import sys
    try:
        with open("big", "wb") as fh:
            fh.write(b"x" * (4 << 20))
        print("WROTE")
    except OSError as err:
        print("REFUSED", err.errno)
    """
    limits = Limits(file_size_mb=1, wall_seconds=4)
    result = run(code, mode, limits)
    assert "WROTE" not in result.stdout
    flood = run("import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n", mode, limits)
    assert not flood.ok
    assert len(flood.stdout) <= limits.max_output_bytes


FILL = """
import os
written = 0
try:
    for i in range(COUNT):
        with open(f"f{i}", "wb") as fh:
            fh.write(b"x" * SIZE)
        written += SIZE
finally:
    print("WRITTEN", written)
"""
"""Writes COUNT files of SIZE bytes; an error of the program's own (ENOSPC) ends it with a traceback."""


def test_the_total_written_is_capped_by_disk_mb(mode: dict[str, Any]) -> None:
    """Files each under ``file_size_mb`` filled the host's disk without bound (3 GB within the default limits); past
    ``disk_mb`` the program now gets ENOSPC, its own error, not the harness's (in namespaces from the tmpfs, in the
    degraded mode from the guard when it opens one more file)."""
    limits = Limits(file_size_mb=1, disk_mb=4, wall_seconds=10)
    result = run(FILL.replace("COUNT", "40").replace("SIZE", str(1 << 20)), mode, limits)
    assert result.returncode == 1 and "No space left on device" in result.stderr, result.stderr
    written = int(result.stdout.split()[-1])
    assert 3 << 20 <= written <= 5 << 20  # the guard looks at each open: the last file may add file_size_mb


def test_writing_under_disk_mb_succeeds_and_what_it_was_given_does_not_count(mode: dict[str, Any]) -> None:
    limits = Limits(file_size_mb=1, disk_mb=3, wall_seconds=10)
    given = {f"given/{i}.bin": b"y" * (1 << 20) for i in range(5)}  # 5 MiB given, more than disk_mb
    code = FILL.replace("COUNT", "2").replace("SIZE", str(1 << 20)) + "print(os.path.getsize('given/4.bin'))\n"
    result = run(code, mode, limits, files=given)
    assert result.ok, result.stderr
    assert result.stdout.split() == ["WRITTEN", str(2 << 20), str(1 << 20)]


def test_the_number_of_files_is_capped_by_max_files(mode: dict[str, Any]) -> None:
    code = """
    import errno, os
    made = 0
    try:
        for i in range(1000):
            open(f"f{i}", "w").close()
            made += 1
    except OSError as err:
        print(errno.errorcode[err.errno], made)
    """
    result = run(code, mode, Limits(max_files=50, wall_seconds=10))
    assert result.ok, result.stderr
    reason, made = result.stdout.split()
    assert reason == "ENOSPC" and 45 <= int(made) <= 50


def test_network_is_unreachable(mode: dict[str, Any]) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    code = f"""
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"leak")
        print("CONNECTED")
    except OSError as err:
        print("BLOCKED", type(err).__name__, err)
    """
    try:
        result = run(code, mode)
        assert result.ok, result.stderr
        assert result.stdout.startswith("BLOCKED"), result.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_cannot_read_outside_its_directory(mode: dict[str, Any], tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-4711")
    secret.chmod(0o644)
    repo_file = Path(structbench.__file__).resolve()
    code = f"""
    import os
    for path in [{str(secret)!r}, {str(repo_file)!r}, "/etc/hostname", "/proc/1/environ"]:
        try:
            print("READ", path, open(path).read()[:40])
        except OSError as err:
            print("DENIED", path, type(err).__name__)
    try:
        os.chdir("/")
        print("READ relative", open("etc/hostname").read()[:40])
    except OSError as err:
        print("DENIED relative", type(err).__name__)
    """
    result = run(code, mode)
    assert result.ok, result.stderr
    assert "TOP-SECRET-4711" not in result.stdout
    assert "READ" not in result.stdout, result.stdout


def test_cannot_write_outside_its_directory(mode: dict[str, Any], tmp_path: Path) -> None:
    tmp_path.chmod(0o777)  # even a world-writable directory must stay out of reach
    targets = [tmp_path / "evil.txt", Path(tempfile.gettempdir()) / f"evil-{os.getpid()}.txt"]
    code = f"""
    import os
    for path in {[str(t) for t in targets]!r} + ["../evil.txt", "/evil.txt", "/usr/evil.txt"]:
        try:
            with open(path, "w") as fh:
                fh.write("pwned")
            print("WROTE", path)
        except OSError as err:
            print("DENIED", path, type(err).__name__)
    """
    result = run(code, mode)
    assert result.ok, result.stderr
    assert "WROTE" not in result.stdout, result.stdout
    assert not any(t.exists() for t in targets)


def test_environment_secrets_are_not_inherited(mode: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-secret-0123456789")
    monkeypatch.setenv("HF_TOKEN", "hf_fake_secret")
    code = f"""
    import os
    print(sorted(os.environ))
    print(dict(os.environ))
    for pid in ({os.getpid()}, os.getppid()):
        try:
            print(open(f"/proc/{{pid}}/environ", "rb").read())
        except OSError as err:
            print("DENIED", type(err).__name__)
    """
    result = run(code, mode)
    assert result.ok, result.stderr
    assert "sk-fake-secret" not in result.stdout and "hf_fake_secret" not in result.stdout
    assert "OPENAI_API_KEY" not in result.stdout
    names = eval(result.stdout.splitlines()[0])
    assert set(names) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "STRUCTBENCH_SANDBOX_RUN"}


def test_as_unprivileged_user_namespaces_still_apply() -> None:
    """Run the sandbox itself as an ordinary user (nobody): user namespaces replace root's powers."""
    setpriv, python = shutil.which("setpriv"), degraded_python()
    src = Path(structbench.__file__).resolve().parents[1]
    if os.geteuid() != 0 or not setpriv or not python:
        pytest.skip("needs root, setpriv and a system python3 to impersonate an ordinary user")
    tmp_path = Path(tempfile.mkdtemp(prefix="structbench-as-user-"))  # pytest's tmp_path is private to root
    script = tmp_path / "as_user.py"
    script.write_text(
        "from structbench.sandbox import probe, run_python\n"
        "iso = probe()\n"
        'r = run_python(\'import socket\\ntry:\\n socket.create_connection(("127.0.0.1", 9), 1)\\n'
        "except OSError as e: print(\"BLOCKED\")', namespaces='auto')\n"
        "print(iso.user_namespace, iso.network, iso.filesystem, r.stdout.strip())\n"
    )
    tmp_path.chmod(0o755)
    script.chmod(0o644)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)}
    try:
        proc = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python, str(script)],
            capture_output=True,
            text=True,
            env=env,
            timeout=patience(60),
        )
    finally:
        shutil.rmtree(tmp_path)
    if proc.returncode != 0 and ("Permission denied" in proc.stderr or "No module named" in proc.stderr):
        pytest.skip(f"the source tree is not readable by nobody: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    user_ns, network, filesystem, outcome = proc.stdout.split()
    assert outcome == "BLOCKED"
    if user_ns == "True":
        assert (network, filesystem) == ("namespace", "pivot_root")
    else:  # unprivileged user namespaces disabled here: the guard must have taken over
        assert network == "guard"


def test_sandbox_does_not_need_this_process_environment() -> None:
    assert sys.executable  # the launcher runs the base interpreter, not the venv's
    result = run_python("import sys; print(sys.flags.isolated, sys.flags.no_site)")
    assert result.stdout.split() == ["1", "1"]


NO_USERNS = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
python, script, src = sys.argv[1:4]
r1, w1 = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        os._exit(97)
    os.write(w1, b"x")
    os.read(r2, 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as f:  # per namespace: the host keeps its own
        f.write("0")
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    os.execve(python, [python, script], {"PATH": "/usr/bin:/bin", "PYTHONPATH": src})
os.read(r1, 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as f:
        f.write("0 0 65536")
os.write(w2, b"x")
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""

DEGRADED_RUN = """
import warnings
from structbench.sandbox import SandboxUnavailableError, SandboxWarning, run_python
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r = run_python("import socket\\ntry:\\n socket.create_connection(('127.0.0.1', 9), 1)\\n"
                   "except OSError as e: print('BLOCKED', e)")
print(r.isolation.network, r.isolation.filesystem, r.isolation.guard)
print(r.stdout.strip())
print(sum(issubclass(w.category, SandboxWarning) for w in caught))
try:
    run_python("print(1)", namespaces="require")
    print("RAN")
except SandboxUnavailableError as err:
    print("REFUSED", err)
"""


def test_without_namespaces_auto_degrades_with_a_warning_and_require_refuses() -> None:
    """An ordinary user on a machine that forbids user namespaces (simulated per namespace, as root)."""
    python = degraded_python()
    src = Path(structbench.__file__).resolve().parents[1]
    if os.geteuid() != 0 or python is None:
        pytest.skip("needs root (to simulate the machine) and a python3 an ordinary user can run")
    tmp = Path(tempfile.mkdtemp(prefix="structbench-no-userns-"))
    try:
        tmp.chmod(0o755)
        (tmp / "no_userns.py").write_text(NO_USERNS)
        (tmp / "run.py").write_text(DEGRADED_RUN)
        proc = subprocess.run(
            [sys.executable, str(tmp / "no_userns.py"), python, str(tmp / "run.py"), str(src)],
            capture_output=True,
            text=True,
            timeout=patience(60),
        )
    finally:
        shutil.rmtree(tmp)
    if proc.returncode == 97 or "No module named" in proc.stderr:
        pytest.skip(f"cannot simulate here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "guard guard True"
    assert lines[1].startswith("BLOCKED sandbox: socket")
    assert lines[2] == "1"
    assert lines[3].startswith("REFUSED") and "unshare(user)" in lines[3]


def test_guard_cannot_be_switched_off_from_inside(mode: dict[str, Any], tmp_path: Path) -> None:
    """The audit-hook guard's state is out of reach: no gc walk, no hook-frame mutation, no raw fork_exec."""
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    code = f"""
    results = []
    try:
        import gc
        for obj in gc.get_objects():
            if isinstance(obj, dict) and "net" in obj and "fs" in obj:
                obj["net"] = obj["fs"] = False
        results.append("GC-WALKED")
    except PermissionError:
        results.append("GC-DENIED")
    try:
        open("/etc/hostname").read()
    except PermissionError as err:
        frame = err.__traceback__
        while frame.tb_next:
            frame = frame.tb_next
        try:
            for value in frame.tb_frame.f_back.f_locals.values() if frame.tb_frame.f_back else ():
                for method in ("clear", "append"):
                    try:
                        getattr(value, method)(*(("/",) if method == "append" else ()))
                    except (AttributeError, TypeError):
                        pass
        except PermissionError:
            results.append("FRAME-DENIED")
    except OSError:
        pass
    try:
        import _posixsubprocess
        results.append("FORK_EXEC-IMPORTED")
    except (PermissionError, ImportError):
        results.append("FORK_EXEC-DENIED")
    try:
        print(open({str(secret)!r}).read())
    except OSError as err:
        results.append("READ-BLOCKED")
    print(" ".join(results))
    """
    result = run(code, mode)
    assert result.ok, result.stderr
    assert "top secret" not in result.stdout
    assert "READ-BLOCKED" in result.stdout
    if mode.get("namespaces") == "off":
        assert "GC-DENIED" in result.stdout and "FORK_EXEC-DENIED" in result.stdout


HOOK_CODE_SWAP = """
import os
swapped = []
try:
    os.listdir("/")
except PermissionError as err:
    tb = err.__traceback__
    try:
        while tb is not None:
            deny = tb.tb_frame.f_locals.get("deny")
            if deny is not None:
                deny.__code__ = (lambda event: None).__code__
                swapped.append("SWAPPED")
            tb = tb.tb_next
    except PermissionError as refused:
        swapped.append(f"REFUSED {refused}")
try:
    os.listdir("/")
    swapped.append("LISTED")
except PermissionError:
    swapped.append("STILL-DENIED")
try:
    (lambda: None).__defaults__ = (1,)
except PermissionError:
    swapped.append("DEFAULTS-DENIED")
print(" ".join(swapped))
"""


def test_the_guard_s_helpers_cannot_be_reached_through_a_traceback_and_rewritten() -> None:
    """A denied call's traceback led to the hook's frame, whose ``deny`` a program replaced with a function that
    denies nothing: the guard was off, in pure Python (sandbox=off, or auto without namespaces)."""
    python = degraded_python()
    if python is None:
        pytest.skip("no interpreter readable by an unprivileged uid for the degraded mode")
    result = run_python(HOOK_CODE_SWAP, namespaces="off", python=python)
    assert result.ok, result.stderr
    assert result.stdout.split()[:2] == ["REFUSED", "sandbox:"], result.stdout
    assert "object.__getattr__('tb_frame')" in result.stdout
    assert result.stdout.split()[-2:] == ["STILL-DENIED", "DEFAULTS-DENIED"]


def test_one_warning_a_process_for_programs_without_namespaces(monkeypatch) -> None:
    """As root each program runs as a fresh uid, which the warning's key held: one warning a program."""
    python = degraded_python()
    if python is None:
        pytest.skip("no interpreter readable by an unprivileged uid for the degraded mode")
    monkeypatch.setattr(sandbox_runner, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            run_python("pass", namespaces="off", python=python)
    messages = [str(w.message) for w in caught if issubclass(w.category, SandboxWarning)]
    assert len(messages) == 1 and "namespaces are turned off (sandbox=off)" in messages[0], messages


@pytest.mark.parametrize("field, value", [("wall_seconds", 1e308), ("wall_seconds", float("nan")), ("wall_seconds", 0),
                                          ("cpu_seconds", 10**20), ("memory_mb", 1 << 44), ("max_processes", 0),
                                          ("file_size_mb", 2.5), ("disk_mb", 0), ("disk_mb", 1 << 21),
                                          ("max_files", 0), ("max_files", True)])
def test_limits_the_kernel_would_refuse_are_refused_when_made(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"sandbox limit {field}="):
        Limits(**{field: value})


def test_a_launcher_that_never_starts_the_program_raises() -> None:
    """No isolation report means the program never ran: an error of the sandbox, not a program that failed."""
    with pytest.raises(SandboxError, match="the program could not be started: launcher exit status 1"):
        run_python("print(1)", python="/bin/false")


HARD_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # a hard ulimit -v the user set
from structbench.sandbox import Limits, run_python
r = run_python("import resource; print(resource.getrlimit(resource.RLIMIT_AS)[1])",
               limits=Limits(memory_mb=8192), namespaces=sys.argv[1])
print(r.ok, r.stdout.strip(), r.stderr.strip()[-200:])
"""


def test_a_hard_memory_limit_the_user_set_is_kept_not_raised(tmp_path: Path) -> None:
    """Under a hard ``ulimit -v`` below a program's limit, setting that limit failed ("not allowed to raise maximum
    limit") and every program of a run was a harness error; as root it was raised past the user's limit."""
    namespaces = "require" if probe().complete else "off"
    proc = subprocess.run([sys.executable, "-c", HARD_LIMITED, namespaces], capture_output=True, text=True,
                          timeout=patience(60), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ok, hard, *_ = proc.stdout.split()
    assert ok == "True" and int(hard) <= 6 << 30, proc.stdout
