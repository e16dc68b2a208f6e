"""Local checkpoints through Hugging Face transformers: ``--model hf:MODEL``.

MODEL is a checkpoint directory, a ``.gguf`` file (transformers' ``gguf_file``), a hub id found in the
local hub cache, or ``embedded`` (see ``checkpoints``). Requests that strategies send concurrently are
batched: greedy requests with the same ``max_tokens`` and ``stop`` share one left-padded ``generate``
call of up to ``batch_size`` prompts; a sampled request runs alone with its ``n`` samples drawn in one
call after ``torch.manual_seed(seed)``, so it gives the same samples whatever else is in flight. On
out-of-memory a batch runs again in chunks of half its size, which becomes the batch size for the rest
of the run. Closing the backend (a stopped run) ends a running ``generate`` at its next token, and its
cut-short rows are errors, never replies.

Every sampling knob a model's ``generation_config.json`` may set is fixed from the request (top-k off,
no repetition penalty), as on the other backends. Log-probabilities are those of the first generated
position, over the model's raw logits (captured from the forward pass, before any logits processor),
as the llama.cpp backend gives them (under ``choices`` too). ``--model-option`` settings: ``dtype`` (``auto``,
``float32``, ``bfloat16``, ``float16``), ``device`` (default ``cuda``, ``mps`` or ``cpu``, whichever is there),
``device_map`` (``auto`` spreads a model over several GPUs), ``batch_size`` (8), ``truncate``
(``error`` or ``left``), ``max_length`` (the context, default the model's), ``seed`` (for sampled
requests without one, default 0), ``revision`` and ``download`` (hub ids); anything else goes to
``from_pretrained`` (``attn_implementation=sdpa``, ``trust_remote_code=true`` ...).

A request's ``choices`` constrain decoding to a token trie of the choices (each tokenized as a continuation
of the prompt): at each step only the tokens that continue a choice are allowed, and an end-of-sequence
token once a whole choice is out, so the reply is exactly one of them (greedy, or sampled among the allowed
tokens), as llama.cpp's grammar makes it. Requests with different choices share a batch, each row with its
own trie. A chat request's ``chat_template_args`` go to the chat template (``enable_thinking`` ...); a reply's
thought is kept apart from its answer (``local_prompts.local_choice``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from structbench.backends.base import (
    Backend,
    BackendError,
    Choice,
    GenerationParams,
    Request,
    Response,
    thought_tokens,
)
from structbench.backends.checkpoints import Checkpoint, gguf_read_once, import_transformers, load_tokenizer, resolve
from structbench.backends.factory import BackendSpec
from structbench.backends.local_prompts import (
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
from structbench.backends.tokens import IdsCounter, TokenCounter
from structbench.core.errors import UsageError

log = logging.getLogger(__name__)

DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class HFSettings(LocalSettings):
    """The ``--model-option`` settings of the ``hf`` backend; the rest go to ``from_pretrained``."""

    dtype: str = "auto"
    device: str | None = None
    device_map: Any = None
    batch_size: int = 8
    max_length: int | None = None
    load_kwargs: dict[str, Any] = field(default_factory=dict)

    BACKEND = "hf"
    EXECUTION_ONLY = ("device", "device_map", "batch_size", "download", "max_memory", "offload_folder",
                      "low_cpu_mem_usage")
    PASSTHROUGH = "load_kwargs"

    @classmethod
    def parse(cls, options: dict[str, str]) -> HFSettings:
        args = typed(options)
        shared = cls.pop_shared(args)
        settings = cls(
            dtype=pop(args, "dtype", "auto", str, "hf"),
            device=pop(args, "device", None, str, "hf"),
            device_map=pop(args, "device_map", None, (str, dict), "hf"),
            batch_size=pop(args, "batch_size", 8, int, "hf"),
            max_length=pop(args, "max_length", None, int, "hf"),
            load_kwargs=args,
            **shared,
        )
        if settings.dtype not in DTYPES:
            raise UsageError(f"--model-option dtype={settings.dtype}: expected one of {', '.join(DTYPES)}")
        if settings.batch_size < 1:
            raise UsageError("--model-option batch_size: at least 1")
        return settings


@dataclass
class _Loaded:
    """The model and what every batch needs to know about it."""

    model: Any
    tokenizer: Any
    template: str
    stop_ids: list[int]
    pad_id: int
    context: int
    device: Any


@dataclass
class _Trie:
    """The token sequences of a set of choices: a node's children by token id, and the choice that ends at it."""

    children: dict[int, _Trie] = field(default_factory=dict)
    choice: str | None = None
    _allowed: dict[tuple[str, tuple[int, ...]], Any] = field(default_factory=dict, repr=False, compare=False)
    """``allowed_ids`` by device and end-of-sequence ids."""

    @classmethod
    def build(cls, tokenizer: Any, prompt: list[int], choices: tuple[str, ...]) -> _Trie:
        root = cls()
        for choice in choices:
            node = root
            for token in _continuation(tokenizer, prompt, choice):
                node = node.children.setdefault(token, cls())
            if node.choice is None:  # two choices that tokenize alike: the first one names it
                node.choice = choice
        return root

    def allowed_ids(self, stop_ids: list[int], device: Any) -> Any:
        """The ids that may follow this node (a child, or an end once a choice is out) as a tensor on
        ``device``; built on first use and kept, since tries outlive a batch."""
        import torch

        key = (str(device), tuple(stop_ids))
        if key not in self._allowed:
            ids = list(self.children) + (list(stop_ids) if self.choice is not None else [])
            self._allowed[key] = torch.tensor(ids, dtype=torch.long, device=device)
        return self._allowed[key]

    def walk(self, tokens: list[int]) -> _Trie | None:
        """The node ``tokens`` lead to, or None when they leave the trie."""
        node: _Trie | None = self
        for token in tokens:
            node = node.children.get(token) if node is not None else None
        return node


