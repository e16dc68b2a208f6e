"""A scriptable, deterministic backend for tests and dry runs.

Script rules are tried in order: the first whose ``match`` regex is found in the prompt (the chat
messages joined by newlines) gives the reply; otherwise ``default``. ``--model mock:FILE`` reads the
rules from a JSON file ``{"rules": [{"match": "...", "reply": "..."}], "default": "..."}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from structbench.backends.base import Backend, Request, Response, TokenLogprob, reply_choice
from structbench.backends.factory import BackendSpec
from structbench.core.errors import DataError


@dataclass(frozen=True)
class Rule:
    match: str
    reply: str


def prompt_text(request: Request) -> str:
    """The request's text: the prompt, or the chat messages' contents joined by newlines."""
    if request.messages is not None:
        return "\n".join(m.content for m in request.messages)
    return request.prompt or ""


class MockBackend(Backend):
    """Replies by rule, by a Python function, or with a fixed default; records every request it gets."""

    backend = "mock"
    supports_logprobs = True
    forkable = True
    supports_choices = True
    """It replies as scripted, whatever the choices: scripts for constrained requests reply with a choice."""

    def __init__(
        self,
        rules: list[Rule] | None = None,
        default: str = "",
        reply: Callable[[Request], str] | None = None,
        model: str = "mock",
        latency: float = 0.0,
    ) -> None:
        self.rules = [(re.compile(r.match), r.reply) for r in rules or []]
        self.default = default
        self.reply = reply
        self.model = model
        self.latency = latency
        self.calls: list[Request] = []

    def _text(self, request: Request) -> str:
        if self.reply is not None:
            return self.reply(request)
        text = prompt_text(request)
        for pattern, reply in self.rules:
            if pattern.search(text):
                return reply
        return self.default

    async def generate(self, request: Request) -> Response:
        self.calls.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        text = self._text(request)
        logprobs = (TokenLogprob(token=text[:1], logprob=-0.1),) if request.params.logprobs and text else None
        choice = reply_choice(text, request.params, logprobs=logprobs)  # a scripted thought is kept apart too
        choices = tuple(choice for _ in range(request.params.n))
        return Response(choices=choices, prompt_tokens=len(prompt_text(request).split()))


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        return MockBackend()
    path = Path(spec.name)
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        rules = [Rule(**r) for r in data.get("rules", [])]
    except (OSError, ValueError, TypeError) as err:
        raise DataError(f"mock script {path}: {err}") from err
    backend = MockBackend(rules=rules, default=str(data.get("default", "")), model=f"mock:{path.name}")
    backend.base_url = f"sha256:{hashlib.sha256(raw).hexdigest()[:16]}"  # an edited script is another model
    return backend
