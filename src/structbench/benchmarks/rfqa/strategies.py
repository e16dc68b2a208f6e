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

Under ``reading=galois`` the conversation and the reading are galois' at the time of the paper
(``retrieve_galois``, see ``galois.py``), on each reply as the model wrote it, a reasoning model's thought
included, as galois read it; ``replay`` reads the same replies structbench's way, on their answers alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import duckdb

from structbench.backends.base import Request, Response
from structbench.benchmarks.rfqa import cot, galois, prompts
from structbench.benchmarks.rfqa.parsing import RowMerger, parse_table
from structbench.contract.benchmark import AnswerFormat, Attempt, Generate, Strategy
from structbench.core.errors import DataError
from structbench.data.sample import Sample

Reading = Literal["structbench", "galois"]
"""How replies are read and the conversation run: structbench's way, or galois' at the time of the paper."""


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
    reading: Reading = "structbench"
    """``galois``: galois' conversation and reading (``iterations`` is then its ``maxIterations``, the calls)."""


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
    merged = RowMerger(columns, out.rows)
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
        added = merged.add(records)
        entry["rows"], entry["new_rows"] = len(records), added
        out.rounds.append(entry)
        if not records or not added or round_no == settings.iterations:
            break
        request = request.with_reply(reply, prompts.ITERATIVE)
    return out


def _window(request: Request) -> Request:
    """The request as LangChain4j's chat memory sends it: its last ``galois.MAX_MESSAGES`` messages."""
    assert request.messages is not None
    return replace(request, messages=request.messages[-galois.MAX_MESSAGES :])


async def retrieve_galois(
    first: Request,
    generate: Generate,
    settings: RetrievalSettings,
    typed: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
) -> Retrieval:
    """galois' conversation (``galois.py``): at most ``settings.iterations`` calls; stop at a blank reply, an empty
    list or no new tuple; tuples already read (in the same reply too) dropped; an unreadable reply re-prompted once
    and the loop going on. ``typed`` reads each object as CoT's ``mapToTuple`` does (whose re-prompted tuples
    galois drops); without it, objects are kept as the model wrote them (NL, SQL)."""
    out = Retrieval(valid=False)
    seen: set[str] = set()

    def add(records: Sequence[Mapping[str, Any] | None]) -> int:
        added = 0
        for record in records:
            if record is None:  # galois dereferences it: NullPointerException, caught as an unreadable reply
                raise galois.Unreadable("a null object")
            row = typed(record) if typed is not None else dict(record)
            identity = galois.tuple_identity(row)
            if identity not in seen:
                seen.add(identity)
                out.rows.append(row)
                added += 1
        return added

    request = first
    reply = ""
    for round_no in range(settings.iterations):
        if round_no:
            request = request.with_reply(reply, prompts.ITERATIVE)
        reply, answer = _as_written(await generate(_window(request)))
        out.last_reply = reply
        entry: dict[str, Any] = {"round": round_no, "reply": reply, **answer}
        out.rounds.append(entry)
        try:
            if not reply.strip():
                entry["stop"] = "blank reply"
                break
            records = galois.parse_rows(reply)
            out.valid = True
            entry["rows"] = len(records)
            if not records:
                break
            entry["new_rows"] = add(records)
            if not entry["new_rows"]:
                break
        except galois.Unreadable as err:
            entry["recovery"] = f"invalid: {err}"
            request = request.with_reply(reply, prompts.INVALID_JSON)
            reply, answer = _as_written(await generate(_window(request)))
            out.last_reply = reply
            entry["reprompt_reply"] = reply
            if answer:
                entry["reprompt_answer"] = answer["answer"]
            try:
                records = galois.parse_rows(reply)
                out.valid = True
                if typed is None:
                    entry["reprompt_new_rows"] = add(records)
            except galois.Unreadable:
                pass
    return out


def _as_written(response: Response) -> tuple[str, dict[str, str]]:
    """A reply as the model wrote it, a thought included (galois read the whole reply), and, where a thought was
    taken out, ``{"answer": ...}``: what structbench's reading of the same reply reads."""
    choice = response.choices[0]
    return choice.as_written, ({"answer": choice.text} if choice.raw is not None else {})


