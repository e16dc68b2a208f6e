"""SciTab (Lu et al., EMNLP 2023): verify scientific claims against a paper's table and caption."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import ConfigDict, Field

from structbench.backends.base import Message, Request
from structbench.benchmarks.scitab import prompts
from structbench.benchmarks.scitab.markup import Markup
from structbench.benchmarks.scitab.metrics import TWO_CLASS, confusion, macro_f1, macro_f1_batch, per_class, two_class
from structbench.benchmarks.scitab.parse import parse_label
from structbench.benchmarks.scitab.pool import POOL_TABLES
from structbench.benchmarks.scitab.program import EqualMode, ProgramOutcome, extract_program, run_program
from structbench.benchmarks.scitab.prompts import OPTION_LABELS, SEPARATOR, Style
from structbench.benchmarks.scitab.provenance import PROVENANCE
from structbench.benchmarks.scitab.samples import SETTINGS, demonstrations, select_claims, to_sample
from structbench.benchmarks.scitab.source import DATA_FILE, LABELS, NEI, REFUTES, SOURCE, SUPPORTS, read_claims
from structbench.contract.benchmark import (
    AnswerFormat,
    Attempt,
    Benchmark,
    Exclusion,
    Generate,
    Loading,
    PaperParts,
    Scored,
    SequenceAt,
    Strategy,
)
from structbench.core.errors import UsageError
from structbench.data.perturb import PERTURBATION_OPTIONS, PerturbationOptions
from structbench.data.sample import LabelGold, Sample
from structbench.data.serialize import SERIALIZERS
from structbench.sandbox import MAX_MEGABYTES, MAX_SECONDS, Limits, NamespaceMode
from structbench.stats.bootstrap import MeanStatistic, Statistic
from structbench.stats.classification import LabelStatistic
from structbench.stats.confusion import ConfusionMatrix
from structbench.strategies.common import SingleTurn
from structbench.strategies.tools import ToolLoop, ToolTask, not_shown, table_workspace

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext

MAX_TOKENS: dict[Style, int] = {"zero_shot": 64, "open_model": 64, "in_context": 64, "cot": 512, "pot": 512}
TOOL_MAX_TOKENS = 512
"""Tokens per reply of the tool loop (a query, or the final answer)."""
OPTION_STYLES = ("zero_shot", "open_model")
"""Prompts that list options A/B/C (a bare letter is an answer, and they need no separator to stop at)."""
ANSWERS: dict[Style, AnswerFormat] = {
    "zero_shot": AnswerFormat(options=True),
    "open_model": AnswerFormat(options=True),
    "in_context": AnswerFormat(),
    "cot": AnswerFormat(mention="last"),  # the reasoning comes first; the final answer counts
    "pot": AnswerFormat(program=True),
}
"""How each prompt style's reply gives its label."""
OPEN_MODEL_ANSWERS = {SUPPORTS: "A) True", REFUTES: "B) False", NEI: "C) Unknown"}


class SciTabOptions(PerturbationOptions):
    """Run options (``--option key=value``); the shared perturbations (``perturbation``, ``perturbation_seed``)
    change the claim's table in every strategy's prompt (the demonstrations' tables stay as they are)."""

    model_config = ConfigDict(extra="forbid")

    serialization: str = "paper"
    """Table rendering: ``paper`` (the "|| a | b ||" lines of Appendix H) or a registered serializer (markdown, csv,
    json, html, xml, triples, indexed_row_major, dataframe, df_loader, concat)."""
    markup: Markup = "strip"
    """``[BOLD]``/``[ITALIC]``/``[EMPTY]`` cell markers: ``strip`` (as the paper's prompts) or ``keep``."""
    keep_pool: bool = False
    """Also evaluate the 25 held-out pool claims (all 1,224); in_context/cot/pot then see 3 test claims."""
    pot_equal: EqualMode = "tolerant"
    """``equal(a, b)`` for PoT programs: ``tolerant`` (relative 1e-6, structbench's corrected scoring) or ``exact``
    (``==`` on floats, as the paper's programs compared: ``equal(88.64 - 86.69, 1.95)`` is False; what the
    ``scitab-table4`` preset uses)."""
    pot_timeout: float = Field(10.0, gt=0, le=MAX_SECONDS)
    """Wall-clock seconds per PoT program (CPU limit: the same, rounded up); at most a day."""
    pot_memory_mb: int = Field(512, ge=64, le=MAX_MEGABYTES)
    """Address space per PoT program, in MiB (at most 1 TiB)."""
    sandbox: NamespaceMode = "auto"
    """``auto``: namespaces where available, else degrade with a warning; ``require``; ``off``."""


