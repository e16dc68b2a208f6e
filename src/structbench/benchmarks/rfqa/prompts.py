"""RFQA's prompts: the released code's (the default) and the paper's Appendix C (Figures 5, 6 and 7), and the
JSON Schema.

The start prompts exist in three wordings (``Wording``):

- ``published`` (the presets): what the published runs sent, as galois' LLM caches of them hold it (see
  ``published_runs``): the templates before galois' rewrite of 2025-05-10, NL "{question}\nRespond with JSON
  only. Don't add any comment.\nUse the following JSON schema:\n{schema}", SQL "List the result of the SQL
  query:\n{sql}.\nRespond with JSON only.\nUse the following JSON schema:\n{schema}" (the SQL as released, its
  ``;`` kept), where the schema is the *whole* table the query reads first as galois' config declares it
  (``published_schema_text``), not the output's; CoT's template is the released one (galois words its base
  queries in its own expression syntax, ``select a and b from t where x == "v"``, which structbench does not
  reproduce: its base queries are SQL).
- ``released`` (default): the templates of the released code the authors name for reproducing the paper
  (dbunibas/galois, branch ``reproducibility``; identical on ``neurips25``), ``EPrompts`` since the commit
  "Improved prompts for SQL and NL" of 2025-05-10, before the paper's first version (2025-05-27):
  NL "Question: {question}\nAssume you have access to a dataset with the following schema:\n{schema}\n\n
  Respond with JSON only. Don't add any comment", SQL "List the result of the SQL query:\n{sql}.\nAssume
  you have access to a dataset with the following schema:\n{schema}\n\nRespond with a JSON object
  containing only the answer. Do not include explanations or comments.", CoT "Given the following query,
  populate the table with actual values.\nquery: select ...\nRespond with JSON only. Don't add any
  comment.\nUse the following JSON schema:\n{schema}".
- ``paper``: the figures, verbatim (italic placeholders in braces): Figure 5 (NL) "{NL Question}. Respond
  with JSON only. Don't add any comments. Use the following JSON schema: {jsonSchema}." (the period after
  the question is left out when the question already ends in ".", "?" or "!"); Figure 6 (SQL) "List the
  results of the SQL query: {SQL}. Respond with JSON only. Don't add any comments. Use the following JSON
  schema: {jsonSchema}."; Figure 7 (CoT) "Given the following query, populate the table with actual
  values. query: select {attributes} from {table} (where {conditions}). Respond with JSON only. Don't add
  any comments. Use the following JSON schema: {jsonSchema}." These are the code's templates before
  May 2025 (with newlines), as the paper prints them.

All wordings share the iterative prompt "List more values if there are more, otherwise return an empty
JSON. Respond with JSON only." and the re-prompt for malformed JSON, which the paper does not give ("we
re-prompt the LLM, explicitly asking it to return the answer in valid JSON format"): the released code's
text (galois ``EPrompts.ERROR_JSON_FORMAT``).

The JSON Schema follows the released code (galois ``QueryUtils.generateJsonSchemaListFromAttributes``):
an array titled with the table name whose items are objects with one titled property per attribute,
typed ``integer`` for integer columns, ``number`` for real ones and ``string`` otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from structbench.benchmarks.rfqa import galois

Wording = Literal["released", "paper", "published"]
Method = Literal["nl", "sql", "cot"]

FIRST: dict[Wording, dict[Method, str]] = {
    "released": {
        "nl": "Question: {question}\nAssume you have access to a dataset with the following schema:\n{schema}\n\n"
        "Respond with JSON only. Don't add any comment",
        "sql": "List the result of the SQL query:\n{sql}.\nAssume you have access to a dataset with the following "
        "schema:\n{schema}\n\nRespond with a JSON object containing only the answer. Do not include explanations "
        "or comments.",
        "cot": "Given the following query, populate the table with actual values.\nquery: {query}.\n"
        "Respond with JSON only. Don't add any comment.\nUse the following JSON schema:\n{schema}",
    },
    "paper": {
        "nl": "{question} Respond with JSON only. Don't add any comments. Use the following JSON schema: {schema}.",
        "sql": "List the results of the SQL query: {sql}. Respond with JSON only. Don't add any comments. "
        "Use the following JSON schema: {schema}.",
        "cot": "Given the following query, populate the table with actual values. query: {query}. "
        "Respond with JSON only. Don't add any comments. Use the following JSON schema: {schema}.",
    },
    "published": {
        "nl": "{question}\nRespond with JSON only. Don't add any comment.\nUse the following JSON schema:\n{schema}",
        "sql": "List the result of the SQL query:\n{sql}.\nRespond with JSON only.\nUse the following JSON schema:\n"
        "{schema}",
        "cot": "Given the following query, populate the table with actual values.\nquery: {query}.\n"
        "Respond with JSON only. Don't add any comment.\nUse the following JSON schema:\n{schema}",
    },
}
"""The start prompts of each method in each wording (see the module docstring)."""
COT_OPENING = "Given the following query, populate the table with actual values."
"""How every CoT first prompt starts, in either wording."""
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


_GALOIS_TYPES = {"REAL": "number", "INTEGER": "integer"}


def published_schema_text(table: str, attributes: Sequence[tuple[str, str]]) -> str:
    """The JSON Schema galois' published runs sent for NL and SQL (``generateJsonSchemaListFromAttributes``): the
    whole table as its experiment config declares it, ``(name, type)`` in the config's order, written by Jackson
    from Java ``HashMap``s (their iteration order, not the config's)."""
    properties = [(name, [("title", name), ("type", _GALOIS_TYPES.get(kind.upper(), "string"))])
                  for name, kind in attributes]
    return galois.java_json([("title", table), ("type", "array"),
                             ("items", [("type", "object"), ("properties", properties)])])


def published_prompt(method: Method, text: str, schema_text: str) -> str:
    """The NL or SQL start prompt of the published runs: the question or the SQL as released, and
    ``published_schema_text``."""
    key = "question" if method == "nl" else "sql"
    return FIRST["published"][method].format(**{key: text, "schema": schema_text})


def nl_prompt(question: str, schema: dict[str, Any], wording: Wording = "released") -> str:
    """The NL method's start prompt (Figure 5 in the paper's wording)."""
    question = question.strip()
    if wording == "paper" and not question.endswith((".", "?", "!")):
        question += "."
    return FIRST[wording]["nl"].format(question=question, schema=schema_text(schema))


def sql_prompt(sql: str, schema: dict[str, Any], wording: Wording = "released") -> str:
    """The SQL method's start prompt (Figure 6 in the paper's wording)."""
    return FIRST[wording]["sql"].format(sql=sql.strip().rstrip(";"), schema=schema_text(schema))


def cot_query(table: str, attributes: Sequence[str], conditions: str | None) -> str:
    """Figure 7's ``select attributes from table (where conditions)``."""
    query = f"select {', '.join(attributes)} from {table}"
    return f"{query} where {conditions}" if conditions else query


def cot_prompt(
    table: str, attributes: Sequence[str], conditions: str | None, schema: dict[str, Any], wording: Wording = "released"
) -> str:
    """The CoT method's first prompt for one base table (Figure 7 in the paper's wording)."""
    return FIRST[wording]["cot"].format(query=cot_query(table, attributes, conditions), schema=schema_text(schema))
