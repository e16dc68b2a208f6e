"""``structbench generate databench``: seeded sets in the Hub's layout, every answer type, answers recomputed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from faults import child_pythonpath
from patience import patience
from structbench.benchmarks.databench.answers import SEMANTICS
from structbench.benchmarks.databench.generator import PER_TYPE, SAMPLE_ROWS, THEMES, make_table
from structbench.benchmarks.databench.source import ALL_FILE, DATA, NAME, QA_FILE, SAMPLE_FILE
from structbench.testing.cli import invoke


def _frames(root: Path) -> dict[str, list[pd.DataFrame]]:
    return {d.name: [pd.read_parquet(d / f) for f in (ALL_FILE, SAMPLE_FILE, QA_FILE)]
            for d in sorted((root / NAME / DATA).iterdir())}


def test_the_set_has_the_release_layout_and_every_answer_type(tmp_path: Path) -> None:
    done = invoke("generate", "databench", "--out", str(tmp_path), "--datasets", "5", "--rows", "80")
    assert done.returncode == 0, done.stderr
    assert f"wrote 100 questions in 5 datasets to {tmp_path / NAME}" in done.stdout
    frames = _frames(tmp_path)
    assert list(frames) == ["001_Orchards", "002_Lighthouses", "003_Ferries", "004_Bakeries", "005_Orchards"]
    for name, (whole, sample, qa) in frames.items():
        assert len(whole) == 80 and len(sample) == SAMPLE_ROWS and list(sample.columns) == list(whole.columns)
        merged = sample.merge(whole, how="left", indicator=True)
        assert (merged["_merge"] == "both").all()  # the sample's rows are rows of the table
        assert list(qa.columns) == ["question", "answer", "type", "columns_used", "column_types", "sample_answer",
                                    "dataset"]
        assert Counter(qa["type"]) == {t: PER_TYPE for t in SEMANTICS}
        assert qa["question"].is_unique and set(qa["dataset"]) == {name}
        assert {str(t) for t in whole.dtypes} >= {"category", "int64", "float64", "bool", "datetime64[us, UTC]"}


def test_answers_are_computed_over_the_whole_table_and_the_sample(tmp_path: Path) -> None:
    assert invoke("generate", "databench", "--out", str(tmp_path), "--datasets", "1").returncode == 0
    ((whole, sample, qa),) = _frames(tmp_path).values()
    asked = qa.set_index("question")
    count = asked.loc["How many orchards are there?"]
    assert (count["answer"], count["sample_answer"]) == (str(len(whole)), str(SAMPLE_ROWS))
    mean = asked.loc["What is the average yield (tonnes)?"]
    assert float(mean["answer"]) == whole["yield (tonnes)"].mean()
    assert float(mean["sample_answer"]) == sample["yield (tonnes)"].mean()
    assert whole["yield (tonnes)"].isna().any()  # a few values are missing, as in the release's tables


def test_the_same_seed_writes_the_same_set(tmp_path: Path) -> None:
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        assert invoke("generate", "databench", "--out", str(tmp_path / name), "--seed", seed).returncode == 0
    a, b, c = (_frames(tmp_path / n) for n in "abc")
    assert all(x.equals(y) for k in a for x, y in zip(a[k], b[k], strict=True))
    assert not all(x.equals(y) for k in a for x, y in zip(a[k], c[k], strict=True))


def test_an_existing_set_is_kept_and_bad_sizes_are_usage_errors(tmp_path: Path) -> None:
    assert invoke("generate", "databench", "--out", str(tmp_path), "--datasets", "1").returncode == 0
    again = invoke("generate", "databench", "--out", str(tmp_path), "--datasets", "1")
    assert again.returncode == 2 and "already exists" in again.stderr
    small = invoke("generate", "databench", "--out", str(tmp_path / "x"), "--rows", "10")
    assert small.returncode == 2 and not (tmp_path / "x" / NAME).exists()


def _killed_midway(out: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """``generate databench`` into ``out``, sent ``signum`` once its staging folder holds a dataset."""
    proc = subprocess.Popen([sys.executable, "-m", "structbench", "generate", "databench", "--out", str(out),
                             "--datasets", "5000"], env=dict(os.environ, PYTHONPATH=child_pythonpath()),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + patience(120)
    while not any(out.glob(f".{NAME}.*/{DATA}/*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "it ended before it was killed"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=patience(60))
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_a_killed_generate_leaves_no_draft_for_long(tmp_path: Path) -> None:
    """SIGTERM (as Ctrl-C) removes the staging folder on the way out; the one a SIGKILL left beside the output is
    removed by the next generate into the same place, which writes the set whole."""
    terminated = _killed_midway(tmp_path / "t", signal.SIGTERM)
    assert terminated.returncode == 143 and terminated.stderr.strip() == "terminated (SIGTERM)"
    assert list((tmp_path / "t").iterdir()) == []
    killed = _killed_midway(tmp_path / "k", signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL
    (draft,) = (tmp_path / "k").iterdir()
    assert draft.name.startswith(f".{NAME}.") and not (tmp_path / "k" / NAME).exists()
    done = invoke("generate", "databench", "--out", str(tmp_path / "k"), "--datasets", "1")
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (tmp_path / "k").iterdir()] == [NAME]


def test_a_table_of_more_rows_than_three_syllables_can_name_is_made() -> None:
    """Names of two or three of 15 syllables run out near 3,500 rows, and measures of two decimals up to 500 near
    50,000: drawing distinct ones looped for ever (``--rows 5000`` never ended)."""
    table = make_table(THEMES[0], 60_000, random.Random(0))
    assert len(table) == 60_000 and table[THEMES[0].label].is_unique
    assert table[THEMES[0].measure].dropna().is_unique
