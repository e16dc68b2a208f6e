"""Response cache: keys, persistence, what is never stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from structbench.backends.base import CACHE_KEY_FIELDS, Choice, Request, Response, cache_fields, cache_key
from structbench.backends.openai_compat import OpenAIBackend
from structbench.runner.cache import ResponseCache


def test_key_depends_on_exactly_the_documented_fields() -> None:
    a = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-secret-1", timeout=5, max_retries=1)
    b = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-other-2", timeout=99, max_retries=9)
    req = Request.chat("hello", max_tokens=5)
    assert cache_key(a, req) == cache_key(b, req)  # key, timeout and retries are not in the key
    assert cache_key(a, req) != cache_key(a, Request.chat("hello", max_tokens=6))
    assert cache_key(a, req) != cache_key(a, Request.chat("hello", max_tokens=5, temperature=0.5))
    assert cache_key(a, req) != cache_key(a, Request(prompt="hello"))
    c = OpenAIBackend("m", base_url="http://127.0.0.1:2/v1")
    assert cache_key(a, req) != cache_key(c, req)
    assert "messages_or_prompt" in CACHE_KEY_FIELDS and "timeout" not in CACHE_KEY_FIELDS


def test_cache_survives_reopen_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-very-secret")
    req = Request.chat("question?")
    cache = ResponseCache(path)
    cache.put(cache_key(backend, req), backend.model, cache_fields(backend, req), Response(choices=(Choice(text="A"),)))
    cache.close()
    again = ResponseCache(path)
    got = again.get(cache_key(backend, req))
    assert got is not None and got.text == "A"
    assert len(again) == 1
    again.close()
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert "sk-very-secret" not in dump
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_entries_written_by_another_connection_are_seen(tmp_path: Path) -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("shared?")
    reader = ResponseCache(tmp_path / "c.sqlite")
    writer = ResponseCache(tmp_path / "c.sqlite")
    assert reader.get(cache_key(backend, req)) is None
    writer.put(cache_key(backend, req), "m", cache_fields(backend, req), Response(choices=(Choice(text="B"),)))
    got = reader.get(cache_key(backend, req))
    assert got is not None and got.text == "B"


def test_edited_mock_script_is_another_model(tmp_path: Path) -> None:
    import json

    from structbench.backends.factory import BackendSpec
    from structbench.backends.mock import from_spec

    script = tmp_path / "m.json"
    script.write_text(json.dumps({"default": "yes"}))
    first = from_spec(BackendSpec(backend="mock", name=str(script)))
    script.write_text(json.dumps({"default": "no"}))
    second = from_spec(BackendSpec(backend="mock", name=str(script)))
    req = Request.chat("q")
    assert cache_key(first, req) != cache_key(second, req)
