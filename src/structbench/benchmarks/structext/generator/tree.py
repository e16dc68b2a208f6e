"""Tree: ``father->child`` edge lines of a full tree, in depth-first order (root first)."""

from __future__ import annotations

from itertools import repeat
from operator import add
from random import Random

from structbench.benchmarks.structext.generator.common import QA, Shape
from structbench.benchmarks.structext.generator.naming import UP
from structbench.benchmarks.structext.generator.topology import topology


def generate_tree(rng: Random, shape: Shape) -> list[QA]:
    """The three tree questions (height, depth of a node, path to a node) about one tree."""
    topo = topology(shape.branching, shape.depth)
    total = topo.total
    off = rng.randrange(26)
    names = UP.upto(off + total)[off : off + total]
    fathers = map(names.__getitem__, topo.parents[1:])
    text = "\n".join(map(add, map(add, fathers, repeat("->")), names[1:]))
    deep = rng.choice(range(total))
    route = rng.choice(range(total))
    return [
        QA("tree.height", {}, str(shape.depth), text),
        QA("tree.depth", {"node": names[deep]}, str(topo.levels[deep]), text),
        QA("tree.path", {"node": names[route]}, "->".join([names[i] for i in topo.lineage(route)]), text),
    ]
