"""What the models' providers publish about them, from ``genai-prices`` (kept by the pydantic
team: the providers' list prices with cache rates and tiers, their history, and each model's
context window, shipped as data inside the package and read offline, never fetched).

adfkit's own table (``adfkit/data/prices.json``) and the user's (``--prices FILE``) come first
(:func:`adfkit._core.prices.price_for`); this is the source for every model they do not name.
"""

from __future__ import annotations

import datetime
import functools
from typing import Any

#: input, output, cache read, cache write, 1-hour cache write (USD per million tokens).
Rates = tuple[float, float, float | None, float | None, float | None]


def _mtok(v: Any) -> float | None:
    """A genai-prices rate (a Decimal, or tiers: their base rate) as a float."""
    if v is None:
        return None
    base = getattr(v, "base", v)  # TieredPrices: the rate below the first tier
    return float(base)


@functools.cache
def library_rates(model: str) -> Rates | None:
    """The current list rates of ``model`` (USD per million tokens: input, output, cache
    read, cache write, 1-hour cache write; None where it has none) from ``genai-prices`` (the
    data it ships, never fetched: no network), for a model the shipped table and the user's
    do not name; None when it does not know the model either (or is not installed). A
    ``provider/model`` id is looked up with that provider first. Long-context tiers are not
    modelled (the base rate), as in the shipped table.

    Examples
    --------
    >>> library_rates("claude-opus-5")
    (5.0, 25.0, 0.5, 6.25, 10.0)
    >>> library_rates("no-such-model") is None
    True
    """
    try:
        from genai_prices import data_snapshot
    except ImportError:
        return None
    snap = data_snapshot.get_snapshot()
    tries: list[tuple[str, str | None]] = [(model, None)]
    if "/" in model:
        provider, _, name = model.rpartition("/")
        tries = [(name, provider.rsplit("/", 1)[-1]), (name, None), *tries]
    for ref, provider_id in tries:
        try:
            _, info = snap.find_provider_model(ref, None, provider_id, None)
        except LookupError:
            continue
        p = info.get_prices(datetime.datetime.now(datetime.UTC))
        inp, out = _mtok(getattr(p, "input_mtok", None)), _mtok(getattr(p, "output_mtok", None))
        if inp is None or out is None:
            continue
        return (
            inp,
            out,
            _mtok(getattr(p, "cache_read_mtok", None)),
            _mtok(getattr(p, "cache_write_mtok", None)),
            _mtok(getattr(p, "cache_write_1h_mtok", None)),
        )
    return None


def context_window(model: str | None) -> int | None:
    """The context window of ``model`` in tokens from ``genai-prices``' model data (None when
    unknown or not installed).

    Examples
    --------
    >>> context_window("claude-opus-5")
    1000000
    """
    if not model:
        return None
    try:
        from genai_prices import data_snapshot
    except ImportError:
        return None
    snap = data_snapshot.get_snapshot()
    try:
        _, info = snap.find_provider_model(model.rsplit("/", 1)[-1], None, None, None)
    except LookupError:
        return None
    window = info.context_window
    return int(window) if window else None


def maker_of(model: str | None) -> str | None:
    """Who serves a model, from its id alone (a format that records the provider says so
    itself): a ``provider/`` prefix (``openai/gpt-4o-mini`` -> ``openai``), else the maker a
    bare name says (Claude: ``anthropic``; GPT, Codex and the o-series: ``openai``; Gemini:
    ``google``; Qwen: ``qwen``), else None. The one rule of every format's ``provider``.

    Examples
    --------
    >>> maker_of("anthropic/claude-sonnet-4-5"), maker_of("gpt-5.1-codex"), maker_of("o3")
    ('anthropic', 'openai', 'openai')
    >>> maker_of("gemini-2.5-pro"), maker_of("qwen3-coder"), maker_of("x"), maker_of(None)
    ('google', 'qwen', None, None)
    """
    if not model:
        return None
    if "/" in model:
        return model.split("/", 1)[0] or None
    m = model.lower()
    if m.startswith("claude"):
        return "anthropic"
    if m.startswith(("gpt", "codex")) or (len(m) > 1 and m[0] == "o" and m[1].isdigit()):
        return "openai"
    if m.startswith("gemini"):
        return "google"
    if m.startswith(("qwen", "qwq")):
        return "qwen"
    return None
