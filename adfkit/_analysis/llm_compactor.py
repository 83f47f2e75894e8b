"""The LLM compactor: a model behind any OpenAI- or Anthropic-compatible endpoint summarises
the window before each compaction (``--compactor llm:model=...``).

Settings, each a parameter of :func:`llm` or else an environment variable:

- ``api`` (``ADFKIT_LLM_API``): ``anthropic`` (``POST {base_url}/v1/messages``, default base
  ``https://api.anthropic.com``) or ``openai`` (``POST {base_url}/chat/completions``, default
  base ``https://api.openai.com/v1``; any compatible server: vLLM, Ollama, OpenRouter...);
- ``model`` (``ADFKIT_LLM_MODEL``), ``base_url`` (``ADFKIT_LLM_BASE_URL``);
- the key, from the environment only: ``ADFKIT_LLM_API_KEY``, else ``ANTHROPIC_API_KEY`` or
  ``OPENAI_API_KEY`` by ``api``. **No key, no call**: making the compactor without one is an
  ``AdfError`` that says which variable to set;
- ``prompt``: what the model is asked. The compaction's own instructions where the record holds
  them (a ``/compact`` focus), else this, else :data:`DEFAULT_PROMPT`;
- ``cache`` (``ADFKIT_LLM_CACHE``, default ``~/.cache/adfkit/llm``): every answer is kept on
  disk under the SHA-256 of its request (endpoint, model, body; never the key), so a rerun asks
  nothing and costs nothing (its cost is still reported: what the call cost when it was made);
- ``budget_tokens`` (default 1,000,000) and ``budget_usd`` (default none): caps on what the
  requests this compactor makes may spend, checked before each request with its prompt's
  estimate and its whole ``max_tokens``: a request that could pass a cap is not sent, and that
  compaction's row says so (:class:`CompactorError`);
- ``max_tokens``: the answer's cap (default the compaction's budget: the recorded new window's
  tokens, at least 256, at most 8,192).

The window is sent as one transcript (each message as ``[kind] text``, tool calls as
``name {input}``, tool results as written), so any model takes it whatever tools the session
had. The new window is the answer, as one summary message.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from adfkit._analysis.kept import window_text
from adfkit._analysis.windows import (
    Compacted,
    CompactionInput,
    Compactor,
    CompactorError,
    Message,
    window_tokens,
)
from adfkit._base.errors import AdfError
from adfkit._core.prices import load_prices, price_for

DEFAULT_PROMPT = (
    "You are compacting the conversation above so that the agent can continue its work from "
    "your summary alone. Write a concise summary that keeps: the user's instructions and "
    "corrections, the task and what is left to do, every file path, command, identifier, URL "
    "and error message that may be needed again, and the decisions made."
)
_BASES = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
#: How long one request may take (seconds).
TIMEOUT = 300


def _transcript(messages: Sequence[Message]) -> str:
    return "\n\n".join(f"[{m.kind}] {window_text([(m.kind, list(m.blocks))])}" for m in messages)


class _Endpoint:
    """One endpoint and model: builds requests, sends them, reads answers."""

    def __init__(self, api: str, base_url: str, model: str, key: str) -> None:
        self.api, self.base, self.model, self.key = api, base_url.rstrip("/"), model, key

    @property
    def url(self) -> str:
        return self.base + ("/v1/messages" if self.api == "anthropic" else "/chat/completions")

    def body(self, system: str, transcript: str, max_tokens: int) -> dict[str, Any]:
        if self.api == "anthropic":
            return {
                "model": self.model,
                "max_tokens": max_tokens,
                "system": system,
                "messages": [{"role": "user", "content": transcript}],
            }
        return {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": transcript},
            ],
        }

    def send(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"content-type": "application/json"}
        if self.api == "anthropic":
            headers.update({"x-api-key": self.key, "anthropic-version": "2023-06-01"})
        else:
            headers["authorization"] = f"Bearer {self.key}"
        req = urllib.request.Request(self.url, orjson.dumps(body), headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 - the user's URL
                got = orjson.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            raise CompactorError(f"{self.url} answered {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError, orjson.JSONDecodeError) as exc:
            raise CompactorError(f"{self.url}: {exc}") from None
        return self.answer(got)

    def answer(self, got: Any) -> dict[str, Any]:
        """``{text, input_tokens, output_tokens}`` of a response body."""
        try:
            if self.api == "anthropic":
                text = "".join(b["text"] for b in got["content"] if b.get("type") == "text")
                u = got.get("usage") or {}
                tin, tout = u.get("input_tokens"), u.get("output_tokens")
            else:
                text = got["choices"][0]["message"]["content"] or ""
                u = got.get("usage") or {}
                tin, tout = u.get("prompt_tokens"), u.get("completion_tokens")
        except (KeyError, IndexError, TypeError) as exc:
            raise CompactorError(f"{self.url}: an answer without text ({exc!r})") from None
        return {"text": text, "input_tokens": tin, "output_tokens": tout}


class _Budget:
    """What the requests of one compactor may still spend."""

    def __init__(self, tokens: int | None, usd: float | None) -> None:
        self.tokens, self.usd = tokens, usd
        self.spent_tokens, self.spent_usd = 0, 0.0

    def check(self, tokens: int, usd: float | None) -> None:
        if self.tokens is not None and self.spent_tokens + tokens > self.tokens:
            raise CompactorError(
                f"not sent: the request could take {tokens:,} tokens and "
                f"{self.spent_tokens:,} of the budget of {self.tokens:,} are spent"
            )
        if self.usd is not None and usd is not None and self.spent_usd + usd > self.usd:
            raise CompactorError(
                f"not sent: the request could cost {usd:.4f} USD and {self.spent_usd:.4f} "
                f"of the budget of {self.usd:.4f} USD are spent"
            )

    def spend(self, tokens: int, usd: float | None) -> None:
        self.spent_tokens += tokens
        self.spent_usd += usd or 0.0


def _cost(model: str, tin: Any, tout: Any) -> float | None:
    p = price_for(load_prices(None), model)
    if p is None or not isinstance(tin, int) or not isinstance(tout, int):
        return None
    return round((tin * p.input + tout * p.output) / 1e6, 8)


class _Client:
    """An endpoint with its on-disk cache and its budget: what the compactor and the judge
    share. ``who`` names it in errors (``llm compactor``, ``llm judge``)."""

    def __init__(
        self,
        who: str,
        model: str | None,
        base_url: str | None,
        api: str | None,
        cache: str | None,
        budget_tokens: int | str | None,
        budget_usd: float | str | None,
    ) -> None:
        api = (api or os.environ.get("ADFKIT_LLM_API") or "anthropic").lower()
        if api not in _BASES:
            raise AdfError(f"{who}: api must be anthropic or openai, not {api!r}")
        model = model or os.environ.get("ADFKIT_LLM_MODEL")
        if not model:
            raise AdfError(f"{who}: no model (model=NAME, or set ADFKIT_LLM_MODEL)")
        key = os.environ.get("ADFKIT_LLM_API_KEY") or os.environ.get(_KEYS[api])
        if not key:
            raise AdfError(
                f"{who}: no API key in the environment (set ADFKIT_LLM_API_KEY or "
                f"{_KEYS[api]}); no call is made without one"
            )
        base = base_url or os.environ.get("ADFKIT_LLM_BASE_URL") or _BASES[api]
        self.model = model
        self.end = _Endpoint(api, base, model, key)
        where = cache or os.environ.get("ADFKIT_LLM_CACHE") or "~/.cache/adfkit/llm"
        self.folder = Path(where).expanduser()
        usd = None if budget_usd in (None, "") else float(budget_usd)
        if usd is not None and price_for(load_prices(None), model) is None:
            raise AdfError(f"{who}: no price for {model!r}, so budget_usd cannot be kept")
        self.budget = _Budget(None if budget_tokens in (None, "") else int(budget_tokens), usd)

    def ask(
        self, system: str, user: str, max_tokens: int, est_in: int
    ) -> tuple[dict[str, Any], bool]:
        """The answer (``{text, input_tokens, output_tokens}``) and whether it came from the
        cache; ``est_in`` is the prompt's estimated tokens, for the budget."""
        body = self.end.body(system, user, max_tokens)
        digest = hashlib.sha256(orjson.dumps({"url": self.end.url, "body": body})).hexdigest()
        path = self.folder / f"{digest}.json"
        if path.is_file():
            return orjson.loads(path.read_bytes()), True
        est_in += len(system) // 3
        self.budget.check(est_in + max_tokens, self.cost(est_in, max_tokens))
        got = self.end.send(body)
        tin, tout = got["input_tokens"], got["output_tokens"]
        self.budget.spend((tin or est_in) + (tout or max_tokens), self.cost(tin, tout))
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(orjson.dumps(got))
        tmp.replace(path)
        return got, False

    def cost(self, tin: Any, tout: Any) -> float | None:
        return _cost(self.model, tin, tout)


