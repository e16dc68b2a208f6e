"""``structbench generate``'s size options and ``run``'s options of the same sizes: a value past the benchmark's bound
(a typo's extra zeros, ``10**12``) is refused in one line naming the option, with exit 2 and nothing written, where
it filled the memory or ran for days."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.benchmarks.databench.generator import MAX_DATASETS, MAX_ROWS
from structbench.benchmarks.rfqa.generator import MAX_ATTRIBUTES, MAX_GOLD_ROWS, MAX_PER_CATEGORY
from structbench.benchmarks.skabench.build import MAX_PATIENCE, MAX_PER_CALL, MAX_SYNTHESIZED_ROWS
from structbench.benchmarks.skabench.builder import MAX_KEPT_ROWS, MAX_QUESTIONS
from structbench.benchmarks.structfact.generated.options import MAX_PER_TASK
from structbench.benchmarks.tablebench.generate import MAX_SIZE
from structbench.testing.cli import invoke

SKA = ("skabench", "--csv", ".", "--out", "s.jsonl")
SYNTHESIS = (*SKA, "--synthesize-model", "mock")
GENERATE = [
    (("structfact", "--out", "f.json"), "--per-task", MAX_PER_TASK),
    (("rfqa", "tables", "--out", "p.jsonl"), "--per-category", MAX_PER_CATEGORY),
    (("rfqa", "tables", "--out", "p.jsonl"), "--max-attributes", MAX_ATTRIBUTES),
    (("rfqa", "tables", "--out", "p.jsonl"), "--max-rows", MAX_GOLD_ROWS),
    (("databench", "--out", "d"), "--datasets", MAX_DATASETS),
    (("databench", "--out", "d"), "--rows", MAX_ROWS),
    (("tablebench", "--out", "t"), "--size", MAX_SIZE),
    (SKA, "--questions", MAX_QUESTIONS),
    (SKA, "--max-rows", MAX_KEPT_ROWS),
    (SYNTHESIS, "--synthesize-rows", MAX_SYNTHESIZED_ROWS),
    (SYNTHESIS, "--per-call", MAX_PER_CALL),
    (SYNTHESIS, "--patience", MAX_PATIENCE),
]


@pytest.mark.parametrize(("args", "flag", "limit"), GENERATE, ids=[f"{a[0]}{f}" for a, f, _ in GENERATE])
@pytest.mark.parametrize("over", [1, 10**12])
def test_generate_refuses_a_size_past_its_bound(tmp_path: Path, args: tuple[str, ...], flag: str, limit: int,
                                                over: int) -> None:
    value = limit + over
    proc = invoke("generate", *args, flag, str(value), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: {flag} {value}: at most {limit:,} (a bound far above any real set)"]
    assert list(tmp_path.iterdir()) == []  # nothing written, no folder made


RUN = [
    ("structfact:generated", "per_task", MAX_PER_TASK, ()),
    ("rfqa:generated", "per_category", MAX_PER_CATEGORY, ("path=tables",)),
    ("skabench:csv", "questions", MAX_QUESTIONS, ("path=.",)),
    ("skabench:csv", "max_rows", MAX_KEPT_ROWS, ("path=.",)),
]


@pytest.mark.parametrize(("bench", "option", "limit", "others"), RUN, ids=[f"{b}-{o}" for b, o, _, _ in RUN])
def test_run_refuses_the_same_sizes_as_its_options(tmp_path: Path, bench: str, option: str, limit: int,
                                                   others: tuple[str, ...]) -> None:
    extra = [arg for other in others for arg in ("-o", other)]
    proc = invoke("run", "-m", "mock", "-b", bench, "-o", f"{option}={limit + 1}", *extra, "--out", "r",
                  cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    name = bench.split(":")[0]
    assert proc.stderr.splitlines() == [
        f"error: {name}: bad --option: {option}: Input should be less than or equal to {limit}"
    ]
    assert not (tmp_path / "r").exists()
