"""The package's shape, read from its source with ``ast`` (nothing is imported): no import cycle between modules, no
import from a lower layer to a higher one, no sibling importing another, the models layer's packages in their order
(``MODEL_PACKAGES``), one address per name (nothing imported from a module that only imports it), and notebooks that
call the package, never its commands. Modules are cut along concepts: no line count decides a split.

The layers, bottom to top (README, "Layout"; an import may point down or stay inside its own layer, never up):

    0  foundation  capmodel (the package facade: lazy names only), capmodel.errors, capmodel.jsonable,
                   capmodel.output_folder, capmodel.redact, capmodel._bundled, capmodel.formatting,
                   capmodel.constraints, capmodel.studies (standard library only, callable from everywhere)
    1  data        capmodel.data (the curve table, readers, bundled datasets)
    2  models      capmodel.models (fitting, results, closed forms, queueing; pure computation)
    3  siblings    capmodel.plots (figures of tables and fits), capmodel.observe (production telemetry -> the curve
                   table), capmodel.bench (live load -> the curve table), capmodel.plan (decisions from fits): all
                   may use models and data, none imports another
    4  report      capmodel.report (papermill + nbconvert): its pages are built from plans, studies, bench folders
                   and observations, so it stands one floor above the siblings and may import any of them
    5  commands    capmodel.commands (one module per subcommand)
    6  cli         capmodel.cli (argument parsing only)

Every import counts, also one inside a function (a lazy import is still a dependency). A cycle is a strongly
connected set of two or more modules, each importing the next by name (``from a import b`` where ``a.b`` is a module
counts as importing ``a.b``).
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "capmodel"

LAYERS = [
    ("capmodel", "capmodel.errors", "capmodel.jsonable", "capmodel.redact", "capmodel.output_folder",
     "capmodel._bundled", "capmodel.formatting", "capmodel.constraints", "capmodel.studies"),
    ("capmodel.data",),
    ("capmodel.models",),
    ("capmodel.plots", "capmodel.observe", "capmodel.bench", "capmodel.plan"),
    ("capmodel.report",),
    ("capmodel.commands",),
    ("capmodel.cli",),
]
SIBLINGS = LAYERS[3]

# No allowance is left: no import points up, no cycle (the sets stay so that a
# deliberate exception must be written here, with its reason).
UPWARD_ALLOWANCE: set[tuple[str, str]] = set()
CYCLE_ALLOWANCE: list[list[str]] = []
# Imports between siblings that the layers do not have, written here until they move: production capacity from an
# observation (plan -> observe), an answer that belongs one floor up. The test below fails when one is gone, so the
# list only shrinks.
SIBLING_ALLOWANCE: set[tuple[str, str]] = {
    ("capmodel.plan.production", "capmodel.observe.capacity"),
}


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


def sibling_of(module: str) -> str | None:
    """The sibling package (plots, observe, bench, plan, report) a module belongs to, if any."""
    return next((s for s in SIBLINGS if module == s or module.startswith(s + ".")), None)


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
    assert layer_of("capmodel.models.usl.fit") < layer_of("capmodel.plan.scaling") < layer_of("capmodel.cli")
    assert layer_of("capmodel.redact") == layer_of("capmodel") == 0
    assert layer_of("capmodel.plots.curves") == layer_of("capmodel.bench.sweep.files") == layer_of("capmodel.plan")
    assert layer_of("capmodel.plan") < layer_of("capmodel.report.plan_report") < layer_of("capmodel.commands.plan")
    assert sibling_of("capmodel.report.plan_report") is None
    assert sibling_of("capmodel.bench.client.runner") == "capmodel.bench" and sibling_of("capmodel.models.usl.fit") is None
    modules = all_modules()
    assert "capmodel.models.usl.answer" in imports_of(modules["capmodel.commands.fit"], modules)


def test_no_import_cycle_between_modules():
    assert [c for c in strongly_connected(graph()) if c not in CYCLE_ALLOWANCE] == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    upward = sorted((src, dst) for src, targets in graph().items() for dst in targets
                    if layer_of(dst) > layer_of(src) and (src, dst) not in UPWARD_ALLOWANCE)
    assert upward == []


def test_no_sibling_imports_another():
    # plots, observe, bench, plan and report sit side by side: each may use models and data, none another sibling
    across = sorted((src, dst) for src, targets in graph().items() for dst in targets
                    if sibling_of(src) and sibling_of(dst) and sibling_of(src) != sibling_of(dst)
                    and (src, dst) not in SIBLING_ALLOWANCE)
    assert across == []


def test_the_layers_drawn_here_are_the_readme_s():
    # the README's layout section names the layers in this order: the siblings between models and report, report
    # between them and commands
    readme = (PACKAGE.parent / "README.md").read_text()
    layout = readme[readme.index("## Layout"):]
    order = [layout.index(f"`{name}`") for name in ("errors", "data", "models", "plots", "report", "commands", "cli")]
    assert order == sorted(order)
    siblings = layout[layout.index("`models`"):layout.index("`report`")]
    assert all(f"`{s.split('.')[-1]}`" in siblings for s in SIBLINGS)
    drawing = layout[layout.index("```"):layout.index("```", layout.index("```") + 3)].splitlines()
    floors = [line.split()[0] for line in drawing[1:] if line and not line.startswith(" ")]
    assert floors.index("commands") < floors.index("report") < floors.index("plots") < floors.index("models")


def test_report_stands_above_the_siblings_it_imports():
    # what the report floor is for: its pages import plan, bench and observe (were it a sibling, these would be
    # sibling imports); nothing below it imports it
    edges = graph()
    used = {sibling_of(dst) for src, targets in edges.items() if src.startswith("capmodel.report") for dst in targets}
    assert {"capmodel.plan", "capmodel.bench", "capmodel.observe"} <= used
    assert not [src for src, targets in edges.items() if layer_of(src) < layer_of("capmodel.report")
                and any(dst.startswith("capmodel.report") for dst in targets)]


# The models layer's packages, each named after the question it answers, bottom to top: an import between them points
# down, never up (a mix what-if solves queueing networks; a USL fit becomes a queueing station; every answer carries
# its evidence).
MODEL_PACKAGES = [
    ("capmodel.models.evidence", "capmodel.models.estimate", "capmodel.models.runway", "capmodel.models.block_bootstrap"),
    ("capmodel.models.usl",),
    ("capmodel.models.queueing",),
    ("capmodel.models.mix",),
]


def model_package_of(module: str) -> int | None:
    for floor, packages in enumerate(MODEL_PACKAGES):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return floor
    return None


def test_the_models_layer_is_cut_into_packages_whose_imports_point_down():
    modules = [m for m in all_modules() if m.startswith("capmodel.models.")]
    assert [m for m in modules if model_package_of(m) is None] == []        # every module in a declared package
    edges = graph()
    upward = [(src, dst) for src in modules for dst in edges[src] if dst.startswith("capmodel.models.")
              and model_package_of(dst) > model_package_of(src)]
    assert upward == []
    assert {m.split(".")[2] for m in modules} == {"evidence", "estimate", "runway", "block_bootstrap", "usl",
                                                  "queueing", "mix"}


def test_allowances_are_still_needed():
    edges = graph()
    assert all(dst in edges[src] for src, dst in UPWARD_ALLOWANCE), "an allowance is no longer needed: remove it"
    assert all(dst in edges[src] for src, dst in SIBLING_ALLOWANCE), "a sibling allowance is no longer needed"
    assert all(c in strongly_connected(edges) for c in CYCLE_ALLOWANCE), "a cycle allowance is no longer needed"


# --- one address per name -------------------------------------------------------------------------------------------
# A package's face may hand on the public API it gathers from its own modules (``capmodel.fit_usl``,
# ``capmodel.plan.plan_vms``): these packages, and only these, may re-export. Every other module that imports a name
# is using it, not offering it: nobody may import that name from there.
PUBLIC_FACES = ("capmodel", "capmodel.data", "capmodel.observe", "capmodel.plan", "capmodel.plots",
                "capmodel.bench.server")
ROOT = PACKAGE.parent


def top_level_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names a module defines at its top level, names it binds there by importing them)."""
    defined, imported = set(), set()

    def bind(target):
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                defined.add(node.id)

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                bind(node.target)
            elif isinstance(node, ast.Import):
                imported.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.update(a.asname or a.name for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):  # ``if TYPE_CHECKING:``, ``try: import x except ...``
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", ()):
                    visit(handler.body)
    visit(tree.body)
    return defined, imported - defined


