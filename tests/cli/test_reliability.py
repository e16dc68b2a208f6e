"""What a server, a disk or a key can do to a run, as a user meets it: the real CLI against loopback servers that
misbehave, and real read-only or full filesystems (tmpfs mounts; those tests skip without root)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from faults import child_pythonpath, fill, read_only, remount, serve, small_disk
from patience import patience
from structbench.testing.cli import Invocation, invoke
from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""
KEY = "key-Zx81-never-in-any-file"
"""Not shaped like an OpenAI key, so only the registered-secret redaction can remove it."""
FINISHED = {0, 3}
"""Exit codes of a run that finished with some failed samples (3 once failed samples set the exit code)."""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
               STRUCTBENCH_CACHE=str(tmp_path / "cache"), OPENAI_API_KEY=KEY)
    env.update(extra)
    return env


def sb(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Invocation:
    """``structbench ARGS`` run to its end in this process (``testing.cli.invoke``)."""
    proc = invoke(*args, env=env or _env(tmp_path), cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def run_args(url: str, *extra: str, n: int = 6, out: str = "r") -> list[str]:
    return ["run", "-m", "openai:m", "--base-url", url, "-b", "toy", "-n", str(n), "--out", out, "--no-progress",
            *extra]


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def manifest(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "manifest.json").read_text()))


def cached_digests(cache: Path) -> set[str]:
    """Request digests (as the server logs them) of every response in a cache file."""
    with sqlite3.connect(cache) as conn:
        rows = conn.execute("SELECT request FROM responses").fetchall()
    return {request_digest({"messages": json.loads(r[0])["messages_or_prompt"]}) for r in rows}


def spilled_digests(run_dir: Path) -> set[str]:
    path = run_dir / "unsaved-responses.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return {request_digest({"messages": json.loads(json.loads(x)["request"])["messages_or_prompt"]}) for x in lines}


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def test_cli_defaults_match_the_core() -> None:
    from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES
    from structbench.runner import control, session
    from structbench.runner.arguments import RunArguments

    fields = RunArguments.model_fields  # the run command's flags and evaluate's keywords are declared here
    assert fields["max_consecutive_failures"].default == session.MAX_CONSECUTIVE_FAILURES == \
        control.MAX_CONSECUTIVE_FAILURES
    assert fields["max_reply_mb"].default * 2**20 == DEFAULT_MAX_REPLY_BYTES


# -- a bad reply never bricks a run or poisons the cache ------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("content-number", "unusable reply: the content is a JSON number (42), not text"),
        ("null-content", "unusable reply: no content (finish_reason 'stop')"),
        ("null-content-length", "finish_reason 'length': the model used all 4 tokens before writing an answer"),
        ("no-choices", "gave up after 1 try: HTTP 200 but the reply has no choices"),
    ],
)
def test_unusable_replies_are_errors_never_cached_and_sent_again(tmp_path: Path, fault: str, says: str) -> None:
    with serve(tmp_path, "--fault", fault) as bad:
        proc = sb(tmp_path, *run_args(bad.url, "--max-retries", "0"))
    assert proc.returncode in FINISHED
    recs = records(tmp_path / "r")
    assert len(recs) == 6 and all(says in r["error"] for r in recs), recs[0]["error"]
    assert cached_digests(tmp_path / "cache" / "responses.sqlite") == set()
    # The same command against a server that now answers properly: every request is sent (nothing poisoned).
    with serve(tmp_path, "--reply", "yes", port=bad.port) as good:
        assert sb(tmp_path, *run_args(good.url)).returncode == 0
        assert len(set(good.answered())) == 6
    assert [r["error"] for r in records(tmp_path / "r")[6:]] == [None] * 6


def test_content_parts_are_answers(tmp_path: Path) -> None:
    with serve(tmp_path, "--fault", "content-parts", "--reply", "yes") as server:
        assert sb(tmp_path, *run_args(server.url)).returncode == 0
    recs = records(tmp_path / "r")
    assert [r["output"] for r in recs] == ["yes"] * 6 and all(r["error"] is None for r in recs)
    assert len(cached_digests(tmp_path / "cache" / "responses.sqlite")) == 6


@pytest.mark.parametrize("fault", ["not-json", "truncated"])
def test_garbage_with_status_200_is_retried_within_the_run(tmp_path: Path, fault: str) -> None:
    with serve(tmp_path, "--fault", fault, "--fault-times", "3", "--reply", "yes") as server:
        proc = sb(tmp_path, *run_args(server.url, "--max-retries", "3", "-c", "1"))
    assert proc.returncode == 0, proc.stderr
    assert all(r["error"] is None and r["output"] == "yes" for r in records(tmp_path / "r"))


# -- failure is loud ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server_args", "says"),
    [
        (["--fault", "echo-key"], "(HTTP 401)"),
        (["--served-model", "gpt-real"], "(HTTP 404); the last one: http://127.0.0.1"),
        (["--fail-every", "1", "--fail-status", "500"], "(HTTP 500)"),
    ],
    ids=["401", "404", "500"],
)
def test_the_circuit_breaker_stops_a_run_where_every_call_fails(tmp_path: Path, server_args: list[str], says: str
                                                                 ) -> None:
    with serve(tmp_path, *server_args) as server:
        proc = sb(tmp_path, *run_args(server.url, "--max-retries", "1", n=200))
    assert proc.returncode == 4
    line = one_line(proc.stderr)
    assert line.startswith("error: stopped early: the last 10 model calls all failed ") and says in line
    assert "run the same command to continue" in line and proc.stdout == ""  # no believable row of zeros
    run = manifest(tmp_path / "r")
    assert run["status"] == "stopped" and run["stop_reason"] == line.removeprefix("error: ")
    assert not (tmp_path / "r" / "metrics.json").exists()
    assert 10 <= len(records(tmp_path / "r")) < 30  # stopped within a wave of concurrency 8, not after 200
    assert KEY not in proc.stderr and all(KEY not in p.read_text() for p in (tmp_path / "r").iterdir())


@pytest.mark.parametrize("concurrency", ["8", "256"])
def test_a_wrong_port_stops_at_once_with_one_line_and_no_scores(tmp_path: Path, concurrency: str) -> None:
    """Nothing listening at --base-url and no call ever answered: the first refused connection stops the run (exit
    4), unretried, with one line and no table; 256 requests in flight in one process make no harness error either
    (the replica's rest once overflowed)."""
    from faults import closed_port

    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        proc = sb(tmp_path, *run_args(url, "-c", concurrency, "--workers", "1", "-b", "toy:big", n=600))
    assert proc.returncode == 4, proc.stderr
    line = one_line(proc.stderr)
    assert line.startswith(f"error: stopped at once: nothing answers there (http://127.0.0.1:{port}/v1/"
                           "chat/completions: gave up after 1 try: ClientConnectorError")
    assert "no model call has been answered, so nothing was scored" in line and "--base-url" in line
    assert proc.stdout == "" and not (tmp_path / "r" / "metrics.json").exists()  # no row of zeros
    assert manifest(tmp_path / "r")["status"] == "stopped"
    assert len(records(tmp_path / "r")) <= int(concurrency)  # the first wave at most, never the 600
    assert not [r for r in records(tmp_path / "r") if r["error_kind"] == "harness"]


def test_unwritable_out_is_one_line_and_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    with serve(tmp_path) as server, read_only(tmp_path / "ro"):
        proc = sb(tmp_path, *run_args(server.url, out="ro/run"))
        assert server.answered() == []
    assert proc.returncode == 5
    line = one_line(proc.stderr)
    assert line.startswith("error: --out ro/run: cannot be written (ro: ") and line.endswith(")")
    assert not (tmp_path / "ro" / "run").exists()


def test_out_under_a_file_is_a_usage_error_and_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with serve(tmp_path) as server:
        proc = sb(tmp_path, *run_args(server.url, out="f/run"))
        assert server.answered() == []
    assert proc.returncode == 2
    assert one_line(proc.stderr) == "error: --out f/run: cannot be written: f is a file, not a folder"


def test_sigterm_ends_the_run_with_143_and_it_resumes(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "0.2", "--reply", "yes") as server:
        args = run_args(server.url, "-c", "2", n=40)
        proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=_env(tmp_path), cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while len(server.answered()) < 6 or not records(tmp_path / "r"):  # some finished (slow under load)
            assert proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=patience(60))
        assert proc.returncode == 143, err
        assert one_line(err) == "terminated (SIGTERM); finished samples are saved in r, the same command resumes"
        run = manifest(tmp_path / "r")
        assert run["status"] == "interrupted" and run["stop_reason"] == "terminated (SIGTERM)"
        finished = {r["id"] for r in records(tmp_path / "r")}
        assert 0 < len(finished) < 40
        time.sleep(0.5)  # the server answers (and logs) what was in flight at the signal
        before = len(server.answered())
        assert sb(tmp_path, *args).returncode == 0
        again = server.answered()[before:]
    assert len(records(tmp_path / "r")) == 40 and manifest(tmp_path / "r")["status"] == "complete"
    assert len(again) <= 40 - len(finished)  # only what was not finished (calls in flight were answered from cache)


