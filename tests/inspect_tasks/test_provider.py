"""structbench's backends as an Inspect model provider (``--model structbench/BACKEND[:NAME]``): its model arguments
from Inspect's command line, against the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rich

from extras import require_extra
from faults import serve

require_extra("inspect_ai", "inspect")

from click.testing import CliRunner  # noqa: E402
from inspect_ai._cli.main import inspect as inspect_command  # noqa: E402
from inspect_ai._util.error import exception_hook  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402

from structbench.core.errors import UsageError  # noqa: E402
from structbench.inspect_tasks.provider import ModelArgError, backend_spec  # noqa: E402
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread  # noqa: E402

USAGE = {"prompt_tokens": 100, "completion_tokens": 42, "total_tokens": 142,
         "prompt_tokens_details": {"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 40}}


def _inspect_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: Path, *args: str) -> Any:
    """``inspect eval structbench/scitab --model structbench/openai:mock ARGS`` with Inspect's own command, in this
    process (a fresh interpreter adds seconds of imports)."""
    monkeypatch.setenv("STRUCTBENCH_DATA_DIR", str(data))
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(inspect_command, [
        "eval", "structbench/scitab", "--model", "structbench/openai:mock", "--limit", "2", "--log-dir", str(tmp_path),
        "--display", "plain", *args], auto_envvar_prefix="INSPECT")


@pytest.mark.shared
def test_the_model_arguments_reach_the_backend(shared_datasets: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's ``--model-base-url`` is the server, and ``-M`` takes the connection settings of ``structbench run``
    (``api_key_env``, ``timeout`` ...) besides the backend's options; ``-M timeout=30`` was sent to the backend as
    an option it does not take (a traceback). The reply's tokens are Inspect's usage, cached input apart."""
    monkeypatch.setenv("SB_PROVIDER_KEY", "sk-provider-test-0123456789")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve(tmp_path, "--reply", "supports", "--usage", json.dumps(USAGE)) as server:  # its own process: no
        url = server.url  # connection Inspect keeps open is left to a closed event loop of this one
        result = _inspect_eval(tmp_path, monkeypatch, shared_datasets, "--model-base-url", url,
                               "-M", "api_key_env=SB_PROVIDER_KEY", "-M", "timeout=30", "-M", "max_retries=1",
                               "-M", "concurrency=2", "-M", "max_reply_mb=4", "-M", "n_ctx=8192")
    assert result.exit_code == 0, (result.output, result.exception)
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    assert len(server.answered()) == 2 and log.eval.model_base_url == url
    for sample in log.samples:
        (usage,) = sample.model_usage.values()
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.input_tokens_cache_read,
                usage.reasoning_tokens) == (40, 42, 142, 60, 40)


@pytest.mark.shared
@pytest.mark.parametrize(("argument", "says"), [
    ("bogus=1", "structbench/openai:mock: -M bogus: not an option of the openai backend (known: n_ctx)"),
    ("api_key=sk-provider-secret-0123456789", "structbench/openai:mock: -M api_key: the provider never takes a key "
     "itself (it would be in the command's history); put it in an environment variable and name it with -M "
     "api_key_env=NAME (default OPENAI_API_KEY)"),
    ("timeout=-1", "structbench/openai:mock(timeout=-1): give a number of seconds above 0"),
])
def test_a_model_argument_it_does_not_take_is_one_line_naming_it(shared_datasets: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], argument: str,
                                                                 says: str) -> None:
    """Refused before any request, as a prerequisite error, which Inspect's command line prints as its one line (a
    ``UsageError`` was printed with Inspect's traceback; ``-M api_key`` was silently ignored)."""
    with serve_in_thread(MockOpenAIServer(reply="supports")) as url:
        result = _inspect_eval(tmp_path, monkeypatch, shared_datasets, "--model-base-url", url, "-M", argument)
    assert isinstance(result.exception, ModelArgError) and isinstance(result.exception, UsageError)
    assert str(result.exception) == says
    capsys.readouterr()
    monkeypatch.setattr(rich, "_console", None)  # a console an earlier eval of this worker configured writes elsewhere
    exception_hook()(type(result.exception), result.exception, None)  # what the ``inspect`` command prints
    assert " ".join(capsys.readouterr().out.split()) == says  # rich wraps it at the console's width


def test_inspects_yaml_values_become_the_options_backends_read() -> None:
    """Inspect parses ``-M download=true`` as YAML: the option is the JSON ``true`` the backends' typed settings
    read (``True`` was refused as not a bool)."""
    spec = backend_spec("hf:some/model", None, None, {"download": True, "batch_size": 8, "device": "cpu",
                                                      "api_key_env": "HF_KEY", "max_reply_mb": 0.5})
    assert spec.options == {"download": "true", "batch_size": "8", "device": "cpu"}
    assert spec.api_key_env == "HF_KEY" and spec.max_reply_bytes == 2**19
