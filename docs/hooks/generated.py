"""MkDocs hook: ``<!-- schema: module:Model -->`` in a page becomes the model's JSON Schema, generated at build
time from the pydantic model, ``<!-- cli-reference -->`` every command's ``--help`` and ``<!-- architecture -->``
the layers drawn from the imports, so the documented schemas, options and structure are the code's."""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

MARKER = re.compile(r"<!-- schema: ([\w.]+):(\w+) -->")


def _schema(match: re.Match[str]) -> str:
    model = getattr(importlib.import_module(match.group(1)), match.group(2))
    text = json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False)
    return f"```json\n{text}\n```"


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _with_architecture(_with_cli_reference(MARKER.sub(_schema, markdown)))


CLI_MARKER = "<!-- cli-reference -->"


def _cli_reference() -> str:
    """``structbench --help`` and every command's ``--help``, as the command prints them."""
    import os

    from typer.testing import CliRunner

    from structbench.cli.app import app

    env = {"COLUMNS": "110", "NO_COLOR": "1", "TERM": "dumb", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    os.environ.update(env)
    runner = CliRunner()
    parts = []
    commands = [None, "list", "embedded-model", "run", "export", "score", "report", "compare", "view", "convert",
                "publish"]
    for name in commands:
        args = [name, "--help"] if name else ["--help"]
        result = runner.invoke(app, args, prog_name="structbench", env=env)
        if result.exit_code != 0:
            raise RuntimeError(f"structbench {' '.join(args)} failed: {result.output}")
        title = f"structbench {name}" if name else "structbench"
        parts.append(f"## `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "\n".join(parts)


def _with_cli_reference(markdown: str) -> str:
    return markdown.replace(CLI_MARKER, _cli_reference()) if CLI_MARKER in markdown else markdown


ARCHITECTURE_MARKER = "<!-- architecture -->"


def _with_architecture(markdown: str) -> str:
    """``<!-- architecture -->``: the layers as the code's imports draw them (``structbench.testing.architecture``)."""
    if ARCHITECTURE_MARKER not in markdown:
        return markdown
    from pathlib import Path

    import structbench
    from structbench.testing.architecture import import_graph, layer_diagram

    graph = import_graph(Path(structbench.__file__).resolve().parents[1])
    return markdown.replace(ARCHITECTURE_MARKER, layer_diagram(graph))
