"""A run logged to Weights & Biases (``--log-to wandb``), online or offline (``mode=offline``: the run's files on
disk, no account needed; ``wandb sync`` uploads them later).

One W&B run per structbench run directory: the configuration as its config, the metrics in W&B's history (step 0
holds every value; an entry's ``.../epoch`` series has one step per epoch), the summary set to the step-0 values
(so an epoch series does not stand for the headline), and an artifact of type ``structbench-run`` holding
``manifest.json``, ``metrics.json`` and ``report/report.html``; with ``--log-samples`` the per-sample table as a
``wandb.Table`` under ``samples``. W&B neither captures the console nor samples the machine's statistics. The
artifact, its files and the table are made before the W&B run starts, so what fails on this side leaves no
half-logged run; and ``log`` returns once W&B's service has written the run's files (``_written``), so an offline
run can be read or synced at once. W&B set up in the process before (a caller's ``wandb.setup()``, ``wandb.login()``
or run) is left as it was: only a W&B session this logging began is shut down.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from structbench.interop.trackers.payload import Payload
from structbench.interop.trackers.reach import check_answers
from structbench.interop.trackers.registry import TrackerError

DEFAULT_PROJECT = "structbench"
ARTIFACT_TYPE = "structbench-run"
OFFLINE_MODES = ("offline", "disabled")
ARTIFACT_PREFIX = "structbench-"
ARTIFACT_NAME_MAX = 128
"""W&B's longest artifact name."""
ARTIFACT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
"""What a W&B artifact name may hold."""
ARTIFACT_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def log(payload: Payload, options: Mapping[str, str]) -> str:
    """Log ``payload`` as a new W&B run; where it went, in one line."""
    os.environ.setdefault("WANDB_DISABLE_WEAVE", "true")  # no advice on tracing LLM calls: this logs a finished run
    mode = options.get("mode") or os.environ.get("WANDB_MODE")
    if mode in OFFLINE_MODES:  # offline sends nothing: not even W&B's own error reports (its OpenTelemetry threads)
        os.environ.setdefault("WANDB_ERROR_REPORTING", "false")
    import wandb
    from wandb.sdk import wandb_setup

    theirs = _set_up_before(wandb_setup)  # before anything here sets W&B up (``_check_server`` may)
    project = options.get("project") or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT
    settings = wandb.Settings(console="off", x_disable_stats=True, x_disable_machine_info=True, save_code=False,
                              disable_git=True, silent=True, x_save_requirements=False)
    init: dict[str, Any] = {  # W&B reads its variables once a process: read here, each run is logged as asked now
        "project": project, "entity": options.get("entity") or os.environ.get("WANDB_ENTITY"),
        "group": options.get("group"), "name": options.get("run_name") or payload.name,
        "dir": options.get("dir") or os.environ.get("WANDB_DIR"),
        "mode": mode, "config": dict(payload.params),
        "job_type": "evaluation", "tags": _tags(payload)}
    with tempfile.TemporaryDirectory(prefix="structbench-wandb-") as tmp:
        # everything that can fail on the run's side (names, files, the table) before the W&B run starts
        artifact = wandb.Artifact(artifact_name(payload.name), type=ARTIFACT_TYPE,
                                  metadata={"run_dir": payload.tags["structbench.run_dir"]})
        for path in payload.files(Path(tmp)):
            artifact.add_file(str(path), name=path.relative_to(tmp).as_posix())
        steps = payload.steps
        first = steps.pop(0, {})
        logged: dict[str, Any] = dict(first)
        if payload.samples:
            columns, rows = payload.sample_table()
            header: list[Any] = list(columns)
            logged["samples"] = wandb.Table(columns=header, data=rows)
        _check_server(wandb, mode)
        try:
            run = wandb.init(**init, settings=settings, reinit="create_new")
        except wandb.errors.UsageError as err:
            hint = "; or log offline, without an account: --log-option mode=offline" if "API key" in str(err) else ""
            raise TrackerError(f"{str(err).strip().rstrip('.')}{hint}") from None
        try:
            run.log(logged, step=0)
            for step, values in steps.items():
                run.log(values, step=step)
            run.summary.update(first)
            run.log_artifact(artifact)
            where = _where(run, project)
            run.finish()  # uploads (or stages, offline) the artifact's files while they exist
        except BaseException:
            run.finish(exit_code=1)
            raise
    _written(wandb, wandb_setup, ours=not theirs)
    return where


