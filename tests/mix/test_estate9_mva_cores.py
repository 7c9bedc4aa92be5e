"""``mva --observed`` takes each member's cores from its own samples (estate9, point 2): before, one ``--cores N``
was required and applied to every member, whatever each member's samples recorded."""
from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.observe import synthetic


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


def _mva(capsys, *argv):
    status = main(["mva", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


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
                            "--cores", 4)
    assert status == 0, err
    assert "--cores 4 overrides the cores the samples record for every member (obs-2: 8)." in out
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--cores", 4)
    assert status == 0 and "overrides" not in out                # the same figure: nothing overridden


def test_a_member_whose_samples_record_no_cores_is_named(members, tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    pd.read_csv(members["large"] / "samples.csv").drop(columns=["cores"]).to_csv(bare / "samples.csv", index=False)
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", bare)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "the samples of bare record no cores" in err and "--cores N" in err
    status, out, err = _mva(capsys, "--bootstrap", 0, "--observed", members["small"], "--observed", bare, "--cores", 4)
    assert status == 0, err
