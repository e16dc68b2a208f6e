"""Secrets out of everything structbench writes or prints.

Removed: every secret a backend registered (the API key it read, the password of its URL), wherever it
appears, and every piece of it ``PIECE`` characters or longer (a message that cut a server's reply may hold
part of a key); the value of an ``Authorization`` header or a ``Bearer``/``Basic`` credential; the password of
a URL's ``user:password@``; and OpenAI-style keys (``sk-...``) even when nobody registered them (a judge's
key, an older run directory). Registered secrets shorter than ``MIN_SECRET`` characters are only removed
in those credential positions: replacing a short word everywhere would corrupt results. Whoever shortens a
text for display redacts it first and cuts it after.

What the user wrote is not a message: a prompt, a request body sent to the model and the run's configuration keep
their credential-like words (``Authorization: none required``, ``basic Python3-compatible``); only registered
secrets are removed from them where they are stored (``redact_known``), and the batch input file a provider is
sent holds the requests as they are.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from urllib.parse import SplitResult, quote, unquote, urlsplit, urlunsplit

MASK = "[REDACTED]"
MIN_SECRET = 8
PIECE = 12
"""No run of this many characters of a registered secret (of at least this length) is ever left in a text."""
_BLOCK = PIECE // 2
"""Every ``PIECE``-long piece of a secret holds one of its blocks at offsets 0, _BLOCK, 2 * _BLOCK ... whole."""

SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_ACCESS_KEY")
"""Environment variables whose names end so hold credentials (``OPENAI_API_KEY``, ``HF_TOKEN`` ...)."""
SECRET_ENV_NAMES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")

_secrets: set[str] = set()
_blocks: dict[str, list[tuple[str, int]]] = {}
"""Block text -> (secret form, offset) of every long registered form that has it there."""
_CREDENTIALS = re.compile(
    r"(?P<auth>(?i:authorization)(?:(?P<quote>\\?\")\s*[:=]\s*(?P=quote)|\s*[:=]\s*))(?!\[REDACTED\])[^\"\\\r\n,}]+"
    r"|(?P<scheme>\b(?i:bearer|basic)\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}"
    r"|(?P<userinfo>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\"]*:)(?!\[REDACTED\])[^@\s/\"]+(?=@)"
    r"|\bsk-[A-Za-z0-9_-]{16,}"
)


def register_secret(value: str | None) -> None:
    """Remember ``value`` (and its JSON and URL-encoded forms) as a secret to remove from all output."""
    if not value or len(value) < MIN_SECRET:
        return
    forms = {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], quote(value)}
    for form in forms - _secrets:
        for offset in range(0, len(form) - _BLOCK + 1, _BLOCK) if len(form) >= PIECE else ():
            _blocks.setdefault(form[offset : offset + _BLOCK], []).append((form, offset))
    _secrets.update(forms)


def register_env_secrets() -> None:
    """Treat the values of credential-like environment variables (``SECRET_ENV_SUFFIXES``) as secrets: what is
    written for others to read (a published dataset, a tracker's run) may come from an older run directory that holds
    a key, and must not."""
    for name, value in os.environ.items():
        if name.upper().endswith(SECRET_ENV_SUFFIXES) or name.upper() in SECRET_ENV_NAMES:
            register_secret(value)


def _mask(match: re.Match[str]) -> str:
    prefix = match.group("auth") or match.group("scheme") or match.group("userinfo") or ""
    return prefix + MASK


_WORDS = ("authorization", "bearer", "basic")
"""The case-insensitive words a match of ``_CREDENTIALS`` starts with (but for ``sk-`` and a URL's userinfo)."""
_ANCHORS = re.compile(r"(?i:authorization|bearer|basic)|sk-|://")
_URL_SCHEME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_FOLDED = ("\u0131", "\u017f")
"""Dotless i and long s: under ``(?i)`` they match ``i`` and ``s`` and are their own lower case (so are no other
characters but the dotted capital I, whose lower case is two characters)."""


def _may_hold_credentials(text: str) -> bool:
    """False when no alternative of ``_CREDENTIALS`` can match: each needs one of these words in ``text``.

    Substring tests run at memory speed, the pattern itself at about 0.1 microsecond per character, and
    every record and cached response goes through here."""
    if "sk-" in text or ("://" in text and "@" in text):
        return True
    low = text.lower()
    if len(low) != len(text) or any(c in text for c in _FOLDED):  # a word (?i) matches that lower() does not give
        return _ANCHORS.search(text) is not None
    return "authorization" in low or "bearer" in low or "basic" in low


def _pieces(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are a piece of at least ``PIECE`` characters of a long registered secret, merged."""
    spans: list[tuple[int, int]] = []
    for block, places in _blocks.items():
        at = text.find(block)
        while at != -1:
            for form, offset in places:
                back = 0
                while back < min(at, offset) and text[at - back - 1] == form[offset - back - 1]:
                    back += 1
                ahead = _BLOCK
                while (offset + ahead < len(form) and at + ahead < len(text)
                       and text[at + ahead] == form[offset + ahead]):
                    ahead += 1
                if back + ahead >= PIECE:
                    spans.append((at - back, at + ahead))
            at = text.find(block, at + 1)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _find_all(text: str, word: str) -> list[int]:
    out = []
    at = text.find(word)
    while at != -1:
        out.append(at)
        at = text.find(word, at + 1)
    return out


def _match_starts(text: str) -> list[int]:
    """Every position at which ``_CREDENTIALS`` may match, in order (more is harmless): where one of ``_WORDS`` (in
    any case) or ``sk-`` starts, and every position in the run of URL-scheme characters before a ``://`` (where a
    URL's userinfo alternative starts). The words are found in the lower-cased text by substring search, which
    finds what ``(?i)`` matches while lowering keeps every character one character and none of ``_FOLDED`` is
    there; otherwise by the words' pattern."""
    low = text.lower()
    if len(low) == len(text) and not any(c in text for c in _FOLDED):
        starts = [at for word in _WORDS for at in _find_all(low, word)] + _find_all(text, "sk-")
    else:
        starts = [m.start() for m in _ANCHORS.finditer(text) if text[m.start()] != ":"]
    for at in _find_all(text, "://"):
        begin = at
        while begin and text[begin - 1] in _URL_SCHEME:
            begin -= 1
        starts.extend(range(begin, at))
    return sorted(set(starts))


def _credentials_sub(text: str) -> str:
    """``_CREDENTIALS.sub(_mask, text)``, the pattern tried only where a match may start (``_match_starts``): the
    pattern scans at about 0.1 microsecond a character, and a run's records reach tens of megabytes (a CoT oracle's
    base tables), which hold the word ``basic`` now and then."""
    out: list[str] = []
    last = 0
    for start in _match_starts(text):
        if start < last:
            continue
        match = _CREDENTIALS.match(text, start)
        if match is not None:
            out += [text[last:start], _mask(match)]
            last = match.end()
    return "".join([*out, text[last:]]) if out else text


def redact(text: str) -> str:
    """``text`` with every secret, and every long piece of one, replaced by ``[REDACTED]``; cheap when there is
    none (a few substring searches)."""
    text = redact_known(text)
    return _credentials_sub(text) if _may_hold_credentials(text) else text


def redact_known(text: str) -> str:
    """``text`` with the registered secrets, and every long piece of one, replaced by ``[REDACTED]``, and nothing
    else: for what the user wrote (a prompt, the run's configuration), whose credential-like words are their own."""
    spans = _pieces(text) if any(block in text for block in _blocks) else []
    if spans:
        out, last = [], 0
        for start, end in spans:
            out += [text[last:start], MASK]
            last = end
        text = "".join([*out, text[last:]])
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


HOLE = "\x00" + secrets.token_hex(16)
"""A string that stands in a JSON text for a part kept as the user wrote it (``redact_around``): random, so no
registered secret shares a piece of it."""
_HOLE_JSON = json.dumps(HOLE)


def redact_around(text: str, verbatim: str) -> str:
    """``redact`` of a JSON ``text`` in which the string ``HOLE`` stands for ``verbatim`` (a JSON text of what the user
    wrote: a prompt, a configuration), which loses only registered secrets (``redact_known``)."""
    hole = _HOLE_JSON
    done = redact(text)
    if hole not in done:  # the hole itself redacted (it cannot be): redact the whole rather than lose the part
        return redact(text.replace(hole, verbatim, 1))
    return done.replace(hole, redact_known(verbatim), 1)


QUERY_SECRETS = frozenset({"api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "password",
                           "secret", "sig", "signature", "code", "x-api-key"})
"""Query parameters whose values are credentials (``?api_key=...``, Azure's ``?sig=...``), lower case."""


def _query_secrets(query: str) -> list[tuple[int, str]]:
    """(index, value) of each ``name=value`` pair of ``query`` that carries a credential (``QUERY_SECRETS``)."""
    found = []
    for i, pair in enumerate(query.split("&")):
        name, eq, value = pair.partition("=")
        if eq and value and unquote(name).strip().lower() in QUERY_SECRETS:
            found.append((i, value))
    return found


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``http://user:pw@host/p`` -> (``http://host/p``, user, password), decoded; the password is registered, and so
    is a credential in its query (``?api_key=...``), which stays in the URL that is sent."""
    parts = urlsplit(url)
    for _, value in _query_secrets(parts.query):
        register_secret(value)
        register_secret(unquote(value))
    if parts.username is None and parts.password is None:
        return url, None, None
    password = None if parts.password is None else unquote(parts.password)
    register_secret(parts.password)
    register_secret(password)
    netloc = parts.netloc.rpartition("@")[2]
    bare = urlunsplit(SplitResult(parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, None if parts.username is None else unquote(parts.username), password


def redact_url(url: str) -> str:
    """``url`` as it may be shown and stored: a password in its userinfo, and a credential in its query
    (``QUERY_SECRETS``), become ``[REDACTED]``."""
    bare, user, password = split_userinfo(url)
    parts = urlsplit(bare)
    hidden = _query_secrets(parts.query)
    if password is None and not hidden:
        return url
    if hidden:
        pairs = parts.query.split("&")
        for i, _ in hidden:
            pairs[i] = f"{pairs[i].partition('=')[0]}={MASK}"
        parts = parts._replace(query="&".join(pairs))
    if password is not None:
        parts = parts._replace(netloc=f"{quote(user or '', safe='')}:{MASK}@{parts.netloc}")
    return urlunsplit(parts)