def _sandboxed(run_id: str) -> list[int]:
    """Processes of one sandboxed program (its ``STRUCTBENCH_SANDBOX_RUN``) still alive."""
    mark = f"STRUCTBENCH_SANDBOX_RUN={run_id}".encode()
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                alive.append(int(entry.name))
        except OSError:
            continue
    return alive


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sandboxed_programs_die_with_a_killed_run(tmp_path: Path, shared_datasets: Path, workers: str) -> None:
    """``kill -9`` of a ``-s pot`` run whose programs sleep: each program dies at once (not at its 30 s wall limit)
    and its ``structbench-sandbox-*`` directory is deleted."""
    program = "```python\nimport time\ntime.sleep(60)\nans = True\n```"
    sandboxes = tmp_path / "tmp"
    sandboxes.mkdir()
    sandboxes.chmod(0o755)
    tmp_path.chmod(0o755)  # the programs' uid passes through
    env = _env(tmp_path, TMPDIR=str(sandboxes))
    with serve(tmp_path, "--reply", program) as server:
        args = run_args(server.url, "-b", "scitab", "-s", "pot", "-o", "pot_timeout=30", "--data-dir",
                        str(shared_datasets), "-c", "4", "--workers", workers, n=8)
        run = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=env, cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            started: list[str] = []
            deadline = time.monotonic() + patience(60)
            while len(started) < 4 and time.monotonic() < deadline:
                started = [p.name for p in sandboxes.iterdir() if _sandboxed(p.name)]
                time.sleep(0.05)
            assert len(started) == 4, "four programs were not running"
        finally:
            run.kill()
            run.wait()
        for _ in range(100):
            if not any(_sandboxed(r) for r in started) and not any(sandboxes.iterdir()):
                break
            time.sleep(0.05)
    assert [r for r in started if _sandboxed(r)] == [] and list(sandboxes.iterdir()) == []


