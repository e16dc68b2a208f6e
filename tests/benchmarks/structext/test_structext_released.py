"""``scorer=released`` scores as the official ``Evaluation/get_evaluation_result.py`` with rouge 1.0.1 did: the
whole reply, the package's RougeL, and the samples whose scoring raises skipped (an empty reply; a
RecursionError in the package's LCS reconstruction at the depth the released script calls it).

The reference here is the released scorer itself, re-enacted on the package: its per-line ``try``/``except``
around ``Rouge().get_scores(gold, reply)`` run with as many frames left as the script has, the 0.75 cut, and
the mean over the lines that did not raise.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path

import pytest

from faults import serve
from structbench.backends.base import Choice, Request, Response
from structbench.benchmarks.structext.benchmark import StrucTextEval
from structbench.benchmarks.structext.metrics import RELEASED_FRAMES, EmptyText, TooDeep, rouge_l_parts, sentences
from structbench.contract.benchmark import AS_WRITTEN, Attempt, corrected_scored
from structbench.data.datasets import DataContext
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import compute_result
from structbench.testing.cli import invoke

Rouge = pytest.importorskip("rouge").Rouge

RELEASED_ROOM = 1000 - 7 - 1
"""Nested calls the released ``calculate_rouge_l`` can still make below itself: it is the 7th frame (module,
``fire.Fire``, ``_Fire``, ``_CallAndUpdateTrace``, ``judge``, ``judge_detail``, ``calculate_rouge_l``) under
Python's default limit of 1,000 (``_room`` counts the calls below the first)."""


def _room(depth: int = 0) -> int:
    """How many calls can nest below the caller's frame before ``RecursionError`` (C frames of pytest's
    plugins count too, so the room is measured, not derived from the Python frames)."""
    try:
        return _room(depth + 1)
    except RecursionError:
        return depth


