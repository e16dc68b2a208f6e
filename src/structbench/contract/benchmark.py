"""The contract between the core and a benchmark: load samples, prompt them, parse, score, aggregate.

The core (runner, CLI, reports) only talks to this interface; benchmarks live in
``structbench.benchmarks.<name>`` and are found through ``structbench.benchmarks.BENCHMARKS``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast, get_args, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.backends.base import Request, Response
from structbench.backends.current import CurrentSample, current_sample
from structbench.contract.provenance import Provenance
from structbench.core.errors import UsageError
from structbench.core.registry import did_you_mean
from structbench.core.trusted import trusted
from structbench.data.sample import Sample

if TYPE_CHECKING:
    from structbench.data.datasets import DataContext
    from structbench.papers.spec import PaperTable, Preset
    from structbench.stats.bootstrap import Statistic
    from structbench.stats.confusion import ConfusionMatrix

Generate = Callable[[Request], Awaitable[Response]]
"""How a strategy calls the model: the runner binds the backend, the response cache and bookkeeping."""


AS_WRITTEN = "as_written"
"""``Attempt.artifacts`` key of a prediction's output as written, where a thought was taken out of it."""


@dataclass
class Attempt:
    """What a strategy produced for one sample: the text the parser reads, plus anything else it used."""

    output: str
    """The raw model text the benchmark's parser reads (for multi-call strategies, the final one)."""
    outputs: list[str] = field(default_factory=list)
    """All sampled texts when the strategy draws several (self-consistency); empty otherwise."""
    confidence: float | None = None
    """Probability of the chosen answer's first token, when the backend returns logprobs."""
    artifacts: dict[str, Any] = field(default_factory=dict)
    """Strategy-specific JSON-able results (executed program output, merged rows, a tool loop's trace ...)."""
    turn_limit: bool = False
    """A tool loop reached its turn limit (``--max-turns``) still calling tools and the run counts such a sample apart
    (``--turn-limit apart``): no final answer, never scored (``records.SampleRecord.error_kind`` ``turns``). A loop
    whose limit is scored (the default) returns an empty output instead, its trace saying it stopped there."""

    @property
    def as_written(self) -> str:
        """The output as the model wrote it, a reasoning model's thought included: ``artifacts[AS_WRITTEN]`` where
        a reply's or a predictions file's thought was taken out (the first of several outputs), else ``output``. Only a
        paper's released reader reads it (RelationalFactQA's ``reading=galois``, TableBench's ``scorer=released`` and
        ``paper``, StrucText-Eval's ``scorer=released``, ClaimDB's ``verdicts=strict``); structbench's parsers read
        ``output``."""
        written = self.artifacts.get(AS_WRITTEN)
        if isinstance(written, list):
            written = written[0] if written else None
        return written if isinstance(written, str) else self.output

    @classmethod
    def from_prediction(cls, output: str | list[str]) -> Attempt:
        """An attempt rebuilt from a predictions file, where ``output`` is raw text or a list of samples."""
        if isinstance(output, list):
            return cls(output=output[0] if output else "", outputs=list(output))
        return cls(output=output)


@dataclass(frozen=True)
class AnswerFormat:
    """How a strategy's replies give their answer: what a benchmark's parser needs to know of the strategy (never
    its name, so a new strategy is parsed right by saying what it does)."""

    mention: Literal["first", "last"] = "first"
    """Which answer counts when a reply names several: the first (a direct answer), or the last (a reply that
    reasons before its final answer: chain-of-thought, self-refine)."""
    options: bool = False
    """The prompt lists lettered options, so a bare option letter is an answer."""
    program: bool = False
    """The reply is a program whose run decides the answer (program-of-thoughts)."""
    derived: bool = False
    """The attempt's output is computed from the replies (a query run over the rows they list), not a reply."""


DIRECT = AnswerFormat()
"""A reply that answers first: its first answer counts."""
REASONED = AnswerFormat(mention="last")
"""A reply that reasons before its final answer: its last answer counts."""


DEFAULT_MAX_TURNS = 10
"""Model calls a tool loop makes at most for one sample when neither the run (``--max-turns``) nor the strategy
says otherwise."""

