"""``export`` and ``score``: prompts out to another harness, its raw outputs back in for scoring."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from structbench.backends.base import Request, Response
from structbench.benchmark import Attempt, Benchmark, Strategy
from structbench.data.sample import Sample
from structbench.errors import DataError, UsageError
from structbench.results import ResultEntry, compute_result


class _FirstCall(Exception):
    def __init__(self, request: Request) -> None:
        self.request = request


async def _capture(request: Request) -> Response:
    raise _FirstCall(request)


def first_requests(strategy: Strategy, samples: list[Sample]) -> list[Request | None]:
    """The request a strategy sends first for each sample (None where it makes no model call)."""

    async def one(sample: Sample) -> Request | None:
        try:
            await strategy.run(sample, _capture)
        except _FirstCall as call:
            return call.request
        return None

    async def every() -> list[Request | None]:
        return [await one(s) for s in samples]

    return asyncio.run(every())


def export_lines(
    bench: Benchmark, variant: str, samples: list[Sample], strategy: Strategy
) -> Iterator[dict[str, Any]]:
    """One object per sample: id, benchmark, variant, strategy, prompt, gold, meta + the benchmark's fields."""
    for sample, request in zip(samples, first_requests(strategy, samples), strict=True):
        line: dict[str, Any] = {
            "id": sample.id,
            "benchmark": bench.name,
            "variant": variant,
            "strategy": strategy.name,
            "task": sample.task,
            "prompt": request.prompt_payload() if request else None,
            "generation": _params(request) if request else None,
            "gold": sample.gold.model_dump(),
            "meta": sample.meta,
        }
        line.update(bench.export_fields(sample))
        yield line


def _params(request: Request) -> dict[str, Any]:
    p = request.params
    return {
        "max_tokens": p.max_tokens,
        "temperature": p.temperature,
        "top_p": p.top_p,
        "n": p.n,
        "stop": list(p.stop),
        "seed": p.seed,
        "logprobs": p.logprobs,
        "top_logprobs": p.top_logprobs,
        "response_format": p.response_format,
    }


def read_predictions(path: Path) -> dict[str, str | list[str]]:
    """``{"id": ..., "output": ...}`` lines -> id -> output; bad lines name the file and line."""
    predictions: dict[str, str | list[str]] = {}
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read predictions: {err.strerror}") from err
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark, as some editors write
    for lineno, data in enumerate(raw.splitlines(), start=1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{path}:{lineno}: not UTF-8 (byte {err.start + 1} of the line)") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{lineno}: not JSON: {err.msg}") from err
        if not isinstance(obj, dict) or "id" not in obj or "output" not in obj:
            raise DataError(f"{path}:{lineno}: a prediction needs the fields 'id' and 'output'")
        output = obj["output"]
        ok = isinstance(output, str) or (isinstance(output, list) and all(isinstance(o, str) for o in output))
        if not ok:
            raise DataError(f"{path}:{lineno}: 'output' must be a string or a list of strings")
        key = str(obj["id"])
        if key in predictions:
            raise DataError(f"{path}:{lineno}: duplicate id {key!r}")
        predictions[key] = output
    return predictions


def score_predictions(
    bench: Benchmark,
    variant: str,
    samples: list[Sample],
    strategy: Strategy,
    predictions: dict[str, str | list[str]],
    *,
    source: Path,
    model: str = "predictions",
) -> ResultEntry:
    """Parse and score predictions with the benchmark's own parser; missing ids count as wrong."""
    by_id = {s.id: s for s in samples}
    unknown = [k for k in predictions if k not in by_id]
    if unknown:
        raise UsageError(
            f"{source}: {len(unknown)} id(s) not in {bench.name}:{variant} (e.g. {unknown[0]!r}); "
            "check the variant, --limit, --seed and --data-dir used for export"
        )
    scored = []
    missing = []
    for sample in samples:
        if sample.id in predictions:
            attempt = Attempt.from_prediction(predictions[sample.id])
        else:
            missing.append(sample.id)
            attempt = Attempt(output="")
        scored.append(bench.score(sample, attempt, strategy.name))
    return compute_result(bench, variant, strategy.name, model, scored, missing=missing)
