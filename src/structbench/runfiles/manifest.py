"""``manifest.json``: what a run directory is the run of (its configuration and backend), and how each session
that filled it went. The runner writes it; ``--resume``, reports and ``structbench.evaluate`` read it back."""

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.core.errors import DataError
from structbench.core.regular import read_regular
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.runformat import FORMAT_VERSION, MANIFEST, check_format

if TYPE_CHECKING:
    from structbench.backends.usage import UsageTotals
    from structbench.data.datasets import ModifiedFile

Status = Literal["running", "complete", "stopped", "interrupted"]
TERMINATED = "terminated (SIGTERM)"
INTERRUPTED = "interrupted (SIGINT, Ctrl-C)"
"""The ``stop_reason`` of a session someone stopped (status ``interrupted``); any other reason of that status is a
failure (a full disk, a crash)."""


class Session(BaseModel):
    """One invocation that worked on the run (a run resumed three times has four)."""

    model_config = ConfigDict(extra="allow")

    started: str
    """When it started (UTC, ISO 8601)."""
    id: str | None = None
    """A random name: the response cache stores it with each answer the session paid for, so a later session can
    add back the spend-log lines a crash of the machine lost (``runner.spending.restore``); absent in sessions an
    older structbench ran."""
    jobs: int
    """(Sample, strategy, epoch) jobs it had to do: the ones no earlier session finished."""
    finished: str | None = None
    """When it ended, however it ended; absent while it runs (or when it was killed)."""
    seconds: float | None = None
    model_calls: int | None = None
    """Requests sent to the model (answers from the response cache not counted)."""
    cache_hits: int | None = None
    """Requests answered from the response cache."""
    unsaved_responses: int | None = None
    """Answers the response cache refused, kept in the run directory for the next session to add to it."""
    lost_responses: int | None = None
    """Answers that could be written nowhere (a full disk): asked for again by the next session."""
    spent: dict[str, float] | None = None
    """What this session's calls cost and used (``cost_usd``, ``tokens`` ...: ``runner.budget.Budget.spent``)."""
    batches: dict[str, Any] | None = None
    """With ``--batch``: batches ``submitted`` by this session and ``taken_up`` from an earlier one (their ids)."""
    sandbox: str | None = None
    """The weakest isolation this session's sandboxed programs got (``Sandbox.isolation``); absent when it ran none."""

    def end(self, finished: str, seconds: float, *, model_calls: int, cache_hits: int, spent: dict[str, float],
            unsaved: int = 0, lost: int = 0, batches: dict[str, Any] | None = None) -> None:
        """The session ended at ``finished`` after ``seconds``: its calls, what they cost, the answers it could not
        store (``unsaved`` in the run directory, ``lost`` nowhere) and its batches; zeros are left out."""
        self.finished, self.seconds = finished, seconds
        self.model_calls, self.cache_hits, self.spent = model_calls, cache_hits, spent
        if batches is not None:
            self.batches = batches
        if unsaved:
            self.unsaved_responses = unsaved
        if lost:
            self.lost_responses = lost


class ModifiedData(BaseModel):
    """A local data file used although it differs from its public release (``--allow-modified-data``)."""

    dataset: str
    path: str
    sha256: str
    release_sha256: str


class Sandbox(BaseModel):
    """How the run's model-written programs (tool calls, programs of thought) were isolated."""

    model_config = ConfigDict(extra="allow")

    isolation: str
    """The weakest over every session's programs (``structbench.sandbox.levels``): ``namespaces`` (the kernel's),
    ``guard`` (namespaces refused: audit-hook guard only), ``off`` (``sandbox=off``: guard only) or ``none``."""


BATCH_FIELDS = frozenset({"tag", "id", "state", "status", "requests", "step", "round", "counts", "notes"})
"""What ``batches`` records of each batch of the run's ledger (``runner.batch.ledger.BatchEntry``)."""


