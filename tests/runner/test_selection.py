"""A run's samples as a stream (``runner.selection``): read as the run needs them, selected as a list would be,
checked as they pass, and a benchmark that builds them all at once warned about when they are many."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.backends.base import Request
from structbench.backends.mock import MockBackend
from structbench.contract.benchmark import Samples
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runfiles.runconfig import RunConfig
from structbench.runner import selection
from structbench.runner.run import Run, job_window
from structbench.runner.selection import load_samples, open_samples
from structbench.runner.store import read_records
from toybench import ToyBench


class Counted(ToyBench):
    """The toy benchmark, counting the samples its stream has made."""

    made = 0

    def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
        def counted() -> Iterator[Sample]:
            for sample in super(Counted, self).load(variant, data, seed=seed, limit=limit):
                Counted.made += 1
                yield sample

        return Samples(counted(), expected=self.options.size)


class Listed(ToyBench):
    """The toy benchmark, built all at once."""

    def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
        return list(super().load(variant, data, seed=seed, limit=limit))


def test_a_run_reads_a_streaming_benchmarks_samples_as_it_needs_them(tmp_path: Path) -> None:
    Counted.made = 0
    ahead: list[int] = []
    answered = [0]

    def reply(request: Request) -> str:  # how far the stream is ahead of the answers when each request is sent
        ahead.append(Counted.made - answered[0])
        answered[0] += 1
        return "yes"

    config = RunConfig(model="mock", benches=["toy:small"], options={"toy.size": "300"})
    bench = Counted(ToyBench.Options(size=300))
    sel = selection.Selection(bench, "small", open_samples(bench, "small", DataContext(), seed=0, limit=None),
                              [bench.strategy(None)])
    assert Counted.made == 1  # the first sample, read before the run starts (errors surface early)
    metrics = Run(tmp_path / "run", config).execute(MockBackend(reply=reply), [sel], cache=None, concurrency=4,
                                                    progress=False)
    assert metrics.results[0].n == 300 and len(list(read_records(tmp_path / "run" / "samples.jsonl"))) == 300
    assert Counted.made == 300 and len(ahead) == 300
    assert max(ahead) <= job_window(4)  # 16 samples read at a time; a list would have made all 300 at once


def test_selections_sharing_a_stream_read_it_once(tmp_path: Path) -> None:
    Counted.made = 0
    config = RunConfig(model="mock", benches=["toy:small"], strategies=["direct", "vote"],
                       options={"toy.size": "50"})
    bench = Counted(ToyBench.Options(size=50))
    shared = open_samples(bench, "small", DataContext(), seed=0, limit=None)
    selections = [selection.Selection(bench, "small", shared, [bench.strategy("direct")]),
                  selection.Selection(bench, "small", shared, [bench.strategy("vote")])]
    Run(tmp_path / "run", config).execute(MockBackend(default="yes"), selections, cache=None, concurrency=4,
                                          progress=False)
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    assert Counted.made == 50  # one pass for both
    assert sorted((r.strategy, r.id) for r in records) == sorted(
        (strategy, f"toy-{i}") for strategy in ("direct", "vote") for i in range(50))


@pytest.mark.parametrize(("sample", "limit"), [(None, 7), (9, None), (9, 4), (500, None)])
def test_a_stream_selects_the_samples_a_list_selects(sample: int | None, limit: int | None) -> None:
    options = ToyBench.Options(size=40)
    streamed = open_samples(Counted(options), "small", DataContext(), seed=3, limit=limit, sample=sample)
    listed = open_samples(Listed(options), "small", DataContext(), seed=3, limit=limit, sample=sample)
    assert streamed.held is None and listed.held is not None
    ids = [s.id for s in streamed]
    assert ids == [s.id for s in listed]
    assert streamed.count == len(ids) == streamed.expected
    assert [s.id for s in streamed] == ids  # a second pass loads them again, the same
    assert load_samples(Counted(options), "small", DataContext(), seed=3, limit=limit, sample=sample) == list(listed)


def test_named_samples_are_found_in_a_stream() -> None:
    found = open_samples(Counted(ToyBench.Options(size=40)), "small", DataContext(), seed=0, limit=None,
                         ids=["toy-31", "toy-2"])
    assert [s.id for s in found] == ["toy-2", "toy-31"]


def test_a_repeated_id_in_a_stream_is_a_data_error() -> None:
    class Repeats(ToyBench):
        def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
            samples = list(super().load(variant, data, seed=seed, limit=limit))
            return iter([*samples, samples[2]])

    stream = open_samples(Repeats(ToyBench.Options(size=5)), "small", DataContext(), seed=0, limit=None)
    with pytest.raises(DataError, match="toy:small: duplicate sample id 'toy-2'"):
        list(stream)


def test_a_large_set_built_all_at_once_is_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ToyBench.Options(size=50)
    listed = selection.Selection(Listed(options), "small",
                                 open_samples(Listed(options), "small", DataContext(), seed=0, limit=None), [])
    streamed = selection.Selection(Counted(options), "small",
                                   open_samples(Counted(options), "small", DataContext(), seed=0, limit=None), [])
    assert listed.held_warning() is None  # small
    monkeypatch.setattr(selection, "HELD_WARNING_BYTES", 10_000)
    warning = listed.held_warning()
    assert warning is not None
    assert warning.startswith("warning: toy:small builds its 50 samples all at once, and the run holds them")
    assert streamed.held_warning() is None  # a stream is never held, whatever its size


def test_a_small_stream_of_known_size_is_held_whole_when_asked() -> None:
    Counted.made = 0
    stream = open_samples(Counted(ToyBench.Options(size=30)), "small", DataContext(), seed=0, limit=None)
    assert stream.held is None and Counted.made == 1
    assert stream.hold()
    assert Counted.made == 30 and stream.held is not None and stream.count == 30
    assert stream.seen("toy-29")
    assert [s.id for s in stream] == [f"toy-{i}" for i in range(30)]  # every pass reads the held samples
    assert Counted.made == 30
    assert stream.hold()  # held already


def test_a_stream_too_large_or_of_unknown_size_is_not_held() -> None:
    bench = Counted(ToyBench.Options(size=30))
    large = open_samples(bench, "small", DataContext(), seed=0, limit=None)
    assert not large.hold(limit_bytes=1000) and large.held is None

    class Unsized(ToyBench):
        def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
            return iter(super().load(variant, data, seed=seed, limit=limit))

    unsized = open_samples(Unsized(ToyBench.Options(size=30)), "small", DataContext(), seed=0, limit=None)
    assert unsized.expected is None and not unsized.hold() and unsized.held is None
    assert len(list(large)) == len(list(unsized)) == 30  # both still stream


def test_holding_a_stream_checks_its_ids() -> None:
    class Repeats(ToyBench):
        def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
            samples = list(super().load(variant, data, seed=seed, limit=limit))
            return Samples(iter([*samples, samples[2]]), expected=6)

    stream = open_samples(Repeats(ToyBench.Options(size=5)), "small", DataContext(), seed=0, limit=None)
    with pytest.raises(DataError, match="toy:small: duplicate sample id 'toy-2'"):
        stream.hold()


class MadeWhole(ToyBench):
    """A stream that can also be made all at once (``Samples.whole``), counting each way's samples."""

    streamed = wholes = 0

    def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
        samples = list(super().load(variant, data, seed=seed, limit=None))

        def stream() -> Iterator[Sample]:
            for s in samples[:limit]:
                MadeWhole.streamed += 1
                yield s

        def whole() -> list[Sample]:
            MadeWhole.wholes += 1
            return samples  # the loader's limit is a hint: more than asked, cut by the stream

        return Samples(stream(), expected=len(samples[:limit]), whole=whole)


