"""The StrucText-Eval generator: a seeded structure per language, one question per template, verified.

``generate(language, shape, seed)`` draws one structure (a table pair, a tree, a JSON/YAML/XML
document or a markup document) and asks every template of that language about it, as the official
generator does; the answers are then recomputed by ``verify`` from real parsers.
"""

from __future__ import annotations

from collections.abc import Callable
from random import Random

from structbench.benchmarks.structext.generator.common import QA, WORDS, GroundTruthError, Shape
from structbench.benchmarks.structext.generator.markup import generate_markup
from structbench.benchmarks.structext.generator.objects import generate_json, generate_xml, generate_yaml
from structbench.benchmarks.structext.generator.tabular import generate_csv
from structbench.benchmarks.structext.generator.tree import generate_tree
from structbench.benchmarks.structext.generator.verify import VERIFIERS

Generator = Callable[[Random, Shape, bool], list[QA]]
"""``(rng, shape, syntax_error) -> questions``; ``syntax_error`` breaks the text the Syntax question reads."""

GENERATORS: dict[str, Generator] = {
    "csv": lambda rng, shape, _: generate_csv(rng, shape),
    "tree": lambda rng, shape, _: generate_tree(rng, shape),
    "json": generate_json,
    "yaml": generate_yaml,
    "xml": generate_xml,
    "markdown": lambda rng, shape, _: generate_markup("markdown", rng, shape),
    "latex": lambda rng, shape, _: generate_markup("latex", rng, shape),
    "org": lambda rng, shape, _: generate_markup("org", rng, shape),
}


def generate(language: str, shape: Shape, seed: int | str, *, syntax_error: bool = False,
             verify: bool = True) -> list[QA]:
    """One structure's questions, checked against the parsers unless ``verify`` is False."""
    qas = GENERATORS[language](Random(seed), shape, syntax_error)
    if verify:
        VERIFIERS[language](qas)
    return qas


__all__ = ["GENERATORS", "QA", "WORDS", "GroundTruthError", "Shape", "generate"]
