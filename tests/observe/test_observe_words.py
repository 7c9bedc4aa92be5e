"""What ``observe`` prints and its capacity says in words, checked as wording: the observation's summary lines with
thousands separators and no exponents, the sampling line's figures, the capacity sentence's figures (without an
interval of no width, with the interval that allows for the CPU per operation to change, "at least" for a lower
bound), figures withheld when the verdict forbids them, a load over its target, a shrinking load, the CPU-law
line's label, replication's share said from a tenth up, the query shapes' what-if, counts in agreeing nouns ("1
interval"), many unranked members and sets summed up, and the sentence that names the member closest to its
capacity. The values behind them are checked on
the JSON and the result objects in the other files of this folder (the production answer's words:
test_production_answer_words.py)."""
from __future__ import annotations

import json
import math
import re

from capmodel.cli import main
from capmodel.observe.capacity import LAWS, server_capacity
from tests.observe.test_client_operations import _secondary
from tests.observe.test_sampling_options import DEAD


def test_observation_summary_formats_busy_servers_for_people():
    # a server at ~28,000 ops/s: ":.4g" printed "2.806e+04 ops/s"; counts get thousands separators
    import pandas as pd

    from capmodel.observe.observation import Observation

    n = 7200
    times = pd.date_range("2026-11-02T00:00:01Z", periods=n, freq="s")
    throughput = [28_058.0 + (i % 7) for i in range(n)]
    samples = pd.DataFrame({"time": times, "dropped": [""] * n})
    curve = pd.DataFrame({"time": times, "throughput": throughput, "concurrency": [6.19] * n})
    text = Observation(samples, curve, "FTDC somewhere").summary()
    median = pd.Series(throughput).median()
    assert "intervals: 7,200 ending 2026-11-02T00:00:01Z to 2026-11-02T02:00:00Z" in text
    assert "curve points: 7,200" in text
    assert f"throughput: {median:,.0f} ops/s median, {max(throughput):,.0f} ops/s max" in text
    assert "e+" not in text and "6.19 median, 6.19 max" in text


def test_the_sampling_line_reads_its_figures(tmp_path, capsys):
    assert main(["observe", "--uri", DEAD, "--out", str(tmp_path / "o"), "--interval", "0.25", "--duration",
                 "1.5"]) == 2
    assert "every 0.25 s for 1.5 s" in capsys.readouterr().err


def test_a_capacity_whose_intervals_have_no_width_states_the_figures_alone():
    # generated FTDC fits its CPU per operation exactly: every interval collapses onto its figure, and the sentence
    # gives the figures without "(95% interval 0.5–0.5 ms)" or "(3,100–3,100 ops/s)" (formatting.shows_width)
    from capmodel.models.estimate import Estimate
    from capmodel.models.evidence import Evidence
    from capmodel.observe.capacity import ServerCapacity

    cap = ServerCapacity(method=LAWS, why="test", cores=2.0, cores_source="given",
                         service_demand_ms=Estimate(0.5, 0.5, 0.5), background_cores=0.0,
                         observed_peak_throughput=1000.0, utilization_target=0.8, monthly_growth=0.05, level=0.95,
                         evidence=Evidence.of(), busy_intervals=40)
    text = cap.describe(with_method=False)
    months = math.log(3200 / 1000) / math.log(1.05)                  # planned 0.8 * 2 cores / 0.5 ms = 3,200 ops/s
    # the figures as the capacity table's rows show them (three significant digits, zeros kept: 0.500, 68.8)
    assert ("Each operation costs the server **0.500 ms of CPU**. With 2 cores (as given), the bottleneck law puts "
            "saturation at **4,000 ops/s**. At 80% utilization the server carries **3,200 ops/s**;") in text
    assert f"so **{100 * (1 - 1000 / 3200):.1f}%** of the planned throughput is spare." in text
    assert "% interval" not in text and "to " not in text
    assert f"reached in **{months:.1f} months**." in text


def test_the_printed_capacity_gives_the_saturation_figure(tmp_path, capsys):
    from capmodel.observe import bundled_sample, observe_ftdc

    folder = bundled_sample()["path"]
    expected = server_capacity(observe_ftdc(folder).samples, cores=1)
    assert main(["observe", "--ftdc", str(folder), "--out", str(tmp_path), "--cores", "1", "--growth", "0.05"]) == 0
    text = capsys.readouterr().out
    assert f"{expected.saturation_throughput.estimate:,.0f} ops/s" in text and "Evidence: " in text
    assert "**" not in text


def test_a_secondary_whose_load_is_replication_says_so_once():
    said = server_capacity(_secondary(95.0), n_bootstrap=50).describe()
    assert "Replication made" not in said                            # said once, as the reason


