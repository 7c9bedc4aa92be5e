"""Hostile numbers and names in ``capmodel mva MODEL.yaml``: refused at reading, naming the key and the range."""
from __future__ import annotations

import pytest

from capmodel.errors import InputError
from capmodel.models.queueing.network import build_network
from tests.support.cli_run import run

GOOD = """classes:
  reads: {population: 4, think_time: THINK}
  bursts: {arrival_rate: RATE}
stations:
  cpu: {demands: {reads: DEMAND, bursts: 0.001}}
"""


def model(tmp_path, demand="0.01", think="0.5", rate="2.0", text=None):
    path = tmp_path / "model.yaml"
    path.write_text(text or GOOD.replace("DEMAND", demand).replace("THINK", think).replace("RATE", rate))
    return path


def refused(path):
    result = run("mva", path)
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr and str(path) in result.stderr
    return result.stderr


def test_the_good_model_solves(tmp_path):
    assert run("mva", model(tmp_path)).returncode == 0


SECONDS = "a number of seconds from 0 to 1,000,000,000 (about 32 years)"


@pytest.mark.parametrize("field, value, key, wanted, got", [
    ("demand", "1.0e+308", "stations.cpu.demands.reads", SECONDS, "1e+308"),
    ("demand", "1.0e+10", "stations.cpu.demands.reads", SECONDS, "10000000000"),   # a whole figure without '.0'
    ("think", "1.0e+308", "classes.reads.think_time", SECONDS, "1e+308"),
    ("think", "2000000000", "classes.reads.think_time", SECONDS, "2000000000"),
    ("rate", "1.0e+300", "classes.bursts.arrival_rate", "a number of requests per second from 0 to 1,000,000,000",
     "1e+300"),
])
def test_a_number_past_its_range_names_the_key_and_the_range(tmp_path, field, value, key, wanted, got):
    err = refused(model(tmp_path, **{field: value}))
    assert f"{key}: must be {wanted}, got {got}\n" in err and "no finite solution" not in err


def test_the_largest_allowed_demand_is_read(tmp_path):
    # at the bound itself the file is read (the answer is then a slow but finite system)
    assert "must be at most" not in run("mva", model(tmp_path, demand="1.0e+9")).stderr


def test_the_python_api_bounds_demands_too():
    seconds = r"must be a number of seconds from 0 to 1,000,000,000 \(about 32 years\)"
    with pytest.raises(InputError, match=rf"demands\[cpu\]\[reads\] {seconds}, got 1e\+308"):
        build_network({"cpu": {"reads": 1e308}})


@pytest.mark.parametrize("name, shown", [("null", "None"), ("~", "None"), ("1", "1"), ("2.5", "2.5"),
                                         ("true", "True")])   # '' is text: "a name is empty" (hostile7)
def test_a_class_name_that_is_not_text_is_refused_naming_the_key(tmp_path, name, shown):
    text = f"classes:\n  {name}: {{population: 2}}\nstations:\n  cpu: {{demands: {{{name}: 0.01}}}}\n"
    err = refused(model(tmp_path, text=text))
    assert f"a name must be text, got {shown}" in err and "classes" in err


@pytest.mark.parametrize("name, shown", [("null", "None"), ("7", "7")])
def test_a_station_name_that_is_not_text_is_refused(tmp_path, name, shown):
    text = f"classes:\n  reads: {{population: 2}}\nstations:\n  {name}: {{demands: {{reads: 0.01}}}}\n"
    err = refused(model(tmp_path, text=text))
    assert f"stations.{shown}: a name must be text, got {shown}" in err


def test_a_quoted_name_is_text_and_solves(tmp_path):
    text = "classes:\n  'null': {population: 2}\nstations:\n  '1': {demands: {'null': 0.01}}\n"
    result = run("mva", model(tmp_path, text=text), "--json")
    assert result.returncode == 0 and '"null"' in result.stdout


def test_a_huge_number_yaml_reads_as_text_is_told_its_range_not_how_to_write_it(tmp_path):
    err = refused(model(tmp_path, demand="1e30"))
    assert f"stations.cpu.demands.reads: must be {SECONDS}, got the text '1e30'\n" in err


@pytest.mark.parametrize("think", [1e308, 2e9])
def test_a_think_time_past_the_range_gets_the_same_words_from_python_as_from_the_file(tmp_path, think):
    from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva
    from capmodel.models.queueing.open_networks import mixed_network

    from_file = refused(model(tmp_path, think=repr(think).replace("e+", ".0e+")))
    wanted = f"must be {SECONDS}, got {int(think) if think < 1e16 else think!r}"   # a whole figure without '.0'
    assert f"classes.reads.think_time: {wanted}\n" in from_file
    demands = {"cpu": {"reads": 0.01}}
    for solve in (lambda: multiclass_mva(demands, {"reads": 4}, {"reads": think}),
                  lambda: approximate_multiclass_mva(demands, {"reads": 4}, {"reads": think}),
                  lambda: mixed_network({"cpu": {"reads": 0.01, "bursts": 0.001}}, {"reads": 4}, {"bursts": 2.0},
                                        {"reads": think})):
        with pytest.raises(InputError) as refusal:
            solve()
        assert str(refusal.value) == f"think_times[reads] {wanted}"
    # at the bound itself both read it (a slow but finite system)
    assert multiclass_mva(demands, {"reads": 4}, {"reads": 1e9}).throughput["reads"] == pytest.approx(4 / (1e9 + 0.01))
