"""The bootstrap's products run on one BLAS thread, and the thread count is as before afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from structbench.stats import Design
from structbench.stats.blas import one_thread
from structbench.stats.design import bootstrap_distribution

threadpoolctl = pytest.importorskip("threadpoolctl")


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]


class Recording:
    """A mean that notes the BLAS threads it ran on."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.seen: list[list[int]] = []

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        self.seen.append(blas_threads())
        return np.asarray((weights @ self.values) / weights.sum(axis=1))


def test_one_thread_limits_blas_and_restores_it() -> None:
    before = blas_threads()
    assert before, "numpy's BLAS is not seen by threadpoolctl"
    with threadpoolctl.threadpool_limits(2, user_api="blas"):  # as on a two-core machine, whatever this one has
        with one_thread():
            assert blas_threads() == [1] * len(before)
        assert blas_threads() == [2] * len(before)
    assert blas_threads() == before


def test_the_bootstrap_runs_on_one_blas_thread() -> None:
    values = np.random.default_rng(0).random(60)
    stat = Recording(values)
    keys = [i // 3 for i in range(60)]  # clusters of three: the products of evaluate, not the independent shortcut
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        dist = bootstrap_distribution(stat, Design.of("table", keys, list(range(60))), resamples=50, seed=1)
        assert blas_threads() == [2] * len(blas_threads())
    assert len(dist) == 50 and np.isfinite(dist).all()
    assert stat.seen and all(seen == [1] * len(seen) for seen in stat.seen)


def test_a_blas_loaded_after_the_first_limit_is_limited_too() -> None:
    import subprocess
    import sys

    pytest.importorskip("scipy")
    code = ("import threadpoolctl\n"
            "from structbench.stats.blas import one_thread\n"
            "def threads(): return sorted((l['filepath'], l['num_threads']) for l in threadpoolctl.threadpool_info()\n"
            "                             if l['user_api'] == 'blas')\n"
            "with one_thread(): first = threads()\n"
            "import scipy.linalg\n"  # scipy's wheels bring their own OpenBLAS
            "with threadpoolctl.threadpool_limits(2, user_api='blas'):\n"
            "    with one_thread(): later = threads()\n"
            "print(len(first), len(later), all(n == 1 for _, n in later))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, later, limited = done.stdout.split()
    assert int(later) >= int(first) and limited == "True"
