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
from collections.abc import Sequence
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
    api = (api or os.environ.get("ADFKIT_LLM_API") or "anthropic").lower()
    if api not in _BASES:
        raise AdfError(f"llm compactor: api must be anthropic or openai, not {api!r}")
    model = model or os.environ.get("ADFKIT_LLM_MODEL")
    if not model:
        raise AdfError("llm compactor: no model (llm:model=NAME, or set ADFKIT_LLM_MODEL)")
    key = os.environ.get("ADFKIT_LLM_API_KEY") or os.environ.get(_KEYS[api])
    if not key:
        raise AdfError(
            f"llm compactor: no API key in the environment (set ADFKIT_LLM_API_KEY or "
            f"{_KEYS[api]}); no call is made without one"
        )
    end = _Endpoint(
        api, base_url or os.environ.get("ADFKIT_LLM_BASE_URL") or _BASES[api], model, key
    )
    folder = Path(cache or os.environ.get("ADFKIT_LLM_CACHE") or "~/.cache/adfkit/llm").expanduser()
    usd = None if budget_usd in (None, "") else float(budget_usd)
    if usd is not None and price_for(load_prices(None), model) is None:
        raise AdfError(f"llm compactor: no price for {model!r}, so budget_usd cannot be kept")
    budget = _Budget(None if budget_tokens in (None, "") else int(budget_tokens), usd)
    cap = None if max_tokens in (None, "") else int(max_tokens)

    def compact(inp: CompactionInput) -> Compacted:
        system = inp.prompt or prompt or DEFAULT_PROMPT
        out = cap or min(max(inp.budget or 0, 256), 8192)
        body = end.body(system, _transcript(inp.messages), out)
        digest = hashlib.sha256(orjson.dumps({"url": end.url, "body": body})).hexdigest()
        path = folder / f"{digest}.json"
        note = "cached answer: no request made"
        if path.is_file():
            got = orjson.loads(path.read_bytes())
        else:
            est_in = window_tokens(inp.messages) + len(system) // 3
            budget.check(est_in + out, _cost(model, est_in, out))
            got = end.send(body)
            budget.spend(
                (got["input_tokens"] or est_in) + (got["output_tokens"] or out),
                _cost(model, got["input_tokens"], got["output_tokens"]),
            )
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(orjson.dumps(got))
            tmp.replace(path)
            note = f"answered by {model}"
        summary = Message("compaction_summary", "user", ({"type": "text", "text": got["text"]},))
        return Compacted((summary,), _cost(model, got["input_tokens"], got["output_tokens"]), note)

    return compact
