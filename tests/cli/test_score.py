"""``structbench score``: what happens to samples without a prediction (``--missing``), the per-sample log
(``--samples``), a preset applied to a part of its variant, and ``--offline`` on ``export`` and ``score``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toybench  # noqa: F401  (registers ``toy``)
from structbench.testing.cli import invoke


def sb(tmp_path: Path, *args: str, check: int = 0) -> Any:
    done = invoke(*args, env={"STRUCTBENCH_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert done.returncode == check, done.stderr + done.stdout
    return done


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _toy_predictions(tmp_path: Path, keep: int) -> None:
    """Ten toy samples exported, the gold label given as the output of the first ``keep``."""
    sb(tmp_path, "export", "toy", "--out", "e.jsonl", "--limit", "10")
    with (tmp_path / "p.jsonl").open("w") as fh:
        for line in _lines(tmp_path / "e.jsonl")[:keep]:
            fh.write(json.dumps({"id": line["id"], "fingerprint": line["fingerprint"],
                                 "output": line["gold"]["label"]}) + "\n")


def test_missing_predictions_count_as_wrong_or_are_left_out_as_the_flag_says(tmp_path: Path) -> None:
    _toy_predictions(tmp_path, keep=8)
    common = ("score", "toy", "-p", "p.jsonl", "--limit", "10")
    wrong = sb(tmp_path, *common, "--out", "wrong.json", "--samples", "wrong.jsonl")
    entry = json.loads((tmp_path / "wrong.json").read_text())["results"][0]
    assert (entry["n"], entry["headline"]["value"]) == (10, pytest.approx(0.8))  # printed, n and number agree
    assert "2 sample(s) missing from p.jsonl: scored as wrong (empty replies), counted in n (n = 10" in wrong.stderr
    assert "2 sample(s) had no prediction and count as wrong" in wrong.stdout
    log = _lines(tmp_path / "wrong.jsonl")
    assert [line["id"] for line in log] == [f"toy-{i}" for i in range(10)]
    assert [line.get("missing", False) for line in log] == [False] * 8 + [True] * 2
    assert [line["score"] for line in log] == [1.0] * 8 + [0.0] * 2
    assert log[0] == {"id": "toy-0", "task": "blue", "parsed": "no", "gold": "no", "score": 1.0, "values": {}}

    skip = sb(tmp_path, *common, "--missing", "skip", "--out", "skip.json", "--samples", "skip.jsonl")
    entry = json.loads((tmp_path / "skip.json").read_text())["results"][0]
    assert (entry["n"], entry["headline"]["value"]) == (8, 1.0)
    assert entry["missing"] == ["toy-8", "toy-9"]
    assert entry["extra"]["excluded"] == [{"reason": "samples without a prediction, left out of n and of every metric "
                                                     "(score --missing skip)", "count": 2}]
    assert "left out of n and of every metric (n = 8" in skip.stderr
    assert "2 sample(s) had no prediction and are left out" in skip.stdout
    assert len(_lines(tmp_path / "skip.jsonl")) == 8

    refused = sb(tmp_path, *common, "--missing", "error", "--out", "error.json", "--samples", "error.jsonl", check=2)
    assert "p.jsonl: 2 sample(s) of toy:small have no prediction (e.g. 'toy-8')" in refused.stderr
    assert not (tmp_path / "error.json").exists() and not (tmp_path / "error.jsonl").exists()
    assert not list(tmp_path.glob(".error.jsonl.*"))  # nothing half-written


def test_a_file_without_predictions_or_a_list_for_one_reply_is_refused(tmp_path: Path) -> None:
    """Never a table of zeros for an empty file; a list is self-consistency's samples, not one reply's."""
    _toy_predictions(tmp_path, keep=3)
    (tmp_path / "empty.jsonl").write_text("\n")
    empty = sb(tmp_path, "score", "toy", "-p", "empty.jsonl", "--limit", "3", "--out", "m.json", check=2)
    assert empty.stderr.strip() == ("error: empty.jsonl: no predictions in it (lines with 'id', 'fingerprint' and "
                                    "'output')")
    lines = _lines(tmp_path / "p.jsonl")
    (tmp_path / "list.jsonl").write_text("".join(json.dumps(x | {"output": [x["output"]] * 3}) + "\n" for x in lines))
    listed = sb(tmp_path, "score", "toy", "-p", "list.jsonl", "--limit", "3", "--out", "m.json", check=2)
    assert listed.stderr.strip() == ("error: list.jsonl:1: 'output' is a list, but the direct strategy takes one "
                                     "reply per sample (a list is for self-consistency's samples)")
    assert not (tmp_path / "m.json").exists()
    voted = sb(tmp_path, "score", "toy", "-p", "list.jsonl", "--limit", "3", "-s", "vote", "--unchecked")
    assert "error" not in voted.stderr


def test_think_tags_and_an_opened_thought_say_where_each_outputs_thought_is(tmp_path: Path) -> None:
    """A Magistral reply (``[THINK]…[/THINK]answer``) is scored on its answer with ``--think-tags``, as ``run`` reads
    it; with ``--thought-opened`` an output with no closing tag is a thought cut off, never parsed."""
    _toy_predictions(tmp_path, keep=4)
    lines = _lines(tmp_path / "p.jsonl")
    wrong = {"yes": "no", "no": "yes"}

    def write(name: str, output: Any) -> None:
        (tmp_path / name).write_text("".join(json.dumps(x | {"output": output(x["output"])}) + "\n" for x in lines))

    write("magistral.jsonl", lambda gold: f"[THINK]Surely {wrong[gold]}.[/THINK]\n{gold}")
    common = ("score", "toy", "--limit", "4", "--missing", "skip")
    sb(tmp_path, *common, "-p", "magistral.jsonl", "--think-tags", "[THINK],[/THINK]", "--out", "tags.json")
    entry = json.loads((tmp_path / "tags.json").read_text())["results"][0]
    assert (entry["headline"]["value"], entry["reasoning_cut_off"]) == (1.0, 0)
    sb(tmp_path, *common, "-p", "magistral.jsonl", "--out", "default.json")  # parsed from the thought
    assert json.loads((tmp_path / "default.json").read_text())["results"][0]["headline"]["value"] == 0.0
    write("opened.jsonl", lambda gold: f"Surely {wrong[gold]}. Let me check")
    cut = sb(tmp_path, *common, "-p", "opened.jsonl", "--thought-opened", "--out", "opened.json")
    entry = json.loads((tmp_path / "opened.json").read_text())["results"][0]
    assert (entry["headline"]["value"], entry["reasoning_cut_off"]) == (0.0, 4)
    assert "4 of 4 sample(s) got no answer" in cut.stderr
    refused = sb(tmp_path, *common, "-p", "opened.jsonl", "--think-tags", "<t>,<t>", check=2)
    assert "think-tag pair is two different non-blank tags" in refused.stderr


def test_an_unclosed_thought_in_a_predictions_file_gets_no_reasoning_budget_advice(tmp_path: Path) -> None:
    """A file has no finish reasons: an output ending inside ``<think>`` was told to raise ``--reasoning-budget``,
    a flag of ``run`` that cannot change outputs already written; the note points at the tags and the template."""
    _toy_predictions(tmp_path, keep=3)
    lines = _lines(tmp_path / "p.jsonl")
    (tmp_path / "open.jsonl").write_text(
        "".join(json.dumps(x | {"output": "<think>Perhaps it is yes. Let me check the table"}) + "\n" for x in lines))
    done = sb(tmp_path, "score", "toy", "-p", "open.jsonl", "--limit", "3", "--missing", "skip", "--out", "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["results"][0]["reasoning_cut_off"] == 3
    note = next(line for line in done.stderr.splitlines() if "got no answer" in line)
    assert note.startswith("note: toy:small/direct: 3 of 3 sample(s) got no answer: their outputs end inside a "
                           "thought never closed")
    assert "--think-tags" in note and "--thought-opened" in note
    assert "reasoning-budget" not in done.stderr + done.stdout
    assert "3 of 3 sample(s) got no answer: their outputs end inside" in done.stdout  # the Markdown's note too


def test_a_note_names_the_file_score_wrote_and_none_when_it_wrote_none(tmp_path: Path) -> None:
    """The note pointed at ``metrics.json: reasoning_cut_off`` whatever ``--out`` was, and without one, at a file that
    was never written."""
    _toy_predictions(tmp_path, keep=3)
    (tmp_path / "open.jsonl").write_text("".join(json.dumps(x | {"output": "<think>Perhaps yes. Let me check"}) + "\n"
                                                 for x in _lines(tmp_path / "p.jsonl")))
    common = ("score", "toy", "-p", "open.jsonl", "--limit", "3", "--missing", "skip")
    notes = []
    for out in (("--out", "m.json"), ()):
        done = sb(tmp_path, *common, *out)
        notes.append(next(line for line in done.stderr.splitlines() if "got no answer" in line))
        assert "metrics.json" not in done.stderr and not (tmp_path / "metrics.json").exists()
    assert notes[0] == f"{notes[1]} (m.json: reasoning_cut_off)" and not notes[1].endswith(")")


def test_export_and_score_offline_never_download(tmp_path: Path) -> None:
    for command in (("export", "scitab", "--out", "x.jsonl"), ("score", "scitab", "-p", "e.jsonl")):
        if command[0] == "score":
            (tmp_path / "e.jsonl").write_text('{"id": "x", "output": "supports"}\n')
        done = sb(tmp_path, *command, "--offline", check=2)
        assert "scitab: cannot get dataset/sci_tab.json. Download https://" in done.stderr
        assert not (tmp_path / "cache" / "datasets" / "scitab").exists() or not any(
            (tmp_path / "cache" / "datasets" / "scitab").rglob("*.json"))


@pytest.mark.shared
def test_missing_cannot_count_as_wrong_where_the_scoring_skips_empty_replies(tmp_path: Path,
                                                                            shared_datasets: Path) -> None:
    """StrucText-Eval's released scorer (the structext-table3 preset) skips empty replies: scoring a missing prediction
    as one would not count it as wrong, so the default is refused and ``--missing skip`` says what it does."""
    data = ("--data-dir", str(shared_datasets), "--offline")
    sb(tmp_path, "export", "structext", "--preset", "structext-table3", "-s", "naive", "--limit", "30",
       "--out", "e.jsonl", *data)
    with (tmp_path / "p.jsonl").open("w") as fh:
        for line in _lines(tmp_path / "e.jsonl")[:10]:
            fh.write(json.dumps({"id": line["id"], "fingerprint": line["fingerprint"],
                                 "output": line["answer"]}) + "\n")
    common = ("score", "structext", "--preset", "structext-table3", "-s", "naive", "--limit", "30", "-p", "p.jsonl",
              *data)
    refused = sb(tmp_path, *common, check=2)
    assert ("20 sample(s) of structext:test have no prediction" in refused.stderr
            and "leaves an empty reply out of its averages, so they cannot count as wrong: --missing skip"
            in refused.stderr)
    sb(tmp_path, *common, "--missing", "skip", "--out", "m.json")
    entry = json.loads((tmp_path / "m.json").read_text())["results"][0]
    assert entry["n"] == 10 and entry["headline"]["value"] == pytest.approx(0.999999995)
    assert entry["extra"]["excluded"][0]["count"] == 20


@pytest.mark.shared
def test_a_preset_applies_to_a_part_and_samples_log_every_value(tmp_path: Path, shared_datasets: Path) -> None:
    """``score rfqa:spider1 --preset rfqa-table2``: the preset's options on the spider1 queries of its rfqa:all;
    ``--samples`` holds each query's cell F1 and tuple similarity, under galois' reading and structbench's."""
    data = ("--data-dir", str(shared_datasets), "--offline")
    sb(tmp_path, "export", "rfqa:spider1", "--preset", "rfqa-table2", "-s", "nl", "--out", "e.jsonl", *data)
    exported = _lines(tmp_path / "e.jsonl")
    assert len(exported) == 52 and exported[0]["exported_with"]["options"] == {
        "reading": "galois", "scorer": "galois", "prompt_wording": "published"}
    with (tmp_path / "p.jsonl").open("w") as fh:
        for line in exported:
            rows = [dict(zip(line["gold"]["columns"], row, strict=True)) for row in line["gold"]["rows"]]
            fh.write(json.dumps({"id": line["id"], "fingerprint": line["fingerprint"], "output": json.dumps(rows)})
                     + "\n")
    sb(tmp_path, "score", "rfqa:spider1", "--preset", "rfqa-table2", "-s", "nl", "-p", "p.jsonl", "--out", "m.json",
       "--samples", "s.jsonl", *data)
    entry = json.loads((tmp_path / "m.json").read_text())["results"][0]
    log = {line["id"]: line for line in _lines(tmp_path / "s.jsonl")}
    assert len(log) == entry["n"] == 52
    for metric in ("cell_f1", "tuple_similarity"):
        mean = sum(line["values"][metric] for line in log.values()) / len(log)
        assert entry["metrics"][metric] == pytest.approx(mean)
        assert {f"corrected:{metric}", metric} <= set(log["spider1_1"]["values"])
    assert log["spider1_1"]["parsed"] == [{"director": "James Cameron"}]
    refused = sb(tmp_path, "score", "rfqa:generated", "--preset", "rfqa-table2", "-s", "nl", "-p", "p.jsonl", check=2)
    assert "--preset rfqa-table2 runs rfqa:all, not rfqa:generated" in refused.stderr
