"""Counts in the sentences the CLI prints agree with their nouns ("1 VM", "4 VMs", "1 degree of freedom"), from one
helper (capmodel.formatting.plural), never a loose "VM(s)"."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from capmodel.formatting import plural
from capmodel.models.usl.fit import fit_usl


@pytest.mark.parametrize("n, word, many, expected", [
    (0, "VM", None, "0 VMs"), (1, "VM", None, "1 VM"), (2, "VM", None, "2 VMs"), (1.0, "shard", None, "1 shard"),
    (12_000, "user", None, "12,000 users"), (1, "degree of freedom", "degrees of freedom", "1 degree of freedom"),
    (3, "degree of freedom", "degrees of freedom", "3 degrees of freedom")])
def test_plural(n, word, many, expected):
    assert plural(n, word, many) == expected


def _run(*args):
    return subprocess.run([sys.executable, "-m", "capmodel.cli", *args], capture_output=True, text=True, check=True)


@pytest.mark.parametrize("users", [20_000, 70_000, 88_000])
def test_recommendation_reason_counts_the_vms_that_carry_the_target(users):
    out = json.loads(_run("plan", "--target-users", str(users), "--json").stdout)
    vms = [v for v in out["vms"] if v["users"] is not None and v["users"] >= users]
    [rec] = out["recommendations"]
    n = len(vms)
    assert rec["reason"] == (f"the only VM that carries {users:,} users" if n == 1 else
                             f"cheapest of the {n} VMs that carry {users:,} users")


@pytest.mark.parametrize("carriers", [1, 2, 5])
@pytest.mark.parametrize("target", [1, 40_000])
def test_the_reason_for_a_vm_reads_for_one_carrier_and_for_many(carriers, target):
    # `carriers` VMs carry the target, one more does not; the cheapest carrier is chosen
    from capmodel.plan.growth import cheapest_for_target

    vms = pd.DataFrame({"vm": [f"vm{i}" for i in range(carriers + 1)],
                        "monthly_cost": [100.0 * (i + 1) for i in range(carriers + 1)],
                        "users": [target * 2.0] * carriers + [target / 2.0]})
    row = cheapest_for_target(vms, target)
    users = "1 user" if target == 1 else f"{target:,} users"
    assert row["vm"] == "vm0"
    assert row["reason"] == (f"the only VM that carries {users}" if carriers == 1 else
                             f"cheapest of the {carriers} VMs that carry {users}")


@pytest.mark.parametrize("args", [("plan", "--target-users", "50000", "90000"), ("nodes",), ("shards",),
                                  ("shards", "--sigma", "0.05"), ("fit", "tests/fixtures/user_study/three_points.csv")])
def test_no_loose_plural_in_command_output(args):
    for extra in ((), ("--json",)):
        out = _run(*args, *extra).stdout
        assert "(s)" not in out.replace("ops/s)", "").replace("inserts/s)", "")


def test_a_fit_summary_on_one_residual_degree_of_freedom_says_degree():
    # four points and the USL's three parameters leave 4 - 3 = 1 residual degree of freedom (R's summary says
    # "on 1 degrees of freedom"; ours agrees with its count); one more point leaves 2
    n = np.array([1, 2, 4, 8, 16.0])
    x = 100 * n / (1 + 0.05 * (n - 1) + 0.001 * n * (n - 1)) * np.array([1.0, 1.01, 0.99, 1.02, 0.985])
    four, five = (fit_usl(pd.DataFrame({"concurrency": n[:k], "throughput": x[:k]})) for k in (4, 5))
    assert four.df_resid == 1 and five.df_resid == 2
    assert f"residual standard error: {four.rse:.4g} on 1 degree of freedom\n" in four.summary()
    assert f"residual standard error: {five.rse:.4g} on 2 degrees of freedom\n" in five.summary()


BENCH_TEXT = ["capmodel/bench", "capmodel/report/bench_report.py"]


def _string_literals(path):
    import io
    import tokenize

    with open(path, encoding="utf-8") as handle:
        for token in tokenize.generate_tokens(io.StringIO(handle.read()).readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                yield token.start[0], token.string


def test_no_loose_plural_in_the_bench_text():
    # every sentence the bench writes (the sweep's description on page 06, its verdicts, its failures, where its
    # workers ran) says its counts through formatting.plural, never "worker(s)", "host(s)", "step(s)", "CPU(s)"
    import re
    from pathlib import Path

    files = [p for root in BENCH_TEXT for p in ([Path(root)] if root.endswith(".py") else Path(root).rglob("*.py"))]
    assert len(files) > 10
    loose = [f"{path}:{line}: {text}" for path in files for line, text in _string_literals(path)
             if re.search(r"[A-Za-z]\((s|es)\)", text)]
    assert not loose, loose


@pytest.mark.parametrize("ok, bound", [(1, 0), (2, 1), (5, 2)])
def test_the_sweep_description_counts_its_steps(ok, bound):
    from capmodel.bench.sweep.describe import describe_sweep

    steps = [{"status": "ok", "concurrency": 2 ** i, "client_bound": i < bound,
              "client_bound_reasons": ["the client was busy"]} for i in range(ok)]
    text = describe_sweep({"clients": "one process"}, steps)
    assert f"; {plural(ok, 'step')} measured." in text
    if bound:
        assert f"{bound} of {plural(ok, 'step')} may be limited by the client" in text


@pytest.mark.parametrize("workers, cores", [(1, 1), (2, 4)])
def test_the_client_bound_reasons_count_processes_and_cpus(workers, cores):
    from types import SimpleNamespace

    from capmodel.bench.sweep.verdict import client_bound_reasons

    rows = [{"address": f"tcp://w{i}", "host": "load1", "clients": 4, "cpu_cores": 0.99, "host_cpu": 0.95,
             "host_cores": cores} for i in range(workers)]
    result = SimpleNamespace(ops_per_s=100.0, workers=rows, mode="open", operations=10, concurrency=4)
    text = "; ".join(client_bound_reasons(result, None))
    processes = "1 client process" if workers == 1 else f"{workers} client processes"
    assert f"{workers} of {processes} used >= " in text
    assert f"its {plural(cores, 'CPU')} were 95% busy" in text
