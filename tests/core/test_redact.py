"""Redaction: registered secrets, credentials in headers and URLs, OpenAI-style keys; and what it leaves alone."""

from __future__ import annotations

import json

import pytest

from structbench.core import redact as redact_module
from structbench.core.redact import redact, redact_url, register_secret, split_userinfo


@pytest.fixture
def no_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the secrets other tests of this process registered: a test that compares ``redact`` with the pattern
    alone would see their pieces masked too (``sk-...0123456789abcdef``), depending on which files ran before."""
    monkeypatch.setattr(redact_module, "_secrets", set())
    monkeypatch.setattr(redact_module, "_blocks", {})


def test_registered_secrets_go_everywhere_they_appear() -> None:
    register_secret("my-key-7f3a\"9q")
    text = 'a {"error": "bad key my-key-7f3a\\"9q"} and raw my-key-7f3a"9q'
    assert redact(text) == 'a {"error": "bad key [REDACTED]"} and raw [REDACTED]'
    assert json.loads(redact(json.dumps({"e": "key my-key-7f3a\"9q"}))) == {"e": "key [REDACTED]"}


def test_credentials_in_headers_urls_and_key_shapes() -> None:
    assert redact("Authorization: Bearer abc.def") == "Authorization: [REDACTED]"
    assert redact('{"authorization": "Basic dXNlcjpwdw=="}') == '{"authorization": "[REDACTED]"}'
    assert redact("sent Bearer eyJhbGciOiJIUzI1NiJ9x") == "sent Bearer [REDACTED]"
    assert redact("see http://bob:hunter2@host:8080/v1") == "see http://bob:[REDACTED]@host:8080/v1"
    assert redact("key sk-proj-AbCdEfGhIjKlMnOpQrSt.") == "key [REDACTED]."


def test_ordinary_text_is_left_alone() -> None:
    text = "basic arithmetic; the bearer of news; http://host:8080/v1; a task-abcdefghijklmnopqrst id; structext:test"
    register_secret("test")  # too short to remove everywhere
    assert redact(text) == text


def test_url_userinfo() -> None:
    assert split_userinfo("http://al%40ce:p%2Fw@h:1/v1?q=1") == ("http://h:1/v1?q=1", "al@ce", "p/w")
    assert redact_url("https://alice:s3cret-pw@example.org/v1") == "https://alice:[REDACTED]@example.org/v1"
    assert redact_url("https://example.org/v1") == "https://example.org/v1"
    assert redact("failed: https://example.org/s3cret-pw") == "failed: https://example.org/[REDACTED]"


def test_a_credential_in_a_urls_query_is_masked_and_registered() -> None:
    """``--base-url http://h/v1?api_key=KEY`` is stored and shown without KEY (the configuration keeps only what
    registered secrets leave), and KEY is removed wherever else it appears; other parameters stay."""
    url = "http://127.0.0.1:1234/v1?api-version=2024-06&api_key=QueryKey0123456789xyz&sig=Sig%2Fvalue-987654321"
    assert redact_url(url) == "http://127.0.0.1:1234/v1?api-version=2024-06&api_key=[REDACTED]&sig=[REDACTED]"
    assert redact_url("http://u:pw-0123456789@h/v1?key=k0123456789abcdef") == "http://u:[REDACTED]@h/v1?key=[REDACTED]"
    assert redact("the key QueryKey0123456789xyz and Sig/value-987654321 echoed") == "the key [REDACTED] and " \
        "[REDACTED] echoed"
    assert redact_url("http://h/v1?page=2&keyword=x") == "http://h/v1?page=2&keyword=x"


@pytest.mark.usefixtures("no_registered_secrets")
def test_the_quick_check_never_skips_a_credential() -> None:
    """``redact`` skips its pattern when no credential word is present: on texts mixing every trigger, it must
    give what the pattern alone gives."""
    import random

    from structbench.core.redact import _CREDENTIALS, _mask

    pieces = ["Authorization: ", "AUTHORIZATION=", "Bearer ", "basic ", "Basic ", "sk-", "https://", "http://u:",
              "@", "host", "abcdef0123456789XYZ", "\"", " ", ",", "}", "pw9", "\\n", "key", "://", "bob:"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert redact(text) == _CREDENTIALS.sub(_mask, text), text


@pytest.mark.usefixtures("no_registered_secrets")
def test_the_pattern_tried_where_a_match_may_start_gives_what_it_gives_over_the_whole_text() -> None:
    """``redact`` tries its pattern only where a match may start (``_match_starts``): on texts mixing the words in
    every case, the characters ``(?i)`` folds to them (dotless i, long s, the dotted capital I), URL schemes in runs
    of ``+.-``, words glued to the triggers and JSON escapes, it gives what ``re.sub`` over the whole text gives."""
    import random

    from structbench.core.redact import _CREDENTIALS, _mask

    pieces = ["Authorization", "AUTHORIZATION", "authorızation", "AUTHORİZATION", "\\\"", ": ", "=", "Bearer ",
              "bearer\t", "basic ", "BASIC  ", "baſic ", "baſic", "sk-", "xsk-", "https://", "git+ssh://", "a.b-c://",
              "://", "u:", "user:", "@", "host", "abcdef0123456789XYZ", "0123456789abcdefgh", "\"", " ", ",", "}",
              "pw9", "\n", "\r", "key", "bob:", "-", "+", ".", "é", "x", "İ", "K"]
    rng = random.Random(11)
    hits = 0
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        want = _CREDENTIALS.sub(_mask, text)
        hits += want != text
        assert redact(text) == want, text
    assert hits > 400


def test_no_long_piece_of_a_registered_secret_is_left() -> None:
    """A message that cut a server's reply may hold part of a key: no 12 characters of it in a row may remain."""
    from structbench.core.redact import PIECE

    key = "hf_Qz7vLmN2pRt8XwY4kJ6sDf1GhB3nCe5aUo9"
    register_secret(key)
    for start in range(len(key) - PIECE + 1):
        for end in range(start + PIECE, len(key) + 1):
            text = f'xx{key[start:end]}" and more'
            assert redact(text) == 'xx[REDACTED]" and more', key[start:end]
    assert redact(f"cut: {key[:PIECE - 1]}") == f"cut: {key[:PIECE - 1]}"  # shorter pieces are ordinary text
    assert redact(f"{key[5:20]}{key[1:30]} {key[-13:]}") == "[REDACTED] [REDACTED]"
    assert redact(json.dumps({"e": key[:30]})) == '{"e": "[REDACTED]"}'


