"""SKA-Bench as a structbench benchmark: instances -> testbed contexts -> samples -> prompts -> scores.

Variants:
- ``rfqa`` (default): instances built from one RelationalFactQA database (``--option db=...``),
  fetched as its CSV tables with checksums.
- ``csv``: instances built from any folder of CSV tables (``--option path=DIR``).
- ``jsonl``: instances read from a JSONL file in the documented format (``--option path=FILE``).
- ``contexts``: testbed samples whose contexts are already laid out (``--option path=FILE``,
  ``contexts.py``), evaluated as they are.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import ConfigDict, Field

from structbench.backends.base import Message, Request
from structbench.backends.tokens import CountTokens as TokenCounter
from structbench.backends.tokens import token_counter
from structbench.benchmarks.skabench.builder import MAX_KEPT_ROWS, MAX_QUESTIONS, MAX_ROWS, iter_instances
from structbench.benchmarks.skabench.contexts import LaidOutContext, read_contexts
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.instances import iter_instance_file
from structbench.benchmarks.skabench.metrics import answer_f1, mean, normalize, paper_metrics
from structbench.benchmarks.skabench.parsing import parse_answer_list, parse_rejection
from structbench.benchmarks.skabench.prompts import (
    PAPER_FORMAT,
    qa_prompt,
    rejection_prompt,
    render_knowledge,
    serialized_knowledge,
)
from structbench.benchmarks.skabench.provenance import PROVENANCE
from structbench.benchmarks.skabench.sources import load_rfqa_database
from structbench.benchmarks.skabench.templates import TEMPLATES
from structbench.benchmarks.skabench.testbeds import (
    INTEGRATION,
    NEGATIVE,
    PAPER_BREAKDOWNS,
    TESTBED_ALIASES,
    TESTBEDS,
    Context,
    ContextBuilder,
    Skipped,
    bucket,
    budget_label,
    default_budgets,
    default_position,
    paper_breakdowns,
    parse_budget,
    positions_for,
    resolve_testbed,
)
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES, Instance, KnowledgeType, Passage, Row, Triple
from structbench.contract.benchmark import (
    DIRECT,
    Attempt,
    Benchmark,
    Exclusion,
    Loading,
    PaperParts,
    Samples,
    Scored,
    SequenceAt,
    Strategy,
)
from structbench.core.errors import UsageError
from structbench.core.registry import did_you_mean
from structbench.data import AnswerListGold, Graph, LabelGold, Sample, Table, Text
from structbench.data.datasets import DataContext
from structbench.data.perturb import PERTURBATION_OPTIONS, PerturbationOptions
from structbench.data.serialize import SERIALIZERS
from structbench.stats.bootstrap import RatioStatistic, Statistic
from structbench.strategies import SelfConsistency, SingleTurn
from structbench.strategies.tools import ToolLoop, ToolTask, not_shown, table_workspace
from structbench.strategies.vote import majority
from structbench.toolbox import Workspace

log = logging.getLogger(__name__)

READ_AHEAD = 8
"""Instances a built variant's ``load`` reads ahead to count its contexts for the run's progress total (each holds a
whole table's units, and building them is what takes time): a build that ends, or a limit that its planned contexts
reach, within these has a total; a longer one has none, rather than be held or built twice to count it."""


class SkaOptions(PerturbationOptions):
    """Run options (``--option key=value``); the shared perturbations (``perturbation``, ``perturbation_seed``)
    change the table (or the triples) of every context at prompt time, after the context was built to its budget."""

    model_config = ConfigDict(extra="forbid")

    testbed: str = "noise"
    """Comma list of noise, order, integration, negative (or the full names), or ``all``."""
    knowledge: str = "all"
    """Comma list of kg, table, kg+text, table+text, or ``all``."""
    budget: str | None = None
    """Comma list of token budgets (``4k``, ``24000``, up to ``128k``); default: the paper's per testbed."""
    position: str | None = None
    """Order testbed arrangements to build (original, prefix, random, suffix); default: all that apply."""
    db: str = "galois/world_1"
    """``rfqa`` variant: the RFQA database (``<source>/<db>``) to build instances from."""
    path: str | None = None
    """``csv`` variant: a folder of CSV tables; ``jsonl`` variant: an instance file; ``contexts`` variant: a
    file of laid-out contexts."""
    questions: int = Field(30, ge=1, le=MAX_QUESTIONS)
    """Builder variants: how many questions to generate (each gives up to four instances)."""
    templates: str | None = None
    """Builder variants: comma list of question templates (default: all)."""
    tokenizer: str = "cl100k"
    """Token counter for budgets, a ``structbench.backends.tokens`` spec: cl100k, cl100k-approx, llamacpp[:PATH],
    hf:MODEL ..."""
    shuffle_seed: int = 42
    """Seed of the noise draw and of the KG/text shuffles (the paper's 42)."""
    underfull: Literal["drop", "keep"] = "drop"
    """Instances whose knowledge base cannot reach 95% of a budget: left out, or kept short."""
    serialization: str = PAPER_FORMAT
    """How the table or the triples are written: ``paper`` (``|cell|cell|`` rows after a header line, ``(s, r, o)``
    triples: the paper's figures) or a registered serializer (markdown, csv, json, html, xml, triples,
    indexed_row_major, dataframe, df_loader, concat). Budgets are counted in the paper's writing either way."""
    max_tokens: int = Field(4096, ge=1)
    """Generation limit per reply: the prompts let the model reason before its final JSON line, and R1-style
    reasoning models need thousands of tokens for that (prompt plus limit must fit the model's context)."""
    temperature: float = Field(0.0, ge=0.0)
    """Sampling temperature of ``direct`` (the paper states no decoding settings; greedy by default)."""
    min_rows: int = Field(8, ge=1)
    """Builder variants: tables with fewer rows are not asked about (the paper keeps tables of 8+ rows)."""
    min_columns: int = Field(3, ge=1)
    """Builder variants: tables with fewer columns are not asked about (the paper's curation kept 6+)."""
    max_rows: int = Field(MAX_ROWS, ge=1, le=MAX_KEPT_ROWS)
    """Builder variants: a larger table contributes its lineage rows plus a seeded sample of the others."""


def _choices(text: str, known: Sequence[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if items == ["all"]:
        return list(known)
    unknown = [t for t in items if t not in known]
    if unknown or not items:
        hint = did_you_mean(unknown[0], known) if unknown else ""
        raise UsageError(f"skabench: unknown {what} {', '.join(unknown) or text!r}.{hint} Known: {', '.join(known)}, "
                         "all")
    return items


class SkaBench(Benchmark[SkaOptions]):
    """SKA-Bench (Liu et al., EMNLP 2025): structured knowledge QA over four testbeds."""

    name = "skabench"
    title = "SKA-Bench"
    provenance = PROVENANCE
    summary = (
        "QA over KG / Table / KG+Text / Table+Text from positive and noisy knowledge units, four testbeds"
    )
    variants = ("rfqa", "csv", "jsonl", "contexts")
    default_strategy = "direct"
    headline = "f1"
    headline_label = "answer-list F1"
    metric_names = (
        "f1",
        "rejection_rate",
        "noise_robustness",
        "order_insensitivity",
        "information_integration",
        "negative_rejection",
        "noise_robustness_avg",
        "order_insensitivity_avg",
        "negative_rejection_avg",
    )
    breakdown_keys = ("testbed", "knowledge_type", "budget", "position", "positive_units", *PAPER_BREAKDOWNS.values())
    cluster_unit = "instance"
    paper = PaperParts(tables=SequenceAt("structbench.benchmarks.skabench.paper:TABLES"),
                       robustness=SequenceAt("structbench.benchmarks.skabench.paper:ROBUSTNESS"))
    loading = Loading(prompt_options=frozenset({"serialization", "max_tokens", "temperature", *PERTURBATION_OPTIONS}),
                      fits_context=True)

    def __init__(self, options: Mapping[str, Any] | None = None, *, counter: TokenCounter | None = None) -> None:
        super().__init__(options)
        if self.options.serialization != PAPER_FORMAT:
            SERIALIZERS.get(self.options.serialization)  # unknown names raise UsageError with suggestions
        self._counter = counter
        self.skipped: Counter[str] = Counter()
        """Why contexts were not built in the last ``load`` (reason -> count)."""

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = token_counter(self.options.tokenizer)
        return self._counter

    # -- data ---------------------------------------------------------------------------------------

    def knowledge_types(self) -> list[KnowledgeType]:
        return _choices(self.options.knowledge, KNOWLEDGE_TYPES, "knowledge type")  # type: ignore[return-value]

    def testbeds(self) -> list[str]:
        if self.options.testbed.strip() == "all":
            return list(TESTBEDS)
        return [resolve_testbed(t.strip()) for t in self.options.testbed.split(",") if t.strip()]

    def instances(self, variant: str, data: DataContext, *, seed: int) -> list[Instance]:
        """The variant's instances: built from a database, or read from a JSONL file."""
        return list(self.stream_instances(variant, data, seed=seed))

    def stream_instances(self, variant: str, data: DataContext, *, seed: int) -> Iterator[Instance]:
        """``instances``, each built (a whole table's units, a question's SQL) or read from the file when it is read;
        the options are checked and the database read, or the file opened, at once (a malformed line of the file
        raises when the reading reaches it). Fewer questions than ``questions``: one warning once the last is read
        (``builder.shortfall``)."""
        kinds = self.knowledge_types()
        if variant == "jsonl":
            read = iter_instance_file(self._path("an instance JSONL file"))
            return (i for i in read if i.knowledge_type in kinds)
        db = (
            load_rfqa_database(self.options.db, data)
            if variant == "rfqa"
            else Database.from_csv_folder(self._path("a folder of CSV tables"))
        )
        templates = _choices(self.options.templates, TEMPLATES.names(), "template") if self.options.templates else None
        return iter_instances(
            db,
            self.options.questions,
            knowledge_types=kinds,
            seed=seed,
            templates=templates,
            min_rows=self.options.min_rows,
            min_columns=self.options.min_columns,
            max_rows=self.options.max_rows,
            note=lambda line: log.warning("skabench: %s", line),
        )

    def take_load(self, loaded: Benchmark) -> None:
        """The contexts left out (and the token counter) of the same contexts loaded under other prompt options."""
        assert isinstance(loaded, SkaBench)
        self.skipped, self._counter = loaded.skipped, loaded._counter

    def _path(self, what: str) -> Path:
        if not self.options.path:
            raise UsageError(f"skabench: this variant needs --option path=... ({what})")
        return Path(self.options.path).expanduser()

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """The variant's samples: laid-out contexts read whole (``contexts``), or the instances (built, or read) and
        then their testbed contexts, each built as it is read (a stream: a context is up to the budget's tokens, and
        a run of many never holds them all). Instances are built (or read) as they are read too, so a run holds one
        at a time, and ``limit`` builds only the first few (with ``-n 5``, one or two of 120).

        The number of contexts (the progress total) is planned without building any: for a file, by a first pass
        over it that also checks every line (so a malformed one stops the run before it starts); for a build, over
        the first ``READ_AHEAD`` instances, where the build or the limit ends within them (else no total)."""
        variant = self.check_variant(variant)
        if variant == "contexts":
            return self.laid_out(read_contexts(self._path("a file of laid-out contexts")), variant, limit=limit)
        if variant == "jsonl":
            expected: int | None = self._planned_count(self.stream_instances(variant, data, seed=seed), limit)
            instances = self.stream_instances(variant, data, seed=seed)
        else:
            instances, expected = self._read_ahead(self.stream_instances(variant, data, seed=seed), limit)
        return Samples(self.stream(instances, variant, limit=limit), expected=expected)

    def _planned_count(self, instances: Iterable[Instance], limit: int | None) -> int:
        """How many contexts ``planned`` asks of ``instances`` (the first ``limit``), reading them one at a time."""
        return sum(1 for _ in itertools.islice(self.planned(instances, Counter()), limit))

    def _read_ahead(self, instances: Iterator[Instance], limit: int | None) -> tuple[Iterator[Instance], int | None]:
        """``instances`` unchanged, and their planned contexts (the first ``limit``) where the stream or the limit
        ends within the first ``READ_AHEAD`` instances (None otherwise); those read ahead are let go as they pass."""
        ahead: deque[Instance] = deque()
        planned = 0
        ended = False
        while len(ahead) < READ_AHEAD and (limit is None or planned < limit):
            instance = next(instances, None)
            if instance is None:
                ended = True
                break
            ahead.append(instance)
            planned += self._planned_count([instance], None)

        def passed() -> Iterator[Instance]:
            while ahead:
                yield ahead.popleft()
            yield from instances

        known = ended or (limit is not None and planned >= limit)
        return passed(), (planned if limit is None else min(planned, limit)) if known else None

    def laid_out(self, contexts: Iterable[LaidOutContext], variant: str, limit: int | None = None) -> list[Sample]:
        """Samples of contexts given unit by unit, in their order, for the selected testbeds, knowledge
        types and budgets (nothing is drawn or shuffled)."""
        testbeds, kinds = set(self.testbeds()), set(self.knowledge_types())
        budgets = {parse_budget(b) for b in self.options.budget.split(",")} if self.options.budget else None
        positions = self._wanted_positions()
        samples: list[Sample] = []
        for c in contexts:
            if limit is not None and len(samples) >= limit:
                break
            if c.testbed not in testbeds or c.knowledge_type not in kinds or (budgets and c.budget not in budgets):
                continue
            if self._over_context(c.budget, self.skipped):
                continue
            if positions is not None and c.testbed == TESTBED_ALIASES["order"] and c.position not in positions:
                continue
            knowledge = render_knowledge(c.knowledge_type, c.structured, c.texts, c.header)
            count = c.positive_units
            samples.append(
                self._sample(
                    sample_id=c.id,
                    variant=variant,
                    testbed=c.testbed,
                    knowledge_type=c.knowledge_type,
                    question=c.question,
                    answers=c.answers,
                    header=c.header,
                    structured=c.structured,
                    texts=c.texts,
                    budget=c.budget,
                    position=c.position or default_position(c.knowledge_type),
                    positive_count=count,
                    extra={
                        "instance_id": c.id,
                        "context_tokens": self.counter(knowledge),
                        "positive_structured": [],
                        "positive_texts": [],
                        "source": c.meta,
                    },
                )
            )
        return samples

    def samples(self, instances: Iterable[Instance], variant: str, limit: int | None = None) -> list[Sample]:
        """Every testbed context of every instance, as samples (instance by instance; the first ``limit``)."""
        return list(self.stream(instances, variant, limit))

    def stream(self, instances: Iterable[Instance], variant: str, limit: int | None = None) -> Iterator[Sample]:
        """``samples``, each built when it is read; ``skipped`` (what ``exclusions`` reports) counts from the first
        and is complete after the last."""
        builder = ContextBuilder(
            self.counter, seed=self.options.shuffle_seed, keep_underfull=self.options.underfull == "keep"
        )
        self.skipped.clear()  # cleared, not replaced: whoever holds this counter reads this pass's
        made = 0

        def reached() -> bool:  # asked before each instance: an instance's contexts are kept together
            return limit is not None and made >= limit

        for instance, testbed, budget, position in self.planned(instances, self.skipped, stop=reached):
            context = builder.build(instance, testbed, budget, position)
            if isinstance(context, Skipped):
                self.skipped[context.reason] += 1
                log.debug("skabench: %s left out at %s/%s: %s", instance.id, testbed, budget, context.detail)
                continue
            made += 1
            yield self.to_sample(context, variant)
        if self.skipped:
            log.info("skabench: contexts left out: %s", dict(self.skipped))

    def planned(self, instances: Iterable[Instance], skipped: Counter[str], stop: Callable[[], bool] = lambda: False
                ) -> Iterator[tuple[Instance, str, int, str]]:
        """The contexts the testbeds ask of each instance, (instance, testbed, budget, position), before any is built
        (a build may still leave one out: too little noise); those no testbed can ask are counted in ``skipped``.
        ``stop`` is asked before each instance."""
        budgets = [parse_budget(b) for b in self.options.budget.split(",")] if self.options.budget else None
        wanted_positions = self._wanted_positions()
        testbeds = self.testbeds()
        for instance in instances:
            if stop():
                break
            for testbed in testbeds:
                if testbed == INTEGRATION and len(instance.positive_units) < 2:
                    skipped["information integration needs 2+ positive units"] += 1
                    continue
                if testbed == NEGATIVE and not instance.negative_rejection:
                    skipped["negative rejection: the question stays answerable without its positives"] += 1
                    continue
                positions = positions_for(testbed, instance.knowledge_type)
                if wanted_positions is not None and testbed == TESTBED_ALIASES["order"]:
                    positions = tuple(p for p in positions if p in wanted_positions)
                for budget in budgets or default_budgets(testbed, instance.knowledge_type):
                    if self._over_context(budget, skipped, len(positions)):
                        continue
                    for position in positions:
                        yield instance, testbed, budget, position

    def _over_context(self, budget: int | None, skipped: Counter[str], contexts: int = 1) -> bool:
        """Whether ``contexts`` contexts of ``budget`` tokens cannot fit the model's context (then they are counted
        in ``skipped`` as not built)."""
        if budget is None or self.model_context is None or budget <= self.model_context:
            return False
        skipped[f"budget above the model's context of {self.model_context} tokens (the paper evaluated models "
                "with at least 24k)"] += contexts
        return True

    def _wanted_positions(self) -> list[str] | None:
        """The order testbed arrangements the ``position`` option asks for (None: all)."""
        if not self.options.position:
            return None
        return _choices(self.options.position, ("original", "prefix", "random", "suffix"), "position")

    def to_sample(self, context: Context, variant: str) -> Sample:
        instance = context.instance
        short = next(k for k, v in TESTBED_ALIASES.items() if v == context.testbed)
        return self._sample(
            sample_id=f"{instance.id}/{short}/{budget_label(context.budget)}/{context.position}",
            variant=variant,
            testbed=context.testbed,
            knowledge_type=instance.knowledge_type,
            question=instance.question,
            answers=instance.answers,
            header=instance.header,
            structured=context.structured,
            texts=context.texts,
            budget=context.budget,
            position=context.position,
            positive_count=len(instance.positive_units),
            extra={
                "instance_id": instance.id,
                "context_tokens": context.tokens,
                "positive_structured": list(context.positive_structured),
                "positive_texts": list(context.positive_texts),
                "source": instance.meta,
            },
        )

    def _sample(
        self,
        *,
        sample_id: str,
        variant: str,
        testbed: str,
        knowledge_type: KnowledgeType,
        question: str,
        answers: Sequence[str],
        header: Sequence[str] | None,
        structured: Sequence[Triple | Row],
        texts: Sequence[Passage],
        budget: int | None,
        position: str,
        positive_count: int | None,
        extra: dict[str, Any],
    ) -> Sample:
        evidence: list[Any] = []
        if knowledge_type.startswith("kg"):
            triples = [(u.subject, u.relation, u.object) for u in structured if isinstance(u, Triple)]
            evidence.append(Graph(triples=triples))
        else:
            rows = [list(u.cells) for u in structured if isinstance(u, Row)]
            evidence.append(Table(header=list(header or []), rows=rows))
        evidence.extend(Text(text=p.text) for p in texts)
        negative = testbed == NEGATIVE
        budget_text = budget_label(budget) if budget is not None else "unknown"
        units = bucket(positive_count) if positive_count is not None else "unknown"
        meta = {
            "testbed": testbed,
            "knowledge_type": knowledge_type,
            "budget": budget_text,
            "position": position,
            "positive_units": units,
            **paper_breakdowns(testbed, knowledge_type, budget_text, position, units),
        }
        return Sample(
            id=sample_id,
            benchmark=self.name,
            variant=variant,
            task=testbed,
            question=question,
            evidence=evidence,
            gold=LabelGold(label="no") if negative else AnswerListGold(answers=list(answers)),
            meta=meta,
            extra={"answers": list(answers), "budget_tokens": budget, "positive_count": positive_count, **extra},
        )

    # -- prompting ----------------------------------------------------------------------------------

    def prompt(self, sample: Sample) -> str:
        """The paper's prompt for the sample (QA, or negative rejection), its table or triples perturbed and
        serialized as the options say."""
        knowledge_type = sample.meta["knowledge_type"]
        structured: list[Triple | Row] = []
        header: list[str] | None = None
        texts: list[Passage] = []
        evidence = self.options.perturbed(sample.evidence) if self.options.perturbs else sample.evidence
        for ev in evidence:
            if isinstance(ev, Graph):
                structured.extend(Triple(s, r, o) for s, r, o in ev.triples)
            elif isinstance(ev, Table):
                header = ev.header
                structured.extend(Row(tuple(cells)) for cells in ev.rows)
            elif isinstance(ev, Text):
                texts.append(Passage(ev.text))
        if self.options.serialization == PAPER_FORMAT:
            knowledge = render_knowledge(knowledge_type, structured, texts, header)
        else:
            shown = [ev for ev in evidence if isinstance(ev, Graph | Table)]
            render = SERIALIZERS.get(self.options.serialization)
            knowledge = serialized_knowledge(knowledge_type, "\n".join(render(ev) for ev in shown), texts)
        build = rejection_prompt if sample.meta["testbed"] == NEGATIVE else qa_prompt
        return build(knowledge_type, knowledge, sample.question)

    def request(self, sample: Sample) -> Request:
        o = self.options
        return Request.chat(self.prompt(sample), max_tokens=o.max_tokens, temperature=o.temperature)

    def strategies(self) -> Mapping[str, Strategy]:
        return {
            "direct": SingleTurn(
                "direct", self.request, "The paper's prompt, one reply (greedy unless temperature is set; Appendix C)."
            ),
            "self_consistency": SelfConsistency(
                "self_consistency",
                self.request,
                k=5,
                temperature=0.7,
                description="Five sampled replies to the paper's prompt; the most frequent answer set wins.",
            ),
            "tools": ToolLoop(
                "tools", self.tool_task, answer=DIRECT,
                description="Ours: the paper's prompt with a table knowledge base given as its schema and first rows, "
                            "queried with sql and python tools; KG knowledge is shown as the paper shows it.",
            ),
        }

    def tool_task(self, sample: Sample) -> ToolTask:
        """The tool loop's start: the paper's prompt (QA or rejection) whose table is not shown in full but queried
        with tools (a hybrid's texts shown as the paper shows them); KG knowledge types keep the paper's prompt and
        get no tool."""
        o = self.options
        knowledge_type = sample.meta["knowledge_type"]
        evidence = o.perturbed(sample.evidence) if o.perturbs else sample.evidence
        tables = [ev for ev in evidence if isinstance(ev, Table)] if knowledge_type.startswith("table") else []
        if not tables:
            return ToolTask((Message("user", self.prompt(sample)),), Workspace({}, ""), max_tokens=o.max_tokens)
        workspace = table_workspace(tables)
        texts = [Passage(ev.text) for ev in evidence if isinstance(ev, Text)]
        knowledge = serialized_knowledge(knowledge_type, f"{not_shown(1)}\n{workspace.schema}", texts)
        build = rejection_prompt if sample.meta["testbed"] == NEGATIVE else qa_prompt
        return ToolTask((Message("user", build(knowledge_type, knowledge, sample.question)),), workspace,
                        max_tokens=max(o.max_tokens, 512))

    def oracle(self, sample: Sample, request: Request) -> str:
        if sample.meta["testbed"] == NEGATIVE:
            return json.dumps({"answer": "no"})
        answers = sample.gold.answers if isinstance(sample.gold, AnswerListGold) else []
        return json.dumps({"answer": answers}, ensure_ascii=False)

    # -- scoring ------------------------------------------------------------------------------------

    def cluster(self, sample: Sample) -> str | None:
        """The instance: every testbed, budget and order built from one question and its knowledge units (and,
        for a generated question, its instances of every knowledge type, which share its question, answers and
        rows)."""
        question = (sample.extra.get("source") or {}).get("question")
        instance = question if question is not None else sample.extra.get("instance_id")
        return None if instance is None else str(instance)

    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        outputs = attempt.outputs or [attempt.output]
        if sample.meta["testbed"] == NEGATIVE:
            verdict = majority([parse_rejection(o) for o in outputs])
            value = float(verdict == "no")
            return Scored(
                id=sample.id,
                task=sample.task,
                parsed=verdict,
                gold="no",
                score=value,
                values={"rejected": value},
                meta=sample.meta,
            )
        gold = sample.gold.answers if isinstance(sample.gold, AnswerListGold) else []
        answers = majority([parse_answer_list(o) for o in outputs], key=lambda a: frozenset(normalize(x) for x in a))
        f1 = answer_f1(answers, gold)
        return Scored(
            id=sample.id, task=sample.task, parsed=answers, gold=gold, score=f1, values={"f1": f1}, meta=sample.meta
        )

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """Mean F1 over QA samples, rejection rate over negative rejection samples, each testbed's own headline
        and the paper's averages (NaN where a metric has no sample)."""
        qa = [s.score for s in scored if s.meta.get("testbed") != NEGATIVE]
        rejection = [s.score for s in scored if s.meta.get("testbed") == NEGATIVE]
        return {"f1": mean(qa), "rejection_rate": mean(rejection), **paper_metrics(scored)}

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """Mean F1 over the QA samples and the rejection rate over the rejection samples, on all resamples at once."""
        rejection = np.array([s.meta.get("testbed") == NEGATIVE for s in pool], dtype=float)
        scores = np.array([s.score for s in pool], dtype=float)
        over = {"f1": 1.0 - rejection, "rejection_rate": rejection}.get(metric)
        return None if over is None else RatioStatistic(scores * over, over)

    def exclusions(self, scored: Sequence[Scored]) -> list[Exclusion]:
        """The testbed contexts the last ``load`` could not build, by reason."""
        return [Exclusion(reason=f"testbed context(s) not built: {why}", count=n) for why, n in self.skipped.items()]

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        return {
            "testbed": sample.meta["testbed"],
            "knowledge_type": sample.meta["knowledge_type"],
            "budget": sample.extra["budget_tokens"],
            "position": sample.meta["position"],
            "positive_units": sample.extra["positive_count"],
            "context_tokens": sample.extra["context_tokens"],
        }
