"""``DIR/shapes.csv`` and ``DIR/shapes.json``: a ``QueryShapes`` written into an output folder it owns (the rules of
``capmodel.output_folder``: under the folder's lock, replaced whole, never over a file capmodel did not write)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from capmodel.jsonable import dumps, to_jsonable
from capmodel.observe.shapes.result import QueryShapes
from capmodel.observe.shapes.what_if import CPU_COLUMNS, ShapesWhatIf

TABLE, RECORD = "shapes.csv", "shapes.json"


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _record(path: Path) -> dict | None:
    """The shapes record in ``path``, None where it is not one."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) and record.get("kind") == "query shapes" else None


def write_shapes(shapes: QueryShapes, out, what_if: ShapesWhatIf | None = None) -> dict:
    """Write ``shapes.csv`` (``QueryShapes.table``; with a what-if, its ``shapes_table``: the CPU per operation
    filled in) and ``shapes.json`` (``to_json()``, the what-if's as ``what_if``, and the CSV's SHA-256) into ``out``;
    returns {"table": path, "record": path}."""
    from capmodel.output_folder import FolderLock, make_folder, refuse_foreign, write_atomic

    folder = make_folder(out)
    with FolderLock(folder):
        earlier = _record(folder / RECORD) if (folder / RECORD).is_file() else None
        refuse_foreign(folder / RECORD, lambda p: earlier is not None)
        refuse_foreign(folder / TABLE, lambda p: earlier is not None and earlier.get("table_sha256") == _sha256(p))
        table = shapes.table if what_if is None else what_if.shapes_table
        write_atomic(folder / TABLE, table.to_csv(index=False))
        record = shapes.to_json()
        if what_if is not None:
            filled = to_jsonable(table.set_index("shape", drop=False)[list(CPU_COLUMNS)].to_dict(orient="index"))
            record["shapes"] = [{**row, **filled[row["shape"]]} for row in record["shapes"]]
            record["what_if"] = what_if.to_json()
        record["table_sha256"] = _sha256(folder / TABLE)
        write_atomic(folder / RECORD, dumps(record, indent=1))
    return {"table": folder / TABLE, "record": folder / RECORD}


def bundled_shapes_sample() -> dict:
    """The bundled query-shapes sample (``data/shapes_sample``, made by ``scripts/make_shapes_sample.py``).

    Returns
    -------
    dict
        ``log``, the gzipped JSON log; ``ftdc``, its ``diagnostic.data`` folder; ``since`` and ``until``, the window the
        mix ran in; and how it was made (from its ``sample.json``: the mix, the operations per shape, the CPUs, the
        ``mongod`` version).
    """
    from capmodel._bundled import bundled_dir

    folder = bundled_dir("data") / "shapes_sample"
    info = json.loads((folder / "sample.json").read_text())
    return {**info, "log": folder / info["log"], "ftdc": folder / "diagnostic.data"}
