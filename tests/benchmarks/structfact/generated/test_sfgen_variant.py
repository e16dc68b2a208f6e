"""``structfact:generated`` as a user runs it: options, the oracle through every strategy and option map,
the release-format export, saved sets re-checked on loading, and the command line."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.structfact.structfact_helpers import oracle_generate
from structbench.benchmarks.structfact import StructFact
from structbench.benchmarks.structfact.options import OPTION_MAPS
from structbench.core.errors import DataError, UsageError
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.testing.cli import Invocation, invoke

OFFLINE = DataContext(offline=True)


def load(**options: Any) -> list[Sample]:
    return list(StructFact(options).load("generated", OFFLINE, seed=0, limit=None))


def oracle_scores(bench: StructFact, samples: list[Sample]) -> dict[str, float]:
    async def every() -> dict[str, float]:
        out = {}
        for name, strategy in bench.strategies().items():
            scored = []
            for sample in samples:
                attempt = await strategy.run(sample, oracle_generate(bench, sample))
                scored.append(bench.score(sample, attempt, bench.strategy(name)))
            out[name] = bench.aggregate(scored)[bench.headline]
        return out

    return asyncio.run(every())


@pytest.fixture(scope="module")
def atlas_samples(atlas: Path) -> list[Sample]:
    return load(tables=str(atlas), per_task=12, label_mix="balanced")


@pytest.mark.parametrize("option_map", range(len(OPTION_MAPS)))
def test_oracle_scores_one_through_every_strategy_and_option_map(
    atlas_samples: list[Sample], option_map: int
) -> None:
    bench = StructFact({"option_map": option_map})
    assert set(oracle_scores(bench, atlas_samples).values()) == {1.0}
    assert {s.gold.label for s in atlas_samples} == {"YES", "NO", "NOT SURE ENOUGH"}  # type: ignore[union-attr]


def test_samples_carry_the_breakdown_keys(atlas_samples: list[Sample]) -> None:
    assert "difficulty" in StructFact.breakdown_keys
    assert all(s.variant == "generated" and s.meta["source"] == "csv/atlas" for s in atlas_samples)
    assert len({s.meta["difficulty"] for s in atlas_samples}) >= 10
    assert atlas_samples[0].id == "arith-00000" and atlas_samples[1].id == "spacetime-00000"


def test_generation_options_belong_to_the_generated_variant(atlas: Path) -> None:
    with pytest.raises(UsageError, match="per_task apply only to structfact:generated"):
        StructFact({"per_task": 3}).load("demo", OFFLINE, seed=0, limit=None)
    with pytest.raises(UsageError, match="label_mix"):
        StructFact({"label_mix": "unknown"})
    with pytest.raises(DataError, match="no such file or folder"):
        load(tables=str(atlas / "missing"))


def test_tables_without_named_rows_are_refused(tmp_path: Path) -> None:
    (tmp_path / "numbers.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    with pytest.raises(DataError, match="no question can be made from these tables"):
        load(tables=str(tmp_path))


def test_export_and_reload_a_checked_set(atlas: Path, tmp_path: Path) -> None:
    out = tmp_path / "set" / "atlas.json"
    args = ["--tables", str(atlas), "--per-task", "6", "--label-mix", "balanced", "--seed", "4", "--out", str(out)]
    done = invoke("generate", "structfact", *args)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == f"wrote 30 questions to {out}", done.stderr
    records = json.loads(out.read_text(encoding="utf-8"))
    assert len(records) == 30 and not list(out.parent.glob(".*part"))
    reloaded = load(questions_file=str(out))
    assert [s.id for s in reloaded] == [r["ID"] for r in records]
    assert [s.question for s in reloaded] == [r["QUESTION"] for r in records]
    full = StructFact({"full_path": str(out)}).load("full", OFFLINE, seed=0, limit=None)
    assert [s.gold for s in full] == [s.gold for s in reloaded]
    with pytest.raises(UsageError, match="cannot be used with questions_file=FILE"):
        load(questions_file=str(out), per_task=3)


def test_a_task_that_came_out_short_is_one_note(atlas: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
                                               ) -> None:
    """``generate structfact`` printed each task's counts without what was asked: a task that came out short (here
    its evidence over a 90-token budget) was a bare logged warning without why, beside the counts on stdout."""
    out = tmp_path / "atlas.json"
    done = invoke("generate", "structfact", "--tables", str(atlas), "--per-task", "10", "--max-evidence-tokens", "90",
                  "--out", str(out))
    assert done.returncode == 0, done.stderr
    made = Counter(r["CHALLENGE"] for r in json.loads(out.read_text(encoding="utf-8")))
    assert made == {"Arithmetic Calculation": 4, "Spatiotemporal Cognition": 10, "Multi-hop Reasoning": 10,
                    "Composition Understanding": 10, "Combining Structural and Unstructural": 9}
    assert done.stderr.splitlines() == [
        "note: task Arithmetic Calculation: 4 of 10 questions: for 6 (3 YES, 3 NO) none of 200 draws made one: 21 "
        "drafted no claim for the label, 1,179 had evidence over the 90-token budget (--max-evidence-tokens)",
        "note: task Combining Structural and Unstructural: 9 of 10 questions: for 1 (1 YES) none of 200 draws made "
        "one: 200 had evidence over the 90-token budget (--max-evidence-tokens)",
    ]
    assert done.stdout.splitlines()[-1] == f"wrote 43 questions to {out}"
    with caplog.at_level("WARNING", logger="structbench.benchmarks.structfact.generated.generator"):
        samples = load(tables=str(atlas), per_task=10, max_evidence_tokens=90)
    assert len(samples) == 43
    notes = [f"structfact:generated: {line.removeprefix('note: ')}" for line in done.stderr.splitlines()]
    assert [r.getMessage() for r in caplog.records] == notes


def test_a_task_the_tables_cannot_ask_is_one_note(tmp_path: Path) -> None:
    """Tables without dates or places: Spatiotemporal Cognition is left out, in a note like a short task's."""
    names = ["France", "Germany", "Japan", "Brazil", "Kenya"]
    rows = "".join(f"{n},{n[:3].upper()},{i * 17 + 5},{i * 101 + 7}\n" for i, n in enumerate(names))
    (tmp_path / "t.csv").write_text("name,code,population,area\n" + rows, encoding="utf-8")
    out = tmp_path / "o.json"
    done = invoke("generate", "structfact", "--tables", str(tmp_path), "--per-task", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "note: task Spatiotemporal Cognition: 0 of 3 questions: these tables support no such question; the task is "
        "left out"
    ]
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 12


