"""Benchmarks and backends from other distributions: entry points, with ``STRUCTBENCH_PLUGINS`` as an alias.

An installed distribution declares them in its ``pyproject.toml``::

    [project.entry-points."structbench.benchmarks"]
    toy2 = "toy2pkg:BENCHMARK"      # a Benchmark subclass; "toy2pkg" alone means its BENCHMARK

    [project.entry-points."structbench.backends"]
    echo = "echopkg:from_spec"      # (BackendSpec) -> Backend; "echopkg" alone means its from_spec

Registering reads only the distribution's metadata; the module is imported when the benchmark or backend is
first used, so an installed plugin costs nothing to a run that does not use it. The older way, modules named in
``STRUCTBENCH_PLUGINS`` (comma-separated) that register themselves when imported, still works: they are
imported with the benchmark registry.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib.machinery import PathFinder
from importlib.metadata import EntryPoints, entry_points
from typing import cast

BENCHMARK_GROUP = "structbench.benchmarks"
BACKEND_GROUP = "structbench.backends"
ENV = "STRUCTBENCH_PLUGINS"


@dataclass(frozen=True)
class Plugin:
    """One entry point of a group: the name it registers, its ``module:attr`` target and where it comes from."""

    name: str
    target: str
    distribution: str | None
    """The distribution that declares it (``None`` when its metadata does not say)."""
    version: str | None

    @property
    def origin(self) -> str:
        """``the entry point NAME of DIST VERSION``, for messages."""
        where = f" of {self.distribution} {self.version or ''}".rstrip() if self.distribution else ""
        return f"the entry point {self.name!r}{where}"


def plugins(group: str, default_attr: str) -> list[Plugin]:
    """The entry points of ``group`` in every installed distribution, by name; a target without ``:attr``
    means ``module:default_attr``."""
    found = []
    for ep in _installed_entry_points(group):
        module, _, attr = ep.value.partition(":")
        attr = attr.split("[", 1)[0].strip()  # extras ("[cuda]") say what the plugin needs, not where it is
        dist = ep.dist
        found.append(Plugin(
            name=ep.name,
            target=f"{module.strip()}:{attr or default_attr}",
            distribution=dist.metadata["Name"] if dist is not None else None,
            version=dist.version if dist is not None else None,
        ))
    return sorted(found, key=lambda p: (p.name, p.distribution or ""))


_warned: set[str] = set()


def warn_plugin(message: str) -> None:
    """Say once per process, on stderr, that a plugin is left out (it fails to load) or clashes: one broken plugin
    never stops a command that does not use it."""
    if message not in _warned:
        _warned.add(message)
        print(f"warning: {message}", file=sys.stderr, flush=True)
def _installed_entry_points(group: str) -> EntryPoints:
    """The entry points of ``group``, from one read of every installed distribution's metadata: a read takes 15-20 ms
    in an environment of a few hundred distributions, and benchmarks and backends both ask."""
    return _all_entry_points(tuple(sys.path)).select(group=group)


@lru_cache(maxsize=1)
def _all_entry_points(path: tuple[str, ...]) -> EntryPoints:
    """Every entry point of the distributions on ``path`` (``sys.path``: another path is read again); none, without
    parsing every distribution's metadata (30-40 ms of each start, issue 44), when no ``entry_points.txt`` on the
    path names a group of structbench's."""
    if _none_declared(path):
        return EntryPoints(())
    return cast(EntryPoints, entry_points())


def _none_declared(path: tuple[str, ...], groups: tuple[str, ...] = (BENCHMARK_GROUP, BACKEND_GROUP)) -> bool:
    """Whether no distribution on ``path`` can declare an entry point of ``groups``. False (read them all) when it
    cannot tell: a zip on the path, an unreadable file, or another finder of distributions than the path's."""
    declared = _declared_groups(path)
    return declared is not None and not declared.intersection(groups)


_SECTION = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]\s*$", re.MULTILINE)


def _declared_groups(path: tuple[str, ...]) -> frozenset[str] | None:
    """The entry-point groups the distributions on ``path`` declare; None where it cannot tell (another finder of
    distributions than the path's, a zip, an unreadable file)."""
    if any(getattr(finder, "find_distributions", None) is not None and not _searches_the_path(finder)
           for finder in sys.meta_path):
        return None
    return _groups_on(path)


@lru_cache(maxsize=1)
def _groups_on(path: tuple[str, ...]) -> frozenset[str] | None:
    """The groups the ``entry_points.txt`` of the metadata folders ``importlib.metadata`` finds on ``path``
    (``*.dist-info``, ``*.egg-info``, an ``.egg``'s ``EGG-INFO``) declare, read as text: about 9 ms for a few hundred
    distributions, against 30-40 ms to parse them all."""
    groups: set[str] = set()
    for root in path:
        try:
            children = os.listdir(root or ".")
        except FileNotFoundError:
            continue
        except OSError:
            return None
        egg = os.path.basename(root).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root or ".", child, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            except (OSError, ValueError):
                return None
            groups.update(_SECTION.findall(text))
    return frozenset(groups)


def skip_pydantic_plugin_scan() -> None:
    """Where no distribution declares a pydantic plugin (the ``pydantic`` entry-point group), say so to pydantic
    (``PYDANTIC_DISABLE_PLUGINS``) before it builds its first validator, which otherwise parses every
    distribution's metadata to find none: 45-70 ms of a command's start (issue 44). A value the user set stands;
    the command's child processes see the same environment, and so the same answer."""
    if "PYDANTIC_DISABLE_PLUGINS" not in os.environ and _none_declared(tuple(sys.path), ("pydantic",)):
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"


def _searches_the_path(finder: object) -> bool:
    """Whether ``finder`` finds distributions only in the metadata folders of the path, as this module's search
    does: the standard library's ``PathFinder``, or the ``importlib_metadata`` backport's ``MetadataPathFinder``,
    which that package puts on ``sys.meta_path`` when anything imports it (litellm, mlflow do; the same search)."""
    if finder is PathFinder:
        return True
    kind = finder if isinstance(finder, type) else type(finder)
    return kind.__name__ == "MetadataPathFinder" and kind.__module__.rpartition(".")[2] == "importlib_metadata"


def import_env_plugins() -> None:
    """Import the modules named in ``STRUCTBENCH_PLUGINS``; they register what they hold (a module already
    imported is not imported again). One that fails to import (or to register) is a warning naming it, and left
    out."""
    for module in filter(None, (m.strip() for m in os.environ.get(ENV, "").split(","))):
        try:
            importlib.import_module(module)
        except Exception as err:  # anyone's code: a missing module, an error in it, a name already registered
            warn_plugin(f"{ENV}: cannot import {module!r} ({type(err).__name__}: {err}); left out")
