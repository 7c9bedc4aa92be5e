"""The two measuring loops are one: the thread loops (``capmodel.bench.client.thread_workers``) and the coroutine
loops (``capmodel.bench.client.async_workers``) are kept as two copies for speed (a loop that awaits cannot be called
from a thread, and a call through a shared helper costs on every operation), so this test holds them equal.

Each loop's syntax tree is read from the source (nothing is imported); from the coroutine's, ``async def`` becomes
``def``, ``await x`` becomes ``x``, and the one name that must differ (the sleep: ``asyncio.sleep`` on the event loop,
``time.sleep`` in a thread) is written as the thread's. What is left must be the same tree, node for node.
"""
from __future__ import annotations

import ast
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "capmodel" / "bench" / "client"
LOOPS = ("closed_loop", "counted_loop", "open_loop")
SAME_MEANING = {"asyncio.sleep": "time.sleep"}  # coroutine's name -> thread's name


class _Synchronous(ast.NodeTransformer):
    """A coroutine's tree as the thread's would read: no ``async``, no ``await``, the thread's names."""

    def visit_AsyncFunctionDef(self, node):
        self.generic_visit(node)
        return ast.FunctionDef(**{field: getattr(node, field) for field in node._fields})

    def visit_Await(self, node):
        return self.visit(node.value)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        dotted = ast.unparse(node)
        if dotted in SAME_MEANING:
            return ast.parse(SAME_MEANING[dotted], mode="eval").body
        return node


def loops(source: str, synchronous: bool = False) -> dict[str, str]:
    """Each measuring loop of ``source`` as a dump of its syntax tree (positions left out)."""
    tree = ast.parse(source)
    if synchronous:
        tree = ast.fix_missing_locations(_Synchronous().visit(tree))
    return {node.name: ast.dump(node) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in LOOPS}


def differing(thread_source: str, coroutine_source: str) -> list[str]:
    threads, coroutines = loops(thread_source), loops(coroutine_source, synchronous=True)
    assert set(threads) == set(coroutines) == set(LOOPS), "a measuring loop is missing from one of the modules"
    return [name for name in LOOPS if threads[name] != coroutines[name]]


def test_the_comparison_sees_a_difference_and_forgives_await():
    thread = ("def closed_loop(state, ops, rec):\n    sleep = time.sleep\n    n = ops.calls[0]()\n    rec.n = n\n"
              "def counted_loop(state, ops, rec):\n    pass\ndef open_loop(state, ops, rec):\n    pass\n")
    same = thread.replace("def ", "async def ").replace("time.sleep", "asyncio.sleep").replace(
        "n = ops.calls[0]()", "n = await ops.calls[0]()")
    assert differing(thread, same) == []
    assert differing(thread, same.replace("rec.n = n", "rec.n = n + 1")) == ["closed_loop"]
    assert differing(thread, same.replace("asyncio.sleep", "asyncio.wait")) == ["closed_loop"]


def test_the_thread_and_coroutine_measuring_loops_are_the_same_loops():
    thread = (CLIENT / "thread_workers.py").read_text()
    coroutine = (CLIENT / "async_workers.py").read_text()
    assert differing(thread, coroutine) == []
