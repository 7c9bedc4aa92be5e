"""The mix what-if (``capmodel mva --observed``, capmodel.models.mix) in words, checked as wording: the member that
saturates first named (only among members with a prediction), the wait for the cores and where it came from, a
class slowed by the mix, a load that does not fit and how much of it does in readable percentages, a rate below one
a second as it is, latency ranges near saturation as numbers, runs of the block bootstrap, the window spread, an
asked mix outside the fitted shares, a secondary's replication, and the plgm what-if's error. The figures are
checked on the result objects and the JSON in the other files of this folder."""
from __future__ import annotations

import re

import numpy as np
import pytest

from capmodel.cli import main
from capmodel.formatting import number, percent
from capmodel.models.mix.production import fit_server_demands, mix_what_if
from capmodel.models.mix.rates import scaled_rates
from tests.mix.test_production import _ar1, shares_samples, synthetic_samples, waiting_samples


def test_the_member_that_saturates_first_is_named_as_plain_text_on_a_terminal(tmp_path, capsys):
    for name, samples in (("primary", synthetic_samples()), ("secondary", synthetic_samples(seed=2, writes=False))):
        (tmp_path / name).mkdir()
        samples.to_csv(tmp_path / name / "samples.csv", index=False)
    assert main(["mva", "--observed", str(tmp_path / "primary"), "--observed", str(tmp_path / "secondary"), "--cores",
                 "1", "--scale", "reads=1.3,writes=2", "--bootstrap", "20"]) == 0
    text = capsys.readouterr().out
    # not markdown, the core count in the singular
    assert "Saturates first: primary." in text and "**" not in text and "1 core," in text and "core(s)" not in text


def test_saturates_first_names_only_a_member_with_a_prediction():
    answer = mix_what_if({"a": synthetic_samples(), "b": synthetic_samples(lean=(0.5, 2.0))}, cores=1,
                         scale={"reads": 1.3, "writes": 2}, n_bootstrap=0)
    assert "Saturates first: b." in answer.describe()
    both = {"reader": synthetic_samples(writes=False), "writer": synthetic_samples()}
    assert "Saturates first" not in mix_what_if(both, cores=1, rates={"reads": 100, "writes": 50},
                                                n_bootstrap=0).describe()
    three = mix_what_if({**both, "writer2": synthetic_samples(seed=5, lean=(1.0, 2.0))}, cores=1,
                        rates={"reads": 100, "writes": 50}, n_bootstrap=0)
    assert f"Saturates first: {three.limiting_member} (of the members with a prediction)." in three.describe()


def test_the_wait_for_the_cores_is_said_with_where_it_came_from():
    samples = waiting_samples()
    observed = fit_server_demands(samples, cores=1).wait_per_op
    rates = {"reads": 1500.0, "writes": 600.0, "commands": 20.0}
    for wait, w, said in ((None, observed, "as observed"), (0.004, 0.004, "as asked")):
        text = mix_what_if({"m": samples}, cores=1, rates=rates, n_bootstrap=0, wait_per_op=wait).describe()
        assert f"at {w * 1e6:,.0f} µs of the server's wait per operation ({said}" in text
    # without the wait column no wait is said, even when one is asked
    assert "wait" not in mix_what_if({"m": synthetic_samples()}, cores=1, rates={"reads": 100, "writes": 50},
                                     n_bootstrap=0, wait_per_op=0.001).describe()


def test_a_class_slowed_by_the_mix_is_said_with_its_figure():
    samples = synthetic_samples(n=40, seed=5)
    ops = samples[["reads_per_s", "writes_per_s", "commands_per_s"]].sum(axis=1)
    samples["reads_latency_ms"] += 40e-6 * samples["writes_per_s"] / ops * 1000     # 40 us from none to all writes
    text = mix_what_if({"m": samples}, cores=1, rates={"reads": 600.0, "writes": 1200.0, "commands": 0.0},
                       n_bootstrap=0).describe()
    assert "m: reads take longer as the share of writes grows (+0.04 ms from none to all)." in text


