"""``--model-option KEY=VALUE`` settings of in-process backends: typed values, and which ones change outputs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from structbench.errors import UsageError


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
