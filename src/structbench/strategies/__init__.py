"""Reusable prompting pipelines that benchmarks compose with their own prompt builders."""

from structbench.strategies.common import (
    FollowUp,
    PromptBuilder,
    SelfConsistency,
    SelfRefine,
    SingleTurn,
    first_token_confidence,
)
from structbench.strategies.tools import ToolLoop, ToolTask

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
