"""``--executor ray``: a session's jobs on the actors of a Ray cluster; this process keeps the run directory.

Each worker is a Ray actor that prepares the run's selections itself, from the run's configuration (so every
node needs the data: a shared ``--data-dir``, or datasets it may download; a benchmark's strategies may read what
its ``load`` set, such as a few-shot pool), and checks they are the driver's own (the same benchmarks,
strategies and first sample). It builds its own backend from the run's backend settings (a server's address, or a
local model loaded once per actor) and runs one job per call; each call carries its sample, which the driver
reads from the benchmark's stream, so neither the driver nor an actor holds every sample. The response cache
stays on the driver's machine, behind one actor pinned to that node
(``CacheKeeper``): a worker's response is committed there, or kept in the run directory's spill file,
before the strategy sees it, so resuming works exactly as for a local run. Finished jobs come back as the
calls' results and the driver appends them to ``samples.jsonl``, each once.

Ray's own fault tolerance covers a lost worker: an actor that dies is restarted (``MAX_RESTARTS``) and its
calls in flight are run again (``MAX_TASK_RETRIES``), their completed model calls answered from the cache.
An actor lost for good hands its jobs to the others (``runner.dispatch``).

An API key is read from the environment variable ``--api-key-env`` names on each worker's node: set it
there (or in the job's ``runtime_env``); it is never sent through Ray.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.backends.base import Response
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.stats import CallSnapshot
from structbench.core.errors import MachineError, StorageError, StructbenchError, UsageError
from structbench.core.words import spelt, word
from structbench.data.sample import Sample
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.budget import Budget, Spent
from structbench.runner.cache import CacheWriteError, ResponseCache, Spill
from structbench.runner.calls import ModelCaller, ModelPool
from structbench.runner.control import RunControl
from structbench.runner.isolation import taken
from structbench.runner.jobs import JobRef, JobRunner, Ticket, selections_digest
from structbench.runner.workers import StopRequest, WorkerSettings, calls_snapshot, halt_kind, split

if TYPE_CHECKING:
    from structbench.runner.dispatch import Events, WorkerStats
    from structbench.runner.selection import Selection
    from structbench.runner.spending import Paid

MAX_RESTARTS = 3
"""Times Ray restarts a worker actor that died (then its jobs go to the others)."""
MAX_TASK_RETRIES = 3
"""Times Ray runs a job again whose actor died while running it."""
FORWARDED_ENV = ("STRUCTBENCH_PLUGINS", "STRUCTBENCH_DATA_DIR")
"""Environment variables of the driver that the workers get too (never a secret)."""


def check_reachable(address: str | None, timeout: float = 10.0) -> None:
    """Fail at once when nothing listens at a ``HOST:PORT`` (or ``ray://HOST:PORT``) address: Ray itself retries
    such an address for minutes. ``None``/``auto``/``local`` are Ray's own lookups and are left to it."""
    if not address or address in ("auto", "local"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"{spelt('ray_address', address)}: expected HOST:PORT (or ray://HOST:PORT, auto)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        raise UsageError(f"{spelt('ray_address', address)}: nothing answers there ({err.strerror or err}); start "
                         f"the cluster with `ray start --head`, or leave {word('ray_address')} out for a local one"
                         ) from None


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(f"{spelt('executor', 'ray')} needs Ray: pip install 'structbench[ray]'") from None
    return ray


@dataclass(frozen=True)
class WorkerSetup:
    """What a Ray worker needs to rebuild the run's side of a job (plain data, sent once per actor)."""

    config: RunConfig
    spec: BackendSpec
    offline: bool
    settings: WorkerSettings
    concurrency: int


class RemoteCache:
    """A worker's view of the response cache on the driver's machine (``ResponseStore``)."""

    def __init__(self, keeper: Any) -> None:
        self.keeper = keeper
        self.hits = 0

    async def aget(self, key: str) -> Response | None:
        stored = await self.keeper.get.remote(key)
        if stored is None:
            return None
        self.hits += 1
        return Response.from_json(stored)

    async def aput(self, key: str, model: str, request_fields: bytes, response: Response,
                   paid: Paid | None = None) -> None:
        """(``paid`` is None here: an actor's calls are counted at the session's end, in no spend log.)"""
        refused = await self.keeper.put.remote(key, model, request_fields, response.to_json())
        if refused is not None:
            raise CacheWriteError(refused)


class CacheKeeper:
    """The run's response cache and spill file, on the driver's node, for every worker (a Ray actor)."""

    def __init__(self, path: Path | None, lock_wait: float, run_dir: Path, keep_refused: bool) -> None:
        self.cache = ResponseCache(path, lock_wait=lock_wait) if path is not None else None
        self.spill = Spill(run_dir)
        self.keep_refused = keep_refused

    async def get(self, key: str) -> dict[str, Any] | None:
        if self.cache is None:
            return None
        response = await self.cache.aget(key)  # a CacheReadError reaches the worker (Ray keeps its type)
        return None if response is None else response.to_json()

    async def put(self, key: str, model: str, request_fields: bytes, response: dict[str, Any]) -> str | None:
        """None once committed; else why the cache refused it (kept in the spill file if the run keeps those)."""
        answer = Response.from_json(response)
        try:
            if self.cache is None:
                raise CacheWriteError("no response cache")
            await self.cache.aput(key, model, request_fields, answer)
            return None
        except CacheWriteError as err:
            if self.keep_refused:
                self.spill.keep(key, model, request_fields, answer)
            return str(err)

    def kept(self) -> tuple[int, int]:
        return self.spill.kept, self.spill.lost


class RayWorker:
    """One Ray actor: the run's selections, its own backend, and jobs run one per call."""

    def __init__(self, setup: WorkerSetup, keeper_name: str) -> None:
        import ray

        from structbench.data.datasets import DataContext
        from structbench.runner.selection import prepare

        keeper = ray.get_actor(keeper_name)  # by name: a handle among the arguments would block a restart

        self.selections = prepare(setup.config, DataContext.from_env(
            setup.config.data_dir, offline=setup.offline, allow_modified=setup.config.allow_modified_data),
            setup.settings.model_context)
        s = setup.settings
        self.messages: list[tuple[Any, ...]] = []
        self.control = RunControl(s.max_consecutive_failures, s.on_cache_error, None,
                                  notify=lambda text: self.messages.append(("note", text)), on_halt=self._halted,
                                  budget=Budget(prices=s.prices))  # (no limit: it counts what this actor spent)
        cache = RemoteCache(keeper) if s.cache_path is not None else None
        self.cache = cache
        backend = make_backend(replace(setup.spec, concurrency=setup.concurrency))
        self.caller = ModelCaller(backend, cache, self.control)
        self.others = ModelPool(cache, self.control)
        self.runner = JobRunner(self.selections, self.caller, s.model, s.request)
        self.tasks: set[asyncio.Task[Any]] = set()

    def _halted(self, error: StructbenchError, cancel: bool) -> None:
        if not isinstance(error, StopRequest):
            self.messages.append(("halt", halt_kind(error), str(error), cancel))

    def ready(self) -> tuple[str, str, int]:
        """(digest of the selections, host name, process id)."""
        import socket

        return selections_digest(self.selections), socket.gethostname(), os.getpid()

    async def run(self, ref: JobRef, sample: Sample) -> list[tuple[Any, ...]]:
        """Run one job: its ``done`` message, after any stop or note raised meanwhile."""
        from structbench.contract.benchmark import other_models

        if self.control.stopped:
            return self._drain()
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.control.watch(self.tasks)
        other_models.set(self.others)
        try:
            finished = await self.runner.run((tuple(ref), sample))  # type: ignore[arg-type]
        except asyncio.CancelledError:  # the breaker abandoned it
            return self._drain()
        except MachineError as err:  # this machine cannot run the strategy: the run stops, the job left for the next
            self.control.halt(err, cancel=False)
            return self._drain()
        except StorageError as err:
            return [*self._drain(), ("fatal", err.exit_code, str(err))]
        finally:
            self.tasks.discard(task)
        # the counters as the job ends (another machine's clock: no age of the oldest call)
        calls = replace(calls_snapshot(self.caller, self.others), oldest=None)
        return [*self._drain(), ("calls", calls), ("done", finished)]

    def _drain(self) -> list[tuple[Any, ...]]:
        messages, self.messages = self.messages, []
        return messages

    def halt(self, cancel: bool, message: str) -> None:
        self.control.halt(StopRequest(message), cancel=cancel)

    def stats(self) -> tuple[int, int, Spent, str | None]:
        """Its calls, cache hits, what they spent and the weakest isolation its sandboxed programs got."""
        return (self.caller.model_calls + self.others.model_calls, self.cache.hits if self.cache else 0,
                self.control.budget.spent(), taken())


class RayLink:
    """The driver's side of one worker actor (``dispatch.WorkerLink``)."""

    def __init__(self, index: int, actor: Any, capacity: int, where: str) -> None:
        self.actor = actor
        self.capacity = capacity
        self.prefetch = 0
        """A call starts its job at once: no more calls than the actor's share of the concurrency."""
        self.name = f"Ray worker {index} ({where})"
        self.outstanding: dict[JobRef, Sample] = {}
        self.stats: WorkerStats | None = None
        self.calls = CallSnapshot()
        self._events: Events | None = None
        self._calls: set[asyncio.Future[None]] = set()
        """The calls (and the final report) under way, kept referenced."""
        self._inflight = 0
        self._closing = False
        self._exited = False

    async def open(self, events: Events) -> None:
        self._events = events

    def _put(self, message: tuple[Any, ...]) -> None:
        assert self._events is not None
        self._events.put_nowait((self, message))

    def submit(self, tickets: list[Ticket]) -> None:
        self.outstanding.update(tickets)
        if self._exited:
            self._put(("lost", [ref for ref, _ in tickets], "was lost"))
            return
        for ticket in tickets:
            self._inflight += 1
            call = asyncio.ensure_future(self._call(ticket))
            self._calls.add(call)
            call.add_done_callback(self._calls.discard)

    async def _call(self, ticket: Ticket) -> None:
        import ray

        ref, sample = ticket
        try:
            messages = await self.actor.run.remote(ref, sample)
        except ray.exceptions.RayActorError as err:
            why = f"was lost ({type(err).__name__})"
            self._put(("lost", [ref], why))
            self._exit(why)
        except ray.exceptions.RayTaskError as err:
            self._put(("fatal", 1, str(err)))
        else:
            for message in messages:
                self._put(message)
        finally:
            self._inflight -= 1
            if self._closing and not self._inflight:
                self._exit("ended")

    def halt(self, cancel: bool, message: str) -> None:
        self._closing = True
        self.actor.halt.remote(cancel, message)
        if not self._inflight:
            self._exit("ended")

    def end(self) -> None:
        self._closing = True
        if not self._inflight:
            self._exit("ended")

    def _exit(self, why: str) -> None:
        if not self._exited:
            self._exited = True
            report = asyncio.ensure_future(self._report_exit(why))
            self._calls.add(report)
            report.add_done_callback(self._calls.discard)

    async def _report_exit(self, why: str) -> None:
        try:
            calls, hits, spent, isolation = await self.actor.stats.remote()
            self.stats = (calls, hits, 0, 0, spent, isolation)
        except Exception:  # a lost actor's counts are lost with it
            pass
        self._put(("exit", why))

    async def close(self) -> None:
        for call in list(self._calls):
            call.cancel()


class Cluster:
    """A Ray cluster to run a session's jobs on (``Run.execute(cluster=...)``)."""

    def __init__(self, spec: BackendSpec, *, address: str | None, actors: int | None, offline: bool,
                 gpus_per_worker: float = 0.0) -> None:
        self.spec = spec
        self.address = address
        self.actors = actors
        self.offline = offline
        self.gpus_per_worker = gpus_per_worker
        self.placed: list[dict[str, Any]] = []
        self._keeper: Any = None
        self._workers: list[Any] = []

    def describe(self) -> dict[str, Any]:
        """What the manifest records: the executor, the cluster's address, and where each worker ran."""
        return {"executor": "ray", "address": self.address or os.environ.get("RAY_ADDRESS") or "local",
                "actors": self.placed}

    async def start(self, config: RunConfig, selections: list[Selection], settings: WorkerSettings,
                    concurrency: int, jobs: int | None) -> list[RayLink]:
        """Join the cluster, start the cache keeper on this node and the workers anywhere, and check that every
        worker prepared this run's selections (``jobs``: how many there will be, where known)."""
        ray = _ray()
        import logging

        logging.getLogger("ray").setLevel(logging.ERROR)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
        check_reachable(self.address)
        try:
            ray.init(address=self.address, runtime_env={"env_vars": env} if env else None, log_to_driver=False,
                     logging_level="ERROR", configure_logging=False, include_dashboard=False)
        except Exception as err:  # a refused token, a version mismatch ...: the cluster, not a bug of ours
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise UsageError(f"{spelt('executor', 'ray')}: could not join the Ray cluster at {self.address or 'auto'}: "
                             f"{first}") from err
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        keeper_name = f"structbench-cache-{uuid.uuid4().hex}"
        self._keeper = ray.remote(CacheKeeper).options(
            name=keeper_name, num_cpus=0, scheduling_strategy=here, max_restarts=-1, max_task_retries=-1,
            max_concurrency=1000,
        ).remote(settings.cache_path, settings.cache_lock_wait, settings.run_dir, settings.on_cache_error == "stop")
        count = self.actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
        count = max(1, min(count, concurrency, jobs if jobs is not None else count))
        shares = split(concurrency, count)
        worker_class = ray.remote(RayWorker)
        self._workers = [
            worker_class.options(
                num_cpus=1, num_gpus=self.gpus_per_worker, max_restarts=MAX_RESTARTS,
                max_task_retries=MAX_TASK_RETRIES, max_concurrency=share + 4,
            ).remote(WorkerSetup(config, self.spec, self.offline, settings, share), keeper_name)
            for share in shares
        ]
        expected = selections_digest(selections)
        links = []
        for index, (worker, share) in enumerate(zip(self._workers, shares, strict=True)):
            digest, node, pid = await worker.ready.remote()
            if digest != expected:
                raise UsageError(
                    f"Ray worker {index} on {node} prepared other samples than this process: the data there differs "
                    f"(give every node the same {word('data_dir')}, or let it download the same release)")
            self.placed.append({"node": node, "pid": pid, "concurrency": share})
            links.append(RayLink(index, worker, share, f"{node}, pid {pid}"))
        return links

    async def stop(self, spill: Spill | None) -> None:
        """Add the keeper's spill counts to the run's, then leave the cluster (the actors end with the job)."""
        ray = _ray()
        try:
            if self._keeper is not None and spill is not None:
                kept, lost = await self._keeper.kept.remote()
                spill.kept += kept
                spill.lost += lost
        finally:
            for actor in [*self._workers, self._keeper]:
                if actor is not None:
                    ray.kill(actor)
            ray.shutdown()