TurnLimit = Literal["wrong", "apart"]
"""What a tool loop at its turn limit still calling tools counts as: a reply without an answer, scored as the
benchmark scores one (``wrong``, in ``n``), or a sample apart, not scored and out of ``n`` (``apart``). Either way
the result counts such samples (``turn_limit``, ``turn_limit_scored``)."""


@dataclass(frozen=True)
class ToolSupport:
    """What a tool-using strategy may know of the run: whether the model takes function tools, and its turn limit."""

    native: bool = False
    """The backend sends ``Request.tools`` as function tools and returns ``Choice.tool_calls``; else the strategy
    speaks the text protocol (fenced blocks)."""
    max_turns: int | None = None
    """``--max-turns``: model calls per sample at most; None: the strategy's own limit."""
    turn_limit: TurnLimit | None = None
    """``--turn-limit``: a loop at its limit is scored as a reply without an answer (``wrong``) or counted apart
    (``apart``); None: the strategy's own choice."""


def tool_support(generate: Generate) -> ToolSupport:
    """What ``generate`` (the runner's, which knows its backend and the run's settings) says of tools; a bare
    callable (a test's, Inspect's) speaks the text protocol with the strategy's own turn limit."""
    support = getattr(generate, "tool_support", None)
    return support if isinstance(support, ToolSupport) else ToolSupport()


class Strategy(ABC):
    """A prompting pipeline: from a sample to an ``Attempt`` through one or more model calls."""

    name: str = ""
    description: str = ""
    answer: AnswerFormat = DIRECT
    """How its replies give their answer (the benchmark's ``score`` reads it)."""
    several: bool = False
    """Its attempt holds several replies to one prompt (``Attempt.outputs``: self-consistency's samples), so a
    predictions file may give it a list of outputs."""

    @abstractmethod
    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        """Prompt the model about ``sample`` through ``generate``."""


