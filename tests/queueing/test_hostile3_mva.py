"""``capmodel mva MODEL.yaml`` fed as a careless or hostile user would (issue 20's neighbours, round three).

Expected figures are computed here by hand from closed forms: a single queue of demand D with N customers and no
think time runs at X = 1/D (it is always busy) with R = N D; a delay of demand D adds D to R; a mixed network's
closed class sees D / (1 - U_open) at a queue (Lazowska et al., "Quantitative System Performance", 1984, sec. 7.4).
"""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main
from capmodel.formatting import number


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
        assert "a: 10 ops/s at 300 ms" in out
        return
    assert status == 2 and out == ""
    assert "stations.cpu.delay: must be true or false" in err and err.count("\n") == 1


def test_text_tables_show_a_dash_not_nan_where_a_figure_does_not_apply(tmp_path, capsys):
    # a delay has no utilization; in a mixed network an open class has no population and a closed one no arrival rate
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {arrival_rate: 5}, b: {population: 4}}\n"
                            "stations: {cpu: {demands: {a: 0.1, b: 0.1}}, net: {delay: true, demands: {b: 0.05}}}\n")
    assert status == 0, err
    assert "NaN" not in out and "nan" not in out.lower().replace("mixed", "")
    station_rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("cpu ", "net "))}
    assert station_rows["net"][1:3] == ["delay", "—"]     # the formatting layer's dash, explained under the table
    # the closed class at the queue: D' = 0.1 / (1 - 0.5) = 0.2 per visit, N = 4, no think time, plus the 0.05 delay:
    # single-class MVA by hand
    q, d, delay = 0.0, 0.2, 0.05
    for n in range(1, 5):
        r_cpu = d * (1 + q)
        x = n / (r_cpu + delay)
        q = x * r_cpu
    assert f"b: {number(x, 4)} ops/s at {number((r_cpu + delay) * 1000)} ms" in out


def test_a_network_with_no_load_names_no_bottleneck(tmp_path, capsys):
    status, out, err = _mva(tmp_path, capsys, "classes: {a: {population: 3, think_time: 1}}\n"
                            "stations: {cpu: {demands: {a: 0}}, disk: {demands: {a: 0}}}\n")
    assert status == 0, err
    assert "No station carries load, so none is the bottleneck." in out and "Bottleneck" not in out
    assert "a: 3 ops/s at 0 ms" in out  # X = N / Z when no station takes time


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