def _continuation(tokenizer: Any, prompt: list[int], text: str) -> list[int]:
    """``text``'s token ids as they follow ``prompt`` (a tokenizer that marks word starts spells the same
    text differently after a prompt than alone): the tokens the prompt's last few tokens plus ``text`` gain
    over those tokens alone, or ``text`` tokenized alone where the two do not line up."""
    tail = tokenizer.decode(prompt[-4:]) if prompt else ""
    head = tokenizer(tail, add_special_tokens=False)["input_ids"]
    full = tokenizer(tail + text, add_special_tokens=False)["input_ids"]
    if tail and full[: len(head)] == head and tokenizer.decode(full[len(head):]) == text:
        return list(full[len(head):])
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


@dataclass
class _Job:
    request: Request
    sample: str
    future: asyncio.Future[Response]


def _batch_key(params: GenerationParams, job: _Job) -> tuple[Any, ...]:
    """Greedy requests batch with any others of the same length limit, stops, ``n`` and ``top_logprobs`` (a
    batch is generated and repeated with its first request's); sampled ones run alone."""
    if params.temperature > 0:
        return ("sampled", id(job))
    return ("greedy", params.max_tokens, params.stop, params.n, params.top_logprobs)


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


class HFBackend(Backend):
    """A causal language model run in-process by transformers, with request batching."""

    backend = "hf"
    supports_logprobs = True
    supports_choices = True
    supports_chat_template_args = True
    model_options = None  # HFSettings.parse checks them; the rest go to from_pretrained

    def __init__(self, checkpoint: Checkpoint, model: str, settings: HFSettings) -> None:
        self.model = model
        self.checkpoint = checkpoint
        self.settings = settings
        self.batch_size = settings.batch_size
        self.base_url = settings.base_url(checkpoint)
        self._loaded: _Loaded | None = None
        self._load_error: str | None = None
        self._lock = threading.Lock()
        self._pending: list[_Job] = []
        self._drainer: asyncio.Task[None] | None = None
        self._interrupt = threading.Event()
        """Set when the run stops (Ctrl-C, close): the running ``generate`` ends at its next token."""
        self.generate_calls = 0
        """How many ``model.generate`` calls ran (batching makes it fewer than the requests)."""
        self._tries: dict[tuple[tuple[int, ...], tuple[str, ...]], _Trie] = {}

    # --- loading ------------------------------------------------------------------------------------

    def _load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        if self._load_error is not None:
            raise BackendError(self._load_error)
        try:
            self._loaded = self._load_model()
        except Exception as err:
            self._load_error = f"hf:{self.model}: the model did not load: {type(err).__name__}: {err}"
            raise BackendError(self._load_error) from err
        return self._loaded

    def _load_model(self) -> _Loaded:
        torch, transformers = import_transformers(f"hf:{self.model}")
        s, ck = self.settings, self.checkpoint
        where = {"gguf_file": ck.gguf_file} if ck.gguf_file else {}
        dtype = s.dtype if s.dtype == "auto" else getattr(torch, s.dtype)
        kwargs = {"dtype": dtype, "local_files_only": True, **where, **s.load_kwargs}
        if s.device_map is not None:
            kwargs["device_map"] = s.device_map
        with gguf_read_once() if ck.gguf_file else nullcontext():
            tokenizer = load_tokenizer(transformers, ck)
            model = transformers.AutoModelForCausalLM.from_pretrained(ck.path, **kwargs)
        if s.device_map is None:
            model.to(s.device or _default_device(torch))
        model.eval()
        stop_ids = stop_token_ids(tokenizer, model.generation_config)
        pad = tokenizer.pad_token_id
        context = s.max_length or _context_length(model.config, tokenizer)
        if context is None:
            raise UsageError(f"hf:{self.model}: context length unknown; pass --model-option max_length=N")
        return _Loaded(
            model=model,
            tokenizer=tokenizer,
            template=chat_template(tokenizer, getattr(model.config, "model_type", "")),
            stop_ids=stop_ids,
            pad_id=pad if pad is not None else (stop_ids[0] if stop_ids else 0),
            context=context,
            device=model.device,
        )

    # --- batching -----------------------------------------------------------------------------------

    async def context_window(self) -> int | None:
        """``--model-option max_length`` where given (None with ``truncate=left``, which takes any prompt)."""
        return None if self.settings.truncate == "left" else self.settings.max_length

    async def generate(self, request: Request) -> Response:
        loop = asyncio.get_running_loop()
        self._interrupt.clear()
        job = _Job(request, sample_label(), loop.create_future())
        self._pending.append(job)
        if self._drainer is None or self._drainer.done() or self._drainer.get_loop() is not loop:
            self._drainer = loop.create_task(self._drain())
        return await job.future

    def _take_batch(self) -> list[_Job]:
        """The oldest waiting job and up to ``batch_size - 1`` later ones that can share its ``generate``."""
        self._pending = [j for j in self._pending if not j.future.done()]
        if not self._pending:
            return []
        key = _batch_key(self._pending[0].request.params, self._pending[0])
        batch = [j for j in self._pending if _batch_key(j.request.params, j) == key][: self.batch_size]
        taken = {id(j) for j in batch}
        self._pending = [j for j in self._pending if id(j) not in taken]
        return batch

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # the other strategies' requests of this loop turn join the first batch
        while self._pending:
            batch = self._take_batch()
            if not batch:
                break
            try:
                results = await asyncio.to_thread(self._run_batch, [(j.request, j.sample) for j in batch])
            except BaseException as err:
                self._interrupt.set()  # cancelled: do not keep the CPU or GPU busy for nobody
                for job in batch:
                    if not job.future.done():
                        job.future.set_exception(err if isinstance(err, Exception) else BackendError("stopped"))
                raise
            for job, result in zip(batch, results, strict=True):
                if job.future.done():
                    continue
                if isinstance(result, Response):
                    job.future.set_result(result)
                else:
                    job.future.set_exception(result)

    # --- one batch (worker thread) ------------------------------------------------------------------

    def _run_batch(self, items: list[tuple[Request, str]]) -> list[Response | BaseException]:
        with self._lock:
            try:
                loaded = self._load()
            except BackendError as err:
                return [err for _ in items]
            results: list[Response | BaseException] = [BackendError("no result")] * len(items)
            rows: list[tuple[int, list[int]]] = []
            opened: dict[int, bool] = {}
            for i, (request, sample) in enumerate(items):
                try:
                    prompt = encode_prompt(loaded.tokenizer, request, loaded.template)
                    rows.append((i, fit_context(prompt.ids, request.params.max_tokens, loaded.context,
                                                self.settings.truncate, sample)))
                    opened[i] = prompt.opened
                except BackendError as err:
                    results[i] = err
                except Exception as err:  # the chat template raised (a bad --chat-template-arg, say)
                    results[i] = BackendError(f"hf:{self.model}: the chat template failed: {type(err).__name__}: {err}")
            if not rows:
                return results
            params = items[rows[0][0]][0].params
            logprobs = any(items[i][0].params.logprobs for i, _ in rows)
            tries = [self._trie(loaded, ids, items[i][0].params.choices) for i, ids in rows]
            try:
                outputs = self._generate_split(loaded, [ids for _, ids in rows], tries, params, logprobs)
            except BackendError as err:
                for i, _ in rows:
                    results[i] = err
                return results
            for (i, ids), trie, samples in zip(rows, tries, outputs, strict=True):
                mine = items[i][0].params
                choices = [self._choice(loaded, tokens, mine, logp, trie, opened[i]) for tokens, logp in samples]
                picked = tuple(choice for choice, _ in choices)
                results[i] = Response(
                    choices=picked,
                    prompt_tokens=len(ids),
                    completion_tokens=sum(used for _, used in choices),
                    reasoning_tokens=thought_tokens(picked),
                )
            return results

    def _trie(self, loaded: _Loaded, prompt: list[int], choices: tuple[str, ...]) -> _Trie | None:
        """The token trie of ``choices`` after ``prompt`` (None without choices), built once per prompt ending."""
        if not choices:
            return None
        key = (tuple(prompt[-4:]), choices)
        if key not in self._tries:
            self._tries[key] = _Trie.build(loaded.tokenizer, prompt, choices)
        return self._tries[key]

    def _generate_split(
        self, loaded: _Loaded, rows: list[list[int]], tries: list[_Trie | None], params: GenerationParams,
        logprobs: bool,
    ) -> list[list[_Sample]]:
        """``_generate``; on out-of-memory, the batch again in chunks of half its size (which becomes the
        batch size for the rest of the run)."""
        try:
            return self._generate(loaded, rows, tries, params, logprobs)
        except BackendError:
            raise
        except Exception as err:
            if not _is_oom(err):
                raise BackendError(f"hf:{self.model}: {type(err).__name__}: {err}") from err
            _free_memory()
            if len(rows) == 1:
                raise BackendError(f"hf:{self.model}: out of memory on one prompt of {len(rows[0])} tokens") from err
            size = len(rows) // 2
            self.batch_size = min(self.batch_size, size)
            log.warning("hf: out of memory on a batch of %d; batch size now %d", len(rows), self.batch_size)
            out: list[list[_Sample]] = []
            for start in range(0, len(rows), size):
                out += self._generate_split(loaded, rows[start: start + size], tries[start: start + size], params,
                                            logprobs)
            return out

    def _generate(
        self, loaded: _Loaded, rows: list[list[int]], tries: list[_Trie | None], params: GenerationParams,
        logprobs: bool,
    ) -> list[list[_Sample]]:
        """One left-padded ``generate`` over ``rows`` (each constrained to its trie, if any): per row, its ``n``
        samples (generated token ids, and the log-probabilities over the vocabulary at the first position when
        ``logprobs``)."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), loaded.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, ids in enumerate(rows):
            input_ids[k, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            mask[k, width - len(ids):] = 1
        sampled = params.temperature > 0
        n = params.n if sampled else 1
        # sampling knobs the model's generation_config.json might set are fixed (they would fill in for None)
        knobs = (
            {"temperature": params.temperature, "top_p": params.top_p, "top_k": 0, "min_p": 0.0, "typical_p": 1.0,
             "epsilon_cutoff": 0.0, "eta_cutoff": 0.0}
            if sampled
            else {}
        )
        config = GenerationConfig(
            max_new_tokens=params.max_tokens,
            min_new_tokens=0,
            do_sample=sampled,
            **knobs,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            num_beams=1,
            num_return_sequences=n,
            eos_token_id=loaded.stop_ids,
            pad_token_id=loaded.pad_id,
            return_dict_in_generate=False,
        )
        criteria = StoppingCriteriaList([_Interrupted(self._interrupt)])
        if params.stop:
            criteria.append(_StopText(loaded.tokenizer, params.stop, width))
        processors = LogitsProcessorList()
        if any(trie is not None for trie in tries):  # num_return_sequences repeats each row n times in place
            processors.append(_ChoiceMask([t for t in tries for _ in range(n)], loaded.stop_ids, width))
        captured: list[Any] = []

        def first_logits(_module: Any, _args: Any, output: Any) -> None:
            if not captured:  # the prompt's forward pass: its last position predicts the first token
                logits = output.logits if hasattr(output, "logits") else output[0]
                captured.append(logits[:, -1, :].float())

        hook = loaded.model.register_forward_hook(first_logits) if logprobs else None
        if sampled:
            torch.manual_seed(params.seed if params.seed is not None else self.settings.seed)
        try:
            with torch.inference_mode():
                out = loaded.model.generate(
                    input_ids=input_ids.to(loaded.device),
                    attention_mask=mask.to(loaded.device),
                    generation_config=config,
                    stopping_criteria=criteria,
                    logits_processor=processors,
                )
        finally:
            if hook is not None:
                hook.remove()
        if self._interrupt.is_set():  # cut short: nothing of it may be taken for a reply (or cached)
            raise BackendError(f"hf:{self.model}: stopped before the batch finished")
        self.generate_calls += 1
        generated = out[:, width:].tolist()
        logp = torch.log_softmax(captured[0], dim=-1).cpu() if captured else None
        per_row = []
        for k in range(len(rows)):
            samples = [(generated[j], None if logp is None else logp[j]) for j in range(k * n, (k + 1) * n)]
            per_row.append(samples if sampled else samples * params.n)  # greedy: n identical choices
        return per_row

    def _choice(
        self, loaded: _Loaded, tokens: list[int], params: GenerationParams, logp: Any, trie: _Trie | None,
        opened: bool = False,
    ) -> tuple[Choice, int]:
        """A generated row as a choice (cut at the first end-of-turn token, then at the first stop string; its
        thought apart, ``local_choice``), and how many tokens it took. Under ``trie``, a completed path is the
        choice it spells, verbatim (a constrained reply has no thought, even after a prompt that opened one)."""
        finish = "length"
        for pos, token in enumerate(tokens):
            if token in loaded.stop_ids:
                tokens, finish = tokens[: pos + 1], "stop"
                break
        else:  # a row stopped by a stop string is padded to the batch's length
            while len(tokens) > 1 and tokens[-1] == loaded.pad_id:
                tokens = tokens[:-1]
        first = tokens[0] if tokens else None
        used = len(tokens)
        if finish == "stop":
            tokens = tokens[:-1]
        text = decode_reply(loaded.tokenizer, tokens, tag_ids(loaded.tokenizer, params))
        node = trie.walk(tokens) if trie is not None and finish == "stop" else None
        if node is not None and node.choice is not None:
            text = node.choice
        cuts = [text.find(s) for s in params.stop if s and s in text]
        if cuts:
            text, finish = text[: min(cuts)], "stop"
        lps = None
        if params.logprobs and logp is not None and first is not None:
            lps = _first_token_logprobs(logp, first, params.top_logprobs, loaded.tokenizer)
        return local_choice(loaded.tokenizer, text, params, opened=opened and trie is None, finish_reason=finish,
                            logprobs=lps), used

    async def aclose(self) -> None:
        self._interrupt.set()
        if self._drainer is not None and not self._drainer.done():
            await asyncio.gather(self._drainer, return_exceptions=True)
        with self._lock:
            self._loaded = None
            self._tries.clear()  # their nodes hold allowed-id tensors on the model's device
        _free_memory()


_Sample = tuple[list[int], Any]
"""One generated row: its token ids, and its first-position log-probabilities (or None)."""


class _Interrupted:
    """Stops every row once ``event`` is set."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


