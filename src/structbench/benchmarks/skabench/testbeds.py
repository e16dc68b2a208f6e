"""The four testbeds (paper section 3.4): which units go into a context, in what order, within a budget.

- Noise robustness: positive units plus noisy units up to a total-token budget (1k, 4k, 12k, 24k for
  KG and Table; 4k, 12k, 24k for the hybrids). KG triples and text paragraphs are shuffled with seed
  42; table rows keep their original order.
- Order insensitivity: positive units at the prefix, at random positions or at the suffix of the
  knowledge base, and for tables also the original row order; 4k tokens (KG, Table) or 12k (hybrids).
- Information integration: instances bucketed by their number of positive units (2, 3, 4, >4) at the
  same scales and in the noise robustness order; instances with a single positive unit are left out.
- Negative rejection: noisy units only, same scales and order.

A budget counts the tokens of the knowledge block as it appears in the prompt (headings, table
header, units). Noisy units are drawn in one seeded shuffle of the noise pool, so a smaller budget's
context is contained in a larger one's. A context must land within ``tolerance`` (5%) under its budget;
instances without enough noise to get there are left out (``keep_underfull`` keeps them, as the paper's
averages in Table 2 suggest it did). Budgets go up to 128k tokens.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from structbench.backends.tokens import CountTokens as TokenCounter
from structbench.benchmarks.skabench.prompts import render_knowledge
from structbench.benchmarks.skabench.units import Instance, Passage, Row, Triple, is_hybrid
from structbench.core.errors import UsageError
from structbench.core.registry import did_you_mean

NOISE = "noise_robustness"
ORDER = "order_insensitivity"
INTEGRATION = "information_integration"
NEGATIVE = "negative_rejection"
TESTBEDS = (NOISE, ORDER, INTEGRATION, NEGATIVE)
TESTBED_ALIASES = {"noise": NOISE, "order": ORDER, "integration": INTEGRATION, "negative": NEGATIVE}

POSITIONS = ("original", "prefix", "random", "suffix")
PAPER_BREAKDOWNS = {
    NOISE: "noise_robustness/budget",
    ORDER: "order_insensitivity/position",
    INTEGRATION: "information_integration/positive_units",
    NEGATIVE: "negative_rejection/knowledge_type",
}
"""Per testbed, the breakdown key laid out like the paper's result: Table 3 (knowledge type x budget), Table 4
(knowledge type x position), Figure 9 (knowledge type x positive-unit bucket) and Table 5 (knowledge type).
Groups are ``<knowledge type>/<budget|position|bucket>`` (``kg/4k``), only over that testbed's samples."""
MAX_BUDGET = 128_000

AnyUnit = Triple | Row | Passage


def resolve_testbed(name: str) -> str:
    """A testbed's canonical name from itself or its short alias."""
    name = TESTBED_ALIASES.get(name, name)
    if name not in TESTBEDS:
        known = [*TESTBED_ALIASES, *TESTBEDS]
        raise UsageError(f"skabench: unknown testbed {name!r}.{did_you_mean(name, known)} Known: {', '.join(known)}")
    return name


def default_budgets(testbed: str, knowledge_type: str) -> tuple[int, ...]:
    """The paper's scales: noise robustness over several budgets, the other testbeds at one."""
    hybrid = is_hybrid(knowledge_type)
    if testbed == NOISE:
        return (4000, 12000, 24000) if hybrid else (1000, 4000, 12000, 24000)
    return (12000,) if hybrid else (4000,)


def default_position(knowledge_type: str) -> str:
    """How units are arranged outside the order testbed: tables in original order, KG shuffled."""
    return "original" if knowledge_type.startswith("table") else "random"


def positions_for(testbed: str, knowledge_type: str) -> tuple[str, ...]:
    """The arrangements a testbed uses: all four (tables) or three (KG) for the order testbed."""
    if testbed != ORDER:
        return (default_position(knowledge_type),)
    return POSITIONS if knowledge_type.startswith("table") else ("prefix", "random", "suffix")


def bucket(positive_units: int) -> str:
    """The information integration bucket of an instance: 1, 2, 3, 4 or >4 positive units."""
    return str(positive_units) if positive_units <= 4 else ">4"