def test_damaged_local_data_is_refused_unless_modified_on_purpose(tmp_path: Path, shared_datasets: Path) -> None:
    """A ``sci_tab.json`` missing 300 claims and an RFQA table emptied to its header: exit 2 naming the file; with
    ``--allow-modified-data`` the run goes on and its manifest lists the file."""
    data = tmp_path / "data"
    claims = data / "scitab" / "dataset" / "sci_tab.json"
    claims.parent.mkdir(parents=True)
    released = json.loads((shared_datasets / "scitab" / "dataset" / "sci_tab.json").read_text())
    claims.write_text(json.dumps(released[:-300]))
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "--data-dir", str(data), "--out", "s", "--no-progress")
    assert proc.returncode == 2 and not (tmp_path / "s" / "samples.jsonl").exists()
    assert one_line(proc.stderr).startswith(f"error: {claims}: differs from the scitab release")
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "--data-dir", str(data), "--allow-modified-data",
              "--out", "s", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "| 904 |" in proc.stdout and "--allow-modified-data" in proc.stderr
    assert [m["path"] for m in manifest(tmp_path / "s")["modified_data"]] == ["dataset/sci_tab.json"]
    assert manifest(tmp_path / "s")["config"]["allow_modified_data"] is True

    shutil.copytree(shared_datasets / "relationalfactqa", data / "relationalfactqa")
    table = data / "relationalfactqa" / "dataset" / "data" / "galois" / "flight_2" / "usa_airline_companies.csv"
    table.write_text(table.read_text().splitlines()[0] + "\n")
    proc = sb(tmp_path, "run", "-m", "oracle", "-b", "rfqa", "-n", "3", "--data-dir", str(data), "--out", "q")
    assert proc.returncode == 2 and one_line(proc.stderr).startswith(f"error: {table}: differs from the")


