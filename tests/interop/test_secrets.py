"""No secret reaches a converted or published file, even from a run directory that holds one (written before
structbench redacted, or by hand): OpenAI-style keys, and the values of credential-like environment variables."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")
require_extra("pyarrow", "datasets")

import pyarrow.parquet as pq  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402

from interop_runs import SECRET, sb  # noqa: E402

PLAIN = "plainlabsecret4711value"
"""A key with no recognisable shape: only its environment variable (``MYLAB_API_KEY``) marks it as a secret."""


def _texts(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` as text: Inspect logs and Parquet values as their readers give them."""
    texts = {}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".eval":  # a zip of zstd-compressed members: read by Inspect, attachments resolved
            texts[str(path)] = read_eval_log(str(path), resolve_attachments=True).model_dump_json()
        elif path.suffix == ".parquet":
            texts[str(path)] = json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False)
        else:
            texts[str(path)] = path.read_text(encoding="utf-8", errors="replace")
    return texts


@pytest.mark.shared
def test_no_secret_in_any_written_file(oracle_run: Path, tmp_path: Path) -> None:
    leaky = tmp_path / "leaky"
    shutil.copytree(oracle_run, leaky)
    manifest = json.loads((leaky / "manifest.json").read_text())
    manifest["config"]["model_options"] = {"note": f"key={SECRET}"}
    manifest["cache"] = f"/home/me/{PLAIN}/responses.sqlite"
    (leaky / "manifest.json").write_text(json.dumps(manifest))
    lines = [json.loads(x) for x in (leaky / "samples.jsonl").read_text().splitlines()]
    lines[0]["output"] += f" Authorization: Bearer {SECRET}"
    lines[1]["artifacts"] = {"echo": f"my key is {PLAIN}"}
    lines[2]["prompt"] = [{"role": "user", "content": f"use {SECRET}"}]
    (leaky / "samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))

    env = {"MYLAB_API_KEY": PLAIN}
    sb(tmp_path, "convert", "leaky", "--to", "inspect", "--out", "out/inspect", env=env)
    sb(tmp_path, "convert", "leaky", "--to", "lm-eval", "--out", "out/lm-eval", env=env)
    sb(tmp_path, "publish", "leaky", "--out", "out/hub", env=env)
    texts = _texts(tmp_path / "out")
    assert any(k.endswith(".eval") for k in texts) and any(k.endswith(".parquet") for k in texts)
    for where, text in texts.items():
        assert SECRET not in text and SECRET[3:15] not in text, where
        assert PLAIN not in text, where
    for kind in ("inspect", "lm-eval", "hub"):  # the planted values got there, redacted
        assert any("[REDACTED]" in t for k, t in texts.items() if f"/out/{kind}/" in k), kind
