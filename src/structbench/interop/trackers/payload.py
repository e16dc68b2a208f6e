"""What a tracker logs of a finished run, the same for every tracker: parameters, metrics, tags, files and the
per-sample table, read from the run directory by the run's own readers.

Metric names are ``BENCHMARK/VARIANT/STRATEGY/METRIC`` (a sweep's cell is a segment after the strategy,
``key-value_key-value``): every corpus metric of the entry; for the headline also ``.../HEADLINE_ci_low`` and
``..._ci_high`` (its bootstrap interval), its baselines (``.../HEADLINE_chance``, ``..._majority``) and, with
``--epochs``, ``.../HEADLINE_epoch`` with one step per epoch (step ``e`` is epoch ``e``'s headline; the headline
itself is their mean); then ``.../n``, ``.../errors``, ``.../harness_errors``, ``.../too_long`` and the entry's
``.../usage/...`` tokens and cost. The run's totals are ``usage/...``. No name is the folder of another (MLflow's
folder store keeps a metric as a file at its name). A value that is unknown (no interval, no cost without prices)
is left out, never logged as 0.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from structbench.backends.usage import TOKEN_FIELDS, UsageTotals
from structbench.core.redact import redact, register_env_secrets
from structbench.core.regular import read_regular
from structbench.interop.rundir import read_results
from structbench.runfiles.cells import cell_options
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import ResultEntry
from structbench.runfiles.runformat import MANIFEST, METRICS

MAX_PARAM = 6000
"""Longest parameter value logged (MLflow's limit); a longer one is cut, and ``manifest.json`` has it whole."""
NAME_CHARACTERS = re.compile(r"[^\w.\- /]")
"""What a metric or parameter name may not hold (MLflow takes letters, digits, ``_ - . /`` and spaces)."""
SAMPLE_COLUMNS = ("benchmark", "variant", "strategy", "cell", "id", "epoch", "task", "prompt", "output", "parsed",
                  "gold", "score", "error_kind", "error", "reasoning_tokens", "calls", "seconds")
"""The per-sample table's columns: a record's identity, its exchange, its scoring and its cost."""


@dataclass(frozen=True)
class Point:
    """One metric value at one step."""

    name: str
    value: float
    step: int = 0


def segment(text: str) -> str:
    """``text`` as one part of a metric or parameter name (characters trackers refuse become ``-``)."""
    return NAME_CHARACTERS.sub("-", text)


def entry_prefix(entry: ResultEntry) -> str:
    """``BENCHMARK/VARIANT/STRATEGY`` (and the sweep cell's ``key-value_key-value``): the entry's metric names."""
    parts = [entry.benchmark, entry.variant, entry.strategy]
    if entry.cell:
        parts.append("_".join(f"{key}-{value}" for key, value in cell_options(entry.cell).items()))
    return "/".join(segment(part) for part in parts)


def flatten(value: Any, prefix: str) -> dict[str, str]:
    """A configuration as flat ``a.b.c`` parameters: lists of plain values joined with commas, other lists as JSON,
    nothing for None or an empty list or mapping."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out |= flatten(item, f"{prefix}.{segment(str(key))}" if prefix else segment(str(key)))
        return out
    if value is None or value == [] or not prefix:
        return {}
    if isinstance(value, list):
        plain = all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value)
        return {prefix: ",".join(str(v) for v in value) if plain else json.dumps(value)}
    if isinstance(value, bool):
        return {prefix: str(value).lower()}
    return {prefix: str(value)}


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PARAM else text[: MAX_PARAM - 40] + f"... ({len(text):,} characters)"


def _usage_points(totals: UsageTotals | None, prefix: str) -> list[Point]:
    """The tokens and cost of ``totals`` (calls made, then those answered from the response cache); unknown ones out."""
    if totals is None:
        return []
    made, reused = totals.usage, totals.reused
    values: dict[str, float | int | None] = {"calls": made.calls, **{k: getattr(made, k) for k in TOKEN_FIELDS},
                                             "cost_usd": totals.cost_usd}
    if reused.calls:
        values |= {"reused_calls": reused.calls, "reused_tokens": reused.total_tokens,
                   "reused_cost_usd": totals.reused_cost_usd}
    return [Point(f"{prefix}usage/{key}", float(value)) for key, value in values.items() if value is not None]


def _millis(text: Any) -> int | None:
    try:
        return int(datetime.fromisoformat(text).timestamp() * 1000) if isinstance(text, str) else None
    except ValueError:
        return None


class Payload:
    """A finished run directory, as trackers log it (its records are read only for the per-sample table)."""

    def __init__(self, run_dir: Path, *, samples: bool = False) -> None:
        self.run_dir = run_dir
        self.manifest, self.config, self.metrics = read_results(run_dir)
        self.samples = samples
        """Whether the per-sample table is logged too (``--log-samples``)."""
        register_env_secrets()  # an older run directory may hold a key: nothing logged may

    @property
    def name(self) -> str:
        """The run directory's name: the run's name in the tracker unless an option gives another."""
        return self.run_dir.resolve().name

    @property
    def started_ms(self) -> int | None:
        """When the run's first session started, in milliseconds since the epoch."""
        sessions = self.manifest.get("sessions") or [{}]
        return _millis(sessions[0].get("started"))

    @property
    def finished_ms(self) -> int | None:
        sessions = self.manifest.get("sessions") or [{}]
        return _millis(sessions[-1].get("finished"))

    @cached_property
    def params(self) -> dict[str, str]:
        """The run's configuration, flat, with the backend and structbench version that ran it; secrets redacted."""
        backend = self.manifest.get("backend") or {}
        params = flatten(self.config.model_dump(mode="json"), "")
        params |= flatten(backend if isinstance(backend, dict) else {}, "backend")
        params |= {"config_hash": self.config.fingerprint(), "structbench": str(self.manifest.get("structbench"))}
        if self.metrics.prices:
            params["prices"] = self.metrics.prices
        return {key: _cut(redact(value)) for key, value in params.items()}

    @property
    def failed_samples(self) -> int:
        """Samples whose model call failed for good or that a harness error kept from being scored: a finished run
        with failures (exit 3) is logged, and marked by this count."""
        return sum(entry.errors + entry.harness_errors for entry in self.metrics.results)

    @cached_property
    def tags(self) -> dict[str, str]:
        """Short facts to find the run by: its directory, model, status, failed samples."""
        return {key: redact(value) for key, value in {
            "structbench.run_dir": str(self.run_dir.resolve()), "structbench.model": self.config.model,
            "structbench.status": str(self.manifest.get("status")),
            "structbench.failed_samples": str(self.failed_samples),
            "structbench.benchmarks": ",".join(self.config.benches)}.items()}

    @cached_property
    def points(self) -> list[Point]:
        """Every metric value logged (see the module's docstring), finite ones only."""
        points: list[Point] = []
        for entry in self.metrics.results:
            prefix = entry_prefix(entry)
            head = entry.headline
            points += [Point(f"{prefix}/{segment(name)}", value) for name, value in entry.metrics.items()]
            named = f"{prefix}/{segment(head.name)}"
            if head.value is not None and head.name not in entry.metrics:
                points.append(Point(named, head.value))
            if head.ci_low is not None and head.ci_high is not None:
                points += [Point(f"{named}_ci_low", head.ci_low), Point(f"{named}_ci_high", head.ci_high)]
            points += [Point(f"{named}_{segment(name)}", value) for name, value in entry.baselines.items()]
            if entry.epochs is not None:
                points += [Point(f"{named}_epoch", value, step) for step, value in enumerate(entry.epochs.values)
                           if value is not None]
            points += [Point(f"{prefix}/{key}", float(getattr(entry, key)))
                       for key in ("n", "errors", "harness_errors", "too_long")]
            points += _usage_points(entry.usage, f"{prefix}/")
        points += _usage_points(self.metrics.usage, "")
        return [p for p in points if math.isfinite(p.value)]

    @property
    def steps(self) -> dict[int, dict[str, float]]:
        """The points by step, in step order (what a tracker with one step counter logs at once)."""
        by_step: dict[int, dict[str, float]] = {}
        for point in sorted(self.points, key=lambda p: p.step):
            by_step.setdefault(point.step, {})[point.name] = point.value
        return by_step

    def files(self, folder: Path) -> list[Path]:
        """``manifest.json``, ``metrics.json`` and the HTML report (figures embedded), written into ``folder`` with
        their secrets redacted: the run's artifacts."""
        from structbench.report.api import ReportOptions, write_report

        written = []
        for name in (MANIFEST, METRICS):
            path = folder / name
            text = read_regular(self.run_dir / name).decode("utf-8", errors="replace")
            path.write_text(redact(text), encoding="utf-8")
            written.append(path)
        report = folder / "report" / "report.html"
        write_report([self.run_dir], report, ReportOptions(title=f"structbench run {self.name}"))
        return [*written, report]

    def sample_table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per current sample record (``SAMPLE_COLUMNS``), entry after entry: the answer parsed, the gold and
        the score beside the prompt and the reply. Structured values (parsed, gold) are JSON text."""
        from structbench.report.html import prompt_text

        rows = [[r.benchmark, r.variant, r.strategy, r.cell, r.id, r.epoch, r.task, redact(prompt_text(r.prompt)),
                 redact(r.output), _json(r.parsed), _json(r.gold), r.score, r.error_kind or "",
                 redact(r.error or ""), r.reasoning_tokens, r.calls, r.seconds] for r in self._records()]
        return list(SAMPLE_COLUMNS), rows

    def _records(self) -> Iterator[SampleRecord]:
        """The current records, read back one at a time through the run directory's reader (``runfiles.rundir``):
        the entries of ``metrics.json`` in its order, each in sample-id then epoch order, then any other entry's."""
        from structbench.runfiles.rundir import read_entries

        entries = read_entries(self.run_dir)
        order = [(e.benchmark, e.variant, e.strategy, e.model, e.cell) for e in self.metrics.results]
        for key in order:
            if key in entries:
                yield from entries[key].full()
        known = set(order)
        others = [entry.full() for key, entry in entries.items() if key not in known]
        yield from heapq.merge(*others, key=lambda r: (r.id, r.epoch))


def _json(value: Any) -> str:
    return redact(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))

