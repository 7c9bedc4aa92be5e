"""``capmodel mva --observed``: the what-if on a replica set's observed samples (``capmodel observe``'s output of the
synthetic generator's FTDC, whose true figures are known). Checked: repeated ``--scale``/``--rates`` add their
classes and a class given twice is refused; one member's folder given twice (two spellings) is one member, refused;
a what-if asking for no operations states no room factor; each member takes its cores from its own samples unless
``--cores`` overrides them (and says so); a folder that names nothing is said first, naming the value."""
from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.observe import synthetic


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
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, *zero, "--json")
    assert status == 0, err
    (member,) = json.loads(out)["members"]
    assert {row["class"]: row["asked_per_s"] for row in member["classes"]} == {"reads": 0, "writes": 0, "commands": 0}
    assert member["load_factor_that_fits"] is None    # any factor of nothing fits: no room factor


def test_a_large_room_factor_is_the_cores_left_over_the_cores_the_load_adds(observed, capsys):
    status, out, err = _mva(capsys, "--observed", observed, "--cores", 4, "--rates", "writes=1", "--bootstrap", 0,
                            "--json")
    assert status == 0, err
    member = json.loads(out)["members"][0]
    factor = member["load_factor_that_fits"]
    # independently: the cores left after the background over the cores the asked load adds to it
    used = member["utilization"] * 4
    assert factor == pytest.approx((4 - member["background_cores"]) / (used - member["background_cores"]))
    assert factor > 1000


@pytest.mark.parametrize("extra, named", [
    (["--scale", "reads=2"], "--scale"), (["--rates", "reads=5"], "--rates"), (["--cores", "4"], "--cores"),
    (["--cores", "4", "--scale", "reads=2"], "--cores, --scale"),
])
def test_what_if_options_with_a_model_file_are_refused_not_ignored(tmp_path, capsys, extra, named):
    # before: the file's network was solved as written and printed as if the what-if had been applied
    model = tmp_path / "net.yaml"
    model.write_text("classes:\n  reads: {population: 10, think_time: 0.1}\n"
                     "stations:\n  cpu: {demands: {reads: 0.01}}\n")
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


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    parent = tmp_path_factory.mktemp("e9cores")
    out = {}
    for host, cores in (("small:27017", 4), ("large:27017", 8)):
        server = synthetic.SyntheticServer(host=host, cores=cores, hours=0.25, filler_metrics=5,
                                           start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
        name = host.split(":")[0]
        folder = synthetic.write_server(server, parent / name / "ftdc" / "diagnostic.data")
        assert main(["observe", "--ftdc", str(folder), "--out", str(parent / name / "obs")]) == 0
        out[name] = parent / name / "obs"
    return out


def test_each_member_has_the_cores_its_samples_record(members, capsys):
    for name, folder in members.items():       # the figure the samples hold, read independently of the command
        recorded = pd.read_csv(folder / "samples.csv")["cores"].dropna().iloc[-1]
        assert recorded == {"small": 4, "large": 8}[name]
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", members["large"],
                            "--json")
    assert status == 0, err
    result = json.loads(out)
    cores = {m["member"]: (m["cores"], m["cores_source"]) for m in result["members"]}
    assert cores == {"obs": (4, "samples"), "obs-2": (8, "samples")}
    assert result["cores_note"] == ""


def test_cores_given_overrides_every_member_and_says_so(members, capsys):
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", members["large"],
                            "--cores", 4, "--json")
    assert status == 0, err
    result = json.loads(out)
    cores = {m["member"]: (m["cores"], m["cores_source"]) for m in result["members"]}
    assert cores == {"obs": (4, "--cores"), "obs-2": (4, "--cores")}
    assert "(obs-2: 8)" in result["cores_note"]                  # the note names the member overridden and its cores
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--cores", 4, "--json")
    assert status == 0, err
    assert json.loads(out)["cores_note"] == ""                   # the same figure: nothing overridden


def test_a_member_whose_samples_record_no_cores_is_named(members, tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    pd.read_csv(members["large"] / "samples.csv").drop(columns=["cores"]).to_csv(bare / "samples.csv", index=False)
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", bare)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "the samples of bare record no cores" in err and "--cores N" in err
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", bare, "--cores", 4)
    assert status == 0, err


@pytest.mark.parametrize("extra", [[], ["--cores", "4"], ["--cores", "0"], ["--scale", "reads=2", "--rates", "x=1"]])
def test_a_missing_folder_is_said_first(tmp_path, capsys, extra):
    missing = tmp_path / "nope"
    assert main(["mva", "--observed", str(missing), *extra]) == 2
    err = capsys.readouterr().err
    assert err == f"capmodel: error: --observed {missing}: no such folder (write one with capmodel observe --out)\n"


def test_a_folder_without_samples_and_the_second_of_two(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["mva", "--observed", str(empty)]) == 2
    assert f"--observed {empty}: no samples.csv there" in capsys.readouterr().err
    good = tmp_path / "good"
    good.mkdir()
    (good / "samples.csv").write_text("time\n")
    assert main(["mva", "--observed", str(good), "--observed", str(tmp_path / "gone"), "--json"]) == 2
    out, err = capsys.readouterr()
    assert f"--observed {tmp_path / 'gone'}: no such folder" in json.loads(out)["error"] and err.count("\n") == 1


def test_an_empty_value_is_named_as_empty(capsys):
    assert main(["mva", "--observed", ""]) == 2
    assert capsys.readouterr().err == "capmodel: error: --observed is empty: give a capmodel observe output folder\n"
