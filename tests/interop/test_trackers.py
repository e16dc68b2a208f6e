"""``run --log-to`` and ``structbench log``: a run logged to MLflow (read back with MLflow's own client, from a SQLite
and a folder store) and to W&B offline (read back from the offline run's files), and a tracker that fails being a
warning that loses nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("mlflow", "mlflow")
require_extra("wandb", "wandb")

from faults import child_pythonpath  # noqa: E402
from structbench.core.errors import UsageError  # noqa: E402
from structbench.interop.trackers import Tracking  # noqa: E402
from structbench.interop.trackers.payload import Payload  # noqa: E402
from structbench.interop.trackers.registry import TrackerEntry  # noqa: E402
from structbench.runfiles.results import MetricsFile  # noqa: E402
from structbench.testing.cli import invoke  # noqa: E402
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread  # noqa: E402
from wandb_files import offline_run, records  # noqa: E402

SECRET = "sk-trackersecret0123456789abcdef"
"""An OpenAI-style key in the environment of every command: nothing logged may hold it."""
USAGE = {"prompt_tokens": 120, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 1},
         "prompt_tokens_details": {"cached_tokens": 20}}
ENTRY = "structfact/generated/few_shot"
"""The metric names' prefix of the run's one entry."""


@pytest.fixture(autouse=True)
def _wandb_stopped() -> Iterator[None]:
    """Stop W&B's service threads after each test: a thread left alive makes later tests' ``fork_map`` (in the same
    worker) run in the caller, and its own tests refuse to start."""
    yield
    if "wandb" in sys.modules:
        sys.modules["wandb"].teardown()


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    return dict(os.environ, STRUCTBENCH_CACHE=str(tmp / "cache"), OPENAI_API_KEY=SECRET, WANDB_DIR=str(tmp),
                WANDB_CONFIG_DIR=str(tmp / "wandb-config"), WANDB_CACHE_DIR=str(tmp / "wandb-cache"),
                WANDB_DATA_DIR=str(tmp / "wandb-data"), **extra)


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """A run of two epochs against the loopback server, logged to a SQLite MLflow store by ``run --log-to`` with
    its samples: (run directory, tracking URI, what the command printed on stderr)."""
    tmp = tmp_path_factory.mktemp("trackers")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    with serve_in_thread(MockOpenAIServer(reply="A", usage=USAGE)) as url:
        done = invoke("run", "-m", "openai:toy", "--base-url", url, "--limit", "6", "--epochs", "2", "--no-progress",
                      "--out", str(tmp / "run"), "--log-to", "mlflow", "--log-option", f"tracking_uri={uri}",
                      "--log-option", "experiment=structbench-tests", "--log-samples", env=_env(tmp),
                      cwd=tmp)  # a SQLite store keeps its artifacts in ./mlruns
    assert done.returncode == 0, done.stderr
    yield tmp / "run", uri, done.stderr


def _mlflow_run(uri: str, experiment: str) -> Any:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    return client, run


def _artifacts(client: Any, run_id: str, path: str | None = None) -> set[str]:
    found: set[str] = set()
    for item in client.list_artifacts(run_id, path):
        found |= _artifacts(client, run_id, item.path) if item.is_dir else {item.path}
    return found


def test_run_log_to_mlflow_reads_back_with_mlflows_client(logged_run: tuple[Path, str, str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir, uri, stderr = logged_run
    client, run = _mlflow_run(uri, "structbench-tests")
    assert f"logged to mlflow: MLflow run {run.info.run_id} in experiment 'structbench-tests'" in stderr
    assert run.info.status == "FINISHED" and run.info.run_name == "run"
    entry = MetricsFile.model_validate_json((run_dir / "metrics.json").read_text()).results[0]
    head, metrics, params = entry.headline, run.data.metrics, run.data.params
    assert entry.epochs is not None and head.ci_low is not None and entry.baselines
    assert metrics[f"{ENTRY}/weighted_f1"] == head.value
    assert (metrics[f"{ENTRY}/weighted_f1_ci_low"], metrics[f"{ENTRY}/weighted_f1_ci_high"]) == (head.ci_low,
                                                                                                 head.ci_high)
    assert metrics[f"{ENTRY}/n"] == entry.n == 6
    assert metrics[f"{ENTRY}/weighted_f1_chance"] == entry.baselines["chance"]
    assert metrics[f"{ENTRY}/weighted_f1_majority"] == entry.baselines["majority"]
    assert all(metrics[f"{ENTRY}/{name}"] == value for name, value in entry.metrics.items())
    history = client.get_metric_history(run.info.run_id, f"{ENTRY}/weighted_f1_epoch")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == list(enumerate(entry.epochs.values))
    # 6 samples x 2 epochs, each call 120 prompt tokens (20 cached) and 3 completion tokens (1 reasoning)
    assert (metrics["usage/calls"], metrics["usage/prompt_tokens"], metrics["usage/completion_tokens"],
            metrics["usage/cached_tokens"], metrics["usage/reasoning_tokens"]) == (12, 1440, 36, 240, 12)
    assert "usage/cost_usd" not in metrics  # no prices: the cost is unknown, never 0
    assert params["model"] == "openai:toy" and params["epochs"] == "2" and params["limit"] == "6"
    assert params["options.structfact.tables"] == "synthetic" and params["backend.model"] == "toy"
    assert run.data.tags["structbench.run_dir"] == str(run_dir.resolve())
    assert "weighted_f1 0.5333" in run.data.tags["mlflow.note.content"]
    assert _artifacts(client, run.info.run_id) == {"structbench/manifest.json", "structbench/metrics.json",
                                                   "structbench/report/report.html", "structbench/samples.json"}
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # load_table searches the runs of the process's tracking URI
    table = client.load_table(run.info.experiment_id, "structbench/samples.json", run_ids=[run.info.run_id])
    assert len(table) == 12 and set(table["epoch"]) == {0, 1} and set(table["gold"]) >= {"YES", "NO"}
    local = Path(client.download_artifacts(run.info.run_id, "structbench/metrics.json"))
    assert json.loads(local.read_text()) == json.loads((run_dir / "metrics.json").read_text())


def test_log_to_an_mlflow_folder_store_and_nothing_secret(logged_run: tuple[Path, str, str], tmp_path: Path) -> None:
    run_dir, _, _ = logged_run
    manifest = json.loads((run_dir / "manifest.json").read_text())
    older = tmp_path / "older"  # a run directory from before redaction, holding the key
    older.mkdir()
    for name in ("metrics.json", "samples.jsonl"):
        (older / name).write_bytes((run_dir / name).read_bytes())
    manifest["config"]["system_prompt"] = f"key {SECRET}"
    (older / "manifest.json").write_text(json.dumps(manifest))
    uri = f"file:{tmp_path / 'mlruns'}"
    done = invoke("log", str(older), "--to", "mlflow", "--log-option", f"tracking_uri={uri}", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{older}: logged to mlflow: MLflow run ")
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    client, run = _mlflow_run(uri, "structbench")
    assert run.data.params["system_prompt"] == "key [REDACTED]"
    assert "structbench/samples.json" not in _artifacts(client, run.info.run_id)  # not asked for
    store = "".join(p.read_text(errors="replace") for p in (tmp_path / "mlruns").rglob("*") if p.is_file())
    assert SECRET not in store and "[REDACTED]" in store


def test_log_to_wandb_offline_writes_the_runs_files(logged_run: tuple[Path, str, str], tmp_path: Path) -> None:
    run_dir, _, _ = logged_run
    done = invoke("log", str(run_dir), "--to", "wandb", "--log-option", "mode=offline", "--log-option",
                  "project=tables", "--log-samples", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    import threading

    assert not [t.name for t in threading.enumerate() if t.name.startswith("Otel")]  # offline reports nothing to W&B
    folder = offline_run(tmp_path)
    assert f"W&B offline run {folder.name.rpartition('-')[2]} in {folder}" in done.stdout
    entry = MetricsFile.model_validate_json((run_dir / "metrics.json").read_text()).results[0]
    found = records(folder)
    assert found.run.project == "tables" and found.run.display_name == "run"
    assert json.loads(found.config["model"]) == "openai:toy" and json.loads(found.config["epochs"]) == "2"
    summary = found.summary
    assert summary[f"{ENTRY}/weighted_f1"] == entry.headline.value
    assert (summary[f"{ENTRY}/weighted_f1_ci_low"], summary[f"{ENTRY}/weighted_f1_ci_high"]) == (
        entry.headline.ci_low, entry.headline.ci_high)
    assert summary[f"{ENTRY}/n"] == 6 and summary["usage/prompt_tokens"] == 1440
    assert summary["samples/_type"] == "table-file" and summary["samples/nrows"] == 12
    assert entry.epochs is not None
    assert [step.get(f"{ENTRY}/weighted_f1_epoch") for step in found.history] == entry.epochs.values
    (artifact,) = [a for a in found.artifacts if a.type == "structbench-run"]
    assert {c.path for c in artifact.manifest.contents} == {"manifest.json", "metrics.json", "report/report.html"}
    (table,) = (folder / "files" / "media" / "table").glob("samples_*.table.json")
    data = json.loads(table.read_text())
    assert data["columns"][:5] == ["benchmark", "variant", "strategy", "cell", "id"] and len(data["data"]) == 12


def test_wandb_logs_run_directories_of_any_name(logged_run: tuple[Path, str, str], tmp_path: Path) -> None:
    """Names W&B refuses for an artifact (another script, an emoji, over 128 characters) are logged under a slug and
    a hash of the name: each its own artifact."""
    import re
    import shutil

    names = ["résultats-日本語-😀", "é" * 120, "a" * 200, "a" * 201]
    for name in names:
        shutil.copytree(logged_run[0], tmp_path / "runs" / name)
    done = invoke("log", *(str(tmp_path / "runs" / name) for name in names), "--to", "wandb", "--log-option",
                  "mode=offline", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    found = [records(folder) for folder in (tmp_path / "wandb").glob("offline-run-*")]
    artifacts = [a.name for run in found for a in run.artifacts if a.type == "structbench-run"]
    assert len(artifacts) == len(set(artifacts)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", name) for name in artifacts), artifacts
    assert {run.run.display_name for run in found} == set(names)


def test_wandb_artifact_names_keep_a_valid_name_and_never_collide() -> None:
    from structbench.interop.trackers.wandb_tracker import artifact_name

    assert artifact_name("run") == "structbench-run"
    assert artifact_name("résultats-日本語-😀").startswith("structbench-resultats-")
    long = [artifact_name("a" * n) for n in (200, 201)]
    assert long[0] != long[1] and all(len(name) <= 128 for name in long)
    assert artifact_name("a b") != artifact_name("a-b")


def test_a_wandb_run_is_not_started_when_the_run_cannot_be_read(logged_run: tuple[Path, str, str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What can fail on structbench's side (the files, the names) fails before the W&B run starts: no half-logged
    offline run is left."""
    from structbench.interop.trackers import wandb_tracker

    for key, value in _env(tmp_path).items():
        if key.startswith("WANDB_"):
            monkeypatch.setenv(key, value)

    class Unreadable(Payload):
        def files(self, folder: Path) -> list[Path]:
            raise OSError("the report cannot be written")

    with pytest.raises(OSError, match="the report cannot be written"):
        wandb_tracker.log(Unreadable(logged_run[0]), {"mode": "offline"})
    assert not list(tmp_path.rglob("offline-run-*"))


