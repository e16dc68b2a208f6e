"""``--model-option KEY=VALUE`` settings of in-process backends: typed values, and which ones change outputs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from structbench.backends import checkpoints
from structbench.backends.checkpoints import Checkpoint
from structbench.backends.local_prompts import Truncate
from structbench.core.errors import UsageError


def typed(options: Mapping[str, str]) -> dict[str, Any]:
    """Values as JSON where they parse (``8``, ``0.5``, ``true``, ``{"k": 1}``), else the text itself."""
    out: dict[str, Any] = {}
    for key, text in options.items():
        try:
            out[key] = json.loads(text)
        except ValueError:
            out[key] = text
    return out


def pop(args: dict[str, Any], key: str, default: Any, kind: type | tuple[type, ...], backend: str) -> Any:
    """Remove ``key`` from ``args`` and check its type; a wrong type is a usage error naming the argument."""
    value = args.pop(key, default)
    if value is not default and not isinstance(value, kind):
        raise UsageError(f"--model-option {key}={value!r}: not valid for the {backend} backend")
    return value


def settings_identity(settings: Mapping[str, Any], execution_only: Iterable[str]) -> str:
    """``k=v;...`` over the settings that can change outputs (sorted, canonical JSON values)."""
    skip = set(execution_only)
    return ";".join(
        f"{key}={json.dumps(settings[key], sort_keys=True, default=str)}"
        for key in sorted(settings)
        if key not in skip and settings[key] is not None
    )


@dataclass
class LocalSettings:
    """The settings both in-process backends (``hf``, ``vllm``) take; each backend's subclass adds its own and
    keeps the options it does not know in one field (``PASSTHROUGH``) for its loader."""

    truncate: Truncate = "error"
    seed: int = 0
    revision: str | None = None
    download: bool = False

    BACKEND: ClassVar[str]
    """The backend's name, as ``--model BACKEND:MODEL`` and error messages spell it."""
    EXECUTION_ONLY: ClassVar[tuple[str, ...]]
    """Settings that place or schedule the model without changing what it computes; not in the cache key."""
    PASSTHROUGH: ClassVar[str]
    """The field holding the remaining options, passed on as they are (to ``from_pretrained``, vLLM's engine)."""

    @classmethod
    def pop_shared(cls, args: dict[str, Any]) -> dict[str, Any]:
        """Remove the shared settings from typed ``args``: their checked values by field name."""
        shared = {
            "truncate": pop(args, "truncate", "error", str, cls.BACKEND),
            "seed": pop(args, "seed", 0, int, cls.BACKEND),
            "revision": pop(args, "revision", None, str, cls.BACKEND),
            "download": pop(args, "download", False, bool, cls.BACKEND),
        }
        if shared["truncate"] not in ("error", "left"):
            raise UsageError(f"--model-option truncate={shared['truncate']}: expected error or left")
        return shared

    def identity(self) -> str:
        """The settings that can change outputs (passed-on options included), for the cache key."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name != self.PASSTHROUGH}
        return settings_identity(own | getattr(self, self.PASSTHROUGH), self.EXECUTION_ONLY)

    def base_url(self, checkpoint: Checkpoint) -> str:
        """The backend's identity: the checkpoint's and these settings'."""
        return ";".join(s for s in (checkpoint.identity(), self.identity()) if s)

    def resolve(self, name: str) -> Checkpoint:
        """The checkpoint ``--model BACKEND:name`` denotes (a hub id at ``revision``, downloaded if ``download``)."""
        return checkpoints.resolve(name, backend=self.BACKEND, download=self.download, revision=self.revision)
