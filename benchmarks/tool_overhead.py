"""What the tool loop costs: a tool call on a 1,000,000-row table, and the loop's own cost per turn.

1. ``sql`` over one table of ``--rows`` rows (default 1,000,000: an id, a group of 100, a value, a label): the time to
   load it into the locked-down DuckDB (``toolbox.DuckTables``, ``csvdb``'s typing), then each query's time (median
   of ``--repeat``): a filtered count, a grouped aggregate, a top-k sort, a join of the table with a grouped view of
   itself, and a hostile cross join stopped at the time limit.
2. ``python`` over the same table (``--python-rows``, default the same): the sandboxed program's time (interpreter,
   pandas import, the table read from CSV into a DataFrame, a groupby), median of ``--repeat``.
3. The loop's harness per turn: ``strategies.tools.ToolLoop`` over a small table with a model that answers at once
   (``--turns`` turns per sample, each calling ``SELECT 1``), ``--samples`` samples; the wall time per turn, with the
   tool's own time taken out (what the harness adds: the request, the protocol, the trace).

    python benchmarks/tool_overhead.py                      # the figures of docs/develop/performance.md
    python benchmarks/tool_overhead.py --rows 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable

from structbench.backends.base import Choice, Message, Request, Response
from structbench.contract.benchmark import DIRECT
from structbench.data.evidence import Table
from structbench.data.sample import LabelGold, Sample
from structbench.strategies.tools import ToolLoop, ToolTask, table_workspace
from structbench.toolbox import DuckTables, NamedTable, PythonTables, ToolLimits

QUERIES = {
    "filtered count": "SELECT count(*) FROM t WHERE value > 500 AND label = 'b'",
    "grouped aggregate": "SELECT grp, count(*) AS n, avg(value) AS mean FROM t GROUP BY grp ORDER BY grp",
    "top 10 by value": "SELECT id, value FROM t ORDER BY value DESC, id LIMIT 10",
    "join with a grouped view": "SELECT t.grp, max(t.value - g.mean) FROM t JOIN (SELECT grp, avg(value) AS mean "
                                "FROM t GROUP BY grp) g ON t.grp = g.grp GROUP BY t.grp ORDER BY t.grp LIMIT 5",
    "cross join (stopped)": "SELECT count(*) FROM t a, t b",
}


def table(rows: int) -> NamedTable:
    labels = "abcde"
    cells = [[str(i), str(i % 100), str((i * 7919) % 1000), labels[i % 5]] for i in range(rows)]
    return NamedTable.of("t", ["id", "grp", "value", "label"], cells)


def timed(call: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, last = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        last = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), last


def sql_calls(rows: int, repeat: int) -> None:
    data = table(rows)
    start = time.perf_counter()
    sql = DuckTables([data], ToolLimits(seconds=5))
    print(f"sql over {rows:,} rows: load {time.perf_counter() - start:.2f} s")
    for name, query in QUERIES.items():
        seconds, result = timed(lambda q=query: sql.run(q), 1 if "stopped" in name else repeat)
        error = getattr(result, "error", None)
        print(f"  {name:<26} {seconds * 1000:9.1f} ms" + (f"  ({error})" if error else ""))
    sql.close()


def python_calls(rows: int, repeat: int) -> None:
    data = table(rows)
    python = PythonTables([data], ToolLimits(seconds=60, memory_mb=2048, max_chars=400))
    seconds, result = timed(lambda: python.run("print(t.groupby('grp')['value'].mean().head(3))"), repeat)
    print(f"python over {rows:,} rows: {seconds:.2f} s a call ({'ok' if result.error is None else result.error})")
    seconds, result = timed(lambda: PythonTables([table(10)]).run("print(len(t))"), repeat)
    print(f"python over 10 rows: {seconds:.2f} s a call (the interpreter and pandas' import)")


def harness_per_turn(samples: int, turns: int) -> None:
    small = Table(header=["id", "value"], rows=[[str(i), str(i * 3)] for i in range(50)])

    def task(sample: Sample) -> ToolTask:
        workspace = table_workspace(sample.evidence, python=False)  # type: ignore[arg-type]
        return ToolTask((Message("user", f"{workspace.schema}\nQ: {sample.question}"),), workspace)

    loop = ToolLoop("tools", task, answer=DIRECT, max_turns=turns + 1)
    sample0 = Sample(id="w", benchmark="b", variant="v", task="t", question="?", evidence=[small],
                     gold=LabelGold(label="A"))
    building, _ = timed(lambda: task(sample0).workspace.close(), 5)

    async def generate(request: Request) -> Response:
        done = sum(m.role == "assistant" for m in request.messages or ())
        text = "```sql\nSELECT 1 AS one\n```" if done < turns else "A"
        return Response(choices=(Choice(text=text),))

    async def run_all() -> tuple[float, int]:
        tool = 0.0
        for k in range(samples):
            sample = Sample(id=str(k), benchmark="b", variant="v", task="t", question="?", evidence=[small],
                            gold=LabelGold(label="A"))
            attempt = await loop.run(sample, generate)
            tool += sum(call["seconds"] for call in attempt.artifacts["tools"]["trace"])
        return tool, samples * (turns + 1)

    start = time.perf_counter()
    tool, count = asyncio.run(run_all())
    wall = time.perf_counter() - start
    harness = (wall - tool - building * samples) / count
    print(f"loop: {samples} samples x {turns + 1} turns: {wall / samples * 1000:.1f} ms a sample in all: the "
          f"workspace (its DuckDB, once a sample) {building * 1000:.1f} ms, the tool {tool / count * 1000:.2f} ms a "
          f"turn, the harness {harness * 1000:.2f} ms a turn")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--python-rows", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--turns", type=int, default=4)
    args = parser.parse_args()
    sql_calls(args.rows, args.repeat)
    python_calls(args.python_rows or args.rows, max(1, args.repeat // 2))
    harness_per_turn(args.samples, args.turns)


if __name__ == "__main__":
    main()
