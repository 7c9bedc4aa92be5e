"""server_capacity: the operational laws on observe's samples table.

The samples here are built from a known utilization law U = U0 + D·X (plus noise), so the service demand D, the
background U0 and every capacity figure are known in closed form: X_max = (cores - U0) / D, X(u) = (u·cores - U0) / D.
"""
from __future__ import annotations

import json
from pathlib import Path
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.errors import InputError
from capmodel.observe.capacity import LAWS, server_capacity

D_S, U0 = 0.0005, 0.05       # 0.5 ms of CPU per operation, 0.05 cores of background


def samples(x, latency_ms=0.4, noise=0.002, seed=1, cores_column=None) -> pd.DataFrame:
    """A samples.csv table: reads and writes (3:1) at total rate ``x``, CPU from the law plus noise."""
    x = np.asarray(x, dtype=float)
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({
        "time": pd.date_range("2026-01-01", periods=len(x), freq="s", tz="UTC"), "interval_s": 1.0,
        "reads_per_s": 0.75 * x, "reads_latency_ms": latency_ms, "writes_per_s": 0.25 * x,
        "writes_latency_ms": latency_ms, "commands_per_s": 0.0, "commands_latency_ms": np.nan,
        "cpu_cores": U0 + D_S * x + rng.normal(0, noise, len(x)), "dropped": "",
    })
    if cores_column is not None:
        table["cores"] = cores_column
    return table


def test_laws_recover_demand_background_and_capacity():
    x = np.linspace(100, 900, 60)
    cap = server_capacity(samples(x), cores=2, utilization_target=0.8, monthly_growth=0.05)
    assert cap.method == LAWS
    d = cap.service_demand_ms
    assert d.low < 0.5 < d.high and d.estimate == pytest.approx(0.5, rel=0.02)
    assert cap.background_cores == pytest.approx(U0, abs=0.005)
    sat = cap.saturation_throughput
    assert sat.estimate == pytest.approx((2 - U0) / D_S, rel=0.03)              # 3,900 ops/s
    assert sat.low <= (2 - U0) / D_S <= sat.high
    assert cap.planned_throughput.estimate == pytest.approx((1.6 - U0) / D_S, rel=0.03)   # 3,100 ops/s
    observed = np.percentile(x, 95)
    assert cap.observed_peak_throughput == pytest.approx(observed)
    assert cap.spare_fraction.estimate == pytest.approx(1 - observed / cap.planned_throughput.estimate)
    months = math.log(cap.planned_throughput.estimate / observed) / math.log(1.05)
    assert cap.runway_months.estimate == pytest.approx(months)
    # the busiest intervals used under half of the 2 cores: extrapolated to full use, and the verdict says so
    assert cap.evidence.codes() == ["extrapolated"] and cap.evidence.grade == "weak"
    assert cap.evidence.reasons[0].value == pytest.approx((U0 + D_S * np.percentile(x, 95)) / 2, abs=0.01)
    assert "fewer than one operation" in cap.why           # N = X·R stays below 1: why the USL is not used
    payload = json.loads(json.dumps(cap.to_json()))
    assert payload["evidence"]["grade"] == "weak"
    assert payload["saturation_throughput"]["estimate"] == pytest.approx(sat.estimate)


def test_constant_load_falls_back_to_the_conservative_ratio():
    x = np.full(30, 400.0)
    cap = server_capacity(samples(x, noise=0.0), cores=1)
    # ratio sum(U) / sum(X) = (U0 + D·400) / 400: the background is charged to the operations
    assert cap.service_demand_ms.estimate == pytest.approx((U0 + D_S * 400) / 400 * 1000)
    assert cap.background_cores == 0
    assert "background_not_separable" in cap.evidence.codes()
    assert cap.saturation_throughput.estimate < (1 - U0) / D_S


def test_cores_from_the_samples_and_assumed_when_unknown():
    x = np.linspace(100, 900, 40)
    reported = server_capacity(samples(x, cores_column=4.0))
    assert reported.cores == 4 and reported.cores_source == "the host's, as the server reports them"
    unknown = server_capacity(samples(x))
    assert unknown.cores == 1 and "cores_unknown" in unknown.evidence.codes()


