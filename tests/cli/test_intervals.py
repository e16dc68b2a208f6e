"""Honest intervals as a user meets them: ``structbench run`` against a scripted loopback model that is right on
every question of half the tables and wrong on the others, checked against a table-level percentile bootstrap
written here; ``--epochs 3`` killed with -9 and resumed without a repeated call."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import f1_score

from faults import child_pythonpath, serve
from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Benchmark
from structbench.data.datasets import DataContext
from structbench.data.sample import LabelGold, Sample
from structbench.runner.export import first_requests
from structbench.testing.cli import Invocation, invoke
from structbench.testing.openai_server import request_digest

TESTS = Path(__file__).resolve().parents[1]
"""A child process imports this checkout's structbench (not another one installed) and the test plugins."""
REFERENCE_RESAMPLES = 2000
TOLERANCE = 0.02
"""The issue's bar: each bound within 0.02 of the independent table-level bootstrap."""


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"),
                OPENAI_API_KEY="k")


def sb(tmp_path: Path, *args: str) -> Invocation:
    proc = invoke(*args, env=_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


def other_label(labels: Sequence[str], gold: str) -> str:
    """A wrong answer: the next label."""
    return labels[(labels.index(gold) + 1) % len(labels)]


def script(bench: Benchmark, samples: list[Sample], strategy: str, answers: Callable[[Sample], list[str]],
           path: Path) -> None:
    """The loopback server's replies: for each sample's request (by its last message), the oracle's reply for each
    label of ``answers(sample)`` (several: picked by the request's seed, one per epoch)."""
    requests = first_requests(bench.strategy(strategy), samples)
    replies: dict[str, list[str]] = {}
    for sample, request in zip(samples, requests, strict=True):
        assert request is not None and request.messages is not None
        texts = [bench.oracle(sample.model_copy(update={"gold": LabelGold(label=label)}), request)
                 for label in answers(sample)]
        key = request.messages[-1].content
        assert replies.setdefault(key, texts) == texts  # a prompt asked twice (SciTab has one) gets one script
    path.write_text(json.dumps(replies))


def half_right(samples: list[Sample], table_of: Callable[[Sample], str], labels: Sequence[str]) -> tuple[
        Callable[[Sample], list[str]], dict[str, bool]]:
    """Right on every question of every other table (in sorted order), wrong on all the others."""
    tables = sorted({table_of(s) for s in samples})
    right = {t: i % 2 == 0 for i, t in enumerate(tables)}

    def answers(sample: Sample) -> list[str]:
        assert isinstance(sample.gold, LabelGold)
        gold = sample.gold.label
        return [gold if right[table_of(sample)] else other_label(labels, gold)]

    return answers, right


def table_bootstrap(gold: list[str], pred: list[str], tables: list[str], labels: Sequence[str],
                    metric: Callable[[np.ndarray, np.ndarray], float]) -> tuple[float, float]:
    """The reference: a percentile bootstrap drawing whole tables with replacement (Python's own RNG), each
    resample scored by scikit-learn. ``metric`` gets the answers as codes: ``labels`` are 0, 1, 2 ..., any other
    answer the next codes (scikit-learn scores integer labels in a third of the time it takes on strings, with the
    same result)."""
    codes = {label: i for i, label in enumerate(dict.fromkeys([*labels, *gold, *pred]))}
    gold_codes, pred_codes = (np.array([codes[x] for x in column]) for column in (gold, pred))
    by_table: dict[str, list[int]] = {}
    for i, t in enumerate(tables):
        by_table.setdefault(t, []).append(i)
    names = sorted(by_table)
    rows = {t: np.array(by_table[t]) for t in names}
    rng = random.Random(20260101)
    values = []
    for _ in range(REFERENCE_RESAMPLES):
        picked = np.concatenate([rows[t] for t in rng.choices(names, k=len(names))])
        values.append(metric(gold_codes[picked], pred_codes[picked]))
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def class_f1(gold: np.ndarray, pred: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """F1 (``zero_division=0``) and support of classes ``0 .. classes-1`` from integer codes (``table_bootstrap``'s):
    ``2 tp / (predicted + support)``, as scikit-learn computes it."""
    size = max(classes, int(gold.max(initial=0)) + 1, int(pred.max(initial=0)) + 1)
    tp = np.bincount(gold[gold == pred], minlength=size)[:classes]
    support = np.bincount(gold, minlength=size)[:classes]
    total = np.bincount(pred, minlength=size)[:classes] + support
    return np.divide(2 * tp, total, out=np.zeros(classes), where=total > 0), support


def checked(fast: Callable[[Any, Any], float], reference: Callable[[Any, Any], float], first: int = 25
            ) -> Callable[[Any, Any], float]:
    """``fast`` (numpy, for the bootstrap's 2,000 resamples: scikit-learn took most of the test's time), asserted
    equal to scikit-learn's ``reference`` on the first ``first`` resamples it scores."""
    calls = iter(range(first))

    def metric(g: Any, p: Any) -> float:
        value = fast(g, p)
        if next(calls, None) is not None:
            assert value == pytest.approx(reference(g, p), abs=1e-12)
        return value

    return metric


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def headline(run_dir: Path) -> dict[str, Any]:
    result = json.loads((run_dir / "metrics.json").read_text())["results"][0]
    return dict(result["headline"])


def test_scitab_interval_resamples_its_208_tables(tmp_path: Path, shared_datasets: Path) -> None:
    bench = BENCHMARKS.get("scitab")()
    samples = bench.load("all", DataContext(data_dir=shared_datasets, offline=True), seed=0, limit=None)
    labels = ["supports", "refutes", "not enough info"]
    answers, right = half_right(samples, lambda s: str(s.meta["table_id"]), labels)
    script(bench, samples, "zero_shot", answers, tmp_path / "replies.json")
    with serve(tmp_path, "--replies", str(tmp_path / "replies.json")) as server:
        proc = sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "scitab", "--data-dir",
                  str(shared_datasets), "--out", "r", "--no-cache", "--no-progress", "-c", "16")
    h = headline(tmp_path / "r")
    assert (h["unit"], h["clusters"], h["resamples"], h["seed"]) == ("table", 208, 1000, 0)
    by_id = {s.id: s for s in samples}
    recs = records(tmp_path / "r")
    assert len(recs) == 1199 and all(r["error"] is None for r in recs)
    gold = [r["gold"] for r in recs]
    pred = [r["parsed"] for r in recs]
    tables = [str(by_id[r["id"]].meta["table_id"]) for r in recs]  # from the data, not from the records
    assert all((g == p) == right[t] for g, p, t in zip(gold, pred, tables, strict=True))

    def macro(g: Any, p: Any) -> float:  # the labels as strings, or as table_bootstrap's codes
        known = labels if isinstance(g, list) else list(range(len(labels)))
        return float(f1_score(g, p, labels=known, average="macro", zero_division=0))

    def fast_macro(g: np.ndarray, p: np.ndarray) -> float:
        return float(class_f1(g, p, len(labels))[0].mean())

    assert h["value"] == pytest.approx(macro(gold, pred))
    low, high = table_bootstrap(gold, pred, tables, labels, checked(fast_macro, macro))
    assert abs(h["ci_low"] - low) <= TOLERANCE and abs(h["ci_high"] - high) <= TOLERANCE, (h, low, high)
    # resampling claims as if independent is far too narrow here (the issue measured 3.2 times)
    alone = sb(tmp_path, "report", "r", "--resample", "sample").stdout
    shown = f"[{h['ci_low']:.4f}, {h['ci_high']:.4f}]"
    assert shown in proc.stdout and "208 tables" in proc.stdout  # the run's table names the unit
    report = sb(tmp_path, "report", "r").stdout
    assert shown in report and "208 tables" in report  # the report shows the stored interval, not another one
    assert shown not in alone and "1199 samples" in alone
    width = h["ci_high"] - h["ci_low"]
    narrow = next(line for line in alone.splitlines() if "1199 samples" in line)
    lo, hi = (float(x) for x in narrow.split("[", 1)[1].split("]", 1)[0].split(","))
    assert width > 2.5 * (hi - lo)


def test_generated_structfact_interval_resamples_its_tables(tmp_path: Path, shared_datasets: Path) -> None:
    options = {"per_task": "40"}
    bench = BENCHMARKS.get("structfact")(options)
    samples = list(bench.load("generated", DataContext(data_dir=shared_datasets, offline=True), seed=0, limit=None))
    labels = ["YES", "NO", "NOT SURE ENOUGH"]
    table_of: Callable[[Sample], str] = lambda s: str(s.extra["release"]["TABLE"])  # noqa: E731
    answers, _ = half_right(samples, table_of, labels)
    script(bench, samples, "zero_shot", answers, tmp_path / "replies.json")
    with serve(tmp_path, "--replies", str(tmp_path / "replies.json")) as server:
        sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "structfact:generated", "--option",
           "per_task=40", "--data-dir", str(shared_datasets), "--out", "r", "--no-cache", "--no-progress")
    h = headline(tmp_path / "r")
    tables = {table_of(s) for s in samples}
    assert (h["name"], h["unit"], h["clusters"]) == ("weighted_f1", "table", len(tables)) and len(tables) > 40
    by_id = {s.id: s for s in samples}
    recs = records(tmp_path / "r")
    gold = [r["gold"] for r in recs]
    pred = [r["parsed"] for r in recs]

    def weighted(g: Any, p: Any) -> float:
        return float(f1_score(g, p, average="weighted", zero_division=0))

    def fast_weighted(g: np.ndarray, p: np.ndarray) -> float:
        f1, support = class_f1(g, p, len(labels))
        return float((f1 * support).sum() / len(g))

    assert h["value"] == pytest.approx(weighted(gold, pred))
    low, high = table_bootstrap(gold, pred, [table_of(by_id[r["id"]]) for r in recs], labels,
                                checked(fast_weighted, weighted))
    assert abs(h["ci_low"] - low) <= TOLERANCE and abs(h["ci_high"] - high) <= TOLERANCE, (h, low, high)


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float = 120.0) -> bool:
    """SIGKILL ``proc`` once ``ready()`` holds; True when it was still running then (a real interruption)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(0.01)
    running = proc.poll() is None
    if running:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return running


def test_epochs_at_temperature_0_6_resume_after_kill_9_without_a_repeated_call(tmp_path: Path) -> None:
    """On the synthetic world's tables (``tables=synthetic``, no data to read): each of the three starts of the
    command read RelationalFactQA's tables for StructFact before its first call (about 25 CPU seconds each)."""
    empty = tmp_path / "no-data"
    empty.mkdir()
    bench = BENCHMARKS.get("structfact")({"per_task": "8", "tables": "synthetic"})
    samples = list(bench.load("generated", DataContext(data_dir=empty, offline=True), seed=0, limit=None))
    labels = ["YES", "NO", "NOT SURE ENOUGH"]

    def answers(sample: Sample) -> list[str]:  # half the questions answered differently in epoch 1 (seed 1)
        assert isinstance(sample.gold, LabelGold)
        gold = sample.gold.label
        return [gold, other_label(labels, gold), gold] if sample.id.endswith(("0", "2", "4", "6", "8")) else [gold]

    script(bench, samples, "zero_shot", answers, tmp_path / "replies.json")
    n = len(samples)
    args = ["run", "-m", "openai:m", "-b", "structfact:generated", "--option", "per_task=8", "--option",
            "tables=synthetic", "--epochs", "3", "--data-dir", str(empty), "--out", "r", "--no-progress",
            "-c", "4", "--workers", "1"]
    run_dir = tmp_path / "r"

    def digest(record: dict[str, Any]) -> str:  # the request a finished record made: its prompt, its epoch's seed
        return request_digest({"messages": record["prompt"], "seed": record["epoch"]})

    with serve(tmp_path, "--replies", str(tmp_path / "replies.json"), "--latency", "0.05") as server:
        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen([sys.executable, "-m", "structbench", *args, "--base-url", server.url],
                                    env=_env(tmp_path), cwd=tmp_path, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)

        assert _kill_when(start(), lambda: len(records(run_dir)) >= n)  # some of epoch 0 and 1 done
        done = {digest(r) for r in records(run_dir)}
        seen = len(server.answered())
        assert _kill_when(start(), lambda: len(server.answered()) >= seen + 8)
        again = set(server.answered()[seen:])
        assert again and not done & again  # nothing recorded was asked again
        sb(tmp_path, *args, "--base-url", server.url)
        answered = server.answered()
    recs = records(run_dir)
    assert sorted((r["id"], r["epoch"]) for r in recs) == sorted((s.id, e) for s in samples for e in range(3))
    assert len(set(answered)) == 3 * n  # every sample in every epoch: its own seed, so its own request
    assert len(answered) - len(set(answered)) <= 2 * 4  # repeats: only calls in flight at a kill
    assert {json.loads(json.dumps(r["epoch"])) for r in recs} == {0, 1, 2}
    result = json.loads((run_dir / "metrics.json").read_text())["results"][0]
    epochs = result["epochs"]
    assert epochs["count"] == 3 and epochs["outcomes"] == 3 * n and result["n"] == n
    assert epochs["values"][0] == epochs["values"][2] == 1.0 and epochs["values"][1] < 1.0
    varied = sum(s.id.endswith(("0", "2", "4", "6", "8")) for s in samples)
    assert epochs["agreement"] == pytest.approx(1 - varied / n)
    assert result["headline"]["value"] == pytest.approx(sum(epochs["values"]) / 3)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["epochs"] == 3 and len(manifest["sessions"]) == 3
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as conn:
        cached = [json.loads(row[0]) for row in conn.execute("SELECT request FROM responses")]
    assert len(cached) == 3 * n and {c["temperature"] for c in cached} == {0.6}  # StructFact samples at 0.6
    assert {(c["seed"], c.get("epoch", 0)) for c in cached} == {(0, 0), (1, 1), (2, 2)}  # the epoch keys the cache
