"""``capmodel mva MODEL.yaml`` end to end through capmodel.cli.main: a published example in, per-class figures out, as
text and as JSON; model files written as a careless user writes them (delay flags, numbers YAML reads as text,
classes with no customers, networks past the exact solver) end with exit 2 and one line naming the file and the key,
or with the answer the closed forms give.

Figures computed here by hand from closed forms: a single queue of demand D with N customers and no think time runs
at X = 1/D (it is always busy) with R = N D (Little's law); a delay of demand D adds D to R; a mixed network's closed
class sees D / (1 - U_open) at a queue (Lazowska et al., "Quantitative System Performance", 1984, sec. 7.4)."""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main

# Lazowska et al., "Quantitative System Performance" (1984), ch. 7, p. 131 (see tests/queueing/test_mva_multiclass.py):
# exact queue lengths CPU 9.717 / 0.8496, disk 0.2827 / 2.0900 (batch / interactive)
LAZOWSKA = """
classes:
  batch: {population: 10}
  interactive: {population: 25, think_time: 30}
stations:
  cpu: {demands: {batch: 1.0, interactive: 0.1}}
  disk: {demands: {batch: 0.09, interactive: 0.9}}
"""


def write(tmp_path, text, name="model.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_json(capsys, *argv):
    assert main(["mva", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def fails(capsys, *argv):
    assert main(["mva", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def test_yaml_model_reproduces_the_lazowska_example(tmp_path, capsys):
    out = run_json(capsys, write(tmp_path, LAZOWSKA))
    assert out["solver"] == "exact" and out["bottleneck"] == "cpu"
    stations = {s["station"]: s for s in out["stations"]}
    assert stations["cpu"]["queue_length"] == pytest.approx({"batch": 9.717, "interactive": 0.8496}, abs=6e-4)
    assert stations["disk"]["queue_length"] == pytest.approx({"batch": 0.2827, "interactive": 2.0900}, abs=6e-4)
    rows = {r["class"]: r for r in out["classes"]}
    # Little's law per class: N = X (R + Z)
    assert rows["interactive"]["throughput"] * (rows["interactive"]["response_time"] + 30) == pytest.approx(25)
    assert rows["batch"]["response_time"] == pytest.approx(sum(rows["batch"]["residence"].values()))


def test_a_json_model_file_solves_as_text_and_as_json(tmp_path, capsys):
    network = {"classes": {"a": {"population": 3}}, "stations": {"cpu": {"demands": {"a": 1}}}}
    path = write(tmp_path, json.dumps(network), "model.json")
    assert main(["mva", path]) == 0
    capsys.readouterr()
    out = run_json(capsys, path)
    assert out["solver"] == "exact" and out["bottleneck"] == "cpu"
    # one class alone at one queue: X = 1 / D whatever N, R = N D
    assert out["classes"][0]["throughput"] == pytest.approx(1.0)
    assert out["classes"][0]["response_time"] == pytest.approx(3.0)


def test_approximate_solver_open_and_mixed_models(tmp_path, capsys):
    out = run_json(capsys, write(tmp_path, LAZOWSKA), "--solver", "schweitzer")
    assert out["method"] == "Bard-Schweitzer approximate MVA"
    open_model = ("classes:\n  r: {arrival_rate: 60}\nstations:\n  db: {demands: {r: 0.01}}\n"
                  "  net: {delay: true, demands: {r: 0.002}}\n")
    out = run_json(capsys, write(tmp_path, open_model))
    # M/M/1: R = D / (1 - U) = 0.01 / 0.4, plus the delay
    assert out["classes"][0]["response_time"] == pytest.approx(0.01 / 0.4 + 0.002)
    assert out["stations"][1]["utilization"] is None                  # a delay has no utilization
    # the open load can grow by 1 / U of the busiest queue before it saturates: db at U = 60 x 0.01
    assert out["bottleneck"] == "db" and out["stations"][0]["utilization"] == pytest.approx(0.6)
    mixed = LAZOWSKA.replace("classes:\n", "classes:\n  reports: {arrival_rate: 0.05}\n").replace(
        "disk: {demands: {batch: 0.09,", "disk: {demands: {reports: 2.0, batch: 0.09,")
    out = run_json(capsys, write(tmp_path, mixed))
    assert out["method"].startswith("mixed network")
    assert {r["class"] for r in out["classes"]} == {"batch", "interactive", "reports"}


@pytest.mark.parametrize("text, expected", [
    ("classes: {a: {population: 2}}\n", "model.yaml: stations: missing or empty"),
    ("classes: {a: {population: 2.5}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: classes.a.population: must be a whole number"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {b: 1}}}\n",
     "model.yaml: stations.cpu.demands.b: no such class"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {a: -1}}}\n",
     "model.yaml: stations.cpu.demands.a: must be a number of seconds from 0 to 1,000,000,000 (about 32 years), "
     "got -1"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {servers: 0, demands: {a: 1}}}\n",
     "model.yaml: stations.cpu.servers: must be a whole number >= 1, got 0"),
    ("classes: {a: {population: 2, arrival_rate: 1}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: classes.a: give either population"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {a: 1}}}\nsolver: magic\n",
     "model.yaml: solver: must be one of exact, linearizer, schweitzer"),
    ("classes: {a: {arrival_rate: 2}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: the arrival rates load station cpu to utilization 2 >= 1"),
    ("classes: [a\n", "model.yaml: (file): not valid YAML at line"),
])
def test_bad_model_files_name_the_file_and_key(tmp_path, capsys, text, expected):
    err = fails(capsys, write(tmp_path, text))
    assert expected in err