def test_a_run_finished_after_exit_3_reads_as_one_record_per_sample(tmp_path: Path) -> None:
    """The documented "exit 3, run the same command again": samples.jsonl keeps the failed attempts, and every reader
    takes each sample's last line, so compare accepts the run and the report lists each sample once."""
    with serve(tmp_path, "--reply", "yes", "--fail-every", "3", "--fail-status", "500") as server:
        args = run_args(server.url, "--max-retries", "0", "--max-consecutive-failures", "0", n=12)
        assert sb(tmp_path, *args).returncode == 3
    with serve(tmp_path, "--reply", "yes", port=server.port):
        assert sb(tmp_path, *args).returncode == 0
    lines = records(tmp_path / "r")
    assert len(lines) > 12 and {r["id"] for r in lines} == {f"toy-{i}" for i in range(12)}  # attempts kept as history
    compared = sb(tmp_path, "compare", "r", "r", "--out", "c.json")
    assert compared.returncode == 0, compared.stderr
    comparisons = json.loads((tmp_path / "c.json").read_text())["comparisons"]
    assert [c["n"] for c in comparisons if c["breakdown"] == "overall"] == [12]
    assert sb(tmp_path, "report", "r", "--out", "r/report.html").returncode == 0
    page = (tmp_path / "r" / "report.html").read_text()
    assert all(page.count(f'"id": "toy-{i}"') == 1 for i in range(12))


# -- a failed cache write never throws away a paid answer -----------------------------------------------------