class _ChoiceMask:
    """A logits processor that keeps, in each row with a trie, only the tokens that continue a choice (and
    the end-of-sequence tokens once a whole choice is out); rows without a trie, or already ended, are left as
    they are. Custom processors run before temperature and top-p, so sampling is among the allowed tokens.
    A step masks ``scores`` in place with the nodes' cached allowed ids: no vocabulary-wide tensor per row."""

    def __init__(self, tries: list[_Trie | None], stop_ids: list[int], start: int) -> None:
        self.tries = tries
        self.stop_ids = stop_ids
        self.start = start
        self._ends: Any = None
        """The end-of-sequence ids on the scores' device: all a row off its trie may take."""

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        generated = input_ids[:, self.start:].tolist()
        for row, (trie, tokens) in enumerate(zip(self.tries, generated, strict=True)):
            if trie is None or any(t in self.stop_ids for t in tokens):
                continue
            node = trie.walk(tokens)
            if node is not None:
                keep = node.allowed_ids(self.stop_ids, scores.device)
            else:  # off the trie (a row a stop string ended, now padded): only an end
                if self._ends is None:
                    self._ends = torch.tensor(self.stop_ids, dtype=torch.long, device=scores.device)
                keep = self._ends
            kept = scores[row, keep]
            scores[row].fill_(-math.inf)
            scores[row, keep] = kept
        return scores