def llm(
    model: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    prompt: str | None = None,
    cache: str | None = None,
    budget_tokens: int | str | None = 1_000_000,
    budget_usd: float | str | None = None,
    max_tokens: int | str | None = None,
) -> Compactor:
    """The LLM compactor (the module docstring says what each setting does)."""
    client = _Client("llm compactor", model, base_url, api, cache, budget_tokens, budget_usd)
    cap = None if max_tokens in (None, "") else int(max_tokens)

    def compact(inp: CompactionInput) -> Compacted:
        system = inp.prompt or prompt or DEFAULT_PROMPT
        out = cap or min(max(inp.budget or 0, 256), 8192)
        got, cached = client.ask(
            system, _transcript(inp.messages), out, window_tokens(inp.messages)
        )
        note = "cached answer: no request made" if cached else f"answered by {client.model}"
        summary = Message("compaction_summary", "user", ({"type": "text", "text": got["text"]},))
        return Compacted((summary,), client.cost(got["input_tokens"], got["output_tokens"]), note)

    return compact


# -- the judge -----------------------------------------------------------------------------
JUDGE_PROMPT = (
    "You are checking what a compacted conversation still tells an agent. Read the context, "
    "then answer each numbered question with yes or no, from the context alone. Reply with a "
    'JSON array of "yes"/"no" strings, one per question, in order, and nothing else.'
)
#: The probe question asked for an item, by kind.
PROBES = {
    "path": "Does the context name the file path {v!r}?",
    "identifier": "Does the context name {v!r}?",
    "url": "Does the context give the URL {v!r}?",
    "error": "Does the context say that this error happened: {v!r}?",
    "command": "Does the context give the command {v!r}?",
    "instruction": "Does the context tell the agent this instruction: {v!r}?",
    "todo": "Does the context list this open task: {v!r}?",
    "quantity": "Does the context state the quantity {v!r}?",
}

