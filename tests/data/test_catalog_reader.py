"""The VM catalog reader is as lenient as the curve reader (issue 29, point 4): common header spellings (``VM``,
``Monthly cost``, ``price``), semicolon-separated files, thousands separators and currency symbols are read; a cell it
cannot read is one line naming the file, the column as the file spells it, and the row. Both readers map columns by
one rule (``capmodel.data.column_names``) and read number cells by one rule (``capmodel.data.number_cells``)."""
import json

import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.data.number_cells import number_cell, read_money
from capmodel.data.readers import read_catalog, read_curve
from capmodel.errors import InputError, PlanError
from capmodel.plan.catalog import validate_catalog


@pytest.mark.parametrize("cell, amount, currency", [
    ("$420.00", 420.0, "USD"), ("US$5", 5.0, "USD"), ("€1.234,50", 1234.5, "EUR"), ("1.234,50 €", 1234.5, "EUR"),
    ("£ 99", 99.0, "GBP"), ("420 USD", 420.0, "USD"), ("EUR 1 234,5", 1234.5, "EUR"), ("$1,234.56", 1234.56, "USD"),
    ("1,234", 1234.0, ""), ("420,50", 420.5, ""), ("12.5", 12.5, ""), ("1.234.567", 1234567.0, ""),
    ("CHF 410.50", 410.5, "CHF"),
])
def test_a_money_cell_is_read_with_its_currency(cell, amount, currency):
    """Each spelling gives the amount a person reads in it, and the ISO code its symbol stands for."""
    text, found = read_money(cell)
    assert float(text) == amount and found == currency


@pytest.mark.parametrize("cell", ["$abc", "abc", "4 20 0", "$420$", "1,2,3"])
def test_a_cell_in_no_known_spelling_is_left_for_the_validation_to_name(cell):
    assert read_money(cell) == (cell, "")


def test_outside_a_money_column_a_symbol_is_not_read():
    """A throughput of ``$5`` is no number; thousands separators are read in every numeric column."""
    assert number_cell("$5") == "$5" and number_cell("2,635") == "2635" and number_cell("1.234,5") == "1234.5"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_semicolon_catalog_with_dollar_costs_reads(tmp_path):
    """The issue's file: ``VM;Monthly cost`` with ``$420.00`` (and a quoted ``$1,250.50``): the currency is USD."""
    path = _write(tmp_path, "vms.csv", 'VM;Monthly cost;vCPUs;RAM (GB)\nsmall;$420.00;4;16\nlarge;"$1,250.50";8;32\n')
    raw = read_catalog(path)
    assert list(raw.columns) == ["vm", "monthly_cost", "vcpu", "ram_gb"]
    clean = validate_catalog(raw, str(path))
    assert clean["monthly_cost"].tolist() == [420.0, 1250.5]
    assert clean["currency"].tolist() == ["USD", "USD"]
    assert clean["vcpu"].tolist() == [4.0, 8.0] and clean["ram_gb"].tolist() == [16.0, 32.0]


@pytest.mark.parametrize("header, vm, cost", [
    ("vm,monthly_cost", "vm", "monthly_cost"), ("Instance type,Price", "Instance type", "Price"),
    ("VM NAME,MONTHLY-COST", "VM NAME", "MONTHLY-COST"), ("system,cost per month", "system", "cost per month"),
    ("Flavor,Cost/Month", "Flavor", "Cost/Month"),
])
def test_common_spellings_of_the_vm_and_its_cost_are_found(tmp_path, header, vm, cost):
    path = _write(tmp_path, "vms.csv", f"{header}\na,100\nb,\"2,500\"\n")
    raw = read_catalog(path)
    assert raw.attrs["source_columns"] == {k: v for k, v in {"vm": vm, "monthly_cost": cost}.items() if k != v}
    assert validate_catalog(raw)["monthly_cost"].tolist() == [100.0, 2500.0]


def test_a_euro_catalog_with_decimal_commas_reads(tmp_path):
    """Semicolons and decimal commas, as European spreadsheets export (pandas reads the bare ``797,76``; the
    symbol-marked cells are read by the money rule)."""
    path = _write(tmp_path, "vms.csv", "Name;Price;Currency\nm3;797,76;EUR\nc4;694,08;EUR\n")
    clean = validate_catalog(read_catalog(path))
    assert clean["monthly_cost"].tolist() == [797.76, 694.08] and set(clean["currency"]) == {"EUR"}
    path = _write(tmp_path, "sym.csv", "Name;Price\nm3;797,76 €\nc4;1.694,08 €\n")
    clean = validate_catalog(read_catalog(path))
    assert clean["monthly_cost"].tolist() == [797.76, 1694.08] and set(clean["currency"]) == {"EUR"}


def test_a_cost_that_is_no_number_names_the_file_column_and_row(tmp_path):
    path = _write(tmp_path, "vms.csv", "VM;Monthly cost\nsmall;$420.00\nlarge;$4two0\n")
    with pytest.raises(PlanError) as err:
        validate_catalog(read_catalog(path), str(path))
    message = str(err.value)
    assert message.startswith(f"{path}: column 'Monthly cost' (monthly_cost), row 2: ")
    assert "$4two0" in message and "is not a number" in message and "\n" not in message


