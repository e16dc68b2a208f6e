"""StructFact's run options (``--option key=value``) and its option maps."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from structbench.backends.tokens import split_spec
from structbench.core.errors import UsageError
from structbench.data.perturb import PerturbationOptions
from structbench.data.serialize import SERIALIZERS

OPTION_MAPS: tuple[dict[str, str], ...] = (
    {"A": "Yes", "B": "No", "C": "Not sure enough"},
    {"A": "No", "B": "Yes", "C": "Not sure enough"},
    {"A": "Not sure enough", "B": "Yes", "C": "No"},
    {"A": "Not sure enough", "B": "No", "C": "Yes"},
    {"A": "Yes", "B": "Not sure enough", "C": "No"},
    {"A": "No", "B": "Not sure enough", "C": "Yes"},
)
"""All six orders of {Yes, No, Not sure enough} on A/B/C, numbered as the official ``--option_map``."""

PAPER_OPTION_MAPS = (0, 1, 2)
"""The three orders the paper averages over ("mainly used" in the official code)."""

ORIGINAL = "paper"
"""The ``serialization`` that sends the EVIDENCE strings exactly as released (the paper's prompts)."""


class StructFactOptions(PerturbationOptions):
    """Run options; the defaults reproduce the paper (Table 4 and the official code). The shared perturbations
    (``perturbation``, ``perturbation_seed``) change the sample's evidence in every strategy's prompt."""

    model_config = ConfigDict(extra="forbid")

    option_map: tuple[int, ...] = (0,)
    """Which orders of answers A/B/C stand for (``OPTION_MAPS``; 0 = A) Yes B) No C) Not sure enough), as a
    comma list: ``0,1,2`` asks every question under each map and averages the maps' metrics (the paper's
    protocol)."""
    serialization: str = ORIGINAL
    """``paper`` (the released Markdown strings, as in the paper), or a registered serialization re-rendered from the
    parsed evidence: markdown, csv, json, html, xml, triples, indexed_row_major, dataframe, df_loader, concat
    (perturbed or shuffled evidence under ``paper`` is re-rendered as Markdown)."""
    max_evidence_tokens: int = Field(2500, ge=0)
    """Evidence longer than this is cut and ``\\n...`` appended, as the paper does; 0 = never cut."""
    token_counter: str = "regex"
    """How evidence tokens are counted for truncation: a ``structbench.backends.tokens`` spec (regex, whitespace,
    cl100k, llamacpp[:PATH], hf:MODEL, vllm:MODEL ...)."""
    shots: int = Field(1, ge=1, le=5)
    """Few-shot examples per prompt, drawn from the official pool of five."""
    shuffle: Literal["rows", "columns", "both"] = "both"
    """What the ``shuffled`` strategy permutes in tables (list items and triples follow ``rows``)."""
    k: int = Field(5, ge=1)
    """Samples drawn by ``self_consistency``."""
    temperature: float = Field(0.6, ge=0.0)
    """Sampling temperature (the paper's 0.6; Table 7 uses 0)."""
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    """Nucleus sampling threshold (the paper's 0.95)."""
    max_tokens: int = Field(10, ge=1)
    """Generation budget without CoT (Table 4)."""
    max_tokens_cot: int = Field(512, ge=1)
    """Generation budget with CoT and for self-refine (Table 4)."""
    min_tokens: int = Field(2, ge=0)
    """Generate at least this many tokens before the reply may end, as the official vLLM runs do
    (``min_tokens=2``); enforced by backends that support it (llamacpp), ignored by the others."""
    answer: Literal["free", "constrained"] = "free"
    """``constrained``: direct answers (strategies without CoT) are decoded as exactly one option letter
    where the backend supports constrained decoding (``GenerationParams.choices``: llamacpp, hf, vllm;
    openai and mock answer freely), so even a small base model gives a parseable answer; the default run uses it.
    Not in the paper, whose models answer freely (``free``)."""
    logprobs: bool = True
    """Ask for token log-probabilities (top 5) to report the chosen option's confidence."""
    drop_unstructured: bool = False
    """Leave out the unstructured context: NEW_EVIDENCE where the record has it, else the text pieces
    (with ``serialization=paper``: the EVIDENCE strings that hold nothing but text)."""
    enhanced_context_file: str | None = None
    """GPT-written context for ``enhanced_context``: a CSV with columns index,label (the official
    ``combine_enhance`` file) or a JSON object of sample id -> text."""
    full_path: str | None = None
    """The full-release file (JSON or JSONL) for the ``full`` variant."""
    few_shot_placeholder: bool = False
    """Bug-compatible: show the literal ``[data example]`` instead of the examples' data, as the
    official ``generate_few_shot_examples`` does."""
    official_without_data_cot: bool = False
    """Bug-compatible: the official w/o-data CoT template, which asks for "Yes"/"No" words although
    only A/B/C is parsed (so nearly every answer counts as wrong)."""
    vote_on_raw_text: bool = False
    """Bug-compatible: self-consistency votes on the raw sampled strings (official), not parsed options."""

    @field_validator("option_map", mode="before")
    @classmethod
    def _option_maps(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",")]
        if isinstance(value, int):
            value = [value]
        try:
            maps = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"expected map numbers 0-{len(OPTION_MAPS) - 1}, e.g. 0 or 0,1,2") from None
        if not maps or any(not 0 <= m < len(OPTION_MAPS) for m in maps) or len(set(maps)) != len(maps):
            raise ValueError(f"expected distinct map numbers 0-{len(OPTION_MAPS) - 1}, e.g. 0 or 0,1,2; got {value}")
        return maps

    @field_validator("serialization")
    @classmethod
    def _known_serialization(cls, value: str) -> str:
        if value != ORIGINAL and value not in SERIALIZERS:
            raise ValueError(f"unknown serialization {value!r}; known: {ORIGINAL}, {', '.join(SERIALIZERS)}")
        return value

    @field_validator("token_counter")
    @classmethod
    def _known_counter(cls, value: str) -> str:
        try:
            split_spec(value)
        except UsageError as err:
            raise ValueError(f"token_counter: {err}") from None
        return value

    @property
    def letters(self) -> dict[str, str]:
        """Letter -> answer text (``Yes`` ...) under the (first) chosen option map."""
        return OPTION_MAPS[self.option_map[0]]

    def for_map(self, option_map: int) -> StructFactOptions:
        """These options with a single option map."""
        return self.model_copy(update={"option_map": (option_map,)})