def paper_breakdowns(testbed: str, knowledge_type: str, budget: str, position: str, units: str) -> dict[str, str]:
    """The sample's group in its testbed's ``PAPER_BREAKDOWNS`` key."""
    cell = {NOISE: budget, ORDER: position, INTEGRATION: units, NEGATIVE: None}[testbed]
    return {PAPER_BREAKDOWNS[testbed]: knowledge_type if cell is None else f"{knowledge_type}/{cell}"}


def parse_budget(text: str) -> int:
    """``4k`` -> 4000, ``12000`` -> 12000; at most 128k."""
    raw = text.strip().lower()
    try:
        value = int(float(raw[:-1]) * 1000) if raw.endswith("k") else int(raw)
    except ValueError:
        raise UsageError(f"skabench: bad budget {text!r} (use e.g. 4k or 4000)") from None
    if not 0 < value <= MAX_BUDGET:
        raise UsageError(f"skabench: budget {text!r} must be between 1 and {MAX_BUDGET} tokens")
    return value


def budget_label(tokens: int) -> str:
    return f"{tokens // 1000}k" if tokens % 1000 == 0 else str(tokens)


@dataclass(frozen=True)
class Context:
    """One built knowledge base for an instance: units in display order and where the positives are."""

    instance: Instance
    testbed: str
    budget: int
    position: str
    structured: list[Triple | Row]
    texts: list[Passage]
    positive_structured: tuple[int, ...]
    """Indices into ``structured`` of the positive units."""
    positive_texts: tuple[int, ...]
    knowledge: str
    """The rendered knowledge block."""
    tokens: int
    """Tokens of ``knowledge``, counted with the builder's counter."""


@dataclass(frozen=True)
class Skipped:
    """Why an instance has no context at a budget."""

    reason: str
    """``positives over budget`` or ``too little noise``."""
    detail: str


