"""Inspect's entry point (``[project.entry-points.inspect_ai]``): registers ``structbench/<bench>`` for every
benchmark, plugins included."""

from structbench.benchmarks import BENCHMARKS
from structbench.core.plugins import warn_plugin
from structbench.inspect_tasks.tasks import task_factory

TASKS = {name: task_factory(name) for name, _ in BENCHMARKS.usable(warn_plugin)}

from structbench.inspect_tasks.provider import StructbenchModel  # noqa: E402  (registers structbench/BACKEND)

__all__ = ["TASKS", "StructbenchModel"]
