"""ClaimDB end to end on a set written by ``structbench generate claimdb`` and read with ``--data-dir``: the oracle and
a loopback model that queries the database before it answers, the paper's preset, the verdict parser, the
metrics, and the release's files read as hostile input."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from structbench.benchmarks.claimdb import ClaimDB
from structbench.benchmarks.claimdb.databases import open_databases
from structbench.benchmarks.claimdb.metrics import label_metrics
from structbench.benchmarks.claimdb.parse import parse_verdict
from structbench.benchmarks.claimdb.prompts import INSTRUCTIONS, tool_description
from structbench.contract.benchmark import AS_WRITTEN, Attempt, corrected_scored
from structbench.core.errors import DataError
from structbench.data.sample import LabelGold, Sample
from structbench.testing.cli import invoke
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

TABLES = {"*": {"sql": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"}}


@pytest.fixture
def claimdb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A generated set under ``tmp_path/data`` and an empty cache (the databases are extracted into it)."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "cache"))
    made = invoke("generate", "claimdb", "--out", str(tmp_path / "data"), "--seed", "3")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("wrote 18 claims over 3 databases to ")
    return tmp_path / "data"


def claims(data: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data / "claimdb" / "test-public.jsonl").read_text().splitlines()]


def run(tmp_path: Path, data: Path, *args: str, out: str = "run") -> Any:
    bench = () if "--preset" in args else ("-b", "claimdb")
    return invoke("run", *bench, "--data-dir", str(data), "--no-progress", "--out", str(tmp_path / out), *args)


def result(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "metrics.json").read_text())["results"][0])


def test_the_generated_set_is_seeded_and_labelled_by_its_data(tmp_path: Path, claimdb: Path) -> None:
    again = invoke("generate", "claimdb", "--out", str(tmp_path / "again"), "--seed", "3")
    other = invoke("generate", "claimdb", "--out", str(tmp_path / "other"), "--seed", "4")
    assert again.returncode == other.returncode == 0
    for name in ("test-public.jsonl", "test_databases.zip"):
        assert (claimdb / "claimdb" / name).read_bytes() == (tmp_path / "again" / "claimdb" / name).read_bytes()
    assert claims(claimdb) != claims(tmp_path / "other")
    databases = open_databases(claimdb / "claimdb" / "test_databases.zip")
    grade = next(c for c in claims(claimdb) if c["label"] == "ENTAILED" and "students in grade" in c["claim"])
    count, level = (int(w) for w in grade["claim"].removeprefix("There are ").rstrip(".").split(" students in grade "))
    with sqlite3.connect(f"file:{databases['school']}?mode=ro", uri=True) as con:
        assert con.execute("SELECT count(*) FROM students WHERE grade = ?", (level,)).fetchone()[0] == count
    assert all(not (p.stat().st_mode & 0o222) for p in databases.values())  # extracted read-only


def test_the_oracle_scores_1_with_intervals_over_databases(tmp_path: Path, claimdb: Path) -> None:
    proc = run(tmp_path, claimdb, "-m", "oracle")
    assert proc.returncode == 0, proc.stderr
    entry = result(tmp_path / "run")
    assert entry["strategy"] == "tools" and entry["headline"]["name"] == "accuracy"
    assert entry["headline"]["value"] == 1.0 and entry["headline"]["unit"] == "database"
    assert entry["headline"]["clusters"] == 3 and entry["n"] == 18
    assert entry["metrics"]["macro_f1"] == entry["metrics"]["f1_nei"] == 1.0
    golds = [c["label"] for c in claims(claimdb)]
    most = max(golds.count(label) for label in set(golds))
    assert entry["baselines"]["majority"] == pytest.approx(most / len(golds))  # (it was 0.0: no verdict read)
    assert 0.15 < entry["baselines"]["chance"] < 0.55  # about a third
    assert set(entry["breakdowns"]["db_name"]) == {"school", "library", "racing"}


def test_a_model_that_queries_the_database_scores_1(tmp_path: Path, claimdb: Path) -> None:
    answers = {c["claim"]: json.dumps({"verdict": c["label"], "justification": "queried"}) for c in claims(claimdb)}
    server = MockOpenAIServer(reply="no database, no verdict", tool_model=True, tool_arguments=TABLES,
                              tool_answers=answers)
    with serve_in_thread(server) as url:
        proc = run(tmp_path, claimdb, "-m", "openai:mock", "--base-url", url, "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert result(tmp_path / "run")["headline"]["value"] == 1.0
    records = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    for record in records:
        call = record["artifacts"]["tools"]["trace"][0]
        db = record["meta"]["db_name"]
        assert call["tool"] == f"{db}_execute_sql" and call["error"] is None
        assert json.loads(call["result"]) == [{"name": t} for t in
                                              {"school": ("students", "teachers"), "library": ("books", "loans"),
                                               "racing": ("drivers", "results")}[db]]
        assert record["prompt"][0]["role"] == "system" and record["prompt"][0]["content"] == INSTRUCTIONS
        assert record["prompt"][1]["content"].startswith("Claim: ") and "\nExtra Information: " in \
            record["prompt"][1]["content"]


def test_the_papers_preset_reads_verdicts_as_its_code_did(tmp_path: Path, claimdb: Path) -> None:
    """The released code takes the JSON object's verdict only; prose verdicts are read by the corrected scoring."""
    answers = {c["claim"]: f"The database shows the claim is {c['label']}." for c in claims(claimdb)}
    server = MockOpenAIServer(tool_model=True, tool_arguments=TABLES, tool_answers=answers)
    with serve_in_thread(server) as url:
        proc = run(tmp_path, claimdb, "-m", "openai:mock", "--base-url", url, "--preset", "claimdb-results",
                   "--no-cache")
    assert proc.returncode == 0, proc.stderr
    entry = result(tmp_path / "run")
    assert entry["headline"]["value"] == 0.0 and entry["metrics"]["no_verdict_rate"] == 1.0
    assert entry["extra"]["corrected"]["metrics"]["accuracy"] == 1.0


