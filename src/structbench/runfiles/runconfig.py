"""A run, fully described by data: what to evaluate, on which model, how (``RunConfig``, the ``config`` of a run's
manifest). Part of the contract: the runner writes it, reports and ``--resume`` read it back."""

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from structbench.backends.reasoning import check_tags
from structbench.core.errors import UsageError
from structbench.runfiles.cells import check_sweep_values

SEED_LIMIT = 2**63
"""Seeds lie in [-2^63, 2^63): a request seed is a 64-bit integer to servers (and to the JSON encoder)."""


class Generation(BaseModel):
    """Sampling settings a run imposes on every request, replacing the benchmark's and strategy's own values
    (self-consistency's sampling temperature included); None keeps each request's own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = Field(default=None, ge=-SEED_LIMIT, lt=SEED_LIMIT)
    """The request seed sent to the model (not the run's ``seed``, which picks samples and shuffles)."""


REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every backend's ``--reasoning-effort`` levels together: OpenAI's ``reasoning_effort`` (``none`` to ``xhigh``; vLLM
and SGLang pass it to the chat template) and Anthropic's ``output_config.effort`` (``low`` to ``max``); a run refuses
a level its backend does not send (``Backend.reasoning_efforts``) before any call."""


class Reasoning(BaseModel):
    """How a run treats reasoning models (``docs/usage/reasoning.md``). The thought is always kept apart from the
    answer; these settings give it room and say how to find it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget: int = Field(default=0, ge=0)
    """Tokens added to every request's answer budget (its ``max_tokens``, after ``--max-tokens`` caps it) for the
    thought: the papers' budgets (StructFact's 10 tokens, SciTab's 64) leave a reasoning model no room to think."""
    effort: str | None = None
    """How hard the model thinks, sent with every chat request: ``reasoning_effort`` by the openai backend (OpenAI,
    vLLM, SGLang), adaptive thinking at this ``output_config.effort`` by the anthropic backend."""
    tags: list[tuple[str, str]] | None = None
    """The (opening, closing) think-tag pairs to split replies on; None: ``<think>``/``</think>``."""
    opened: bool = False
    """The server's chat template opens the thought (DeepSeek-R1's writes ``<think>`` into the prompt): a reply
    without a closing tag is all thought. Local backends see this in the rendered prompt themselves."""

    @field_validator("effort")
    @classmethod
    def _known_effort(cls, value: str | None) -> str | None:
        if value is not None and value not in REASONING_EFFORTS:
            raise ValueError(f"reasoning effort {value!r}: expected one of {', '.join(REASONING_EFFORTS)}")
        return value

    @field_validator("tags")
    @classmethod
    def _pairs(cls, value: list[tuple[str, str]] | None) -> list[tuple[str, str]] | None:
        return None if value is None else [tuple(pair) for pair in check_tags(value)]  # type: ignore[misc]


DEFAULTED_FIELDS = ("system_prompt", "chat_template_args", "generation", "model_options", "reasoning",
                    "allow_modified_data", "epochs", "sample", "sample_ids", "sweeps", "max_turns",
                    "turn_limit")
"""``RunConfig`` fields added after run directories were first named; left out of the fingerprint while at their
defaults, so such runs keep their directory names."""


class RunConfig(BaseModel):
    """Everything that decides a run's results; two runs with equal configs are the same run."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """``BACKEND[:NAME]``."""
    base_url: str | None = None
    benches: list[str]
    """``BENCH[:VARIANT]`` entries."""
    strategies: list[str] = Field(default_factory=list)
    """Strategy names, applied to every benchmark (``BENCH[:VARIANT]/NAME``: to that one only); empty = each
    benchmark's default; ``all`` = every one."""
    options: dict[str, str] = Field(default_factory=dict)
    """``key=value`` run options; ``bench.key`` targets one benchmark, a bare key every one that has it."""
    sweeps: dict[str, list[str]] = Field(default_factory=dict)
    """``--sweep KEY=V1,V2,...``: benchmark options evaluated at each of several values, in one run; the grid of the
    swept keys a benchmark accepts is its cells (``runner.sweep``). Keys as in ``options``."""
    limit: int | None = Field(default=None, ge=1)
    """Evaluate the first ``limit`` samples of each benchmark; None: all."""
    sample: int | None = Field(default=None, ge=1)
    """Evaluate a random ``sample`` of each benchmark's samples, drawn with ``seed`` (the same seed, the same
    samples), kept in the benchmark's order; None: all."""
    sample_ids: list[str] | None = None
    """Evaluate only the samples with these ids (in each benchmark that has them); None: all."""
    seed: int = Field(default=0, ge=-SEED_LIMIT, lt=SEED_LIMIT)
    """Picks samples and shuffles; with several epochs, also the request seed (``Generation.seed`` unset), which
    servers take as a 64-bit integer."""
    data_dir: str | None = None
    allow_modified_data: bool = False
    """Evaluate files under ``data_dir`` that differ from the public release (modified on purpose; the manifest lists
    them) instead of refusing them."""
    max_tokens: int | None = None
    """Cap on every request's ``max_tokens`` (quick runs on slow local models); None keeps each prompt's own."""

    system_prompt: str | None = None
    """A system message put before every chat request's own (joined with it into one system turn)."""
    chat_template_args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the server's chat template (``chat_template_kwargs``), sent with every chat request."""
    generation: Generation = Field(default_factory=Generation)
    """Sampling settings that replace every request's own."""
    model_options: dict[str, str] = Field(default_factory=dict)
    """``--model-option KEY=VALUE`` load settings of the backend (``--device``, ``--dtype`` among them): another
    dtype or context is another run."""
    reasoning: Reasoning = Field(default_factory=Reasoning)
    """Thinking budget, effort and think tags for reasoning models."""
    max_turns: int | None = Field(default=None, ge=1, le=1000)
    """``--max-turns``: model calls a tool loop (``-s tools``) makes at most per sample. None: each strategy's own
    limit."""
    turn_limit: Literal["wrong", "apart"] | None = None
    """``--turn-limit``: a sample whose tool loop reaches its limit still calling tools is scored as a reply without an
    answer (``wrong``, in ``n``, counted in ``turn_limit_scored``) or left out of ``n`` (``apart``: ``error_kind``
    ``turns``, counted in ``turn_limit``). None: each strategy's own (``wrong`` but for ``-o turn_limit=apart``);
    runs of format 1.3 and earlier counted every such sample apart."""
    epochs: int = Field(default=1, ge=1)
    """Answer every sample this many times (``--epochs``), epoch ``e`` with request seed (``generation.seed``,
    else ``seed``) + ``e``; metrics are the mean over the epochs, intervals a cluster bootstrap in which each drawn
    sample keeps its epochs."""

    @field_validator("sweeps")
    @classmethod
    def _nameable_cells(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        try:
            check_sweep_values(value)
        except UsageError as err:
            raise ValueError(str(err)) from None
        return value

    def fingerprint(self) -> str:
        """A short stable hash, used to name the default run directory (unchanged for runs that leave the request
        settings and model options at their defaults)."""
        unset = {k for k in DEFAULTED_FIELDS if getattr(self, k) == type(self).model_fields[k].get_default(
            call_default_factory=True)}
        blob = json.dumps(self.model_dump(exclude=unset), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]
