"""A large Claude Code session transcript for the ``transcripts`` benchmark section.

Made with the sample simulator (``adfsynth.claude_code.Session``), scaled up and streamed to disk
(records are written as they are made; only the recent ones are kept for the re-chained copies a
compaction writes). The mix follows what TRANSCRIPTS.md reports of real files: most lines are
``progress`` records (bash/hook progress streamed while tools run, about 3 in 4 lines), most bytes
are tool results (files read, command output) and assistant records, one record per content block;
``file-history-snapshot`` and ``queue-operation`` lines between turns; an automatic compaction
whenever the simulated prompt passes Claude Code's threshold (167,000 tokens), some preserving the
last rows; now and then a microcompaction and a rewind.

Usage: ``python benchmarks/gen_transcript.py [MB]`` (also called by ``benchmarks/run.py``; the file
is cached under ``build/bench``).
"""

from __future__ import annotations

import random
import sys
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # adfsynth, when run directly
from adfsynth.claude_code import SYSTEM_TOKENS, Session, _dump, _iso  # noqa: E402

THRESHOLD = 200_000 - 20_000 - 13_000
#: Files a snapshot lists at most, which keeps snapshots near a third of the bytes at any size
#: (TRANSCRIPTS.md §1.3: about 32% of the bytes of one large real file).
MAX_TRACKED = 150
SID = "5e55a0b1-3c4d-4e8f-9a0b-1c2d3e4f5a6b"


class _Streaming(Session):
    """A :class:`Session` whose records go straight to ``out``."""

    def __init__(self, out: IO[str], *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.out = out
        self.n_bytes = 0
        self.n_lines = 0
        self.written: OrderedDict[str, dict[str, Any]] = OrderedDict()  # type: ignore[assignment]
        self.tracked: dict[str, int] = {}

    def emit(self, rec: dict[str, Any]) -> dict[str, Any]:
        line = _dump(rec) + "\n"
        self.out.write(line)
        self.n_bytes += len(line.encode())
        self.n_lines += 1
        u = rec.get("uuid")
        if isinstance(u, str) and u not in self.written:
            self.written[u] = dict(rec)
            if len(self.written) > 4000:
                self.written.popitem(last=False)
        return rec

    def tool_input(self, name: str) -> dict[str, Any]:
        inp = super().tool_input(name)
        if name in ("Edit", "Write"):  # Claude Code backs up every file it edits
            path = inp["file_path"]
            self.tracked[path] = self.tracked.pop(path, 0) + 1
            if len(self.tracked) > MAX_TRACKED:
                del self.tracked[next(iter(self.tracked))]
        return inp

    def prompt(self, text: str | None = None) -> Any:
        """A typed prompt, then the file-history snapshot Claude Code writes for it: a backup
        entry for every file edited so far in the session (so snapshots grow with it)."""
        row = self.user(text or f"Please {self.words(self.rng.randint(6, 20))}.")
        if self.tracked:
            ts = _iso(self.t)
            backups = {
                p: {
                    "backupFileName": f"{zlib.crc32(p.encode()):08x}{v:08x}@v{v}",
                    "version": v,
                    "backupTime": ts,
                }
                for p, v in self.tracked.items()
            }
            self.emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": row.uuid,
                    "snapshot": {
                        "messageId": row.uuid,
                        "trackedFileBackups": backups,
                        "timestamp": ts,
                    },
                    "isSnapshotUpdate": False,
                }
            )
        return row

    def results(self, items: list[tuple[str, str, bool]], *, through_progress: bool) -> None:
        self.running = items[0][1] if items else ""  # what the progress records stream
        super().results(items, through_progress=through_progress)

    def progress(self, parent: str, n: int) -> str:
        """``bash_progress`` records while a tool runs, each with the output so far (as Claude
        Code writes them: ``output`` the last lines, ``fullOutput`` everything yet)."""
        n *= self.rng.randint(4, 9)
        text = getattr(self, "running", "")
        last = parent
        tool_id = f"toolu_{self.uuid()[:8]}"
        for i in range(n):
            so_far = text[: len(text) * (i + 1) // n]
            r = self.env("progress", last)
            r["data"] = {
                "type": "bash_progress",
                "output": so_far[-400:],
                "fullOutput": so_far,
                "elapsedTimeSeconds": i,
                "totalLines": so_far.count("\n"),
            }
            r["toolUseID"] = tool_id
            r["parentToolUseID"] = tool_id
            self.emit(r)
            last = r["uuid"]
        return last

    def tool_output(self, name: str) -> str:
        if name == "Read":
            return self.code(self.rng.randint(30, 260))
        if name == "Bash":
            lines = [f"tests/test_{self.rng.choice(('a', 'b', 'c'))}.py::{self.words(2)} PASSED"]
            lines *= self.rng.randint(5, 60)
            return "\n".join(lines) + f"\n{self.rng.randint(1, 90)} passed"
        return super().tool_output(name)

    def prompt_size(self) -> int:
        return SYSTEM_TOKENS + sum(r.size for r in self.window)


def write(path: Path, mb: float, seed: int = 7) -> dict[str, int]:
    """Write a session of about ``mb`` megabytes to ``path``; returns counts."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    n_comp = 0
    with open(tmp, "w", encoding="utf-8") as out:
        s = _Streaming(out, rng, SID, "/home/user/src/big", "2.1.90", 1772352000000)
        s.lines.append(_dump({"type": "summary", "summary": "benchmark", "leafUuid": None}))
        out.write(s.lines.pop() + "\n")
        s.user(
            [
                {
                    "type": "text",
                    "text": "<system-reminder>CLAUDE.md: run make test</system-reminder>",
                }
            ],
            hint="context",
            isMeta=True,
        )
        target = int(mb * 1e6)
        n_turns = 0
        while s.n_bytes < target:
            s.turn(rng.randint(1, 6))
            n_turns += 1
            if n_turns % 40 == 0:
                s.attachment()
            if n_turns % 97 == 0:
                s.abandoned_branch()
            if n_turns % 61 == 0:
                s.microcompact(3)
            if s.prompt_size() > THRESHOLD:
                s.compact("auto", preserve_last=rng.choice((0, 0, 2)))
                n_comp += 1
                live = {id(r) for r in s.window}
                s.result_rows = {t: r for t, r in s.result_rows.items() if id(r) in live}
            s.rows.clear()  # the truth is not kept: rows would only grow
            s.branch_rows.clear()
    tmp.replace(path)
    return {"bytes": s.n_bytes, "lines": s.n_lines, "turns": n_turns, "compactions": n_comp}


def ensure(folder: Path, mb: float = 200) -> Path:
    """The cached benchmark transcript of about ``mb`` MB under ``folder`` (made if missing)."""
    path = folder / f"claude-code-{int(mb)}mb" / f"{SID}.jsonl"
    if not path.exists():
        write(path, mb)
    return path


if __name__ == "__main__":
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 200
    root = Path(__file__).resolve().parent.parent / "build" / "bench"
    p = root / f"claude-code-{int(mb)}mb" / f"{SID}.jsonl"
    print(p, write(p, mb))