def test_a_load_that_does_not_fit_says_how_much_does():
    result = mix_what_if({"m": synthetic_samples()}, cores=1, scale={"reads": 5, "writes": 5}, n_bootstrap=0)
    fits = result.predicted.loc["m", "load_factor_that_fits"]
    assert f"{fits:.0%} of it does" in result.describe() and "nan" not in result.describe().lower()
    # over 1,000 % of the core: the thousands separated
    huge = mix_what_if({"m": synthetic_samples()}, cores=1, scale={"reads": 10_000}, n_bootstrap=0)
    assert f"needs {huge.predicted.loc['m', 'utilization']:,.0%} of 1 core" in huge.describe()


def test_a_member_with_no_prediction_says_why_in_one_sentence():
    result = mix_what_if({"reader": synthetic_samples(writes=False)}, cores=1, rates={"reads": 100, "writes": 50},
                         n_bootstrap=0)
    assert result.describe() == "reader: not observed serving writes: no prediction for this load."


def test_the_answer_shows_a_rate_below_one_per_second_as_it_is():
    samples = synthetic_samples()
    samples["commands_per_s"] = 0.5                       # a health check twice a second: not "0 ops/s"
    result = mix_what_if({"a": samples}, cores=2, n_bootstrap=0)
    assert "commands 0.5 ops/s at" in result.describe() and "of 2 cores" in result.describe()


def test_a_huge_load_that_does_not_fit_is_told_in_readable_percentages(tmp_path, capsys):
    (tmp_path / "primary").mkdir()
    samples = synthetic_samples()
    samples.to_csv(tmp_path / "primary" / "samples.csv", index=False)
    assert main(["mva", "--observed", str(tmp_path / "primary"), "--cores", "8", "--scale", "reads=1e6"]) == 0
    text = capsys.readouterr().out
    fit = fit_server_demands(samples, cores=8)
    rates = scaled_rates(fit, scale={"reads": 1e6})
    u = (fit.background_cores + sum(rates[c] * fit.cpu_per_op[c] for c in fit.classes)) / 8
    fits = (8 - fit.background_cores) / (u * 8 - fit.background_cores)
    assert f"needs {u:,.0%} of 8 cores: it does not fit; {fits * 100:.2g}% of it does." in text
    assert "inf" not in text and "e+" not in text


@pytest.mark.parametrize("load", [0.3, 0.9, 0.99, 0.999])
def test_near_saturation_each_latency_range_holds_its_estimate_and_reads_as_numbers(load):
    # a refit whose load saturates the CPU has no steady latency: dropping it (as pandas' quantile drops NaN) gave
    # '2.45 (0.0918 to 1.65) ms' at 99.9% CPU, a range below its own estimate; and the live replica-set run printed
    # '(0.549-1.64e+03)'. Such refits now count as unbounded, and the numbers are the project's format.
    samples = synthetic_samples(noise=0.3)
    first = mix_what_if({"m": samples}, cores=1, n_bootstrap=0)
    k = load * first.predicted.loc["m", "load_factor_that_fits"]      # this share of the load that just fits
    result = mix_what_if({"m": samples}, cores=1, scale={"reads": k, "writes": k}, n_bootstrap=200)
    text = result.describe()
    assert not re.search(r"\de[+-]?\d", text), text
    unbounded = False
    for c in ("reads", "writes"):
        p, lo, hi = (frame.loc["m", f"{c}_latency_ms"] for frame in (result.predicted, result.low, result.high))
        assert lo <= p <= hi, (c, lo, p, hi)
        if np.isinf(hi):
            unbounded = True
            assert f"at {number(p)} ms ({number(lo)} ms or more)" in text
        else:
            assert f"at {number(p)} ({number(lo)} to {number(hi)}) ms" in text
    assert unbounded == ("without an upper end: more than 2.5% of the refits" in text)
    assert unbounded or load < 0.99          # near saturation some refits must saturate


