"""The release's sequential names: ``a, b, ..., z, ab, bb, ..., zb, ac, ...`` (little-endian base 26).

Ids, tags and headings count up through the alphabet; attribute keys (``Z, Y, ..., A, ZY, YY``) and
values (``z, y, ..., a, zy, yy``) count down, as in the released files. Names that a YAML 1.1 reader
would turn into booleans or null (``no``, ``ON`` ...) and XML-reserved ``xml...`` names are skipped, so
every reader sees plain strings.
"""

from __future__ import annotations

import string

_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _name(i: int, alphabet: str) -> str:
    out = alphabet[i % 26]
    i //= 26
    while i:
        out += alphabet[i % 26]
        i //= 26
    return out


class NameTable:
    """A growable list of the sequence's names in one alphabet, minus reserved ones."""

    def __init__(self, alphabet: str) -> None:
        self.alphabet = alphabet
        self.names: list[str] = []
        self._next = 0

    def upto(self, n: int) -> list[str]:
        """The list, grown to at least ``n`` names (the same list object every time)."""
        while len(self.names) < n:
            name = _name(self._next, self.alphabet)
            self._next += 1
            low = name.lower()
            if low not in _RESERVED and not low.startswith("xml"):
                self.names.append(name)
        return self.names


UP = NameTable(string.ascii_lowercase)
"""``a, b, ..., z, ab, ...``: ids, tree nodes, headings, image files."""
UP_UPPER = NameTable(string.ascii_uppercase)
"""``A, B, ...``: XML tags."""
DOWN = NameTable(string.ascii_lowercase[::-1])
"""``z, y, ..., a, zy, ...``: attribute values."""
DOWN_UPPER = NameTable(string.ascii_uppercase[::-1])
"""``Z, Y, ..., A, ZY, ...``: attribute keys."""
