"""Model backends behind one async interface, found by name in ``BACKENDS``."""

from __future__ import annotations

from structbench.backends.base import (
    Backend,
    BackendError,
    Choice,
    GenerationParams,
    Message,
    Request,
    Response,
    TokenLogprob,
    cache_key,
)
from structbench.backends.factory import BACKENDS, BackendSpec, make_backend

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "BackendSpec",
    "Choice",
    "GenerationParams",
    "Message",
    "Request",
    "Response",
    "TokenLogprob",
    "cache_key",
    "make_backend",
]
