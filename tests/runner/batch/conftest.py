"""A loopback batch API over a model that answers toy questions, right on some and wrong on others."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import toybench  # noqa: F401  (registers the toy benchmark)
from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
from structbench.testing.reasoning_server import OracleAnswers, ReasoningServer, request_key, request_of

USAGE = {"prompt_tokens": 100, "completion_tokens": 42, "completion_tokens_details": {"reasoning_tokens": 40}}
"""What the server reports for every request: 100 prompt tokens, 42 completion tokens of which 40 reasoning."""


def mixed_answers(limit: int = 12) -> Any:
    """The gold answer to most toy questions, a wrong one to some (by the question's digest), so a
    score can tell two runs apart."""
    oracle = OracleAnswers()
    oracle.add_run(["toy:small"], strategies=["direct", "refine", "vote"], limit=limit)

    def answer(body: dict[str, Any]) -> str | None:
        right = oracle(body)
        digest = int(hashlib.sha256(request_key(request_of(body)).encode()).hexdigest(), 16)
        if right is None or digest % 3 != 2:
            return right
        return "The answer is no." if "yes" in right else "The answer is yes."

    return answer


@dataclass
class Served:
    server: BatchServer
    url: str
    """``http://127.0.0.1:PORT`` (the OpenAI API is under ``/v1``)."""


@pytest.fixture
def batch_api() -> Iterator[Served]:
    model = ReasoningServer("reasoning_content", mixed_answers(), usage=USAGE)
    server = BatchServer(model)
    with serve_batches_in_thread(server) as url:
        yield Served(server, url)
