"""The fleet index: each file's table kept as Parquet, so a second run reads only what changed.

Layout of an index folder ``DIR`` (a plain Parquet dataset)::

    DIR/<table>/<key>.parquet    one file's rows (with ``agent`` and ``agent_path``)
    DIR/<table>/_manifest.json   key -> path, size, mtime_ns, adfkit version, options
                                 (``usage_days``: and the part's rows, as JSON)

``key`` is a hash of the file's absolute path, the table and its options. A part is used when
the file's size and modification time and adfkit's version are those it was made from (the
version number and a digest of adfkit's code and data, :func:`adfkit._base.digest.code_digest`:
a part made by other code, an edited checkout of the same version, is made again); else the
file is read again. A file that changes while it is read (size or mtime differ after reading) is
not cached. Readers that skip names starting with ``_`` (Dask, pyarrow, DuckDB's ``*.parquet``
glob) see only the parts: ``duckdb.sql("select * from 'DIR/usage/*.parquet'")``,
``dask.dataframe.read_parquet("DIR/usage")``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adfkit._base.allocator import system_allocator
from adfkit._base.errors import OutputPathError
from adfkit._base.outputs import check_output
from adfkit._facade.usage.days import FLOAT_COLUMNS, days_table

if TYPE_CHECKING:
    import pandas as pd

# pandas, pyarrow and orjson load on first use: a run whose files are all fresh reads the
# manifest alone (``adfkit usage`` finds its rows there).

MANIFEST = "_manifest.json"


def _version() -> str:
    """What a part is made with: adfkit's version number and the digest of its code and data."""
    from adfkit import __version__
    from adfkit._base.digest import code_digest

    return f"{__version__}+{code_digest()}"


def stamp(path: str) -> list[int] | None:
    """``[size, mtime_ns]`` of ``path``, None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def part_key(path: str, table: str, options: dict[str, Any]) -> str:
    text = json.dumps([os.path.abspath(path), table, options], sort_keys=True, default=str)
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:24]


class Index:
    """One table's folder of an index: which parts are fresh, reading and writing them."""

    def __init__(self, root: str | os.PathLike[str], table: str, inputs: list[str]) -> None:
        from adfkit._core.registry import input_places

        places = input_places(inputs)
        base = check_output(root, places)
        if base.exists() and not base.is_dir():
            raise OutputPathError(f"the index folder {os.fspath(root)} is a file, not a folder")
        self.folder = str(check_output(os.path.join(str(base), table), places))
        self.table = table
        self.version = _version()
        try:
            with open(os.path.join(self.folder, MANIFEST), "rb") as fh:
                entries = json.load(fh)
        except (OSError, ValueError):
            entries = {}
        self.entries: dict[str, dict[str, Any]] = entries if isinstance(entries, dict) else {}

    def part(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.parquet")

    def fresh(self, key: str, path: str) -> bool:
        e = self.entries.get(key)
        return (
            e is not None
            and e.get("version") == self.version
            and e.get("stamp") == stamp(path)
            and os.path.exists(self.part(key))
        )

    def read(self, key: str) -> pd.DataFrame:
        return read_parquet(self.part(key))

    def fresh_rows(self, key: str, path: str) -> list[dict[str, Any]] | None:
        """The rows of the fresh part ``key`` of ``path`` as plain values: from the manifest
        when it holds them (``usage_days``), else read from the part with pyarrow (None: the
        part cannot be read). A NaN float is kept, a null is None."""
        rows = self.entries[key].get("rows")
        if isinstance(rows, list):
            return [_from_json(r) for r in rows]
        try:
            import pyarrow.parquet as pq

            with system_allocator():
                got: list[dict[str, Any]] = pq.read_table(self.part(key)).to_pylist()
        except Exception:  # noqa: BLE001 - an unreadable part is read again from its file
            return None
        return got

    def read_many(self, keys: list[str]) -> pd.DataFrame:
        """The parts of ``keys`` as one frame, in that order: each part read as it was
        written (:func:`read_parquet`) and the frames concatenated as a fresh read concatenates
        the files' frames, so the dtypes are the same (a category column whose categories
        differ between files is not one category column)."""
        import pandas as pd

        with system_allocator():
            frames = [self.read(k) for k in keys]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def record(
        self,
        key: str,
        path: str,
        st: list[int],
        options: dict[str, Any],
        rows: list[dict[str, Any]] | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "path": os.path.abspath(path),
            "stamp": st,
            "version": self.version,
            "options": json.loads(json.dumps(options, default=str)),
        }
        if rows is not None:
            entry["rows"] = [_to_json(r) for r in rows]
        self.entries[key] = entry

    def save(self) -> None:
        """Write the manifest (atomically: a reader sees the old one or the new one)."""
        os.makedirs(self.folder, exist_ok=True)
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix="_manifest-", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(self.entries, fh)
        os.replace(tmp, os.path.join(self.folder, MANIFEST))


def _to_json(row: dict[str, Any]) -> dict[str, Any]:
    return {k: None if isinstance(v, float) and v != v else v for k, v in row.items()}


def _from_json(row: dict[str, Any]) -> dict[str, Any]:
    return {k: float("nan") if v is None and k in FLOAT_COLUMNS else v for k, v in row.items()}


#: Key of the Arrow schema metadata that says what the object columns held (see
#: :func:`to_parquet`).
CELLS = b"adfkit.cells"


def to_parquet(df: pd.DataFrame, path: str) -> None:
    """Write with pandas metadata (dtypes round-trip) and what Parquet cannot say itself, so
    that :func:`read_parquet` gives the same frame back: tuple and list cells become Arrow
    lists (which column held tuples, which lists, is kept in the schema metadata), object
    columns Arrow cannot type are stored as JSON text (and marked so). A category column's
    categories are kept in the metadata too (Arrow keeps none for an empty column, and types
    no categories as null: those are written as text categories)."""
    import orjson
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    cells: dict[str, Any] = {}
    for c in df.columns:
        cats = df[c].cat.categories if isinstance(df[c].dtype, pd.CategoricalDtype) else None
        if cats is not None and all(isinstance(v, str) for v in cats):
            cells[c] = {"categories": cats.tolist(), "dtype": str(cats.dtype)}
    empty = [c for c in cells if not cells[c]["categories"]]
    if empty:
        text = pd.Index([], dtype="string")
        df = df.assign(**{c: df[c].cat.set_categories(text) for c in empty})
    for c in df.columns:
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c].tolist() if v is not None}
            if kinds in ({tuple}, {list}):
                cells[c] = kinds.pop().__name__
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        df = df.copy()
        for c in df.columns:
            if df[c].dtype == object:
                cells[c] = "json"
                df[c] = pd.array(
                    [
                        None if v is None else orjson.dumps(v, default=str).decode()
                        for v in df[c].tolist()
                    ],
                    dtype="string",
                )
        table = pa.Table.from_pandas(df, preserve_index=False)
    meta = {**(table.schema.metadata or {}), CELLS: json.dumps(cells).encode()}
    pq.write_table(table.replace_schema_metadata(meta), path)