def test_wrong_core_count_is_unusable_and_a_load_over_target_is_not_a_doubt():
    x = np.linspace(1000, 3000, 40)            # needs 0.55 to 1.55 cores
    one = server_capacity(samples(x), cores=1)
    assert "above_saturation" in one.evidence.codes() and not one.evidence.usable
    # past the utilization target is the server's state, not a doubt about the figures: the answer says it, the
    # grade does not fall for it
    busy = server_capacity(samples(x), cores=2, utilization_target=0.7)
    assert busy.spare_fraction.estimate < 0
    assert "over_target" not in busy.evidence.codes()


def test_the_busier_the_window_the_narrower_the_capacity_interval_until_it_is_sound():
    # the same server (0.5 ms per operation, 0.05 cores of background, 2 cores: saturation at 3,900 ops/s) observed
    # at light load, at three quarters of its cores and near saturation: the extrapolation to saturation, and with it
    # the interval the CPU per operation's possible change makes, shrinks as the window's load nears saturation
    truth = (2 - U0) / D_S
    spans = []
    for top in (1000, 3000, 3800):
        cap = server_capacity(samples(np.linspace(0.4 * top, top, 60), latency_ms=20.0), cores=2)
        sat = cap.saturation_throughput
        assert sat.low <= truth <= sat.high
        spans.append(sat.high / sat.low)
    assert spans[0] > spans[1] > spans[2]
    assert cap.evidence.grade == "sound" and spans[2] <= 1.25 and "fewer than one" not in cap.why


@pytest.mark.parametrize("kwargs, message", [
    ({"cores": 0}, "--cores"), ({"utilization_target": 1.5}, "utilization target"),
    ({"monthly_growth": -2}, "monthly growth"), ({"level": 1.0}, "level"),
])
def test_bad_options_name_themselves(kwargs, message):
    with pytest.raises(InputError, match=message):
        server_capacity(samples(np.linspace(100, 900, 20)), **kwargs)


def test_missing_columns_and_too_few_intervals():
    with pytest.raises(InputError, match="cpu_cores"):
        server_capacity(samples(np.linspace(100, 900, 20)).drop(columns="cpu_cores"))
    table = samples(np.linspace(100, 900, 20))
    table["cpu_cores"] = np.nan
    with pytest.raises(InputError, match="busy interval"):
        server_capacity(table)