class Scored(BaseModel):
    """One sample's outcome, self-contained so metrics can be recomputed from ``samples.jsonl``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    task: str
    parsed: Any
    """The answer the parser extracted (None when nothing could be parsed)."""
    gold: Any
    score: float
    """The per-sample headline score in [0, 1] (1 = correct for classification)."""
    values: dict[str, float] = Field(default_factory=dict)
    """Further per-sample metric values (cell F1, tuple similarity, rejection ...)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Breakdown keys copied from the sample."""
    cluster: str | None = None
    """The group of samples that share what they are asked about (a table, a database: ``Benchmark.cluster``);
    intervals and paired tests resample whole clusters. None: the sample stands alone."""
    epoch: int = 0
    """Which repeat of the sample this outcome is (``--epochs``); metrics average the epochs."""


class Exclusion(BaseModel):
    """Samples a benchmark left out of a result, and why (a context that could not reach its token budget,
    a query without a gold table, an empty answer dropped from the averages ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    reason: str
    count: int = Field(ge=1)


CORRECTED = "corrected:"
"""Prefix of the values a score under the paper's (bug-compatible) scoring also records of structbench's own
scoring of the same attempt (``corrected:rougeL``, ``corrected:score``); see ``Benchmark.corrected``."""


def corrected_scored(scored: Scored) -> Scored | None:
    """The structbench-scoring twin of a score recorded under the paper's scoring (None when it has none)."""
    values = {k.removeprefix(CORRECTED): v for k, v in scored.values.items() if k.startswith(CORRECTED)}
    if not values:
        return None
    score = values.pop("score", scored.score)
    return scored.model_copy(update={"values": values, "score": score})


class Samples(Iterable[Sample]):
    """Samples yielded one at a time, and how many will come where that is known before they are made: what a
    ``load`` that streams returns (a bare generator streams too, without a count), so a run never holds them all
    and its progress bar still has a total."""

    def __init__(self, samples: Iterable[Sample], expected: int | None = None, *,
                 whole: Callable[[], Iterable[Sample]] | None = None) -> None:
        self._samples = samples
        self.expected = expected
        """How many samples the stream will yield (at most: a generator that cannot make one skips it)."""
        self.whole = whole
        """The same samples in the same order, made all at once faster than the stream makes them (in forked
        processes, say): what a run that holds a small stream before forking its workers reads instead."""

    def __iter__(self) -> Iterator[Sample]:
        return iter(self._samples)


class NoOptions(BaseModel):
    """A benchmark without run options."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


OptionsT = TypeVar("OptionsT", bound=BaseModel)
ItemT = TypeVar("ItemT")


class SequenceAt(Sequence[ItemT]):
    """A part of ``PaperParts`` (its tables, its robustness presets) named by a ``"package.module:attr"`` target and
    imported when first read: a run never reads them, and building them (published numbers, ``structbench.papers``'
    models) was a part of every run's start-up (issue 44). It reads, compares, hashes and prints as the tuple it
    names."""

    def __init__(self, target: str) -> None:
        self.target = target

    @cached_property
    def _items(self) -> tuple[ItemT, ...]:
        from structbench.core.registry import load_target

        return tuple(cast("Iterable[ItemT]", load_target(self.target, "the paper's parts")))

    @overload
    def __getitem__(self, index: int) -> ItemT: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ItemT, ...]: ...

    def __getitem__(self, index: int | slice) -> ItemT | tuple[ItemT, ...]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[ItemT]:
        return iter(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __eq__(self, other: object) -> bool:
        return self._items == (other._items if isinstance(other, SequenceAt) else other)

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return repr(self._items)


@dataclass(frozen=True)
class PaperParts:
    """What a benchmark reproduces of its papers (``Benchmark.paper``); all optional."""

    scoring: tuple[str, ...] = ()
    """Options that switch parsing and scoring to the papers' released code, bug for bug (what the presets set);
    their defaults are structbench's corrected scoring. A score under them also records the corrected one
    (``Benchmark.corrected``, ``Benchmark.with_corrected``)."""
    tables: Sequence[PaperTable] = ()
    """The papers' result tables this benchmark reproduces: published numbers, the preset that runs each table's
    configuration, and how a run's records fill its columns (``structbench.papers``)."""
    robustness: Sequence[Preset] = ()
    """Presets that sweep the benchmark over a standard grid of table formats and perturbations
    (``structbench.papers.robustness``); () where it shows no tables."""


@dataclass(frozen=True)
class Loading:
    """What the runner may know of ``load`` before calling it (``Benchmark.loading``); all optional."""

    prompt_options: frozenset[str] = frozenset()
    """Options that change only how samples are prompted, never which samples ``load`` builds (serializations,
    perturbations, decoding): the cells of a sweep (``runner.sweep``) that differ only in them share one load and
    one stream of samples, read once (a benchmark whose ``load`` leaves state on the instance passes it on in
    ``take_load``)."""
    variant_parts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Variants whose samples are a part of another's, by that variant (``all`` -> its sources): the same samples,
    prompted and scored alike, so what a preset sets for the whole applies to a part (``score rfqa:spider1 --preset
    rfqa-table2``)."""
    fits_context: bool = False
    """``load`` leaves out prompts that cannot fit ``Benchmark.model_context`` (a benchmark that builds contexts to
    token budgets): a run then asks the backend for the model's context before loading."""


MOVED: dict[str, str] = {
    "paper_scoring": "paper = PaperParts(scoring=...)",
    "paper_tables": "paper = PaperParts(tables=...)",
    "robustness_presets": "paper = PaperParts(robustness=...)",
    "prompt_options": "loading = Loading(prompt_options=...)",
    "variant_parts": "loading = Loading(variant_parts=...)",
    "uses_model_context": "loading = Loading(fits_context=True)",
}
"""Hooks of earlier versions that became grouped declarations: a benchmark (a plugin's) still declaring one is a
``TypeError`` at its class statement that names the new declaration, never a hook silently ignored."""


class Clusters:
    """Optional: the clusters of samples that are not independent (questions asked of one table), which intervals
    and paired tests resample together. A benchmark that declares none resamples single samples."""

    cluster_unit: ClassVar[str | None] = None
    """What the samples of a cluster share (``table``, ``database`` ...; see ``cluster``); None: the samples
    are independent questions."""

    def cluster(self, sample: Sample) -> str | None:
        """The cluster of ``sample``: the key its questions share (the table it is asked of), so intervals resample
        such questions together, as they are not independent; None where it shares nothing with the others."""
        return None

    def unit(self, variant: str) -> str:
        """What one resampled unit of ``variant`` is: ``cluster_unit``, or ``sample`` for independent questions."""
        return self.cluster_unit or "sample"


class Analysis:
    """Optional: what reports, exports and ``metrics.json`` show beyond ``aggregate`` (baselines, confusion
    matrices, what was left out, a vectorized bootstrap statistic). Every hook has a neutral default."""

    headline: ClassVar[str]

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        """The closed set of answers, for benchmarks whose answer is a label (their baselines); () otherwise."""
        return ()

    def baselines(self, scored: Sequence[Scored]) -> dict[str, float]:
        """The headline's value under trivial predictors on the same samples (``chance``, ``majority`` ...), so a
        score can be read at a glance; {} when none is defined. Label benchmarks get them from ``answer_labels``."""
        from structbench.stats.baselines import label_baselines

        return label_baselines(cast("Benchmark[Any]", self), scored, self.answer_labels(scored), self.headline)

    def confusion_matrices(self, scored: Sequence[Scored]) -> dict[str, ConfusionMatrix]:
        """Confusion matrices over ``scored`` by name (gold rows, predicted columns); reports draw each one."""
        return {}

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        """Benchmark-specific fields added to each ``export`` line."""
        return {}

    def extra_results(self, scored: Sequence[Scored]) -> dict[str, Any]:
        """Extra JSON-able results for ``metrics.json`` (per-class scores, label counts ...); the key
        ``excluded`` is the core's (see ``exclusions``)."""
        return {}

    def averaged(self, scored: Scored) -> bool:
        """Whether a scored sample counts in the metrics' averages (a benchmark whose scoring leaves some out, as
        a released scorer skipping empty replies, says so here and in ``exclusions``); every sample by default."""
        return True

    def exclusions(self, scored: Sequence[Scored]) -> list[Exclusion]:
        """What this result leaves out and why: samples the last ``load`` did not build, and scored samples
        the metrics do not count. The core writes them to ``extra["excluded"]`` and the report shows them,
        so nothing is dropped silently."""
        return []

    def statistic(self, pool: Sequence[Scored], metric: str) -> Statistic | None:
        """``aggregate(...)[metric]`` evaluated on many bootstrap resamples of ``pool`` at once, or None.

        Bootstrap intervals of a metric that is not a mean of scores re-aggregate every resample;
        a benchmark may offer a vectorized equivalent here (it must equal ``aggregate`` on every
        resample: the benchmark's tests check it). A resample is a row of weights over ``pool``
        (``stats.bootstrap``); a ``Linear`` statistic (weighted sums of per-sample features) is summed
        per cluster once, so cluster resamples cost one matrix product.
        """
        return None


class Benchmark(Clusters, Analysis, ABC, Generic[OptionsT]):
    """One benchmark: where its data comes from, how samples are prompted, parsed and scored.

    What every benchmark declares comes first: its names (``name``, ``title``, ``variants``, ``default_strategy``,
    ``headline``, ``metric_names``) and five methods (``load``, ``strategies``, ``oracle``, ``score``,
    ``aggregate``). Generic in its run options' model, declared once (``class SciTab(Benchmark[SciTabOptions])``:
    ``Options`` is that model, ``self.options`` is typed). The optional parts are grouped: ``paper``
    (``PaperParts``), ``loading`` (``Loading``), ``Clusters`` and ``Analysis`` (hooks with neutral defaults)."""

    name: ClassVar[str]
    title: ClassVar[str]
    """The paper's name for it."""
    variants: ClassVar[tuple[str, ...]]
    """Variant names; the first is the default."""
    default_strategy: ClassVar[str]
    headline: ClassVar[str]
    """The metric reported as the headline; a key of ``aggregate``'s result."""
    metric_names: ClassVar[tuple[str, ...]]

    # -- described: tables, list, dataset cards ---------------------------------------------------------------
    summary: ClassVar[str] = ""
    """One line saying what a sample asks and of what (the README's and the docs' benchmark tables)."""
    headline_label: ClassVar[str] = ""
    """The headline as a reader names it (``weighted F1``), in the benchmark tables; empty: ``headline``."""
    provenance: ClassVar[Provenance | None] = None
    """Where the data comes from, its license and the paper's citation (published dataset cards state them);
    None: not declared (the card says so)."""
    breakdown_keys: ClassVar[tuple[str, ...]] = ("task",)
    """Meta keys (and ``task``) over which metrics are also computed per group."""

    # -- optional parts, grouped -----------------------------------------------------------------------------
    paper: ClassVar[PaperParts] = PaperParts()
    """What it reproduces of its papers: bug-compatible scoring options, published tables, robustness presets."""
    loading: ClassVar[Loading] = Loading()
    """What the runner may know of ``load`` before calling it: prompt-only options, variant parts, model context."""

    Options: ClassVar[type[BaseModel]] = NoOptions
    """Run options' model (``--option key=value``): the class ``OptionsT`` stands for, taken from the class
    statement (``Benchmark[SciTabOptions]``), never declared again."""
    options: OptionsT
    """This instance's run options."""
    model_context: int | None = None
    """The model's context in tokens when the run knows it before loading (``Backend.context_window``), else
    None; set by the runner before ``load`` where ``loading.fits_context``. Such a benchmark leaves out what
    cannot fit and says so in ``exclusions``."""
    _corrected: Benchmark[OptionsT] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        moved = sorted(set(vars(cls)) & MOVED.keys())
        if moved:
            raise TypeError(f"{cls.__qualname__}: " + "; ".join(
                f"{k} moved: declare {MOVED[k]} (structbench.contract.benchmark)" for k in moved))
        model = next((arg for base in vars(cls).get("__orig_bases__", ())
                      if getattr(base, "__origin__", None) is Benchmark
                      for arg in get_args(base) if isinstance(arg, type) and issubclass(arg, BaseModel)), None)
        if model is None:
            return
        if "Options" in vars(cls) and vars(cls)["Options"] is not model:
            raise TypeError(f"{cls.__qualname__}: its options are {model.__name__} (Benchmark[{model.__name__}]); "
                            "do not declare Options again")
        cls.Options = model

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        try:
            self.options = cast(OptionsT, self.Options.model_validate(dict(options or {})))
        except ValidationError as err:
            fields = self.Options.model_fields
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'option'}: {e['msg']}"
                + ("." + did_you_mean(str(e["loc"][0]), fields) if e["type"] == "extra_forbidden" and e["loc"] else "")
                for e in err.errors()
            )
            raise UsageError(f"{self.name}: bad --option: {problems}") from None

    # -- the five things every benchmark does ---------------------------------------------------------------
    @abstractmethod
    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> Iterable[Sample]:
        """Load or generate the variant's samples, in a fixed order (``limit`` is a hint; the core also truncates).

        Yield them (a generator, or ``Samples`` with their count) to stream them: a run then reads each once and
        never holds them all, whatever their number. A list is held for the whole run (a large one is warned
        about): return one only where a sample cannot be built without seeing all the others, and say why in the
        benchmark's documentation. What strategies read of the loaded benchmark (a few-shot pool) must be set before
        the first sample is yielded: the core reads the first sample before it forks workers. ``exclusions`` is read
        after the last."""

    @abstractmethod
    def strategies(self) -> Mapping[str, Strategy]:
        """The prompting strategies this benchmark supports, by name."""

    @abstractmethod
    def oracle(self, sample: Sample, request: Request) -> str:
        """The reply a perfect model would give to ``request`` about ``sample``, in the expected format."""

    @abstractmethod
    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        """Parse the attempt with the benchmark's own parser (as ``strategy.answer`` says its replies give their
        answer) and score it against the gold answer."""

    @abstractmethod
    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        """Corpus-level metrics over ``scored``; must contain ``headline`` and ``metric_names``."""

    # -- what the core derives from them ---------------------------------------------------------------------
    def check_variant(self, variant: str | None) -> str:
        """The variant to use (the default when None); unknown names raise ``UsageError``."""
        if variant is None:
            return self.variants[0]
        if variant not in self.variants:
            raise UsageError(f"{self.name} has no variant {variant!r}.{did_you_mean(variant, self.variants)} "
                             f"Variants: {', '.join(self.variants)}")
        return variant

    def strategy(self, name: str | None) -> Strategy:
        """The named strategy (the default when None); unknown names raise ``UsageError``."""
        table = self.strategies()
        name = name or self.default_strategy
        if name not in table:
            raise UsageError(f"{self.name} has no strategy {name!r}.{did_you_mean(name, table)} "
                             f"Strategies: {', '.join(table)}")
        return table[name]

    def outcome(self, sample: Sample, attempt: Attempt, strategy: Strategy, *, epoch: int = 0) -> Scored:
        """``score``, with the sample's cluster and the epoch attached (what the core records)."""
        scored = self.score(sample, attempt, strategy)
        return trusted(type(scored), {**scored.__dict__, "cluster": self.cluster(sample), "epoch": epoch})

    def take_load(self, loaded: Benchmark) -> None:
        """Take over what ``loaded.load`` left on that instance (demonstrations, what it left out): this instance of
        the same benchmark differs from it only in ``loading.prompt_options`` and prompts and scores the samples
        ``loaded`` loaded, without loading them again (the cells of a sweep). Nothing to take by default."""
        return None

    # -- paper scoring (``paper.scoring``) -------------------------------------------------------------------
    def corrected(self) -> Benchmark[OptionsT] | None:
        """This benchmark with its ``paper.scoring`` options back at their defaults (structbench's corrected
        scoring), or None when none is set; built once."""
        if "_corrected" not in self.__dict__:
            fields = type(self.options).model_fields
            changed = {k for k in self.paper.scoring if getattr(self.options, k) != fields[k].default}
            self._corrected = (
                type(self)(self.options.model_dump(exclude_unset=True, exclude=changed)) if changed else None
            )
        return self._corrected

    def with_corrected(self, scored: Scored, rescore: Callable[[Benchmark[OptionsT]], Scored]) -> Scored:
        """``scored`` (under the paper's scoring) with the corrected scoring's values beside its own, under
        ``CORRECTED`` keys; ``rescore`` scores the same attempt with the corrected benchmark."""
        corrected = self.corrected()
        if corrected is None:
            return scored
        twin = rescore(corrected)
        extra = {f"{CORRECTED}{k}": v for k, v in twin.values.items()}
        return scored.model_copy(update={"values": {**scored.values, **extra, f"{CORRECTED}score": twin.score}})


