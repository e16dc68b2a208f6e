"""The paper's three retrieval methods (section 4), all iterative: NL, SQL and CoT.

Each conversation starts with the method's prompt (``prompts.py``); after a non-empty answer the
model is asked "List more values if there are more, otherwise return an empty JSON" (as a chat
follow-up, the whole conversation resent) up to ``iterations`` times, and the rows are merged. The
loop stops at an empty answer, an answer with no new row, an unrecoverable answer, or the limit.
A reply that JSON recovery cannot read gets one re-prompt for valid JSON; if that fails too, the
iteration ends and, when it was the first answer, the whole answer is invalid.

``Attempt.output`` is what ``score`` parses, also from a predictions file: the merged table as a JSON
array of objects (for CoT, the result of the query run in memory), or, for an invalid answer, the
model's last raw reply. The raw rounds are kept in ``Attempt.artifacts["rounds"]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from structbench.backends.base import Request
from structbench.benchmark import Attempt, Generate, Strategy
from structbench.benchmarks.rfqa import cot, prompts
from structbench.benchmarks.rfqa.parsing import merge_new, parse_table
from structbench.data.sample import Sample
from structbench.errors import DataError


@dataclass(frozen=True)
class RetrievalSettings:
    """How the conversations are run (from the benchmark's options)."""

    iterations: int = 10
    """Follow-up "List more values" rounds after the first answer."""
    max_tokens: int = 4096
    structured_output: bool = False
    """Send the table's JSON Schema as ``response_format`` (backends that support it enforce it)."""
    wording: prompts.Wording = "released"
    """The start prompts' wording: the released code's or the paper's figures'."""


@dataclass
class Retrieval:
    """The merged rows of one conversation and what happened in it."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    valid: bool = True
    last_reply: str = ""


async def retrieve(first: Request, columns: list[str], generate: Generate, settings: RetrievalSettings) -> Retrieval:
    """Run one iterative conversation starting with ``first``; see the module docstring."""
    out = Retrieval()
    request = first
    for round_no in range(settings.iterations + 1):
        reply = (await generate(request)).text
        out.last_reply = reply
        records, how = parse_table(reply, columns)
        entry: dict[str, Any] = {"round": round_no, "reply": reply, "recovery": how}
        if records is None:
            request = request.with_reply(reply, prompts.INVALID_JSON)
            reply = (await generate(request)).text
            out.last_reply = reply
            records, how = parse_table(reply, columns)
            entry.update(reprompt_reply=reply, reprompt_recovery=how)
            if records is None:
                out.rounds.append(entry)
                out.valid = round_no > 0
                break
        added = merge_new(out.rows, records, columns)
        entry["rows"], entry["new_rows"] = len(records), added
        out.rounds.append(entry)
        if not records or not added or round_no == settings.iterations:
            break
        request = request.with_reply(reply, prompts.ITERATIVE)
    return out


def _request(text: str, schema: dict[str, Any], settings: RetrievalSettings) -> Request:
    fmt = prompts.response_format(schema) if settings.structured_output else None
    return Request.chat(text, max_tokens=settings.max_tokens, temperature=0.0, response_format=fmt)


def first_request(sample: Sample, method: str, settings: RetrievalSettings) -> Request:
    """The NL or SQL method's start prompt for ``sample``."""
    schema = sample.extra["json_schema"]
    text = (
        prompts.nl_prompt(sample.question, schema, settings.wording)
        if method == "nl"
        else prompts.sql_prompt(sample.extra["sql"], schema, settings.wording)
    )
    return _request(text, schema, settings)


def base_requests(sample: Sample, settings: RetrievalSettings) -> list[tuple[cot.BaseQuery, Request]]:
    """The CoT method's first prompt for each base table of ``sample``."""
    out = []
    for data in sample.extra["cot"]:
        base = cot.BaseQuery.from_json(data)
        schema = prompts.json_schema(base.table, base.columns, base.types)
        text = prompts.cot_prompt(base.table, base.columns, base.conditions, schema, settings.wording)
        out.append((base, _request(text, schema, settings)))
    return out


def _output(rows: list[dict[str, Any]]) -> str:
    return json.dumps(rows, ensure_ascii=False, default=str)


class DirectRetrieval(Strategy):
    """NL or SQL: the query itself (question or SQL) and the output table's JSON Schema."""

    def __init__(self, method: str, settings: Callable[[], RetrievalSettings], description: str) -> None:
        self.name = method
        self.method = method
        self.settings = settings
        self.description = description

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        settings = self.settings()
        columns = list(sample.extra["columns"])
        got = await retrieve(first_request(sample, self.method, settings), columns, generate, settings)
        output = _output(got.rows) if got.valid else got.last_reply
        return Attempt(output=output, artifacts={"valid": got.valid, "rounds": got.rounds})


class ChainOfThought(Strategy):
    """CoT: base data per table from the model, the rest of the query in memory."""

    name = "cot"
    description = "Ask for each table's base data (Figure 7), then run the SQL in memory over it."

    def __init__(self, settings: Callable[[], RetrievalSettings]) -> None:
        self.settings = settings

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        if sample.extra.get("cot") is None:
            raise DataError(
                f"rfqa {sample.id}: the CoT method needs the item's source tables, which are not at hand "
                "(pass --option data=CSV_FILE_OR_FOLDER)"
            )
        settings = self.settings()
        rows: dict[str, list[dict[str, Any]]] = {}
        rounds: dict[str, list[dict[str, Any]]] = {}
        valid = True
        last_reply = ""
        for base, request in base_requests(sample, settings):
            got = await retrieve(request, base.columns, generate, settings)
            rows[base.table], rounds[base.table] = got.rows, got.rounds
            valid = valid and got.valid
            last_reply = got.last_reply if not got.valid else last_reply
        artifacts: dict[str, Any] = {
            "valid": valid,
            "rounds": rounds,
            "base_rows": {t: len(r) for t, r in rows.items()},
        }
        if not valid:
            return Attempt(output=last_reply, artifacts=artifacts)
        bases = [cot.BaseQuery.from_json(d) for d in sample.extra["cot"]]
        try:
            result = cot.execute(sample.extra["sql"], bases, rows, list(sample.extra["columns"]))
        except duckdb.Error as err:
            artifacts["execution_error"] = str(err)
            result = []
        return Attempt(output=_output(result), artifacts=artifacts)


def build_strategies(settings: Callable[[], RetrievalSettings]) -> dict[str, Strategy]:
    """The three methods by name."""
    return {
        "nl": DirectRetrieval("nl", settings, "The NL question and the output's JSON Schema (Figure 5), iterated."),
        "sql": DirectRetrieval("sql", settings, "The SQL query and the output's JSON Schema (Figure 6), iterated."),
        "cot": ChainOfThought(settings),
    }
