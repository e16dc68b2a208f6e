"""Pydantic models built from fields already known to be valid, without validating them again.

The request path makes several small models per sample (each call's usage, their sums, the record itself) from data
the harness has checked already: a reply's token counts parsed as integers, a record assembled field by field.
Validation, or ``model_construct``, costs more there than the work around it; ``trusted`` gives the same object.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_set = object.__setattr__


def trusted(cls: type[M], fields: dict[str, Any]) -> M:
    """``cls(**fields)`` without validation: ``fields`` must hold valid values, in the fields' own types (no coercion
    happens), and ``cls`` may have no private attributes nor extra fields. Equal to what ``cls.model_construct
    (**fields)`` makes, at a small part of its cost when ``fields`` names every field (``fields`` becomes the model's
    own); one that leaves a field out goes through ``model_construct``, which fills in the default."""
    if len(fields) != len(cls.__pydantic_fields__):
        return cls.model_construct(**fields)
    model = _new(cls)
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", set(fields))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
