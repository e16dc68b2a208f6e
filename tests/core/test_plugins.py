"""Plugins: benchmarks and backends of an installed distribution, through the ``structbench.benchmarks`` and
``structbench.backends`` entry points; ``STRUCTBENCH_PLUGINS`` still works beside them.

The installed distribution is a stand-in: a ``*.dist-info`` folder (its metadata and ``entry_points.txt``) beside
the plugin's modules on the path, as pip would leave them. The modules are the guides' examples."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from faults import child_pythonpath
from patience import patience
from structbench.core.plugins import BACKEND_GROUP, BENCHMARK_GROUP, plugins

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r'^```python title="(?P<title>[^"]+)"\n(?P<body>.*?)^```$', re.M | re.S)


def guide_module(guide: str, title: str) -> str:
    """A titled Python block of a guide under docs/develop."""
    text = (REPO / "docs" / "develop" / guide).read_text(encoding="utf-8")
    return next(m.group("body") for m in BLOCK.finditer(text) if m.group("title") == title)


def install(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    """What ``pip install`` leaves in ``site``: the modules and ``DIST-0.1.dist-info``."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source)


def structbench(site: Path, *args: str, plugins_env: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([child_pythonpath(), str(site)]), STRUCTBENCH_PLUGINS=plugins_env)
    return subprocess.run([sys.executable, "-m", "structbench", *args], env=env, capture_output=True, text=True,
                          timeout=patience(300))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    install(site, "toy2-plugins", f"[{BENCHMARK_GROUP}]\ntoy2 = toy2pkg\n\n[{BACKEND_GROUP}]\nfixed = fixedpkg\n", {
        "toy2pkg": guide_module("adding-a-benchmark.md", "src/structbench/benchmarks/toy2/__init__.py"),
        "fixedpkg": guide_module("adding-a-backend.md", "src/structbench/backends/fixed.py"),
    })
    return site


def test_entry_points_are_read_from_the_metadata(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = site.parent / "more"
    install(extra, "other-plugin", f"[{BENCHMARK_GROUP}]\nzeta = pkg.sub:Bench [gpu]\nalpha = pkg2\n", {})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(extra))
    found = {p.name: p for p in plugins(BENCHMARK_GROUP, default_attr="BENCHMARK")}
    assert found["toy2"].target == "toy2pkg:BENCHMARK"  # a module alone means its BENCHMARK
    assert found["zeta"].target == "pkg.sub:Bench"  # extras say what it needs, not where it is
    assert (found["toy2"].distribution, found["toy2"].version) == ("toy2-plugins", "0.1")
    assert found["alpha"].origin == "the entry point 'alpha' of other-plugin 0.1"
    names = [p.name for p in plugins(BENCHMARK_GROUP, default_attr="BENCHMARK")]
    assert names == sorted(names)
    (fixed,) = (p for p in plugins(BACKEND_GROUP, default_attr="from_spec") if p.name == "fixed")
    assert fixed.target == "fixedpkg:from_spec"


