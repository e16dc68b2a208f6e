"""Programs that import installed libraries (pandas, numpy) and read tables as DataFrames, in both isolation modes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pandas
import pytest

from structbench.sandbox import Limits, SandboxResult, run_python
from structbench.sandbox.libraries import resolve

PANDAS = Limits(cpu_seconds=30, wall_seconds=90, memory_mb=1024, file_size_mb=1, max_processes=8)
"""Importing pandas takes a second or two of CPU on a loaded two-core machine."""

TABLE = "team,wins,city\nAnts,3,Oslo\nBees,5,Lima\nCats,1,Oslo\n"


def run(code: str, mode: dict[str, Any], **kw: Any) -> SandboxResult:
    return run_python(textwrap.dedent(code), limits=PANDAS, **mode, **kw)


def test_pandas_reads_the_tables_it_is_given(mode: dict[str, Any]) -> None:
    result = run(
        """
        import numpy as np
        import pandas as pd
        assert isinstance(results, pd.DataFrame) and set(tables) == {"results", "teams"}
        print(results.groupby("city")["wins"].sum().to_dict(), int(np.sum(results["wins"])), teams.shape)
        print(pd.read_csv("tables/results.csv")["team"].tolist())
        """,
        mode,
        tables={"results": TABLE, "teams": "name\nAnts\n"},
    )
    assert result.ok, result.stderr
    assert result.stdout.splitlines() == ["{'Lima': 5, 'Oslo': 4} 9 (1, 1)", "['Ants', 'Bees', 'Cats']"]


def test_libraries_are_imported_without_tables(mode: dict[str, Any]) -> None:
    result = run("import numpy\nprint(numpy.arange(4).sum())\n", mode, libraries=("numpy",))
    assert result.ok, result.stderr
    assert result.stdout.strip() == "6"


def test_only_the_libraries_given_are_importable(mode: dict[str, Any]) -> None:
    """The libraries' site directory is not on the path: its other packages (duckdb, structbench's own
    dependencies) cannot be imported, and without ``libraries`` not even pandas."""
    code = """
    import importlib
    for name in ("duckdb", "pydantic", "pandas"):
        try:
            importlib.import_module(name)
            print(name, "IMPORTED")
        except ImportError:
            print(name, "ABSENT")
    """
    given = run(code, mode, libraries=("numpy",))
    assert given.ok, given.stderr
    assert given.stdout.split() == ["duckdb", "ABSENT", "pydantic", "ABSENT", "pandas", "ABSENT"]
    pandas_given = run(code, mode, libraries=("pandas",))
    assert pandas_given.stdout.split()[-2:] == ["pandas", "IMPORTED"]


def test_library_files_are_read_only(mode: dict[str, Any]) -> None:
    target = Path(pandas.__file__).resolve()
    before = target.read_bytes()
    stat = os.stat(target.parent)
    result = run(
        f"""
        import os, pandas
        for action in (lambda: open(pandas.__file__, "a").write("# owned"), lambda: os.remove(pandas.__file__),
                       lambda: open({str(target.parent / "planted.py")!r}, "w").write("x = 1")):
            try:
                action()
                print("WRITTEN")
            except OSError:
                print("REFUSED")
        """,
        mode,
        libraries=("pandas",),
    )
    assert result.ok, result.stderr
    assert result.stdout.split() == ["REFUSED"] * 3
    assert target.read_bytes() == before and not (target.parent / "planted.py").exists()
    after = os.stat(target.parent)
    assert (after.st_uid, after.st_gid) == (stat.st_uid, stat.st_gid)  # the run's chown never followed a link


def test_the_guard_still_refuses_ctypes_after_the_libraries_loaded(mode: dict[str, Any]) -> None:
    """Without namespaces the libraries are imported before the audit-hook guard (pandas loads ctypes); the
    program still cannot use ctypes, read the host or spawn."""
    if mode["namespaces"] != "off":
        pytest.skip("the audit-hook guard is the degraded mode's")
    result = run(
        """
        for attempt in ("__import__('ctypes').CDLL(None)", "open('/etc/hostname').read()",
                        "__import__('os').system('true')"):
            try:
                eval(attempt)
                print("DONE")
            except (PermissionError, OSError, ImportError):
                print("REFUSED")
        """,
        mode,
        libraries=("pandas",),
    )
    assert result.ok, result.stderr
    assert result.stdout.split() == ["REFUSED"] * 3


def test_the_memory_limit_holds_with_pandas(mode: dict[str, Any]) -> None:
    result = run(
        """
        import numpy as np
        try:
            np.ones(10**9)
            print("ALLOCATED")
        except MemoryError:
            print("MEMORY-ERROR")
        """,
        mode,
        libraries=("numpy",),
    )
    assert result.ok, result.stderr
    assert result.stdout.strip() == "MEMORY-ERROR"


def test_resolve_follows_requirements_and_refuses_what_is_absent() -> None:
    names = {os.path.basename(p) for p in resolve(("pandas",))}
    assert {"pandas", "numpy", "dateutil", "six.py"} <= names
    assert "duckdb" not in names
    with pytest.raises(ValueError, match="'no-such-library' is not installed"):
        resolve(("no-such-library",))


@pytest.mark.parametrize("name", ["tables", "class", "not a name", "../up"])
def test_table_names_must_be_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="must be a Python identifier"):
        run_python("pass", tables={name: TABLE})
