"""``structbench generate tablebench``: seeded, every subtype and chart type, read back with --data-dir; the
synthetic release of ``tests/synthetic/tablebench`` is lines of its output."""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks.tablebench.generate import items
from structbench.benchmarks.tablebench.source import INSTRUCTION_FILES, QUESTIONS_FILE
from structbench.benchmarks.tablebench.taxonomy import CHART_TYPES, SUBTYPES
from structbench.testing.cli import invoke

SYNTHETIC = Path(__file__).resolve().parents[2] / "synthetic" / "tablebench"


def test_every_subtype_and_chart_type_and_the_same_set_for_a_seed() -> None:
    drawn = items(0)
    assert {(i.qtype, i.qsubtype) for i in drawn} == {(t, s) for t, subs in SUBTYPES.items() for s in subs}
    assert {i.chart_type for i in drawn if i.chart_type} == set(CHART_TYPES)
    assert drawn == items(0) and drawn != items(1)
    assert len(items(0, size=3)) == 3 * len(drawn)


def test_the_command_writes_the_hub_layout(tmp_path: Path) -> None:
    done = invoke("generate", "tablebench", "--out", str(tmp_path), "--seed", "0")
    assert done.returncode == 0, done.stderr
    names = [QUESTIONS_FILE, *INSTRUCTION_FILES.values()]
    assert done.stdout.splitlines() == [f"wrote 25 questions to {tmp_path / 'tablebench' / n}" for n in names]
    for name in names:  # the synthetic release is lines 1, 10 and 25 of seed 0
        written = (tmp_path / "tablebench" / name).read_text().splitlines()
        assert (SYNTHETIC / name).read_text().splitlines() == [written[0], written[9], written[24]], name
    run = invoke("run", "-m", "oracle", "--bench", "tablebench", "--strategy", "tcot,scot", "--data-dir",
                            str(tmp_path), "--offline", "--no-cache", "--out", str(tmp_path / "run"), "--sample", "6")
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| tablebench | test |")]
    assert len(rows) == 2 and all("| overall | 1.0000 |" in row for row in rows), run.stdout


def test_a_negative_seed_draws_its_own_set_and_a_failed_write_leaves_the_last_set_whole(tmp_path: Path) -> None:
    """``random.Random`` takes an int's absolute value: -1 drew seed 1's set. The five files were written one by one,
    so a write that failed partway left a set mixed from two seeds."""
    assert items(-1) != items(1) and items(-1) == items(-1)
    assert invoke("generate", "tablebench", "--out", str(tmp_path), "--seed", "0").returncode == 0
    folder = tmp_path / "tablebench"
    before = {n: (folder / n).read_bytes() for n in [QUESTIONS_FILE, *INSTRUCTION_FILES.values()]}
    last = list(before)[-1]
    (folder / last).unlink()
    (folder / last).mkdir()  # a folder in the way of the last file
    failed = invoke("generate", "tablebench", "--out", str(tmp_path), "--seed", "1")
    assert failed.returncode == 2, failed.stderr
    assert {n: (folder / n).read_bytes() for n in before if n != last} == {n: b for n, b in before.items() if n != last}