def test_the_offline_run_is_written_when_logging_returns(logged_run: tuple[Path, str, str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.finish()`` returns before W&B's service writes the run's transaction log: the service writes it as it
    closes the run's stream, on a message ``finish`` does not wait for (under load the summary was missing when a
    test read the run right after ``evaluate``). Here the service never gets that message, as when it has not
    reached it yet; the run's files are whole when ``log`` returns all the same."""
    from wandb.sdk.lib.service.service_connection import ServiceConnection

    from structbench.interop.trackers import wandb_tracker

    for key, value in _env(tmp_path).items():
        if key.startswith("WANDB_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setattr(ServiceConnection, "inform_finish", lambda self, run_id: None)
    wandb_tracker.log(Payload(logged_run[0]), {"mode": "offline"})
    found = records(offline_run(tmp_path))
    assert found.summary[f"{ENTRY}/n"] == 6 and found.artifacts


def test_logging_leaves_another_active_wandb_run_running(logged_run: tuple[Path, str, str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """W&B is shut down after logging only where the logging set it up and no other run of the process is active: a
    user's own run goes on."""
    import wandb

    from structbench.interop.trackers import wandb_tracker

    for key, value in _env(tmp_path).items():
        if key.startswith("WANDB_"):
            monkeypatch.setenv(key, value)
    mine = wandb.init(project="mine", mode="offline", dir=str(tmp_path), reinit="create_new",
                      settings=wandb.Settings(console="off", x_disable_stats=True, silent=True))
    wandb_tracker.log(Payload(logged_run[0]), {"mode": "offline"})
    mine.log({"still": 1})
    mine.finish()
    assert len(list((tmp_path / "wandb").glob("offline-run-*"))) == 2


def test_logging_keeps_the_wandb_setup_the_caller_made(logged_run: tuple[Path, str, str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller who set W&B up before logging (``wandb.setup``, as ``wandb.login`` does) keeps it: its settings and
    credentials are there after, the same setup; ``wandb.teardown()`` is only for a W&B session structbench's
    logging began. The logged run's files are whole when logging returns all the same."""
    import wandb

    from structbench.interop.trackers import wandb_tracker

    for key, value in _env(tmp_path).items():
        if key.startswith("WANDB_"):
            monkeypatch.setenv(key, value)
    key = "k" * 40
    theirs = wandb.setup(settings=wandb.Settings(project="theirs", api_key=key, silent=True))
    wandb_tracker.log(Payload(logged_run[0]), {"mode": "offline"})
    assert wandb.setup() is theirs and (theirs.settings.project, theirs.settings.api_key) == ("theirs", key)
    found = records(offline_run(tmp_path))
    assert found.summary[f"{ENTRY}/n"] == 6 and found.artifacts


def test_runs_are_written_when_waited_for_without_tearing_wandb_down(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the caller set W&B up, ``_stream_closed`` waits for a finished run's files in place of
    ``wandb.teardown()``: a request the service answers only once it has closed the run's stream. Not waited for,
    most such runs were still being written when ``finish`` returned (the log's last block, with the history step
    and the exit record, not yet written); here each is whole at once."""
    import wandb

    from structbench.interop.trackers.wandb_tracker import _stream_closed

    for key, value in _env(tmp_path).items():
        if key.startswith("WANDB_"):
            monkeypatch.setenv(key, value)
    theirs = wandb.setup(settings=wandb.Settings(mode="offline", silent=True))
    values = {f"m{k}": k for k in range(2000)}
    for _ in range(5):
        run = wandb.init(project="theirs", reinit="create_new",
                         settings=wandb.Settings(console="off", x_disable_stats=True, silent=True))
        run.log(values, step=0)
        run.summary.update(values)
        run.finish()
        _stream_closed(theirs)
        found = records(Path(run.dir).parent)  # the log's last block (the history step, here) is written last
        assert [step.get("m1999") for step in found.history] == [1999] and found.summary.get("m1999") == 1999


def test_a_failing_tracker_is_a_warning_after_the_run(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    bad = f"tracking_uri=sqlite:///{tmp_path / 'a-file' / 'mlflow.db'}"  # a store that cannot be made
    with serve_in_thread(MockOpenAIServer(reply="A")) as url:
        done = invoke("run", "-m", "openai:toy", "--base-url", url, "--limit", "3", "--no-progress", "--out",
                      str(tmp_path / "run"), "--log-to", "mlflow", "--log-option", bad, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "| structfact | generated | few_shot |" in done.stdout  # the table, then the warning
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning: logging to mlflow")]
    assert f"the run is safe in {tmp_path / 'run'}: `structbench log {tmp_path / 'run'} --to mlflow` tries again" \
        in warning
    assert (tmp_path / "run" / "metrics.json").is_file()
    again = invoke("log", str(tmp_path / "run"), "--to", "mlflow", "--log-option", bad, env=_env(tmp_path))
    assert again.returncode == UsageError.exit_code
    assert again.stderr.startswith(f"error: logging {tmp_path / 'run'} to mlflow: ") and again.stderr.count("\n") == 1


def test_an_unreachable_tracking_server_fails_at_once_in_one_line(logged_run: tuple[Path, str, str],
                                                                    tmp_path: Path) -> None:
    """MLflow's client retried a server that accepts no connection for some four minutes, printing urllib3's
    warnings; the connection is tried first."""
    import socket

    with socket.socket() as taken:  # a port nothing listens on
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    done = invoke("log", str(logged_run[0]), "--to", "mlflow", "--log-option",
                  f"tracking_uri=http://127.0.0.1:{port}/", env=_env(tmp_path))
    assert done.returncode == UsageError.exit_code and done.stderr.count("\n") == 1, done.stderr
    assert f"the tracking server http://127.0.0.1:{port}/ cannot be reached" in done.stderr  # (no retry's warnings)


def test_an_unfinished_run_is_a_usage_error_and_nothing_is_logged(logged_run: tuple[Path, str, str],
                                                                    tmp_path: Path) -> None:
    """A run whose last session was killed (status running, an earlier session's metrics.json), stopped, or running
    now is not logged: exit 2, one line naming the run and its state, and no tracker run is made."""
    import fcntl
    import shutil

    run_dir = tmp_path / "stale"
    shutil.copytree(logged_run[0], run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    uri = f"file:{tmp_path / 'mlruns'}"

    def log(status: str, reason: str | None = None) -> str:
        (run_dir / "manifest.json").write_text(json.dumps({**manifest, "status": status, "stop_reason": reason}))
        done = invoke("log", str(run_dir), "--to", "mlflow", "--log-option", f"tracking_uri={uri}",
                      env=_env(tmp_path))
        assert done.returncode == UsageError.exit_code and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"error: {run_dir}: the run is not finished: ")
        return done.stderr

    assert "its last session was killed before it ended (status running)" in log("running")
    assert f"`structbench run --resume {run_dir}` finishes it" in log("running")
    assert "its last session ended stopped: every call failed" in log("stopped", "every call failed")
    with (run_dir / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert "a structbench process is running it now" in log("complete")
    assert not (tmp_path / "mlruns").exists()  # nothing reached the tracker
    done = invoke("log", str(run_dir), "--to", "mlflow", "--log-option", f"tracking_uri={uri}", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr  # finished, the lock released: logged


def test_a_torn_last_line_is_refused_and_nothing_is_logged(logged_run: tuple[Path, str, str], tmp_path: Path) -> None:
    """A crash mid-write leaves the last line of ``samples.jsonl`` without its newline: the records (the per-sample
    table, and the report logged beside the metrics) are not those the metrics count, so ``log`` refuses it as
    ``convert`` does, with ``--log-samples`` or without, to either tracker (exit 2, one line naming the file and line
    and the resume that mends it) before any tracker run is made, and before a good run named before it is logged;
    mended, it is logged."""
    import shutil

    run_dir = tmp_path / "torn"
    shutil.copytree(logged_run[0], run_dir)
    records = run_dir / "samples.jsonl"
    whole = records.read_bytes()
    lines = whole.splitlines(keepends=True)
    records.write_bytes(whole + lines[-1][: len(lines[-1]) // 2])
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    command = ["log", str(run_dir), "--to", "mlflow", "--log-option", f"tracking_uri={uri}"]
    for tracker, option in [("mlflow", f"tracking_uri={uri}"), ("wandb", "mode=offline")]:
        for samples in ([], ["--log-samples"]):
            done = invoke("log", str(run_dir), "--to", tracker, "--log-option", option, *samples, env=_env(tmp_path),
                          cwd=tmp_path)
            assert done.returncode == UsageError.exit_code, (tracker, samples, done.stdout, done.stderr)
            assert done.stderr.splitlines() == [
                f"error: {records}:{len(lines) + 1}: the last line is incomplete (torn by a crash, or being written), "
                f"so the records are not those metrics.json was computed from; `structbench run --resume {run_dir}` "
                "cuts it off and runs that sample again (once no run is writing it), then log it"]
    assert not (tmp_path / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()  # no store, no run
    assert not (tmp_path / "wandb").exists()
    done = invoke("log", str(logged_run[0]), str(run_dir), "--to", "mlflow", "--log-option", f"tracking_uri={uri}",
                  env=_env(tmp_path), cwd=tmp_path)  # every run is read before the first is logged
    assert done.returncode == UsageError.exit_code and f"{records}:{len(lines) + 1}" in done.stderr, done.stderr
    assert "logged to" not in done.stdout and not (tmp_path / "mlflow.db").exists()
    records.write_bytes(whole)  # the torn line cut off, as ``--resume`` does
    done = invoke(*command, "--log-samples", env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_run_that_finished_with_failures_is_logged_and_marked(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with serve_in_thread(MockOpenAIServer(reply="A", fail_every=2, fail_status=400)) as url:
        done = invoke("run", "-m", "openai:toy", "--base-url", url, "--limit", "4", "--no-progress", "--out",
                      str(tmp_path / "run"), "--log-to", "mlflow", "--log-option", f"tracking_uri={uri}",
                      env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 3 and "logged to mlflow: MLflow run " in done.stderr, done.stderr
    _, run = _mlflow_run(uri, "structbench")
    assert run.data.tags["structbench.status"] == "complete" and run.data.tags["structbench.failed_samples"] == "2"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The URL of a server that accepts connections and never answers."""
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(16)
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"


def test_a_tracking_server_that_never_answers_fails_promptly_in_one_line(logged_run: tuple[Path, str, str],
                                                                         tmp_path: Path, silent_server: str) -> None:
    """MLflow's client waited 120 s for each of seven tries at a server that took the connection and never answered;
    W&B's waited 90 s for its run to start. Both are one line within seconds."""
    for tracker, env, message in [
        ("mlflow", {}, f"the tracking server {silent_server}/ accepts connections but does not answer"),
        ("wandb", {"WANDB_BASE_URL": silent_server, "WANDB_API_KEY": "x" * 40, "WANDB_MODE": "online"},
         f"the W&B server {silent_server} accepts connections but does not answer")]:
        started = time.perf_counter()
        options = ["--log-option", f"tracking_uri={silent_server}/"] if tracker == "mlflow" else []
        done = invoke("log", str(logged_run[0]), "--to", tracker, *options, env=_env(tmp_path, **env))
        assert done.returncode == UsageError.exit_code and done.stderr.count("\n") == 1, done.stderr
        assert message in done.stderr and time.perf_counter() - started < 20


def test_mlflows_retries_are_bounded_when_the_server_stops_answering(logged_run: tuple[Path, str, str],
                                                                      tmp_path: Path) -> None:
    """A server that answers its health check, then nothing: MLflow's few retries of the user's timeout (MLflow's
    default: seven of 120 s each), and no urllib3 warning."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    release = threading.Event()

    class HealthOnly(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/health":
                release.wait(60)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"OK")

        do_POST = do_GET

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), HealthOnly)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    uri = f"http://127.0.0.1:{server.server_address[1]}"
    started = time.perf_counter()
    try:
        done = invoke("log", str(logged_run[0]), "--to", "mlflow", "--log-option", f"tracking_uri={uri}",
                      env=_env(tmp_path, MLFLOW_HTTP_REQUEST_TIMEOUT="1"))
    finally:
        release.set()
        server.shutdown()
    assert done.returncode == UsageError.exit_code and done.stderr.count("\n") == 1, done.stderr
    assert time.perf_counter() - started < 30 and "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


def test_settings_are_checked_before_anything_runs(tmp_path: Path) -> None:
    done = invoke("run", "-m", "mock", "--limit", "2", "--out", str(tmp_path / "run"), "--log-to", "mlfow",
                  env=_env(tmp_path))
    assert done.returncode == 2 and "unknown tracker 'mlfow'. Did you mean: mlflow?" in done.stderr
    assert not (tmp_path / "run").exists()
    for options, message in [
        (["color=red"], "--log-option color: no tracker of --log-to mlflow,wandb takes it"),
        (["mode=sometimes"], "--log-option mode=sometimes: expected one of online, offline"),
        (["mlflow.mode=offline"], "--log-option mlflow.mode: no tracker of --log-to mlflow,wandb takes it"),
        (["neptune.project=x"], "--log-option neptune.project: neptune is not among --log-to mlflow,wandb"),
    ]:
        with pytest.raises(UsageError, match=message.replace(".", r"\.").replace("(", r"\(")):
            Tracking.of("mlflow,wandb", dict(o.split("=") for o in options))
    tracking = Tracking.of("mlflow,wandb", {"run_name": "a", "wandb.run_name": "b", "experiment": "e"})
    assert tracking is not None and tracking.options_for("mlflow") == {"run_name": "a", "experiment": "e"}
    assert tracking.options_for("wandb") == {"run_name": "b"}
    with pytest.raises(UsageError, match=r"--log-to neptune needs neptune_no_such: pip install 'structbench\[nep\]'"):
        TrackerEntry("neptune", "x:log", "neptune_no_such", "nep").check_installed()
    not_finished = tmp_path / "half"
    not_finished.mkdir()
    done = invoke("log", str(not_finished), "--to", "wandb", env=_env(tmp_path))
    assert done.returncode == 2 and "no manifest.json" in done.stderr


def test_metric_names_keep_to_what_trackers_take(logged_run: tuple[Path, str, str]) -> None:
    payload = Payload(logged_run[0])
    names = {p.name for p in payload.points}
    assert all(not any(other.startswith(name + "/") for other in names) for name in names)  # no name is a folder
    assert all(len(value) <= 6000 for value in payload.params.values())


def test_asking_for_a_tracker_imports_nothing_until_a_run_is_logged() -> None:
    code = ("import sys; from structbench.cli import app; from structbench import api; "
            "api.log_settings('mlflow,wandb', {'mode': 'offline'}); "
            "print(sorted(m for m in ('mlflow', 'wandb', 'litellm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=child_pythonpath()))
    assert out.stdout.strip() == "[]"


def test_evaluate_logs_the_finished_run_from_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import structbench

    for key, value in _env(tmp_path).items():
        if key.startswith(("WANDB_", "STRUCTBENCH_")):
            monkeypatch.setenv(key, value)
    notes: list[str] = []
    with serve_in_thread(MockOpenAIServer(reply="A")) as url:
        run = structbench.evaluate("openai:toy", base_url=url, limit=2, out=tmp_path / "run", progress=False,
                                   workers=1, log_to="wandb", log_options={"mode": "offline"}, notify=notes.append)
    folder = offline_run(tmp_path)
    assert f"logged to wandb: W&B offline run {folder.name.rpartition('-')[2]} in {folder}" in notes[-1]
    assert run.notes == notes
    assert records(folder).summary[f"{ENTRY}/n"] == run.result().n == 2
