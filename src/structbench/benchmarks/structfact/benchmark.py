"""StructFact (Huang et al.): fact verification over structured evidence with the answers Yes / No /
Not sure enough, asked as options A/B/C, scored by weighted F1 averaged over option orders
(``option_map=0,1,2``, see ``option_maps``)."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from structbench.backends.base import Request
from structbench.benchmarks.structfact.generated.options import GENERATION_OPTIONS, GeneratedOptions
from structbench.benchmarks.structfact.generated.synthetic import SOURCE as SYNTHETIC
from structbench.benchmarks.structfact.loader import LABELS, load_file
from structbench.benchmarks.structfact.metrics import (
    BATCH_METRICS,
    METRIC_NAMES,
    NO_ANSWER,
    classification_metrics,
)
from structbench.benchmarks.structfact.option_maps import (
    MAP_KEY,
    MapAverage,
    PerOptionMap,
    averaged,
    expand,
    map_of,
    per_map,
)
from structbench.benchmarks.structfact.options import OPTION_MAPS
from structbench.benchmarks.structfact.parser import find_option, majority, raw_majority
from structbench.benchmarks.structfact.prompts import Prompter
from structbench.benchmarks.structfact.provenance import PROVENANCE
from structbench.benchmarks.structfact.source import DEMO, DEMO_PATH, locate_full
from structbench.benchmarks.structfact.strategies import build_strategies
from structbench.contract.benchmark import (
    Attempt,
    Benchmark,
    Loading,
    PaperParts,
    Scored,
    SequenceAt,
    Strategy,
    content_key,
)
from structbench.core.errors import DataError, UsageError
from structbench.data.datasets import DataContext, read_data_text
from structbench.data.perturb import PERTURBATION_OPTIONS
from structbench.data.sample import LabelGold, Sample
from structbench.stats.bootstrap import MeanStatistic, Statistic
from structbench.stats.classification import LabelStatistic, observed_labels
from structbench.stats.confusion import ConfusionMatrix

_OPTION_LINE = re.compile(r"^([ABC])\) (Yes|No|Not sure enough)\s*$", re.MULTILINE)


def read_enhanced_context(path: Path) -> dict[str, str]:
    """Sample id -> GPT-written context, from the official CSV (columns index,label) or a JSON object."""
    text = read_data_text(path, what="enhanced context")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{err.lineno}: not JSON: {err.msg}") from err
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise DataError(f"{path}: expected a JSON object of sample id -> text")
        return {str(k): v for k, v in data.items()}
    rows = csv.DictReader(text.splitlines())
    if not rows.fieldnames or not {"index", "label"} <= set(rows.fieldnames):
        raise DataError(f"{path}: expected CSV columns 'index' and 'label', got {rows.fieldnames}")
    return {str(row["index"]).strip(): row["label"] for row in rows}


class StructFact(Benchmark[GeneratedOptions]):
    """Questions over Wikipedia tables, lists and text in five reasoning tasks (``CHALLENGE``)."""

    name = "structfact"
    title = "StructFact"
    provenance = PROVENANCE
    summary = (
        "Yes / No / Not sure fact verification over tables, lists, graphs and text (A/B/C options)"
    )
    variants = ("demo", "full", "generated")
    default_strategy = "zero_shot"
    headline = "weighted_f1"
    headline_label = "weighted F1"
    metric_names = METRIC_NAMES
    breakdown_keys = ("task", "source", "structure", "difficulty", MAP_KEY)
    cluster_unit = "table"
    paper = PaperParts(tables=SequenceAt("structbench.benchmarks.structfact.paper:TABLES"),
                       robustness=SequenceAt("structbench.benchmarks.structfact.paper:ROBUSTNESS"))
    loading = Loading(prompt_options=frozenset({"serialization", "shuffle", "shots", "temperature", "top_p",
                                                "max_tokens", "max_tokens_cot", "answer", *PERTURBATION_OPTIONS}))

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._strategies: dict[str, Strategy] | None = None

    # --- data -------------------------------------------------------------------------------------

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """The release's records (``demo``, ``full``: read whole, expanded over the option maps), or generated questions
        (``generated``: made as they are read, a stream of any size)."""
        if variant == "generated":
            from structbench.benchmarks.structfact.generated.variant import generated_samples

            return generated_samples(self.options, data, seed=seed, limit=limit)
        misplaced = sorted(self.options.model_fields_set & set(GENERATION_OPTIONS))
        if misplaced:
            names = ", ".join(misplaced)
            raise UsageError(f"structfact:{variant}: --option {names} apply only to structfact:generated")
        full = variant == "full"
        path = locate_full(data, self.options.full_path) if full else data.file(DEMO, DEMO_PATH)
        maps = self.options.option_map
        records = None if limit is None else -(-limit // len(maps))
        return expand(load_file(path, variant, seed=seed, limit=records), maps)

    # --- prompting --------------------------------------------------------------------------------

    def strategies(self) -> Mapping[str, Strategy]:
        if self._strategies is None:
            path = self.options.enhanced_context_file
            enhanced = read_enhanced_context(Path(path).expanduser()) if path else None
            maps = self.options.option_map
            if len(maps) == 1:
                self._strategies = build_strategies(Prompter(self.options, enhanced))
            else:  # one set of prompts per map; each sample runs under its own
                by_map = {m: build_strategies(Prompter(self.options.for_map(m), enhanced)) for m in maps}
                self._strategies = {
                    name: PerOptionMap({m: by_map[m][name] for m in maps}, maps) for name in by_map[maps[0]]
                }
        return self._strategies

    def letters(self, sample_meta: Mapping[str, Any]) -> dict[str, str]:
        """Letter -> answer text under the option map a sample is asked with."""
        return OPTION_MAPS[map_of(sample_meta, self.options.option_map)]

    def label_of(self, letter: str, sample_meta: Mapping[str, Any] | None = None) -> str:
        """The gold-label spelling (``YES`` ...) of an option letter under the sample's option map."""
        return self.letters(sample_meta or {})[letter].upper()

    def letter_of(self, label: str, sample_meta: Mapping[str, Any] | None = None) -> str:
        return next(letter for letter, text in self.letters(sample_meta or {}).items() if text.upper() == label)

    def oracle(self, sample: Sample, request: Request) -> str:
        """The gold answer's letter, as listed in the request's last message (else under the option map)."""
        assert isinstance(sample.gold, LabelGold)
        last = request.messages[-1].content if request.messages else request.prompt or ""
        shown = {text.upper(): letter for letter, text in _OPTION_LINE.findall(last)}
        return shown.get(sample.gold.label) or self.letter_of(sample.gold.label, sample.meta)

    # --- scoring ----------------------------------------------------------------------------------

    def _parse(self, text: str, strategy: Strategy, sample: Sample) -> str | None:
        mention = find_option(text, strategy.answer.mention)
        return None if mention is None else self.label_of(mention.letter, sample.meta)

    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        assert isinstance(sample.gold, LabelGold)
        values: dict[str, float] = {}
        if attempt.outputs:
            if self.options.vote_on_raw_text:
                winner = raw_majority(attempt.outputs)
                parsed = self._parse(winner, strategy, sample)
                values["vote_share"] = attempt.outputs.count(winner) / len(attempt.outputs)
            else:
                parsed, values["vote_share"] = majority([self._parse(t, strategy, sample) for t in attempt.outputs])
        else:
            parsed = self._parse(attempt.output, strategy, sample)
        if attempt.confidence is not None:
            values["confidence"] = attempt.confidence
        gold = sample.gold.label
        return Scored(
            id=sample.id,
            task=sample.task,
            parsed=parsed,
            gold=gold,
            score=float(parsed == gold),
            values=values,
            meta=dict(sample.meta),
        )

    def cluster(self, sample: Sample) -> str | None:
        """The table a question is asked of (the release's and generated sets' TABLE), else its evidence: the
        questions over one table, and one question under several option maps, are resampled together.

        The synthetic world's three tables are the exception: each question shows its own draw of a few of a table's
        many rows, so what questions share is the evidence they show, not the table; three clusters could not carry
        an interval (a bootstrap over three units has ten distinct resamples)."""
        table = sample.extra.get("release", {}).get("TABLE")
        if table is not None and not str(table).startswith(f"{SYNTHETIC}/"):
            return f"table:{table}"
        texts = sample.extra.get("evidence_raw") or [e.model_dump_json() for e in sample.evidence]
        return f"evidence:{content_key(texts)}"

    def unit(self, variant: str) -> str:
        """The demo's records carry no table name, and the synthetic world's questions each show their own rows:
        questions sharing their evidence are one cluster."""
        synthetic = variant == "generated" and self.options.questions_file is None and all(
            part.strip() == "synthetic" for part in self.options.tables.split(",") if part.strip())
        return "evidence" if variant == "demo" or synthetic else "table"

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        """Yes / No / Not sure enough: chance is a uniform pick among the three options."""
        return LABELS

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """The metrics; with several option maps, each map's metrics averaged over the maps."""
        if len(self.options.option_map) > 1:
            return averaged(scored, self.options.option_map, self._metrics)
        return self._metrics(scored)

    def _metrics(self, scored: Sequence[Scored]) -> dict[str, float]:
        gold = [str(s.gold) for s in scored]
        pred = [NO_ANSWER if s.parsed is None else str(s.parsed) for s in scored]
        metrics = classification_metrics(gold, pred)
        metrics["no_answer"] = pred.count(NO_ANSWER) / len(pred) if pred else 0.0
        return metrics

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """The label metrics and the no-answer rate on all bootstrap resamples at once (with several option
        maps, the label metrics averaged over the maps)."""
        gold = [str(s.gold) for s in pool]
        pred = [NO_ANSWER if s.parsed is None else str(s.parsed) for s in pool]
        maps = self.options.option_map
        if len(maps) > 1:
            if metric not in BATCH_METRICS:
                return None
            of = [maps.index(map_of(s.meta, maps)) for s in pool]
            parts = []
            for i in range(len(maps)):
                mine = [k == i for k in of]
                labels = observed_labels([g for g, m in zip(gold, mine, strict=True) if m],
                                         [p for p, m in zip(pred, mine, strict=True) if m])
                parts.append(LabelStatistic.of(gold, pred, labels, BATCH_METRICS[metric], keep=mine))
            return MapAverage(tuple(parts), np.array(of))
        if metric == "no_answer":
            return MeanStatistic(np.array([p == NO_ANSWER for p in pred], dtype=float))
        if metric not in BATCH_METRICS:
            return None
        return LabelStatistic.of(gold, pred, observed_labels(gold, pred), BATCH_METRICS[metric])

    def confusion_matrices(self, scored: Sequence[Scored]) -> dict[str, ConfusionMatrix]:
        """Gold label rows; predicted label columns, plus ``NONE`` for replies with no option letter."""
        gold = [str(s.gold) for s in scored]
        pred = [NO_ANSWER if s.parsed is None else str(s.parsed) for s in scored]
        matrix = ConfusionMatrix.tally(gold, pred, gold_labels=LABELS, predicted_labels=[*LABELS, NO_ANSWER],
                                       title=f"labels, {NO_ANSWER} = no option found")
        return {"labels": matrix}

    def extra_results(self, scored: Sequence[Scored]) -> dict[str, Any]:
        """Label counts and confidence by outcome (pooled over option maps), and with several maps each map's
        letters, sample count and metrics."""
        gold = [str(s.gold) for s in scored]
        pred = [NO_ANSWER if s.parsed is None else str(s.parsed) for s in scored]
        maps = self.options.option_map
        mapping: dict[str, Any] = (
            {"option_map": dict(self.options.letters)}
            if len(maps) == 1
            else {
                "option_maps": {
                    str(m): {"letters": dict(OPTION_MAPS[m]), "n": len(group), "metrics": self._metrics(group)}
                    for m, group in per_map(scored, maps).items()
                    if group
                }
            }
        )
        extra: dict[str, Any] = {
            **mapping,
            "gold_counts": dict(Counter(gold)),
            "predicted_counts": dict(Counter(pred)),
        }
        confident = [s for s in scored if "confidence" in s.values]
        if confident:
            groups: dict[str, list[float]] = {}
            for s in confident:
                key = f"{s.parsed or NO_ANSWER}/{'correct' if s.score else 'wrong'}"
                groups.setdefault(key, []).append(s.values["confidence"])
            extra["confidence"] = {key: {"n": len(v), "mean": sum(v) / len(v)} for key, v in sorted(groups.items())}
        return extra

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        assert isinstance(sample.gold, LabelGold)
        return {
            "label": sample.gold.label,
            "answer_option": self.letter_of(sample.gold.label, sample.meta),
            "option_map": dict(self.letters(sample.meta)),
        }
