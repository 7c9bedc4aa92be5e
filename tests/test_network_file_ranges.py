"""Hostile numbers and names in ``capmodel mva MODEL.yaml``: refused at reading, naming the key and the range."""
from __future__ import annotations

import pytest

from capmodel.errors import InputError
from capmodel.models.mva_network import build_network
from tests.cli_run import run

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


@pytest.mark.parametrize("field, value, key, bound", [
    ("demand", "1.0e+308", "stations.cpu.demands.reads", "1,000,000,000 s"),
    ("demand", "1.0e+10", "stations.cpu.demands.reads", "1,000,000,000 s"),
    ("think", "1.0e+308", "classes.reads.think_time", "1,000,000,000 s"),
    ("think", "2000000000", "classes.reads.think_time", "1,000,000,000 s"),
    ("rate", "1.0e+300", "classes.bursts.arrival_rate", "1,000,000,000 per second"),
])
def test_a_number_past_its_range_names_the_key_and_the_range(tmp_path, field, value, key, bound):
    err = refused(model(tmp_path, **{field: value}))
    assert f"{key}: must be at most {bound}" in err and "no finite solution" not in err


def test_the_largest_allowed_demand_is_read(tmp_path):
    # at the bound itself the file is read (the answer is then a slow but finite system)
    assert "must be at most" not in run("mva", model(tmp_path, demand="1.0e+9")).stderr


def test_the_python_api_bounds_demands_too():
    seconds = r"must be a number of seconds from 0 to 1,000,000,000 \(about 32 years\)"
    with pytest.raises(InputError, match=rf"demands\[cpu\]\[reads\] {seconds}, got 1e\+308"):
        build_network({"cpu": {"reads": 1e308}})


@pytest.mark.parametrize("name, shown", [("null", "None"), ("~", "None"), ("1", "1"), ("2.5", "2.5"),
                                         ("true", "True"), ('""', "''")])
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
    assert "stations.cpu.demands.reads: must be at most 1,000,000,000 s, got the text '1e30'" in err
