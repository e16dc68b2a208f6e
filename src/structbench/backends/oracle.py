"""The oracle: replies with the gold answer in the benchmark's expected format.

It reads the gold from the sample, not from the prompt, so a run against it reaching the maximum score
proves parsing, scoring and the run's bookkeeping, not prompt building (the prompt snapshot tests pin
the prompts). Anything short of the maximum is a bug in that pipeline.
"""

from __future__ import annotations

from structbench.backends.base import Backend, Choice, Request, Response
from structbench.backends.current import current_sample
from structbench.backends.factory import BackendSpec


class OracleBackend(Backend):
    """Asks the current sample's benchmark what a perfect reply to the request is."""

    backend = "oracle"
    model = "oracle"
    cacheable = False
    forkable = True
    supports_choices = True
    """Its replies are the gold answers, which are among the choices."""
    title = "the oracle (the gold answers: a check of parsing and scoring)"

    async def generate(self, request: Request) -> Response:
        try:
            sample = current_sample.get()
        except LookupError:
            raise RuntimeError("the oracle backend only answers inside a benchmark run") from None
        text = sample.oracle(request)
        return Response(choices=tuple(Choice(text=text) for _ in range(request.params.n)))


def from_spec(spec: BackendSpec) -> Backend:
    return OracleBackend()