def test_costs_in_two_currencies_are_refused_by_row(tmp_path):
    path = _write(tmp_path, "vms.csv", "vm,monthly_cost\na,$100\nb,€90\n")
    with pytest.raises(PlanError, match=r"column 'monthly_cost', row 2 \(VM 'b'\): the costs are in USD and EUR"):
        validate_catalog(read_catalog(path), str(path))
    path = _write(tmp_path, "some.csv", "vm,monthly_cost\na,$100\nb,90\n")
    with pytest.raises(PlanError, match=r"row 2 \(VM 'b'\): the costs are in USD and no currency"):
        validate_catalog(read_catalog(path), str(path))


def test_a_symbol_that_contradicts_the_currency_column_is_refused(tmp_path):
    path = _write(tmp_path, "vms.csv", "vm,monthly_cost,currency\na,$100,USD\nb,$90,EUR\n")
    with pytest.raises(PlanError, match=r"row 2 \(VM 'b'\): the cost says USD but the currency column says EUR"):
        validate_catalog(read_catalog(path), str(path))
    agreed = validate_catalog(read_catalog(_write(tmp_path, "ok.csv", "vm,monthly_cost,currency\na,$100,usd\n")))
    assert agreed["currency"].tolist() == ["usd"] and agreed["monthly_cost"].tolist() == [100.0]


def test_two_columns_that_could_each_be_the_vm_are_named(tmp_path):
    path = _write(tmp_path, "vms.csv", "VM,Instance type,price\na,x,1\n")
    with pytest.raises(InputError, match=r"columns 'VM', 'Instance type' could each be vm; say which one with vm=COL"):
        read_catalog(path)
    assert read_catalog(path, vm="Instance type")["vm"].tolist() == ["x"]


def test_the_curve_reader_reads_number_cells_by_the_same_rule(tmp_path):
    """A quoted ``1.234,5`` in a comma-separated curve is 1234.5, as in a catalog."""
    path = _write(tmp_path, "curve.csv", 'threads,ops/s\n1,"1.234,5"\n2,"2,400"\n')
    assert read_curve(path)["throughput"].tolist() == [1234.5, 2400.0]


@pytest.mark.parametrize("header", ["vm", "VM", "system", "Instance type"])
def test_the_vm_column_of_curves_defaults_to_vm_and_finds_its_spellings(tmp_path, capsys, header):
    """``plan --curves`` and the catalog share one default VM column, ``vm``; ``system`` (the curve table's label)
    and the catalog's other spellings are found without ``--vm-column``."""
    rows = "".join(f"{vm},{n},{1000 * n / (1 + 0.05 * (n - 1))}\n" for vm in ("a", "b") for n in (1, 2, 4, 8, 16))
    curves = _write(tmp_path, "curves.csv", f"{header},threads,ops_per_sec\n{rows}")
    catalog = _write(tmp_path, "vms.csv", "VM;Monthly cost\na;$100.00\nb;$150.00\n")
    assert main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["vm"], r["monthly_cost"], r["currency"]) for r in out["vms"]] == [("a", 100.0, "USD"),
                                                                                ("b", 150.0, "USD")]


def test_a_bad_catalog_cell_is_one_line_from_the_command_line(tmp_path, capsys):
    catalog = _write(tmp_path, "vms.csv", "VM;Monthly cost\nsmall;$420.00\nlarge;n/a $\n")
    assert main(["plan", "--catalog", str(catalog), "--ops-per-user", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{catalog}: column 'Monthly cost' (monthly_cost), row 2" in err


def test_a_dataframe_catalog_reads_its_cells_as_a_file_does():
    """``plan_study(catalog=DataFrame)`` skips the reader but not the cell rule."""
    clean = validate_catalog(pd.DataFrame({"vm": ["a"], "monthly_cost": ["£1,200"]}))
    assert clean["monthly_cost"].tolist() == [1200.0] and clean["currency"].tolist() == ["GBP"]


def test_measurements_are_read_with_the_same_spellings(tmp_path, capsys):
    """A per-VM measurement file with spreadsheet headers (``VM``, ``Throughput (ops/sec)``, ``CPU utilization``) and
    a tab-separated catalog: users = throughput scaled to the 80% target / ops per user, computed here by hand."""
    catalog = _write(tmp_path, "vms.tsv", "Instance type\tPrice\tCurrency\nsmall\t100\tUSD\nlarge\t\"1,000\"\tUSD\n")
    measured = _write(tmp_path, "measured.csv", 'VM,Throughput (ops/sec),CPU utilization\nsmall,"4,000",0.5\n'
                                                "large,9000,0.9\n")
    assert main(["plan", "--catalog", str(catalog), "--measurements", str(measured), "--ops-per-user", "2",
                 "--json"]) == 0
    rows = {r["vm"]: r for r in json.loads(capsys.readouterr().out)["vms"]}
    assert rows["small"]["users"] == pytest.approx(4000 * 0.8 / 0.5 / 2)
    assert rows["large"]["users"] == pytest.approx(9000 * 0.8 / 0.9 / 2)
    assert rows["large"]["monthly_cost"] == 1000.0


def test_a_catalog_without_a_vm_column_names_the_files_own_columns(tmp_path):
    """The message lists the columns as the file spells them (``Price``, not ``monthly_cost``) and the spellings
    that would have been found."""
    path = _write(tmp_path, "vms.csv", "Foo;Price\na;$1\n")
    with pytest.raises(PlanError) as err:
        validate_catalog(read_catalog(path), str(path))
    assert str(err.value) == (f"{path}: missing column 'vm' (spelled vm, system, vm name, vm type ...; columns "
                              "present: Foo, Price)")