def test_read_only_cache_stops_the_run_keeping_every_answer(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "responses.sqlite"
    with serve(tmp_path, "--reply", "yes", "--latency", "0.02") as server:
        assert sb(tmp_path, *run_args(server.url, out="warm", n=2)).returncode == 0  # the cache exists
        with read_only(cache):
            proc = sb(tmp_path, *run_args(server.url, "-c", "4", n=30))
            assert proc.returncode == 5
            line = one_line(proc.stderr)
            assert "cannot be written: attempt to write a readonly database" in line
            assert "are kept in r/unsaved-responses.jsonl" in line and "--on-cache-error continue" in line
            paid = set(server.answered()[2:])
            # Every answer the server gave is kept (the records hold them too), and the run stopped early.
            assert paid and spilled_digests(tmp_path / "r") == paid
            recs = records(tmp_path / "r")
            assert all(r["error"] is None for r in recs) and len(recs) == len(paid) + 2 < 30
            assert manifest(tmp_path / "r")["status"] == "interrupted"
            # Still read-only: the next run refuses to start rather than lose them.
            proc = sb(tmp_path, *run_args(server.url, "-c", "4", n=30))
            assert proc.returncode == 5 and "still holds answers" in one_line(proc.stderr)
        before = len(server.answered())
        assert sb(tmp_path, *run_args(server.url, "-c", "4", n=30)).returncode == 0
        resent = set(server.answered()[before:])
    assert not resent & paid  # no paid answer asked for twice
    assert paid <= cached_digests(cache) and not (tmp_path / "r" / "unsaved-responses.jsonl").exists()
    assert len({r["id"] for r in records(tmp_path / "r")}) == 30


def test_going_on_without_the_cache_when_asked(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "responses.sqlite"
    with serve(tmp_path, "--reply", "yes") as server:
        assert sb(tmp_path, *run_args(server.url, out="warm", n=1)).returncode == 0
        with read_only(cache):
            proc = sb(tmp_path, *run_args(server.url, "--on-cache-error", "continue", n=12))
    assert proc.returncode == 0
    assert one_line(proc.stderr).startswith("warning: response cache ")
    assert "going on without the response cache (--on-cache-error continue)" in proc.stderr
    assert len(records(tmp_path / "r")) == 12 and not (tmp_path / "r" / "unsaved-responses.jsonl").exists()


def test_full_cache_disk_keeps_every_answer(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "4m") as disk, serve(tmp_path, "--reply", "yes") as server:
        env = _env(tmp_path, STRUCTBENCH_CACHE=str(disk))
        assert sb(tmp_path, *run_args(server.url, out="warm", n=1), env=env).returncode == 0
        fill(disk, leave=64 * 1024)  # room to open the cache (its shared-memory file) and a few commits
        proc = sb(tmp_path, *run_args(server.url, "-c", "4", "-b", "toy:big", n=120), env=env)
        assert proc.returncode == 5
        assert "cannot be written: database or disk is full" in one_line(proc.stderr)
        paid = set(server.answered()[1:])
        cached = cached_digests(disk / "responses.sqlite")
        assert paid and paid <= cached | spilled_digests(tmp_path / "r")
        (disk / "filler").unlink()
        before = len(server.answered())
        assert sb(tmp_path, *run_args(server.url, "-c", "4", "-b", "toy:big", n=120), env=env).returncode == 0
        assert not set(server.answered()[before:]) & paid
    assert len({r["id"] for r in records(tmp_path / "r")}) == 120


def test_full_run_disk_stops_with_one_line_and_resumes(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "48k") as disk, serve(tmp_path, "--reply", "yes") as server:
        args = run_args(server.url, "-c", "4", "-b", "toy:big", n=200, out="disk/r")
        proc = sb(tmp_path, *args)
        assert proc.returncode == 5
        line = one_line(proc.stderr)
        assert line.startswith("error: disk/r/samples.jsonl: cannot be written: No space left on device"), line
        run = manifest(disk / "r")  # rewritten in place on the full disk
        assert run["status"] == "interrupted" and "No space left on device" in run["stop_reason"]
        done = records(disk / "r")  # every line whole
        assert 10 < len(done) < 200
        paid = set(server.answered())
        remount(disk, "size=2m")
        before = len(server.answered())
        assert sb(tmp_path, *args).returncode == 0
        assert not set(server.answered()[before:]) & paid  # answers whose record failed came from the cache
        assert len({r["id"] for r in records(disk / "r")}) == 200


def test_everything_on_one_full_disk(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "96k") as disk, serve(tmp_path, "--reply", "yes") as server:
        env = _env(tmp_path, STRUCTBENCH_CACHE=str(disk / "cache"))
        args = run_args(server.url, "-c", "4", "-b", "toy:big", n=200, out="disk/r")
        proc = sb(tmp_path, *args, env=env)
        assert proc.returncode == 5
        assert "cannot be written" in one_line(proc.stderr)
        assert manifest(disk / "r")["status"] == "interrupted"
        remount(disk, "size=4m")
        assert sb(tmp_path, *args, env=env).returncode == 0
        assert len({r["id"] for r in records(disk / "r")}) == 200


def test_one_full_disk_counts_the_answers_it_could_not_keep(tmp_path: Path) -> None:
    """The cache and the run directory on one full disk: an answer that fits in neither is lost (the docs say so).
    Every answer the server gave is in the cache or the spill file, or counted in the manifest's lost_responses and
    the exit line."""
    with small_disk(tmp_path / "disk", "1m") as disk:
        env = _env(tmp_path, STRUCTBENCH_CACHE=str(disk / "cache"))
        with serve(tmp_path, "--fail-every", "1", "--fail-status", "500") as failing:  # the run and its cache exist
            args = run_args(failing.url, "-c", "16", "-b", "toy:big", "--max-retries", "0", n=300, out="disk/r")
            assert sb(tmp_path, *args, "--max-consecutive-failures", "1", env=env).returncode == 4
        fill(disk, leave=64 * 1024)
        with serve(tmp_path, "--reply", "yes", port=failing.port) as server:
            proc = sb(tmp_path, *args, env=env)
            paid = set(server.answered())
        assert proc.returncode == 5, proc.stderr
        lost = manifest(disk / "r")["sessions"][-1].get("lost_responses", 0)
        (disk / "filler").unlink()  # room for SQLite to open the cache and read it
        kept = cached_digests(disk / "cache" / "responses.sqlite") | spilled_digests(disk / "r")
    assert paid and len(paid - kept) == lost, (len(paid), len(kept), lost, proc.stderr)
    assert lost and re.search(rf"\b{lost}\b[^;]*could not be written anywhere", one_line(proc.stderr))


def test_a_foreign_write_lock_delays_writes_not_requests(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "responses.sqlite"
    with serve(tmp_path, "--reply", "yes", "--latency", "0.1") as server:
        assert sb(tmp_path, *run_args(server.url, out="warm", n=1)).returncode == 0
        args = run_args(server.url, "--timeout", "1.5", "-c", "4", "-b", "toy:big", n=80)
        run = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=_env(tmp_path), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while len(server.answered()) < 12:  # requests in flight at staggered times when the lock is taken
            time.sleep(0.01)
        held = tmp_path / "held"
        locker = subprocess.Popen([sys.executable, "-c", (
            "import sqlite3, time, pathlib\n"
            f"c = sqlite3.connect({str(cache)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            f"pathlib.Path({str(held)!r}).touch()\n"
            "time.sleep(4)\n"
            "c.execute('COMMIT')\n")])
        _, err = run.communicate(timeout=patience(120))
        locker.wait()
        answered = server.answered()
    assert held.exists() and run.returncode == 0, err
    assert all(r["error"] is None for r in records(tmp_path / "r"))  # no request timed out during the lock
    prompts = {request_digest({"messages": r["prompt"]}) for r in records(tmp_path / "r")}
    assert len(answered) == len(set(answered)) and set(answered) == prompts  # nor was any sent twice


# -- secrets and sizes ----------------------------------------------------------------------------------------


def _all_text(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in root.rglob("*") if p.is_file())


def test_no_secret_in_any_file_or_output(tmp_path: Path) -> None:
    password, basic = "pa55-word-very-secret", "YWxpY2U6cGE1NS13b3JkLXZlcnktc2VjcmV0"  # base64 of alice:<password>
    outputs = []
    with serve(tmp_path, "--fault", "echo-key") as server:
        outputs.append(sb(tmp_path, *run_args(server.url, "--max-retries", "0", n=3)))
        with_password = server.url.replace("http://", f"http://alice:{password}@")
        no_key = _env(tmp_path, OPENAI_API_KEY="")
        outputs.append(sb(tmp_path, *run_args(with_password, "--max-retries", "0", n=3, out="p"), env=no_key))
        resumed = sb(tmp_path, "run", "--resume", "p", env=no_key)
        assert resumed.returncode == 2 and "give --base-url again" in resumed.stderr
        outputs.append(sb(tmp_path, "run", "--resume", "p", "--base-url", with_password, "--no-progress", env=no_key))
    assert all(o.returncode in FINISHED for o in outputs)
    assert "Incorrect API key provided: [REDACTED]" in records(tmp_path / "r")[0]["error"]
    assert manifest(tmp_path / "p")["config"]["base_url"] == server.url.replace("http://", "http://alice:[REDACTED]@")
    for run in ("r", "p"):
        outputs.append(sb(tmp_path, "report", run, "--out", f"{run}/report.html"))
        assert (tmp_path / run / "report.html").exists()
    everything = _all_text(tmp_path) + "".join(o.stdout + o.stderr for o in outputs)
    for secret in (KEY, password, basic):
        assert secret not in everything


def test_no_piece_of_a_key_that_a_cut_body_splits(tmp_path: Path) -> None:
    """A 401 that echoes the key where the 300-byte excerpt of the body ends: no 12 characters of it in a row in
    stderr, samples.jsonl, manifest.json (the breaker's stop reason) or report.html."""
    key = "hf_" + "Tq8Wz3Lm5Rk7Xv2Nb9Yc4Hd6Jf1Gs0Pa"
    env = _env(tmp_path, OPENAI_API_KEY=key)
    with serve(tmp_path, "--fault", "echo-key-cut") as server:
        stopped = sb(tmp_path, *run_args(server.url, "--max-retries", "0", "--max-consecutive-failures", "2", n=3),
                     env=env)
        finished = sb(tmp_path, *run_args(server.url, "--max-retries", "0", "--max-consecutive-failures", "0", n=3),
                      env=env)
    assert (stopped.returncode, finished.returncode) == (4, 3), stopped.stderr + finished.stderr
    report = sb(tmp_path, "report", "r", "--out", "r/report.html", env=env)
    assert "HTTP 401: " in records(tmp_path / "r")[0]["error"] and (tmp_path / "r" / "report.html").exists()
    everything = "".join([_all_text(tmp_path / "r"), *(p.stdout + p.stderr for p in (stopped, finished, report))])
    assert "HTTP 401" in manifest(tmp_path / "r")["sessions"][0].get("stop_reason", everything)

    assert not [key[i : i + 12] for i in range(len(key) - 11) if key[i : i + 12] in everything]


def test_reply_size_is_capped(tmp_path: Path) -> None:
    with serve(tmp_path, "--fault", "huge-chunked") as server:  # 20 MiB, without a length to check first
        wrapper = (
            "import resource, subprocess, sys\n"
            "code = subprocess.run(sys.argv[1:]).returncode\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.exit(code)\n"
        )
        proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "structbench",
                               *run_args(server.url, "--max-retries", "0", "--max-consecutive-failures", "0", n=20)],
                              capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, timeout=patience(300))
    assert proc.returncode in FINISHED, proc.stderr
    recs = records(tmp_path / "r")
    assert len(recs) == 20 and all("the reply is larger than 16 MiB (--max-reply-mb" in r["error"] for r in recs)
    assert (tmp_path / "r" / "samples.jsonl").stat().st_size < 100_000
    peak_mib = int(proc.stdout.split()[-1]) / 1024
    assert peak_mib < 260, peak_mib  # ~60 MiB of interpreter and at most 16 MiB per call in flight


def test_a_wrong_port_stops_before_any_data_is_loaded_when_the_model_list_is_asked(tmp_path: Path,
                                                                                   shared_datasets: Path) -> None:
    """SKA-Bench asks the server for the model's context before it builds its contexts: a refused connection there
    stops the run at once, naming the model list, with nothing loaded, written or scored."""
    from faults import closed_port
    from structbench.testing.cli import invoke

    with closed_port() as port:
        proc = invoke("run", "-m", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1", "-b", "skabench",
                      "-n", "2", "--data-dir", str(shared_datasets), "--out", "r", "--no-progress",
                      env=_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 4 and proc.stdout == ""
    assert one_line(proc.stderr).startswith(f"error: stopped at once: nothing answers there (http://127.0.0.1:{port}"
                                            "/v1/models: ClientConnectorError")
    assert not (tmp_path / "r").exists()