def test_a_path_without_plugins_is_not_parsed_whole(tmp_path: Path, site: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing every distribution's entry points takes 30-40 ms of each start (issue 44): when no
    ``entry_points.txt`` on the path names a group of structbench's, none is parsed, and there are no plugins; one
    that does is read as before."""
    from structbench.core import plugins as module

    others = tmp_path / "others"
    install(others, "not-a-plugin", "[console_scripts]\nnap = nap:main\n\n[structbench_other]\nx = y\n", {})
    monkeypatch.syspath_prepend(str(others))
    monkeypatch.setattr(module, "entry_points", lambda: pytest.fail("every distribution's metadata was parsed"))
    assert plugins(BENCHMARK_GROUP, default_attr="BENCHMARK") == []
    assert plugins(BACKEND_GROUP, default_attr="from_spec") == []
    monkeypatch.undo()
    monkeypatch.syspath_prepend(str(others))
    monkeypatch.syspath_prepend(str(site))
    assert [p.name for p in plugins(BENCHMARK_GROUP, default_attr="BENCHMARK")] == ["toy2"]


BACKPORT_SEARCH = """
import sys
import importlib_metadata  # puts its own finder of the path's distributions on sys.meta_path
from structbench.core import plugins
plugins.entry_points = lambda: sys.exit("every distribution's metadata was parsed")
assert plugins.plugins(plugins.BENCHMARK_GROUP, default_attr="BENCHMARK") == []
class Elsewhere:
    def find_distributions(self, context=None):
        return iter(())
sys.meta_path.append(Elsewhere())
assert not plugins._none_declared(tuple(sys.path)), "another finder's distributions were not read"
"""


def test_the_metadata_backport_searches_the_same_path() -> None:
    """``importlib_metadata`` (litellm and mlflow import it) adds its finder of the path's distributions to
    ``sys.meta_path``, the same search as the standard library's: a path without plugins is still not parsed whole
    (in the suite, a worker that had run a litellm test parsed it); a finder of distributions elsewhere still has them
    all read. In a process of its own: importing the backport changes the importing process for good."""
    if importlib.util.find_spec("importlib_metadata") is None:
        pytest.skip("importlib_metadata is not installed")
    proc = subprocess.run([sys.executable, "-c", BACKPORT_SEARCH], env=dict(os.environ, PYTHONPATH=child_pythonpath()),
                          capture_output=True, text=True, timeout=patience(120))
    assert proc.returncode == 0, proc.stderr


def test_an_installed_plugin_runs_from_the_command_line(site: Path, tmp_path: Path) -> None:
    listed = structbench(site, "list", plugins_env="toybench")
    assert listed.returncode == 0, listed.stderr
    assert "toy2  Toy2" in listed.stdout and "toy  Toy table lookup" in listed.stdout  # entry point and variable
    assert re.search(r"backends:.*\bfixed\b", listed.stdout, re.S)

    oracle = structbench(site, "run", "-m", "oracle", "--bench", "toy2", "--no-cache", "--out", str(tmp_path / "a"))
    assert oracle.returncode == 0, oracle.stderr
    (entry,) = json.loads((tmp_path / "a" / "metrics.json").read_text())["results"]
    assert (entry["benchmark"], entry["n"], entry["metrics"]["accuracy"]) == ("toy2", 20, 1.0)

    fixed = structbench(site, "run", "-m", "fixed:even", "--bench", "toy2", "--no-cache", "--out", str(tmp_path / "b"))
    assert fixed.returncode == 0, fixed.stderr
    samples = [json.loads(line) for line in (tmp_path / "b" / "samples.jsonl").read_text().splitlines()]
    assert {s["parsed"] for s in samples} == {"even"}
    (entry,) = json.loads((tmp_path / "b" / "metrics.json").read_text())["results"]
    assert entry["model"] == "fixed:even"
    assert entry["metrics"]["accuracy"] == sum(s["gold"] == "even" for s in samples) / 20
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["packages"]["toy2_plugins"] == "0.1"  # the plugin's distribution, as a backend's packages

    empty = structbench(site, "run", "-m", "fixed", "--bench", "toy2", "--no-cache", "--out", str(tmp_path / "c"))
    assert empty.returncode == 2 and "--model fixed:TEXT: say which reply to give" in empty.stderr


def test_a_plugin_never_shadows_a_registered_name(site: Path, tmp_path: Path) -> None:
    install(site, "shadow", f"[{BENCHMARK_GROUP}]\nscitab = toy2pkg\n\n[{BACKEND_GROUP}]\nopenai = fixedpkg\n", {})
    assert structbench(site, "--help").returncode == 0
    listed = structbench(site, "list")  # listed, the built-ins with them, and the clashes said
    assert listed.returncode == 0 and "scitab  SciTab" in listed.stdout and "toy2  Toy2" in listed.stdout
    assert ("warning: benchmark 'scitab' is both structbench's own and the entry point 'scitab' of shadow 0.1's: a "
            "plugin never shadows a benchmark; rename the entry point or uninstall its distribution") in listed.stderr
    ran = structbench(site, "run", "-m", "oracle", "-b", "toy2", "--no-cache", "--out", str(tmp_path / "a"))
    assert ran.returncode == 0, ran.stderr  # a command that does not use the name is not affected
    for args in (("-m", "oracle", "-b", "scitab"), ("-m", "openai:gpt-4o-mini", "-b", "toy2")):
        used = structbench(site, "run", *args, "--no-cache", "--out", str(tmp_path / "b"))
        assert used.returncode == 2 and used.stderr.count("\n") == 1 and "Traceback" not in used.stderr
        assert "of shadow 0.1's: a plugin never shadows a" in used.stderr


@pytest.mark.parametrize("module", ["", "raise RuntimeError('the plugin is broken')\n"])
def test_a_plugin_that_fails_to_load_is_one_warning_naming_its_distribution(site: Path, tmp_path: Path,
                                                                           module: str) -> None:
    modules = {"brokenpkg": module} if module else {}  # no module at all, or one that raises on import
    install(site, "broken-dist", f"[{BENCHMARK_GROUP}]\nbroken = brokenpkg\n", modules)
    listed = structbench(site, "list", plugins_env="toybench,nosuchplugin")
    assert listed.returncode == 0, listed.stderr
    assert "toy2  Toy2" in listed.stdout and "toy  Toy table lookup" in listed.stdout
    assert "broken  " not in listed.stdout
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("warning: ")]
    kind = "RuntimeError: the plugin is broken" if module else "ModuleNotFoundError: No module named 'brokenpkg'"
    assert warnings == [
        "warning: STRUCTBENCH_PLUGINS: cannot import 'nosuchplugin' (ModuleNotFoundError: No module named "
        "'nosuchplugin'); left out",
        f"warning: benchmark 'broken' (the entry point 'broken' of broken-dist 0.1) failed to load from "
        f"brokenpkg:BENCHMARK: {kind}; left out"], listed.stderr
    assert "Traceback" not in listed.stderr
    used = structbench(site, "run", "-m", "oracle", "-b", "broken", "--out", str(tmp_path / "x"))
    assert used.returncode == 2 and "Traceback" not in used.stderr
    assert used.stderr.strip() == (f"error: benchmark 'broken' (the entry point 'broken' of broken-dist 0.1) failed "
                                   f"to load from brokenpkg:BENCHMARK: {kind}")


def test_a_plugin_that_fails_to_import_is_named(site: Path, tmp_path: Path) -> None:
    install(site, "broken", f"[{BACKEND_GROUP}]\nbroken = nosuchmodule\n", {})
    result = structbench(site, "run", "-m", "broken", "--bench", "toy2", "--out", str(tmp_path / "x"))
    assert result.returncode == 2
    assert ("backend 'broken' (the entry point 'broken' of broken 0.1) failed to load from nosuchmodule:from_spec"
            in result.stderr)


PYDANTIC_PLUGIN = """
import os
from pathlib import Path


class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        Path(os.environ["PLUGIN_SEEN"]).touch()
        return None, None, None


plugin = Plugin()
"""


def test_pydantics_plugin_scan_is_skipped_only_where_no_plugin_is_installed(tmp_path: Path, site: Path) -> None:
    """The CLI tells pydantic there is no plugin to load (``PYDANTIC_DISABLE_PLUGINS``; its own scan parses every
    distribution's metadata, 45-70 ms of each start) only where no distribution declares one; an installed pydantic
    plugin still sees the command's validators, and a value the user set stands."""
    probe = ("from structbench.core.plugins import skip_pydantic_plugin_scan; skip_pydantic_plugin_scan(); "
             "import os; print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'))")

    def disabled(path: Path, **env: str) -> str:
        environ = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
        environ |= {"PYTHONPATH": os.pathsep.join([child_pythonpath(), str(path)]), **env}
        out = subprocess.run([sys.executable, "-c", probe], env=environ, capture_output=True, text=True,
                             timeout=patience(120))
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert disabled(site) == "__all__"  # structbench's plugins are no pydantic plugin
    assert disabled(site, PYDANTIC_DISABLE_PLUGINS="logfire") == "logfire"
    with_plugin = tmp_path / "with-plugin"
    install(with_plugin, "pydantic-probe", "[pydantic]\nprobe = probepkg:plugin\n", {"probepkg": PYDANTIC_PLUGIN})
    assert disabled(with_plugin) == "None"
    seen = tmp_path / "seen"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([child_pythonpath(), str(with_plugin)]), PLUGIN_SEEN=str(seen))
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    run = subprocess.run([sys.executable, "-m", "structbench", "run", "-m", "mock", "-b", "structext:test", "-n", "1",
                          "--out", str(tmp_path / "r"), "--no-progress"], env=env, capture_output=True, text=True,
                         timeout=patience(300))
    assert run.returncode == 0, run.stderr
    assert seen.exists()
