"""One name, one meaning: a public top-level name (a function, class or constant not starting with ``_``) is defined
in one module of capmodel only. The exceptions are protocols, where parallel modules define the same name for the
same role and a caller picks the module: each is listed below with the modules that may define it."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "capmodel"

# name -> (the package whose modules share it as a protocol, the role)
PROTOCOLS = {
    "register": ("capmodel.commands", "each command module adds its subparser"),
    "run": ("capmodel.commands", "each command module runs its parsed arguments"),
    "QUESTION": ("capmodel", "the question a report page (or the production answer it embeds) opens with"),
    "USER_INTRO": ("capmodel.report", "a planning report's introduction when it runs on the user's data"),
    "BUNDLED_INTRO": ("capmodel.report", "a planning report's introduction when it runs on the bundled study"),
    "LOOPS": ("capmodel.bench.client", "the measuring loops of a worker kind (threads, asyncio)"),
    "closed_loop": ("capmodel.bench.client", "a worker kind's closed loop"),
    "counted_loop": ("capmodel.bench.client", "a worker kind's loop of a fixed number of operations"),
    "open_loop": ("capmodel.bench.client", "a worker kind's open (fixed-rate) loop"),
    "names": ("capmodel", "the names in a bundled collection (datasets, notebooks)"),
    "path": ("capmodel", "the file of a bundled item (a dataset, a notebook)"),
}


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_definitions() -> dict[str, list[str]]:
    """{name: [modules that define it at top level]} over every module of capmodel."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [n.id for target in node.targets
                         for n in (target.elts if isinstance(target, ast.Tuple) else [target]) if isinstance(n, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            for name in names:
                if not name.startswith("_"):
                    found[name].append(module_of(path))
    return found


def test_the_walk_sees_the_package():
    """The walk finds names known to be defined once (a broken walk would pass the test below on nothing)."""
    found = public_definitions()
    assert found["fit_usl"] == ["capmodel.models.usl.fit"]
    assert found["latency_limit"] == ["capmodel.models.usl.closed_form"]
    assert len(found["register"]) >= 8


def test_a_public_name_is_defined_once():
    twice = {name: modules for name, modules in public_definitions().items() if len(set(modules)) > 1}
    unexplained = {name: modules for name, modules in twice.items()
                   if name not in PROTOCOLS or not all(m.startswith(PROTOCOLS[name][0]) for m in modules)}
    assert not unexplained, (
        "public names defined in more than one module (rename one, or define it once and import it; a protocol "
        f"shared by parallel modules goes in PROTOCOLS with its role): {unexplained}")


def test_every_protocol_is_still_shared():
    """A protocol listed here is defined by at least two modules: the list holds no stale exception."""
    found = public_definitions()
    assert not [name for name in PROTOCOLS if len(set(found.get(name, []))) < 2]