Judge = Callable[[Sequence[tuple[str, str]], Sequence[Message]], "list[bool | None]"]


def probes(items: Sequence[tuple[str, str]]) -> list[str]:
    """The probe questions of ``(kind, value)`` items, numbered."""
    return [
        f"{i}. {PROBES.get(k, PROBES['identifier']).format(v=v)}"
        for i, (k, v) in enumerate(items, 1)
    ]


def _verdicts(text: str, n: int) -> list[bool | None]:
    """The judge's yes/no answers (None for one it did not give)."""
    i, j = text.find("["), text.rfind("]")
    try:
        got = orjson.loads(text[i : j + 1]) if i >= 0 and j > i else None
    except orjson.JSONDecodeError:
        got = None
    if not isinstance(got, list):
        raise CompactorError(f"the judge did not answer with a JSON array: {text[:120]!r}")
    out: list[bool | None] = []
    for k in range(n):
        a = str(got[k]).strip().lower() if k < len(got) else ""
        out.append(True if a.startswith("y") else False if a.startswith("n") else None)
    return out


def llm_judge(
    model: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    cache: str | None = None,
    budget_tokens: int | str | None = 1_000_000,
    budget_usd: float | str | None = None,
) -> Judge:
    """An LLM judge (the same settings as :func:`llm`): given the items needed again after a
    compaction and a new window, it asks the model one probe question per item
    (:data:`PROBES`) about the window and returns its yes/no answers. Reported apart from the
    deterministic recall (``judge_*`` columns of :meth:`compaction_lab`), never mixed in."""
    client = _Client("llm judge", model, base_url, api, cache, budget_tokens, budget_usd)

    def judge(items: Sequence[tuple[str, str]], messages: Sequence[Message]) -> list[bool | None]:
        if not items:
            return []
        user = _transcript(messages) + "\n\nQuestions:\n" + "\n".join(probes(items))
        out = 16 + 8 * len(items)
        got, _ = client.ask(JUDGE_PROMPT, user, out, window_tokens(messages) + 30 * len(items))
        return _verdicts(got["text"], len(items))

    return judge