class ProgramOfThought(Strategy):
    """H.4: the model writes a program; it runs in the sandbox, and the outcome goes to the artifacts."""

    name = "pot"
    description = "Program-of-thoughts (Appendix H.4): a Python program decides the label, run sandboxed."
    answer = AnswerFormat(program=True)

    def __init__(self, bench: SciTab) -> None:
        self.bench = bench

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        response = await generate(self.bench.request(sample, "pot"))
        text = response.text
        program = extract_program(text)
        outcome = await asyncio.to_thread(self.bench.execute, program)
        return Attempt(output=text, artifacts={"program": {"code": program, **outcome.to_json()}})


class SciTab(Benchmark[SciTabOptions]):
    name: ClassVar[str] = "scitab"
    title: ClassVar[str] = "SciTab"
    provenance = PROVENANCE
    summary: ClassVar[str] = (
        "scientific claim verification (supported / refuted / NEI), incl. program-of-thought in a sandbox"
    )
    variants: ClassVar[tuple[str, ...]] = ("all", "2class")
    default_strategy: ClassVar[str] = "zero_shot"
    headline: ClassVar[str] = "macro_f1"
    headline_label: ClassVar[str] = "macro F1"
    metric_names: ClassVar[tuple[str, ...]] = (
        "macro_f1",
        "macro_f1_3class",
        "macro_f1_2class",
        "macro_f1_no_nei",
        "accuracy",
        "invalid_rate",
    )
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    cluster_unit: ClassVar[str | None] = "table"
    paper = PaperParts(scoring=("pot_equal",), tables=SequenceAt("structbench.benchmarks.scitab.paper:TABLES"),
                       robustness=SequenceAt("structbench.benchmarks.scitab.paper:ROBUSTNESS"))
    loading = Loading(prompt_options=frozenset({"serialization", *PERTURBATION_OPTIONS}))

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        if self.options.serialization != prompts.PAPER_FORMAT:
            SERIALIZERS.get(self.options.serialization)  # unknown names raise UsageError with suggestions
        self._demos: dict[str, list[Sample]] = {}
        self._left_out: list[Exclusion] = []
        """What the last ``load`` left out of the variant's claims (``exclusions``)."""

    # -- data ---------------------------------------------------------------------------------
    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> list[Sample]:
        """The variant's test claims in file order (seed unused: nothing is sampled); only the first ``limit`` are
        made into samples (the table's cells cleaned), the exclusions counted over them all."""
        variant = self.check_variant(variant)
        records = read_claims(data.file(SOURCE, DATA_FILE))
        self._demos[variant] = demonstrations(records, variant, self.options.markup)
        chosen = select_claims(records, variant, keep_pool=self.options.keep_pool)
        pool = 0 if self.options.keep_pool else sum(r.table_id in POOL_TABLES for r in records)
        nei = len(records) - pool - len(chosen)
        self._left_out = [
            Exclusion(reason=why, count=n)
            for why, n in ((f"claims on the {len(POOL_TABLES)} tables held out for demonstrations "
                            "(--option keep_pool=true keeps them)", pool),
                           ("not-enough-info claims (the two-class setting excludes them)", nei))
            if n
        ]
        return [to_sample(r, variant, self.options.markup) for r in chosen[:limit]]

    def take_load(self, loaded: Benchmark) -> None:
        """The demonstrations and the claims left out, of the same claims loaded under other prompt options."""
        assert isinstance(loaded, SciTab)
        self._demos, self._left_out = loaded._demos, loaded._left_out

    def exclusions(self, scored: Sequence[Scored]) -> list[Exclusion]:
        """The claims the last ``load`` left out: the held-out pool's, and NEI claims in the two-class variant."""
        return list(self._left_out)

    def demonstrations(self, variant: str) -> list[Sample]:
        if variant not in self._demos:
            raise UsageError(f"scitab: load variant {variant!r} before prompting with demonstrations")
        return self._demos[variant]

    # -- prompting ----------------------------------------------------------------------------
    def prompt(self, sample: Sample, style: Style) -> str:
        setting = SETTINGS[sample.variant]
        fmt = self.options.serialization
        if self.options.perturbs:
            sample = sample.model_copy(update={"evidence": self.options.perturbed(sample.evidence)})
        if style == "zero_shot":
            return prompts.zero_shot(sample, setting, fmt)
        if style == "open_model":
            return prompts.open_model(sample, fmt)
        build = {"in_context": prompts.in_context, "cot": prompts.cot, "pot": prompts.pot}[style]
        return build(sample, self.demonstrations(sample.variant), setting, fmt)

    def request(self, sample: Sample, style: Style) -> Request:
        stop = () if style in OPTION_STYLES else (SEPARATOR,)
        return Request.chat(self.prompt(sample, style), max_tokens=MAX_TOKENS[style], temperature=0.0, stop=stop)

    def strategies(self) -> Mapping[str, Strategy]:
        def single(style: Style, description: str) -> SingleTurn:
            return SingleTurn(style, lambda s: self.request(s, style), description=description, answer=ANSWERS[style])

        return {
            "zero_shot": single("zero_shot", "Appendix H.1: options A true / B false / C impossible to tell."),
            "open_model": single(
                "open_model",
                "Section 4.1, the input of encoder-decoder and open-source models: linearized table, caption, "
                "claim, 'A) True B) False C) Unknown?'.",
            ),
            "in_context": single("in_context", "Appendix H.2 with 3 held-out demonstrations; direct answer."),
            "cot": single("cot", "Appendix H.3: 3 demonstrations with reasoning; the final answer counts."),
            "pot": ProgramOfThought(self),
            "tools": ToolLoop("tools", self.tool_task, answer=ANSWERS["zero_shot"], description=(
                "Ours: H.1's question over the table's schema and first rows; the model queries the table with sql "
                "and python tools, then answers as H.1 (read by its parser).")),
        }

    def tool_task(self, sample: Sample) -> ToolTask:
        """The tool loop's start: H.1's question, the (perturbed) table in a workspace of sql and python tools."""
        if self.options.perturbs:
            sample = sample.model_copy(update={"evidence": self.options.perturbed(sample.evidence)})
        workspace = table_workspace([prompts.claim_table(sample)], namespaces=self.options.sandbox)
        text = prompts.tools(sample, SETTINGS[sample.variant], workspace.schema, not_shown(1))
        return ToolTask((Message("user", text),), workspace, max_tokens=TOOL_MAX_TOKENS)

    def execute(self, program: str) -> ProgramOutcome:
        """Run a PoT program with this run's options."""
        limits = Limits(
            cpu_seconds=max(1, int(-(-self.options.pot_timeout // 1))),
            wall_seconds=self.options.pot_timeout,
            memory_mb=self.options.pot_memory_mb,
            max_processes=1,  # a PoT program has no reason to fork; this also caps its memory at memory_mb
        )
        return run_program(program, equal=self.options.pot_equal, limits=limits, namespaces=self.options.sandbox)

    def oracle(self, sample: Sample, request: Request) -> str:
        label = _gold(sample)
        text = request.messages[-1].content if request.messages else request.prompt or ""
        style = prompts.style_of(text)
        if style == "zero_shot":
            return prompts.ZERO_SHOT_ANSWERS[label]
        if style == "open_model":
            return OPEN_MODEL_ANSWERS[label]
        if style == "in_context":
            return prompts.ANSWERS[label]
        if style == "cot":
            return f"The gold label is known to the oracle.\nAnswer:\n{prompts.COT_ANSWERS[label]}"
        ans = {SUPPORTS: "True", REFUTES: "False", NEI: "None"}[label]
        return f"```python\n# the oracle prints the gold label and returns it\nprint({label!r})\nans = {ans}\n```"

    # -- scoring ------------------------------------------------------------------------------
    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        values: dict[str, float] = {}
        parsed: str | None
        answer = strategy.answer
        if answer.program:
            outcome: dict[str, Any] = attempt.artifacts.get("program") or {}
            if not outcome and attempt.output.strip():  # from a predictions file: run the reply now
                outcome = self.execute(extract_program(attempt.output)).to_json()
            elif outcome.get("equal", self.options.pot_equal) != self.options.pot_equal and outcome.get("code"):
                outcome = self.execute(outcome["code"]).to_json()  # the same program, ``equal`` as these options say
            parsed = outcome.get("label")
            values["program_ok"] = float(outcome.get("status") == "ok")
        else:
            parsed = parse_label(attempt.output, pick=answer.mention, options=answer.options)
        gold = _gold(sample)
        scored = Scored(
            id=sample.id,
            task=sample.task,
            parsed=parsed,
            gold=gold,
            score=float(parsed == gold),
            values=values,
            meta={"setting": SETTINGS[sample.variant]},
        )
        if not answer.program:
            return scored
        return self.with_corrected(scored, lambda b: b.score(sample, attempt, strategy))

    def cluster(self, sample: Sample) -> str | None:
        """The table the claim is about: SciTab's 1,199 claims share 208 tables (one paper's results each)."""
        table = sample.meta.get("table_id")
        return None if table is None else str(table)

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        """The options the prompt offers: three labels, or supported / refuted in the 2-class setting."""
        return LABELS if _three_class(scored) else TWO_CLASS

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """Macro-F1 of the variant's setting (headline), accuracy, invalid rate; for ``all`` also the macro-F1
        over supports/refutes of its non-NEI claims (``macro_f1_no_nei``: 3-class prompts, so not the paper's
        two-class protocol, which is the ``2class`` variant's ``macro_f1_2class``)."""
        n = len(scored)
        gold = [str(s.gold) for s in scored]
        pred = [s.parsed for s in scored]
        two = macro_f1(*two_class(gold, pred), TWO_CLASS)
        out = {
            "accuracy": sum(s.score for s in scored) / n if n else 0.0,
            "invalid_rate": sum(p is None for p in pred) / n if n else 0.0,
        }
        if _three_class(scored):
            three = macro_f1(gold, pred, LABELS)
            out |= {"macro_f1": three, "macro_f1_3class": three, "macro_f1_no_nei": two}
        else:
            out |= {"macro_f1": two, "macro_f1_2class": two}
        programs = [s.values["program_ok"] for s in scored if "program_ok" in s.values]
        if programs:
            out["program_error_rate"] = 1.0 - sum(programs) / len(programs)
        return out

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """Macro-F1 (both settings) and the invalid rate on all bootstrap resamples at once."""
        gold = [str(s.gold) for s in pool]
        pred = [s.parsed for s in pool]
        if metric == "invalid_rate":
            return MeanStatistic(np.array([p is None for p in pred], dtype=float))
        three = _three_class(pool)
        over_two = {"macro_f1_no_nei": three, "macro_f1_2class": not three, "macro_f1": not three}
        over_three = {"macro_f1_3class": three, "macro_f1": three}
        if over_two.get(metric):
            return LabelStatistic.of(gold, pred, TWO_CLASS, macro_f1_batch, keep=[g in TWO_CLASS for g in gold])
        if over_three.get(metric):
            return LabelStatistic.of(gold, pred, LABELS, macro_f1_batch)
        return None

    def confusion_matrices(self, scored: Sequence[Scored]) -> dict[str, ConfusionMatrix]:
        """Three-class (the gold labels present) and two-class (NEI claims left out), each against the three
        labels plus ``invalid``; the two-class matrix is rectangular."""
        gold = [str(s.gold) for s in scored]
        pred = [s.parsed for s in scored]
        present = [label for label in LABELS if label in gold]
        g2, p2 = two_class(gold, pred)
        matrices = {"3-class": confusion(gold, pred, present, "three-class")}
        if g2:
            matrices["2-class"] = confusion(g2, p2, TWO_CLASS, "two-class, NEI claims left out")
        return matrices

    def extra_results(self, scored: Sequence[Scored]) -> dict[str, Any]:
        """Per-class scores, label counts."""
        gold = [str(s.gold) for s in scored]
        pred = [s.parsed for s in scored]
        present = [label for label in LABELS if label in gold]
        return {
            "per_class": per_class(gold, pred, present),
            "gold_counts": dict(Counter(gold)),
            "predicted_counts": {str(k): v for k, v in Counter(pred).items()},
        }

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        return {
            "setting": SETTINGS[sample.variant],
            "option_map": dict(OPTION_LABELS),
            "demonstrations": [d.id for d in self._demos.get(sample.variant, [])],
        }


def _three_class(scored: Sequence[Scored]) -> bool:
    """Whether the scored claims were asked in the three-class setting (variant ``all``)."""
    return not scored or scored[0].meta.get("setting", "3-class") == "3-class"


def _gold(sample: Sample) -> Any:
    if not isinstance(sample.gold, LabelGold) or sample.gold.label not in LABELS:
        raise UsageError(f"scitab sample {sample.id}: gold is not a veracity label")
    return sample.gold.label
