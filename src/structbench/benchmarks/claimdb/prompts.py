"""ClaimDB's agent prompt and tool, as the paper's released code (``claimdb/experiments.py``) has them.

The instructions are ``FACT_CHECKER_PROMPT_3SHOT``: the base prompt, the JSON Schema of the verdict object (pydantic's
``model_json_schema`` of the same model, ``indent=2``) and three output examples; the input is ``Claim: ...`` and
``Extra Information: ...``. The tool is MCP Toolbox's ``sqlite-execute-sql`` bound to the claim's database, named
``<db>_execute_sql`` and described as the paper's ``tools.yaml`` describes it; its one parameter is ``sql``.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field


# The verdict object the paper's agents return (their ``output_type``). No docstring: pydantic would put it in the
# JSON Schema the prompt prints, which the paper's class does not have.
class ClaimVerdict(BaseModel):
    verdict: Literal["ENTAILED", "CONTRADICTED", "NOT ENOUGH INFO"] = Field(
        ...,
        description="Whether the claim is supported, contradicted, or undecidable from the database."
    )
    justification: str = Field(
        ...,
        description="Brief justification (1-2 sentences) of the verdict."
    )


BASE_PROMPT = """
You are a fact-checking assistant operating over structured data. You will be given a natural-language claim and \
optional external information. You will have access to a SQLite database and may execute arbitrary SQL queries over \
it using specialized tools.

Your task is to determine whether the claim is "ENTAILED", "CONTRADICTED", or "NOT ENOUGH INFO" based on evidence you \
obtain from the database. The labels are defined as follows:

- ENTAILED: The claim is supported by the database.
- CONTRADICTED: The claim is refuted by the database.
- NOT ENOUGH INFO: The database does not provide sufficient evidence to decide.

Use the available tools to query the database and gather evidence before making a decision. Do not ask the user for \
clarification or additional information.

You should always start by querying the database for the schema (tables and columns).
"""

FACT_CHECKER_PROMPT = BASE_PROMPT + f"""
Your answer should be in JSON format, adhering to the following schema:
{json.dumps(ClaimVerdict.model_json_schema(), indent=2)}
"""

EXAMPLES = (
    """
Output Example 1:
{
    "verdict": "ENTAILED",
    "justification": "The database shows that the population of France is 67 million, which supports the claim."
}
""",
    """
Output Example 2:
{
    "verdict": "CONTRADICTED",
    "justification": "The database indicates that the capital of Germany is Berlin, contradicting the claim."
}
""",
    """
Output Example 3:
{
    "verdict": "NOT ENOUGH INFO",
    "justification": "The database does not contain any information about the population of Sacramento."
}
""",
)

INSTRUCTIONS = FACT_CHECKER_PROMPT + "\n" + "".join(EXAMPLES)
"""The system prompt (the paper's ``FACT_CHECKER_PROMPT_3SHOT``)."""

SCHEMA = ClaimVerdict.model_json_schema()


def user_input(claim: str, extra_info: str) -> str:
    """The agent's input, as the paper's ``Runner.run`` receives it."""
    return f"Claim: {claim}\nExtra Information: {extra_info}"


def database_title(db_name: str) -> str:
    """``formula_1`` -> ``Formula 1`` (the paper's ``convert_db_name``)."""
    return db_name.replace("_", " ").title()


def tool_name(db_name: str) -> str:
    return f"{db_name}_execute_sql"


def tool_description(db_name: str) -> str:
    return (f"Executes SQL queries on the SQLite {database_title(db_name)} database. The queries must be "
            "SQLite-compatible.")


TOOL_ARGUMENT = "sql"
TOOL_ARGUMENT_DESCRIPTION = "The sql to execute."
"""MCP Toolbox's ``sqlite-execute-sql`` parameter."""


def response_format() -> dict[str, object]:
    """The verdict object as an OpenAI ``response_format`` (the Agents SDK's structured output of ``output_type``)."""
    schema = dict(SCHEMA)
    schema["additionalProperties"] = False
    return {"type": "json_schema", "json_schema": {"name": "ClaimVerdict", "schema": schema, "strict": True}}
