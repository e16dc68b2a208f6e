"""What every language generator shares: the size of a structure and the question-answer records it yields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WORDS = (
    "apple", "banana", "cafe", "dentist", "essence", "far", "groot", "halo", "idiot", "jargon", "kangaroo",
    "lamb", "monkey", "nob", "oops", "perish", "qualify", "ravish", "salvage", "transformer", "unique",
    "vigor", "wake", "X-ray", "yogurt", "zen",
)
"""The release's filler vocabulary (one word per letter), for XML contents and markup paragraphs."""


class GroundTruthError(RuntimeError):
    """The parser-derived answer disagrees with the generator's: a generator bug, never skipped."""


@dataclass(frozen=True)
class Shape:
    """How big a structure is: the paper's depth (nesting levels) and width.

    As in the release (``node_number`` x ``n_ary_ratio``), every inner node has ``depth * width``
    children, and each node carries up to ``6 * depth`` attributes (``para_len_ratio`` = 6) or a
    ``6 * depth``-word paragraph; this reproduces the sizes of the paper's Table 2 (a depth-3 width-3
    reference is about 100k characters).
    """

    depth: int
    width: int

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= 4 or not 1 <= self.width <= 4:
            raise ValueError(f"depth must be 1..4 and width 1..4, got depth={self.depth} width={self.width}")

    @property
    def branching(self) -> int:
        return self.depth * self.width

    @property
    def span(self) -> int:
        """Attributes per node at most, and words per paragraph."""
        return 6 * self.depth


@dataclass(slots=True)
class QA:
    """One generated question: the template's slots, the generator's answer and the text it is about."""

    template: str
    slots: dict[str, Any]
    answer: str
    reference: str
    facts: dict[str, Any] = field(default_factory=dict)
    """What the verifier needs beyond the slots (e.g. the heading level of a section question)."""
