"""Reusable prompting pipelines that benchmarks compose with their own prompt builders."""

from structbench.strategies.common import (
    FollowUp,
    PromptBuilder,
    SelfConsistency,
    SelfRefine,
    SingleTurn,
    first_token_confidence,
)

__all__ = [
    "FollowUp",
    "PromptBuilder",
    "SelfConsistency",
    "SelfRefine",
    "SingleTurn",
    "first_token_confidence",
]
