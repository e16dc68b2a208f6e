"""Where a benchmark's data comes from, on what terms it may be shared, and how to cite its paper.

Each benchmark declares one ``Provenance`` (``Benchmark.provenance``), next to its code; whatever publishes
results (``structbench publish``'s dataset card) reads it from there and knows no benchmark by name. Published
results carry the prompts, and so the benchmark's data: the card must say whose data it is and its license.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

HUB_LICENSES = frozenset({"unknown", "mit", "apache-2.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "gpl-2.0",
                          "gpl-3.0"})
"""The licenses this module names that the Hugging Face Hub knows by the same identifier."""


@dataclass(frozen=True)
class Provenance:
    """A benchmark's data source, license and citation, as a dataset card states them."""

    paper: str
    """The paper, as a reference a reader can find: authors, title, venue and year where known."""
    bibtex: str
    """The paper's BibTeX entry."""
    source: str
    """Where the released data comes from (repository, snapshot)."""
    license: str
    """The released data's license as a Hub license identifier (``mit``), or ``unknown`` where the release
    states none."""
    license_note: str
    """The license in words: who holds it, or that none is stated and what follows."""
    variants: Mapping[str, str] = field(default_factory=dict)
    """Variant -> where its data comes from, where that differs from ``source`` (generated variants, files the
    user gives)."""

    def for_variant(self, variant: str) -> str:
        """Where ``variant``'s data comes from."""
        return self.variants.get(variant, self.source)


def combined_license(licenses: list[str]) -> str:
    """The one license a dataset card's header can name for data under ``licenses``: theirs when they agree and
    the Hub knows it, else ``other`` (the card's body lists each)."""
    distinct = set(licenses)
    if len(distinct) == 1 and next(iter(distinct)) in HUB_LICENSES:
        return next(iter(distinct))
    return "other"
