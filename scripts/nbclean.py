"""A notebook as the repository keeps it: no outputs, no execution counts, no widget state, the kernel's language
named and nothing more, cells' metadata reduced to their tags; JSON indented by one space, UTF-8 unescaped.

Git runs it on every notebook it stores (``.gitattributes``: ``*.ipynb filter=nbclean``), so that a notebook run and
saved in JupyterLab stays unchanged in ``git status`` unless its cells changed. ``make venv`` configures the filter
in a clone; by hand::

    git config filter.nbclean.clean "python3 scripts/nbclean.py"

Reads the notebook on stdin and writes it cleaned to stdout; ``python3 scripts/nbclean.py FILE...`` cleans files in
place. Standard library only: git calls it with whatever ``python3`` is on the PATH.
"""
from __future__ import annotations

import json
import sys

#: the cell metadata a stored notebook keeps (papermill reads ``tags``: parameters, remove-cell, remove-output)
KEPT_CELL_METADATA = ("tags",)
#: the notebook metadata a stored notebook keeps; ``language_info`` is reduced to its name
KEPT_METADATA = ("capmodel", "kernelspec", "language_info")


def clean(text: str) -> str:
    """The stored form of a notebook's JSON text."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        cell["metadata"] = {key: value for key, value in cell.get("metadata", {}).items() if key in KEPT_CELL_METADATA}
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        if not cell.get("attachments"):
            cell.pop("attachments", None)
    metadata = nb.get("metadata", {})
    nb["metadata"] = {key: value for key, value in metadata.items() if key in KEPT_METADATA}
    if "language_info" in nb["metadata"]:
        nb["metadata"]["language_info"] = {"name": nb["metadata"]["language_info"].get("name", "python")}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        sys.stdout.write(clean(sys.stdin.read()))
        return 0
    for path in argv:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        cleaned = clean(text)
        if cleaned != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(cleaned)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
