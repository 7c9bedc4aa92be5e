"""probe9: a catalog whose costs are in several currencies (capmodel plan --catalog)."""
import json

import pytest

from capmodel.cli import main
from tests.plan.test_latency_objective import write_curves


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
