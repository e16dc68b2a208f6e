"""The run's ledger of batches as untrusted state: a batch whose input file is gone is waited for, never sent twice;
a damaged ledger stops the run with a true line and is listed as far as it can be read; ``structbench batches``
with the provider down is one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runner.batch.conftest import Served
from runner.batch.test_collector import run, scores, stop_after_submitting
from structbench.core.errors import DataError, ExitCode
from structbench.runner.batch.ledger import Ledger
from structbench.testing.cli import invoke


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_a_batch_whose_input_file_is_gone_is_waited_for_not_sent_again(tmp_path: Path, batch_api: Served,
                                                                        model: str) -> None:
    batch_api.server.complete_after = 1
    stop_after_submitting(tmp_path, batch_api, model)
    ledger = Ledger(tmp_path / "r")
    (entry,) = ledger.entries
    ledger.file(entry.input_name).unlink()
    notes: list[str] = []
    again, _ = run(tmp_path, batch_api, "r", strategy="direct", model=model, notes=notes)
    assert again.failures == [] and batch_api.server.stats.batches == 1 and batch_api.server.stats.direct == 0
    assert any("is missing, so which requests it holds is known only from its results: waiting for it" in n
               for n in notes)
    (entry,) = Ledger(tmp_path / "r").entries
    assert entry.state == "ended" and "its input file was missing" in entry.notes[-1]
    run(tmp_path, batch_api, "direct", strategy="direct", model=model, batch=None, cache="direct.sqlite")
    assert scores(tmp_path / "r") == scores(tmp_path / "direct")


def test_a_damaged_ledger_stops_the_run_and_is_listed_as_far_as_it_can_be_read(tmp_path: Path,
                                                                                batch_api: Served) -> None:
    run(tmp_path, batch_api, "r")  # refine: two batches, one per step
    path = tmp_path / "r" / "batches" / "ledger.json"
    data = json.loads(path.read_text())
    data["batches"][0]["state"] = "lost"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"ledger.json: not a structbench batch ledger \(entry 1: state: Input should "
                       r"be .*\); it lists the run's batches, whose requests would be sent and paid again without it: "
                       r"repair it \(structbench batches .* lists what can be read of it\)"):
        run(tmp_path, batch_api, "r")
    listed = invoke("batches", str(tmp_path / "r"), "--offline", env=dict(os.environ))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("| ended | completed |") == 1  # the second entry
    assert f"warning: {path}: entry 1 unreadable (state: Input should be" in listed.stderr
    assert "which the ledger does not list" in listed.stderr  # the first batch's input file, now named by no entry
    path.write_text("{not json")
    listed = invoke("batches", str(tmp_path / "r"), "--offline", env=dict(os.environ))
    assert listed.returncode == 0 and f"warning: {path}: unreadable (" in listed.stderr
    assert listed.stderr.count("which the ledger does not list") == 2


def test_batches_with_the_provider_down_is_one_line(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.complete_after = 30
    stop_after_submitting(tmp_path, batch_api)
    dead = invoke("batches", str(tmp_path / "r"), "--base-url", "http://127.0.0.1:9/v1", env=dict(os.environ))
    assert dead.returncode == ExitCode.STOPPED and "Traceback" not in dead.stderr
    assert dead.stderr.startswith("error: the batch API of openai:mock at http://127.0.0.1:9/v1 did not answer: "
                                  "APIConnectionError: Connection error.; the ledger alone: structbench batches ")
    assert dead.stderr.count("\n") == 1
    assert invoke("batches", str(tmp_path / "r"), env=dict(os.environ)).returncode == 0  # the provider up: listed
