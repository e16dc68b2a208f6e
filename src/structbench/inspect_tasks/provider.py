"""structbench's backends as an Inspect model provider: ``--model structbench/BACKEND[:NAME]``.

``structbench/oracle`` answers every request with the gold answer (the pipeline check of ``structbench run
--model oracle``, inside Inspect), ``structbench/llamacpp`` runs the embedded model offline; ``-M KEY=VALUE``
model arguments are the backend's ``--model-option`` settings.
"""

from __future__ import annotations

from typing import Any

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
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        spec = BackendSpec.parse(model_name, base_url=base_url,
                                 options={k: str(v) for k, v in model_args.items()})
        self.backend: Backend = make_backend(spec)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        response = await self.backend.generate(_request(input, config))
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=_content(c), model=self.model_name),
                                          stop_reason="max_tokens" if c.finish_reason == "length" else "stop")
                     for c in response.choices],
            usage=ModelUsage(input_tokens=response.prompt_tokens or 0, output_tokens=response.completion_tokens or 0,
                             total_tokens=(response.prompt_tokens or 0) + (response.completion_tokens or 0)),
        )

    async def aclose(self) -> None:
        await self.backend.aclose()
