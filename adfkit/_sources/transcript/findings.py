"""Integrity findings while a file is read: :class:`Findings` (capped per check),
:func:`warn_findings`, :class:`TypeCounts` (the records of a skipped type summed into one finding).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adfkit._base.errors import AdfWarning

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

from adfkit._sources.transcript.records import Finding


class Findings:
    """Collects findings, keeping at most ``cap`` per check (then one summary finding)."""

    def __init__(self, cap: int = 50) -> None:
        self.items: list[Finding] = []
        self._counts: dict[str, int] = {}
        self._cap = cap

    def add(self, check: str, severity: str, line: int | None, detail: str) -> None:
        n = self._counts.get(check, 0) + 1
        self._counts[check] = n
        if n <= self._cap:
            self.items.append(Finding(check, severity, line, detail))

    def done(self) -> list[Finding]:
        """The findings, plus one per check that passed the cap."""
        out = list(self.items)
        for check, n in self._counts.items():
            if n > self._cap:
                sev = next(f.severity for f in self.items if f.check == check)
                out.append(
                    Finding(check, sev, None, f"{n - self._cap} more '{check}' findings omitted")
                )
        return out


def warn_findings(path: str, findings: list[Finding], *, stacklevel: int = 3) -> None:
    """Emit one :class:`AdfWarning` summarising the warning- and error-level findings."""
    bad = [f for f in findings if f.severity in ("warning", "error")]
    if not bad:
        return
    parts = [f"line {f.line}: {f.detail}" if f.line else f.detail for f in bad[:5]]
    more = f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""
    warnings.warn(
        f"{path}: {len(bad)} problem(s) reading the transcript: " + "; ".join(parts) + more,
        AdfWarning,
        stacklevel=stacklevel,
    )


class TypeCounts:
    """Record types a reader skipped (or kept only as links), with their lines: one summary
    finding per type at the end, not one per record."""

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: dict[str, list[int]] = {}

    def add(self, t: Any, line: int) -> None:
        """Count a record of type ``t`` (a value that is not text is named by its JSON type)."""
        key = t if isinstance(t, str) else f"<{type(t).__name__}>"
        self.lines.setdefault(key[:60], []).append(line)

    def report(
        self,
        fnd: Findings,
        check: str,
        severity: str,
        detail: str | Callable[[int, str], str],
        *,
        at_line: bool = True,
    ) -> None:
        """One finding per type; ``detail`` is formatted with ``n`` (records) and ``t`` (type)
        (or called with them), on the first such record's line (``at_line``) or on the whole
        file."""
        for t, lines in self.lines.items():
            n = len(lines)
            text = detail(n, t) if callable(detail) else detail.format(n=n, t=t)
            fnd.add(check, severity, lines[0] if at_line else None, text)
