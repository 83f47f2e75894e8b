"""Writing a simulated agent to an ``.adf`` file, and its ground truth beside it.

:func:`write_db` turns a finished :class:`~adfsynth.runtime.Sim` into a SQLite file in the
layout of its schema (journal mode DELETE, no sidecars, VACUUMed), with one fake
``adf_identity`` row (:data:`FAKE_SECRET`) so tests can prove the reader never selects it.
:func:`write_scenario` and :func:`write_all` run scenarios and write ``<name>.adf`` and
``<name>.truth.json``.
"""

from __future__ import annotations

import pathlib
import sqlite3

from .ddl import schema_ddl
from .estimator import jdump
from .runtime import Sim
from .scenarios import SCENARIOS
from .texts import iso
from .truth import GroundTruth

FAKE_SECRET = b"FAKE-SECRET-DO-NOT-READ"


def write_db(sim: Sim, path: pathlib.Path) -> None:
    """Write ``sim`` (finished) to ``path``, replacing the file and any sidecars there."""
    path = pathlib.Path(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            p.unlink()
    con = sqlite3.connect(str(path))
    con.execute("PRAGMA journal_mode=DELETE")
    schema = sim.schema
    con.executescript(schema_ddl(schema))
    end = sim.clock + 500
    # meta
    meta_rows: list[tuple[str, str, str]] = [("adf_version", "0.2", "readonly")]
    if schema >= 14:
        meta_rows.append(("adf_schema_version", str(schema), "readonly"))
        meta_rows += [
            ("adf_name", sim.name, "none"),
            ("adf_handle", sim.name, "none"),
            ("adf_created_at", sim.config["metadata"]["created_at"], "readonly"),
            ("adf_updated_at", iso(end), "none"),
            ("adf_parent_did", "", "readonly"),
            ("adf_did", sim.did, "readonly"),
            ("adf_owner_did", sim.owner_did, "readonly"),
        ]
    else:
        meta_rows.append(("schema_version", str(schema), "readonly"))
        meta_rows += [("name", sim.name, "none"), ("did", sim.did, "readonly")]
    for k, (v, prot) in sorted(sim.meta.items()):
        meta_rows.append((k, v, prot))
    checkpoint = {
        "id": sim.nanoid(10),
        "status": "completed",
        "started_at": sim.clock - 4000,
        "updated_at": sim.clock,
        "completed_at": sim.clock,
        "event_type": "chat",
        "scope": "agent",
        "replay": "not_attempted",
    }
    meta_rows.append(("adf_runtime_turn_checkpoint", jdump(checkpoint), "readonly"))
    meta_rows.append(("adf_clean_close", iso(end), "readonly"))
    if schema >= 15:
        con.executemany("INSERT INTO adf_meta(key, value, protection) VALUES (?,?,?)", meta_rows)
    else:
        con.executemany("INSERT INTO adf_meta(key, value) VALUES (?,?)", [r[:2] for r in meta_rows])
    con.execute(
        "INSERT INTO adf_config(id, config_json, updated_at) VALUES (1, ?, ?)",
        (jdump(sim.config), sim.config["metadata"]["updated_at"]),
    )
    # loop
    for r in sorted(sim.rows, key=lambda r: r["seq"]):
        tok = r["tokens"]
        if schema >= 21:
            cols = "seq, role, content_json, model, tokens, created_at"
            vals = [r["seq"], r["role"], jdump(r["content"]), r["model"]]
            vals.append(None if tok is None else jdump(tok))
            vals.append(r["created_at"])
            if schema >= 28:
                cols += ", ord"
                vals.append(r["ord"])
        else:
            cols = "seq, role, content_json, tokens, created_at"
            vals = [r["seq"], r["role"], jdump(r["content"]), tok, r["created_at"]]
        q = ",".join("?" * len(vals))
        con.execute(f"INSERT INTO adf_loop({cols}) VALUES ({q})", vals)
    con.execute("DELETE FROM sqlite_sequence WHERE name='adf_loop'")
    con.execute(
        "INSERT INTO sqlite_sequence(name, seq) VALUES ('adf_loop', ?)", (sim.next_seq - 1,)
    )
    # inbox / outbox
    for m in sim.inbox:
        cols = list(m)
        _insert(con, "adf_inbox", m)
    for m in sim.outbox:
        cols = list(m)
        _insert(con, "adf_outbox", m)
    # timers / tasks
    for t in sim.timers:
        cols = ["schedule_json", "next_wake_at", "payload", "scope", "run_count", "created_at"]
        cols.append("last_fired_at")
        vals = [t[c] for c in cols]
        con.execute(
            f"INSERT INTO adf_timers({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", vals
        )
    for t in sim.tasks:
        cols = ["id", "tool", "args", "status", "result", "created_at", "completed_at", "origin"]
        con.execute(
            f"INSERT INTO adf_tasks({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
            [t[c] for c in cols],
        )
    # files
    for p, f in sorted(sim.files.items()):
        if schema >= 21:
            con.execute(
                "INSERT INTO adf_files(path, content, mime_type, size, protection, authorized, "
                "created_at, updated_at) VALUES (?,?,?,?,?,0,?,?)",
                (
                    p,
                    f["content"],
                    f["mime_type"],
                    f["size"],
                    f["protection"],
                    f["created_at"],
                    f["updated_at"],
                ),
            )
        else:
            con.execute(
                "INSERT INTO adf_files(path, content, mime_type, size, protected, created_at, "
                "updated_at) "
                "VALUES (?,?,?,?,?,?,?)",
                (
                    p,
                    f["content"],
                    f["mime_type"],
                    f["size"],
                    int(f["protection"] != "none"),
                    f["created_at"],
                    f["updated_at"],
                ),
            )
    # audit
    if schema >= 28:
        for a in sim.audits:
            con.execute(
                "INSERT INTO adf_audit(id, source, start_seq, end_seq, ref, entry_count, "
                "size_bytes, "
                "data, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    a["id"],
                    a["source"],
                    a["start_seq"],
                    a["end_seq"],
                    a["ref"],
                    a["entry_count"],
                    a["size_bytes"],
                    a["data"],
                    a["created_at"],
                ),
            )
    elif schema >= 21:
        for a in sim.audits:
            con.execute(
                "INSERT INTO adf_audit(id, source, start_at, end_at, entry_count, size_bytes, "
                "data, "
                "created_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    a["id"],
                    a["source"],
                    a["start_at"],
                    a["end_at"],
                    a["entry_count"],
                    a["size_bytes"],
                    a["data"],
                    a["created_at"],
                ),
            )
    # identity: one obviously fake row so tests can prove nobody reads it
    con.execute(
        "INSERT INTO adf_identity(purpose, value, encryption_algo, code_access) VALUES (?,?,?,0)",
        ("signing_key", FAKE_SECRET, "plain"),
    )
    for lg in sim.logs:
        con.execute(
            "INSERT INTO adf_logs(level, origin, event, target, message, data, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            (
                lg["level"],
                lg["origin"],
                lg["event"],
                lg["target"],
                lg["message"],
                lg["data"],
                lg["created_at"],
            ),
        )
    if schema < 21:
        con.execute(
            "INSERT INTO adf_peers(did, alias, address, last_seen) VALUES (?,?,?,?)",
            (sim.owner_did, "owner", "http://127.0.0.1:7295/agents/owner/inbox", sim.clock),
        )
    con.commit()
    con.execute("VACUUM")
    con.close()


def _q(c: str) -> str:
    return f'"{c}"' if c in ("from", "to") else c


def _insert(con: sqlite3.Connection, table: str, row: dict) -> None:
    cols = list(row)
    names = ",".join(_q(c) for c in cols)
    marks = ",".join("?" * len(cols))
    con.execute(f"INSERT INTO {table}({names}) VALUES ({marks})", [row[c] for c in cols])


def write_scenario(name: str, path: str | pathlib.Path, *, seed: int = 0) -> GroundTruth:
    """Run scenario ``name`` and write it to ``path`` (an ``.adf`` file). Returns its truth."""
    sim = SCENARIOS[name](seed)
    gt = sim.finish()
    write_db(sim, pathlib.Path(path))
    return gt


def write_all(folder: str | pathlib.Path, *, seed: int = 0, names: list[str] | None = None) -> dict:
    """Write ``<name>.adf`` and ``<name>.truth.json`` for every scenario into ``folder``."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in names or list(SCENARIOS):
        gt = write_scenario(name, folder / f"{name}.adf", seed=seed)
        (folder / f"{name}.truth.json").write_text(gt.to_json(), encoding="utf-8")
        out[name] = gt
    return out