def test_missing_file_is_one_line(tmp_path, capsys):
    err = fails(capsys, str(tmp_path / "nope.yaml"))
    assert "nope.yaml" in err


def _mva(tmp_path, capsys, text, *options):
    model = tmp_path / "model.yaml"
    model.write_text(text)
    status = main(["mva", str(model), *options])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("word", ['"false"', '"no"', "no", "off", "0.0", "yes please", "[true]"])
def test_a_delay_flag_that_is_not_true_or_false_is_refused(tmp_path, capsys, word):
    # before: the text "false" (or "no", any non-empty text) made the station a delay, silently
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3}}\n"
                            f"stations: {{cpu: {{delay: {word}, demands: {{a: 0.1}}}}}}\n")
    if word in ("no", "off"):  # YAML 1.1 reads these unquoted words as the boolean false: a queue, X = 1 / D
        assert status == 0, err
        status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3}}\n"
                                f"stations: {{cpu: {{delay: {word}, demands: {{a: 0.1}}}}}}\n", "--json")
        (a,) = json.loads(out)["classes"]
        assert a["throughput"] == pytest.approx(10) and a["response_time"] == pytest.approx(0.3)   # 1 / D, N D
        return
    assert status == 2 and out == ""
    assert "stations.cpu.delay: must be true or false" in err and err.count("\n") == 1


MIXED_WITH_DELAY = ("classes: {a: {arrival_rate: 5}, b: {population: 4}}\n"
                    "stations: {cpu: {demands: {a: 0.1, b: 0.1}}, net: {delay: true, demands: {b: 0.05}}}\n")


def test_a_mixed_networks_closed_class_sees_the_queue_the_open_class_leaves_it(tmp_path, capsys):
    # the closed class at the queue: D' = 0.1 / (1 - 0.5) = 0.2 per visit, N = 4, no think time, plus the 0.05 delay:
    # single-class MVA by hand
    q, d, delay = 0.0, 0.2, 0.05
    for n in range(1, 5):
        r_cpu = d * (1 + q)
        x = n / (r_cpu + delay)
        q = x * r_cpu
    status, out, err = _mva(tmp_path, capsys, MIXED_WITH_DELAY, "--json")
    assert status == 0, err
    answer = json.loads(out)
    b = {c["class"]: c for c in answer["classes"]}["b"]
    assert b["throughput"] == pytest.approx(x) and b["response_time"] == pytest.approx(r_cpu + delay)
    # a delay has no utilization; the open class has no population and the closed one no arrival rate
    net = {s["station"]: s for s in answer["stations"]}["net"]
    assert net["utilization"] is None
    a = {c["class"]: c for c in answer["classes"]}["a"]
    assert a["population"] is None and b["arrival_rate"] is None


def test_a_network_with_no_load_names_no_bottleneck(tmp_path, capsys):
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3, think_time: 1}}\n"
                            "stations: {cpu: {demands: {a: 0}}, disk: {demands: {a: 0}}}\n")
    assert status == 0, err
    _, out, _ = _mva(tmp_path, capsys, "classes: {a: {population: 3, think_time: 1}}\n"
                     "stations: {cpu: {demands: {a: 0}}, disk: {demands: {a: 0}}}\n", "--json")
    answer = json.loads(out)
    assert [station["utilization"] for station in answer["stations"]] == [0, 0]
    assert answer["bottleneck"] is None
    (a,) = answer["classes"]
    assert a["throughput"] == 3 and a["response_time"] == 0  # X = N / Z when no station takes time


@pytest.mark.parametrize("written, suggested", [("1e-7", "1.0e-07"), ("3e-4", "0.0003"), ("2.5e3", "2500.0"),
                                                ("'0.1'", "0.1")])
def test_a_number_yaml_reads_as_text_is_refused_with_how_to_write_it(tmp_path, capsys, written, suggested):
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3}}\n"
                            f"stations: {{cpu: {{demands: {{a: {written}}}}}}}\n")
    assert status == 2 and out == ""
    assert "stations.cpu.demands.a: must be a number of seconds from 0 to 1,000,000,000 (about 32 years), got the " \
           "text" in err
    assert f"write it unquoted as {suggested})" in err
    # and the suggestion is a number to YAML, giving the answer of a single queue: X = 1 / D
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3}}\n"
                            f"stations: {{cpu: {{demands: {{a: {suggested}}}}}}}\n", "--json")
    assert status == 0, err
    assert json.loads(out)["classes"][0]["throughput"] == pytest.approx(1 / float(suggested), rel=1e-12)


