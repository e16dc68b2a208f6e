"""Throughput of the in-process backends against the libraries used directly, on StrucText-Eval prompts.

``hf``: the ``hf`` backend (concurrent requests, batched ``batch_size`` at a time) against a plain
transformers loop: left-padded batches of the same size, one ``model.generate`` each, greedy.
Target: >= 90%. ``vllm``: the ``vllm`` backend (concurrent requests into one engine) against vLLM's own
``LLM.generate`` on all prompts at once, with the same engine arguments. Target: >= 95%.

Both sides get the same prompts (the first request of each sample under the benchmark's default
strategy, rendered by the same chat template and tokenized inside the timed part on both sides), the
same ``max_tokens``, greedy decoding, a warm-up, and
alternate over ``--rounds``. Reported: generated tokens (equal on both sides when the outputs agree), wall
and CPU time (of all processes: vLLM's engine runs in child processes) per side, the median of the
per-round throughput ratios, and the ratio by CPU time, which a busy shared machine disturbs least.

    python benchmarks/local_throughput.py hf --model embedded --prompts 32 --batch-size 8 --max-tokens 32
    python benchmarks/local_throughput.py vllm --model embedded --prompts 32 --max-tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from structbench.backends.base import Choice, Request, Response
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.local_prompts import chat_template, encode, stop_token_ids
from structbench.data.datasets import DataContext
from structbench.runner.selection import load_benchmark


def benchmark_requests(entry: str, n: int, max_tokens: int) -> list[Request]:
    """The first request of each of the first ``n`` samples under the default strategy, greedy, capped."""
    bench, variant = load_benchmark(entry, {})
    samples = bench.load(variant, DataContext.from_env(None, offline=True), seed=0, limit=n)[:n]
    strategy = bench.strategy(None)

    async def first(sample: Any) -> Request:
        seen: list[Request] = []

        async def record(request: Request) -> Response:
            seen.append(request)
            return Response(choices=(Choice(text=""),))

        await strategy.run(sample, record)
        return seen[0]

    async def all_first() -> list[Request]:
        return [await first(s) for s in samples]

    requests = asyncio.run(all_first())
    return [replace(r, params=replace(r.params, max_tokens=max_tokens, temperature=0.0, n=1)) for r in requests]


def cpu_seconds() -> float:
    """CPU time of this process and all its children (vLLM's engine runs in child processes)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def timed(fn: Any) -> tuple[float, float, Any]:
    """Wall seconds, CPU seconds (all processes) and the result of ``fn()``."""
    start, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    return time.perf_counter() - start, cpu_seconds() - cpu, out


def compare(args: argparse.Namespace, name: str, ours: Any, theirs: Any, target: float) -> None:
    """Alternate ``ours`` and ``theirs`` (each returns generated tokens) and report throughput ratios: the
    median over rounds of the per-round ratio of wall times (rounds alternate, so both sides of a round see
    the same load on a shared machine), and the ratio of total CPU seconds."""
    rows = []
    for _ in range(args.rounds):
        rows.append((timed(ours), timed(theirs)))
    tokens = (rows[-1][0][2], rows[-1][1][2])
    print(f"generated tokens per round: backend {tokens[0]}, {name} {tokens[1]}")
    for label, side, count in (("backend", 0, tokens[0]), (name, 1, tokens[1])):
        walls = [r[side][0] for r in rows]
        wall = statistics.median(walls)
        cpu = sum(r[side][1] for r in rows) / len(rows)
        print(f"{label:<14} wall median {wall:.2f} s ({count / wall:.1f} tok/s) {[round(w, 2) for w in walls]}  "
              f"CPU {cpu:.2f} s per round")
    ratios = [(r[0][2] / r[0][0]) / (r[1][2] / r[1][0]) for r in rows]
    cpu_ratio = sum(r[1][1] for r in rows) / sum(r[0][1] for r in rows) * tokens[0] / tokens[1]
    print(f"throughput backend / {name}: {100 * statistics.median(ratios):.1f}% (median of per-round wall ratios "
          f"{[round(100 * x) for x in ratios]}), {100 * cpu_ratio:.1f}% by CPU time  (target >= {100 * target:.0f}%)")


def run_hf(args: argparse.Namespace, requests: list[Request]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options = {"batch_size": str(args.batch_size), "dtype": args.dtype}
    backend: Any = make_backend(BackendSpec(backend="hf", name=args.model, options=options))
    path = backend.checkpoint.path
    tokenizer = AutoTokenizer.from_pretrained(path)
    dtype = "auto" if args.dtype == "auto" else getattr(torch, args.dtype)
    model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    model.eval()
    template = chat_template(tokenizer, model.config.model_type)
    stops = stop_token_ids(tokenizer, model.generation_config)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stops[0]
    prompts = list(requests)

    def plain_loop() -> int:
        # in a worker thread, as the backend runs generate: on an oversubscribed machine OpenMP in the main
        # thread was seen to spin 2-3x the CPU for the same work, which would flatter the backend
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(loop_body).result()

    def loop_body() -> int:
        generated = 0
        for start in range(0, len(prompts), args.batch_size):
            rows = [encode(tokenizer, r, template) for r in prompts[start: start + args.batch_size]]
            width = max(map(len, rows))
            ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
            mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
            with torch.inference_mode():
                out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=args.max_tokens,
                                     do_sample=False, eos_token_id=stops, pad_token_id=pad)
            for row in out[:, width:].tolist():
                generated += next((i + 1 for i, t in enumerate(row) if t in stops), len(row))
        return generated

    def through_backend() -> int:
        async def go() -> list[Response]:
            return list(await asyncio.gather(*(backend.generate(r) for r in requests)))

        return sum(r.completion_tokens or 0 for r in asyncio.run(go()))

    asyncio.run(backend.generate(requests[0]))  # load + warm-up
    first, prompts[:] = prompts[:], prompts[:1]
    plain_loop()  # warm-up
    prompts[:] = first
    compare(args, "generate loop", through_backend, plain_loop, 0.90)


def run_vllm(args: argparse.Namespace, requests: list[Request]) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt
    from vllm.sampling_params import RequestOutputKind

    options = {"kv_cache_memory_bytes": str(args.kv_cache_mib << 20), "max_model_len": str(args.max_model_len)}
    if args.dtype != "auto":
        options["dtype"] = args.dtype
    backend: Any = make_backend(BackendSpec(backend="vllm", name=args.model, options=options))
    asyncio.run(backend.generate(requests[0]))  # start the engine + warm-up
    llm = LLM(**backend._engine_kwargs())
    tokenizer = llm.get_tokenizer()
    template = chat_template(tokenizer, llm.llm_engine.model_config.hf_config.model_type)
    stops = stop_token_ids(tokenizer, llm.llm_engine.model_config.hf_config)
    params = SamplingParams(max_tokens=args.max_tokens, temperature=0.0, top_k=0, stop_token_ids=stops,
                            output_kind=RequestOutputKind.FINAL_ONLY)

    def plain_generate() -> int:
        prompts = [TokensPrompt(prompt_token_ids=encode(tokenizer, r, template)) for r in requests]
        outputs = llm.generate(prompts, params, use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outputs)

    def through_backend() -> int:
        async def go() -> list[Response]:
            return list(await asyncio.gather(*(backend.generate(r) for r in requests)))

        return sum(r.completion_tokens or 0 for r in asyncio.run(go()))

    plain_generate()  # warm-up
    compare(args, "LLM.generate", through_backend, plain_generate, 0.95)
    asyncio.run(backend.aclose())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("backend", choices=("hf", "vllm"))
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--bench", default="structext:test")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8, help="hf: prompts per generate call")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kv-cache-mib", type=int, default=1024, help="vllm: KV cache size")
    parser.add_argument("--max-model-len", type=int, default=4096, help="vllm: context")
    args = parser.parse_args()
    requests = benchmark_requests(args.bench, args.prompts, args.max_tokens)
    lengths = [sum(len(m.content) for m in r.messages or ()) + len(r.prompt or "") for r in requests]
    print(f"{len(requests)} {args.bench} prompts ({min(lengths)}-{max(lengths)} characters), "
          f"max_tokens {args.max_tokens}, greedy")
    (run_hf if args.backend == "hf" else run_vllm)(args, requests)


if __name__ == "__main__":
    main()
