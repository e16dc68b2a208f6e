"""Reusable prompting pipelines that benchmarks compose with their own prompt builders.

``ToolLoop`` and ``ToolTask`` are read from ``strategies.tools`` when first asked for: it brings the toolbox
(DuckDB, 0.3 s to import), which a benchmark that reads only ``strategies.common`` does without
(``docs/develop/performance.md``).
"""

from typing import TYPE_CHECKING, Any

from structbench.strategies.common import (
    FollowUp,
    PromptBuilder,
    SelfConsistency,
    SelfRefine,
    SingleTurn,
    first_token_confidence,
)

if TYPE_CHECKING:
    from structbench.strategies.tools import ToolLoop, ToolTask

_LATER = frozenset({"ToolLoop", "ToolTask"})

__all__ = [
    "FollowUp",
    "PromptBuilder",
    "SelfConsistency",
    "SelfRefine",
    "SingleTurn",
    "ToolLoop",
    "ToolTask",
    "first_token_confidence",
]


def __getattr__(name: str) -> Any:
    if name in _LATER:
        from structbench.strategies import tools

        return getattr(tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
