"""The package's shape, read from its source with ``ast`` (nothing is imported): no import cycle between modules, no
import from a lower layer to a higher one, no module over 400 lines.

The layers, bottom to top (DESIGN.md, "Layers"; an import may point down or stay inside its own layer, never up):

    0  foundation  capmodel (the package facade: lazy names only), capmodel.errors, capmodel.jsonable,
                   capmodel.redact, capmodel._bundled (standard library only, callable from everywhere)
    1  data        capmodel.data, capmodel.datasets (the curve table, readers, bundled datasets)
    2  models      capmodel.models (fitting, results, closed forms, queueing; pure computation)
    3  plots       capmodel.plots (figures of tables and fits: it reads fits, so it sits just above models, although
                   DESIGN.md draws it at the bottom; it computes nothing of its own)
    4  observe     capmodel.observe (production telemetry -> the curve table)
    5  bench       capmodel.bench (live load -> the curve table; may fit a curve it measured)
    6  plan        capmodel.plan (decisions from fits)
    7  report      capmodel.report (papermill + nbconvert)
    8  commands    capmodel.commands (one module per subcommand)
    9  cli         capmodel.cli (argument parsing only)

Every import counts, also one inside a function (a lazy import is still a dependency). A cycle is a strongly
connected set of two or more modules, each importing the next by name (``from a import b`` where ``a.b`` is a module
counts as importing ``a.b``).
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "capmodel"
MAX_LINES = 400

LAYERS = [
    ("capmodel", "capmodel.errors", "capmodel.jsonable", "capmodel.redact", "capmodel._bundled", "capmodel.formatting"),
    ("capmodel.data", "capmodel.datasets"),
    ("capmodel.models",),
    ("capmodel.plots",),
    ("capmodel.observe",),
    ("capmodel.bench",),
    ("capmodel.plan",),
    ("capmodel.report",),
    ("capmodel.commands",),
    ("capmodel.cli",),
]

# No allowance is left: every module is at most MAX_LINES long, no import points up, no cycle (the sets stay so that a
# deliberate exception must be written here, with its reason).
LONG_MODULE_ALLOWANCE: set[str] = set()
UPWARD_ALLOWANCE: set[tuple[str, str]] = set()
CYCLE_ALLOWANCE: list[list[str]] = []


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``path`` imports, anywhere in its source."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "capmodel")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "capmodel":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return {name for name in found if name in modules}


def layer_of(module: str) -> int:
    best, level = "", None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, level = prefix, index
    assert level is not None, f"{module} belongs to no layer: add it to LAYERS in {Path(__file__).name}"
    return level


def graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm; the components with more than one module."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_checks_see_a_cycle_and_an_upward_import():
    # the checks themselves, on a made-up graph: a -> b -> c -> a is one cycle; d alone is none
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("capmodel.models.usl") < layer_of("capmodel.plan.scaling") < layer_of("capmodel.cli")
    assert layer_of("capmodel.redact") == layer_of("capmodel") == 0
    modules = all_modules()
    assert "capmodel.models.usl" in imports_of(modules["capmodel.commands.fit"], modules)


def test_no_import_cycle_between_modules():
    assert [c for c in strongly_connected(graph()) if c not in CYCLE_ALLOWANCE] == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    upward = sorted((src, dst) for src, targets in graph().items() for dst in targets
                    if layer_of(dst) > layer_of(src) and (src, dst) not in UPWARD_ALLOWANCE)
    assert upward == []


def test_allowances_are_still_needed():
    edges = graph()
    assert all(dst in edges[src] for src, dst in UPWARD_ALLOWANCE), "an allowance is no longer needed: remove it"
    assert all(c in strongly_connected(edges) for c in CYCLE_ALLOWANCE), "a cycle allowance is no longer needed"
    for rel in LONG_MODULE_ALLOWANCE:
        assert (PACKAGE.parent / rel).exists(), f"{rel} is gone: remove its allowance"


def test_no_module_over_400_lines():
    long = {str(p.relative_to(PACKAGE.parent)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    over = {rel: n for rel, n in long.items() if n > MAX_LINES and rel not in LONG_MODULE_ALLOWANCE}
    assert over == {}