class _StopText:
    """Stops a row once its generated text contains a stop string (checked over the last few tokens)."""

    def __init__(self, tokenizer: Any, stops: tuple[str, ...], start: int) -> None:
        self.tokenizer = tokenizer
        self.stops = [s for s in stops if s]
        self.start = start
        self.window = max((len(s) for s in self.stops), default=1) + 4

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        tail = input_ids[:, max(self.start, input_ids.shape[1] - self.window):]
        texts = self.tokenizer.batch_decode(tail, skip_special_tokens=True)
        return torch.tensor([any(s in t for s in self.stops) for t in texts], device=input_ids.device)


def _first_token_logprobs(logp: Any, token: int, top_k: int, tokenizer: Any) -> tuple[Any, ...]:
    """The first generated token's log-probability and the ``max(1, top_k)`` most likely alternatives."""
    import torch

    from structbench.backends.base import TokenLogprob

    values, indices = torch.topk(logp, max(1, top_k))
    piece = lambda t: tokenizer.decode([int(t)])  # noqa: E731
    top: dict[str, float] = {}
    for v, i in zip(values.tolist(), indices.tolist(), strict=True):
        top.setdefault(piece(i), float(v))  # tokens that print alike (byte pieces) keep the likeliest
    return (TokenLogprob(token=piece(token), logprob=float(logp[token]), top=top),)


def _default_device(torch: Any) -> str:
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _context_length(config: Any, tokenizer: Any) -> int | None:
    """The model's context: its position limit, else the tokenizer's (when it is a real limit)."""
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 10_000_000 else None


def _free_memory() -> None:
    import gc

    gc.collect()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model hf:MODEL: name a checkpoint directory, a .gguf file, a hub id, or 'embedded'")
    import_transformers(f"hf:{spec.name}")
    settings = HFSettings.parse(spec.options)
    return HFBackend(settings.resolve(spec.name), spec.name, settings)


def token_counter(name: str) -> TokenCounter:
    """The tokenizer of model ``name`` (as ``hf:``/``vllm:`` take it) as a ``structbench.backends.tokens`` counter."""
    _, transformers = import_transformers(f"token counter hf:{name}")
    tokenizer = load_tokenizer(transformers, resolve(name, backend="hf"))
    return IdsCounter(
        lambda text: tokenizer(text, add_special_tokens=False)["input_ids"],
        lambda ids: tokenizer.decode(list(ids), skip_special_tokens=True),
    )