def _set_up_before(wandb_setup: Any) -> bool:
    """Whether W&B is set up in this process already (its library state, W&B's "singleton", made by a caller's
    ``wandb.setup()``, ``wandb.login()`` or run): its settings and login are the caller's, and stay."""
    state = getattr(wandb_setup, "_singleton", None)  # ``wandb_setup.singleton()`` would make one
    return state is not None and getattr(state, "_pid", None) == os.getpid()  # a forked child's is not its own


def _written(wandb: Any, wandb_setup: Any, *, ours: bool) -> None:
    """Return only once W&B's service has written the run's files. ``run.finish()`` returns when the service has
    the run's last record, but the service writes the run's transaction log (``run-ID.wandb``: the offline run,
    what ``wandb sync`` uploads) only as it closes the run's stream, on a message ``finish`` sends without waiting:
    a process reading or syncing the offline run right after could find it incomplete (its summary missing, or
    nothing past the header). Where this logging set W&B up (``ours``) and no other W&B run of the process is
    active, ``wandb.teardown()`` closes every stream and waits for the service to exit. Otherwise W&B stays as the
    caller has it (``teardown`` would end their runs, settings and login) and ``_stream_closed`` waits instead."""
    setup = wandb_setup.singleton()
    try:
        if ours and setup.most_recent_active_run is None:
            wandb.teardown()
        else:
            _stream_closed(setup)
    except SystemExit as stop:  # W&B exits the process when its service did not end well: this is one line instead
        raise TrackerError(f"W&B's service ended with exit code {stop.code} as the run's files were written: they "
                           "may be incomplete") from None


BARRIER_ID = "structbench-files-written"
"""The sync operation ``_stream_closed`` asks about: none has this id, so the service answers at once."""


def _stream_closed(setup: Any) -> None:
    """Wait until W&B's service has closed the streams of runs finished on this process's connection, leaving the
    service and the caller's W&B as they are. The service handles a connection's requests one after the other, and
    handles ``finish``'s message by closing the run's stream, which waits for its writer: a request sent after it
    on the same connection (the status of a sync operation, answered at once) is answered only once the run's files
    are written (wandb-core's ``handleIncomingRequests``, ``handleInformFinish``)."""
    from wandb.sdk.mailbox import HandleAbandonedError, MailboxClosedError

    try:
        service = setup.assert_service()
    except AssertionError:  # no service (W&B disabled): no files to wait for
        return
    try:
        setup.asyncer.run(lambda: service.sync_status(BARRIER_ID)).wait_or(timeout=None)
    except (HandleAbandonedError, MailboxClosedError):
        raise TrackerError("W&B's service stopped as the run's files were written: they may be incomplete") from None


def artifact_name(run_name: str) -> str:
    """The name of the run's artifact, ``structbench-RUN``, as W&B takes it: ASCII letters, digits, ``-``, ``_`` and
    ``.``, at most 128 characters. A run name that does not fit (an accent, another script, an emoji, a long name) is
    a slug of it and a short hash of the whole, so two such runs never share an artifact."""
    name = f"{ARTIFACT_PREFIX}{run_name}"
    if len(name) <= ARTIFACT_NAME_MAX and ARTIFACT_NAME.fullmatch(name):
        return name
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"-{2,}", "-", ARTIFACT_UNSAFE.sub("-", ascii_name)).strip("-.")
    digest = hashlib.sha256(run_name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{slug[: ARTIFACT_NAME_MAX - len(digest) - 1].rstrip('-.')}-{digest}"


def _check_server(wandb: Any, mode: str | None) -> None:
    """Online, the W&B server (``WANDB_BASE_URL``, W&B's settings) answers, or a ``ConnectionError`` in one line at
    once: ``wandb.init`` would wait 90 s for it and print its own error."""
    if mode in OFFLINE_MODES:
        return
    known = wandb.setup().settings
    if mode is None and known.mode in OFFLINE_MODES:  # ``wandb offline`` was run here
        return
    check_answers(str(known.base_url), "/healthz", "the W&B server")


def _tags(payload: Payload) -> list[str]:
    """The W&B run's tags: ``structbench``, ``failed-samples`` for a run that finished with some, the benchmarks."""
    failed = ["failed-samples"] if payload.failed_samples else []
    return ["structbench", *failed, *payload.config.benches][:20]


def _where(run: Any, project: str) -> str:
    if run.settings.mode == "offline" or run.offline:
        return f"W&B offline run {run.id} in {run.dir.removesuffix('/files')} (upload it with `wandb sync`)"
    return f"W&B run {run.id} in project {project}: {run.url}"
