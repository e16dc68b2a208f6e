"""ClaimDB (Theologitis et al., ACL 2026): verify a claim against a whole database by querying it.

A sample is a claim about one of the release's SQLite databases (millions of rows, about 11 tables), with BIRD's
external knowledge; the only strategy is the tool loop (``-s tools``): the paper's agent prompt, one tool that runs
SQL on the claim's database (read-only, in the sandbox), at most 20 turns, the verdict read from the final reply.
Headline: accuracy, as the paper reports it; per-label precision, recall and F1 and the macro-F1 beside it; intervals
resample whole databases (the claims of one database are not independent).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from structbench.backends.base import Message, Request
from structbench.benchmarks.claimdb import prompts
from structbench.benchmarks.claimdb.claims import LABELS, ClaimRecord, read_claims
from structbench.benchmarks.claimdb.databases import open_databases
from structbench.benchmarks.claimdb.metrics import (
    confusion,
    label_metrics,
    macro_f1_batch,
    verdict_of,
    verdict_values,
)
from structbench.benchmarks.claimdb.parse import parse_verdict
from structbench.benchmarks.claimdb.source import SPLITS, source
from structbench.contract.benchmark import (
    AnswerFormat,
    Attempt,
    Benchmark,
    PaperParts,
    Samples,
    Scored,
    SequenceAt,
    Strategy,
)
from structbench.contract.provenance import Provenance
from structbench.core.errors import DataError
from structbench.data.sample import LabelGold, Sample
from structbench.sandbox import NamespaceMode
from structbench.stats.bootstrap import Statistic
from structbench.stats.classification import LabelStatistic
from structbench.stats.confusion import ConfusionMatrix
from structbench.strategies.tools import ToolLoop, ToolTask
from structbench.toolbox import SqliteDatabase, ToolLimits, Workspace

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext

MAX_TURNS = 20
"""The paper's ``Runner.run(..., max_turns=20)``."""
MAX_TOKENS = 2048
"""Tokens per reply (the paper sets none; a query and a verdict fit)."""

PROVENANCE = Provenance(
    paper=("Michael Theologitis, Preetam Prabhu Srikar Dammu, Chirag Shah, Dan Suciu. ClaimDB: A Fact Verification "
           "Benchmark over Large Structured Data. ACL 2026 (arXiv 2601.14698)."),
    bibtex="""@misc{theologitis2026claimdb,
  title = {{ClaimDB}: A Fact Verification Benchmark over Large Structured Data},
  author = {Theologitis, Michael and Dammu, Preetam Prabhu Srikar and Shah, Chirag and Suciu, Dan},
  year = {2026},
  eprint = {2601.14698},
  archivePrefix = {arXiv}
}""",
    source="https://huggingface.co/datasets/michaeltheologitis/claimdb: test-public.jsonl (1,000 claims), "
           "test_databases.zip (11 SQLite databases), train.jsonl and train_databases.zip (80 databases)",
    license="cc-by-sa-4.0",
    license_note="CC BY-SA 4.0 (the dataset card); the databases come from BIRD (CC BY-SA 4.0).",
)


class ClaimDBOptions(BaseModel):
    """Run options (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    verdicts: Literal["lenient", "strict"] = "lenient"
    """How the final reply's verdict is read: ``strict`` (the released code: a JSON object's ``verdict`` written as
    the labels are) or ``lenient`` (also another case, and the last label a reply in prose names)."""
    turn_limit: Literal["apart", "wrong"] = "wrong"
    """A loop at the turn limit: scored as a reply without an answer (wrong, as the released code does, and as every
    tool loop by default) or counted apart (``turn_limit``, out of ``n``); the run's ``--turn-limit`` overrides it."""
    structured: bool = True
    """Ask for the verdict object as structured output (``response_format``: the Agents SDK's ``output_type``)
    where the backend takes it."""
    seconds: float = Field(30.0, gt=0, le=600)
    """Wall-clock seconds per query."""
    memory_mb: int = Field(1024, ge=64, le=65536)
    """Memory of one query's sandbox, in MiB."""
    max_rows: int = Field(50, ge=1, le=100_000)
    """Result rows a query returns to the model."""
    sandbox: NamespaceMode = "auto"
    """``auto``: namespaces where available, else degrade with a warning; ``require``; ``off``."""