def released_rouge(gold: str, reply: str) -> float:
    """``calculate_rouge_l(a, r)`` with as many frames left as in the released script (raises as it raises)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + RELEASED_ROOM - _room())
    try:
        return float(Rouge().get_scores(gold, reply)[0]["rouge-l"]["f"])
    finally:
        sys.setrecursionlimit(old)


def released_score(pairs: list[tuple[str, str]]) -> tuple[float, int]:
    """The released ``judge``: per line, RougeL (0 below 0.75), lines that raise skipped; (mean, skipped)."""
    results = []
    for gold, reply in pairs:
        try:
            result = released_rouge(gold, reply)
        except Exception:  # the released loop's bare ``except: continue``
            continue
        results.append(0.0 if result < 0.75 else result)
    return sum(results) / len(results), len(pairs) - len(results)


def ours(gold: str, reply: str) -> float | str:
    try:
        return rouge_l_parts(gold, reply, frames=RELEASED_FRAMES)[0]
    except TooDeep:
        return "RecursionError"
    except EmptyText:
        return "ValueError"


def package(gold: str, reply: str) -> float | str:
    try:
        return released_rouge(gold, reply)
    except RecursionError:
        return "RecursionError"
    except ValueError:
        return "ValueError"


def test_recursion_errors_are_predicted_where_the_released_scorer_raises() -> None:
    """Identical sentences of 986 tokens still score, 987 raise; random long replies raise exactly where the
    package does (the backtrack's length, not the sentence's, decides)."""
    for n, want in ((985, 0.999999995), (986, 0.999999995), (987, "RecursionError"), (1200, "RecursionError")):
        text = " ".join(f"w{i}" for i in range(n))
        got = ours(text, text)
        assert got == pytest.approx(want) if isinstance(want, float) else got == want
        if n in (986, 987):  # the package fills an n-by-n table in Python (1.3 CPU s at 986, 2.3 at 1,200), so it
            # is asked at the edge only: an identical sentence's backtrack nests one call per token, so 986
            # scoring and 987 raising settle 985 and 1,200
            assert package(text, text) == got
    rng = random.Random(11)
    outcomes = set()
    for _ in range(150):
        gold = " ".join(rng.choice("abcdefg") for _ in range(rng.randint(1, 60)))
        head = [rng.choice("abcdefg") for _ in range(rng.randint(0, 80))]
        rare = rng.choice((0.0, 0.01, 0.2))  # how often the long tail repeats a gold token
        tail = [rng.choice("abcdefg") if rng.random() < rare else rng.choice("hijk")
                for _ in range(rng.randint(850, 1000))]
        reply = " ".join(head + tail)
        if rng.random() < 0.3:
            reply = reply.replace(" h ", ". h ", 2)  # a few sentence breaks
        got = ours(gold, reply)
        assert got == package(gold, reply), (len(gold.split()), len(reply.split()))
        outcomes.add(got == "RecursionError")
    assert outcomes == {True, False}
    assert ours("a b", "") == package("a b", "") == "ValueError"
    assert ours("a b", " . ..") == package("a b", " . ..")


@pytest.mark.parametrize(("variant", "raising"), [("hard", 33), ("official", 6)])
def test_gold_answers_the_released_scorer_cannot_score(variant: str, raising: int, request) -> None:
    """The gold answer scored against itself: 33 of the 2,088 Hard questions and 6 of the 1,624 released files
    raise RecursionError in the released scorer, and only those."""
    data = request.getfixturevalue("shared_data") if variant == "official" else DataContext()
    samples = list(StrucTextEval().load(variant, data, seed=0, limit=None))
    predicted = [s for s in samples if ours(s.gold.text, s.gold.text) == "RecursionError"]
    assert len(predicted) == raising
    # the gold sentences are either under 720 tokens or over 2,800 (the package's LCS table, a dict of every
    # token pair, would take gigabytes there): the package itself is asked about the longest ones that score
    longest = max(map(len, sentences(predicted[0].gold.text)))
    assert longest > 2800 and all(max(map(len, sentences(s.gold.text))) >= RELEASED_FRAMES for s in predicted)
    near = [s for s in samples if 500 <= max(map(len, sentences(s.gold.text)), default=0) < RELEASED_FRAMES][:12]
    assert near
    for s in near:
        assert ours(s.gold.text, s.gold.text) == package(s.gold.text, s.gold.text), s.id


def test_score_skips_what_the_released_scorer_skips_and_says_how_many() -> None:
    bench = StrucTextEval({"scorer": "released"})
    samples = list(bench.load("test", DataContext(), seed=0, limit=6))
    long = " ".join(f"t{i}" for i in range(1200))
    outputs = ["", "### Answer:\n" + samples[1].gold.text, samples[2].gold.text, samples[3].gold.text + " " + long,
               samples[4].gold.text, "..."]
    scored = [bench.score(s, Attempt(output=o), bench.strategy("naive")) for s, o in zip(samples, outputs, strict=True)]
    entry = compute_result(bench, "test", "naive", "m", scored)
    assert entry.extra["excluded"] == [
        {"reason": "empty replies, skipped as the released scorer skips them (the rouge package raises ValueError; "
                   "--option scorer=released)", "count": 2},
        {"reason": "replies the released scorer skips: the rouge package raises RecursionError rebuilding a long "
                   "LCS (--option scorer=released)", "count": 1},
    ]
    pairs = [(s.gold.text, o) for s, o in zip(samples, outputs, strict=True)]
    want, skipped = released_score(pairs)
    assert skipped == 3
    assert entry.metrics["rougeL"] == pytest.approx(want, abs=1e-12)
    # structbench's own scoring of the same replies is recorded beside: the answer after the heading counts,
    # and the empty replies score 0 instead of being skipped
    twins = [corrected_scored(s) for s in scored]
    assert all(t is not None for t in twins)
    corrected = StrucTextEval().aggregate([t for t in twins if t is not None])
    assert corrected["rougeL"] == pytest.approx((1.0 + 1.0 + 1.0) / 6)
    assert scored[1].values["rougeL"] < 0.75 and scored[1].values["corrected:rougeL"] == 1.0


def test_released_refuses_a_contradicting_parse() -> None:
    with pytest.raises(Exception, match="scorer=released compares the whole reply"):
        StrucTextEval({"scorer": "released", "parse": "answer"})
    assert StrucTextEval({"scorer": "released", "parse": "raw"}).options.raw


MIX = (
    "{gold}",
    "### Answer:\n{gold}",
    "### Reasoning Prcess:\nI read the structure level by level and follow the path asked for.\n### Answer:\n{gold}",
    "The answer is: {gold}",
    "",
    "{other}",
)
"""The loopback model's replies, in turn: the gold alone, under the heading the prompts ask for, after a
reasoning section, after "The answer is:", nothing, and another question's gold (wrong)."""


