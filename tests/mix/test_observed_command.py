"""``capmodel mva --observed`` what-ifs given as a careless user gives them (round five): ``--scale`` or ``--rates``
repeated (as ``--observed`` is), one member's folder given twice under two spellings, and a what-if that asks for no
operations at all. The observed folder is ``capmodel observe``'s output of the synthetic generator's FTDC.

Before: ``--scale reads=2 --scale writes=3`` kept ``writes=3`` alone (argparse's last value) and
``--scale reads=2 --scale reads=3`` silently took 3, while ``reads=2,reads=3`` was refused; ``--observed o
--observed ./o/`` made one server two members of the set; no operations asked printed "room for 3978...x" (300
digits) and JSON ``load_factor_that_fits`` 3.98e300.
"""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h5mva")
    server = synthetic.SyntheticServer(host="m1:27017", cores=4, hours=0.5, filler_metrics=5,
                                       start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
    folder = synthetic.write_server(server, parent / "ftdc" / "diagnostic.data")
    assert main(["observe", "--ftdc", str(folder), "--out", str(parent / "obs")]) == 0
    return parent / "obs"


def _mva(capsys, *argv):
    status = main(["mva", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _asked(out) -> dict:
    (member,) = json.loads(out)["members"]
    return {row["class"]: (row["observed_per_s"], row["asked_per_s"]) for row in member["classes"]}


@pytest.mark.parametrize("option, first, second", [("--scale", 2.0, 3.0), ("--rates", 500.0, 40.0)])
def test_a_repeated_what_if_option_adds_its_classes(observed, capsys, option, first, second):
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, option, f"reads={first:g}",
                            option, f"writes={second:g}", "--bootstrap", 0, "--json")
    assert status == 0, err
    asked = _asked(out)
    if option == "--scale":
        assert asked["reads"][1] == pytest.approx(asked["reads"][0] * first)
        assert asked["writes"][1] == pytest.approx(asked["writes"][0] * second)
        assert asked["commands"][1] == pytest.approx(asked["commands"][0])      # not named: as observed
    else:
        assert (asked["reads"][1], asked["writes"][1], asked["commands"][1]) == (first, second, 0.0)


@pytest.mark.parametrize("option", ["--scale", "--rates"])
@pytest.mark.parametrize("how", ["repeated", "in one value"])
def test_a_class_given_twice_is_refused_however_it_is_given_twice(observed, capsys, option, how):
    values = [option, "reads=2", option, "reads=3"] if how == "repeated" else [option, "reads=2,reads=3"]
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, *values)
    assert status == 2 and out == ""
    assert err == f"capmodel: error: {option}: reads is given twice\n"


@pytest.mark.parametrize("spelling", ["trailing slash", "samples.csv", "symlink"])
def test_one_folder_given_twice_is_refused_not_counted_as_two_members(observed, tmp_path, capsys, spelling):
    other = {"trailing slash": f"{observed}/", "samples.csv": observed / "samples.csv",
             "symlink": tmp_path / "link"}[spelling]
    if spelling == "symlink":
        other.symlink_to(observed, target_is_directory=True)
    status, out, err = _mva(capsys, "--observed", observed, "--observed", other, "--cores", 4)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and f"--observed {other}: the same samples as --observed {observed}" in err


def test_a_what_if_asking_for_nothing_states_no_room_factor(observed, capsys):
    zero = ["--scale", "reads=0,writes=0,commands=0", "--bootstrap", 0]
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, *zero)
    assert status == 0, err
    assert "no operations asked" in out and "room for" not in out
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, *zero, "--json")
    assert status == 0, err
    assert json.loads(out)["members"][0]["load_factor_that_fits"] is None    # any factor of nothing fits


def test_a_large_room_factor_is_written_with_separators(observed, capsys):
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, "--rates", "writes=1", "--bootstrap", 0,
                            "--json")
    assert status == 0, err
    member = json.loads(out)["members"][0]
    factor = member["load_factor_that_fits"]
    # independently: the cores left after the background over the cores the asked load adds to it
    used = member["utilization"] * 4
    assert factor == pytest.approx((4 - member["background_cores"]) / (used - member["background_cores"]))
    assert factor > 1000
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, "--rates", "writes=1", "--bootstrap", 0)
    assert f"room for {factor:,.0f}x this load" in out
    assert not re.search(r"\d{4}", out.replace(f"{factor:,.0f}", ""))   # no other figure without a separator


@pytest.mark.parametrize("extra, named", [
    (["--scale", "reads=2"], "--scale"), (["--rates", "reads=5"], "--rates"), (["--cores", "4"], "--cores"),
    (["--cores", "4", "--scale", "reads=2"], "--cores, --scale"),
])
def test_what_if_options_with_a_model_file_are_refused_not_ignored(tmp_path, capsys, extra, named):
    # before: the file's network was solved as written and printed as if the what-if had been applied
    model = tmp_path / "net.yaml"
    model.write_text("classes:\n  reads: {population: 10, think_time: 0.1}\nstations:\n  cpu: {demands: {reads: 0.01}}\n")
    status, out, err = _mva(capsys, model, *extra)
    assert status == 2 and out == ""
    verb = "go" if "," in named else "goes"          # one option goes, several go
    assert err == (f"capmodel: error: {named} {verb} with --observed DIR (the what-if from production), not with "
                   f"{model}: change the file's populations, rates or servers instead\n")
    status, out, err = _mva(capsys, model, "--json")
    assert status == 0, err
    (row,) = json.loads(out)["classes"]
    # exact MVA of one queue (Lazowska et al. 1984, ch. 6), N=10, Z=0.1 s, D=0.01 s, by its recurrence
    queue = 0.0
    for n in range(1, 11):
        response = 0.01 * (1 + queue)
        throughput = n / (0.1 + response)
        queue = throughput * response
    assert row["throughput"] == pytest.approx(throughput, rel=1e-9)