class ContextBuilder:
    """Builds contexts for instances with one token counter, shuffle seed and tolerance."""

    def __init__(
        self,
        counter: TokenCounter,
        *,
        seed: int = 42,
        tolerance: float = 0.05,
        keep_underfull: bool = False,
    ) -> None:
        self.counter = counter
        self.seed = seed
        self.tolerance = tolerance
        self.keep_underfull = keep_underfull
        self._line_tokens: dict[str, int] = {}
        self._cached_for: Instance | None = None
        self._cached: tuple[list[int], list[list[int]]] = ([], [])

    def _tokens(self, line: str) -> int:
        """Tokens of one unit line with its line break; memoized, as instances share most lines."""
        cost = self._line_tokens.get(line)
        if cost is None:
            cost = self._line_tokens[line] = self.counter(line + "\n")
        return cost

    def _prepared(self, instance: Instance) -> tuple[list[int], list[list[int]]]:
        """Per instance, cached: positive unit costs and the noise groups in shuffled order. Noisy units
        are counted only when the fill reaches them (a large table has far more than a context holds)."""
        if self._cached_for is not instance:
            groups: dict[str, list[int]] = {}
            for i, unit in enumerate(instance.noisy_units):
                groups.setdefault(unit.group if unit.group is not None else f"\0{i}", []).append(i)
            ordered = list(groups.values())
            random.Random(self.seed).shuffle(ordered)
            self._cached = ([self._tokens(u.line()) for u in instance.positive_units], ordered)
            self._cached_for = instance
        return self._cached

    def _group_cost(self, instance: Instance, group: list[int]) -> int:
        return sum(self._tokens(instance.noisy_units[i].line()) for i in group)

    def build(self, instance: Instance, testbed: str, budget: int, position: str) -> Context | Skipped:
        """The context, or the reason the instance cannot be built at this budget."""
        negative = testbed == NEGATIVE
        pos_costs, groups = self._prepared(instance)
        positives = [] if negative else list(range(len(instance.positive_units)))
        fixed = self.counter(render_knowledge(instance.knowledge_type, [], [], instance.header) + "\n")
        total = fixed + sum(pos_costs[i] for i in positives)
        if total > budget:
            return Skipped("positives over budget", f"positive units take {total} of {budget} tokens")
        chosen: list[list[int]] = []
        cursor = 0
        context: Context | None = None
        for _ in range(6):
            cursor, total = self._fill(instance, groups, cursor, chosen, total, budget)
            context = self._assemble(instance, testbed, budget, position, positives, chosen)
            while context.tokens > budget and chosen:
                over = context.tokens - budget
                while over > 0 and chosen:
                    over -= self._group_cost(instance, chosen.pop())
                context = self._assemble(instance, testbed, budget, position, positives, chosen)
            total = context.tokens
            if budget - total <= budget * 0.01 or cursor >= len(groups):
                break
        assert context is not None
        if context.tokens > budget:
            return Skipped("positives over budget", f"positive units take {context.tokens} of {budget} tokens")
        if context.tokens < budget * (1 - self.tolerance) and not self.keep_underfull:
            return Skipped("too little noise", f"the knowledge base reaches only {context.tokens} of {budget} tokens")
        return context

    def _fill(
        self, instance: Instance, groups: list[list[int]], cursor: int, chosen: list[list[int]], total: int, budget: int
    ) -> tuple[int, int]:
        """Add noise groups in shuffled order while they fit; skip those that do not."""
        while cursor < len(groups) and total < budget * 0.995:
            cost = self._group_cost(instance, groups[cursor])
            if total + cost <= budget:
                chosen.append(groups[cursor])
                total += cost
            cursor += 1
        return cursor, total

    def _assemble(
        self,
        instance: Instance,
        testbed: str,
        budget: int,
        position: str,
        positives: list[int],
        chosen: list[list[int]],
    ) -> Context:
        noise = [i for group in chosen for i in group]
        pos_units = [instance.positive_units[i] for i in positives]
        noise_units = [instance.noisy_units[i] for i in noise]
        structured, pos_structured = self._arrange(
            [u for u in pos_units if not isinstance(u, Passage)],
            [u for u in noise_units if not isinstance(u, Passage)],
            position,
        )
        texts, pos_texts = self._arrange(
            [u for u in pos_units if isinstance(u, Passage)],
            [u for u in noise_units if isinstance(u, Passage)],
            "random" if position == "original" else position,
        )
        structured_units = [u for u in structured if not isinstance(u, Passage)]
        text_units = [u for u in texts if isinstance(u, Passage)]
        knowledge = render_knowledge(instance.knowledge_type, structured_units, text_units, instance.header)
        return Context(
            instance=instance,
            testbed=testbed,
            budget=budget,
            position=position,
            structured=structured_units,
            texts=text_units,
            positive_structured=pos_structured,
            positive_texts=pos_texts,
            knowledge=knowledge,
            tokens=self.counter(knowledge),
        )

    def _arrange(
        self, positives: Sequence[AnyUnit], noise: Sequence[AnyUnit], position: str
    ) -> tuple[list[AnyUnit], tuple[int, ...]]:
        """Order positive and noisy units as ``position`` says; returns the units and the positives' places."""
        tagged = [(u, True) for u in positives] + [(u, False) for u in noise]
        rows = all(isinstance(u, Row) for u, _ in tagged)

        def by_order(items: list[tuple[AnyUnit, bool]]) -> list[tuple[AnyUnit, bool]]:
            return sorted(items, key=lambda t: t[0].order if isinstance(t[0], Row) and t[0].order is not None else 0)

        def shuffled(items: list[tuple[AnyUnit, bool]]) -> list[tuple[AnyUnit, bool]]:
            items = list(items)
            random.Random(self.seed).shuffle(items)
            return items

        settle = by_order if rows else shuffled
        pos = [t for t in tagged if t[1]]
        neg = [t for t in tagged if not t[1]]
        if position == "original":
            if not rows:
                raise UsageError("the original order exists for table rows only")
            arranged = by_order(tagged)
        elif position == "prefix":
            arranged = settle(pos) + settle(neg)
        elif position == "suffix":
            arranged = settle(neg) + settle(pos)
        elif position == "random":
            arranged = shuffled(tagged)
        else:
            raise UsageError(f"skabench: unknown position {position!r}; known: {', '.join(POSITIONS)}")
        return [u for u, _ in arranged], tuple(i for i, (_, p) in enumerate(arranged) if p)
