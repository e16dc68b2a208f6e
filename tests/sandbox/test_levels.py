"""Each program's isolation in one word, kept per process for the run's manifest: what ``run_python`` got, the
weakest taken once, and the harness's own trial programs (``quietly``) neither counted nor using up the warning."""

from __future__ import annotations

import warnings

import pytest

from sandbox.modes import degraded_python_or_skip
from structbench.sandbox import Isolation, SandboxWarning, probe, quietly, run_python
from structbench.sandbox import runner as sandbox_runner
from structbench.sandbox.levels import level_of, take, weakest


def isolation(network: str, filesystem: str, pid: bool, guard: bool) -> Isolation:
    return Isolation(network=network, filesystem=filesystem, pid_namespace=pid, user_namespace=False, uid=1,
                     guard=guard)


def test_a_level_names_what_the_program_got_and_why() -> None:
    assert level_of(isolation("namespace", "pivot_root", True, False), "auto") == "namespaces"
    assert level_of(isolation("namespace", "pivot_root", True, False), "require") == "namespaces"
    assert level_of(isolation("guard", "guard", False, True), "auto") == "guard"  # the kernel refused
    assert level_of(isolation("namespace", "guard", False, True), "auto") == "guard"  # refused in part
    assert level_of(isolation("guard", "guard", False, True), "off") == "off"  # sandbox=off
    assert level_of(isolation("shared", "shared", False, False), "off") == "none"  # guard="off" too


def test_the_weakest_level_wins_and_one_not_known_is_the_weakest() -> None:
    assert weakest() is None and weakest(None, None) is None
    assert weakest("namespaces", None, "guard") == "guard"
    assert weakest("guard", "off") == "off" and weakest("none", "off") == "none"
    assert weakest("none", "a newer level") == "a newer level"


@pytest.fixture
def degraded() -> dict[str, object]:
    """``run_python``'s keywords for a program without namespaces (``sandbox=off``)."""
    python = degraded_python_or_skip()
    return {"namespaces": "off", "python": python}


def test_programs_leave_their_weakest_level_taken_once(degraded: dict[str, object]) -> None:
    take()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        run_python("pass", **degraded)  # type: ignore[arg-type]
    if probe().complete:
        run_python("pass", namespaces="require")
    assert take() == "off"
    assert take() is None  # taken: forgotten


def test_programs_run_quietly_are_not_counted_and_leave_the_warning_to_the_next(
    degraded: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's warm-up ran a program with warnings off before forking its workers, which then never warned."""
    monkeypatch.setattr(sandbox_runner, "_warned", set())
    take()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quietly():
            run_python("pass", **degraded)  # type: ignore[arg-type]
        assert take() is None
        assert not [w for w in caught if issubclass(w.category, SandboxWarning)]
        run_python("pass", **degraded)  # type: ignore[arg-type]
    assert take() == "off"
    assert len([w for w in caught if issubclass(w.category, SandboxWarning)]) == 1
