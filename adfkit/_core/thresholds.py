"""The automatic-compaction threshold and the context window in force, learned from what a
record states: the one rule behind ``settings()``, ``info()``/``adfkit info``, ``simulate()``
(the threshold in force, :func:`adfkit._analysis.settings.threshold_schedule`) and the
notebooks.

A format's rule (:attr:`adfkit._core.registry.FormatSpec.compaction_rule`) gives a window
from the model and a threshold from the window, ``assumed``: the tool's documented formula.
Where the record itself says more, the record wins (:func:`learned_settings`):

- **threshold, ``recorded``**: a record that states the tokens in context before each
  automatic compaction (Claude Code ``compactMetadata.preTokens``, Copilot CLI
  ``preCompactionTokens``...) shows the threshold the tool applied: the compaction fired
  when its count reached the threshold, so the threshold is at most the fewest tokens
  recorded before an automatic compaction, and that figure is taken. Only events whose
  recorded trigger is automatic (:data:`AUTOMATIC`) count (a manual compaction fires
  anywhere; a format that records no trigger, as pi, keeps its assumed threshold), and the
  figure must agree with the calls (a call above it with no automatic compaction after it
  keeps the assumed threshold). A configured threshold (an ADF agent's) is never replaced.
- **window**: a record that shows more tokens in context than the assumed window (tokens
  before a compaction, or a model call's input and output) ran with a larger window: the
  format's rule is asked again with that size as the least the window holds (Claude Code: the
  1M-token window), and its threshold follows when it was assumed. A window the record
  states (``recorded``) is kept.

Settings a tool reads from its environment (Claude Code's ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``
and ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``, Copilot's ``COPILOT_PROVIDER_MAX_PROMPT_TOKENS``) are
not written to the files adfkit reads: their effect shows only through the recorded figures
above.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Sequence

from adfkit._core.registry import Rule
from adfkit._core.source import Settings, WindowChange

#: A format's rule for one model: the window it holds at least (or None) -> :class:`Rule`.
RuleFor = Callable[[int | None], Rule]


def learned_settings(
    base: Settings,
    events: Sequence[tuple[str, int, WindowChange]],
    rule: RuleFor | None,
    calls: Sequence[tuple[int, int]] = (),
) -> Settings:
    """``base`` (the settings from the format's rule) with the threshold and window the
    record shows (the module docstring).

    The recorded threshold must agree with the calls: a model call whose ``input + output``
    is above it and that no automatic compaction followed (before the next call) shows the
    tool did not compact there, so the counts do not give one threshold (a record written by
    a generator, or a threshold that changed); the threshold then stays the assumed one and
    its rule says why.

    Parameters
    ----------
    base : the settings of the format's rule (threshold ``assumed``) or of the record.
    events : ``(event, boundary_seq, change)`` of every event in order (``compaction``,
        ``microcompaction``, ``clear``...) with what the record states of it.
    rule : the format's rule for this model, given the least window the record shows; None
        when the format has none.
    calls : ``(seq, input + output)`` of every model call with a known size, in seq order.

    Examples
    --------
    >>> from adfkit._core.source import Settings, WindowChange
    >>> base = Settings(compact_threshold=167_000, threshold_source="assumed",
    ...                 context_window=200_000, window_source="assumed")
    >>> ev = [("compaction", 10, WindowChange(trigger="auto", tokens_before=155_413)),
    ...       ("compaction", 20, WindowChange(trigger="auto", tokens_before=155_241)),
    ...       ("compaction", 30, WindowChange(trigger="manual", tokens_before=90_000))]
    >>> s = learned_settings(base, ev, None, [(9, 154_668), (19, 155_028), (29, 89_000)])
    >>> s.compact_threshold, s.threshold_source
    (155241, 'recorded')
    >>> learned_settings(base, ev, None, [(5, 160_000), (9, 154_668)]).threshold_source
    'assumed'
    """
    seen = [c.tokens_before for _, _, c in events if c.tokens_before] + [n for _, n in calls]
    st = _window(base, max(seen, default=0), rule)
    auto = [(b, c.tokens_before or 0) for k, b, c in events if automatic(k, c)]
    if not auto or st.threshold_source not in (None, "assumed"):
        return st
    return _recorded_threshold(st, auto, calls)


def _window(st: Settings, most: int, rule: RuleFor | None) -> Settings:
    """``st`` with the window the format's rule gives for a context of ``most`` tokens when
    that is more than its assumed window (and that rule's threshold, if it was assumed)."""
    w = st.context_window
    if rule is None or not w or most <= w or st.window_source == "recorded":
        return st
    r = rule(most)
    st = dataclasses.replace(st, context_window=r.window, window_source="assumed")
    if st.threshold_source != "assumed":
        return st
    note = f"; the record shows {most:,} tokens in context, more than a {w:,}-token window"
    return dataclasses.replace(st, compact_threshold=r.threshold, threshold_rule=r.text + note)


def _recorded_threshold(
    st: Settings, auto: list[tuple[int, int]], calls: Sequence[tuple[int, int]]
) -> Settings:
    """``st`` with the fewest tokens before an automatic compaction (``(boundary, tokens)``
    of each) as the threshold, ``recorded``, unless a call contradicts it."""
    t, prior = min(n for _, n in auto), st.compact_threshold
    over = _uncompacted_over(calls, [b for b, _ in auto], t)
    if over is not None:
        why = (
            f"; the fewest tokens recorded before an automatic compaction ({t:,}) is not the "
            f"threshold: the call at seq {over[0]} reached {over[1]:,} and none followed"
        )
        return dataclasses.replace(st, threshold_rule=(st.threshold_rule or "") + why)
    said = f"the tool's rule would say {prior:,}" if prior else "the tool's rule gives none"
    rule = (
        f"the fewest tokens in context before an automatic compaction ({t:,}, the least of "
        f"{len(auto)}); {said}"
    )
    return dataclasses.replace(
        st, compact_threshold=t, threshold_source="recorded", threshold_rule=rule
    )


#: Recorded triggers that mean the tool's threshold was reached: Claude Code's and Codex's
#: ``auto``, Copilot CLI's ``threshold``.
AUTOMATIC = frozenset(("auto", "threshold"))


def automatic(kind: str, c: WindowChange) -> bool:
    """Whether an event is an automatic compaction whose record states the tokens before it
    (what the threshold is learned from; the simulator's count at that point too)."""
    return kind == "compaction" and c.trigger in AUTOMATIC and bool(c.tokens_before)


def _uncompacted_over(
    calls: Sequence[tuple[int, int]], bounds: list[int], t: int
) -> tuple[int, int] | None:
    """The first ``(seq, size)`` of a call above ``t`` that is not the last call before an
    automatic compaction (whose boundary is in ``bounds``), or None."""
    seqs = [q for q, _ in calls]
    followed = {seqs[i - 1] for b in bounds if (i := bisect.bisect_right(seqs, b)) > 0}
    return next(((q, n) for q, n in calls if n > t and q not in followed), None)
