"""Write a generated set to a file (``structbench generate structfact``), and say what it holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.generated.generator import BUDGET, LABEL_MIXES
from structbench.benchmarks.structfact.generated.options import MAX_PER_TASK
from structbench.benchmarks.structfact.generated.release import write_release
from structbench.benchmarks.structfact.generated.variant import generate_set
from structbench.benchmarks.structfact.loader import LABELS
from structbench.core.bounds import at_most
from structbench.core.errors import StorageError, UsageError
from structbench.data.datasets import DataContext


def write_set(
    out: Path,
    *,
    tables: str = "rfqa",
    per_task: int = 200,
    label_mix: str = "paper",
    seed: int = 0,
    data_dir: Path | None = None,
    offline: bool = False,
    counter_spec: str = "regex",
    budget: int | None = None,
    note: Callable[[str], None] | None = None,
) -> list[str]:
    """Generate the set and write it whole to ``out``; the lines that say what it holds (per task, per label). A task
    that got fewer than ``per_task`` questions is one line to ``note`` (``generator.shortfall``)."""
    at_most("--per-task", per_task, MAX_PER_TASK)
    if label_mix not in LABEL_MIXES:
        raise UsageError(f"--label-mix {label_mix!r}: must be one of {', '.join(sorted(LABEL_MIXES))}")
    questions = generate_set(
        tables,
        DataContext.from_env(str(data_dir) if data_dir else None, offline=offline),
        per_task=per_task,
        label_mix=label_mix,
        seed=seed,
        counter=token_counter(counter_spec),
        budget=budget or BUDGET,
        note=note,
    )
    try:
        write_release([q.record() for q in questions], out)
    except OSError as err:
        raise StorageError(f"{out}: cannot write: {err.strerror or err}") from None
    counts = Counter((q.task, q.label) for q in questions)
    lines = [f"{task}: " + ", ".join(f"{counts[task, label]} {label}" for label in LABELS)
             for task in dict.fromkeys(q.task for q in questions)]
    return [*lines, f"wrote {len(questions)} questions to {out}"]
