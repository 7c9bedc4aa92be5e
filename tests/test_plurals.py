"""Counts in the sentences the CLI prints agree with their nouns ("1 VM", "4 VMs", "1 degree of freedom"), from one
helper (capmodel.formatting.plural), never a loose "VM(s)"."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from capmodel.formatting import plural
from capmodel.models.usl import fit_usl


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