def test_a_loop_at_the_turn_limit_is_wrong_by_default_and_apart_on_request(tmp_path: Path, claimdb: Path) -> None:
    """Scored wrong (as the released code does) and counted by default; ``-o turn_limit=apart`` or the run's
    ``--turn-limit apart`` leaves the claims out of n; the run's flag overrides the benchmark's option."""
    with serve_in_thread(MockOpenAIServer(tool_model=True, tool_arguments=TABLES)) as url:
        common = ("-m", "openai:mock", "--base-url", url, "--max-turns", "1", "--no-cache")
        wrong = run(tmp_path, claimdb, *common)
        apart = run(tmp_path, claimdb, *common, "-o", "turn_limit=apart", out="apart")
        by_run = run(tmp_path, claimdb, *common, "--turn-limit", "apart", out="by_run")
        over = run(tmp_path, claimdb, *common, "-o", "turn_limit=apart", "--turn-limit", "wrong", out="over")
    assert {p.returncode for p in (wrong, apart, by_run, over)} == {0}, wrong.stderr + apart.stderr
    counted = result(tmp_path / "run")
    assert (counted["turn_limit_scored"], counted["turn_limit"], counted["n"], counted["headline"]["value"]) == \
        (18, 0, 18, 0.0)
    for out in ("apart", "by_run"):
        assert (result(tmp_path / out)["turn_limit"], result(tmp_path / out)["n"]) == (18, 0)
    assert (result(tmp_path / "over")["turn_limit_scored"], result(tmp_path / "over")["n"]) == (18, 18)


@pytest.mark.parametrize("text, strict, lenient", [
    ('{"verdict": "ENTAILED", "justification": "x"}', "ENTAILED", "ENTAILED"),
    ('First {"verdict": "CONTRADICTED"} then {"verdict": "NOT ENOUGH INFO", "justification": "y"}',
     "NOT ENOUGH INFO", "NOT ENOUGH INFO"),
    ('{"verdict": "entailed", "justification": "x"}', None, "ENTAILED"),
    ("The claim is CONTRADICTED by the data.", None, "CONTRADICTED"),
    ("There is not enough information to decide.", None, "NOT ENOUGH INFO"),
    ("I could not query the database.", None, None),
])
def test_verdicts(text: str, strict: str | None, lenient: str | None) -> None:
    assert parse_verdict(text, strict=True) == strict
    assert parse_verdict(text) == lenient


def test_an_object_nested_past_the_parsers_limit_gives_no_verdict() -> None:
    deep = '{"verdict": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert parse_verdict(deep) is None and parse_verdict(deep, strict=True) is None
    assert parse_verdict(deep + ' {"verdict": "ENTAILED"}', strict=True) == "ENTAILED"
    # past MAX_NESTING, where json still reads it: no verdict from that object either (the prose names it)
    deeper = '{"verdict": "ENTAILED", "x": ' + "[" * 150 + "]" * 150 + "}"
    assert parse_verdict(deeper, strict=True) is None and parse_verdict(deeper) == "ENTAILED"


