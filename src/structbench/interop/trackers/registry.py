"""The trackers by name (``TRACKERS``, one ``TrackerEntry`` each) and where a run is to be logged (``Tracking``: the
``--log-to``, ``--log-option`` and ``--log-samples`` flags, checked before the run starts)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from structbench.core.errors import StructbenchError, UsageError
from structbench.core.registry import Registry, did_you_mean, load_target

if TYPE_CHECKING:
    from structbench.interop.trackers.payload import Payload


class TrackerError(StructbenchError):
    """A tracker refused or could not take a run (exit 2 for ``structbench log``; a warning after ``run``, whose run
    is on disk either way)."""

    exit_code = UsageError.exit_code


@dataclass(frozen=True)
class TrackerOption:
    """A ``--log-option`` key a tracker takes."""

    meaning: str
    choices: tuple[str, ...] = ()
    """The values it may take (empty: any)."""


LogFunction = Callable[["Payload", Mapping[str, str]], str]
"""Log a run's payload with the tracker's options; one line saying where it went (a run id, a URL, a folder)."""


@dataclass(frozen=True)
class TrackerEntry:
    """A tracker's one declaration: ``--log-to NAME``, its options, the extra that installs its library."""

    name: str
    target: str
    """``module:attr`` of its ``LogFunction``."""
    module: str
    """The library's import name, found (never imported) before a run starts."""
    extra: str
    """The pip extra that installs it (``structbench[EXTRA]``)."""
    options: Mapping[str, TrackerOption] = field(default_factory=dict)

    def check_installed(self) -> None:
        """A ``UsageError`` naming the extra when the library is missing."""
        if importlib.util.find_spec(self.module) is None:
            raise UsageError(f"--log-to {self.name} needs {self.module}: pip install 'structbench[{self.extra}]'")

    def load(self) -> LogFunction:
        return cast(LogFunction, load_target(self.target, f"tracker {self.name!r}"))


TRACKERS: Registry[TrackerEntry] = Registry("tracker")

RUN_NAME = TrackerOption("the run's name in the tracker (default: the run directory's name)")
TRACKERS.register("mlflow", TrackerEntry(
    "mlflow", "structbench.interop.trackers.mlflow_tracker:log", "mlflow", "mlflow",
    {"tracking_uri": TrackerOption("where runs go: a folder (file:./mlruns), sqlite:///mlflow.db, http(s)://SERVER "
                                   "(default: MLFLOW_TRACKING_URI, else MLflow's own default)"),
     "experiment": TrackerOption("the experiment's name (default: MLFLOW_EXPERIMENT_NAME, else structbench)"),
     "run_name": RUN_NAME}))
TRACKERS.register("wandb", TrackerEntry(
    "wandb", "structbench.interop.trackers.wandb_tracker:log", "wandb", "wandb",
    {"project": TrackerOption("the W&B project (default: WANDB_PROJECT, else structbench)"),
     "entity": TrackerOption("the team or user (default: WANDB_ENTITY, else the account's default)"),
     "mode": TrackerOption("online, or offline: files on disk, no account needed, `wandb sync` later (default: "
                           "WANDB_MODE, else online)", ("online", "offline")),
     "dir": TrackerOption("the folder W&B writes its run files into (default: WANDB_DIR, else the current one)"),
     "group": TrackerOption("a group the run is shown in"),
     "run_name": RUN_NAME}))


@dataclass(frozen=True)
class Tracking:
    """Where a finished run is logged (``--log-to``), with which options (``--log-option``) and whether with its
    per-sample table (``--log-samples``). None of it changes the run, so none of it is in its configuration."""

    to: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    """``KEY`` (every tracker of ``to`` that takes it) or ``TRACKER.KEY`` (that one)."""
    samples: bool = False

    @classmethod
    def of(cls, to: str | Sequence[str] | None, options: Mapping[str, str] | None = None,
           samples: bool = False) -> Tracking | None:
        """The checked settings (None when ``to`` names no tracker): an unknown tracker, a missing extra, an option no
        named tracker takes or a value it does not are usage errors, raised before anything runs."""
        items = to.split(",") if isinstance(to, str) else list(to or [])
        names = tuple(dict.fromkeys(name.strip() for name in items if name.strip()))
        if not names:
            if options or samples:
                raise UsageError("--log-option and --log-samples go with --log-to mlflow|wandb")
            return None
        tracking = cls(names, dict(options or {}), samples)
        for name in names:
            TRACKERS.get(name).check_installed()
        tracking.check_options()
        return tracking

    def check_options(self) -> None:
        for key, value in self.options.items():
            prefix, dot, bare = key.partition(".")
            bare = bare if dot else key
            owners = [prefix] if dot else [n for n in self.to if bare in TRACKERS.get(n).options]
            if dot and prefix not in self.to:
                raise UsageError(f"--log-option {key}: {prefix} is not among --log-to {','.join(self.to)}")
            known = sorted({k for n in self.to for k in TRACKERS.get(n).options})
            if not owners or bare not in TRACKERS.get(owners[0]).options:
                raise UsageError(f"--log-option {key}: no tracker of --log-to {','.join(self.to)} takes it."
                                 f"{did_you_mean(bare, known)} Known: {', '.join(known)}.")
            for owner in owners:
                choices = TRACKERS.get(owner).options[bare].choices
                if choices and value not in choices:
                    raise UsageError(f"--log-option {key}={value}: expected one of {', '.join(choices)}")

    def options_for(self, name: str) -> dict[str, str]:
        """The options of tracker ``name``: its bare keys, then its own ``name.KEY`` ones (which win)."""
        mine = TRACKERS.get(name).options
        bare = {k: v for k, v in self.options.items() if "." not in k and k in mine}
        own = {k.partition(".")[2]: v for k, v in self.options.items() if k.startswith(f"{name}.")}
        return bare | own
