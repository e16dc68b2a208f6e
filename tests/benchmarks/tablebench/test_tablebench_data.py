"""Reading a release laid out as the Hub repository: samples streamed in file order with their four instructions,
clusters by table, and a malformed or incomplete folder stopped with the file, line and field."""

from __future__ import annotations

import json
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from structbench.benchmarks.tablebench import TableBench
from structbench.benchmarks.tablebench.source import INSTRUCTION_FILES, QUESTIONS_FILE, SOURCE
from structbench.contract.benchmark import Samples
from structbench.core.errors import DataError, DatasetUnavailableError
from structbench.data.datasets import DataContext, cache_root
from structbench.data.sample import Sample


def test_samples_stream_with_their_instructions(generated: Path, samples: list[Sample]) -> None:
    loaded = TableBench().load("test", DataContext(data_dir=generated, offline=True), seed=0, limit=None)
    assert isinstance(loaded, Samples) and loaded.expected == len(samples) == 25
    lines = [json.loads(line) for line in (generated / "tablebench" / QUESTIONS_FILE).read_text().splitlines()]
    assert [s.id for s in samples] == [line["id"] for line in lines]
    dp = {json.loads(line)["id"]: json.loads(line)["instruction"]
          for line in (generated / "tablebench" / INSTRUCTION_FILES["DP"]).read_text().splitlines()}
    for sample in samples:
        assert set(sample.extra["instructions"]) == {"DP", "TCoT", "SCoT", "PoT"}
        assert sample.extra["instructions"]["DP"] == dp[sample.id]
        assert sample.question in sample.extra["instructions"]["PoT"]


def test_questions_of_one_table_share_a_cluster(samples: list[Sample]) -> None:
    bench = TableBench()
    clusters = {bench.cluster(s) for s in samples}
    assert len(clusters) == 4  # a league, a network, a shop, readings
    league = [s for s in samples if "club" in s.evidence[0].header]  # type: ignore[union-attr]
    assert len(league) == 12 and len({bench.cluster(s) for s in league}) == 1


def _copy(generated: Path, tmp_path: Path) -> Path:
    shutil.copytree(generated / "tablebench", tmp_path / "tablebench")
    return tmp_path


def _load(root: Path) -> list[Sample]:
    return list(TableBench().load("test", DataContext(data_dir=root, offline=True), seed=0, limit=None))


def test_a_missing_file_names_it(generated: Path, tmp_path: Path) -> None:
    root = _copy(generated, tmp_path)
    (root / "tablebench" / INSTRUCTION_FILES["SCoT"]).unlink()
    with pytest.raises(DatasetUnavailableError, match="TableBench_SCoT.jsonl"):
        _load(root)


def test_a_question_without_its_instruction_is_refused(generated: Path, tmp_path: Path) -> None:
    root = _copy(generated, tmp_path)
    path = root / "tablebench" / INSTRUCTION_FILES["PoT"]
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    with pytest.raises(DataError, match=r"TableBench\.jsonl:1: question '.*' is missing from TableBench_PoT\.jsonl"):
        _load(root)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda line: line[:20], r"TableBench\.jsonl:3: not JSON"),
        (lambda line: json.dumps({**json.loads(line), "question": None}), r"TableBench\.jsonl:3: question: "),
        (lambda line: json.dumps({**json.loads(line), "table": "{'columns'"}), r":3: table: not a JSON table"),
    ],
)
def test_a_malformed_line_names_the_file_line_and_field(generated: Path, tmp_path: Path, change, message) -> None:
    root = _copy(generated, tmp_path)
    path = root / "tablebench" / QUESTIONS_FILE
    lines = path.read_text().splitlines()
    lines[2] = change(lines[2])
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message):
        _load(root)


def test_a_chart_answer_that_is_no_list_is_refused(generated: Path, tmp_path: Path) -> None:
    root = _copy(generated, tmp_path)
    path = root / "tablebench" / QUESTIONS_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    number = next(i for i, line in enumerate(lines, start=1) if line["qtype"] == "Visualization")
    lines[number - 1]["answer"] = "plt.show()"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataError, match=rf"TableBench\.jsonl:{number}: answer: .*y_references"):
        _load(root)


def test_a_table_stored_as_json_text_and_a_numeric_answer_are_read(generated: Path, tmp_path: Path) -> None:
    """Early releases stored the table as a JSON string; an answer may be a JSON number."""
    root = _copy(generated, tmp_path)
    for name in (QUESTIONS_FILE, *INSTRUCTION_FILES.values()):
        path = root / "tablebench" / name
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        lines[2]["table"] = json.dumps(lines[2]["table"])
        lines[2]["answer"] = int(lines[2]["answer"])  # the league's total draws
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    sample = _load(root)[2]
    assert sample.extra["table"]["columns"][1] == "club" and sample.gold.text.isdigit()  # type: ignore[union-attr]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_release_is_downloaded_into_the_cache(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hub's files, from a loopback mirror (STRUCTBENCH_MIRROR) standing in for huggingface.co."""
    assert [f.url for f in SOURCE.files] == [
        f"https://huggingface.co/datasets/Multilingual-Multimodal-NLP/TableBench/resolve/main/{name}"
        for name in (QUESTIONS_FILE, *INSTRUCTION_FILES.values())]
    with pytest.raises(DatasetUnavailableError, match=r"resolve/main/TableBench\.jsonl"):
        TableBench().load("test", DataContext(offline=True), seed=0, limit=None)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(generated)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("STRUCTBENCH_MIRROR", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        loaded = list(TableBench().load("test", DataContext(), seed=0, limit=None))
    finally:
        server.shutdown()
    assert len(loaded) == 25
    for name in (QUESTIONS_FILE, *INSTRUCTION_FILES.values()):
        cached = cache_root() / "datasets" / "tablebench" / name
        assert cached.read_bytes() == (generated / "tablebench" / name).read_bytes()
