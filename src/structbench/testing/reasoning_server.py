"""A loopback OpenAI-compatible server that replies like a reasoning model, for tests and by hand.

Every reply is a thought, then an answer, in one of the shapes real servers send (``SHAPES``): the thought
inline between ``<think>`` tags (vLLM, SGLang or llama.cpp without a reasoning parser), with the opening tag
left out because the chat template wrote it, in ``message.reasoning_content`` (vLLM/SGLang with a reasoning
parser, DeepSeek's API) or ``message.reasoning``, cut off inside the thought (``finish_reason: length``), and
the malformed ones (only a thought, nested or unbalanced tags, a thought both in the field and in the content).

The answer is a fixed text (``--reply``) or, with ``--oracle BENCH[:VARIANT]``, the gold answer of the sample
the request is about (``OracleAnswers``), so a run against the server scores the maximum exactly when no
parser reads the thought. The thought names a wrong answer first, in every form a parser could take for one:
an option letter, a label word, a JSON table, a program.

    python -m structbench.testing.reasoning_server --shape inline --oracle scitab --oracle structfact \\
        --limit 20 --port-file p.txt
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.backends.base import Choice, GenerationParams, Message, Request, Response
from structbench.testing.openai_server import MockOpenAIServer

if TYPE_CHECKING:
    from structbench.contract.benchmark import Benchmark, Strategy
    from structbench.data.sample import Sample

Shape = Callable[[str, str], tuple[dict[str, Any], str]]
"""(thought, answer) -> (the message's fields, finish_reason)."""


def _inline(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>\n{thought}\n</think>\n\n{answer}"}, "stop"


def _opened(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"{thought}\n</think>\n\n{answer}"}, "stop"


def _field(name: str) -> Shape:
    def shape(thought: str, answer: str) -> tuple[dict[str, Any], str]:
        return {"content": answer, name: thought}, "stop"

    return shape


def _cutoff(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>\n{thought}"}, "length"


def _cutoff_opened(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": thought}, "length"


def _cutoff_field(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": None, "reasoning_content": thought}, "length"


def _only_thought(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>{thought}</think>"}, "stop"


def _nested(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>{thought}\n<think>{thought}</think>\nstill thinking</think>\n{answer}"}, "stop"


def _unbalanced(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"{thought}</think>\n{thought}\n</think>\n{answer}"}, "stop"


def _unclosed(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>{thought}<think>{thought}</think>\n{answer}"}, "stop"


def _both(thought: str, answer: str) -> tuple[dict[str, Any], str]:
    return {"content": f"<think>{thought}</think>\n{answer}", "reasoning_content": thought}, "stop"


SHAPES: dict[str, Shape] = {
    "inline": _inline,
    "opened": _opened,
    "reasoning_content": _field("reasoning_content"),
    "reasoning": _field("reasoning"),
    "cutoff": _cutoff,
    "cutoff-opened": _cutoff_opened,
    "cutoff-field": _cutoff_field,
    "only-thought": _only_thought,
    "nested": _nested,
    "unbalanced": _unbalanced,
    "unclosed": _unclosed,
    "both": _both,
    "plain": lambda thought, answer: ({"content": answer}, "stop"),
}
"""Reply shapes by name: how the thought and the answer travel in a chat reply."""

FIELD_SHAPES = frozenset({"reasoning_content", "reasoning", "cutoff-field", "both"})
"""Shapes that carry the thought in a message field, and so report ``reasoning_tokens`` in the usage."""

_LETTER = re.compile(r"(?<![A-Za-z])([ABC])(?![A-Za-z])")


def misleading_thought(answer: str) -> str:
    """A thought that names a wrong answer first, in every form a parser might take for one."""
    given = set(_LETTER.findall(answer))
    wrong = next((letter for letter in "BCA" if letter not in given), "B")
    return (
        f"The answer is {wrong}. Answer: {wrong}) the claim is false; it is refuted, not supported.\n"
        '[{"wrong": "row"}]\n'
        "```python\nprint('refutes')\nans = False\n```\n"
        "Let me look at the data again before I answer."
    )


def request_key(request: Request) -> str:
    """What identifies the sample a request is about: its first user turn (follow-up turns and a system prompt
    the run adds keep it), or a completion's prompt."""
    if request.messages is None:
        return request.prompt or ""
    return next((m.content for m in request.messages if m.role == "user"), "")


def request_of(body: dict[str, Any]) -> Request:
    """The structbench request an OpenAI request body stands for (what the oracle needs of it)."""
    params = GenerationParams(n=int(body.get("n", 1)), max_tokens=int(body.get("max_tokens", 512)))
    messages = body.get("messages")
    if isinstance(messages, list):
        return Request(messages=tuple(Message(m["role"], m["content"]) for m in messages), params=params)
    return Request(prompt=str(body.get("prompt", "")), params=params)


class OracleAnswers:
    """The gold answer to every request a run's strategies send, found by the sample the request is about.

    ``add`` runs each strategy on each sample against the oracle once, remembering which sample each request it
    sends belongs to (``request_key``); the server then answers a request about that sample as the oracle does."""

    def __init__(self, native_tools: bool = True) -> None:
        self._by_key: dict[str, tuple[Benchmark, Sample]] = {}
        self.native_tools = native_tools
        """Learn the requests of a backend with function calling (the ``openai`` backend the server answers): a tool
        loop's first turn is then the one such a run sends (``benchmark.tool_support``)."""

    def __len__(self) -> int:
        return len(self._by_key)

    def add(self, bench: Benchmark, samples: Sequence[Sample], strategies: Sequence[Strategy]) -> None:
        from structbench.contract.benchmark import ToolSupport, bind_sample
        from structbench.runner.calls import ModelPool

        answers = self

        class Oracle:
            """The oracle, remembering each request's sample, with the tool support of the backend under test."""

            tool_support = ToolSupport(native=self.native_tools)

            def __init__(self, sample: Sample) -> None:
                self.sample = sample

            async def __call__(self, request: Request) -> Response:
                answers._by_key.setdefault(request_key(request), (bench, self.sample))
                text = bench.oracle(self.sample, request)
                return Response(choices=tuple(Choice(text=text) for _ in range(request.params.n)))

        async def learn() -> None:
            async with ModelPool(cache=None):
                for strategy in strategies:
                    for sample in samples:
                        bind_sample(bench, sample)
                        await strategy.run(sample, Oracle(sample))

        asyncio.run(learn())

    def add_run(self, entries: Sequence[str], *, strategies: Sequence[str] = (), options: dict[str, str] | None = None,
                limit: int | None = None, seed: int = 0, data_dir: str | None = None) -> None:
        """``add`` for what a run of ``entries`` (``BENCH[:VARIANT]``) with these settings evaluates."""
        from structbench.data.datasets import DataContext
        from structbench.runfiles.runconfig import RunConfig
        from structbench.runner.selection import prepare

        config = RunConfig(model="oracle", benches=list(entries), strategies=list(strategies),
                           options=dict(options or {}), limit=limit, seed=seed, data_dir=data_dir)
        # a test double: it reads whatever data the run under test reads (synthetic releases included)
        for selection in prepare(config, DataContext.from_env(data_dir, offline=True, allow_modified=True)):
            self.add(selection.bench, list(selection.samples), selection.strategies)

    def __call__(self, body: dict[str, Any]) -> str | None:
        """The oracle's reply to the request ``body``, or None for a request about no known sample."""
        request = request_of(body)
        found = self._by_key.get(request_key(request))
        if found is None:
            return None
        bench, sample = found
        return bench.oracle(sample, request)


class ReasoningServer(MockOpenAIServer):
    """``MockOpenAIServer`` whose chat replies are a thought and an answer in one of ``SHAPES``."""

    def __init__(self, shape: str = "inline", answers: Callable[[dict[str, Any]], str | None] | None = None,
                 thought: Callable[[str], str] = misleading_thought, **kwargs: Any) -> None:
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r}; shapes: {', '.join(SHAPES)}")
        super().__init__(**kwargs)
        self.shape = shape
        self.answers = answers
        self.thought = thought

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        if path != "/v1/chat/completions":
            return super().completion(path, request, size)
        answer = (self.answers(request) if self.answers is not None and request else None) or self.reply
        thought = self.thought(answer)
        n = int(request.get("n", 1))
        fields, finish = SHAPES[self.shape](thought, answer)
        choices = [{"index": i, "message": {"role": "assistant", **fields}, "finish_reason": finish}
                   for i in range(n)]
        thought_tokens = len(thought.split())
        usage: dict[str, Any] = {"prompt_tokens": size // 4,
                                 "completion_tokens": n * (thought_tokens + len(answer.split()))}
        if self.shape in FIELD_SHAPES:
            usage["completion_tokens_details"] = {"reasoning_tokens": n * thought_tokens}
        return self.with_usage({"id": "reasoning-mock", "object": "chat.completion", "choices": choices}, usage)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="inline")
    parser.add_argument("--reply", default="A", help="The answer to requests about no --oracle sample.")
    parser.add_argument("--oracle", action="append", default=[], metavar="BENCH[:VARIANT]",
                        help="Answer requests about this benchmark's samples with their gold answer (repeatable).")
    parser.add_argument("--strategy", action="append", default=[], help="As structbench run --strategy.")
    parser.add_argument("--option", action="append", default=[], help="As structbench run --option KEY=VALUE.")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--log", type=Path, default=None, help="Append one line per answered request.")
    parser.add_argument("--port-file", type=Path, default=None, help="Write the bound port here.")
    args = parser.parse_args()
    answers = None
    if args.oracle:
        from structbench.runner.config import parse_options

        answers = OracleAnswers()
        answers.add_run(args.oracle, strategies=args.strategy, options=parse_options(args.option), limit=args.limit,
                        seed=args.seed, data_dir=args.data_dir)

    async def run() -> None:
        server = ReasoningServer(args.shape, answers, reply=args.reply, log_path=args.log)
        srv = await server.serve(port=args.port)
        port = srv.sockets[0].getsockname()[1]
        if args.port_file:
            tmp = args.port_file.with_suffix(".tmp")
            tmp.write_text(str(port))
            os.replace(tmp, args.port_file)
        print(f"listening on http://127.0.0.1:{port}/v1 ({args.shape})", flush=True)
        async with srv:
            await srv.serve_forever()

    asyncio.run(run())


if __name__ == "__main__":
    main()
