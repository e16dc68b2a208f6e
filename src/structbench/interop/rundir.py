"""A finished run directory as the converters read it: its manifest, configuration, result entries and the
current record of every sample, read by the run-files layer's one reader (``structbench.runfiles.rundir``):
records as columns,
each full record read back from ``samples.jsonl`` when a converter writes it.

All manifest reading of ``convert`` and ``publish`` happens in ``_manifest``. A directory written by an older
structbench converts when these readers accept it (fields added since take their defaults); one they refuse is
a ``DataError`` naming the file, the structbench version that wrote it and what to do. So is a ``samples.jsonl``
whose last line is torn (``check_whole``), for a tracker too: what is written or logged from a run holds every
record its metrics count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from structbench.core.errors import DataError, UsageError
from structbench.core.regular import read_regular
from structbench.core.untrusted import file_name
from structbench.core.version import __version__
from structbench.runfiles.cells import cell_options
from structbench.runfiles.manifest import Manifest, read_manifest
from structbench.runfiles.recordlines import torn_line
from structbench.runfiles.results import MetricsFile, ResultEntry, read_metrics
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.rundir import EntryRecords, RunFiles, read_entries
from structbench.runfiles.runformat import LOCK, MANIFEST, METRICS, SAMPLES


@dataclass(frozen=True)
class Entry:
    """One result entry (benchmark, variant, strategy, model) with the current records of its samples."""

    result: ResultEntry
    records: EntryRecords
    """Sorted by sample id, then epoch (``samples.jsonl`` is in completion order); ``records.full()`` reads each
    full record back in that order."""

    @property
    def task(self) -> str:
        """The entry as one task name: ``<benchmark>_<variant>_<strategy>``, the name ``inspect eval
        structbench/<benchmark>`` gives its task; a sweep cell's options follow, ``_key-value`` each."""
        r = self.result
        cell = "".join(f"_{k}-{v}" for k, v in cell_options(r.cell).items())
        return f"{r.benchmark}_{r.variant}_{r.strategy}{cell}"


@dataclass(frozen=True)
class RunData:
    """A run directory, read once."""

    path: Path
    manifest: dict[str, Any]
    config: RunConfig
    metrics: MetricsFile
    files: RunFiles
    """The run directory as ``structbench.runfiles.rundir`` reads it: the current record of each sample, per entry."""

    @property
    def name(self) -> str:
        """The run directory's name: the run's identity in published tables."""
        return self.path.resolve().name

    @property
    def written_by(self) -> str:
        """The structbench version that wrote the run."""
        return str(self.manifest.get("structbench", "unknown"))

    @property
    def sessions(self) -> list[dict[str, Any]]:
        return [s for s in self.manifest.get("sessions", []) if isinstance(s, dict)]

    @property
    def started(self) -> datetime | None:
        """When the run's first session started."""
        return _time(self.sessions[0].get("started")) if self.sessions else None

    @property
    def finished(self) -> datetime | None:
        """When its last session finished (None: it never did)."""
        return _time(self.sessions[-1].get("finished")) if self.sessions else None

    @property
    def seconds(self) -> float:
        """The sessions' time, added up."""
        return float(sum(s.get("seconds") or 0.0 for s in self.sessions))

    @cached_property
    def entries(self) -> list[Entry]:
        """Every result entry of ``metrics.json``, in its order, with its records."""
        return [Entry(e, self.files.records(e)) for e in self.metrics.results]

    def __len__(self) -> int:
        """How many records the run holds (current ones)."""
        return len(self.files)


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _written_by(path: Path) -> str:
    """The version a manifest names, for messages about a manifest the reader refused."""
    try:
        data = json.loads(read_regular(path / MANIFEST))
    except (OSError, ValueError, DataError):
        return "an unknown version"
    version = data.get("structbench") if isinstance(data, dict) else None
    return f"structbench {version}" if version else "an unknown version"


def _manifest(path: Path) -> tuple[Manifest, RunConfig]:
    """The run's manifest and configuration: the one place ``convert`` and ``publish`` read a manifest."""
    try:
        manifest = read_manifest(path)
    except DataError as err:
        why = _first(err.__cause__) if isinstance(err.__cause__, Exception) else _first(err)
        raise DataError(f"{path / MANIFEST}: not a run manifest this structbench ({__version__}) reads ({why}); "
                        f"written by {_written_by(path)}: convert it with the structbench that wrote it") from None
    if manifest is None:
        raise UsageError(f"{path}: no {MANIFEST}: not a run directory written by `structbench run` (a results file "
                         "from `structbench score --out` has no samples or configuration to convert)")
    return manifest, manifest.config


def read_results(path: Path) -> tuple[dict[str, Any], RunConfig, MetricsFile]:
    """A finished run directory's manifest (as JSON), configuration and ``metrics.json``, without its records (what
    a tracker logs); ``UsageError`` (exit 2) with one clear line when it is not one, or when its last session did not
    finish (``metrics.json`` is then an earlier session's) or one is running now, and ``check_whole``'s ``DataError``
    when ``samples.jsonl`` ends in a torn line, per-sample table asked for or not: the report logged beside the
    metrics is made from the records."""
    manifest, config, metrics = _results(path)
    _check_finished(path, manifest, then="log it")
    check_whole(path, then="log it")
    return manifest.to_json(), config, metrics


