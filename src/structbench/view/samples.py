"""The live sample browser's side on the server: which records a filter keeps, and what the page is sent of them.

Filters run on the columns the view keeps of every record (``runfiles.columns``: score, error kind, cut-off thought,
breakdown groups), newest first; a text search reads the kept candidates' lines from ``samples.jsonl`` (at their
byte offsets) and stops after ``SEARCH_LINES`` of them, saying so. A row or a record's detail is read from its line
when asked for, so the view holds no prompt or reply in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from structbench.backends.usage import usage_text
from structbench.core.regular import open_regular
from structbench.report.html import DEFAULT_MAX_TEXT, clip, prompt_text
from structbench.runfiles.records import SampleRecord

EPS = 1e-9
PAGE = 100
SEARCH_LINES = 20_000
"""Lines a text search reads at most per request (a search over more says it stopped)."""
MAX_LINE = 64 * 1024 * 1024
SHORT = 200
"""Characters of a parsed or gold answer shown in a row."""


@dataclass(frozen=True)
class Columns:
    """What a filter reads of an entry's current records (parallel arrays)."""

    kind: np.ndarray
    """Error kinds by code (``runfiles.columns.KINDS``: 0 none, 1 model, 2 harness, 3 context)."""
    score: np.ndarray
    cut_off: np.ndarray


Mask = Callable[[Columns], np.ndarray]

OUTCOMES: dict[str, tuple[str, Mask]] = {
    "correct": ("correct", lambda c: (c.kind == 0) & (c.score >= 1 - EPS)),
    "partial": ("partially correct", lambda c: (c.kind == 0) & (c.score > EPS) & (c.score < 1 - EPS)),
    "wrong": ("wrong", lambda c: (c.kind == 0) & (c.score <= EPS)),
    "not-correct": ("not correct (wrong, partial, error)", lambda c: ~((c.kind == 0) & (c.score >= 1 - EPS))
                    & (c.kind != 3)),
    "error": ("error (model or harness)", lambda c: (c.kind == 1) | (c.kind == 2)),
    "model-error": ("model error", lambda c: c.kind == 1),
    "harness-error": ("harness error", lambda c: c.kind == 2),
    "too-long": ("too long for the model", lambda c: c.kind == 3),
    "cut-off": ("cut off in its thought", lambda c: c.cut_off.astype(bool)),
}
"""The outcome filter's choices: name -> (label, which rows it keeps)."""


def outcome(record: dict[str, Any]) -> str:
    """A record's outcome as the row's colour says it: ``correct``, ``partial``, ``wrong``, ``error``, ``too-long``."""
    kind = record.get("error_kind")
    if record.get("error") is not None:
        return "too-long" if kind == "context" else "error"
    score = float(record.get("score") or 0.0)
    return "correct" if score >= 1 - EPS else "wrong" if score <= EPS else "partial"


@dataclass(frozen=True)
class Query:
    """One request of the sample browser."""

    entry: int | None = None
    """The entry's position in the run's list (None: every entry)."""
    outcome: str = ""
    group: str = ""
    """``KEY=VALUE``: only the records in that group of a breakdown."""
    text: str = ""
    start: int = 0
    limit: int = PAGE


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHORT else text[:SHORT] + "…"


def row(ref: int, record: dict[str, Any], label: str) -> dict[str, Any]:
    """A row of the sample table (``ref``: the line's byte offset, which asks for its detail)."""
    parsed = record.get("parsed")
    cut = bool(record.get("reasoning_cut_off"))
    return {
        "ref": ref, "entry": label, "id": str(record.get("id", "")), "epoch": record.get("epoch", 0),
        "task": str(record.get("task", "")), "score": record.get("score"), "outcome": outcome(record),
        "error_kind": record.get("error_kind"), "cut_off": cut,
        "parsed": ("(none: cut off in thought)" if cut else "(none)") if parsed is None else _short(parsed),
        "gold": _short(record.get("gold")),
    }


def read_lines(path: Path, offsets: list[int]) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """The JSON of the lines at ``offsets`` (None for one that is not a JSON object), read with one open file."""
    with open_regular(path) as fh:
        for offset in offsets:
            fh.seek(offset)
            raw = fh.readline(MAX_LINE + 1)
            try:
                data = json.loads(raw)
            except ValueError:
                data = None
            yield offset, data if isinstance(data, dict) else None


def haystack(record: dict[str, Any]) -> str:
    """What a text search looks in: the ids, the prompt, the replies, the thought, the answers, the error."""
    parts = [record.get("id"), record.get("task"), prompt_text(record.get("prompt")), record.get("output"),
             "\n".join(record.get("outputs") or []), record.get("reasoning"), _short(record.get("parsed")),
             _short(record.get("gold")), record.get("error")]
    return "\n".join(str(p) for p in parts if p).lower()


def detail(record: SampleRecord, max_text: int = DEFAULT_MAX_TEXT) -> dict[str, Any]:
    """Everything the page shows of one record: the prompt, the replies, the thought, the tool traces (the
    strategy's ``artifacts``: programs and their runs, SQL rounds, a judge's verdict), its score and its calls."""
    def cut(text: str) -> str:
        return clip(text, max_text)

    return {
        "benchmark": record.benchmark, "variant": record.variant, "strategy": record.strategy, "model": record.model,
        "cell": record.cell, "id": record.id, "epoch": record.epoch, "task": record.task,
        "prompt": cut(prompt_text(record.prompt)), "output": cut(record.output),
        "outputs": [cut(o) for o in record.outputs] if record.outputs else None,
        "reasoning": cut(record.reasoning) if record.reasoning is not None else None,
        "reasoning_tokens": record.reasoning_tokens, "reasoning_cut_off": record.reasoning_cut_off,
        "parsed": record.parsed, "gold": record.gold, "score": record.score, "values": record.values,
        "meta": record.meta, "artifacts": record.artifacts or None, "error": record.error,
        "error_kind": record.error_kind, "calls": record.calls, "cached_calls": record.cached_calls,
        "seconds": record.seconds, "outcome": outcome(record.model_dump(include={"error", "error_kind", "score"})),
        "tokens": usage_text(record.usage) if record.usage is not None else None,
        "reused_tokens": usage_text(record.reused_usage) if record.reused_usage and record.reused_usage.calls else None,
    }