def test_a_large_set_over_one_small_table_has_no_repeated_question(tmp_path: Path) -> None:
    """``generate structfact --per-task 300`` over a five-row table wrote 1,200 records of which 889 were distinct
    (the same question and evidence under two ids); the run's samples likewise. Now every record is distinct."""
    rows = "".join(f"{n},{n[:3].upper()},{i * 17 + 5}\n" for i, n in enumerate(["France", "Germany", "Japan",
                                                                             "Brazil", "Kenya"]))
    (tmp_path / "t.csv").write_text("name,code,population\n" + rows, encoding="utf-8")
    out = tmp_path / "o.json"
    done = invoke("generate", "structfact", "--tables", str(tmp_path), "--per-task", "300", "--out", str(out))
    assert done.returncode == 0, done.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert len(written) == len({(r["QUESTION"], tuple(r["EVIDENCE"])) for r in written}) == 1200
    samples = load(tables=str(tmp_path), per_task=300)
    assert [s.id for s in samples] == [r["ID"] for r in written]
    assert len({s.model_dump_json(include={"question", "evidence", "gold"}) for s in samples}) == 1200


def test_a_tampered_set_is_refused(atlas: Path, tmp_path: Path) -> None:
    out = tmp_path / "atlas.json"
    done = invoke("generate", "structfact", "--tables", str(atlas), "--per-task", "4", "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = json.loads(out.read_text(encoding="utf-8"))
    flip = {"YES": "NO", "NO": "YES", "NOT SURE ENOUGH": "YES"}
    records[2]["LABEL"] = flip[records[2]["LABEL"]]
    out.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DataError, match=r"record 2: LABEL is .* but the evidence and QUERY give"):
        load(questions_file=str(out))
    del records[2]["QUERY"]
    out.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DataError, match="record 2: missing field QUERY"):
        load(questions_file=str(out))
    records[2]["QUERY"] = {"op": "compare", "left": {"op": "nope"}}
    out.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DataError, match="record 2: field QUERY"):
        load(questions_file=str(out))


def test_export_errors_exit_with_the_documented_codes(atlas: Path, tmp_path: Path) -> None:
    missing = invoke("generate", "structfact", "--tables", str(tmp_path / "none"), "--out", str(tmp_path / "x.json"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: tables="), missing.stderr
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be", encoding="utf-8")
    code = invoke("generate", "structfact", "--tables", str(atlas), "--per-task", "2", "--out", str(blocked / "x.json"))
    assert code.returncode == 2, code.stderr  # a path that cannot name a file (a file where a folder is needed)
    assert code.stderr.strip().endswith("blocked is a file, not a folder")
    assert not (blocked.parent / "x.json").exists()
    full = tmp_path / "full"  # a full disk: 5
    full.symlink_to("/dev/full")
    written = invoke("generate", "structfact", "--tables", str(atlas), "--per-task", "2", "--out", str(full))
    assert written.returncode == 5, written.stderr


def _cli(tmp_path: Path, *args: str) -> Invocation:
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    return invoke(*args, env=env, cwd=tmp_path)


def test_command_line_run_and_bad_tables(atlas: Path, tmp_path: Path) -> None:
    proc = _cli(tmp_path, "run", "-m", "oracle", "-b", "structfact:generated", "-s", "zero_shot,shuffled",
                "-o", f"tables={atlas}", "-o", "per_task=5", "--no-cache", "--out", "r")
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text(encoding="utf-8"))
    assert [r["headline"]["value"] for r in metrics["results"]] == [1.0, 1.0]
    assert set(metrics["results"][0]["breakdowns"]) >= {"task", "difficulty", "source", "structure"}
    bad = _cli(tmp_path, "run", "-m", "oracle", "-b", "structfact:generated", "-o", f"tables={tmp_path / 'nope'}",
               "--no-cache", "--out", "r2")
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "error:" in bad.stderr
    assert not (tmp_path / "r2" / "metrics.json").exists()


@pytest.mark.shared
def test_default_tables_are_rfqa(shared_data: DataContext) -> None:
    samples = list(StructFact({"per_task": 3}).load("generated", shared_data, seed=0, limit=None))
    assert len(samples) == 15
    assert all(s.meta["source"].startswith("rfqa/") for s in samples)