class ClaimDB(Benchmark[ClaimDBOptions]):
    name: ClassVar[str] = "claimdb"
    title: ClassVar[str] = "ClaimDB"
    provenance = PROVENANCE
    summary: ClassVar[str] = (
        "claims verified against whole SQLite databases (entailed / contradicted / not enough info) by querying them"
    )
    variants: ClassVar[tuple[str, ...]] = ("test", "train")
    default_strategy: ClassVar[str] = "tools"
    headline: ClassVar[str] = "accuracy"
    headline_label: ClassVar[str] = "accuracy"
    metric_names: ClassVar[tuple[str, ...]] = ("accuracy", "macro_f1", "f1_entailed", "f1_contradicted", "f1_nei",
                                               "no_verdict_rate")
    breakdown_keys: ClassVar[tuple[str, ...]] = ("label", "category", "db_name")
    cluster_unit: ClassVar[str | None] = "database"
    paper = PaperParts(scoring=("verdicts",), tables=SequenceAt("structbench.benchmarks.claimdb.paper:TABLES"))

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._databases: dict[str, Path] = {}

    # -- data ---------------------------------------------------------------------------------
    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Samples:
        """The split's claims in file order, each with the path of its database (extracted once into the cache)."""
        variant = self.check_variant(variant)
        split = SPLITS[variant]
        files = source(variant)
        claims = read_claims(data.file(files, split.claims))
        self._databases = open_databases(data.file(files, split.databases))
        missing = sorted({c.db_name for c in claims} - set(self._databases))
        if missing:
            raise DataError(f"{split.databases}: no database for {len(missing)} of the claims' databases, e.g. "
                            f"{missing[0]!r}")

        def samples() -> Iterator[Sample]:
            for record in claims:
                yield self._sample(record, variant)

        return Samples(samples(), expected=len(claims))

    def take_load(self, loaded: Benchmark) -> None:
        assert isinstance(loaded, ClaimDB)
        self._databases = loaded._databases

    def _sample(self, record: ClaimRecord, variant: str) -> Sample:
        return Sample(
            id=str(record.claim_id), benchmark=self.name, variant=variant, task="fact_verification",
            question=record.claim, gold=LabelGold(label=record.label),
            meta={"db_name": record.db_name, "label": record.label, "category": record.category or "none"},
            extra={"extra_info": record.extra_info, "database": str(self._databases[record.db_name]),
                   "bird_id": record.bird_id},
        )

    # -- prompting ----------------------------------------------------------------------------
    def tool_task(self, sample: Sample) -> ToolTask:
        """The paper's agent: its instructions, the claim and its extra information, the database's one SQL tool."""
        o = self.options
        db = sample.meta["db_name"]
        tool = SqliteDatabase(
            Path(sample.extra["database"]), ToolLimits(seconds=o.seconds, memory_mb=o.memory_mb, max_rows=o.max_rows),
            o.sandbox, name=prompts.tool_name(db), argument=prompts.TOOL_ARGUMENT,
            description=prompts.tool_description(db), argument_description=prompts.TOOL_ARGUMENT_DESCRIPTION,
            json_rows=True)
        messages = (Message("system", prompts.INSTRUCTIONS),
                    Message("user", prompts.user_input(sample.question, sample.extra.get("extra_info", ""))))
        return ToolTask(messages, Workspace({tool.name: tool}, ""), max_tokens=MAX_TOKENS,
                        response_format=prompts.response_format() if o.structured else None)

    def strategies(self) -> Mapping[str, Strategy]:
        return {"tools": ToolLoop(
            "tools", self.tool_task, answer=AnswerFormat(mention="last"), max_turns=MAX_TURNS,
            count_turn_limit=self.options.turn_limit == "wrong",
            description="The paper's agent: its database's execute-sql tool (read-only, sandboxed), at most 20 "
                        "turns, the verdict object read from the final reply.")}

    def oracle(self, sample: Sample, request: Request) -> str:
        return json.dumps({"verdict": _gold(sample), "justification": "The oracle knows the gold label."})

    # -- scoring ------------------------------------------------------------------------------
    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        strict = self.options.verdicts == "strict"
        parsed = parse_verdict(attempt.as_written if strict else attempt.output, strict=strict)
        gold = _gold(sample)
        scored = Scored(id=sample.id, task=sample.task, parsed=parsed, gold=gold, score=float(parsed == gold),
                        values=verdict_values(parsed), meta=dict(sample.meta))
        return self.with_corrected(scored, lambda b: b.score(sample, attempt, strategy))

    def cluster(self, sample: Sample) -> str | None:
        """The database: the 1,000 public claims share 11."""
        return str(sample.meta["db_name"])

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        return LABELS

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """The label metrics of the verdicts the sample values record (so the corrected scoring's twin, whose values
        are its own, is aggregated on its own verdicts)."""
        return label_metrics([str(s.gold) for s in scored], [_verdict(s) for s in scored])

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """Macro-F1 on every bootstrap resample at once (accuracy is a mean of scores)."""
        if metric != "macro_f1":
            return None
        return LabelStatistic.of([str(s.gold) for s in pool], [_verdict(s) for s in pool], LABELS, macro_f1_batch)

    def confusion_matrices(self, scored: Sequence[Scored]) -> dict[str, ConfusionMatrix]:
        return {"verdicts": confusion([str(s.gold) for s in scored], [_verdict(s) for s in scored])}

    def extra_results(self, scored: Sequence[Scored]) -> dict[str, Any]:
        return {"gold_counts": dict(Counter(str(s.gold) for s in scored)),
                "predicted_counts": {str(k): v for k, v in Counter(s.parsed for s in scored).items()}}


def _verdict(scored: Scored) -> str | None:
    """The verdict ``scored``'s values record; one without them (the baselines' trivial answers, which carry only
    their answer) the answer it parsed."""
    if any(key.startswith("verdict_") for key in scored.values):
        return verdict_of(scored.values)
    return str(scored.parsed) if scored.parsed in LABELS else None


def _gold(sample: Sample) -> str:
    label = getattr(sample.gold, "label", None)
    if label not in LABELS:
        raise DataError(f"claimdb sample {sample.id}: gold is not a ClaimDB label")
    return str(label)