class Manifest(BaseModel):
    """The whole of ``manifest.json``. Fields of a newer minor format version are kept as they are (``extra``)."""

    model_config = ConfigDict(extra="allow")

    format_version: str = FORMAT_VERSION
    """The run files' format (``structbench.runfiles.runformat``); absent in runs written before versions existed."""
    structbench: str | None = None
    """The structbench version that wrote it last."""
    config: RunConfig
    """Everything that decides the run's results: a directory holds one configuration."""
    backend: dict[str, Any] | None = None
    """What the backend says it is (``Backend.describe``: backend, model, base URL with passwords masked, model file):
    a run is never resumed against another."""
    concurrency: int | None = None
    workers: int | dict[str, Any] | None = None
    """Worker processes, or the Ray cluster's description (``executor``, ``address``, ``actors``)."""
    cache: str | None = None
    """The response cache file (None: ``--no-cache``)."""
    platform: str | None = None
    git_revision: str | None = None
    seed: int | None = None
    model_context: int | None = None
    """The model's context in tokens, where the benchmarks needed it before loading."""
    status: Status | None = None
    """``running`` while a session runs (or after one was killed), then ``complete``, ``stopped`` (the circuit
    breaker, a budget, a machine that cannot run the run's programs) or ``interrupted`` (Ctrl-C, SIGTERM, a storage
    failure)."""
    stop_reason: str | None = None
    """Why the last session ended early."""
    sessions: list[Session] = Field(default_factory=list)
    modified_data: list[ModifiedData] = Field(default_factory=list)
    """Local data files that differ from their release (``--allow-modified-data``)."""
    packages: dict[str, str] = Field(default_factory=dict)
    """Versions of structbench, Python and the packages that shape results."""
    usage: dict[str, Any] | None = None
    """The run's token usage and cost over its current records (``structbench.backends.usage``; docs/usage/costs.md)."""
    prices: dict[str, Any] | None = None
    """The prices the last session costed the calls at (``--prices`` or the suite's)."""
    budget: dict[str, Any] | None = None
    """The last session's budget (``max_cost_usd``, ``max_tokens_total``), when it had one."""
    batches: list[dict[str, Any]] | None = None
    """With ``--batch``: every batch of the run (its ledger: tag, id, state, requests, step ...)."""
    sandbox: Sandbox | None = None
    """How its sandboxed programs were isolated; absent for a run that ran none (format 1.4)."""

    def begin(self, session: Session, *, config: RunConfig, structbench: str, backend: dict[str, Any],
              concurrency: int, workers: int | dict[str, Any], cache: str | None, platform: str,
              git_revision: str | None, model_context: int | None) -> None:
        """A session starts: what this one runs (the configuration, backend, spread, cache, platform) in the current
        format, status ``running`` and ``session`` appended."""
        self.format_version = FORMAT_VERSION
        self.structbench = structbench
        self.config = config
        self.backend = backend
        self.concurrency = concurrency
        self.workers = workers
        self.cache = cache
        self.platform = platform
        self.git_revision = git_revision
        self.seed = config.seed
        self.model_context = model_context
        self.status = "running"
        self.stop_reason = None
        self.sessions.append(session)

    def account(self, prices: dict[str, Any] | None, max_cost: float | None, max_tokens: int | None,
                budgeted: bool) -> None:
        """What this session's calls are costed at (``prices``' description) and limited to (its budget, when
        ``budgeted``)."""
        self.prices = prices
        self.budget = {"max_cost_usd": max_cost, "max_tokens_total": max_tokens} if budgeted else None

    def uses_modified(self, files: Sequence["ModifiedFile"]) -> None:
        """The local data files this session reads although they differ from their release."""
        self.modified_data = [ModifiedData.model_validate(f.to_json()) for f in files]

    def runs_on(self, cluster: dict[str, Any]) -> None:
        """The Ray cluster this session's jobs run on (``Cluster.describe``), in place of a count of workers."""
        self.workers = cluster

    def batched(self, ledger: Iterable[BaseModel]) -> None:
        """Every batch of the run as its ledger holds it now (``--batch``)."""
        self.batches = [entry.model_dump(include=set(BATCH_FIELDS)) for entry in ledger]

    def spent(self, usage: "UsageTotals") -> None:
        """The token usage and cost of the run's current records."""
        self.usage = usage.model_dump(mode="json")

    def isolated(self, session: Session, level: str | None) -> None:
        """The weakest isolation ``session``'s sandboxed programs got (None: it ran none): the session's, and the run's
        the weakest over its sessions."""
        if level is None:
            return
        from structbench.sandbox.levels import weakest  # imported already: a program ran

        session.sandbox = level
        before = self.sandbox
        run = weakest(level, before.isolation if before is not None else None)
        assert run is not None
        self.sandbox = Sandbox(isolation=run) if before is None else before.model_copy(update={"isolation": run})

    def end(self, status: Status, reason: str | None, packages: dict[str, str]) -> None:
        """The session ended with ``status`` (and ``reason``, kept from an earlier session when None); the installed
        ``packages`` it ran with."""
        self.status = status
        if reason is not None:
            self.stop_reason = reason
        self.packages = packages

    def to_json(self) -> dict[str, Any]:
        """What ``manifest.json`` holds: the optional parts (a stop reason, modified data, prices, a budget, batches,
        the sandbox's isolation, a session's) only when there are some."""
        data = self.model_dump(mode="json")
        for key in ("stop_reason", "modified_data", "usage", "prices", "budget", "batches", "sandbox"):
            if not data.get(key):
                data.pop(key, None)
        for session in data["sessions"]:
            if session.get("sandbox") is None:
                session.pop("sandbox", None)
        return data


def read_manifest(run_dir: Path) -> Manifest | None:
    """A run directory's manifest (None when it has none); a damaged one, or one of a newer major format version,
    is a ``DataError``."""
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(read_regular(path))  # a FIFO is refused (a DataError), not waited on
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a structbench run manifest ({err})") from err
    check_format(data.get("format_version"), path)
    try:
        return Manifest.model_validate(data)
    except ValidationError as err:
        problem = err.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "manifest"
        raise DataError(f"{path}: not a structbench run manifest ({where}: {problem['msg']})") from None