def declared_all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [e.value for e in getattr(node.value, "elts", ()) if isinstance(e, ast.Constant)]
    return []


def importers() -> list[tuple[str, ast.Module]]:
    """Every piece of Python of the project that may import from the package: its modules, tests, benchmarks,
    scripts and the notebooks' code cells."""
    import json

    found = [(str(p.relative_to(ROOT)), ast.parse(p.read_text()))
             for folder in ("capmodel", "tests", "benchmarks", "scripts") for p in sorted((ROOT / folder).rglob("*.py"))]
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(p.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
        found.append((str(p.relative_to(ROOT)), ast.parse(code)))
    return found


def second_addresses(modules: dict[str, Path], sources, faces=PUBLIC_FACES) -> list[str]:
    """``from M import n`` where M only imported ``n`` (it is defined elsewhere), and ``__all__`` entries that hand
    on an imported name, outside the public faces."""
    names = {m: top_level_names(ast.parse(p.read_text())) for m, p in modules.items()}
    found = []
    for m, p in modules.items():
        if m not in faces:
            found += [f"{m}.__all__ hands on {n!r}, defined elsewhere"
                      for n in declared_all(ast.parse(p.read_text())) if n in names[m][1]]
    for where, tree in sources:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules \
                    and node.module not in faces:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in modules and alias.name in names[node.module][1]:
                        found.append(f"{where} imports {alias.name} from {node.module}, which only imports it")
    return sorted(set(found))


def test_the_second_address_check_sees_a_re_export(tmp_path):
    home, shim = tmp_path / "home.py", tmp_path / "shim.py"
    home.write_text("def thing():\n    return 1\n")
    shim.write_text("from pkg.home import thing\n\n__all__ = ['thing']\n")
    user = ast.parse("from pkg.shim import thing\nfrom pkg.home import thing\n")
    found = second_addresses({"pkg.home": home, "pkg.shim": shim}, [("user.py", user)], faces=())
    assert found == ["pkg.shim.__all__ hands on 'thing', defined elsewhere",
                     "user.py imports thing from pkg.shim, which only imports it"]
    assert second_addresses({"pkg.home": home, "pkg.shim": shim}, [("user.py", user)], faces=("pkg.shim",)) == []


def test_every_name_has_one_address():
    assert second_addresses(all_modules(), importers()) == []


def test_notebooks_call_the_package_never_its_commands():
    used = sorted((where, node.module) for where, tree in importers() if where.startswith("notebooks/")
                  for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                  and node.module.startswith(("capmodel.commands", "capmodel.cli")))
    assert used == []
