"""A small benchmark used to test the core without depending on any real benchmark.

Each sample asks whether a number appears in a generated table; gold is "yes" or "no". Importing this
module registers it as ``toy`` (tests put it on ``STRUCTBENCH_PLUGINS`` for CLI subprocesses).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from structbench.backends.base import Request
from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Attempt, Benchmark, Samples, Scored, Strategy
from structbench.data import LabelGold, Sample, Table
from structbench.data.datasets import DataContext
from structbench.data.serialize import serialize
from structbench.strategies import SelfConsistency, SelfRefine, SingleTurn


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 40
    serialization: str = "markdown"


class ToyBench(Benchmark[ToyOptions]):
    name = "toy"
    title = "Toy table lookup"
    variants = ("small", "big")
    default_strategy = "direct"
    headline = "accuracy"
    metric_names = ("accuracy", "yes_rate")
    breakdown_keys = ("task", "rows")

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """Generated as they are read (a stream: a run of a million holds none of them)."""
        n = self.options.size * (1 if variant == "small" else 5)
        return Samples(self._generate(variant, seed, n), expected=n)

    def _generate(self, variant: str, seed: int, n: int) -> Iterator[Sample]:
        rng = random.Random(seed)
        for i in range(n):
            rows = [[str(rng.randint(0, 99)), rng.choice(["red", "blue"])] for _ in range(rng.randint(2, 4))]
            probe = rng.randint(0, 99)
            present = any(r[0] == str(probe) for r in rows)
            yield Sample(
                id=f"toy-{i}",
                benchmark=self.name,
                variant=variant,
                task="red" if i % 2 else "blue",
                question=f"Does the number {probe} appear in the table?",
                evidence=[Table(header=["n", "colour"], rows=rows)],
                gold=LabelGold(label="yes" if present else "no"),
                meta={"rows": len(rows)},
            )

    def prompt(self, sample: Sample) -> Request:
        table = serialize(sample.evidence, self.options.serialization)
        return Request.chat(f"{table}\n\n{sample.question} Answer yes or no.", max_tokens=4)

    def strategies(self) -> Mapping[str, Strategy]:
        return {
            "direct": SingleTurn("direct", self.prompt),
            "vote": SelfConsistency("vote", self.prompt, k=3),
            "refine": SelfRefine("refine", self.prompt, lambda s, r: "Check your answer. Answer yes or no."),
        }

    def oracle(self, sample: Sample, request: Request) -> str:
        assert isinstance(sample.gold, LabelGold)
        return f"The answer is {sample.gold.label}."

    @staticmethod
    def parse(text: str) -> str | None:
        m = re.search(r"\b(yes|no)\b", text.lower())
        return m.group(1) if m else None

    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        assert isinstance(sample.gold, LabelGold)
        texts = attempt.outputs or [attempt.output]
        votes = [p for p in map(self.parse, texts) if p]
        parsed = max(set(votes), key=votes.count) if votes else None
        return Scored(
            id=sample.id,
            task=sample.task,
            parsed=parsed,
            gold=sample.gold.label,
            score=float(parsed == sample.gold.label),
            meta=sample.meta,
        )

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        n = len(scored)
        return {
            "accuracy": sum(s.score for s in scored) / n,
            "yes_rate": sum(s.parsed == "yes" for s in scored) / n,
        }


BENCHMARK = ToyBench
if "toy" not in BENCHMARKS:
    BENCHMARKS.register("toy", ToyBench)