def content_key(texts: Sequence[str]) -> str:
    """A short digest that names samples carrying the same texts (the same evidence): a cluster key."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode() + b"\0")
    return h.hexdigest()[:16]


def bind_sample(bench: Benchmark[Any], sample: Sample) -> Token[CurrentSample]:
    """Make ``sample`` of ``bench`` the one backends see in this context (``backends.current``): the oracle answers
    from it, local backends name it in their errors. Returns the token that ``current_sample.reset`` takes."""
    return current_sample.set(CurrentSample(bench.name, sample.id, partial(bench.oracle, sample)))

other_models: ContextVar[Callable[[str, str | None], Generate]] = ContextVar("other_models")
"""``(BACKEND[:NAME], base_url) -> generate`` for models other than the run's own (an LLM judge). The
runner installs one (``runner.calls.ModelPool``) whose calls share the run's response cache and whose
backends close with the run."""


def other_model(spec: str, base_url: str | None = None) -> Generate:
    """The ``generate`` of model ``spec`` (``BACKEND[:NAME]``), cached and closed by the active run."""
    try:
        pool = other_models.get()
    except LookupError:
        raise UsageError(f"model {spec!r} can only be called during a run (structbench run, or inside "
                         "structbench.runner.calls.ModelPool)") from None
    return pool(spec, base_url)


def check_model(spec: str) -> str:
    """``spec`` (``BACKEND[:NAME]``) if its backend exists; an unknown backend is a usage error, raised
    before a run starts (benchmarks name other models without importing any backend)."""
    from structbench.backends.factory import BACKENDS, BackendSpec

    BACKENDS.get(BackendSpec.parse(spec).backend)
    return spec
