"""Run directories for report tests, made by the real runner with a noisy oracle backend."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from structbench.backends.base import Backend, Request
from structbench.backends.current import current_sample
from structbench.backends.mock import MockBackend
from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Scored
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.stats.confusion import ConfusionMatrix
from toybench import ToyBench  # importing it registers ``toy``

LABELS = ("yes", "no", "(none)")


class ToyLabels(ToyBench):
    """The toy lookup scored by macro-F1 (a corpus-level metric) and reporting a (rectangular) confusion matrix."""

    name = "toylabels"
    title = "Toy lookup, macro-F1"
    variants = ("small",)
    headline = "macro_f1"
    metric_names = ("macro_f1", "accuracy")

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        return ("yes", "no")

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        pairs = [(s.gold, s.parsed or "(none)") for s in scored]
        f1s = []
        for c in ("yes", "no"):
            tp = sum(g == c and p == c for g, p in pairs)
            wrong = sum((g == c) != (p == c) for g, p in pairs)
            f1s.append(2 * tp / (2 * tp + wrong) if tp else 0.0)
        return {"macro_f1": sum(f1s) / 2, "accuracy": sum(s.score for s in scored) / len(scored)}

    def confusion_matrices(self, scored: Sequence[Scored]) -> dict[str, ConfusionMatrix]:
        """Gold yes/no rows against yes/no/(none) columns: rectangular, like SciTab's."""
        counts = Counter((s.gold, s.parsed or "(none)") for s in scored)
        matrix = [[counts[(g, p)] for p in LABELS] for g in LABELS[:2]]
        return {"labels": ConfusionMatrix(gold=list(LABELS[:2]), predicted=list(LABELS), counts=matrix)}


if "toylabels" not in BENCHMARKS:
    BENCHMARKS.register("toylabels", ToyLabels)


def noisy_oracle(accuracy: float, salt: str) -> MockBackend:
    """Replies like the oracle for a share ``accuracy`` of (sample, request) pairs, else with nothing."""

    def reply(request: Request) -> str:
        sample = current_sample.get()
        digest = hashlib.sha256(f"{salt}/{sample.id}".encode()).digest()
        keep = int.from_bytes(digest[:4], "big") / 2**32 < accuracy
        return sample.oracle(request) if keep else ""

    return MockBackend(reply=reply, model=salt)


def make_run(
    root: Path,
    name: str,
    *,
    accuracy: float,
    benches: tuple[str, ...] = ("toy",),
    strategies: tuple[str, ...] = ("all",),
    limit: int | None = None,
    data_dir: Path | None = None,
    backend: Backend | None = None,
    options: dict[str, str] | None = None,
) -> Path:
    """A finished run directory ``root/name`` whose model is right on about ``accuracy`` of the samples."""
    config = RunConfig(
        model=name,
        benches=list(benches),
        strategies=list(strategies),
        limit=limit,
        data_dir=str(data_dir) if data_dir else None,
        options=options or {},
    )
    data = DataContext(data_dir=data_dir, offline=True)
    run_dir = root / name
    Run(run_dir, config).execute(
        backend or noisy_oracle(accuracy, name), prepare(config, data), cache=None, concurrency=4, progress=False
    )
    return run_dir


@pytest.fixture(scope="session")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs over two benchmarks (toy small and big, toylabels) and two strategies: weak and strong."""
    root = tmp_path_factory.mktemp("runs")
    benches = ("toy", "toy:big", "toylabels")
    strategies = ("direct", "vote")
    weak = make_run(root, "weak", accuracy=0.45, benches=benches, strategies=strategies)
    strong = make_run(root, "strong", accuracy=0.85, benches=benches, strategies=strategies)
    return weak, strong


@pytest.fixture(scope="session")
def run_factory() -> Callable[..., Path]:
    """``make_run`` for tests that need a run of their own."""
    return make_run


def thinking_oracle(salt: str) -> MockBackend:
    """The oracle's answer after a thought that names a wrong one; for about a third of the samples the reply runs
    out of tokens inside the thought (it never closes)."""

    def reply(request: Request) -> str:
        sample = current_sample.get()
        digest = hashlib.sha256(f"{salt}/{sample.id}".encode()).digest()
        if int.from_bytes(digest[:4], "big") / 2**32 < 1 / 3:
            return "<think>Perhaps it is no. I must check the table again"
        return f"<think>Perhaps it is no. Checking the table.</think>\n{sample.oracle(request)}"

    return MockBackend(reply=reply, model=salt)


@pytest.fixture(scope="session")
def thinking_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of a model that thinks before it answers (the toy benchmark, direct strategy)."""
    root = tmp_path_factory.mktemp("thinking")
    return make_run(root, "thinker", accuracy=1.0, strategies=("direct",), backend=thinking_oracle("thinker"))
