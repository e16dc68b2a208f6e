"""Every request each strategy sends, for two fixed samples, pinned as reviewed text files.

A change to any prompt (template, serialization, demonstrations, sampling parameters) shows up as a diff of
``tests/prompts/__snapshots__/``. Multi-turn strategies are driven by the oracle backend, so their later
turns are pinned too. The samples come from the synthetic releases of ``tests/synthetic/`` (see
its README). After an intended change, regenerate and review the diff:

    pytest tests/prompts --snapshot-update
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from prompts.cases import CASES, HERE, Case
from structbench.backends.base import Request, Response
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks import BENCHMARKS, BUILTIN
from structbench.contract.benchmark import Attempt, Benchmark, bind_sample
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runner.config import options_for
from structbench.runner.selection import load_samples

REPO = Path(__file__).resolve().parents[2]
REGENERATE = "pytest tests/prompts --snapshot-update"
DATA = "tests/synthetic/"
GENERATED = {"claimdb": "structbench generate claimdb --seed 0"}
"""Benchmarks whose release holds binary files (ClaimDB's zipped databases): their pinned prompts are built from a set
the generator writes in the release's layout, never stored."""


@pytest.fixture(scope="session")
def generated_data(tmp_path_factory: pytest.TempPathFactory) -> DataContext:
    """``GENERATED``'s sets, written once under a session folder, as ``--data-dir``."""
    from structbench.benchmarks.claimdb.generator import write_set

    folder = tmp_path_factory.mktemp("generated")
    write_set(folder, seed=0)
    return DataContext(data_dir=folder, offline=True)


class TextSnapshot(SingleFileSnapshotExtension):
    """One plain-text file per case."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def snap(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshot)


_LOADED: dict[tuple[str, str, str, int], tuple[Benchmark, list[Sample]]] = {}


def loaded(case: Case, data: DataContext) -> tuple[Benchmark, list[Sample]]:
    """The case's benchmark with its options, and its samples (loaded once per benchmark, variant and options)."""
    options = case.resolved_options(REPO)
    limit = max(case.samples) + 1
    key = (case.bench, case.variant, json.dumps(options, sort_keys=True), limit)
    if key not in _LOADED:
        cls = BENCHMARKS.get(case.bench)
        bench = cls(options_for(cls, {f"{case.bench}.{k}": v for k, v in options.items()}))
        _LOADED[key] = bench, load_samples(bench, case.variant, data, seed=0, limit=limit)
    return _LOADED[key]


def requests_sent(bench: Benchmark, strategy: str, sample: Sample) -> tuple[list[Request], Attempt]:
    """Every request the strategy sends about ``sample`` when the oracle answers each one, and its attempt."""
    sent: list[Request] = []
    oracle = OracleBackend()

    async def generate(request: Request) -> Response:
        sent.append(request)
        return await oracle.generate(request)

    async def run() -> Attempt:
        bind_sample(bench, sample)
        return await bench.strategy(strategy).run(sample, generate)

    attempt = asyncio.run(run())
    return sent, attempt


def _params(request: Request) -> str:
    p = request.params
    fields: dict[str, Any] = {
        "max_tokens": p.max_tokens, "temperature": p.temperature, "top_p": p.top_p, "n": p.n, "stop": list(p.stop),
        "seed": p.seed, "logprobs": p.logprobs, "top_logprobs": p.top_logprobs,
        "response_format": p.response_format,
    }
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def render(case: Case, samples: list[tuple[Sample, list[Request]]]) -> str:
    """The snapshot text: what it reproduces, then each sample's requests with their parameters and messages."""
    options = " ".join(f"{k}={v}" for k, v in {**case.resolved_options(Path("<repo>")), **case.options}.items())
    lines = [
        f"# structbench prompt snapshot: {case.bench}:{case.variant} / {case.strategy}",
        f"# options: {options or '(defaults)'}",
        f"# reproduces: {case.reproduces}",
        f"# samples: {', '.join(s.id for s, _ in samples)} (later turns answered by the oracle backend)",
        f"# data: {f'the set of {GENERATED[case.bench]}' if case.bench in GENERATED else 'synthetic records'} in the "
        f"release's format{'' if case.bench in GENERATED else ', ' + DATA} (no released data)",
        f"# regenerate after an intended change, then review the diff: {REGENERATE}",
    ]
    for sample, requests in samples:
        for i, request in enumerate(requests, start=1):
            lines += ["", f"======== sample {sample.id} · request {i} of {len(requests)} · {request.kind} ========",
                      f"params: {_params(request)}"]
            if request.messages is not None:
                for message in request.messages:
                    lines += [f"──── {message.role} ────", message.content]
            else:
                lines += ["──── prompt ────", request.prompt or ""]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_prompt(case: Case, synthetic_data: DataContext, generated_data: DataContext,
                snap: SnapshotAssertion) -> None:
    bench, samples = loaded(case, generated_data if case.bench in GENERATED else synthetic_data)
    picked = [samples[i] for i in case.samples]
    runs = [(s, *requests_sent(bench, case.strategy, s)) for s in picked]
    sent = [(s, requests) for s, requests, _ in runs]
    assert all(requests for _, requests in sent), "every strategy sends at least one request"
    assert render(case, sent) == snap
    for sample, _, attempt in runs:  # the oracle's replies, parsed by the benchmark, earn the full score
        assert bench.score(sample, attempt, bench.strategy(case.strategy)).score == 1.0, (sample.id, attempt.output)


def test_every_strategy_is_pinned() -> None:
    """Every strategy of every built-in benchmark has a case (derived from the registry: nothing to add by hand)."""
    pinned = {(c.bench, c.strategy) for c in CASES}
    assert BUILTIN and {c.bench for c in CASES} == set(BUILTIN)
    for name in BUILTIN:
        for strategy in BENCHMARKS.get(name)().strategies():
            assert (name, strategy) in pinned, f"no prompt snapshot for {name} / {strategy}"
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


def test_every_snapshot_belongs_to_a_case() -> None:
    """A snapshot no case produces (a renamed or removed strategy) is stale: delete it, or regenerate."""
    folder = HERE / "__snapshots__" / "test_prompt_snapshots"
    files = {p.name for p in folder.glob("*.txt")}
    expected = {f"test_prompt[{c.id}].txt" for c in CASES}
    assert not files - expected, f"snapshots without a case (run {REGENERATE}): {sorted(files - expected)}"
    assert not expected - files, f"cases without a snapshot (run {REGENERATE}): {sorted(expected - files)}"
