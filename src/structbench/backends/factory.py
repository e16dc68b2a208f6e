"""Build a backend from ``--model BACKEND[:NAME]`` and the run's connection settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from structbench.backends.base import Backend
from structbench.errors import UsageError
from structbench.registry import Registry

DEFAULT_MAX_REPLY_BYTES = 16 * 2**20
"""16 MiB: many times a long completion with log-probabilities, yet a bound on memory and disk."""
DEFAULT_TIMEOUT = 600.0
"""Seconds a request may take (``--timeout``), as the OpenAI Python client's default: an API answers well within
it, and so does a small local server writing a few thousand tokens on a CPU (a 270M model on two cores writes
4,096 tokens in about four minutes), where two minutes cut such replies off and wasted them."""


@dataclass(frozen=True)
class BackendSpec:
    """Everything needed to construct a backend; ``api_key_env`` names a variable, never holds a key."""

    backend: str
    name: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = 6
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    """Largest HTTP reply body read; a larger one is an error (``--max-reply-mb``)."""
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, model: str, **kwargs: object) -> BackendSpec:
        """Split ``BACKEND[:NAME]``; the name may itself contain colons (``openai:org/model:tag``)."""
        backend, _, name = model.partition(":")
        if not backend:
            raise UsageError(f"--model {model!r}: expected BACKEND[:NAME], e.g. openai:gpt-4o-mini")
        return cls(backend=backend, name=name or None, **kwargs)  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        """How results name the model: ``backend:name``."""
        return f"{self.backend}:{self.name}" if self.name else self.backend


BackendFactory = Callable[[BackendSpec], Backend]

BACKENDS: Registry[BackendFactory] = Registry("backend")
BACKENDS.register("openai", "structbench.backends.openai_compat:from_spec")
BACKENDS.register("anthropic", "structbench.backends.anthropic:from_spec")
BACKENDS.register("llamacpp", "structbench.backends.llamacpp:from_spec")
BACKENDS.register("hf", "structbench.backends.hf:from_spec")
BACKENDS.register("vllm", "structbench.backends.vllm_offline:from_spec")
BACKENDS.register("mock", "structbench.backends.mock:from_spec")
BACKENDS.register("oracle", "structbench.backends.oracle:from_spec")


def make_backend(spec: BackendSpec) -> Backend:
    """Construct the backend ``spec`` names; a ``--model-option`` it does not take is a usage error."""
    backend = BACKENDS.get(spec.backend)(spec)
    if backend.model_options is None:
        return backend
    unknown = sorted(set(spec.options) - set(backend.model_options))
    if unknown:
        known = ", ".join(backend.model_options) or "none"
        raise UsageError(f"--model-option {unknown[0]}: not an option of the {spec.backend} backend (known: {known})")
    return backend
