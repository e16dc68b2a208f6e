"""``core.yaml_input``: a mapping's repeated key is refused as the loaded mapping would hold it, not as written: the
check compared the keys' text, so ``1`` and ``'1'`` (an int and a text, both kept) were refused and ``1`` and
``0x1``, ``true`` and ``yes``, ``~`` and ``null``, or a key and its alias (one key, the first value silently lost)
were let through."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from structbench.core.errors import UsageError
from structbench.core.yaml_input import read_yaml


def _read(tmp_path: Path, text: str) -> object:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return read_yaml(path, kind="the suite file", max_bytes=1 << 20)[0]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a: 1\n'a': 2\n", "s.yaml:2: key 'a' appears twice in this mapping"),
        ('x:\n  a: 1\n  "a": 2\n', "s.yaml:3: key 'a' appears twice in this mapping"),
        ("1: x\n0x1: y\n", "s.yaml:2: key '0x1' appears twice in this mapping (read as the key '1' of line 1)"),
        ("true: x\nyes: y\n", "s.yaml:2: key 'yes' appears twice in this mapping (read as the key 'true' of line 1)"),
        ("1: x\ntrue: y\n", "s.yaml:2: key 'true' appears twice in this mapping (read as the key '1' of line 1)"),
        ("~: x\nnull: y\n", "s.yaml:2: key 'null' appears twice in this mapping (read as the key '~' of line 1)"),
        ("&k a: 1\n*k : 2\n", "s.yaml:2: key '*k' appears twice in this mapping (read as the key 'a' of line 1)"),
        ("!!str 1: x\n'1': y\n", "s.yaml:2: key '1' appears twice in this mapping"),
        ("!!int abc: 1\n", "s.yaml:1: key 'abc' is not its tag's value"),
        ("x: !!int abc\n", "s.yaml: not YAML (nor JSON): a tagged value cannot be read"),
    ],
)
def test_keys_that_read_as_one_are_refused_naming_the_line(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(UsageError) as info:
        _read(tmp_path, text)
    assert str(info.value).startswith(str(tmp_path / says)), str(info.value)


@pytest.mark.parametrize("text", ["1: x\n'1': y\n", "! 1: x\n'1': y\n", "'true': x\ntrue: y\n",
                                  "a: {b: 1}\nb: 2\n", "base: &b {a: 1}\nx:\n  <<: *b\n  <<: {c: 2}\n  a: 3\n"])
def test_keys_that_read_as_two_are_kept(tmp_path: Path, text: str) -> None:
    assert _read(tmp_path, text) == yaml.safe_load(text)