def test_observe_puts_the_capacity_in_json(tmp_path, capsys):
    from capmodel.cli import main
    from capmodel.observe import bundled_sample, observe_ftdc

    folder = bundled_sample()["path"]
    assert main(["observe", "--ftdc", str(folder), "--out", str(tmp_path), "--cores", "1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = server_capacity(observe_ftdc(folder).samples, cores=1)
    assert payload["capacity"]["saturation_throughput"]["estimate"] == pytest.approx(
        expected.saturation_throughput.estimate)
    assert payload["capacity"]["method"] == expected.method
    assert payload["evidence"] == payload["capacity"]["evidence"] == expected.evidence.to_json()
    assert main(["observe", "--ftdc", str(folder), "--out", str(tmp_path), "--cores", "0"]) == 2
    assert "--cores must be a number of CPUs from 0.01 to 1,024, got 0" in capsys.readouterr().err


def test_observe_on_an_idle_server_states_no_capacity(tmp_path, capsys):
    from capmodel.cli import main

    idle_ftdc = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_idle"     # a real mongod idle for 8 s, FTDC on
    assert main(["observe", "--ftdc", str(idle_ftdc), "--out", str(tmp_path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["capacity"] is None and payload["evidence"]["grade"] == "unusable"
    assert payload["evidence"]["reasons"][0]["code"] == "no_capacity"


def test_each_weakness_of_the_data_is_a_reason():
    x = np.linspace(100, 900, 40)
    few = server_capacity(samples(x[:6]), cores=2)
    assert "few_busy_intervals" in few.evidence.codes()
    assert next(r for r in few.evidence.reasons if r.code == "few_busy_intervals").value == 6
    # 0.5 ms x 20 ops/s = 0.01 CPU seconds an interval: one 10 ms clock tick
    coarse = samples(x / 40, noise=0.0)
    coarse["cpu_cores"] = D_S * coarse["reads_per_s"] / 0.75
    assert "cpu_sampled_coarsely" in server_capacity(coarse, cores=1).evidence.codes()
    busy_background = samples(x, noise=0.0)
    busy_background["cpu_cores"] += 0.6                     # 0.65 cores of background against 0.25 of operations
    assert "background_cpu" in server_capacity(busy_background, cores=2).evidence.codes()
    unrelated = samples(x, noise=0.0)
    unrelated["cpu_cores"] = np.random.default_rng(3).uniform(0.1, 0.9, len(x))   # CPU that ignores the load
    verdict = server_capacity(unrelated, cores=2).evidence
    u, xs = unrelated["cpu_cores"].to_numpy(), x
    r2 = np.corrcoef(xs, u)[0, 1] ** 2                       # a straight line's R² is the squared correlation
    reason = next(r for r in verdict.reasons if r.code == "cpu_unrelated_to_load")
    assert reason.value == pytest.approx(r2) and r2 < 0.1 and not verdict.usable
    target = server_capacity(samples(x), cores=2, latency_target_ms=5.0)
    assert "latency_not_modelled" in target.evidence.codes()


def test_an_unusable_capacity_states_only_what_the_data_support():
    # 1,000-3,000 ops/s at 0.5 ms of CPU each needs up to 1.55 cores: with 1 core the laws' saturation (1,900 ops/s)
    # is below what the server did, so no saturation, plan, spare or runway may be stated, only the lower bound
    x = np.linspace(1000, 3000, 40)
    one = server_capacity(samples(x), cores=1, monthly_growth=0.05)
    assert not one.evidence.usable
    busiest = np.quantile(x, 0.95)
    assert one.at_least == pytest.approx(busiest)                 # the lower bound: the busiest load carried
    # why: the busiest load runs past the high end of the laws' saturation, so the 1 core given is wrong
    (reason,) = one.evidence.reasons
    assert reason.code == "above_saturation" and reason.value == pytest.approx(busiest / one.saturation_throughput.high)
    # the JSON states none of the figures the verdict forbids, only the lower bound
    payload = one.to_json()
    assert payload["saturation_throughput"] == {"estimate": None, "low": pytest.approx(busiest), "high": None}
    assert all(payload[k] is None or payload[k].get("estimate") is None
               for k in ("planned_throughput", "spare_fraction", "runway_months"))


def test_the_cpu_law_figure_draws_no_saturation_an_unusable_verdict_does_not_state():
    from capmodel.observe.capacity import busy_table
    from capmodel.plots.capacity import cpu_law_figure

    x = np.linspace(1000, 3000, 40)
    table = samples(x)
    wrong = server_capacity(table, cores=1)                      # the data ran past the 1-core saturation
    busy = busy_table(table)
    figure = cpu_law_figure(busy, wrong)
    names = [t.name for t in figure.data]
    assert "planned (target) and saturation" not in names
    line = next(t for t in figure.data if t.mode == "lines")
    assert max(line.x) == pytest.approx(busy["throughput"].max())
    assert figure.layout.yaxis.range[1] >= busy["cpu_cores"].max()      # the points above the 1 core stay in view
    right = server_capacity(table, cores=2)
    drawn = cpu_law_figure(busy, right)
    stars = next(t for t in drawn.data if t.name == "planned (target) and saturation")
    assert list(stars.x) == pytest.approx([right.planned_throughput.estimate, right.saturation_throughput.estimate])


def test_a_shrinking_or_flat_load_never_reaches_the_plan():
    x = np.linspace(500, 1500, 40)
    shrinking = server_capacity(samples(x), cores=2, monthly_growth=-0.05)
    assert math.isinf(shrinking.runway_months.estimate) and shrinking.monthly_growth == -0.05
    flat = server_capacity(samples(x), cores=2, monthly_growth=0.0)
    assert math.isinf(flat.runway_months.estimate) and flat.monthly_growth == 0.0


def test_a_varied_load_with_no_background_is_not_called_too_flat():
    """The synthetic fleet's servers (a daily cycle, background near zero) were all told 'the load varied too little
    to separate background CPU': the regression's intercept came out a hair below zero, the ratio was used, and the
    reason named the wrong cause. A varied load is never called flat; an intercept below zero by noise alone (under
    NEGLIGIBLE_BACKGROUND of the mean CPU) costs no grade; one well below zero says so."""
    from capmodel.observe.capacity import NEGLIGIBLE_BACKGROUND

    x = np.linspace(200, 2000, 60)                   # busy at 10x quiet: separable by any measure
    rng = np.random.default_rng(3)
    table = samples(x, noise=0.0)
    table["cpu_cores"] = D_S * x * (1 + rng.normal(0, 0.01, x.size)) - 0.001     # intercept just below zero
    cap = server_capacity(table, cores=1)
    intercept = np.polyfit(x, table["cpu_cores"].to_numpy(), 1)[1]
    assert intercept < 0 and abs(intercept) < NEGLIGIBLE_BACKGROUND * table["cpu_cores"].mean()
    assert not {"background_not_separable", "background_negative"} & set(cap.evidence.codes())
    assert cap.service_demand_ms.estimate == pytest.approx(table["cpu_cores"].sum() / x.sum() * 1000)

    table["cpu_cores"] = D_S * x - 0.3 * D_S * x.mean()                             # well below zero
    far = server_capacity(table, cores=1)
    assert "background_negative" in far.evidence.codes() and "background_not_separable" not in far.evidence.codes()


def _polyfit_bootstrap_interval(x, u, with_intercept, n_bootstrap, seed, level, block=1):
    """The bootstrap as a loop: one np.polyfit per resample, each resample ceil(n / block) runs of ``block``
    consecutive intervals from starts drawn uniformly (wrapping past the end; the last run cut to n in all): the
    reference the closed-form sums must reproduce (with block 1, server_capacity's bootstrap before blocks)."""
    def demand(xs, us, intercept):
        if intercept:
            slope, _ = np.polyfit(xs, us, 1)
            return float(slope)
        return float(us.sum() / xs.sum())

    rng = np.random.default_rng(seed)
    n = len(x)
    draws = []
    for _ in range(n_bootstrap):
        starts = rng.integers(0, n, -(-n // block))
        pick = ((starts[:, None] + np.arange(block)) % n).ravel()[:n]     # the runs, one after another
        d = demand(x[pick], u[pick], with_intercept and np.ptp(x[pick]) > 0)
        if d > 0:
            draws.append(d)
    alpha = (1 - level) / 2
    return draws, np.quantile(draws, [alpha, 1 - alpha])


@pytest.mark.parametrize("x, noise, intercept", [
    (np.linspace(100, 900, 60), 0.002, True),                    # the regression on a varied load
    (np.linspace(100, 900, 1201), 0.02, True),                   # many intervals, noisy CPU
    (np.r_[np.full(8, 300.0), np.full(2, 600.0)], 0.01, True),   # ten intervals: a tenth of the resamples see one load
    (np.full(30, 400.0), 0.002, False),                          # the ratio: a constant load
    (np.linspace(100, 110, 40), 0.02, False),                    # the ratio: too little variation to separate
])
def test_the_closed_form_bootstrap_equals_the_polyfit_loop(x, noise, intercept):
    from capmodel.observe.capacity import _separable
    from capmodel.observe.service_demand import bootstrap_demands as _bootstrap_demands

    table = samples(x, noise=noise, seed=7)
    u = table["cpu_cores"].to_numpy()
    assert _separable(x) == intercept
    for seed, level in ((0, 0.95), (11, 0.9)):
        draws, (low, high) = _polyfit_bootstrap_interval(x, u, intercept, 300, seed, level)
        fast = _bootstrap_demands(x, u, intercept, 300, seed)
        np.testing.assert_allclose(fast[fast > 0], draws, rtol=1e-9, atol=0)
        if seed == 0:                                    # runs of 7 consecutive intervals, wrapping at the end
            runs, _ = _polyfit_bootstrap_interval(x, u, intercept, 300, seed, level, 7)
            fast = _bootstrap_demands(x, u, intercept, 300, seed, 7)
            np.testing.assert_allclose(fast[fast > 0], runs, rtol=1e-9, atol=0)
        cap = server_capacity(table, cores=2, n_bootstrap=300, seed=seed, level=level)
        assert cap.service_demand_ms.low == pytest.approx(low * 1000, rel=1e-9, abs=0)
        assert cap.service_demand_ms.high == pytest.approx(high * 1000, rel=1e-9, abs=0)