def test_an_error_body_is_redacted_before_it_is_cut() -> None:
    from structbench.backends.openai_compat import _excerpt, _head

    key = "hf_Wq3eRt5yUi7oPa9sDf2gHj4kLz6xCv8bNm1"
    register_secret(key)
    body = json.dumps({"error": {"message": "x" * 240 + key}}).encode()
    assert len(body) - 300 < len(key)  # the cut falls inside the key
    for text in (_head(body), _excerpt(body.decode(), 280)):
        assert all(key[i : i + 12] not in text for i in range(len(key) - 11)), text


def test_what_the_user_wrote_loses_only_registered_secrets() -> None:
    from structbench.core.redact import HOLE, redact_around, redact_known

    register_secret("reg-secret-0123456789")
    prompt = "Write basic Python3-compatible English. Authorization: none required. reg-secret-0123456789"
    assert redact(prompt) != prompt.replace("reg-secret-0123456789", "[REDACTED]")  # as a message: rewritten
    assert redact_known(prompt) == prompt.replace("reg-secret-0123456789", "[REDACTED]")
    text = json.dumps({"error": "Authorization: Bearer abcdef0123456789", "prompt": HOLE})
    out = json.loads(redact_around(text, json.dumps(prompt)))
    assert out == {"error": "Authorization: [REDACTED]", "prompt": redact_known(prompt)}


def test_redacting_a_json_text_leaves_valid_json() -> None:
    """Records, metrics and cache rows are redacted as serialized JSON. The pattern ate the backslash of an escape
    (``"Authorization:\\nfoo"`` became ``"Authorization:\\[REDACTED]"``), a string's closing quote (``["x
    authorization:"]`` lost its ``]``) and a key's non-string value (``"Authorization": 5``): a model's reply quoting
    an HTTP header made every record unwritable, and a data category named Authorization a corrupt metrics.json."""
    import random

    rng = random.Random(7)
    pieces = ["authorization", "Authorization", ":", "=", " ", "\n", "\r", '"', "\\", ",", "}", "]", "x", "Bearer",
              "abc123def456", "{", "[", "'"]
    for _ in range(3000):
        words = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(3)]
        doc = {words[0]: words[1], "list": [words[2], words[0]], words[2]: rng.choice([5, True, None, {"n": 1},
                                                                                     [1], words[1]])}
        for text in (json.dumps(doc), json.dumps(doc, indent=2, ensure_ascii=False), json.dumps(json.dumps(doc))):
            json.loads(redact(text))
    assert redact('{"headers": {"Authorization": "Bearer abc123"}}') == '{"headers": {"Authorization": "[REDACTED]"}}'
    assert redact(json.dumps({"error": 'sent {"authorization": "Basic xyz"}'})) == \
        json.dumps({"error": 'sent {"authorization": "[REDACTED]"}'})
    assert json.loads(redact('{"Authorization": 5, "a": "Authorization:\\nfoo", "b": ["x authorization:"]}')) == \
        {"Authorization": 5, "a": "Authorization:\nfoo", "b": ["x authorization:"]}
