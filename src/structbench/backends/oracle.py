"""The oracle: replies with the gold answer in the benchmark's expected format.

Running a benchmark against it exercises prompt building, parsing and scoring end to end; anything
short of the maximum score is a bug in that pipeline.
"""

from __future__ import annotations

from structbench.backends.base import Backend, Choice, Request, Response
from structbench.backends.factory import BackendSpec


class OracleBackend(Backend):
    """Asks the current sample's benchmark what a perfect reply to the request is."""

    backend = "oracle"
    model = "oracle"
    cacheable = False

    async def generate(self, request: Request) -> Response:
        from structbench.benchmark import current_sample

        try:
            bench, sample = current_sample.get()
        except LookupError:
            raise RuntimeError("the oracle backend only answers inside a benchmark run") from None
        text = bench.oracle(sample, request)
        return Response(choices=tuple(Choice(text=text) for _ in range(request.params.n)))


def from_spec(spec: BackendSpec) -> Backend:
    return OracleBackend()
