"""Question templates, one module per StructFact task (the paper's section 2.1 and Appendix H)."""

from __future__ import annotations

from structbench.benchmarks.structfact.generated.templates import (
    arithmetic,
    combining,
    composition,
    multihop,
    spacetime,
)
from structbench.benchmarks.structfact.generated.templates.common import (
    ARITHMETIC,
    COMBINING,
    COMPOSITION,
    MULTIHOP,
    SPACETIME,
    TASKS,
    Draft,
    Template,
)

TEMPLATES: dict[str, tuple[Template, ...]] = {
    ARITHMETIC: arithmetic.TEMPLATES,
    SPACETIME: spacetime.TEMPLATES,
    MULTIHOP: multihop.TEMPLATES,
    COMPOSITION: composition.TEMPLATES,
    COMBINING: combining.TEMPLATES,
}
"""Task (CHALLENGE) -> its templates."""

__all__ = ["TASKS", "TEMPLATES", "Draft", "Template"]
