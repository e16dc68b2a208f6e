"""StructFact's prompting strategies (Table 1, Figure 3, Table 9 and Appendix H.5 of the paper).

Each strategy says how its reply is parsed (``answer``, the contract's ``AnswerFormat``): direct answers by their
first option letter, CoT and self-refine answers by their last (as ``cal_option.py`` does for ``cot``/``refine``
runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from structbench.backends.base import Request, Response
from structbench.benchmarks.structfact.parser import option_confidence
from structbench.benchmarks.structfact.prompts import Prompter
from structbench.contract.benchmark import DIRECT, REASONED, AnswerFormat, Attempt, Generate, Strategy
from structbench.data.sample import Sample
from structbench.strategies import SelfConsistency, SelfRefine, ToolLoop


class OptionQuestion(Strategy):
    """One request; the confidence is the probability of the chosen option letter's token."""

    def __init__(self, name: str, build: Callable[[Sample], Request], answer: AnswerFormat, description: str):
        self.name = name
        self.build = build
        self.answer = answer
        self.description = description

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        choice = (await generate(self.build(sample))).choices[0]
        return Attempt(output=choice.text, confidence=option_confidence(choice, self.answer.mention))


class RefinedQuestion(Strategy):
    """``SelfRefine`` (answer, then one feedback turn), with the final answer's option confidence."""

    answer = REASONED

    def __init__(self, name: str, inner: SelfRefine, description: str) -> None:
        self.name = name
        self.inner = inner
        self.description = description

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        responses: list[Response] = []

        async def recording(request: Request) -> Response:
            response = await generate(request)
            responses.append(response)
            return response

        attempt = await self.inner.run(sample, recording)
        attempt.confidence = option_confidence(responses[-1].choices[0], self.answer.mention)
        return attempt


@dataclass(frozen=True)
class StrategySpec:
    """A strategy's name, how its reply is parsed, and what it does."""

    name: str
    answer: AnswerFormat
    description: str


SPECS = (
    StrategySpec("zero_shot", DIRECT, "Figure 13 zero-shot w/o CoT: answer with the option letter."),
    StrategySpec("zero_shot_cot", REASONED, "Figure 13 zero-shot w/ CoT: explain, then choose."),
    StrategySpec("few_shot", DIRECT, "Figure 13 few-shot w/o CoT: solved examples from the official pool."),
    StrategySpec("few_shot_cot", REASONED, "Figure 13 few-shot w/ CoT: examples with explanations."),
    StrategySpec("without_data", DIRECT, "Figure 14 w/o data: the question alone, from the model's knowledge."),
    StrategySpec("without_data_cot", REASONED, "Figure 14 w/o data + CoT."),
    StrategySpec("shuffled", DIRECT, "Zero-shot over evidence with shuffled rows/columns/list items."),
    StrategySpec("format_instructions", DIRECT, "Figure 14: zero-shot plus a description of the data format."),
    StrategySpec("self_refine", REASONED, "Figure 14: zero-shot, then one round of feedback and a final choice."),
    StrategySpec("self_consistency", DIRECT, "Zero-shot sampled k times; majority vote of the parsed options."),
    StrategySpec("enhanced_context", DIRECT, "Appendix H.5: data plus a GPT-4o written reference prompt."),
    StrategySpec("tools", DIRECT, "Ours: zero-shot with the tables as schema and first rows, queried with sql and "
                                  "python tools before the option letter (read by the zero-shot parser)."),
)


def build_strategies(prompter: Prompter) -> dict[str, Strategy]:
    """Every strategy, bound to ``prompter``'s options."""
    p = prompter
    builders: dict[str, Callable[[Sample], Request]] = {
        "zero_shot": p.zero_shot,
        "zero_shot_cot": lambda s: p.zero_shot(s, cot=True),
        "few_shot": p.few_shot,
        "few_shot_cot": lambda s: p.few_shot(s, cot=True),
        "without_data": p.without_data,
        "without_data_cot": lambda s: p.without_data(s, cot=True),
        "shuffled": p.shuffled,
        "format_instructions": p.format_instructions,
        "enhanced_context": p.enhanced_context,
    }
    strategies: dict[str, Strategy] = {}
    for spec in SPECS:
        if spec.name == "self_refine":
            inner = SelfRefine(spec.name, lambda s: p.zero_shot(s, long=True), p.refine_follow_up, rounds=1)
            strategies[spec.name] = RefinedQuestion(spec.name, inner, spec.description)
        elif spec.name == "tools":
            strategies[spec.name] = ToolLoop(spec.name, p.tool_task, spec.description, answer=spec.answer)
        elif spec.name == "self_consistency":
            strategies[spec.name] = SelfConsistency(
                spec.name,
                p.zero_shot,
                k=p.options.k,
                temperature=p.options.temperature,
                description=spec.description,
            )
        else:
            strategies[spec.name] = OptionQuestion(spec.name, builders[spec.name], spec.answer, spec.description)
    return strategies
