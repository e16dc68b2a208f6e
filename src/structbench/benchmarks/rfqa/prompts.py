"""RFQA's prompts, quoted from the paper's Appendix C (Figures 5, 6 and 7), and the JSON Schema.

The paper's figures, verbatim (italic placeholders in braces):

- Figure 5 (NL), start prompt: "{NL Question}. Respond with JSON only. Don't add any comments. Use
  the following JSON schema: {jsonSchema}."
- Figure 6 (SQL), start prompt: "List the results of the SQL query: {SQL}. Respond with JSON only.
  Don't add any comments. Use the following JSON schema: {jsonSchema}."
- Figure 7 (CoT), first prompt: "Given the following query, populate the table with actual values.
  query: select {attributes} from {table} (where {conditions}). Respond with JSON only. Don't add any
  comments. Use the following JSON schema: {jsonSchema}." (the where part only when there are
  conditions)
- All three, iterative prompt: "List more values if there are more, otherwise return an empty JSON.
  Respond with JSON only."

The re-prompt for malformed JSON is not given in the paper ("we re-prompt the LLM, explicitly asking
it to return the answer in valid JSON format"); we use the released code's text
(galois ``EPrompts.ERROR_JSON_FORMAT``).

The JSON Schema follows the released code (galois ``QueryUtils.generateJsonSchemaListFromAttributes``):
an array titled with the table name whose items are objects with one titled property per attribute,
typed ``integer`` for integer columns, ``number`` for real ones and ``string`` otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

NL_FIRST = "{question} Respond with JSON only. Don't add any comments. Use the following JSON schema: {schema}."
SQL_FIRST = (
    "List the results of the SQL query: {sql}. Respond with JSON only. Don't add any comments. "
    "Use the following JSON schema: {schema}."
)
COT_FIRST = (
    "Given the following query, populate the table with actual values. query: {query}. "
    "Respond with JSON only. Don't add any comments. Use the following JSON schema: {schema}."
)
ITERATIVE = "List more values if there are more, otherwise return an empty JSON. Respond with JSON only."
INVALID_JSON = "Respond in an appropriate JSON format."

_JSON_TYPES = {"BIGINT": "integer", "INTEGER": "integer", "HUGEINT": "integer", "DOUBLE": "number", "FLOAT": "number"}


def json_type(db_type: str) -> str:
    """The JSON Schema type of a DuckDB column type (integer, number or string)."""
    return _JSON_TYPES.get(
        db_type.split("(")[0].upper(), "number" if db_type.upper().startswith("DECIMAL") else "string"
    )


def json_schema(title: str, columns: Sequence[str], types: Sequence[str]) -> dict[str, Any]:
    """The output table's JSON Schema: an array of objects, one property per attribute."""
    properties = {c: {"title": c, "type": json_type(t)} for c, t in zip(columns, types, strict=True)}
    return {"title": title, "type": "array", "items": {"type": "object", "properties": properties}}


def schema_text(schema: dict[str, Any]) -> str:
    """The schema as injected in prompts (compact JSON)."""
    return json.dumps(schema, ensure_ascii=False)


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``json_schema`` response format for the table (wrapped: the top level must be an object)."""
    wrapped = {"type": "object", "properties": {"rows": schema}, "required": ["rows"]}
    return {"type": "json_schema", "json_schema": {"name": "table", "schema": wrapped, "strict": False}}


def nl_prompt(question: str, schema: dict[str, Any]) -> str:
    """Figure 5's start prompt."""
    return NL_FIRST.format(question=question.strip(), schema=schema_text(schema))


def sql_prompt(sql: str, schema: dict[str, Any]) -> str:
    """Figure 6's start prompt."""
    return SQL_FIRST.format(sql=sql.strip().rstrip(";"), schema=schema_text(schema))


def cot_query(table: str, attributes: Sequence[str], conditions: str | None) -> str:
    """Figure 7's ``select attributes from table (where conditions)``."""
    query = f"select {', '.join(attributes)} from {table}"
    return f"{query} where {conditions}" if conditions else query


def cot_prompt(table: str, attributes: Sequence[str], conditions: str | None, schema: dict[str, Any]) -> str:
    """Figure 7's first prompt."""
    return COT_FIRST.format(query=cot_query(table, attributes, conditions), schema=schema_text(schema))
