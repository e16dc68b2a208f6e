"""``trackers.reach``: a tracker's server answers (any HTTP status) or the failure is one line, within seconds."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from structbench.interop.trackers.reach import check_answers


class _NotFound(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_any_http_answer_will_do_and_other_schemes_are_not_checked() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        check_answers(f"http://user:secret@127.0.0.1:{server.server_address[1]}/prefix", "/health", "the server")
    finally:
        server.shutdown()
    check_answers("sqlite:///mlflow.db", "/health", "the server")
    check_answers("file:./mlruns", "/health", "the server")


def test_nothing_listening_is_one_line_naming_the_server_without_its_password() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    with pytest.raises(ConnectionError, match="cannot be reached") as err:
        check_answers(f"http://user:secret@127.0.0.1:{port}/", "/health", "the server")
    assert "secret" not in str(err.value) and "\n" not in str(err.value)
