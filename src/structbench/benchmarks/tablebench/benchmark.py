"""TableBench (Wu et al., AAAI 2025): questions over a table in four categories, under four instruction types."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from pydantic import ConfigDict, Field

from structbench.backends.base import Request
from structbench.benchmarks.tablebench import oracle, prompts
from structbench.benchmarks.tablebench.parse import final_answer, python_block
from structbench.benchmarks.tablebench.program import Execution, ProgramOutcome, run_programs
from structbench.benchmarks.tablebench.prompts import PAPER_FORMAT
from structbench.benchmarks.tablebench.provenance import PROVENANCE
from structbench.benchmarks.tablebench.samples import Release, gold_answer
from structbench.benchmarks.tablebench.scoring import READINGS, Scorer, chart_scores, program_answer, text_scores
from structbench.benchmarks.tablebench.source import SOURCE
from structbench.benchmarks.tablebench.taxonomy import (
    INSTRUCTION_TYPES,
    METRIC_KEYS,
    VISUALIZATION,
    InstructionType,
    refined_metric,
)
from structbench.contract.benchmark import (
    DIRECT,
    REASONED,
    AnswerFormat,
    Attempt,
    Benchmark,
    Generate,
    Loading,
    PaperParts,
    Samples,
    Scored,
    SequenceAt,
    Strategy,
)
from structbench.core.errors import UsageError
from structbench.data.perturb import PERTURBATION_OPTIONS, PerturbationOptions
from structbench.data.sample import Sample
from structbench.data.serialize import SERIALIZERS
from structbench.sandbox import MAX_MEGABYTES, MAX_SECONDS, Limits, NamespaceMode
from structbench.stats.bootstrap import MeanStatistic, RatioStatistic, Statistic
from structbench.strategies.common import as_written

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext

DESCRIPTIONS: dict[InstructionType, str] = {
    "DP": "Direct prompting: the release's DP instruction; the answer on a 'Final Answer:' line.",
    "TCoT": "Textual chain of thought: the release's TCoT instruction; reasoning, then 'Final Answer:'.",
    "SCoT": "Symbolic chain of thought: the release's SCoT instruction; Thought / Action / Result steps, then "
            "'Final Answer:'.",
    "PoT": "Program of thought: the release's PoT instruction; the reply's Python runs in the sandbox over "
           "table.csv and prints 'Final Answer:'.",
}
ANSWERS: dict[InstructionType, AnswerFormat] = {
    "DP": DIRECT, "TCoT": REASONED, "SCoT": REASONED, "PoT": AnswerFormat(mention="last", program=True),
}


EXECUTIONS: dict[Scorer, Execution] = {"structbench": "isolated", "released": "released", "paper": "paper"}
"""How each scorer runs programs: alone, as a script; as the released parser of April 2025 or August 2024 does."""


class TableBenchOptions(PerturbationOptions):
    """Run options (``--option key=value``); the shared perturbations (``perturbation``, ``perturbation_seed``) change
    the table the instruction shows (a program's ``table.csv`` stays the release's table)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    serialization: str = PAPER_FORMAT
    """Table rendering in the instruction: ``paper`` (the release's instruction as it is, the table as a Python dict)
    or a registered serializer (markdown, csv, json, html, ...), which replaces the instruction's table."""
    scorer: Scorer = "structbench"
    """``structbench``: the last 'Final Answer:' line, EM on the answers as written, programs run each alone, the
    overall Mix with charts at full weight; ``released``: the repository's parser and metrics of April 2025 bug for
    bug (first answer line, EM on punctuation-stripped texts, programs run as its parser runs them, charts at 1/100
    in the overall Mix); ``paper``: as released, with the August 2024 parser behind the paper's table (a program's
    output without 'Final Answer:' is no answer)."""
    program_timeout: float = Field(15.0, gt=0, le=MAX_SECONDS)
    """Seconds a program may run (the released parser's limit is 15), each run."""
    program_memory_mb: int = Field(2048, ge=256, le=MAX_MEGABYTES)
    """Address space of a program's sandbox, in MiB (pandas and matplotlib take about 600 of it)."""
    sandbox: NamespaceMode = "auto"
    """``auto``: namespaces where available, else degrade with a warning; ``require``; ``off``."""

    @property
    def execution(self) -> Execution:
        """How programs run: ``isolated`` for structbench's scoring, as the released parser runs them otherwise."""
        return EXECUTIONS[self.scorer]


