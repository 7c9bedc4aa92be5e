"""``capmodel mva`` model files bounded before any work: servers, classes, stations, populations, demands and think
times past their ranges, the exact solver's memory, names that are not text, numbers that are not numbers, and
duplicated or colliding keys in model and workload files. Each case ends with exit 2 and one line naming the file,
the key and the range (in Python, an InputError with the same words)."""
from __future__ import annotations

import json

import pytest

from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.errors import InputError
from capmodel.models.queueing.multiclass import approximate_multiclass_mva, exact_cells, multiclass_mva
from capmodel.models.queueing.network import MAX_CLASSES, build_network
from tests.support.cli_run import run


def write(tmp_path, text, name="model.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def fails(capsys, path):
    assert main(["mva", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


SECONDS_WANTED = "must be a number of seconds from 0 to 1,000,000,000 (about 32 years)"
ONE = "classes: {a: {population: %s}}\nstations: {cpu: {servers: %s, demands: {a: %s}}}\n"


@pytest.mark.parametrize("population, servers, demand, expected", [
    ("2", "1000000000000", "0.1", "servers[cpu] = 1,000,000,000,000 is more than 1,000,000"),
    ("20000", "20000", "0.1", "exact multi-class MVA would keep 800,160,006 numbers (6.0 GiB"),
    ("100000000000000000000", "1", "0.1", "populations[a] = 100000000000000000000 customers is more than"),
    ("2", "1", "'0.1'", f"stations.cpu.demands.a: {SECONDS_WANTED}, got the text '0.1'"),
    ("2", "1", "true", f"stations.cpu.demands.a: {SECONDS_WANTED}, got True"),
])
def test_one_line_before_any_work(tmp_path, capsys, population, servers, demand, expected):
    err = fails(capsys, write(tmp_path, ONE % (population, servers, demand)))
    assert "model.yaml" in err and expected in err, err


def test_two_thousand_classes_are_refused_by_every_solver(tmp_path, capsys):
    classes = "\n".join(f"  c{i}: {{population: 1}}" for i in range(2000))
    demands = ", ".join(f"c{i}: 0.1" for i in range(2000))
    path = write(tmp_path, f"classes:\n{classes}\nstations:\n  cpu: {{demands: {{{demands}}}}}\n")
    for solver in ("exact", "linearizer", "schweitzer"):
        assert main(["mva", path, "--solver", solver]) == 2
        assert f"2,000 classes; at most {MAX_CLASSES} are solved" in capsys.readouterr().err


def test_the_python_api_refuses_the_same_with_input_errors():
    seconds = r"must be a number of seconds from 0 to 1,000,000,000 \(about 32 years\)"
    with pytest.raises(InputError, match=rf"demands\[cpu\]\[a\] {seconds}, got '0.1'"):
        multiclass_mva({"cpu": {"a": "0.1"}}, {"a": 2})
    with pytest.raises(InputError, match=rf"think_times\[a\] {seconds}, got True"):
        multiclass_mva({"cpu": {"a": 0.1}}, {"a": 2}, {"a": True})
    with pytest.raises(InputError, match="customers is more than"):
        multiclass_mva({"cpu": {"a": 0.1}}, {"a": 10**20})
    with pytest.raises(InputError, match="about 10\\^"):  # 90 classes of 9,999 customers: 10^360 vectors, no overflow
        multiclass_mva({"cpu": {f"c{i}": 0.1 for i in range(90)}}, {f"c{i}": 9999 for i in range(90)})
    with pytest.raises(InputError, match="linearizer over 100 stations and 100 classes"):
        approximate_multiclass_mva({f"s{k}": {f"c{i}": 0.1 for i in range(100)} for k in range(100)},
                                   {f"c{i}": 2 for i in range(100)})


def test_servers_beyond_the_population_cost_no_more_than_the_population():
    # 10^5 servers and 3 customers: nobody ever waits (R = D) and the marginals are only N + 1 wide
    net = build_network({"cpu": {"a": 0.1}}, {"cpu": 100_000})
    import numpy as np

    assert exact_cells(net, np.array([3])) == 4 * (1 + 1 + 4) * 2
    result = multiclass_mva({"cpu": {"a": 0.1}}, {"a": 3}, servers={"cpu": 100_000})
    assert result.response_time["a"] == pytest.approx(0.1)


@pytest.mark.parametrize("text, expected", [
    ("classes:\n  a: {population: 2}\n  a: {population: 3}\nstations: {cpu: {demands: {a: 1}}}\n",
     "key 'a' appears twice in one mapping (lines 2 and 3)"),
    ("classes:\n  1: {population: 2}\n  '1': {population: 3}\nstations: {cpu: {demands: {1: 1}}}\n",
     "keys '1' collide (a number and a string, the same name once read) in one mapping (lines 2 and 3)"),
    ("classes: {a: {population: 2}}\nstations:\n  cpu: {demands: {a: 1}, demands: {a: 2}}\n",
     "key 'demands' appears twice"),
])
def test_duplicated_and_colliding_keys_are_errors(tmp_path, capsys, text, expected):
    assert expected in fails(capsys, write(tmp_path, text))


def test_duplicated_keys_in_a_json_model(tmp_path, capsys):
    path = write(tmp_path, '{"classes": {"a": {"population": 2}, "a": {"population": 1}}, '
                           '"stations": {"cpu": {"demands": {"a": 1}}}}', "model.json")
    assert "model.json" in (err := fails(capsys, path)) and "key 'a' appears twice in one object" in err


def test_a_workload_file_with_a_duplicated_key_is_refused(tmp_path):
    path = write(tmp_path, "name: dup\nrecords: 10\nrecords: 20\noperations:\n  - {kind: read, weight: 1}\n",
                 "workload.yaml")
    with pytest.raises(InputError, match="workload.yaml.*key 'records' appears twice"):
        load_workload(path)


def test_single_class_mva_is_bounded_and_never_nan():
    from capmodel.errors import CapmodelError
    from capmodel.models.queueing.mva import approximate_mva, exact_mva

    for solve in (exact_mva, approximate_mva):
        with pytest.raises(InputError, match="asks for every N from 1 to it"):
            solve({"cpu": 0.1}, populations=10**20)
        with pytest.raises(InputError, match="customers is more than 1,000,000,000"):
            solve({"cpu": 0.1}, populations=[10**20])
    with pytest.raises(InputError, match="use approximate_mva"):
        exact_mva({"cpu": 0.1}, servers={"cpu": 4}, populations=[10**7])
    with pytest.raises(CapmodelError, match="no finite solution"):  # a subnormal demand: X = N / 1e-320 overflows
        exact_mva({"cpu": 1e-320}, populations=[5])


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
                                         ("true", "True")])   # '' is text: "a name is empty"
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
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert [c["class"] for c in answer["classes"]] == ["null"] and [s["station"] for s in answer["stations"]] == ["1"]


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
