"""A run logged to MLflow (``--log-to mlflow``) with MLflow's own client, to any tracking URI: a folder
(``file:./mlruns``; MLflow 3 keeps that store only when ``MLFLOW_ALLOW_FILE_STORE`` is set, so it is set for a
folder asked for), a SQLite file (``sqlite:///mlflow.db``, MLflow's default), or a tracking server.

One MLflow run per structbench run directory, in the experiment ``experiment`` (created if missing), named after
the directory and timed as the run's sessions were: the parameters, the metrics (one ``log_batch`` per hundred
parameters or thousand values, MLflow's limits), the tags, then the artifacts under ``structbench/``
(``manifest.json``, ``metrics.json``, ``report/report.html``) and with ``--log-samples`` the per-sample table
(``structbench/samples.json``, MLflow's table format: ``mlflow.load_table`` reads it). A run that fails halfway is
marked ``FAILED``, never left ``RUNNING``. A tracking server that does not answer is one line at once
(``trackers.reach``), and MLflow's retries are bounded while a run is logged (``HTTP_LIMITS``).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from structbench.core.redact import redact
from structbench.interop.trackers.payload import Payload
from structbench.interop.trackers.reach import check_answers

DEFAULT_EXPERIMENT = "structbench"
ARTIFACTS = "structbench"
"""The folder of the run's artifacts in the MLflow run."""
PARAMS_PER_BATCH = 100
METRICS_PER_BATCH = 1000


def log(payload: Payload, options: Mapping[str, str]) -> str:
    """Log ``payload`` as a new MLflow run; where it went, in one line. MLflow's own notes (a SQLite store being
    created) are held back; its warnings are not."""
    import mlflow

    logger = logging.getLogger("mlflow")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        with _bounded_requests():
            return _log(mlflow, payload, options)
    finally:
        logger.setLevel(level)


HTTP_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}
"""MLflow's retries and per-request timeout while a run is logged, unless the user set them: its defaults (7 retries
of 120 s each, with backoff) keep a server that stops answering halfway retried for a quarter of an hour."""


@contextmanager
def _bounded_requests() -> Iterator[None]:
    """``HTTP_LIMITS`` in the environment for the call (MLflow reads them at each request); urllib3's retry warnings
    held back (the failure is one line)."""
    added = {key: value for key, value in HTTP_LIMITS.items() if key not in os.environ}
    os.environ.update(added)
    pool = logging.getLogger("urllib3.connectionpool")
    level = pool.level
    pool.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        pool.setLevel(level)
        for key in added:
            os.environ.pop(key, None)


def _log(mlflow: Any, payload: Payload, options: Mapping[str, str]) -> str:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    uri = options.get("tracking_uri") or mlflow.get_tracking_uri()
    check_answers(uri, "/health", "the tracking server")  # MLflow's client would retry one that does not answer
    if _file_store(uri):  # MLflow 3 refuses a folder store unless told: a folder is what was asked for
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=uri)
    name = options.get("experiment") or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
    experiment = client.get_experiment_by_name(name)
    experiment_id = experiment.experiment_id if experiment is not None else client.create_experiment(name)
    run = client.create_run(experiment_id, start_time=payload.started_ms, tags=payload.tags,
                            run_name=options.get("run_name") or payload.name)
    run_id = run.info.run_id
    try:
        now = int(time.time() * 1000)
        params = [Param(key, value) for key, value in payload.params.items()]
        for start in range(0, len(params), PARAMS_PER_BATCH):
            client.log_batch(run_id, params=params[start : start + PARAMS_PER_BATCH])
        metrics = [Metric(p.name, p.value, now, p.step) for p in payload.points]
        for start in range(0, len(metrics), METRICS_PER_BATCH):
            client.log_batch(run_id, metrics=metrics[start : start + METRICS_PER_BATCH])
        client.log_batch(run_id, tags=[RunTag("mlflow.note.content", _note(payload))])
        with tempfile.TemporaryDirectory(prefix="structbench-mlflow-") as tmp:
            for path in payload.files(Path(tmp)):
                folder = path.parent.relative_to(tmp).as_posix()
                client.log_artifact(run_id, str(path), ARTIFACTS if folder == "." else f"{ARTIFACTS}/{folder}")
        if payload.samples:
            columns, rows = payload.sample_table()
            client.log_table(run_id, {c: [row[i] for row in rows] for i, c in enumerate(columns)},
                             f"{ARTIFACTS}/samples.json")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED", end_time=payload.finished_ms)
    return f"MLflow run {run_id} in experiment {name!r} at {redact(uri)}"


def _file_store(uri: str) -> bool:
    """Whether ``uri`` is a folder (``file:...`` or a bare path), MLflow's file store."""
    scheme = urlsplit(uri).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")  # C:\mlruns


def _note(payload: Payload) -> str:
    """The run's description in MLflow's UI: what ran, and each entry's headline with its interval and n."""
    lines = [f"structbench run `{payload.name}`: {payload.config.model} on {', '.join(payload.config.benches)}", ""]
    for entry in payload.metrics.results:
        head = entry.headline
        value = "–" if head.value is None else f"{head.value:.4f}"
        interval = f" [{head.ci_low:.4f}, {head.ci_high:.4f}]" if head.ci_low is not None and head.ci_high is not None \
            else ""
        cell = f" [{entry.cell}]" if entry.cell else ""
        lines.append(f"- {entry.benchmark}:{entry.variant}/{entry.strategy}{cell}: {head.name} {value}{interval}, "
                     f"n = {entry.n}")
    return redact("\n".join(lines))
