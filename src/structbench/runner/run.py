"""A whole run: resolve benchmarks and strategies, resume from the run directory, evaluate, write metrics."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import os
import platform
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.backends.base import Backend
from structbench.backends.factory import backend_packages
from structbench.backends.stats import CallSnapshot
from structbench.backends.usage import Usage
from structbench.contract.benchmark import Strategy
from structbench.core.atomic import make_folders
from structbench.core.collector import collect_less, resume
from structbench.core.errors import BudgetError, MachineError, RunStoppedError, StorageError, Terminated, UsageError
from structbench.core.forkmap import can_fork
from structbench.core.version import __version__
from structbench.core.words import spelt, word
from structbench.data.datasets import ModifiedFile
from structbench.runfiles.manifest import (
    INTERRUPTED,
    TERMINATED,
    Manifest,
    Session,
    Status,
    read_manifest,
)
from structbench.runfiles.records import RecordSummary, SampleRecord
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.runformat import BATCH_LEDGER, LOCK, MANIFEST, METRICS, SPENT
from structbench.runner.budget import Budget, spent_sum
from structbench.runner.cache import CacheReadError, CacheWriteError, ResponseCache, Spill
from structbench.runner.calls import ModelCaller, ModelPool
from structbench.runner.control import RunControl
from structbench.runner.dispatch import Dispatcher, Totals, WorkerLink
from structbench.runner.engine import Job, run_jobs
from structbench.runner.failures import Failure, failures_of
from structbench.runner.heartbeat import HeartbeatWriter
from structbench.runner.isolation import taken, weakest
from structbench.runner.jobs import Finished, Ticket, job_of
from structbench.runner.loop import run_async
from structbench.runner.progress import SLOW_CALL, ProgressMode, RunProgress
from structbench.runner.selection import Selection
from structbench.runner.settings import RequestSettings
from structbench.runner.store import RunStore, save_manifest, write_json_atomic
from structbench.runner.workers import (
    ProcessLink,
    WorkerSettings,
    calls_snapshot,
    fork_workers,
    hold_streams,
    stop_workers,
    warm_up,
)

if TYPE_CHECKING:
    import numpy as np

    from structbench.analysis.record_metrics import CurrentEntry
    from structbench.backends.prices import Prices
    from structbench.runfiles.columns import EntryKey
    from structbench.runfiles.results import MetricsFile
    from structbench.runner.batch.collector import BatchedBackend, BatchSettings
    from structbench.runner.cluster import Cluster
    from structbench.runner.kept import EntryRecords, KeptRecords

PACKAGES = ("pydantic", "httpx", "typer", "rich", "numpy", "duckdb", "sqlglot", "rapidfuzz", "ray")
"""The core's packages whose versions the manifest records; each backend declares its own
(``BackendEntry.packages``)."""


def model_context(backend: Backend) -> int | None:
    """The model's context in tokens as the backend knows it before any request (None: unknown)."""
    return asyncio.run(backend.context_window())


NAME_MAX = 255
"""The longest file name, in bytes, that Linux file systems take."""
PATH_MAX = 4096


def check_path(path: Path, option: str) -> None:
    """A ``UsageError`` naming ``option`` (in its caller's words) when ``path`` cannot name a file: a name longer
    than ``NAME_MAX`` bytes, or more than ``PATH_MAX`` bytes in all (the file system would refuse it with "File name
    too long")."""
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            raise UsageError(f"{spelt(option, str(path)[:60])}...: the name {part[:40]!r}... is {size} bytes; a "
                             f"file name may have at most {NAME_MAX}")
    if len(os.fsencode(str(path.absolute()))) > PATH_MAX:
        raise UsageError(f"{spelt(option, str(path)[:60])}...: longer than the {PATH_MAX} bytes a path may have")


def directory_name(text: str, suffix: str = "") -> str:
    """``text`` (a model name) as one file name, ``:`` and ``/`` replaced, then ``suffix``; a name too long for the
    file system is cut and made unique again with a short hash of the whole."""
    name = text.replace(":", "-").replace("/", "_")
    if len(os.fsencode(name + suffix)) <= NAME_MAX:
        return name + suffix
    tag = "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    room = NAME_MAX - len(os.fsencode(tag + suffix))
    return os.fsencode(name)[:room].decode(errors="ignore") + tag + suffix


