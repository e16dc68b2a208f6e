"""A prompt too long for the model, in each server's words, and the context a model list announces."""

from __future__ import annotations

import json

import pytest

from structbench.backends.server_context import context_refusal, listed_context, props_context

REFUSALS = [
    # OpenAI's API
    (400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 14937 "
                                "tokens (10841 in the messages, 4096 in the completion). Please reduce the length of "
                                "the messages or completion.", "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}}, 8192),
    # vLLM's OpenAI server, before and since 0.10
    (400, {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested "
                                         "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce "
                                         "the length of the messages or completion.", "type": "BadRequestError"}, 4096),
    (400, {"error": {"message": "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
                                "context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - "
                                "2778). None", "type": "BadRequestError", "param": None, "code": 400}}, 4096),
    # vLLM's engine
    (400, {"object": "error", "message": "The decoder prompt (length 12324) is longer than the maximum model length "
                                         "of 8192. Make sure that `max_model_len` is no smaller than the number of "
                                         "text tokens."}, 8192),
    # llama.cpp's server, with status 500 before late 2025, then 400 with the sizes in the message
    (500, {"error": {"code": 500, "message": "the request exceeds the available context size. try increasing the "
                                             "context size or enable context shift",
                     "type": "exceed_context_size_error", "n_prompt_tokens": 1407, "n_ctx": 256}}, 256),
    (400, {"error": {"code": 400, "message": "request (4390 tokens) exceeds the available context size (4096 tokens), "
                                             "try increasing it", "type": "exceed_context_size_error",
                     "n_prompt_tokens": 4390, "n_ctx": 4096}}, 4096),
    # SGLang, prompt alone and prompt plus max_tokens
    (400, {"object": "error", "message": "The input (9000 tokens) is longer than the model's context length (8192 "
                                         "tokens).", "type": "BadRequestError", "code": 400}, 8192),
    (400, {"object": "error", "message": "Requested token count exceeds the model's maximum context length of 64000 "
                                         "tokens. You requested a total of 71897 tokens: 7897 tokens from the input "
                                         "messages and 64000 tokens for the completion. Please reduce the number of "
                                         "tokens in the input messages or the completion to fit within the limit.",
                                         "type": "BadRequestError", "code": 400}, 64000),
    # Hugging Face TGI
    (422, {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` "
                    "tokens and 100 `max_new_tokens`", "error_type": "validation"}, 4096),
]


@pytest.mark.parametrize(("status", "body", "context"), REFUSALS)
def test_every_servers_wording_is_a_context_refusal(status: int, body: dict[str, object], context: int) -> None:
    assert context_refusal(status, json.dumps(body)) == context


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "The model `m` does not exist.", "code": "model_not_found"}}),
        (400, {"object": "error", "message": "temperature must be non-negative", "type": "BadRequestError"}),
        (500, {"error": {"message": "CUDA error: out of memory"}}),
        (429, {"error": {"message": "Rate limit reached"}}),
        (200, {"choices": [{"message": {"content": "maximum context length is 5 tokens"}}]}),  # a reply, not an error
    ],
)
def test_other_errors_are_not(status: int, body: dict[str, object]) -> None:
    assert context_refusal(status, json.dumps(body)) is False


def test_a_refusal_without_a_number_still_counts() -> None:
    assert context_refusal(400, '{"error": {"code": "context_length_exceeded", "message": "too long"}}') is None


def test_the_context_a_model_list_gives() -> None:
    vllm = {"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768}]}
    assert listed_context(vllm, "Qwen/Qwen2.5-7B") == (32768, False)
    assert listed_context(vllm, "another") == (32768, False)  # the only model served
    two = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 8192}]}
    assert listed_context(two, "b") == (8192, False) and listed_context(two, "c") == (None, False)
    llama = {"data": [{"id": "gemma.gguf", "meta": {"n_ctx_train": 32768, "n_vocab": 262144}}]}
    assert listed_context(llama, "gemma.gguf") == (32768, True)  # an upper bound: /props says what it serves
    assert props_context({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert listed_context({"data": [{"id": "gpt-4o-mini", "object": "model"}]}, "gpt-4o-mini") == (None, False)
    assert listed_context({"error": "nope"}, "m") == (None, False) and props_context(None) is None