class Instruction(Strategy):
    """One of the release's instruction types: its instruction as the prompt; a program in the reply (program of
    thought, or any chart question) runs in the sandbox and its outcome goes to the artifacts."""

    def __init__(self, bench: TableBench, itype: InstructionType) -> None:
        self.bench = bench
        self.itype = itype
        self.name = itype.lower()
        self.description = DESCRIPTIONS[itype]
        self.answer = ANSWERS[itype]

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        response = await generate(self.bench.request(sample, self.itype))
        text = response.text
        if not self.bench.runs_program(sample, self):
            return Attempt(output=text, artifacts=as_written(*response.choices[:1]))
        outcomes = await asyncio.to_thread(self.bench.programs, sample, text, self.bench.executions())
        return Attempt(output=text, artifacts={"program": {"code": python_block(text), **outcomes}})


class TableBench(Benchmark[TableBenchOptions]):
    name: ClassVar[str] = "tablebench"
    title: ClassVar[str] = "TableBench"
    summary: ClassVar[str] = (
        "table QA in 18 subtypes (fact checking, numerical reasoning, data analysis, charts), DP / TCoT / SCoT / PoT"
    )
    provenance = PROVENANCE
    variants: ClassVar[tuple[str, ...]] = ("test",)
    default_strategy: ClassVar[str] = "dp"
    headline: ClassVar[str] = "overall"
    headline_label: ClassVar[str] = "overall Mix (EM / EM±10% / ROUGE-L / Pass@1)"
    metric_names: ClassVar[tuple[str, ...]] = (
        "overall", *METRIC_KEYS.values(), "overall_original",
        *(f"{key}_original" for key in METRIC_KEYS.values() if key != "visualization"),
        "parse_rate", "execution_rate",
    )
    breakdown_keys: ClassVar[tuple[str, ...]] = ("task", "qsubtype")
    cluster_unit: ClassVar[str | None] = "table"
    paper = PaperParts(scoring=("scorer",), tables=SequenceAt("structbench.benchmarks.tablebench.paper:TABLES"),
                       robustness=SequenceAt("structbench.benchmarks.tablebench.paper:ROBUSTNESS"))
    loading = Loading(prompt_options=frozenset({"serialization", *PERTURBATION_OPTIONS}))

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        if self.options.serialization != PAPER_FORMAT:
            SERIALIZERS.get(self.options.serialization)  # an unknown name is a UsageError with suggestions

    # -- data ---------------------------------------------------------------------------------
    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """The release's questions in file order, streamed (seed unused: nothing is sampled)."""
        variant = self.check_variant(variant)
        release = Release(data.locate(SOURCE))
        return Samples(release.samples(variant), expected=release.count)

    def cluster(self, sample: Sample) -> str | None:
        """The table the question is asked of: TableBench asks several questions of most of its tables."""
        return str(sample.meta.get("table")) if sample.meta.get("table") else None

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        return {"qtype": sample.task, "qsubtype": sample.meta.get("qsubtype"),
                "chart_type": sample.meta.get("chart_type")}

    # -- prompting ----------------------------------------------------------------------------
    def request(self, sample: Sample, itype: InstructionType) -> Request:
        text = sample.extra["instructions"][itype]
        if self.options.serialization == PAPER_FORMAT and not self.options.perturbs:
            return prompts.request(text)
        evidence = self.options.perturbed(sample.evidence) if self.options.perturbs else sample.evidence
        shown = prompts.render_table(evidence, self.options.serialization, sample.extra["table"])
        return prompts.request(prompts.with_table(text, shown, self.options.serialization, sample.id))

    def strategies(self) -> Mapping[str, Strategy]:
        return {t.lower(): Instruction(self, t) for t in INSTRUCTION_TYPES}

    @staticmethod
    def runs_program(sample: Sample, strategy: Strategy) -> bool:
        """Whether the reply's program decides the answer: a chart question, or program of thought."""
        return sample.task == VISUALIZATION or strategy.answer.program

    def executions(self) -> tuple[Execution, ...]:
        """The ways programs run for this scoring: its own, and the isolated one of the corrected twin."""
        own = self.options.execution
        return (own,) if own == "isolated" else (own, "isolated")

    def programs(self, sample: Sample, reply: str, executions: Sequence[Execution]) -> dict[str, Any]:
        """The reply's program run each way (in one sandbox), by execution mode."""
        return {mode: outcome.to_json() for mode, outcome in self.run_ways(sample, reply, executions).items()}

    def execute(self, sample: Sample, reply: str, execution: Execution) -> ProgramOutcome:
        return self.run_ways(sample, reply, (execution,))[execution]

    def run_ways(self, sample: Sample, reply: str, executions: Sequence[Execution]) -> dict[Execution, ProgramOutcome]:
        chart = sample.task == VISUALIZATION
        limits = Limits(cpu_seconds=2 * int(-(-self.options.program_timeout // 1)) + 60,
                        memory_mb=self.options.program_memory_mb, max_processes=8)
        code = python_block(reply)
        return run_programs(code, sample.extra["table"], kind="chart" if chart else "answer",
                            chart_type=sample.meta.get("chart_type"), executions=executions,
                            timeout=self.options.program_timeout, limits=limits, namespaces=self.options.sandbox,
                            deterministic=bool(code) and self.oracle_wrote(sample, code))

    @staticmethod
    def oracle_wrote(sample: Sample, code: str) -> bool:
        """Whether ``code`` is the program the oracle writes for ``sample`` under some instruction type (the same
        chart program under all four): it prints or draws the reference's literal values, so its outcome depends on
        nothing but what it runs on, and ``run_programs`` runs it once per process and way."""
        chart = sample.task == VISUALIZATION
        try:
            written = {python_block(oracle.reply(t, gold_answer(sample, t), chart=chart,
                                                 chart_type=sample.meta.get("chart_type")))
                       for t in INSTRUCTION_TYPES}
        except ValueError:  # a chart answer the oracle cannot read
            return False
        return code in written

    def oracle(self, sample: Sample, request: Request) -> str:
        text = request.messages[-1].content if request.messages else request.prompt or ""
        instructions: dict[str, str] = sample.extra["instructions"]
        itype = next((t for t in INSTRUCTION_TYPES if t in instructions and self._text(sample, t) == text), None)
        if itype is None:
            raise UsageError(f"tablebench: the oracle does not know the prompt of sample {sample.id}")
        return oracle.reply(itype, gold_answer(sample, itype), chart=sample.task == VISUALIZATION,
                            chart_type=sample.meta.get("chart_type"))

    def _text(self, sample: Sample, itype: InstructionType) -> str:
        """The prompt's text of an instruction type under this run's table options."""
        request = self.request(sample, itype)
        return request.messages[-1].content if request.messages else request.prompt or ""

    # -- scoring ------------------------------------------------------------------------------
    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        attempt = self._with_outcomes(sample, attempt, strategy)
        scored = self._score(sample, attempt, strategy)
        return self.with_corrected(scored, lambda bench: cast(TableBench, bench)._score(sample, attempt, strategy))

    def _with_outcomes(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Attempt:
        """``attempt`` with its program's outcome each way this scoring and its corrected twin read: those it lacks
        (a predictions file carries none) run now in one sandbox, as a run runs them (``Instruction.run``), rather
        than one sandbox for the scoring and another for the twin."""
        if not self.runs_program(sample, strategy):
            return attempt
        stored: dict[str, Any] = attempt.artifacts.get("program") or {}
        missing = [mode for mode in self.executions() if mode not in stored]
        if not missing:
            return attempt
        ran = self.programs(sample, attempt.output, missing)
        return dataclasses.replace(attempt, artifacts={**attempt.artifacts, "program": {**stored, **ran}})

    def _outcome(self, sample: Sample, attempt: Attempt) -> ProgramOutcome:
        """The program's outcome under this scoring's execution: from the attempt, or run now (a predictions
        file carries no outcome)."""
        stored: dict[str, Any] = attempt.artifacts.get("program") or {}
        mode = self.options.execution
        if mode in stored:
            return ProgramOutcome.from_json(stored[mode])
        return self.execute(sample, attempt.output, mode)

    def _score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        itype = strategy.itype if isinstance(strategy, Instruction) else _itype(strategy)
        reading = READINGS[self.options.scorer]
        gold = gold_answer(sample, itype)
        qsubtype = str(sample.meta.get("qsubtype", ""))
        meta = {"qsubtype": qsubtype, "metric": refined_metric(sample.task, qsubtype), "instruction": itype}
        if sample.task == VISUALIZATION:
            verdict, chart = chart_scores(gold, self._outcome(sample, attempt), sample.meta.get("chart_type"))
            return Scored(id=sample.id, task=sample.task, parsed=verdict, gold=gold, score=chart["pass"],
                          values=chart, meta=meta)
        values: dict[str, float] = {}
        if strategy.answer.program:
            outcome = self._outcome(sample, attempt)
            answer = program_answer(outcome.output, reading)
            values["executed"] = float(outcome.ran)
        else:
            answer = final_answer(attempt.as_written if reading.as_written else attempt.output,
                                  first=reading.first_answer)
        scores = text_scores(gold, answer, sample.task, qsubtype, reading)
        return Scored(id=sample.id, task=sample.task, parsed=answer or None, gold=gold, score=scores.score,
                      values={**scores.values, **values}, meta=meta)

    def _viz_weight(self) -> float:
        """A chart's weight in the overall Mix: 1, or 1/100 as the released code adds Pass@1 as a fraction."""
        return 0.01 if READINGS[self.options.scorer].fraction_pass else 1.0

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """The overall Mix (the refined metric of each sample, averaged), each category's score, the paper's
        ROUGE-L Mix and its per-category ROUGE-L, the parse rate (Parse@1) and the execution rate (ECR@1, over the
        samples whose program ran)."""
        n = len(scored)
        if not n:
            return {"overall": 0.0, "overall_original": 0.0, "parse_rate": 0.0}
        weight = self._viz_weight()
        out = {
            "overall": sum(s.score * (weight if s.task == VISUALIZATION else 1.0) for s in scored) / n,
            "overall_original": sum(s.values.get("original", 0.0) for s in scored) / n,
            "parse_rate": sum(s.values.get("parsed", 0.0) for s in scored) / n,
        }
        for qtype, key in METRIC_KEYS.items():
            group = [s for s in scored if s.task == qtype]
            if group:
                out[key] = sum(s.score for s in group) / len(group)
                if qtype != VISUALIZATION:
                    out[f"{key}_original"] = sum(s.values.get("original", 0.0) for s in group) / len(group)
        ran = [s.values["executed"] for s in scored if "executed" in s.values]
        if ran:
            out["execution_rate"] = sum(ran) / len(ran)
        return out

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """Every metric of ``aggregate`` (means over all samples or over a category) on all resamples at once."""
        scores = np.array([s.score for s in pool], dtype=float)
        original = np.array([s.values.get("original", 0.0) for s in pool], dtype=float)
        if metric == "overall":
            weight = np.array([self._viz_weight() if s.task == VISUALIZATION else 1.0 for s in pool])
            return MeanStatistic(scores * weight)
        if metric == "overall_original":
            return MeanStatistic(original)
        if metric == "parse_rate":
            return MeanStatistic(np.array([s.values.get("parsed", 0.0) for s in pool], dtype=float))
        if metric == "execution_rate":
            ran = np.array([float("executed" in s.values) for s in pool])
            return RatioStatistic(np.array([s.values.get("executed", 0.0) for s in pool], dtype=float), ran)
        for qtype, key in METRIC_KEYS.items():
            mask = np.array([float(s.task == qtype) for s in pool])
            if metric == key:
                return RatioStatistic(scores * mask, mask)
            if metric == f"{key}_original":
                return RatioStatistic(original * mask, mask)
        return None


def _itype(strategy: Strategy) -> InstructionType:
    """The instruction type a strategy of another benchmark instance stands for (by its name)."""
    for itype in INSTRUCTION_TYPES:
        if strategy.name == itype.lower():
            return itype
    raise UsageError(f"tablebench: strategy {strategy.name!r} is no instruction type")

