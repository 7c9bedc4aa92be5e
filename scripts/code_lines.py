"""Code lines per package of capmodel: non-blank lines that are neither comments nor docstrings, counted with ``ast``
and ``tokenize`` (the numpydoc docstrings are not code).

    python3 scripts/code_lines.py [ROOT]

ROOT is a checkout (default: this one), e.g. ``git archive COMMIT | tar -x -C /tmp/old`` for an earlier commit.
``capmodel/models/`` is counted per sub-package; a module directly under ``capmodel/`` counts as ``top``.
"""
from __future__ import annotations

import ast
import collections
import io
import sys
import tokenize
from pathlib import Path

NOT_CODE = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def code_lines(source: str) -> int:
    """The lines of ``source`` holding a token that is not a comment, and not inside a docstring."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in NOT_CODE:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - docstrings)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]) / "capmodel"
    counts: collections.Counter = collections.Counter()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        package = "top" if len(parts) == 1 else parts[0]
        if package == "models" and len(parts) > 2:
            package = f"models/{parts[1]}"
        counts[package] += code_lines(path.read_text(encoding="utf-8"))
    for package in sorted(counts):
        print(f"{package:16s} {counts[package]:7,d}")
    print(f"{'total':16s} {sum(counts.values()):7,d}")


if __name__ == "__main__":
    main()
