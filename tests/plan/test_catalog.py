"""VM catalogs and measurement tables: the join by name, the messages a user sees for bad rows, and a catalog whose
costs are in several currencies (``capmodel plan --catalog``)."""

import json

import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.errors import PlanError
from capmodel.plan import join_measurements, validate_catalog
from capmodel.plan.catalog import validate_measurements
from tests.plan.test_latency_objective import write_curves


def catalog():
    return pd.DataFrame({"vm": ["a", "b", "c"], "monthly_cost": [100.0, 200.0, 300.0], "vcpu": [2, 4, 8]})


def test_join_keeps_catalog_order_and_unmeasured_rows():
    measured = pd.DataFrame({"vm": ["c", "a"], "relative_throughput": [3.0, 1.0], "relative_throughput_low": [2.5, None]})
    joined = join_measurements(catalog(), measured)
    assert joined["vm"].tolist() == ["a", "b", "c"]
    assert joined["relative_throughput"].tolist()[0::2] == [1.0, 3.0]
    assert pd.isna(joined.loc[1, "relative_throughput"])
    # a missing range end is the value itself
    assert joined.loc[0, "relative_throughput_low"] == 1.0 and joined.loc[2, "relative_throughput_low"] == 2.5
    assert joined.loc[2, "relative_throughput_high"] == 3.0


@pytest.mark.parametrize("table, words", [
    (pd.DataFrame({"vm": ["a"]}), "missing column 'monthly_cost'"),
    (pd.DataFrame({"vm": ["a", "a"], "monthly_cost": [1, 2]}), "row 2: VM 'a' is listed twice"),
    (pd.DataFrame({"vm": ["a", "b"], "monthly_cost": [1, "ten"]}), "column 'monthly_cost', row 2: 'ten' is not a number"),
    (pd.DataFrame({"vm": ["a"], "monthly_cost": [-1.0]}), "row 1 (VM 'a') must be a number > 0 and at most 1,000,000,000, got -1"),
    (pd.DataFrame({"vm": ["a"], "monthly_cost": [None]}), "row 1: value is missing"),
    (pd.DataFrame({"vm": [], "monthly_cost": []}), "no rows"),
])
def test_bad_catalogs(table, words):
    with pytest.raises(PlanError, match=words.replace("(", r"\(").replace(")", r"\)")):
        validate_catalog(table, "vms.csv")


@pytest.mark.parametrize("table, words", [
    (pd.DataFrame({"name": ["a"], "throughput": [1.0]}), "missing column 'vm'"),
    (pd.DataFrame({"vm": ["a"], "ops": [1.0]}), "needs a column 'throughput'"),
    (pd.DataFrame({"vm": ["a"], "throughput": [-5.0]}), "column 'throughput', row 1 (VM 'a') must be a number >= 0 and at most 1,000,000,000,000, got -5"),
    (pd.DataFrame({"vm": ["a"], "throughput": [5.0], "cpu_util": [80]}), "column 'cpu_util', row 1"),
    (pd.DataFrame({"vm": ["a"], "throughput": [5.0], "read_latency_vs_baseline": ["worse"]}),
     "'worse' is not one of baseline, similar, lower, higher"),
    (pd.DataFrame({"vm": ["a"], "throughput": [5.0], "throughput_low": [6.0]}), "throughput_low is above"),
])
def test_bad_measurements(table, words):
    with pytest.raises(PlanError, match=words.replace("(", r"\(").replace(")", r"\)")):
        validate_measurements(table, "measured.csv")


def test_unknown_vm_in_measurements_names_the_catalog():
    with pytest.raises(PlanError, match="measured.csv: VM 'z' is not in the catalog \\(catalog VMs: a, b, c\\)"):
        join_measurements(catalog(), pd.DataFrame({"vm": ["z"], "throughput": [1.0]}), "vms.csv", "measured.csv")


@pytest.mark.parametrize("currencies, said", [(("EUR", "USD"), "EUR and USD"), (("EUR", ""), "EUR and no currency")])
def test_costs_in_several_currencies_are_refused(tmp_path, capsys, currencies, said):
    """100 EUR and 180 USD were compared as one unit: 'cheapest VM', cost per 1,000 users and the Pareto frontier
    across currencies, the header reading 'cost (per month)' with no currency at all."""
    catalog, curves = write_curves(tmp_path)
    catalog.write_text(f"vm,monthly_cost,currency\nsmall,100,{currencies[0]}\nbig,180,{currencies[1]}\n")
    assert main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "column 'currency', row 2 (VM 'big')" in err and said in err


def test_one_currency_written_with_spaces_is_one(tmp_path, capsys):
    catalog, curves = write_curves(tmp_path)
    catalog.write_text("vm,monthly_cost,currency\nsmall,100,EUR\nbig,180, EUR\n")
    assert main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "0.5", "--json"]) == 0
    assert {row["currency"] for row in json.loads(capsys.readouterr().out)["vms"]} == {"EUR"}