def default_run_dir(config: RunConfig) -> Path:
    """``runs/<model>-<hash of the configuration>``: the same command finds the same directory."""
    return Path("runs") / directory_name(config.model, f"-{config.fingerprint()}")


def check_writable(run_dir: Path) -> None:
    """``StorageError`` when ``run_dir`` (or the nearest directory that exists above it) cannot be written."""
    probe = run_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"{spelt('out', str(run_dir))}: cannot be written: {probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        why = "read-only file system" if _read_only_fs(probe) else "permission denied"
        raise StorageError(f"{spelt('out', str(run_dir))}: cannot be written ({probe}: {why})")


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _lock(run_dir: Path) -> int:
    import fcntl

    try:
        make_folders(run_dir)  # a new run directory's entry synced: what is synced into it survives a crash
        fd = os.open(run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise StorageError(f"--out {run_dir}: cannot be written: {err.strerror or err}") from err
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UsageError(f"{run_dir} is being filled by another structbench process") from None
    return fd


def git_revision() -> str | None:
    """The git commit of the structbench source, when it runs from a checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError

    versions = {"structbench": __version__, "python": sys.version.split()[0]}
    for name in dict.fromkeys([*PACKAGES, *backend_packages()]):
        try:
            versions[name.replace("-", "_")] = installed_version(name)
        except PackageNotFoundError:
            continue
    return versions


def installed_version(name: str) -> str:
    """``importlib.metadata.version(name)``, reading only the metadata's ``Version`` header: ``version`` parses the
    whole file with the ``email`` package, the package's long description included (the manifest names some twenty
    packages: 16 ms of the run's end that way, 12 with ``email`` on the headers alone, 8 so; #44). The header is one
    line (core metadata); a name in another case, or no header, goes to the full parse."""
    from importlib.metadata import distribution

    dist = distribution(name)
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.partition("\n\n")[0].splitlines():
        if line.startswith("Version:"):
            return line[len("Version:"):].strip()
    return dist.version


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Run:
    """A run directory being filled: resumes whatever a previous session (or a killed one) finished.

    ``execute`` holds an exclusive lock on ``<run_dir>/.lock`` while it runs, so two processes never
    fill the same directory at once."""

    def __init__(self, run_dir: Path, config: RunConfig) -> None:
        self.run_dir = run_dir
        self.config = config
        check_path(run_dir, "out")
        if run_dir.exists() and not run_dir.is_dir():
            raise UsageError(f"{spelt('out', str(run_dir))}: exists and is not a directory")
        check_writable(run_dir)
        self.failures: list[Failure] = []
        """The current samples that failed (model or harness errors), after ``execute``."""
        self.samples = 0
        """The number of (sample, strategy) jobs the run covers, after ``execute``."""
        self.model_context: int | None = None
        """The model's context the samples were prepared for, where known."""
        self.model_title = config.model
        """The model as a reader knows it (``Backend.title``), after ``execute``."""
        self.records: Sequence[Kept] = []
        """The records of the current samples, without their texts, after ``execute`` (built as they are read)."""
        self.metrics: MetricsFile | None = None
        """What ``metrics.json`` holds, after an ``execute`` that recorded every job."""
        self._links: list[WorkerLink] = []
        """The session's workers (their calls' counters feed the progress line)."""
        self.prices: Prices | None = None
        """The prices the run's calls are costed at (``--prices``), for ``execute``."""
        self.batch: BatchSettings | None = None
        """``--batch``: the calls go through the provider's batch API, for ``execute``."""
        found = read_manifest(run_dir)
        if found is not None and found.config != config:
            raise UsageError(
                f"{run_dir} holds a run with a different configuration; use another {word('out')}, "
                f"or {spelt('resume', str(run_dir))} to continue that run"
            )
        self.manifest = found or Manifest(config=config)
        """``manifest.json`` as the last session left it (a new one for a new run), updated as this one goes."""

    def check_backend(self, backend: Backend) -> None:
        """Refuse to resume a run that a different server or model file started (same config, other target)."""
        previous = self.manifest.backend
        if previous is not None and previous != backend.describe():
            raise UsageError(
                f"{self.run_dir} was run against {previous}, not {backend.describe()}; use another "
                f"{word('out')}"
            )

    def execute(
        self,
        backend: Backend,
        selections: list[Selection],
        *,
        cache: ResponseCache | None,
        concurrency: int,
        progress: bool | ProgressMode,
        progress_interval: float = 30.0,
        control: RunControl | None = None,
        workers: int = 1,
        cluster: Cluster | None = None,
        model_context: int | None = None,
        modified_data: Sequence[ModifiedFile] = (),
        prices: Prices | None = None,
        batch: BatchSettings | None = None,
    ) -> MetricsFile:
        """Evaluate what is not done yet; raises ``RunStoppedError`` or ``StorageError`` when the run stops early
        (the manifest says how it ended, and ``metrics.json`` is only written for a finished run).
        ``model_context`` is the context the selections were prepared for (recorded; Ray workers prepare theirs
        for it too). ``modified_data``: the local data files that differ from their release
        (``--allow-modified-data``), listed in the manifest. ``prices`` cost the calls (``--prices``; the budget is
        ``control.budget``); ``batch`` sends them through the provider's batch API (``--batch``), one step at a
        time in this process. A budget and ``batch`` need one process (``workers`` 1, no ``cluster``).

        ``workers`` > 1 forks that many worker processes sharing ``concurrency`` (``runner.workers``);
        ``cluster`` runs the jobs on Ray actors instead (``runner.cluster``). This process alone writes the
        run directory either way."""
        self.check_backend(backend)
        RequestSettings.of(self.config).check(backend)
        self.model_context = model_context
        self.model_title = backend.title
        lock = _lock(self.run_dir)
        self.manifest.uses_modified(modified_data)
        control = control or RunControl()
        if (batch is not None or control.budget.active) and (workers > 1 or cluster is not None):
            os.close(lock)
            raise UsageError(f"{word('batch')}, {word('max_cost')} and {word('max_tokens_total')} run in one "
                             f"process: drop {word('workers')} and {spelt('executor', 'ray')}")
        self.prices, self.batch = prices, batch
        thresholds = gc.get_threshold()
        try:
            if batch is None and (self.run_dir / BATCH_LEDGER).exists():  # the ledger's module only when there is one
                from structbench.runner.batch.ledger import refuse_direct_while_open

                refuse_direct_while_open(self.run_dir)
            return self._execute(
                backend, selections, cache, concurrency, progress, progress_interval, control,
                Spread(workers, cluster, lock),
            )
        finally:
            resume()  # (a run that never reached its requests)
            gc.unfreeze()
            gc.set_threshold(*thresholds)
            os.close(lock)

    def _execute(
        self,
        backend: Backend,
        selections: list[Selection],
        cache: ResponseCache | None,
        concurrency: int,
        progress: bool | ProgressMode,
        progress_interval: float,
        control: RunControl,
        spread: Spread,
    ) -> MetricsFile:
        control.spill = Spill(self.run_dir)
        if cache is not None:
            self._absorb_spill(cache, control)
        store = RunStore(self.run_dir)
        before = _Before(cache.hits if cache is not None else 0, self._start_budget(store, cache, control))
        expected = expected_jobs(selections, store, self.config.model, self.config.epochs)
        workers = spread.processes(expected, concurrency, control.notify)
        session = Session(started=_now(), jobs=expected or 0, id=uuid.uuid4().hex)
        self._begin(session, store, backend, cache, concurrency, spread, workers, control)
        from structbench.runner.spending import SpendLog

        log = control.budget.log = SpendLog(self.run_dir, len(self.manifest.sessions) - 1, session.id)
        batched = self._batched(backend, control)
        caller = ModelCaller(batched or backend, cache, control)
        others = ModelPool(cache, control)
        totals, issued = Totals(), [0]
        taken()  # this session's programs are the ones its manifest records, not an earlier run's of this process
        t0 = time.perf_counter()
        try:
            error = self._work(selections, store, backend, cache, concurrency, progress, progress_interval, control,
                               spread, workers, session, expected, caller, others, batched, totals, issued)
        finally:
            log.close()
        if error is not None and error is store.failure:  # say where the answers of the unrecorded samples are
            error = StorageError(f"{error} ({_answers_kept(cache, control)})")
        reached = control.budget.reached()
        if isinstance(error, BudgetError) and reached is not None:  # what the calls in flight at the stop added too
            error = control.budget.error(reached)
        status, reason = _ending(error)
        if status == "complete":
            session.jobs = issued[0]
        self._end(session, t0, before, cache, control, caller, others, totals, batched)
        return self._conclude(selections, store, status, reason, error)

    def _start_budget(self, store: RunStore, cache: ResponseCache | None,
                      control: RunControl) -> dict[str, float | int]:
        """Count what earlier sessions paid for against the budget (``spent.jsonl``, with the lines of the answers they
        paid for that the cache kept and a crash of the machine lost from it; seeded with the records' calls in a run
        written before it existed), and fill in the spending of a session killed before it could record its own; what
        was spent before this session."""
        from structbench.runner.spending import BEFORE_LOG, SpendLog, grouped, read_spent, restore

        payers = [earlier.id for earlier in self.manifest.sessions if earlier.id is not None]
        if cache is not None and payers:
            try:
                restored = restore(self.run_dir, cache.paid_lines(payers))
            except CacheReadError as err:
                control.cache_failed(err)  # raises unless the user chose to go on without the cache
                restored = 0
            if restored:
                control.notify(f"note: {restored} paid call(s) of an earlier session were missing from {SPENT} (a "
                               "crash of the machine): added back from the response cache, which kept their answers")
        lines = read_spent(self.run_dir)
        if not (self.run_dir / SPENT).exists():
            seed = SpendLog(self.run_dir, BEFORE_LOG)
            try:
                seed.write((key, usage) for key, usage in store.usage_groups() if not key[2])
            finally:
                seed.close()
            lines = read_spent(self.run_dir)
        for index, earlier in enumerate(self.manifest.sessions):
            if earlier.spent is None and any(line[0] == index for line in lines):
                counted = Budget(prices=self.prices)
                counted.start(grouped(line for line in lines if line[0] == index).items())
                earlier.spent = dict(counted.spent())
        control.budget.start(grouped(lines).items())
        return control.budget.spent()

    def _begin(self, session: Session, store: RunStore, backend: Backend, cache: ResponseCache | None,
               concurrency: int, spread: Spread, workers: int, control: RunControl) -> None:
        """Open this session in the manifest (how it runs, its prices and budget) and save it."""
        m = self.manifest
        m.begin(session, config=self.config, structbench=__version__, backend=backend.describe(),
                concurrency=concurrency, workers=spread.cluster.describe() if spread.cluster is not None else workers,
                cache=str(cache.path) if cache is not None else None, platform=platform.platform(),
                git_revision=git_revision(), model_context=self.model_context)
        budget = control.budget
        m.account(self.prices.describe() if self.prices is not None else None, budget.max_cost, budget.max_tokens,
                  budget.active)
        try:
            save_manifest(self.run_dir / MANIFEST, m.to_json())
        except StorageError:
            store.close()
            raise

    def _batched(self, backend: Backend, control: RunControl) -> BatchedBackend | None:
        """``backend`` behind the provider's batch API (``--batch``), or None."""
        if self.batch is None:
            return None
        from structbench.runner.batch.collector import BatchedBackend

        return BatchedBackend(backend, self.run_dir, self.batch, notify=control.notify)

    def _work(
        self, selections: list[Selection], store: RunStore, backend: Backend, cache: ResponseCache | None,
        concurrency: int, progress: bool | ProgressMode, progress_interval: float, control: RunControl,
        spread: Spread, workers: int, session: Session, expected: int | None, caller: ModelCaller,
        others: ModelPool, batched: BatchedBackend | None, totals: Totals, issued: list[int],
    ) -> BaseException | None:
        """Run the pending jobs in this process, on forked workers or on Ray actors, with the progress line and the
        heartbeat; what stopped them (None: every job ran). ``issued`` gets the number of jobs."""
        model, epochs = self.config.model, self.config.epochs
        spread_out = spread.cluster is not None or workers > 1
        links: list[ProcessLink] = []
        forked = spread.cluster is None and workers > 1
        try:
            if forked:
                hold_streams(selections)  # the workers then share the samples and their jobs travel without them
                warm_up(selections)
                backend.before_fork()
            gc.freeze()  # the loaded samples live all run: the collector (and forked workers' copy-on-write) skip them
            collect_less()  # the requests' short-lived objects: restored by ``execute``; forked workers inherit it
            resume()  # paused while the command started (``core.collector.pause``)
            if forked:
                if cache is not None:
                    cache.close()  # no SQLite connection may cross a fork; each worker opens its own
                links = fork_workers(selections, backend, self._worker_settings(cache, control), concurrency,
                                     workers, close_fds=[spread.lock, store.fd])
            self._links = list(links)

            def calls() -> CallSnapshot:
                total = calls_snapshot(caller, others)
                for link in self._links:
                    total += link.calls
                return total

            slow = SLOW_CALL if backend.remote else 0.0  # a local model's calls queue for it by design: no note
            bar = RunProgress(expected, enabled=progress, interval=progress_interval, calls=calls, slow_call=slow)
            beat = HeartbeatWriter(self.run_dir, bar, session=len(self.manifest.sessions) - 1,
                                   started=session.started,
                                   settled_before=settled_jobs(selections, store, model, epochs))
            with bar, beat:
                def counted(count: int) -> None:
                    issued[0] = count
                    bar.set_total(count)

                tickets = pending_jobs(selections, store, model, epochs, job_window(concurrency), on_end=counted)

                def on_record(record: SampleRecord) -> None:
                    stored = store.append(record)
                    bar.advance("turns" if stored.turn_limit else stored.error_kind)

                def on_finished(finished: Finished) -> None:
                    store.add(finished.record, finished.line)
                    if spread.cluster is not None and control.budget.log is not None:  # Ray actors log nothing
                        control.budget.log.write((key, Usage(**counts._asdict()))
                                                 for key, counts in finished.record.usage_by() if not key[2])
                    bar.advance("turns" if finished.record.turn_limit else finished.record.error_kind)

                if not spread_out:
                    store.prepare_columns()  # one process: before its requests, which its records would hold up
                    jobs = (job_of(selections, ticket) for ticket in tickets)
                    run_async(self._run_all(jobs, caller, others, concurrency, on_record, cache, batched))
                else:  # workers: while their first requests are out
                    run_async(self._dispatch(spread, links, selections, tickets, expected, backend, cache, control,
                                             concurrency, on_finished, totals, store.prepare_columns))
        except BaseException as err:
            return err
        finally:
            stop_workers(links)
        return None

    def _end(self, session: Session, t0: float, before: _Before, cache: ResponseCache | None, control: RunControl,
             caller: ModelCaller, others: ModelPool, totals: Totals, batched: BatchedBackend | None) -> None:
        """Close this session in the manifest: its time, calls, cache hits, spending, spilled answers, batches and the
        isolation its sandboxed programs got."""
        spent = spent_sum(control.budget.spent(), totals.spent)  # this process's calls and its workers'
        session.end(
            _now(), round(time.perf_counter() - t0, 3),
            model_calls=caller.model_calls + others.model_calls + totals.model_calls,
            cache_hits=((cache.hits - before.cache_hits) if cache is not None else 0) + totals.cache_hits,
            spent={k: round(v - before.spent.get(k, 0), 6) for k, v in spent.items()},
            unsaved=control.spill.kept if control.spill else 0,
            lost=control.spill.lost if control.spill else 0,  # lost: the cache and the run directory refused
            batches={"submitted": batched.submitted, "taken_up": batched.adopted} if batched is not None else None,
        )
        self.manifest.isolated(session, weakest(taken(), totals.isolation))  # this process's programs and its workers'
        if batched is not None:
            self.manifest.batched(batched.ledger.entries)

    def _conclude(self, selections: list[Selection], store: RunStore, status: Status, reason: str | None,
                  error: BaseException | None) -> MetricsFile:
        """Record the current records' usage and how the session ended; for a finished run, write ``metrics.json``
        (computed on the analysis side, ``record_metrics``) and return it, else raise what stopped it."""
        from structbench.analysis.record_metrics import (  # after the requests: scipy is slow to import
            metrics_of,
            usage_totals,
        )
        from structbench.backends.prices import totals
        from structbench.runner.spending import grouped, read_spent

        current = current_rows(selections, store.kept, self.config.model, self.config.epochs)
        entries = current_entries(current)
        records = usage_totals(entries, self.prices)  # what the run paid: every call once, its sample recorded or not
        paid = totals(grouped(read_spent(self.run_dir)).items(), self.prices)
        self.manifest.spent(paid.model_copy(update={"reused": records.reused,
                                                    "reused_cost_usd": records.reused_cost_usd}))
        failures = self._finish(store, status, reason)
        if error is not None:
            raise error
        if failures:
            raise failures[0]
        from structbench.runfiles.columns import RecordView  # the end of the run: columns and numpy are imported by now

        self.records = RecordView([(entry, rows) for _, _, entry, rows in current if entry is not None])
        self.failures, self.samples = failures_in(current), len(self.records)
        metrics = metrics_of(entries, self.config.model, self.prices)
        try:
            write_json_atomic(self.run_dir / METRICS, metrics.model_dump(mode="json"))
        except OSError as err:
            raise StorageError(f"{self.run_dir / METRICS}: cannot be written: {err.strerror or err}") from err
        self.metrics = metrics
        return metrics

    def _absorb_spill(self, cache: ResponseCache, control: RunControl) -> None:
        """Add to the cache the answers an earlier session could not store in it."""
        assert control.spill is not None
        if not control.spill.path.exists():
            return
        try:
            cache.absorb(control.spill)
        except CacheWriteError as err:
            if control.on_cache_error == "stop":
                raise StorageError(f"{err}; {control.spill.path} still holds answers for it") from err
            control.cache_failed(err)

    def _finish(self, store: RunStore, status: Status, reason: str | None) -> list[StorageError]:
        """Close the records and say in the manifest how the session ended; storage failures are returned."""
        failures = []
        try:
            store.close()
        except StorageError as err:
            failures.append(err)
        self.manifest.end(status, reason, package_versions())  # after the requests: importlib.metadata is slow
        try:
            save_manifest(self.run_dir / MANIFEST, self.manifest.to_json())
        except StorageError as err:
            failures.append(err)
        return failures

    async def _run_all(
        self, jobs: Iterable[Job], caller: ModelCaller, others: ModelPool, concurrency: int, on_record: Any,
        cache: ResponseCache | None, batched: BatchedBackend | None = None,
    ) -> None:
        """Run the jobs as they are read (with ``batched``: every sample at once, held, one batch per step); the run's
        backend and any other model the strategies called are closed after."""
        settings = RequestSettings.of(self.config)
        try:
            async with others:
                if batched is not None:
                    from structbench.runner.batch.steps import run_steps

                    await run_steps(list(jobs), caller, self.config.model, on_record, settings, batched.gate)
                else:
                    await run_jobs(jobs, caller, self.config.model, concurrency, on_record, settings)
        finally:
            await caller.backend.aclose()
            if cache is not None:
                await cache.drain()

    def _worker_settings(self, cache: ResponseCache | None, control: RunControl) -> WorkerSettings:
        return WorkerSettings(
            model=self.config.model,
            request=RequestSettings.of(self.config),
            run_dir=self.run_dir,
            cache_path=cache.path if cache is not None else None,
            cache_lock_wait=cache.lock_wait if cache is not None else 0.0,
            max_consecutive_failures=control.max_consecutive_failures,
            on_cache_error=control.on_cache_error,
            model_context=self.model_context,
            prices=self.prices,
            session=len(self.manifest.sessions) - 1,
            payer=self.manifest.sessions[-1].id,
        )

    async def _dispatch(
        self,
        spread: Spread,
        links: list[ProcessLink],
        selections: list[Selection],
        tickets: Iterator[Ticket],
        expected: int | None,
        backend: Backend,
        cache: ResponseCache | None,
        control: RunControl,
        concurrency: int,
        on_finished: Any,
        totals: Totals,
        started: Callable[[], object] | None = None,
    ) -> None:
        """The jobs over forked workers or Ray actors; this process writes what they finish (``started``: called once
        the workers have their first jobs)."""
        workers: list[WorkerLink] = list(links)
        try:
            if spread.cluster is not None:
                workers = list(await spread.cluster.start(
                    self.config, selections, self._worker_settings(cache, control), concurrency, expected))
                self._links = workers
                self.manifest.runs_on(spread.cluster.describe())
                save_manifest(self.run_dir / MANIFEST, self.manifest.to_json())
            dispatcher = Dispatcher(workers, tickets, on_finished, control, started=started)
            try:
                await dispatcher.run()
            finally:  # an interrupted run counts the calls its workers made too
                totals.model_calls, totals.cache_hits = dispatcher.totals.model_calls, dispatcher.totals.cache_hits
                totals.spent, totals.isolation = dispatcher.totals.spent, dispatcher.totals.isolation
        finally:
            if spread.cluster is not None:
                await spread.cluster.stop(control.spill)
        error = dispatcher.final_error()
        if error is not None:
            raise error


@dataclass(frozen=True)
class _Before:
    """What the cache and the budget had counted before this session (its own counts are the difference)."""

    cache_hits: int
    spent: dict[str, float | int]


@dataclass(frozen=True)
class Spread:
    """How one session's jobs are spread: forked worker processes, or a Ray cluster; and the run's lock."""

    workers: int
    cluster: Cluster | None
    lock: int

    def processes(self, jobs: int | None, concurrency: int, notify: Callable[[str], None]) -> int:
        """Worker processes to fork: as asked, but no more than the jobs (where known) or the requests in flight, and
        one where forking is not possible (another thread is running, or on macOS: said on ``notify``)."""
        if self.cluster is not None:
            return 1
        wanted = max(1, min(self.workers, concurrency, self.workers if jobs is None else jobs))
        if wanted > 1 and not can_fork():
            notify(f"note: {spelt('workers', str(self.workers))}: worker processes cannot be forked here (another "
                   "thread is running, or not on Linux); running in one process")
            return 1
        return wanted


def _answers_kept(cache: ResponseCache | None, control: RunControl) -> str:
    """Where the answers received for samples that could not be recorded are, for the message of a storage failure."""
    spill = control.spill
    if cache is None:
        return "no response cache (--no-cache): the samples not recorded are asked for again"
    if spill is not None and spill.lost:
        return (f"{spill.lost} answer(s) received could not be written anywhere, the response cache and {spill.path} "
                "failing too: the same command asks for them again")
    if spill is not None and spill.kept:
        return f"answers the response cache refused are kept in {spill.path}; the next run adds them to it"
    return "their answers are in the response cache" if control.cache_usable else \
        "the response cache failed too; answers received before are in it"


def _ending(error: BaseException | None) -> tuple[Status, str | None]:
    """The manifest's ``status`` and ``stop_reason`` for a session that ended with ``error`` (None: finished)."""
    if error is None:
        return "complete", None
    if isinstance(error, RunStoppedError | BudgetError | MachineError):
        return "stopped", str(error)
    if isinstance(error, Terminated):
        return "interrupted", TERMINATED
    if isinstance(error, KeyboardInterrupt):
        return "interrupted", INTERRUPTED
    if isinstance(error, StorageError):
        return "interrupted", str(error)
    return "interrupted", f"{type(error).__name__}: {error}"


Kept = SampleRecord | RecordSummary
"""A record, or what a run keeps of it in memory."""


def entry_key(sel: Selection, strategy: Strategy, model: str) -> EntryKey:
    """The result entry whose records a selection's strategy writes (in the selection's cell of a sweep)."""
    return sel.bench.name, sel.variant, strategy.name, model, sel.cell


def job_window(concurrency: int) -> int:
    """Samples read from a stream at a time (``pending_jobs``): twice the requests in flight, so that the same
    request asked by two strategies or selections of one sample is answered, and cached, before it is asked again."""
    return max(16, 2 * concurrency)


def pending_jobs(
    selections: Sequence[Selection], store: RunStore, model: str, epochs: int, window: int = 16,
    on_end: Callable[[int], None] | None = None,
) -> Iterator[Ticket]:
    """The jobs no earlier session finished, read from the selections' streams as they are asked for, ``window``
    samples at a time: their jobs epoch by epoch, selection by selection, strategy by strategy (the order of a list
    of every job, within each window), then the next window's. Selections that share a stream (one load prompted
    several ways) read it once, each window's jobs in all of them. ``on_end`` gets their number once the streams
    end."""
    count = 0
    sharing: dict[int, list[int]] = {}
    for i, sel in enumerate(selections):
        sharing.setdefault(id(sel.samples), []).append(i)
    for members in sharing.values():
        plans = [(i, [store.entry(entry_key(selections[i], strategy, model))
                      for strategy in selections[i].strategies]) for i in members]
        stream = enumerate(selections[members[0]].samples)
        while chunk := list(itertools.islice(stream, window)):
            for epoch in range(epochs):
                for i, entries in plans:
                    for j, entry in enumerate(entries):
                        for k, sample in chunk:
                            if entry is None or not entry.settled(sample.id, epoch):
                                count += 1
                                yield (i, j, k, epoch), sample
    if on_end is not None:
        on_end(count)


def expected_jobs(selections: Sequence[Selection], store: RunStore, model: str, epochs: int) -> int | None:
    """How many jobs ``pending_jobs`` will give, where every stream knows its size (None otherwise): the samples'
    jobs less those an earlier session settled."""
    total = 0
    for sel in selections:
        if sel.samples.expected is None:
            return None
        for strategy in sel.strategies:
            entry = store.entry(entry_key(sel, strategy, model))
            settled = entry.settled_count(epochs) if entry is not None else 0
            total += max(0, sel.samples.expected * epochs - settled)
    return total


def settled_jobs(selections: Sequence[Selection], store: RunStore, model: str, epochs: int) -> int:
    """How many of the selections' jobs earlier sessions settled (``expected_jobs`` leaves them out)."""
    total = 0
    for sel in selections:
        for strategy in sel.strategies:
            entry = store.entry(entry_key(sel, strategy, model))
            settled = entry.settled_count(epochs) if entry is not None else 0
            expected = sel.samples.expected
            total += settled if expected is None else min(settled, expected * epochs)
    return total


Current = list[tuple[Selection, Strategy, "EntryRecords | None", "np.ndarray"]]
"""Per (selection, strategy): its records (``None``: none yet) and the rows of the current ones."""


def current_rows(selections: Sequence[Selection], kept: KeptRecords, model: str, epochs: int = 1) -> Current:
    """The rows of the current records, per (selection, strategy): the last of each key, of the samples the
    selection's stream read last (the current samples; every sample where a stopped run did not read it through)
    and the first ``epochs`` epochs."""
    import numpy as np

    out: Current = []
    for sel in selections:
        for strategy in sel.strategies:
            entry = kept.entries.get(entry_key(sel, strategy, model))
            if entry is None:
                out.append((sel, strategy, None, np.zeros(0, dtype=np.int64)))
                continue
            rows = entry.latest()
            current = entry.outcomes.epoch.array()[rows] < epochs
            if sel.samples.count is not None:  # read through: only its samples (not those of another --limit)
                ids = entry.outcomes.ids.array()[rows].tolist()
                current &= np.fromiter((sel.samples.seen(i.decode()) for i in ids), dtype=bool, count=len(ids))
            out.append((sel, strategy, entry, rows[current]))
    return out


def failures_in(current: Current) -> list[Failure]:
    """The failed current records (``failures_of``)."""
    return failures_of(summary for _, _, entry, rows in current if entry is not None
                       for summary in entry.summaries(rows[entry.failed(rows)]))


def current_entries(current: Current) -> list[CurrentEntry]:
    """The current records of each (selection, strategy) as the metrics read them (``record_metrics``)."""
    from structbench.analysis.record_metrics import CurrentEntry
    from structbench.runfiles.columns import RecordView

    return [CurrentEntry(sel.bench, sel.variant, strategy.name, entry, rows,
                         RecordView([(entry, rows)]) if entry is not None else (), sel.cell, sel.axes)
            for sel, strategy, entry, rows in current]