def read_parquet(path: str) -> pd.DataFrame:
    """The frame :func:`to_parquet` wrote to ``path``: tuple cells as tuples, list cells as
    lists (pandas would give arrays), JSON text decoded, category columns with the categories
    they had."""
    import orjson
    import pandas as pd
    import pyarrow.parquet as pq

    with system_allocator():
        table = pq.read_table(path)
        df = table.to_pandas(ignore_metadata=False)
    cells = json.loads((table.schema.metadata or {}).get(CELLS, b"{}"))
    for c, kind in cells.items():
        if isinstance(kind, dict):
            cats = pd.Index(kind["categories"], dtype=kind["dtype"])
            if not df[c].cat.categories.equals(cats) or df[c].cat.categories.dtype != cats.dtype:
                df[c] = df[c].cat.set_categories(cats)
            continue
        if kind == "json":
            values = [None if v is None else orjson.loads(v) for v in table.column(c).to_pylist()]
        else:
            make = tuple if kind == "tuple" else list
            values = [None if v is None else make(v) for v in table.column(c).to_pylist()]
        df[c] = pd.Series(values, index=df.index, dtype=object)
    return df


def write_rows(rows: list[dict[str, Any]], target: str) -> bool:
    """Write ``usage_days`` rows (:data:`adfkit._facade.usage.days.USAGE_DAYS` with the fleet
    columns) as the part ``target``; False when it cannot be written."""
    import pyarrow.parquet as pq

    try:
        write_part(days_table(rows), target, pq.write_table)
    except (OSError, ValueError, TypeError):
        return False
    return True


def write_part(data: Any, target: str, write: Callable[[Any, str], None] = to_parquet) -> None:
    """Write ``data`` (a frame, or what ``write`` takes) to ``target`` through a temporary
    name (never a half-written part)."""
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=folder, prefix="_part-", suffix=".tmp")
    os.close(fd)
    try:
        write(data, tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