def _check_finished(path: Path, manifest: Manifest, then: str) -> None:
    """``UsageError`` unless the run's last session ended ``complete`` (failed samples included) and no process
    holds the run directory's lock: a tracker run, a converted log or a published dataset is never made of a stale
    result (``metrics.json`` an earlier session's, beside records a later one added) or a half-written one. ``then``:
    what the user does next (the message's last words)."""
    resume = f"`structbench run --resume {path}`"
    if _locked(path):
        raise UsageError(f"{path}: the run is not finished: a structbench process is running it now ({then} once "
                         "it ends)")
    if manifest.status == "complete":
        return
    if manifest.status == "running":
        state = "its last session was killed before it ended (status running)"
    elif manifest.status is None:
        state = "its manifest gives no status"
    else:
        reason = f": {manifest.stop_reason}" if manifest.stop_reason else ""
        state = f"its last session ended {manifest.status}{reason}"
    raise UsageError(f"{path}: the run is not finished: {state}; {resume} finishes it, then {then}")


def _locked(path: Path) -> bool:
    """Whether a process holds the run directory's lock (``runner.run`` holds it while it fills the directory)."""
    import fcntl
    import os

    try:
        fd = os.open(path / LOCK, os.O_RDONLY)
    except OSError:  # no lock file: no process ever ran here, or one that cannot have left it
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def _results(path: Path) -> tuple[Manifest, RunConfig, MetricsFile]:
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    manifest, config = _manifest(path)
    metrics_path = path / METRICS
    if not metrics_path.exists():  # one that is not a regular file is named by read_metrics
        raise UsageError(f"{path}: no {METRICS} yet (the run did not finish; resume it with "
                         f"`structbench run --resume {path}`)")
    try:
        metrics = read_metrics(metrics_path)
    except DataError as err:
        raise DataError(f"{err}{_other_version(manifest)}: `structbench run --resume {path}` rewrites it from the "
                        "records") from None
    return manifest, config, metrics


def _other_version(manifest: Manifest) -> str:
    """What an unreadable file's error adds when another structbench wrote the run (nothing when this one did: the
    file is then damaged, not of another format)."""
    written = manifest.to_json().get("structbench")
    if written == __version__:
        return ""
    return f"; written by structbench {written or 'of unknown version'}, this structbench is {__version__}"


def read_run(path: Path) -> RunData:
    """Read a finished run directory; ``UsageError`` (exit 2) with one clear line when it is not one, or when its
    last session did not finish or one is running now (``_check_finished``, as for a tracker), and ``check_whole``'s
    ``DataError`` for a torn last line."""
    manifest, config, metrics = _results(path)
    _check_finished(path, manifest, then="convert or publish it")
    check_whole(path)
    try:
        entries = read_entries(path)
    except DataError as err:
        raise DataError(f"{err}{_other_version(manifest)}") from None
    if not entries:
        raise UsageError(f"{path}: {SAMPLES} holds no sample records: nothing to convert")
    _check_names(metrics, path / METRICS)
    return RunData(path, manifest.to_json(), config, metrics, RunFiles(path, manifest, metrics, entries))


def check_whole(path: Path, then: str = "convert or publish") -> None:
    """``DataError`` naming the line when ``samples.jsonl`` ends in a torn line (a crash mid-write, or a run writing
    it now). ``report`` leaves such a line out with a warning and says where its records and ``metrics.json``
    disagree; a converted or published copy would carry the disagreement without the warning (samples that are
    not those the metrics were computed from), so it is refused and the run is mended first: ``--resume`` cuts the
    line off, runs that sample again and writes ``metrics.json`` anew. ``then``: what the user does next (the
    message's last words)."""
    line = torn_line(path / SAMPLES)
    if line is not None:
        raise DataError(f"{path / SAMPLES}:{line}: the last line is incomplete (torn by a crash, or being written), "
                        f"so the records are not those {METRICS} was computed from; `structbench run --resume {path}` "
                        f"cuts it off and runs that sample again (once no run is writing it), then {then}")


def _check_names(metrics: MetricsFile, path: Path) -> None:
    """Every name a converter puts in a file name (a result's benchmark, variant, strategy, its cell's options) is a
    safe one: a crafted ``metrics.json`` never makes ``convert`` write outside ``--out``."""
    for i, r in enumerate(metrics.results, start=1):
        for field, name in (("benchmark", r.benchmark), ("variant", r.variant), ("strategy", r.strategy),
                            *((f"cell option {k}", f"{k}-{v}") for k, v in cell_options(r.cell).items())):
            file_name(name, f"{path}: result {i}: {field}")


def _first(err: Exception) -> str:
    if isinstance(err, ValidationError):
        problem = err.errors()[0]
        return f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}"
    return str(err).splitlines()[0]