@pytest.mark.parametrize("written", ["inf", "'nan'", ".nan", "-.inf", ".inf"])
def test_infinite_or_nan_demands_get_no_how_to_write_hint(tmp_path, capsys, written):
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3}}\n"
                            f"stations: {{cpu: {{demands: {{a: {written}}}}}}}\n")
    assert status == 2 and out == "" and "write it unquoted" not in err and err.count("\n") == 1


NETWORK = {"cpu": {"a": 0.05, "b": 0.1, "c": 0.02}, "disk": {"a": 0.2, "b": 0.03, "c": 0.08},
           "pool": {"a": 0.3, "b": 0.1, "c": 0.2}, "net": {"a": 0.01, "b": 0.02, "c": 0.04}}


SINGLE = {"cpu": 1, "disk": 1, "pool": 1, "net": "delay"}
MULTI = {"cpu": 2, "disk": 1, "pool": 3, "net": "delay"}  # the approximate solvers are not exact here (Seidmann)


@pytest.mark.parametrize("servers, solver", [(SINGLE, "exact"), (MULTI, "exact"), (SINGLE, "linearizer"),
                                             (SINGLE, "schweitzer")])
def test_a_class_with_no_customers_gets_the_response_time_one_arriving_customer_would_see(servers, solver):
    # the arrival theorem: a class-a customer arriving into the network of population N sees it as at N, so its
    # residence equals class a's in the network of population N + e_a (one class-a customer), which the exact
    # recursion computes through its ordinary path. Before: the exact solver gave D alone (as if the network were
    # empty), and 0 everywhere when every class was empty, while the approximate solvers gave D (1 + Q(N)).
    from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva

    think = {"a": 0.0, "b": 0.5, "c": 1.0}

    def solve(populations):
        if solver == "exact":
            return multiclass_mva(NETWORK, populations, think, servers)
        return approximate_multiclass_mva(NETWORK, populations, think, servers, method=solver)

    absent = solve({"a": 0, "b": 3, "c": 2})
    one = multiclass_mva(NETWORK, {"a": 1, "b": 3, "c": 2}, think, servers)
    tolerance = 1e-12 if solver == "exact" else 0.05
    for station in NETWORK:
        assert absent.residence_time.loc[station, "a"] == pytest.approx(one.residence_time.loc[station, "a"],
                                                                         rel=tolerance)
    assert absent.throughput["a"] == 0.0
    # and with nobody at all, a lone customer's residence: D at a queue and a delay, D at a c-server station too
    empty = solve({"a": 0, "b": 0, "c": 0})
    for station in NETWORK:
        assert empty.residence_time.loc[station, "b"] == pytest.approx(NETWORK[station]["b"], rel=1e-12)


def test_observed_what_if_bounds_the_cores_before_any_work(tmp_path, capsys):
    # before: --cores 100000 ran for minutes (1,000 cores: 58 s), as the what-if's work grows with the cores
    import datetime as dt
    import time

    from capmodel.observe import synthetic

    server = synthetic.SyntheticServer(host="m1:27017", cores=4, hours=0.5, filler_metrics=5,
                                       start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
    folder = synthetic.write_server(server, tmp_path / "ftdc" / "diagnostic.data")
    assert main(["observe", "--ftdc", str(folder), "--out", str(tmp_path / "obs")]) == 0
    capsys.readouterr()
    for cores in ("100000", "1025", "-3"):
        started = time.monotonic()
        status = main(["mva", "--observed", str(tmp_path / "obs"), "--cores", cores])
        out, err = capsys.readouterr()
        assert time.monotonic() - started < 30
        assert status == 2 and out == ""
        assert f"--cores must be an integer from 1 to 1,024, got {cores}\n" in err


def _model(tmp_path, classes: dict, demand: float = 0.0003):
    lines = ["classes:"] + [f"  {c}: {{population: {n}}}" for c, n in classes.items()]
    demands = ", ".join(f"{c}: {demand}" for c in classes)
    lines += ["stations:", f"  cpu: {{demands: {{{demands}}}}}"]
    path = tmp_path / "model.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("classes", [{"reads": 100_000_000}, {c: 40 for c in "abcde"}])
def test_a_network_too_big_for_the_exact_solver_names_the_option_that_solves_it(tmp_path, capsys, classes):
    path = _model(tmp_path, classes)
    assert main(["mva", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(path) in err
    assert "--solver linearizer or --solver schweitzer" in err, err
    assert "approximate_multiclass_mva" not in err and "max_states" not in err.split("; ")[-1]


def test_a_hundred_million_customers_at_one_queue_solve_to_the_closed_forms(tmp_path, capsys):
    n, demand = 100_000_000, 0.0003
    path = _model(tmp_path, {"reads": n}, demand)
    x = 1 / demand
    response = n / x
    assert main(["mva", str(path), "--solver", "schweitzer", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    (reads,) = answer["classes"]
    assert reads["throughput"] == pytest.approx(x) and reads["response_time"] == pytest.approx(response)
    assert answer["stations"][0]["queue_length"]["reads"] == pytest.approx(n)   # every customer queues there