# --- several members ---------------------------------------------------------------------------------------------

def test_members_of_two_replica_sets_are_not_said_to_limit_one_set(tmp_path, capsys):
    from capmodel.observe import synthetic
    from tests.observe.test_several_ftdc_folders import _server

    folders = [synthetic.write_server(_server(host, rs, demand, seed), tmp_path / key / "diagnostic.data")
               for key, host, rs, demand, seed in (("a", "a1:27017", "rsA", 0.2, 1), ("c", "c1:27017", "rsC", 0.3, 3))]
    assert main(["observe", "--ftdc", *map(str, folders), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "limits the set" not in out and "is the closest to its capacity of these 2 replica sets' servers" in out


def test_a_member_with_one_interval_is_counted_in_words(tmp_path, capsys):
    from tests.observe.test_ftdc_members import START, _server

    a = _server(tmp_path, "a", host="a:27017", replica_set="rsA", seed=1, mean_rate=1500.0)
    one = _server(tmp_path, "one", host="one:27017", replica_set="rsA", seed=7, hours=1 / 3600, start=START)
    assert main(["observe", "--ftdc", a, one, "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "  one:27017: 1 interval; no capacity" in out and "1 intervals" not in out


# --- the capacity's sentences ----------------------------------------------------------------------------------------

def test_the_capacity_sentence_gives_its_figures_and_method():
    import numpy as np

    from tests.observe.test_capacity import samples

    cap = server_capacity(samples(np.linspace(100, 900, 60)), cores=2, utilization_target=0.8, monthly_growth=0.05)
    text = cap.describe()
    for figure in (f"{cap.saturation_throughput.estimate:,.0f} ops/s", f"{cap.planned_throughput.estimate:,.0f} ops/s",
                   f"{cap.runway_months.estimate:.1f} months", "operational laws"):
        assert figure in text
    assert not any(word in text for word in ("nan", "None", "inf"))


def test_a_load_over_the_target_is_said_and_an_unusable_capacity_states_no_firm_figure():
    import numpy as np

    from tests.observe.test_capacity import samples

    x = np.linspace(1000, 3000, 40)            # needs 0.55 to 1.55 cores
    assert "above** the planned throughput" in server_capacity(samples(x), cores=2, utilization_target=0.7).describe()
    one = server_capacity(samples(x), cores=1, monthly_growth=0.05)
    text = one.describe()
    for firm in ("saturation at", "carries", "spare", "target is", "months", "already"):
        assert firm not in text, firm
    assert text.endswith(f"Method: {LAWS} ({one.why}).")


def test_the_cpu_law_line_of_a_wrong_core_count_is_named_as_not_carried_to_saturation():
    import numpy as np

    from capmodel.observe.capacity import busy_table
    from capmodel.plots.capacity import cpu_law_figure
    from tests.observe.test_capacity import samples

    table = samples(np.linspace(1000, 3000, 40))
    figure = cpu_law_figure(busy_table(table), server_capacity(table, cores=1))
    line = next(t for t in figure.data if t.mode == "lines")
    assert "not carried to saturation" in line.name


def test_a_shrinking_load_is_not_called_no_growth():
    import numpy as np

    from tests.observe.test_capacity import samples

    x = np.linspace(500, 1500, 40)
    shrinking = server_capacity(samples(x), cores=2, monthly_growth=-0.05).describe()
    assert "At -5% growth a month (a shrinking load) it never reaches it." in shrinking
    assert "Without growth" not in shrinking
    assert "Without growth the load never reaches it." in server_capacity(samples(x), cores=2,
                                                                          monthly_growth=0.0).describe()


def test_replications_share_is_said_from_a_tenth_up():
    import numpy as np

    from tests.observe.test_client_operations import (
        CLIENT_COMMANDS,
        CLIENT_READS,
        R_COMMAND,
        WRITES,
        N,
        _samples,
    )

    clients = CLIENT_READS + WRITES + CLIENT_COMMANDS
    said = server_capacity(_samples(), n_bootstrap=50).describe()
    assert f"Replication made {120 / (clients.mean() + 120):.0%} of the operations" in said
    assert f"120 ops/s beside the clients' {clients.mean():.0f}," in said
    none = _samples().drop(columns=["oplog_getmores_per_s", "repl_update_position_per_s", "repl_applied_per_s"])
    assert "Replication made" not in server_capacity(none, n_bootstrap=50).describe()
    few = _samples()
    few["oplog_getmores_per_s"], few["repl_update_position_per_s"] = 5.0, 0.0
    few["reads_per_s"], few["commands_per_s"] = CLIENT_READS + 5.0, CLIENT_COMMANDS
    few["commands_latency_ms"] = R_COMMAND * 1000
    assert "Replication made" not in server_capacity(few, n_bootstrap=50).describe()        # under a tenth
    secondary = _secondary(95.0)
    secondary["reads_per_s"] = np.linspace(100.0, 400.0, N)             # reads sent to this secondary
    secondary["reads_latency_ms"] = 1.0
    secondary["cpu_cores"] += 0.0005 * secondary["reads_per_s"]
    assert "Replication made" in server_capacity(secondary, n_bootstrap=50).describe()


def test_a_capacity_from_light_load_reads_as_one_interval_and_an_even_load_as_at_least(tmp_path):
    from capmodel.plan.production import production_answer
    from tests.observe.test_calibration import SyntheticServer, _read

    UNREADABLE = re.compile(r"\b(nan|NaN|None|inf)\b")

    # the lab's case (test_calibration.py): the interval allows for the CPU per operation to change up to saturation
    lab = SyntheticServer("lab:27017", cores=1, cpu_ms_per_op=1.96, mean_rate=0.25 * 505.0, daily_amplitude=0.4,
                          hours=0.5, cycle_hours=0.25, period_s=1.0, light_extra=0.5, background_cores=0.01,
                          cpu_noise=0.03, cpu_noise_memory=0.5, seed=26, filler_metrics=5)
    cap = server_capacity(_read(lab, tmp_path / "lab").samples)
    sat, text = cap.saturation_throughput, cap.describe()
    assert f"({sat.low:,.0f}–{sat.high:,.0f} ops/s, allowing for the CPU per operation to change up to saturation)" \
        in text
    assert not UNREADABLE.search(text)
    # an even load: only the lower bound, said as "at least"
    flat = SyntheticServer("flat:27017", cores=4, cpu_ms_per_op=0.5, mean_rate=3000.0, daily_amplitude=0.0,
                           hours=1.0, period_s=10.0, background_cores=0.4, cpu_noise=0.05, seed=5, filler_metrics=5)
    observation = _read(flat, tmp_path / "flat")
    answer = production_answer(observation.samples, observation.curve)
    text = answer.describe()
    assert f"**at least {answer.at_least:,.0f} ops/s**" in text and not UNREADABLE.search(text)


def test_the_shapes_what_if_names_the_shape_that_breaks_it_and_a_load_that_does_not_fit(tmp_path):
    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.what_if import shapes_what_if
    from tests.observe.test_shape_demands import CORES, _ids, _lab

    path, samples, _ = _lab(tmp_path)
    shapes = query_shapes(path, interval_s=1)
    ids = _ids(shapes)
    tripled = shapes_what_if(shapes, samples, CORES, {ids["range"]: 3}, n_bootstrap=0)
    assert "breaks it: " + ids["range"] in tripled.describe()
    assert "it does not fit;" in shapes_what_if(shapes, samples, CORES, {ids["range"]: 100}, n_bootstrap=0).describe()


def test_an_idle_server_is_said_to_support_no_capacity(tmp_path, capsys):
    from pathlib import Path

    idle_ftdc = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_idle"     # a real mongod idle for 8 s, FTDC on
    assert main(["observe", "--ftdc", str(idle_ftdc), "--out", str(tmp_path)]) == 0
    verdict = capsys.readouterr().out.split("Evidence")[1]
    assert verdict.startswith(": unusable (the data cannot support the figure") and "ops/s" not in verdict
    assert "Why: no capacity can be stated: only 1 busy interval(s)" in verdict


def test_many_unranked_members_and_sets_are_summed_up_not_listed_one_by_one(tmp_path, capsys):
    # 12 one-interval servers of 12 replica sets beside a busy member of rsA: one reason per member (29 idle members:
    # 29 copies of one sentence on one line) and every set's name sorted rs1, rs10, rs11, rs2 read as a wall of text
    from tests.observe.test_ftdc_members import _server

    parent = tmp_path / "estate"
    for i in range(12):
        _server(parent, f"m{i:02d}", host=f"m{i}:27017", replica_set=f"rs{i}", seed=20 + i, hours=1 / 3600)
    _server(parent, "a", host="a:27017", replica_set="rsA", seed=1, mean_rate=1500.0)
    assert main(["observe", "--ftdc", str(parent), "--out", str(tmp_path / "o"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["notes"][0] == ("the folders belong to 13 replica sets (rs0, rs1, rs2, rs3, rs4, rs5, rs6, rs7, "
                                  "rs8, rs9 and 3 more)")
    answer = result["answer"]
    assert answer.count("only 1 busy interval") == 1
    assert "m0:27017, m1:27017, m2:27017, m3:27017, m4:27017 and 7 more: samples: only 1 busy interval" in answer