def _prompt(bench: StrucTextEval, strategy: str, sample) -> str:
    seen: list[Request] = []

    async def capture(request: Request) -> Response:
        seen.append(request)
        return Response(choices=(Choice(text=""),))

    asyncio.run(bench.strategy(strategy).run(sample, capture))
    assert seen and seen[0].messages is not None
    return seen[0].messages[-1].content


def sb(tmp_path: Path, *args: str) -> str:
    """``structbench ARGS`` as a user runs it; its stdout (a failure shows stderr)."""
    env = {**os.environ, "STRUCTBENCH_CACHE": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-loopback"}
    proc = invoke(*args, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout


def test_table3_preset_scores_as_the_released_scorer_on_the_same_replies(tmp_path: Path) -> None:
    """``structbench run --preset structext-table3`` against a loopback model answering 240 questions per
    prompt in a fixed mix equals the released scorer on the same replies, per strategy, within 0.005; and the
    paper view prints structbench's corrected scoring beside it."""
    from structbench.benchmarks.structext.paper import PROMPTS, TABLE3

    n = 240
    bench = StrucTextEval(dict(TABLE3.preset.options))
    samples = list(bench.load("test", DataContext(), seed=0, limit=n))
    replies: dict[str, str] = {}
    for strategy in PROMPTS.values():
        for i, sample in enumerate(samples):
            other = samples[(i + 1) % n].gold.text
            replies[_prompt(bench, strategy, sample)] = MIX[i % len(MIX)].format(gold=sample.gold.text, other=other)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    with serve(tmp_path, "--replies", str(script)) as server:
        sb(tmp_path, "run", "--model", "openai:loopback", "--base-url", server.url, "--preset", "structext-table3",
           "--limit", str(n), "--out", "run", "--no-cache")
    records = [SampleRecord.model_validate_json(line)
               for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    gold = {s.id: s.gold.text for s in samples}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    for strategy in PROMPTS.values():
        mine = [r for r in records if r.strategy == strategy]
        assert len(mine) == n
        want, skipped = released_score([(gold[r.id], r.output) for r in mine])
        entry = next(e for e in metrics["results"] if e["strategy"] == strategy)
        assert entry["metrics"]["rougeL"] == pytest.approx(want, abs=0.005), strategy
        assert skipped == n // len(MIX)
        assert entry["extra"]["excluded"][0]["count"] == skipped
        twins = [corrected_scored(r.scored()) for r in mine]
        corrected = StrucTextEval().aggregate([t for t in twins if t is not None])
        assert corrected["rougeL"] > want + 0.1  # the answers under the heading count there
    report = sb(tmp_path, "report", "run")
    assert "structbench's corrected scoring" in report


def test_the_released_scorer_reads_the_reply_as_written_and_the_corrected_twin_the_answer() -> None:
    """The number beside the paper's compares the whole reply, a reasoning model's inline thought included, as the
    released scorer compared what it was given; structbench's twin reads the answer alone."""
    bench = StrucTextEval({"scorer": "released"})
    sample = next(iter(bench.load("test", DataContext(), seed=0, limit=1)))
    gold = sample.gold.text
    thought = "<think>" + " ".join(f"maybe{i}" for i in range(200)) + "</think>"
    scored = bench.score(sample, Attempt(output=gold, artifacts={AS_WRITTEN: thought + gold}), bench.strategy("naive"))
    assert scored.parsed == thought + gold and scored.values["rougeL"] == 0.0
    twin = corrected_scored(scored)
    assert twin is not None and twin.values["rougeL"] == 1.0 and twin.score == 1.0
