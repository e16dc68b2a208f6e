"""structbench's backends as an Inspect model provider: ``--model structbench/BACKEND[:NAME]``.

``structbench/oracle`` answers every request with the gold answer (the pipeline check of ``structbench run
--model oracle``, inside Inspect), ``structbench/llamacpp`` runs the embedded model offline. Inspect's
``--model-base-url`` is the server's address (``--base-url``); ``-M KEY=VALUE`` model arguments are the connection
settings of ``CONNECTION`` (as ``structbench run``'s flags of those names) and otherwise the backend's
``--model-option`` settings. Anything else is refused with one line naming the argument: a ``ModelArgError``, which
Inspect's command line prints without a traceback.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    Content,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from structbench.backends.base import Backend, Choice, GenerationParams, Message, Request
from structbench.backends.factory import BackendSpec, make_backend
from structbench.core.errors import UsageError
from structbench.runfiles.inspect_schema import model_usage_fields

CONNECTION = ("api_key_env", "concurrency", "timeout", "max_retries", "max_reply_mb")
"""The model arguments that say how the backend is reached rather than how it is loaded: ``structbench run``'s
connection flags, checked as it checks them."""


class ModelArgError(UsageError, PrerequisiteError):
    """A model argument the provider does not take: a ``UsageError`` to Python callers, and to Inspect's command line
    a prerequisite error, which it prints as the one line it is instead of a traceback."""

    def __init__(self, message: str) -> None:
        UsageError.__init__(self, message)
        self.message = message


def _option(value: Any) -> str:
    """A model argument's value as a ``--model-option`` text: Inspect's ``-M`` parses ``true`` and ``8192`` as YAML,
    so they come back as JSON (``true``, not Python's ``True``, which the backends' typed settings refuse)."""
    return value if isinstance(value, str) else json.dumps(value)


def backend_spec(model_name: str, base_url: str | None, api_key: str | None, model_args: dict[str, Any]) -> BackendSpec:
    """The backend ``structbench/<model_name>`` names, reached at ``base_url`` with ``model_args``; a ``ModelArgError``
    naming the argument when one is not valid."""
    from structbench.runner.arguments import check_arguments

    where = f"structbench/{model_name}"
    if api_key is not None:
        raise ModelArgError(f"{where}: -M api_key: the provider never takes a key itself (it would be in the "
                            "command's history); put it in an environment variable and name it with -M "
                            "api_key_env=NAME (default OPENAI_API_KEY)")
    connection = {k: v for k, v in model_args.items() if k in CONNECTION}
    try:
        check_arguments(connection, caller=where)
        spec = BackendSpec.parse(
            model_name, base_url=base_url,
            options={k: _option(v) for k, v in model_args.items() if k not in CONNECTION},
            **{k: v for k, v in connection.items() if k != "max_reply_mb"},
            **({"max_reply_bytes": int(connection["max_reply_mb"] * 2**20)} if "max_reply_mb" in connection else {}),
        )
    except UsageError as err:
        raise ModelArgError(str(err)) from None
    return spec


def _request(messages: list[ChatMessage], config: GenerateConfig) -> Request:
    params = GenerationParams(
        max_tokens=config.max_tokens if config.max_tokens is not None else GenerationParams.max_tokens,
        temperature=config.temperature if config.temperature is not None else 0.0,
        top_p=config.top_p if config.top_p is not None else 1.0,
        n=config.num_choices or 1,
        stop=tuple(config.stop_seqs or ()),
        seed=config.seed,
    )
    turns = tuple(Message(m.role, m.text) for m in messages if m.role in ("system", "user", "assistant"))
    return Request(messages=turns, params=params)


def _content(choice: Choice) -> str | list[Content]:
    """A choice as a message's content: the answer, after the thought as a reasoning part when there was one."""
    if choice.reasoning is None:
        return choice.text
    return [ContentReasoning(reasoning=choice.reasoning), ContentText(text=choice.text)]


@modelapi(name="structbench")
class StructbenchModel(ModelAPI):
    """An Inspect model served by one of structbench's backends."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, None, [], config or GenerateConfig())
        spec = backend_spec(model_name, base_url, api_key, model_args)
        try:
            self.backend: Backend = make_backend(spec, option_flag="-M")
        except UsageError as err:
            raise ModelArgError(f"structbench/{model_name}: {err}") from None

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        response = await self.backend.generate(_request(input, config))
        fields = model_usage_fields(response.prompt_tokens, response.completion_tokens,
                                    reasoning_tokens=response.reasoning_tokens, cached_tokens=response.cached_tokens)
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=_content(c), model=self.model_name),
                                          stop_reason="max_tokens" if c.finish_reason == "length" else "stop")
                     for c in response.choices],
            usage=ModelUsage(**fields) if fields is not None else None,
        )

    async def aclose(self) -> None:
        await self.backend.aclose()
