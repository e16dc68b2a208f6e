"""DataBench (SemEval-2025 Task 8): questions over real-world tables, answered over the whole table or its sample."""

from __future__ import annotations

import ast
import asyncio
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from structbench.backends.base import PROMPT_TOO_LONG, BackendError, GenerationParams, Message, Request
from structbench.benchmarks.databench import prompts, tables
from structbench.benchmarks.databench.answers import is_correct
from structbench.benchmarks.databench.parse import parse_answer
from structbench.benchmarks.databench.program import (
    ProgramOutcome,
    RenderMode,
    ReplyMode,
    extract_program,
    run_program,
)
from structbench.benchmarks.databench.provenance import PROVENANCE
from structbench.benchmarks.databench.questions import read_questions, to_sample
from structbench.benchmarks.databench.source import TABLE_FILES, dataset_files, dataset_names
from structbench.contract.benchmark import (
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
from structbench.data.sample import Sample, TextGold
from structbench.data.serialize import SERIALIZERS
from structbench.sandbox import MAX_MEGABYTES, MAX_SECONDS, Limits, NamespaceMode
from structbench.strategies.common import SingleTurn

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext

TableStyle = Literal["direct", "cot"]
MAX_TOKENS: dict[str, int] = {"direct": 256, "cot": 1024, "pot": 256}
QUESTIONS_PER_DATASET = 20
"""The release's questions per dataset (the progress bar's estimate before the files are read)."""


class DataBenchOptions(PerturbationOptions):
    """Run options (``--option key=value``); the shared perturbations (``perturbation``, ``perturbation_seed``)
    change the table the ``direct`` and ``cot`` prompts show."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    serialization: str = "markdown"
    """How ``direct`` and ``cot`` show the table: a registered serializer (markdown, csv, json, html, xml,
    indexed_row_major, dataframe, df_loader, concat)."""
    max_cells: int = Field(20_000, ge=1)
    """``direct`` and ``cot`` show tables of at most this many cells (rows x columns); a larger one is not sent and
    its question counts as too long for the model (the whole variant's tables reach millions of cells)."""
    pot_request: Literal["chat", "completion"] = "chat"
    """How ``pot`` sends the baseline's code prompt: as a chat turn, or as a completion prompt (as the baseline
    prompted a code model)."""
    pot_reply: ReplyMode = "program"
    """How a ``pot`` reply becomes code: ``program`` (a fenced block, a whole ``answer(df)``, or one line), or
    ``official`` (the reply's first line is the expression returned, as the baseline's postprocess reads it)."""
    pot_render: RenderMode = "lists"
    """How a program's value becomes the answer's text: ``lists`` (pandas and NumPy values as Python lists and
    scalars first, then ``str``) or ``str`` (``str`` alone, as the official runner writes it)."""
    pot_timeout: float = Field(30.0, gt=0, le=MAX_SECONDS)
    """Wall-clock seconds per program, reading the table included (CPU limit: the same, rounded up)."""
    pot_memory_mb: int = Field(4096, ge=256, le=MAX_MEGABYTES)
    """Address space per program, in MiB: pandas and the whole table must fit (at most 1 TiB)."""
    sandbox: NamespaceMode = "auto"
    """``auto``: namespaces where available, else degrade with a warning; ``require``; ``off``."""


class ProgramOfThought(Strategy):
    """The baseline's code prompt; the model's code runs in the sandbox on the DataFrame and its value is the
    answer (``program``)."""

    name = "pot"
    description = ("The SemEval-2025 Task 8 baseline (databench-eval's example prompt): complete answer(df) in one "
                   "line from the column names; the code runs sandboxed on the DataFrame, its value is the answer.")
    answer = AnswerFormat(program=True)

    def __init__(self, bench: DataBench) -> None:
        self.bench = bench

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        response = await generate(self.bench.program_request(sample))
        text = response.text
        outcome = await asyncio.to_thread(self.bench.execute, sample, text)
        return Attempt(output=text, artifacts={"program": outcome.to_json()})


class DataBench(Benchmark[DataBenchOptions]):
    name: ClassVar[str] = "databench"
    title: ClassVar[str] = "DataBench"
    provenance = PROVENANCE
    summary: ClassVar[str] = (
        "questions over 65 real-world tables (boolean, category, number, lists), whole or 20-row sample; "
        "program-of-thought in a sandbox"
    )
    variants: ClassVar[tuple[str, ...]] = ("databench", "lite")
    default_strategy: ClassVar[str] = "pot"
    headline: ClassVar[str] = "accuracy"
    headline_label: ClassVar[str] = "accuracy"
    metric_names: ClassVar[tuple[str, ...]] = ("accuracy",)
    cluster_unit: ClassVar[str | None] = "dataset"
    paper = PaperParts(robustness=SequenceAt("structbench.benchmarks.databench.paper:ROBUSTNESS"))
    loading = Loading(prompt_options=frozenset(
        {"serialization", "max_cells", "pot_request", "pot_reply", "pot_render", "pot_timeout", "pot_memory_mb",
         "sandbox", *PERTURBATION_OPTIONS}
    ))

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        SERIALIZERS.get(self.options.serialization)  # an unknown name is a UsageError with suggestions

    # -- data ---------------------------------------------------------------------------------
    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Samples:
        """Every dataset's questions in file order, the datasets by name (seed unused: nothing is sampled). A
        dataset's files are found (downloaded) when its questions are reached."""
        variant = self.check_variant(variant)
        names = dataset_names(data)
        return Samples(self._samples(variant, data, names), expected=len(names) * QUESTIONS_PER_DATASET)

    @staticmethod
    def _samples(variant: str, data: DataContext, names: Sequence[str]) -> Iterator[Sample]:
        for dataset in names:
            qa, table = dataset_files(data, dataset, variant)
            for question in read_questions(qa, dataset):
                yield to_sample(question, variant, table)

    # -- prompting ----------------------------------------------------------------------------
    def table_request(self, sample: Sample, style: TableStyle) -> Request:
        """The ``direct`` or ``cot`` request; a table larger than ``max_cells`` is refused as too long."""
        path = _table_path(sample)
        size = tables.shape(path)
        if size.cells > self.options.max_cells:
            raise BackendError(
                f"databench: {sample.meta['dataset']}'s table ({path.name}) has {size.rows} rows x {size.columns} "
                f"columns = {size.cells} cells, more than max_cells={self.options.max_cells}: not shown (--option "
                "max_cells=N shows larger tables; the lite variant and the pot strategy need none)",
                cause=PROMPT_TOO_LONG,
            )
        table = tables.read_table(path)
        if self.options.perturbs:
            (shown,) = self.options.perturbed([table])
            assert isinstance(shown, type(table))
            table = shown
        text = prompts.show_table(style, str(sample.meta["dataset"]), table, sample.question, sample.task,
                                  self.options.serialization)
        return Request.chat(text, max_tokens=MAX_TOKENS[style], temperature=0.0)

    def program_request(self, sample: Sample) -> Request:
        """The ``pot`` request: the baseline's prompt, as a chat turn or a completion prompt."""
        text = prompts.program(sample.question, str(sample.extra.get("type", sample.task)),
                               tables.columns(_table_path(sample)))
        params = GenerationParams(max_tokens=MAX_TOKENS["pot"], temperature=0.0)
        if self.options.pot_request == "completion":
            return Request(prompt=text, params=params)
        return Request(messages=(Message("user", text),), params=params)

    def strategies(self) -> Mapping[str, Strategy]:
        def shown(style: TableStyle, description: str, answer: AnswerFormat) -> SingleTurn:
            return SingleTurn(style, lambda s: self.table_request(s, style), description=description, answer=answer)

        return {
            "pot": ProgramOfThought(self),
            "direct": shown("direct", "The table (markdown by default), the question and the answer's kind; the "
                            "answer alone on a last line 'Answer: ...' (structbench's prompt).",
                            AnswerFormat()),
            "cot": shown("cot", "As direct, reasoning step by step before the last line 'Answer: ...' "
                         "(structbench's prompt).", REASONED),
        }

    def execute(self, sample: Sample, reply: str) -> ProgramOutcome:
        """Run a ``pot`` reply on the sample's table with this run's options."""
        limits = Limits(
            cpu_seconds=max(1, int(-(-self.options.pot_timeout // 1))),
            wall_seconds=self.options.pot_timeout,
            memory_mb=self.options.pot_memory_mb,
            max_processes=32,  # pandas and pyarrow start threads, and each counts here
        )
        program = extract_program(reply, self.options.pot_reply)
        return run_program(program, _table_path(sample), render=self.options.pot_render, limits=limits,
                           namespaces=self.options.sandbox)

    def oracle(self, sample: Sample, request: Request) -> str:
        gold = _gold(sample)
        text = request.messages[-1].content if request.messages else request.prompt or ""
        if "def answer(df: pd.DataFrame)" in text:
            return _literal(gold)
        return f"{prompts.ANSWER_LINE} {gold}".replace("\n", " ")

    # -- scoring ------------------------------------------------------------------------------
    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        """The official check (``answers``) of the answer the attempt gives: the program's value for ``pot`` (a
        program that fails answers nothing and is wrong), else the reply's last ``Answer:`` line."""
        gold = _gold(sample)
        values: dict[str, float] = {}
        answer: str | None
        if strategy.answer.program:
            outcome: dict[str, Any] = attempt.artifacts.get("program") or {}
            if not outcome and attempt.output.strip():  # from a predictions file: run the reply now
                outcome = self.execute(sample, attempt.output).to_json()
            answer = outcome.get("answer")
            values["program_ok"] = float(outcome.get("status") == "ok")
        else:
            answer = parse_answer(attempt.output)
        right = answer is not None and is_correct(answer, gold, sample.task)
        return Scored(id=sample.id, task=sample.task, parsed=answer, gold=gold, score=float(right), values=values,
                      meta={"dataset": sample.meta.get("dataset")})

    def cluster(self, sample: Sample) -> str | None:
        """The dataset the question is asked of: DataBench's 1,300 questions share 65 tables, 20 each."""
        dataset = sample.meta.get("dataset")
        return None if dataset is None else str(dataset)

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """Accuracy (the official metric); with ``pot``, the share of programs that failed."""
        n = len(scored)
        out = {"accuracy": sum(s.score for s in scored) / n if n else 0.0}
        programs = [s.values["program_ok"] for s in scored if "program_ok" in s.values]
        if programs:
            out["program_error_rate"] = 1.0 - sum(programs) / len(programs)
        return out

    def baselines(self, scored: Sequence[Scored]) -> dict[str, float]:
        """``majority``: the accuracy of answering every question with the most frequent gold answer of its type
        (``True`` for most boolean questions), checked as any answer is; {} without samples."""
        golds: dict[str, Counter[str]] = defaultdict(Counter)
        for s in scored:
            golds[s.task][str(s.gold)] += 1
        if not golds:
            return {}
        majority = {task: counts.most_common(1)[0][0] for task, counts in golds.items()}
        right = sum(is_correct(majority[s.task], str(s.gold), s.task) for s in scored)
        return {"majority": right / len(scored)}

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        """The question's ``answer``, ``sample_answer`` and ``type`` as the release's file has them."""
        return {key: sample.extra.get(key) for key in ("answer", "sample_answer", "type")}


def _table_path(sample: Sample) -> Path:
    path = sample.extra.get("table")
    if not isinstance(path, str):
        raise UsageError(f"databench sample {sample.id}: no table file")
    return Path(path)


def _gold(sample: Sample) -> str:
    if not isinstance(sample.gold, TextGold):
        raise UsageError(f"databench sample {sample.id}: gold is not an answer text")
    return sample.gold.text


def _literal(gold: str) -> str:
    """A Python expression whose value prints as ``gold``: ``gold`` itself where it is such a literal (``True``,
    ``3.5``, ``['a', 'b']``), else the string ``gold``."""
    try:
        value = ast.literal_eval(gold)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return repr(gold)
    return gold if isinstance(value, bool | int | float | list) and str(value) == gold else repr(gold)


__all__ = ["TABLE_FILES", "DataBench", "DataBenchOptions"]
