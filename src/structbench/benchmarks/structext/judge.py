"""The optional LLM-as-judge metric: a second model call that says whether a reply is correct.

The paper reports an LLM-as-Judge score (GPT-4o, after Zheng et al., 2023) next to RougeL (Sec. 4.3,
Table 6; Fig. 8 shows its binary "Judge: True/False" verdicts) but prints no judge prompt. Ours is a
reference-guided single-answer grading prompt in the MT-Bench style, asking for a True/False verdict.
The judge is any backend: the run's own or another one named by a ``BACKEND[:NAME]`` spec, which the
run builds, caches like its own calls and closes (``benchmark.other_model``); ``judge_verdict`` also
scores saved replies after the fact.
"""

from __future__ import annotations

import re

from structbench.backends.base import Request
from structbench.contract.benchmark import Attempt, Generate, Strategy, other_model
from structbench.data.sample import Sample, TextGold

JUDGE_OPENING = "[Instruction]\nPlease act as an impartial judge"
JUDGE_TEMPLATE = (
    JUDGE_OPENING + " and evaluate whether the AI assistant's answer to the question below, about a "
    "structure-rich text, is correct. You are given the reference answer. The assistant's answer is correct "
    "if it gives the same answer as the reference: layout, quoting and explanations around the answer do not "
    "matter, but any wrong, missing or extra item does. Reply with only \"True\" if it is correct and "
    "\"False\" otherwise.\n\n"
    "[Question]\n{question}\n\n"
    "[Reference Answer]\n{gold}\n\n"
    "[Assistant's Answer]\n{answer}\n\n"
    "[Verdict]\n"
)
VERDICT = re.compile(r"\b(true|false)\b", re.IGNORECASE)


def judge_request(sample: Sample, reply: str, *, max_tokens: int = 16) -> Request:
    """The judge's prompt about ``reply`` to ``sample`` (greedy, a short verdict)."""
    assert isinstance(sample.gold, TextGold)
    text = JUDGE_TEMPLATE.format(question=sample.question, gold=sample.gold.text, answer=reply)
    return Request.chat(text, max_tokens=max_tokens, temperature=0.0)


def is_judge_request(request: Request) -> bool:
    """Whether ``request`` asks for a verdict (the oracle answers those with "True")."""
    return bool(request.messages) and request.messages[-1].content.startswith(JUDGE_OPENING)  # type: ignore[index]


def parse_verdict(text: str) -> float | None:
    """1.0 for "True", 0.0 for "False" (the first of the two words in the reply), None when neither appears."""
    found = VERDICT.search(text)
    return None if found is None else float(found.group(1).lower() == "true")


async def judge_verdict(sample: Sample, reply: str, generate: Generate) -> tuple[float | None, str]:
    """Ask the judge behind ``generate`` about ``reply``; returns the verdict and the judge's text."""
    response = await generate(judge_request(sample, reply))
    text = response.choices[0].text if response.choices else ""
    return parse_verdict(text), text


class Judged(Strategy):
    """A strategy whose every attempt is also judged; the verdict goes to ``artifacts["judge"]``."""

    def __init__(self, inner: Strategy, judge: str | None = None, base_url: str | None = None) -> None:
        self.inner = inner
        self.judge = judge
        """The judge model as ``BACKEND[:NAME]``, reached through the run (``other_model``); None: the run's own."""
        self.base_url = base_url
        self.name = inner.name
        self.description = f"{inner.description} Judged by an LLM."

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        attempt = await self.inner.run(sample, generate)
        judge = generate if self.judge is None else other_model(self.judge, self.base_url)
        verdict, text = await judge_verdict(sample, attempt.output, judge)
        attempt.artifacts["judge"] = {"verdict": verdict, "reply": text}
        return attempt
