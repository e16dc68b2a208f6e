"""``core.printable``: text from a run loses the control characters terminals read as escape sequences."""

from __future__ import annotations

from structbench.core.printable import printable


def test_control_characters_go_and_newlines_tabs_and_letters_stay() -> None:
    text = "a\x1b]8;;http://evil/\x1b\\link\x1b]0;title\x07\tb\nc\r\x00\x7f\x9b31m\x9d é\u2028"
    assert printable(text) == "a]8;;http://evil/\\link]0;title\tb\nc31m é\u2028"
