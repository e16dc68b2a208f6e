"""A run's request settings: system prompt, chat-template arguments, sampling, the token cap."""

from __future__ import annotations

import hashlib
import json

import pytest

from structbench.backends.base import GenerationParams, Message, Request, cache_key
from structbench.backends.mock import MockBackend
from structbench.backends.openai_compat import OpenAIBackend
from structbench.core.errors import UsageError
from structbench.runfiles.runconfig import Generation, RunConfig
from structbench.runner.settings import RequestSettings


def test_system_prompt_joins_the_requests_own_system_turn() -> None:
    settings = RequestSettings(system_prompt="Be brief.")
    plain = settings.apply(Request.chat("Q?"))
    assert plain.messages == (Message("system", "Be brief."), Message("user", "Q?"))
    joined = settings.apply(Request.chat("Q?", system="You read tables."))
    assert joined.messages == (Message("system", "Be brief.\n\nYou read tables."), Message("user", "Q?"))
    completion = Request(prompt="Q?")
    assert settings.apply(completion) is completion


def test_sampling_replaces_and_max_tokens_caps() -> None:
    settings = RequestSettings(max_tokens=100, temperature=0.6, top_p=0.95, seed=7)
    long = settings.apply(Request.chat("Q?", max_tokens=4096, temperature=0.0)).params
    assert (long.max_tokens, long.temperature, long.top_p, long.seed) == (100, 0.6, 0.95, 7)
    short = settings.apply(Request.chat("Q?", max_tokens=16)).params
    assert short.max_tokens == 16
    untouched = Request.chat("Q?")
    assert RequestSettings().apply(untouched) is untouched


def test_chat_template_args_reach_the_body_and_the_cache_key_only_when_set() -> None:
    backend = OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1")
    request = Request.chat("Q?")
    with_args = RequestSettings(chat_template_args={"enable_thinking": False}).apply(request)
    assert with_args.params.chat_template_args == {"enable_thinking": False}
    _, body = backend._body(with_args)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in backend._body(request)[1]
    assert cache_key(backend, with_args) != cache_key(backend, request)
    assert request.params == GenerationParams()  # keys of requests without them are what they always were


def test_chat_template_args_are_refused_by_backends_that_cannot_send_them() -> None:
    with pytest.raises(UsageError, match="the mock backend cannot pass arguments to a chat template"):
        RequestSettings(chat_template_args={"enable_thinking": False}).check(MockBackend())
    RequestSettings(chat_template_args={"x": 1}).check(OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1"))


def test_fingerprint_is_unchanged_for_runs_without_request_settings() -> None:
    base = RunConfig(model="oracle", benches=["toy"])
    legacy = {k: v for k, v in base.model_dump().items()
              if k not in ("system_prompt", "chat_template_args", "generation", "model_options", "reasoning",
                           "allow_modified_data", "epochs", "sample", "sample_ids", "sweeps", "max_turns",
                           "turn_limit")}
    assert base.fingerprint() == hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()[:10]
    changed = base.model_copy(update={"generation": Generation(temperature=0.6)})
    assert changed.fingerprint() != base.fingerprint()
    assert base.model_copy(update={"model_options": {"dtype": "bfloat16"}}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"allow_modified_data": True}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"max_turns": 3}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"sweeps": {"serialization": ["csv", "json"]}}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"epochs": 3}).fingerprint() != base.fingerprint()  # repeats: another directory
    assert base.model_copy(update={"sample": 5}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"sample_ids": ["a"]}).fingerprint() != base.fingerprint()
    assert RunConfig.model_validate(legacy) == base  # manifests written before these fields still resume


def test_the_reasoning_budget_is_added_to_each_answer_budget_after_the_cap() -> None:
    settings = RequestSettings(max_tokens=100, reasoning_budget=1000)
    assert settings.apply(Request.chat("Q?", max_tokens=10)).params.max_tokens == 1010  # StructFact's 10
    assert settings.apply(Request.chat("Q?", max_tokens=4096)).params.max_tokens == 1100  # capped, then added
    assert RequestSettings(reasoning_budget=64).apply(Request(prompt="Q?", params=GenerationParams(
        max_tokens=64))).params.max_tokens == 128


def test_reasoning_effort_and_think_tags_reach_the_requests() -> None:
    settings = RequestSettings(reasoning_effort="low", think_tags=(("<t>", "</t>"),), thought_opened=True)
    chat = settings.apply(Request.chat("Q?")).params
    assert (chat.reasoning_effort, chat.think_tags, chat.thought_opened) == ("low", (("<t>", "</t>"),), True)
    completion = settings.apply(Request(prompt="Q?")).params
    assert completion.reasoning_effort is None and completion.thought_opened  # no effort on /completions
    with pytest.raises(UsageError, match="--reasoning-effort: the mock backend has no reasoning effort"):
        settings.check(MockBackend())
    settings.check(OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1"))


def test_a_runs_reasoning_settings_become_request_settings() -> None:
    config = RunConfig(model="oracle", benches=["toy"],
                       reasoning={"budget": 512, "effort": "high", "tags": [["<t>", "</t>"]], "opened": True})
    settings = RequestSettings.of(config)
    assert (settings.reasoning_budget, settings.reasoning_effort, settings.think_tags, settings.thought_opened) == (
        512, "high", (("<t>", "</t>"),), True)
    assert RunConfig.model_validate(json.loads(json.dumps(config.model_dump()))) == config  # as the manifest keeps it
    assert config.fingerprint() != RunConfig(model="oracle", benches=["toy"]).fingerprint()
