"""A known application mix run on a real mongod with every operation logged, for the query-shape tests.

Four shapes, each run ``rounds`` times: a collection scan (``status`` has no index), an indexed range query with a
sort, an update by its index, and an ``_id`` lookup. Every value the mix sends is synthetic and distinctive (strings
starting ``zq``, numbers of seven digits), so a test can check that none of them reaches an output.

``python -m tests.support.shapes_lab`` records ``tests/fixtures/shapes/mongod.log`` from a fresh embedded server.
"""
from __future__ import annotations

import itertools
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shapes" / "mongod.log"
#: per shape of the mix: (operation, filter shape, plan it runs with)
SHAPES = {
    "scan": ("find", "{status: ?}", "COLLSCAN"),
    "range": ("find", "{customer: ?, placed: {$gte: ?, $lt: ?}}", "IXSCAN { customer: 1, placed: 1 }"),
    "update": ("update", "{customer: ?, placed: ?}", "IXSCAN { customer: 1, placed: 1 }"),
    "lookup": ("find", "{_id: ?}", "IDHACK"),
}
DOCUMENTS = 60
_names = itertools.count()


def literals(rounds: int) -> set[str]:
    """The values the mix sends, as text (each would be found in an output that leaked it)."""
    out = {f"zq-cust-{i % 6}" for i in range(DOCUMENTS)} | {f"zq-status-{i % 12}" for i in range(DOCUMENTS)}
    out |= {f"zq-shipped-{r}" for r in range(rounds)} | {f"zq-id-{i}" for i in range(DOCUMENTS)}
    out |= {str(1_000_000 + i * 7) for i in range(DOCUMENTS)} | {"1000000", "1000300"}
    return out


def leaked(rounds: int, text: str) -> list[str]:
    """The values of ``literals(rounds)`` that ``text`` holds as whole tokens (a number inside a longer figure, such
    as 1000175 in 1764441000175 or 0.1000175, is not the value)."""
    import re

    return sorted(v for v in literals(rounds) if re.search(rf"(?<![\d.]){re.escape(v)}(?![\d])", text))


def run_mix(database, rounds: int, collection: str | None = None) -> str:
    """Load the collection and run the four shapes ``rounds`` times each; returns the namespace. The caller sets
    the profiler (``slowms`` 0) before and back after."""
    coll = database[collection or f"orders_{next(_names)}"]
    coll.create_index([("customer", 1), ("placed", 1)])
    coll.insert_many([{"_id": f"zq-id-{i}", "customer": f"zq-cust-{i % 6}", "placed": 1_000_000 + i * 7,
                       "status": f"zq-status-{i % 12}"} for i in range(DOCUMENTS)])
    for r in range(rounds):
        list(coll.find({"status": f"zq-status-{r % 12}"}))
        list(coll.find({"customer": f"zq-cust-{r % 6}", "placed": {"$gte": 1_000_000, "$lt": 1_000_300}})
             .sort("placed", -1))
        coll.update_one({"customer": f"zq-cust-{r % 6}", "placed": 1_000_000 + (r % DOCUMENTS) * 7},
                        {"$set": {"status": f"zq-shipped-{r}"}})
        coll.find_one({"_id": f"zq-id-{r % DOCUMENTS}"})
    return coll.full_name


def record_fixture(rounds: int = 8) -> Path:
    """Run the mix on a fresh embedded server with every operation logged and keep its log as the fixture."""
    import shutil

    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        client = server.client()
        try:
            database = client["shopdemo"]
            database.command("profile", 0, slowms=0)
            run_mix(database, rounds, collection="orders")
        finally:
            client.close()
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(server.logpaths[0], FIXTURE)
    return FIXTURE


if __name__ == "__main__":
    print(record_fixture())


def phased_lab(database, documents: int = 2_000, collection: str | None = None,
               load: bool = True, scan_limit: int = 5) -> tuple[str, dict]:
    """A collection of ``documents`` loaded with its index (``load``; else one loaded before), and the four shapes
    as calls ``{name: f(r)}`` (``r``: the operation's number, which picks its values; the scan stops at
    ``scan_limit`` documents, 0: none); returns the namespace and the calls."""
    coll = database[collection or f"phased_{next(_names)}"]
    if load:
        coll.create_index([("customer", 1), ("placed", 1)])
        coll.insert_many([{"_id": f"zq-id-{i}", "customer": f"zq-cust-{i % 6}", "placed": 1_000_000 + i * 7,
                           "status": f"zq-status-{i % 12}"} for i in range(documents)])
    calls = {
        "scan": lambda r: list(coll.find({"status": f"zq-status-{r % 12}"}).limit(scan_limit)),
        "range": lambda r: list(coll.find({"customer": f"zq-cust-{r % 6}",
                                           "placed": {"$gte": 1_000_000, "$lt": 1_000_300}}).sort("placed", -1)),
        "update": lambda r: coll.update_one({"customer": f"zq-cust-{r % 6}", "placed": 1_000_000 + (r % documents) * 7},
                                            {"$set": {"status": f"zq-status-{r % 12}"}}),
        "lookup": lambda r: coll.find_one({"_id": f"zq-id-{r % documents}"}),
    }
    return coll.full_name, calls


def run_for(calls: dict, weights: dict, seconds: float, rng) -> dict:
    """Run the shapes drawn by ``weights`` one after another for ``seconds``; the operations run per shape."""
    import time

    names = [name for name in calls if weights.get(name, 0) > 0]
    counts = dict.fromkeys(calls, 0)
    end, r = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        name = rng.choices(names, [weights[n] for n in names])[0]
        calls[name](r)
        counts[name] += 1
        r += 1
    return counts


def run_phases(database, phases: int, phase_s: float = 1.0, documents: int = 2_000, seed: int = 0,
               collection: str | None = None) -> tuple[str, list[dict]]:
    """The four shapes in ``phases`` phases of ``phase_s`` seconds, each with its own random mix and its own load (busy
    a random 20 to 100 % of the phase, idle the rest), so that a regression on the server's CPU can tell the shapes
    apart and from the background; on a collection of ``documents``; returns the namespace and each phase's
    operations per shape."""
    import random

    rng = random.Random(seed)
    namespace, calls = phased_lab(database, documents, collection)
    return namespace, [phase(calls, phase_s, rng) for _ in range(phases)]


def phase(calls: dict, seconds: float, rng) -> dict:
    """One phase: a random mix, busy a random 20 to 100 % of ``seconds``, idle the rest; its operations per shape.
    The mix's weights are uniform draws to the fourth power, so that one or two shapes lead most phases: a short run's
    regression tells the shapes apart by that."""
    import time

    weights = {name: rng.random() ** 4 for name in calls}
    busy = seconds * rng.uniform(0.2, 1.0)
    counts = run_for(calls, weights, busy, rng)
    time.sleep(seconds - busy)
    return counts