def test_metrics_follow_scikit_learn_over_the_three_labels() -> None:
    gold = ["ENTAILED", "ENTAILED", "CONTRADICTED", "NOT ENOUGH INFO"]
    pred = ["ENTAILED", None, "ENTAILED", "NOT ENOUGH INFO"]
    m = label_metrics(gold, pred)
    assert m["accuracy"] == 0.5 and m["no_verdict_rate"] == 0.25
    assert (m["precision_entailed"], m["recall_entailed"], m["f1_entailed"]) == (0.5, 0.5, 0.5)
    assert m["f1_contradicted"] == 0.0 and m["f1_nei"] == 1.0 and m["macro_f1"] == pytest.approx(0.5)


def test_the_tool_is_named_and_described_as_the_papers(tmp_path: Path, claimdb: Path) -> None:
    bench = ClaimDB()
    task = bench.tool_task(next(iter(bench.load("test", _context(claimdb), seed=0, limit=None))))
    (name, tool), = task.workspace.tools.items()
    assert name.endswith("_execute_sql") and tool.argument == "sql"
    assert tool.describe() == tool_description(name.removesuffix("_execute_sql"))
    assert task.response_format is not None and task.response_format["json_schema"]["name"] == "ClaimVerdict"


def _context(data: Path) -> Any:
    from structbench.data.datasets import DataContext

    return DataContext(data_dir=data, offline=True)


def test_a_bad_claim_line_names_the_file_and_line(tmp_path: Path, claimdb: Path) -> None:
    path = claimdb / "claimdb" / "test-public.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = json.dumps({**json.loads(lines[4]), "label": "MAYBE"})
    path.write_text("\n".join(lines) + "\n")
    proc = run(tmp_path, claimdb, "-m", "oracle")
    assert proc.returncode == 2 and f"{path}:5: not a ClaimDB claim (label:" in proc.stderr


@pytest.mark.parametrize("member, says", [
    ("../../escape.sqlite", None),  # named by its file name only: it lands in the cache's folder
    ("link.sqlite", "is a link"),
])
def test_a_zip_is_read_as_hostile_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str,
                                        says: str | None) -> None:
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "dbs.zip"
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(member)
        if says == "is a link":
            info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd" if says else "SQLite format 3\x00")
    if says is not None:
        with pytest.raises(DataError, match=says):
            open_databases(path)
        return
    found = open_databases(path)
    assert list(found) == ["escape"] and found["escape"].parent.parent == tmp_path / "cache" / "claimdb-databases"
    assert not (tmp_path.parent / "escape.sqlite").exists()


def test_the_papers_table_is_consistent() -> None:
    (table,) = ClaimDB.paper.tables
    assert table.problems() == []
    best = next(r for r in table.published.rows if r.model == "gpt-5-mini")
    assert best.values[-1] == 0.827 and max(r.values[-1] for r in table.published.rows) < 0.83


def test_the_released_reading_reads_the_reply_as_written_and_the_twin_its_answer() -> None:
    """Under ``verdicts=strict`` the verdict object in a reasoning model's inline thought is read, as the released code
    read the whole reply; the corrected twin reads the answer, and its interval and confusion matrix use the
    twin's own verdicts (they read the paper's parse)."""
    bench = ClaimDB({"verdicts": "strict"})
    sample = Sample(id="c1", benchmark="claimdb", variant="test", task="claim", question="?",
                    gold=LabelGold(label="ENTAILED"), meta={"db_name": "db"})
    answer = "The data shows the claim is ENTAILED."
    raw = '<think>first {"verdict": "CONTRADICTED", "justification": "?"}</think>' + answer
    scored = bench.score(sample, Attempt(output=answer, artifacts={AS_WRITTEN: raw}), bench.strategy("tools"))
    twin = corrected_scored(scored)
    assert (scored.parsed, scored.score) == ("CONTRADICTED", 0.0)
    assert twin is not None and twin.score == 1.0
    statistic = bench.statistic([twin, scored], "macro_f1")
    assert statistic is not None
    whole = float(statistic.weighted(np.ones((1, 2)))[0])
    assert whole == pytest.approx(bench.aggregate([twin, scored])["macro_f1"])
    matrix = bench.confusion_matrices([twin])["verdicts"]
    assert sum(matrix.counts[i][i] for i in range(len(matrix.gold))) == 1