def test_runs_of_the_block_bootstrap_are_said_only_when_there_are_runs():
    asked = {"reads": 2000, "writes": 1000, "commands": 20}
    iid = synthetic_samples(n=120, seed=6)
    iid["cpu_cores"] += np.random.default_rng(1).normal(0, 0.01, len(iid))
    assert "resampled in runs" not in mix_what_if({"m": iid}, cores=1, rates=asked, n_bootstrap=60,
                                                  seed=3).describe()
    persistent = synthetic_samples(n=120, seed=6)
    persistent["cpu_cores"] += _ar1(120, 0.9, 0.01, 1)       # CPU noise that persists: runs of intervals
    blocked = mix_what_if({"m": persistent}, cores=1, rates=asked, n_bootstrap=60, seed=3)
    block, _ = blocked.blocks["m"]
    assert f"resampled in runs of {block} consecutive intervals (they move together)" in blocked.describe()


def test_an_asked_mix_outside_the_fitted_shares_is_said_to_be_an_extrapolation():
    samples = shares_samples()        # writes 10 % to 40 % of the operations, so reads 60 % to 90 %
    text = mix_what_if({"m": samples}, cores=1, rates={"reads": 600, "writes": 1200}, n_bootstrap=0).describe()
    assert ("m: the reads' latency at this mix is an extrapolation: it grows with the share of writes, fitted where "
            "writes were 10% to 40% of the operations, and the asked mix has 67%.") in text
    assert ("m: writes were observed only where reads were 60% to 90% of the operations: at the asked 33% their "
            "latency assumes the mix does not change it (not measured there).") in text
    # writes 45 %: the reads' term extrapolated, the reads within 0.1 of the writes' 60 %: not said of the writes
    assert "writes were observed only" not in mix_what_if({"m": samples}, cores=1, rates={"reads": 550, "writes": 450},
                                                          n_bootstrap=0).describe()
    inside = mix_what_if({"m": samples}, cores=1, rates={"reads": 1000, "writes": 250}, n_bootstrap=0)
    assert "extrapolat" not in inside.describe() + inside.evidence.describe()


def test_the_window_spread_is_said_with_its_figure():
    from tests.mix.test_spread import server

    samples, _ = server(40, 6, sigma_cpu=0.05, sigma_latency=0.10, seed=3)
    result = mix_what_if({"m": samples}, cores=1, rates={"reads": 1500, "writes": 600}, n_bootstrap=0)
    text = result.describe()
    assert "; widened too for how far each figure moved from one window of the observation to another." in text
    assert f"the reads latency ±{percent(np.expm1(result.spread['m']['reads'][0]))} over" in text
    assert "over 40 windows" in text


def test_a_secondarys_replication_is_said_to_follow_the_primarys_writes():
    from tests.mix.test_replication import primary, secondary

    text = mix_what_if({"p": primary(client_reads=False), "s": secondary(span=(100, 500))}, cores=2,
                       scale={"writes": 2}, n_bootstrap=0).describe()
    assert "s: its replication work follows the primary's writes" in text
    # the room is a factor of everything the CPU does for the asked load: on the secondary, its replication too
    assert re.search(r"^s: .*room for [\d.,]+x this load \(its replication work with it\) before the CPU saturates",
                     text, re.M)
    assert re.search(r"^p: .*room for [\d.,]+x this load before the CPU saturates", text, re.M)
    assert re.search(r"p: the [\d,]+ oplog getMores and [\d,]+ replSetUpdatePosition reports a second it served to "
                     "other members count with the writes they follow, not with the clients' operations.", text)


def test_the_plgm_what_if_states_its_error_and_the_measured_peak():
    from capmodel import datasets
    from capmodel.models.mix.demands import fit_mix_demands
    from tests.mix.test_what_if import MIXED, READ_ONLY

    curves = {name: datasets.load_curve(name) for name in ("plgm_workload1", "plgm_workload2", "plgm_workload3")}
    fit = fit_mix_demands({"plgm_workload1": (curves["plgm_workload1"], READ_ONLY),
                           "plgm_workload2": (curves["plgm_workload2"], MIXED)}, servers=4)
    measured = curves["plgm_workload3"]
    prediction = fit.compare(measured, MIXED, "plgm_workload3")
    text = prediction.describe()
    assert f"{prediction.mean_abs_throughput_error_pct:.1f}%" in text and "54% read, 46% write" in text
    assert f"{measured['throughput'].max():,.0f} ops/s" in text