def replay(rounds: Sequence[Mapping[str, Any]], columns: list[str]) -> list[dict[str, Any]]:
    """The rows structbench's reading takes from the replies of a conversation (its rounds, re-prompts included):
    each reply's answer, never its thought."""
    merged = RowMerger(columns)
    for entry in rounds:
        for key, answer in (("reply", "answer"), ("reprompt_reply", "reprompt_answer")):
            if key in entry:
                records, _ = parse_table(entry.get(answer, entry[key]), columns)
                merged.add(records or [])
    return merged.rows


def _request(text: str, schema: dict[str, Any], settings: RetrievalSettings) -> Request:
    fmt = prompts.response_format(schema) if settings.structured_output else None
    return Request.chat(text, max_tokens=settings.max_tokens, temperature=0.0, response_format=fmt)


def first_request(sample: Sample, method: str, settings: RetrievalSettings) -> Request:
    """The NL or SQL method's start prompt for ``sample``."""
    schema = sample.extra["json_schema"]
    if settings.wording == "published":
        published = sample.extra.get("published_schema")
        if published is None:
            raise DataError(f"rfqa {sample.id}: prompt_wording=published needs galois' declaration of the table "
                            f"{sample.extra.get('scanned_table')!r}, which its experiment configs do not have")
        text = prompts.published_prompt("nl" if method == "nl" else "sql",
                                        sample.question if method == "nl" else sample.extra["sql"], published)
    elif method == "nl":
        text = prompts.nl_prompt(sample.question, schema, settings.wording)
    else:
        text = prompts.sql_prompt(sample.extra["sql"], schema, settings.wording)
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
        first = first_request(sample, self.method, settings)
        if settings.reading == "galois":
            got = await retrieve_galois(first, generate, settings)
        else:
            got = await retrieve(first, columns, generate, settings)
        output = _output(got.rows) if got.valid else got.last_reply
        return Attempt(output=output, artifacts={"valid": got.valid, "rounds": got.rounds, "reading": settings.reading})


class ChainOfThought(Strategy):
    """CoT: base data per table from the model, the rest of the query in memory."""

    name = "cot"
    description = "Ask for each table's base data (Figure 7), then run the SQL in memory over it."
    answer = AnswerFormat(derived=True)
    """The output is the query's result over the rows the model listed (its repeated tuples count)."""

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
            if settings.reading == "galois":
                got = await retrieve_galois(request, generate, settings, galois.base_reader(base.columns, base.types))
            else:
                got = await retrieve(request, base.columns, generate, settings)
            rows[base.table], rounds[base.table] = got.rows, got.rounds
            valid = valid and got.valid
            last_reply = got.last_reply if not got.valid else last_reply
        artifacts: dict[str, Any] = {
            "valid": valid,
            "rounds": rounds,
            "base_rows": {t: len(r) for t, r in rows.items()},
            "reading": settings.reading,
        }
        if not valid:
            return Attempt(output=last_reply, artifacts=artifacts)
        result, error = run_query(sample, rows)
        if error:
            artifacts["execution_error"] = error
        return Attempt(output=_output(result), artifacts=artifacts)


def run_query(sample: Sample, rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[list[dict[str, Any]], str]:
    """The sample's SQL over the base rows read for each table: its result, and the error when it cannot run."""
    bases = [cot.BaseQuery.from_json(d) for d in sample.extra["cot"]]
    try:
        return cot.execute(sample.extra["sql"], bases, rows, list(sample.extra["columns"])), ""
    except duckdb.Error as err:
        return [], str(err)


def build_strategies(settings: Callable[[], RetrievalSettings]) -> dict[str, Strategy]:
    """The three methods by name."""
    return {
        "nl": DirectRetrieval("nl", settings, "The NL question and the output's JSON Schema (Figure 5), iterated."),
        "sql": DirectRetrieval("sql", settings, "The SQL query and the output's JSON Schema (Figure 6), iterated."),
        "cot": ChainOfThought(settings),
    }
