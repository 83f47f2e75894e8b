"""An Inspect AI ``.eval`` log as a sequence of agents: one :class:`InspectSampleSource` per
sample and epoch, parsed when first asked for (listing them reads the zip's central directory
and ``header.json`` only)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import pandas as pd

from adfkit._base.errors import AdfError
from adfkit._core.source import Key, Settings
from adfkit._sources.inspect_eval.parser import FORMAT, parse_sample
from adfkit._sources.inspect_eval.rules import compaction_config, provider_of, threshold_of
from adfkit._sources.inspect_eval.zipread import DEFAULT_MAX_MEMBER_BYTES, EvalLogError, EvalZip
from adfkit._sources.transcript.kit import Finding, ParsedTranscript, warn_findings
from adfkit._sources.transcript.source import TranscriptSource

_SETTINGS: Key[Settings] = Key("inspect_eval.settings")
_SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")


def _natural(s: str) -> tuple[int, int | str]:
    return (0, int(s)) if s.isdigit() else (1, s)


class InspectSampleSource(TranscriptSource):
    """One sample (one epoch) of an Inspect ``.eval`` log, behind the :class:`AgentSource`
    boundary: history, compactions, usage and integrity as the other transcripts
    (:mod:`adfkit._sources.inspect_eval.parser` says how each maps)."""

    def __init__(
        self,
        parsed: ParsedTranscript,
        compaction: dict[str, Any] | None,
        inputs: dict[int, tuple[int, ...]] | None = None,
    ) -> None:
        super().__init__(parsed)
        self.format = FORMAT
        self.compaction = compaction
        self._inputs = dict(inputs or {})
        # An edit compaction's stub is what the next input holds, not Claude Code's.
        stubs = [e.extra.get("stub_chars") for e in parsed.events if e.kind == "microcompaction"]
        if stubs:
            it = iter(stubs)
            self._changes = [
                dataclasses.replace(c, stub_chars=int(next(it) or 0)) if c.cleared else c
                for c in self._changes
            ]

    def call_inputs(self) -> dict[int, tuple[int, ...]]:
        """The exact context of every agent call as the log stores it: call seq (its output
        row) -> the seqs of the rows its input held, in input order, context rows (the system
        message) included; input messages that are no row of the history (none in a sound
        log) are left out. What ``replay()`` rebuilds by walking the compactions equals this
        (tests/test_inspect_eval.py)."""
        return dict(self._inputs)

    @property
    def name(self) -> str:
        """``<sample id>_epoch_<n>`` (the member's name)."""
        m = self.parsed.meta
        return f"{m.get('sample_id', '?')}_epoch_{m.get('epoch', '?')}"

    def settings(self) -> Settings:
        """Model, provider (``<provider>/`` of Inspect's model name), and the threshold the
        log's plan records (``header.plan.steps[].params.compaction.threshold``:
        ``configured``), compared by Inspect with its own estimate of the next input; with no
        compaction in the plan, or a fraction of a window the log does not record, None and
        ``threshold_rule`` says why. Found once per sample (every table that needs the
        threshold asks again)."""
        st = self.memo.get(_SETTINGS, self._settings)
        return dataclasses.replace(st, audit=dict(st.audit))  # a dict of the caller's own

    def _settings(self) -> Settings:
        base = super().settings()
        threshold, rule = threshold_of(self.compaction, self.context_window())
        return dataclasses.replace(
            base,
            compact_threshold=threshold,
            threshold_source=None if threshold is None else "configured",
            threshold_rule=rule,
            provider=provider_of(base.model),
        )


class EvalLog(Sequence[InspectSampleSource]):
    """The samples of one ``.eval`` log, in sample-id then epoch order; ``log[i]`` parses
    sample ``i`` on first use. ``samples()`` lists them without parsing any.

    Parameters
    ----------
    path : the ``.eval`` file (read-only; never extracted).
    max_member_bytes : cap on one member's decompressed size (a zip bomb is refused).
    warn : emit one :class:`AdfWarning` per sample read with warning- or error-level findings.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
        warn: bool = True,
        **_options: Any,
    ) -> None:
        self.path = Path(path)
        self.zip = EvalZip(self.path, max_member_bytes=max_member_bytes)
        self.warn = warn
        self.findings: list[Finding] = []
        if self.zip.recovered:
            self.findings.append(Finding("truncated_zip", "error", None, self.zip.recovered))
        if self.zip.duplicates:
            dup = self.zip.duplicates
            self.findings.append(
                Finding(
                    "duplicate_member",
                    "warning",
                    None,
                    f"{len(dup)} member name(s) written more than once in the zip (the last "
                    f"entry is read): {', '.join(repr(n) for n in dup[:5])}",
                )
            )
        self.header: dict[str, Any] = {}
        self._read_header()
        found = []
        for name in self.zip.names():
            m = _SAMPLE.match(name)
            if m:
                found.append((m.group(1), int(m.group(2)), name))
        found.sort(key=lambda x: (_natural(x[0]), x[1]))
        self._members = found
        if not found and "header.json" not in self.zip and "_journal/start.json" not in self.zip:
            raise EvalLogError(
                "a zip without header.json, _journal/start.json or samples/: not an Inspect "
                ".eval log",
                path=self.path,
            )
        self._cache: dict[int, InspectSampleSource] = {}
        self.meta = self._meta()
        self._check_members()

    def _check_members(self) -> None:
        """A sample the header's dataset and epochs promise but the zip lacks: a warning when
        the log says it finished (``status`` success), else info (a log cut short)."""
        ev = self.header.get("eval")
        ds = ev.get("dataset") if isinstance(ev, dict) else None
        ids = ds.get("sample_ids") if isinstance(ds, dict) else None
        if not isinstance(ids, list):
            return
        cfg = ev.get("config") if isinstance(ev, dict) else None
        epochs = cfg.get("epochs") if isinstance(cfg, dict) else None
        n = epochs if type(epochs) is int and 0 < epochs < 100_000 else 1
        have = set(self.ids())
        missing = [
            f"{i}_epoch_{e}" for e in range(1, n + 1) for i in ids if (str(i), e) not in have
        ]
        if not missing:
            return
        done = self.header.get("status") == "success"
        shown = ", ".join(missing[:5]) + (
            f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""
        )
        self.findings.append(
            Finding(
                "missing_member",
                "warning" if done else "info",
                None,
                f"{len(missing)} sample(s) the header's dataset and epochs name are not in the "
                f"zip (log status {self.header.get('status')!r}): {shown}",
            )
        )

    def _read_header(self) -> None:
        for name in ("header.json", "_journal/start.json"):
            if name not in self.zip:
                self.findings.append(
                    Finding(
                        "missing_member",
                        "warning" if name == "header.json" else "info",
                        None,
                        f"no {name} in the zip"
                        + (" (a log still being written, or cut)" if name == "header.json" else ""),
                    )
                )
                continue
            try:
                h = self.zip.json(name)
            except EvalLogError as e:
                self.findings.append(Finding("bad_member", "error", None, e.detail))
                continue
            if isinstance(h, dict):
                self.header = h
                return
            self.findings.append(
                Finding("bad_member", "error", None, f"member {name!r} is JSON but not an object")
            )

    def _meta(self) -> dict[str, str]:
        h = self.header
        ev_raw = h.get("eval")
        ev: dict[str, Any] = ev_raw if isinstance(ev_raw, dict) else {}
        out: dict[str, str] = {}
        for k in ("task", "task_id", "eval_id", "run_id", "model", "created"):
            v = ev.get(k)
            if isinstance(v, str | int) and not isinstance(v, bool):
                out[k if k != "created" else "eval_created"] = str(v)
        pk = ev.get("packages")
        if isinstance(pk, dict) and isinstance(pk.get("inspect_ai"), str):
            out["inspect_version"] = out["version"] = pk["inspect_ai"]
        for k in ("version", "status"):
            v = h.get(k)
            if isinstance(v, str | int) and not isinstance(v, bool):
                out[f"log_{k}"] = str(v)
        return out

    def __len__(self) -> int:
        return len(self._members)

    @overload
    def __getitem__(self, i: int) -> InspectSampleSource: ...
    @overload
    def __getitem__(self, i: slice) -> list[InspectSampleSource]: ...
    def __getitem__(self, i: int | slice) -> InspectSampleSource | list[InspectSampleSource]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"sample index {i} out of range ({n} samples)")
        src = self._cache.get(j)
        if src is None:
            src = self._open(j)
            self._cache[j] = src
        return src

    def __iter__(self) -> Iterator[InspectSampleSource]:
        for j in range(len(self)):
            yield self[j]

    def ids(self) -> list[tuple[str, int]]:
        """``(sample id, epoch)`` of each sample, in order (the member names: nothing parsed)."""
        return [(s, e) for s, e, _ in self._members]

    def names(self) -> list[str]:
        """The name of each sample's source (``<sample id>_epoch_<n>``), in order, without
        parsing any."""
        return [f"{s}_epoch_{e}" for s, e, _ in self._members]

    def by_name(self, name: str) -> InspectSampleSource:
        """The sample named ``name``: ``<sample id>_epoch_<n>``, or a sample id alone (its
        first epoch). Raises :class:`EvalLogError` listing some names when none matches."""
        names = self.names()
        if name in names:
            return self[names.index(name)]
        try:
            return self[self.index_of(name)]
        except KeyError:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            raise EvalLogError(f"no sample {name!r} (samples: {shown})", path=self.path) from None

    def index_of(self, sample_id: Any, epoch: int | None = None) -> int:
        """Position of the sample with this id (and epoch; None: the first epoch)."""
        want = str(sample_id)
        for j, (s, e, _) in enumerate(self._members):
            if s == want and (epoch is None or e == int(epoch)):
                return j
        raise KeyError(
            f"{self.path}: no sample {sample_id!r}" + (f" epoch {epoch}" if epoch else "")
        )

    def samples(self) -> pd.DataFrame:
        """One row per sample and epoch, without parsing any: ``sample_id`` (string),
        ``epoch`` (Int64), ``member`` (string), ``compressed_bytes``, ``size_bytes`` (Int64),
        ``compression`` (string)."""
        recs = [
            {
                "sample_id": s,
                "epoch": e,
                "member": name,
                "compressed_bytes": self.zip.members[name].compressed,
                "size_bytes": self.zip.members[name].size,
                "compression": self.zip.members[name].method_name,
            }
            for s, e, name in self._members
        ]
        cols = {
            "sample_id": "string",
            "epoch": "Int64",
            "member": "string",
            "compressed_bytes": "Int64",
            "size_bytes": "Int64",
            "compression": "string",
        }
        return pd.DataFrame(recs, columns=list(cols)).astype(cols)

    def _open(self, j: int) -> InspectSampleSource:
        sid, epoch, member = self._members[j]
        obj = self.zip.json(member)  # EvalLogError / MemberTooLargeError name the member
        got = parse_sample(
            obj, path=str(self.path), member=member, meta=self.meta, findings=self.findings
        )
        parsed = got.parsed
        if "sample_id" not in parsed.meta:
            parsed.meta["sample_id"] = sid
            parsed.meta["epoch"] = str(epoch)
        if self.warn:
            warn_findings(f"{self.path} [{member}]", parsed.findings, stacklevel=4)
        return InspectSampleSource(parsed, compaction_config(self.header), got.inputs)


def open_eval(path: str | os.PathLike[str], **options: Any) -> EvalLog:
    """The samples of an Inspect ``.eval`` log (see :class:`EvalLog`)."""
    return EvalLog(Path(path).expanduser(), **options)


def open_member(path: str | os.PathLike[str], member: str, **options: Any) -> InspectSampleSource:
    """One sample of an Inspect ``.eval`` log, by name (see :meth:`EvalLog.by_name`)."""
    return EvalLog(Path(path).expanduser(), **options).by_name(member)


#: Columns of :func:`list_eval_logs`.
LOGS: dict[str, str] = {
    "path": "string",
    "task": "string",
    "eval_id": "string",
    "model": "string",
    "status": "string",
    "samples": "Int64",
    "created": "string",
    "inspect_version": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "compressed": "string",
    "error": "string",
}


def list_eval_logs(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """The ``.eval`` logs under ``folder`` (searched recursively), one row per file, newest
    first (by modification time): ``task``, ``eval_id``, ``model``, ``status``,
    ``created``, ``inspect_version`` (from ``header.json``, else ``_journal/start.json``),
    ``samples`` (sample-and-epoch members), ``compressed`` (the members' compression:
    ``zstd``, ``deflate``...), ``error`` (why the file could not be listed). No sample is read.
    """
    from adfkit._base.errors import NotTranscriptError
    from adfkit._sources.transcript.kit import sessions_frame

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Inspect logs", path=root)
    recs: list[dict[str, Any]] = []
    for f in sorted(root.rglob("*.eval")):
        try:
            st = f.stat()
        except OSError:
            continue
        if f.is_dir():
            continue
        rec: dict[str, Any] = {
            "path": str(f),
            "size_bytes": int(st.st_size),
            "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
            "error": None,
        }
        try:
            log = EvalLog(f, warn=False)
        except (AdfError, OSError) as e:
            rec["error"] = getattr(e, "detail", None) or str(e)
        else:
            m = log.meta
            rec.update(
                task=m.get("task"),
                eval_id=m.get("eval_id"),
                model=m.get("model"),
                status=m.get("log_status"),
                created=m.get("eval_created"),
                inspect_version=m.get("inspect_version"),
                samples=len(log),
                compressed=",".join(sorted({x.method_name for x in log.zip.members.values()})),
            )
        recs.append(rec)
    return sessions_frame(recs, LOGS)
