"""StrucText-Eval (Gu et al., 2025): reasoning over structure-rich text in 8 languages and 29 tasks.

Variants: ``test`` and ``hard`` are generated here (seeded, verified against real parsers);
``official`` reads the released JSON files. The answer is read after the reply's last "Answer:"
heading and scored by thresholded RougeL (the headline), exact match and BLEU, and optionally by an
LLM judge (``--option judge=same|BACKEND[:NAME]``). ``scorer=released`` (what the presets use) scores
as the official ``Evaluation/get_evaluation_result.py`` did: the whole reply, the package's RougeL as
is, and samples whose scoring raises in the package skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from structbench.backends.base import Request
from structbench.benchmarks.structext import judge, official, prompts
from structbench.benchmarks.structext.answers import extract_answer
from structbench.benchmarks.structext.judge import Judged
from structbench.benchmarks.structext.metrics import (
    RELEASED_FRAMES,
    EmptyText,
    TooDeep,
    bleu,
    rouge_l_parts,
    thresholded,
)
from structbench.benchmarks.structext.provenance import PROVENANCE
from structbench.benchmarks.structext.suites import (
    Item,
    demonstrations,
    iter_suite_items,
    suite_items,
    suite_size,
)
from structbench.benchmarks.structext.templates import LANGUAGES, TEMPLATES
from structbench.contract.benchmark import (
    Attempt,
    Benchmark,
    Exclusion,
    PaperParts,
    Samples,
    Scored,
    SequenceAt,
    Strategy,
    check_model,
    content_key,
)
from structbench.data.evidence import StructuredText
from structbench.data.sample import Sample, TextGold
from structbench.strategies.common import SingleTurn

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext
    from structbench.stats.bootstrap import Statistic


class StructextOptions(BaseModel):
    """Run options (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid")

    syntax: Literal["balanced", "official"] = "balanced"
    """Generated Syntax questions: half broken texts (``balanced``), or all broken as released (``official``)."""
    parse: Literal["answer", "raw"] = "answer"
    """``answer``: score the text after the reply's last "Answer:" heading; ``raw``: the whole reply
    (the official scorer)."""
    empty: Literal["zero", "drop"] = "zero"
    """An empty answer scores 0 (``zero``), or is left out of the averages as the official scorer's
    exception handler does (``drop``, bug-compatible)."""
    scorer: Literal["structbench", "released"] = "structbench"
    """``released``: the official scorer (``Evaluation/get_evaluation_result.py`` with rouge 1.0.1), bug for
    bug, as the presets use it: the whole reply is compared (``parse=raw``), RougeL is the package's (a perfect
    match is 0.999999995), and a sample whose scoring raises in the package is skipped, as its exception
    handler does: an empty reply (or one of only dots), and a ``RecursionError`` when the package rebuilds an
    LCS of more than 986 steps (a long reply sentence). The skipped samples are counted in ``extra.excluded``.
    ``structbench`` (default): ``parse`` and ``empty`` decide."""
    shots: int = Field(3, ge=0, le=10)
    """Demonstrations for ``few_shot`` / ``simple_few_shot`` (and at most this many for the official prompt)."""
    threshold: float = Field(0.75, ge=0.0, le=1.0)
    """RougeL below this counts as 0 (paper Sec. 4.3)."""
    max_tokens: int = Field(2048, ge=1)
    """Generation limit per reply."""
    verify: bool = True
    """Recheck every generated answer with the parsers (a disagreement raises)."""
    judge: str | None = None
    """LLM-as-judge: ``same`` (the run's own model) or ``BACKEND[:NAME]`` of a judge model; off when unset."""
    judge_base_url: str | None = None
    """The judge backend's server address (with ``judge=BACKEND[:NAME]``)."""

    @model_validator(mode="after")
    def _released_reads_the_whole_reply(self) -> StructextOptions:
        if self.scorer == "released":
            given = [f"{k}={getattr(self, k)}" for k, want in (("parse", "raw"), ("empty", "drop"))
                     if k in self.model_fields_set and getattr(self, k) != want]
            if given:
                raise ValueError(
                    f"scorer=released compares the whole reply and skips empty ones; drop {', '.join(given)}"
                )
        return self

    @property
    def raw(self) -> bool:
        """Whether the whole reply is compared with the gold."""
        return self.parse == "raw" or self.scorer == "released"


def _sample(item: Item, variant: str) -> Sample:
    template = TEMPLATES[item.template]
    return Sample(
        id=item.id,
        benchmark="structext",
        variant=variant,
        task=template.task,
        question=item.question,
        evidence=[StructuredText(language=template.language, text=item.reference)],
        gold=TextGold(text=item.answer),
        meta={"language": template.language, "template": template.id, "depth": item.depth,
              "width": item.width},
        extra={"seed": item.seed},
    )


class StrucTextEval(Benchmark[StructextOptions]):
    """Generated Test / Test-Hard suites and the official release, under the paper's prompts."""

    name = "structext"
    title = "StrucText-Eval"
    provenance = PROVENANCE
    summary = (
        "questions over structure-rich text in 8 languages, 29 templates, generated at any depth and width"
    )
    variants = ("test", "hard", "official")
    default_strategy = "naive"
    headline = "rougeL"
    headline_label = "RougeL (≥ 0.75)"
    metric_names = ("rougeL", "rougeL_raw", "exact_match", "bleu")
    breakdown_keys = ("language", "task", "template", "depth", "width")
    cluster_unit = "document"
    paper = PaperParts(scoring=("scorer", "parse", "empty"),
                       tables=SequenceAt("structbench.benchmarks.structext.paper:TABLES"))

    # --- data ---------------------------------------------------------------------------------------

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """The release's samples (``official``: read whole), or a generated suite's (``test``, ``hard``: made as
        they are read, a block of structures at a time)."""
        variant = self.check_variant(variant)
        if variant == "official":
            samples = official.load(data)
            return samples[:limit] if limit is not None else samples
        syntax, verify = self.options.syntax, self.options.verify
        items = iter_suite_items(variant, seed, syntax=syntax, verify=verify, limit=limit)

        def whole() -> list[Sample]:  # the structures made in forked processes (``suite_items``)
            return [_sample(item, variant) for item in suite_items(variant, seed, syntax=syntax, verify=verify,
                                                                   limit=limit)]

        return Samples((_sample(item, variant) for item in items), expected=suite_size(variant, limit), whole=whole)

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        reference = sample.evidence[0]
        assert isinstance(reference, StructuredText)
        assert isinstance(sample.gold, TextGold)
        return {
            "question": sample.question,
            "reference": reference.text,
            "language": sample.meta["language"],
            "task": sample.task,
            "template": sample.meta["template"],
            "depth": sample.meta["depth"],
            "width": sample.meta["width"],
            "answer": sample.gold.text,
        }

    # --- prompts ------------------------------------------------------------------------------------

    def parts(self, sample: Sample, demos: list[prompts.Demo] | None = None) -> prompts.PromptParts:
        """What the prompt templates show about ``sample``."""
        template = TEMPLATES[sample.meta["template"]]
        ask, requirement = template.split(sample.question)
        reference = sample.evidence[0]
        assert isinstance(reference, StructuredText)
        return prompts.PromptParts(
            language=LANGUAGES[template.language].display,
            typename=template.language,
            question=ask,
            requirement=requirement,
            full_question=sample.question,
            reference=reference.text,
            hint=sample.extra.get("rule_hint") or prompts.RULE_HINTS[template.id],
            demos=demos or [],
        )

    def demos(self, sample: Sample, *, simple: bool = False) -> list[prompts.Demo]:
        """``shots`` demonstrations: released examples, or freshly generated ones of the same template.

        Few-shot demonstrations share the sample's depth and width (the release draws them with the
        same settings); simple ones are the smallest structures (depth 1, width 1), or for released
        samples the shortest of their examples.
        """
        k = self.options.shots
        template = TEMPLATES[sample.meta["template"]]
        if "examples" in sample.extra:
            examples = [official.demo(template, ex) for ex in sample.extra["examples"]]
            if simple:
                examples = sorted(examples, key=lambda d: len(d.reference))
            return examples[:k]
        depth, width = (1, 1) if simple else (sample.meta["depth"], sample.meta["width"])
        out = []
        for qa in demonstrations(template.id, depth, width, sample.extra["seed"], k, syntax=self.options.syntax):
            question = template.question(**qa.slots)
            ask, requirement = template.split(question)
            out.append(prompts.Demo(ask, requirement, question, qa.reference, qa.answer))
        return out

    def _request(self, text: str) -> Request:
        return Request.chat(text, max_tokens=self.options.max_tokens)

    def strategies(self) -> Mapping[str, Strategy]:
        def single(name: str, build: Callable[[Sample], str], description: str) -> Strategy:
            return SingleTurn(name, lambda s: self._request(build(s)), description)

        def official_prompt(sample: Sample, *, hint: bool) -> str:
            template = TEMPLATES[sample.meta["template"]]
            examples = [official.demo(template, ex) for ex in sample.extra.get("examples", [])]
            return prompts.official(self.parts(sample, examples), with_hint=hint)

        table = [
            single("naive", lambda s: prompts.naive(self.parts(s)), "Paper Table 7."),
            single("self_cot", lambda s: prompts.self_cot(self.parts(s)), "Paper Table 8 (CoT)."),
            single("ps_cot", lambda s: prompts.ps_cot(self.parts(s)), "Plan-and-Solve CoT in Table 8's layout."),
            single("rule_hint", lambda s: prompts.rule_hint(self.parts(s)), "Paper Table 10 (w/ hint)."),
            single("few_shot", lambda s: prompts.few_shot(self.parts(s, self.demos(s))),
                   "Paper Table 9 with `shots` demonstrations of the same size."),
            single("simple_few_shot", lambda s: prompts.few_shot(self.parts(s, self.demos(s, simple=True))),
                   "Paper Table 9 with the smallest demonstrations."),
            single("official", lambda s: official_prompt(s, hint=False),
                   "The official repository's prompt (released examples included)."),
            single("official_hint", lambda s: official_prompt(s, hint=True),
                   "The official repository's prompt with its '### Hint:' section."),
        ]
        if self.options.judge is not None:
            model = self._judge_model()
            table = [Judged(strategy, model, self.options.judge_base_url) for strategy in table]
        return {s.name: s for s in table}

    def _judge_model(self) -> str | None:
        """The judge's ``BACKEND[:NAME]`` (None: the run's own model); an unknown backend fails here, before the run."""
        if self.options.judge in (None, "same"):
            return None
        return check_model(self.options.judge)

    def oracle(self, sample: Sample, request: Request) -> str:
        assert isinstance(sample.gold, TextGold)
        if judge.is_judge_request(request):
            return "True"
        return sample.gold.text if self.options.raw else f"### Answer:\n{sample.gold.text}"

    # --- scoring ------------------------------------------------------------------------------------

    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        assert isinstance(sample.gold, TextGold)
        gold = sample.gold.text
        released = self.options.scorer == "released"
        answer = extract_answer(attempt.as_written if released else attempt.output, raw=self.options.raw)
        skipped = ""
        try:  # the official call order: gold is the package's hypothesis
            f, p, r = rouge_l_parts(gold, answer, frames=RELEASED_FRAMES if released else None)
            empty = 0.0
        except EmptyText:
            f, p, r, empty, skipped = 0.0, 0.0, 0.0, 1.0, "skipped_empty"
        except TooDeep:
            f, p, r, empty, skipped = 0.0, 0.0, 0.0, 0.0, "skipped_recursion"
        if released:
            rouge = thresholded(f, self.options.threshold)
        else:  # p = r = 1 is a perfect F1 that the package's 1e-8 smoothing reports as 0.999999995.
            rouge = 1.0 if p == r == 1.0 else thresholded(f, self.options.threshold)
        values = {
            "rougeL": rouge,
            "rougeL_raw": f,
            "exact_match": float(answer.strip() == gold.strip()),
            "bleu": bleu(answer, gold) if answer else 0.0,
            "empty": empty,
        }
        if released and skipped:
            values[skipped] = 1.0
        if "judge" in attempt.artifacts:
            verdict = attempt.artifacts["judge"]["verdict"]
            values["judge"] = verdict or 0.0
            values["judge_unparsed"] = float(verdict is None)
        scored = Scored(id=sample.id, task=sample.task, parsed=answer, gold=gold, score=rouge, values=values,
                        meta=dict(sample.meta))
        return self.with_corrected(scored, lambda b: b.score(sample, attempt, strategy))

    def cluster(self, sample: Sample) -> str | None:
        """The structured document the question is asked of: questions that share one are resampled together
        (a generated suite gives most questions their own)."""
        return content_key([e.model_dump_json() for e in sample.evidence])

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        counted = [s for s in scored if self.averaged(s)]
        n = len(counted)
        out = {name: sum(s.values[name] for s in counted) / n if n else 0.0 for name in self.metric_names}
        out["empty_rate"] = sum(s.values.get("empty", 0.0) for s in scored) / len(scored) if scored else 0.0
        judged = [s.values["judge"] for s in counted if "judge" in s.values]
        if judged:
            out["judge"] = sum(judged) / len(judged)
        return out

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """The averaged metrics and the empty rate on all resamples at once (``aggregate``'s means, 0.0 where
        nothing is averaged). numpy is imported here, at the end of a run: a run's start-up needs none of it."""
        import numpy as np

        from structbench.stats.bootstrap import RatioStatistic

        if metric == "empty_rate":
            return RatioStatistic(np.array([s.values.get("empty", 0.0) for s in pool]), np.ones(len(pool)), 0.0)
        if metric in self.metric_names:
            rows = list(pool)  # read once: a run's outcomes (``Outcomes``) build each row as it is read
            counted = [self.averaged(s) for s in rows]
            values = [s.values[metric] if kept else 0.0 for s, kept in zip(rows, counted, strict=True)]
            return RatioStatistic(np.array(values, dtype=float), np.array(counted, dtype=float), 0.0)
        return None

    def averaged(self, s: Scored) -> bool:
        """Whether ``s`` counts in the averages: every sample does, except empty answers under ``empty=drop`` and
        what the released scorer skips under ``scorer=released``."""
        if self.options.scorer == "released":
            return not any(s.values.get(key) for key in SKIPPED)
        return not (self.options.empty == "drop" and s.values.get("empty"))

    def exclusions(self, scored: Sequence[Scored]) -> list[Exclusion]:
        """With ``empty=drop``, the empty answers the averages leave out; with ``scorer=released``, the samples
        the released scorer skips, by why."""
        if self.options.scorer == "released":
            counts = {key: sum(bool(s.values.get(key)) for s in scored) for key in SKIPPED}
            return [Exclusion(reason=SKIPPED[key], count=n) for key, n in counts.items() if n]
        dropped = sum(not self.averaged(s) for s in scored)
        if not dropped:
            return []
        return [Exclusion(reason="empty answers left out of the averages (--option empty=drop)", count=dropped)]


SKIPPED = {
    "skipped_empty": "empty replies, skipped as the released scorer skips them (the rouge package raises "
    "ValueError; --option scorer=released)",
    "skipped_recursion": "replies the released scorer skips: the rouge package raises RecursionError rebuilding a "
    "long LCS (--option scorer=released)",
}
"""Per-sample flags of the samples ``scorer=released`` leaves out, with what the exclusion says."""
