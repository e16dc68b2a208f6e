"""The paper's three-order protocol in one run: every question asked under each option map, metrics averaged.

The paper reports "each model's average performance ... over three runs with varied option orders"
(option maps 0, 1, 2 of the official code). With ``option_map=0,1,2`` each record becomes one sample per
map (id ``<record>/map<m>``, ``meta["option_map"] = "<m>"``), prompted and parsed under its own map;
every corpus metric is computed per map and averaged over the maps (so the headline is the mean of the
three weighted F1s), and each map's own metrics stay in the ``option_map`` breakdown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from structbench.benchmarks.structfact.metrics import average_runs
from structbench.contract.benchmark import Attempt, Generate, Scored, Strategy
from structbench.data.sample import Sample
from structbench.stats.bootstrap import Linear

MAP_KEY = "option_map"
"""The meta key (and breakdown key) holding a sample's option map when a run has several."""


def expand(samples: Sequence[Sample], maps: Sequence[int]) -> list[Sample]:
    """One sample per record and map, record by record (so ``--limit`` keeps whole records); a single map
    leaves the samples as they are."""
    if len(maps) == 1:
        return list(samples)
    return [
        sample.model_copy(
            update={
                "id": f"{sample.id}/map{m}",
                "meta": {**sample.meta, MAP_KEY: str(m)},
                "extra": {**sample.extra, "record_id": sample.id},
            }
        )
        for sample in samples
        for m in maps
    ]


def map_of(sample_meta: Mapping[str, object], maps: Sequence[int]) -> int:
    """The option map a sample (or its scored record) is asked under."""
    value = sample_meta.get(MAP_KEY)
    return maps[0] if value is None else int(str(value))


class PerOptionMap(Strategy):
    """One strategy, run with the prompts of the sample's own option map."""

    def __init__(self, by_map: Mapping[int, Strategy], maps: Sequence[int]) -> None:
        first = by_map[maps[0]]
        self.name = first.name
        self.description = first.description
        self.answer = first.answer
        self.by_map = dict(by_map)
        self.maps = tuple(maps)

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        return await self.by_map[map_of(sample.meta, self.maps)].run(sample, generate)


def averaged(
    scored: Sequence[Scored], maps: Sequence[int], metrics: Callable[[Sequence[Scored]], dict[str, float]]
) -> dict[str, float]:
    """``metrics`` over each map's samples, averaged over the maps that have samples."""
    runs = [metrics(group) for group in per_map(scored, maps).values() if group]
    return average_runs(runs) if runs else metrics([])


def per_map(scored: Sequence[Scored], maps: Sequence[int]) -> dict[int, list[Scored]]:
    """The scored samples of each map, in ``maps`` order."""
    groups: dict[int, list[Scored]] = {m: [] for m in maps}
    for s in scored:
        groups.setdefault(map_of(s.meta, maps), []).append(s)
    return groups


@dataclass(frozen=True)
class MapAverage(Linear):
    """A metric's mean over option maps on many bootstrap resamples: each map's statistic is computed on its
    own samples of the resample (``parts[i]`` counts only samples with ``groups == i``), and a resample
    without any sample of a map averages over the others, as ``averaged`` does."""

    parts: tuple[Linear, ...]
    groups: np.ndarray

    @cached_property
    def features(self) -> np.ndarray:
        """The parts' features side by side, then one column per map counting its samples."""
        member = (self.groups[:, None] == np.arange(len(self.parts))[None, :]).astype(float)
        return np.hstack([*(p.features for p in self.parts), member])

    def on_rows(self, idx: np.ndarray) -> np.ndarray:
        maps = len(self.parts)
        member = np.bincount((self.groups[idx] + maps * np.arange(len(idx))[:, None]).ravel(),
                             minlength=len(idx) * maps).reshape(len(idx), maps)
        return np.hstack([*(p.on_rows(idx) for p in self.parts), member.astype(float)])

    def finish(self, totals: np.ndarray) -> np.ndarray:
        start, values = 0, []
        for part in self.parts:
            width = part.features.shape[1]
            values.append(part.finish(totals[:, start:start + width]))
            start += width
        present = (totals[:, start:] > 0).T
        stacked = np.stack(values)
        sums = np.where(present, stacked, 0.0).sum(axis=0)
        counts = present.sum(axis=0)
        return np.where(counts > 0, sums / np.maximum(counts, 1), math.nan)
