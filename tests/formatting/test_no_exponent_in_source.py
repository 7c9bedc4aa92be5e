"""No figure for a person is formatted with an exponent, read from the package's source with ``ast`` (nothing
imported): no f-string formats a value with a ``g`` or ``e`` presentation, and no string literal spells a number with
an exponent; ``capmodel.formatting.number`` writes figures for people, and ``capmodel.constraints.typed`` the value a
user gave. The few left are machine-read (Dask's configuration) or listed here with their owner, so that the list
only shrinks."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "capmodel"
EXPONENT_LITERAL = re.compile(r"\d[eE][+-]\d")
# (file, line text fragment): why it stays
ALLOWED = {
    ("capmodel/bench/cluster/executor.py", "CONNECT_TIMEOUT_S * 3:g"): "machine-read: Dask's configuration value",
    ("capmodel/bench/cluster/executor.py", "CALL_TIMEOUT_S:g}s"): "machine-read: Dask's configuration value",
    ("capmodel/bench/server/process.py", "cache_gb:g"): "machine-read: mongod's --wiredTigerCacheSizeGB argument",
    ("capmodel/plan/planner.py", "x:.12g"): "float(f'{x:.12g}'): a rounding, not text",
    ("capmodel/bench/workload/definition.py", "YAML reads 1e-3"): "quotes what a user typed in YAML",
}


def _sites():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE.parent))
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
                spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
                if re.search(r"[gGeE]$", spec):
                    yield rel, node.lineno, f"{ast.unparse(node.value)}:{spec}", lines
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    EXPONENT_LITERAL.search(node.value) and not _is_docstring(node, source):
                yield rel, node.lineno, node.value[:60], lines


def _is_docstring(node, source) -> bool:
    text = ast.get_source_segment(source, node) or ""
    return text.startswith(('"""', "'''"))


def _allowed(rel: str, lineno: int, what: str, lines: list[str]) -> bool:
    window = "\n".join(lines[max(0, lineno - 1): lineno + 3]) + what
    return any(rel == f and fragment in window for f, fragment in ALLOWED)


def test_no_figure_reaches_a_sentence_in_exponent_notation():
    found = [f"{rel}:{lineno}: {what}" for rel, lineno, what, lines in _sites() if not _allowed(rel, lineno, what,
                                                                                                  lines)]
    assert not found, "format these with capmodel.formatting.number (or constraints.typed):\n" + "\n".join(found)


def test_the_allowance_only_shrinks():
    sites = [(rel, lineno, what, lines) for rel, lineno, what, lines in _sites()]
    for (path, fragment), why in ALLOWED.items():
        assert any(rel == path and fragment in "\n".join(lines[max(0, n - 1): n + 3]) + what
                   for rel, n, what, lines in sites), f"{path}: {fragment} is gone ({why}): remove it from ALLOWED"


@pytest.mark.parametrize("constraint, words", [
    ("POSITIVE", "a number > 0 (from a trillionth to a quadrillion)"),
    ("rate", "a number from 0.001 to 10,000,000"),
])
def test_a_refusal_names_its_bounds_as_people_write_them(constraint, words):
    from capmodel.constraints import Number, bound
    from capmodel.plan.checks import POSITIVE

    chosen = POSITIVE if constraint == "POSITIVE" else Number(float, 0.001, 1e7)
    assert chosen.wanted() == words
    # from a billion up and a billionth down a round bound reads in words: nothing to count
    assert bound(1e-12) == "a trillionth" and bound(1e15) == "a quadrillion" and bound(0.999999) == "0.999999"
    assert bound(3_600, int) == "3,600" and bound(-1e15, int) == "minus a quadrillion"
    assert bound(2.5e15) == "2.5 quadrillion" and bound(5e-12) == "5 trillionths" and bound(1e-6) == "0.000001"
    assert bound(999_000_000) == "999,000,000" and bound(1_234_567_891, int) == "1,234,567,891"


@pytest.mark.parametrize("value, shown", [
    (1e16, "10,000,000,000,000,000"),   # typed 1e16; repr 1e+16
    (1e-13, "0.0000000000001"),
    (1e-320, "1e-320"),                 # written out it would be 320 zeros: kept as the user typed it
    (1e308, "1e+308"),
    (0.0, "0"),
])
def test_a_refused_value_reads_as_a_person_typed_it(value, shown):
    from capmodel.constraints import typed

    assert typed(value) == shown


def test_no_notebook_formats_a_figure_with_g():
    # reports 04 and 05 labelled their curves "σ = {s:g}" (1e-05 for a contention of 0.00001)
    import json

    found = []
    for path in sorted((PACKAGE.parent / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                found += [f"{path.name}: {m}" for m in re.findall(r"\{[^{}:\"']+:[^{}\s]*[gGeE]\}", source)]
    assert not found, found