def test_a_stream_made_whole_is_held_from_its_whole_making() -> None:
    MadeWhole.streamed = MadeWhole.wholes = 0
    stream = open_samples(MadeWhole(ToyBench.Options(size=30)), "small", DataContext(), seed=0, limit=12)
    assert MadeWhole.streamed == 1 and stream.first is not None
    assert stream.hold()
    assert MadeWhole.wholes == 1 and MadeWhole.streamed == 1  # the rest of the stream was never read
    assert stream.count == 12 and stream.held is not None and stream.seen("toy-11") and not stream.seen("toy-12")
    assert [s.id for s in stream] == [f"toy-{i}" for i in range(12)] and stream.first.id == "toy-0"


def test_a_stream_made_whole_is_checked_and_a_draw_still_streams() -> None:
    class Repeats(MadeWhole):
        def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
            loaded = super().load(variant, data, seed=seed, limit=limit)
            made = loaded.whole
            return Samples(loaded, expected=loaded.expected, whole=lambda: [*made(), made()[2]])

    with pytest.raises(DataError, match="toy:small: duplicate sample id 'toy-2'"):
        open_samples(Repeats(ToyBench.Options(size=5)), "small", DataContext(), seed=0, limit=None).hold()
    MadeWhole.streamed = MadeWhole.wholes = 0
    drawn = open_samples(MadeWhole(ToyBench.Options(size=30)), "small", DataContext(), seed=0, limit=None, sample=5)
    assert drawn.hold() and MadeWhole.wholes == 0  # ``--sample`` picks positions of the stream: read, not made
    assert len(list(drawn)) == 5
