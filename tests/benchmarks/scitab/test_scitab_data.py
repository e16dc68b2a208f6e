"""The loader over the release: counts per label, cell markers in the samples, the held-out pool (the file's
reader and the markers themselves: tests/releases/test_scitab.py)."""

from __future__ import annotations

from collections import Counter

from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.scitab.pool import POOL_TABLES, find_demonstrations, select_pool
from structbench.benchmarks.scitab.source import ClaimRecord
from structbench.data.datasets import DataContext
from structbench.data.evidence import Table
from structbench.data.sample import Sample


def test_release_counts_per_label(records: list[ClaimRecord]) -> None:
    assert len(records) == 1224
    assert Counter(r.label for r in records) == {"supports": 457, "refutes": 411, "not enough info": 356}
    assert len({r.table_id for r in records}) == 213
    assert len({r.paper_id for r in records}) == 80


def test_pool_rule_and_test_set_counts(
    records: list[ClaimRecord], loaded: tuple[SciTab, dict[str, list[Sample]]]
) -> None:
    assert select_pool(records) == POOL_TABLES
    pool = [r for r in records if r.table_id in POOL_TABLES]
    assert len(set(POOL_TABLES)) == 5 and len(pool) == 25
    assert Counter(r.label for r in pool) == {"supports": 8, "refutes": 7, "not enough info": 10}
    _, samples = loaded
    assert Counter(s.gold.label for s in samples["all"]) == {  # type: ignore[union-attr]
        "supports": 449,
        "refutes": 404,
        "not enough info": 346,
    }
    assert Counter(s.gold.label for s in samples["2class"]) == {"supports": 449, "refutes": 404}  # type: ignore[union-attr]
    pool_ids = {r.id for r in pool}
    assert not pool_ids & {s.id for s in samples["all"]}
    assert [s.id for s in samples["all"]] == [r.id for r in records if r.id not in pool_ids]


def test_a_limited_load_makes_the_first_samples_only(
    shared_data: DataContext, loaded: tuple[SciTab, dict[str, list[Sample]]]
) -> None:
    """``limit`` (the hint a run's ``-n`` passes) makes only the first claims into samples (all of them were about
    1 CPU s a load); the demonstrations and the claims left out are a whole load's."""
    whole, samples = loaded
    for variant in SciTab.variants:
        limited, full = SciTab(), SciTab()
        assert limited.load(variant, shared_data, seed=0, limit=4) == samples[variant][:4]
        full.load(variant, shared_data, seed=0, limit=None)
        assert limited.demonstrations(variant) == whole.demonstrations(variant)
        assert limited.exclusions([]) == full.exclusions([]) and limited.exclusions([])


def test_demonstrations_come_from_the_pool(records: list[ClaimRecord]) -> None:
    for setting, labels in (
        ("2-class", ["supports", "supports", "refutes"]),
        ("3-class", ["supports", "not enough info", "refutes"]),
    ):
        demos = find_demonstrations(records, setting)
        assert [d.label for d in demos] == labels
        assert all(d.table_id in POOL_TABLES for d in demos)
    # the claims the paper's H.2-H.4 prompts quote
    claims = [d.claim for d in find_demonstrations(records, "2-class")]
    assert claims[0].startswith("[CONTINUE] The effectiveness of our hierarchical attention design is proved")
    assert claims[2].endswith("CMOW-C yields 5 points higher scores on WordContent and BigramShift.")


def test_keep_pool_evaluates_every_claim(shared_data: DataContext) -> None:
    samples = SciTab({"keep_pool": "true"}).load("all", shared_data, seed=0, limit=None)
    assert Counter(s.gold.label for s in samples) == {  # type: ignore[union-attr]
        "supports": 457,
        "refutes": 411,
        "not enough info": 356,
    }


def test_caption_goes_with_the_table(loaded: tuple[SciTab, dict[str, list[Sample]]]) -> None:
    _, samples = loaded
    first = samples["all"][0]
    (table,) = first.evidence
    assert isinstance(table, Table)
    assert table.caption == "Table 1: Performance of supervised learning models with different features."
    assert table.header[:3] == ["Feature", "LR P", "LR R"]
    assert table.rows[1][3] == "0.93"  # "[BOLD] 0.93" in the release
    assert first.meta == {"table_id": "042a154a-add4-4bcb-be23-541a760b2e1c", "paper_id": "1904.10743v1"}


def test_markers_are_treated_consistently(
    shared_data: DataContext, records: list[ClaimRecord], loaded: tuple[SciTab, dict[str, list[Sample]]]
) -> None:
    def texts(samples: list[Sample]) -> list[str]:
        out = []
        for s in samples:
            t = s.evidence[0]
            assert isinstance(t, Table)
            out += [t.caption or "", *t.header, *(c for row in t.rows for c in row)]
        return out

    stripped = texts(loaded[1]["all"])
    assert not any(m in c for c in stripped for m in ("[BOLD]", "[ITALIC]", "[EMPTY]"))
    kept = texts(SciTab({"markup": "keep"}).load("all", shared_data, seed=0, limit=None))
    assert sum("[BOLD]" in c for c in kept) > 5000
    # claims are never changed: the paper's prompts keep "[CONTINUE]"
    claims = {r.id: r.claim for r in records}
    assert all(s.question == claims[s.id] for s in loaded[1]["all"])
    assert sum("[CONTINUE]" in s.question for s in loaded[1]["all"]) == 184
