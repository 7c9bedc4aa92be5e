"""The production answer: which method answers (USL only when sound, else the operational laws, else none) and
sentences that agree with the figures.

Points are generated from the USL's definition X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)) (Gunther,
*Guerrilla Capacity Planning*, 2007) with Little's law R = N / X; every expected figure (the peak at
N* = sqrt((1 - sigma) / kappa), the N where R = D(N) / lambda meets a target) is solved here from that definition.
"""
from __future__ import annotations

import datetime as dt
import math
import re

import numpy as np
import pandas as pd
import pytest

from capmodel.models.usl.latency_form import LatencyFit
from capmodel.observe.capacity import LAWS, USL
from capmodel.observe.tables import curve_from_samples
from capmodel.plan.production import NO_METHOD, production_answer
from capmodel.plan.usl_observed import usl_verdict

SIGMA, KAPPA, LAMBDA = 0.05, 0.002, 1000.0
N_STAR = math.sqrt((1 - SIGMA) / KAPPA)
D_S = 0.0001                                   # 0.1 ms of CPU per operation


def x_of(n):
    n = np.asarray(n, dtype=float)
    return LAMBDA * n / (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1))


def n_at_latency(target_s: float) -> float:
    """R(N) = D(N) / lambda = target: kappa N^2 + (sigma - kappa) N + (1 - sigma - lambda target) = 0."""
    b, c = SIGMA - KAPPA, 1 - SIGMA - LAMBDA * target_s
    return (-b + math.sqrt(b * b - 4 * KAPPA * c)) / (2 * KAPPA)


def observed(n, cpu=True) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = np.asarray(n, dtype=float)
    x = x_of(n)
    samples = pd.DataFrame({
        "time": pd.date_range("2026-01-01", periods=len(n), freq="s", tz="UTC"), "interval_s": 1.0,
        "reads_per_s": x, "reads_latency_ms": n / x * 1000.0, "writes_per_s": 0.0, "writes_latency_ms": np.nan,
        "commands_per_s": 0.0, "commands_latency_ms": np.nan,
        "cpu_cores": 0.02 + D_S * x if cpu else np.nan, "dropped": ""})
    return samples, curve_from_samples(samples)


KNEE = np.geomspace(1, 30, 40)                 # reaches past N* = 21.8
LIGHT = np.linspace(0.05, 0.4, 40)             # a healthy production server: N well below 1


def test_usl_answers_when_the_knee_is_reached_and_the_latency_sentence_is_true():
    samples, curve = observed(KNEE)
    answer = production_answer(samples, curve, cores=1, latency_target_ms=2.0, monthly_growth=0.05, bins=None,
                               n_bootstrap=20)
    # the throughput falls past the peak (7,397 ops/s) long before the CPU saturates (9,800): the USL answers
    assert answer.capacity.saturation_throughput.low > float(x_of(N_STAR))
    assert answer.usl_evidence.grade == "sound" and answer.method == USL
    peak = float(x_of(N_STAR))
    assert answer.saturation_throughput.estimate == pytest.approx(peak, rel=1e-3)
    at = float(x_of(n_at_latency(0.002)))
    state, value = answer.latency_outcome
    assert state == "reached" and value == pytest.approx(at, rel=1e-3)
    text = answer.describe()
    assert f"**{at:,.0f} ops/s**" in text and f"**{peak:,.0f} ops/s**" in text
    busiest = float(np.quantile(curve["throughput"], 0.95))
    assert answer.observed_peak_throughput == pytest.approx(busiest)
    spare = 1 - busiest / (0.8 * peak)                 # the window reached the knee: already past an 80% plan
    assert spare < 0 and answer.spare_fraction.estimate == pytest.approx(spare, rel=1e-3)
    assert answer.runway_months.estimate == 0


def test_a_plateau_is_no_peak_for_the_usl(tmp_path):
    # a server whose CPU saturates (an M/M/8 queue, capmodel.observe.synthetic) driven to 97% of its capacity: its
    # throughput levels off while the concurrency grows, and the USL fitted to the day puts a peak 4% below the truth
    # (7,640 ops/s against 7,930) with an interval under 1% wide that misses it (sound before ``no_decline``). The
    # window never shows the throughput falling past that peak, so the USL does not answer, not even for a server
    # without CPU figures
    from capmodel.observe.observation import observe_ftdc
    from capmodel.observe.synthetic import SyntheticServer, write_server

    server = SyntheticServer("plateau:27017", cores=8, cpu_ms_per_op=1.0, mean_rate=4570.0, daily_amplitude=0.67,
                             peak_hour=23.5, start=dt.datetime(2026, 11, 2, 10, 29, tzinfo=dt.timezone.utc),
                             seed=955, period_s=60.0, background_cores=0.07, filler_metrics=5)
    observation = observe_ftdc(write_server(server, tmp_path / "diagnostic.data"))
    samples = observation.samples.assign(cpu_cores=np.nan)
    answer = production_answer(samples, observation.curve, n_bootstrap=10)
    assert observation.curve["throughput"].max() > 0.95 * server.capacity
    assert "no_decline" in answer.usl_evidence.codes() and answer.method == NO_METHOD


def test_latency_target_met_at_the_peak_or_unreachable_is_said_so():
    samples, curve = observed(KNEE)
    r_peak_ms = N_STAR / float(x_of(N_STAR)) * 1000.0                  # 2.9 ms at the nose
    loose = production_answer(samples, curve, latency_target_ms=3 * r_peak_ms, bins=None, n_bootstrap=10)
    assert loose.latency_outcome[0] == "met_at_peak"
    assert "reaches the" not in loose.describe() and "up to the peak" in loose.describe()
    tight = production_answer(samples, curve, latency_target_ms=0.5, bins=None, n_bootstrap=10)   # R(0) = 0.95 ms
    assert tight.latency_outcome == ("unreachable", None)
    assert "no load meets it" in tight.describe() and "reaches the" not in tight.describe()


def test_light_load_uses_the_laws_and_never_claims_no_room():
    samples, curve = observed(LIGHT)
    answer = production_answer(samples, curve, cores=1, latency_target_ms=5.0, monthly_growth=0.05, n_bootstrap=20)
    assert not answer.usl_evidence.usable and "knee_not_reached" in answer.usl_evidence.codes()
    assert answer.method == LAWS
    assert answer.saturation_throughput.estimate == pytest.approx((1 - 0.02) / D_S, rel=0.01)   # 9,800 ops/s
    # room to grow (spare and months of runway), and the latency target not checked: the laws bound no latency
    assert answer.spare_fraction.estimate > 0 and answer.runway_months.estimate > 0
    assert answer.latency_outcome == ("not_checked", None)
    assert answer.evidence.grade == answer.capacity.evidence.grade


def test_no_cpu_and_light_load_states_only_the_lower_bound():
    samples, curve = observed(LIGHT, cpu=False)
    answer = production_answer(samples, curve, n_bootstrap=10)
    assert answer.method == NO_METHOD and not answer.evidence.usable
    assert answer.saturation_throughput is None and answer.spare_fraction is None
    # the busiest load carried (95th percentile) is the lower bound stated
    assert answer.at_least == answer.observed_peak_throughput == pytest.approx(np.quantile(x_of(LIGHT), 0.95))
    text = answer.describe()
    assert not re.search(r"\b(nan|None|inf)\b", text)


def test_a_fit_whose_peak_the_data_run_past_is_unusable():
    samples, curve = observed(KNEE)
    x = curve["throughput"].to_numpy()
    r = curve["latency_mean_ms"].to_numpy() / 1000.0
    # a fit with a third of the true lambda: its peak lies far below the busiest intervals, its R² is poor
    wrong = LatencyFit(curve, x, r, np.array([SIGMA, KAPPA, LAMBDA / 3]), method="throughput")
    verdict = usl_verdict(wrong, curve)
    assert {"past_peak", "low_r2"} <= set(verdict.codes()) and not verdict.usable
    past = next(r for r in verdict.reasons if r.code == "past_peak")
    assert past.value == pytest.approx(wrong.observed_peak_throughput / (float(x_of(N_STAR)) / 3), rel=1e-6)


def test_an_unusable_laws_answer_is_not_the_method_that_answers():
    # light load (no knee for the USL) and a core count the data contradict (the laws' verdict unusable): neither
    # method may state a capacity; the answer gives the observed load as a lower bound and says why
    samples, curve = observed(LIGHT)
    busiest = float(np.quantile(curve["throughput"], 0.95))
    cores = 0.02 + D_S * busiest * 0.5                          # half the CPU the busiest intervals used
    answer = production_answer(samples, curve, cores=cores, monthly_growth=0.05, n_bootstrap=10)
    assert not answer.capacity.evidence.usable and "above_saturation" in answer.capacity.evidence.codes()
    assert answer.method == NO_METHOD and not answer.evidence.usable
    assert "above_saturation" in answer.evidence.codes()
    assert answer.saturation_throughput is None and answer.runway_months is None
    assert answer.at_least == pytest.approx(busiest)                # the lower bound stated instead
    text = answer.describe()
    assert text.count("probably wrong") == 1                     # each reason said once
    assert "neither method can state a capacity" not in text      # the reasons themselves say it
    no_cpu = production_answer(*observed(LIGHT, cpu=False), n_bootstrap=10)
    assert no_cpu.capacity is None and no_cpu.capacity_error in no_cpu.describe()   # without a laws verdict: why
    knee = next(r for r in answer.evidence.reasons if r.code == "knee_not_reached")
    assert f"the fitted peak at {answer.usl.peak_concurrency:.2g} operations lies" in knee.message
    assert not re.search(r"\b(nan|None|inf)\b", text)


def test_a_peak_at_one_operation_is_said_in_the_singular():
    samples, curve = observed(LIGHT)
    x = curve["throughput"].to_numpy()
    r = curve["latency_mean_ms"].to_numpy() / 1000.0
    sigma, kappa = 0.05, 0.95                                    # N* = sqrt((1 - 0.05) / 0.95) = 1
    fit = LatencyFit(curve, x, r, np.array([sigma, kappa, LAMBDA]), method="throughput")
    knee = next(r for r in usl_verdict(fit, curve).reasons if r.code == "knee_not_reached")
    assert "the fitted peak at 1 operation lies" in knee.message


@pytest.mark.parametrize("points, cpu, growth", [(KNEE, True, 0.05), (LIGHT, True, 0.05), (LIGHT, True, 0.5),
                                                  (LIGHT, False, None), (KNEE, True, None)])
def test_every_capacity_table_row_shows_its_figure_and_interval_in_one_format(points, cpu, growth):
    # each row's estimate, low and high carry the same decimals (report 07 read -17 / -19.1 / -15), enough for
    # three significant digits of the estimate; whole figures none
    samples, curve = observed(points, cpu=cpu)
    answer = production_answer(samples, curve, cores=1, monthly_growth=growth, bins=None, n_bootstrap=20)
    made = answer.capacity_table()
    headers = [c.header for c in made.columns.values()]
    for raw, cells in zip(made.rows, made.cells()):
        shown = dict(zip(headers, cells))
        numbers = [shown[h] for h in headers[2:] if re.fullmatch(r"-?[\d,]+(\.\d+)?", shown[h])]
        places = {len(v.split(".")[1]) if "." in v else 0 for v in numbers}
        assert len(places) <= 1, (raw["figure"], numbers)
        estimate = raw["estimate"]
        if numbers and math.isfinite(estimate) and estimate != 0 and not float(estimate).is_integer():
            # months to a tenth, as the answer and every runway on the pages; other figures three significant digits
            want = 1 if raw["figure"] == "runway" else \
                0 if abs(estimate) >= 100 else 2 - math.floor(math.log10(abs(estimate)))
            assert places == {max(0, want)}, (raw["figure"], numbers)
    # the CSV keeps the raw values
    for row in made.rows:
        if isinstance(row["estimate"], float) and not row["estimate"].is_integer():
            assert repr(row["estimate"]) in made.csv() or str(row["estimate"]) in made.csv()


@pytest.mark.parametrize("points, cpu", [(KNEE, True), (LIGHT, True), (LIGHT, False)])
def test_the_answer_starts_each_sentence_with_a_capital_and_none_after_a_colon(points, cpu):
    samples, curve = observed(points, cpu=cpu)
    text = production_answer(samples, curve, cores=None if cpu else 1, monthly_growth=0.05, bins=None,
                             n_bootstrap=20, source="the test window").describe()
    assert text.startswith("Read from the test window: 40 intervals, 40 with operations. ")
    assert not re.search(r": [A-Z][a-z]", text.replace("Method: ", "")), text


@pytest.mark.parametrize("cores, reported, words", [
    (1, None, "With 1 core (as given), the bottleneck law"),
    (None, 1, "With 1 core (the host's count, as the server reports it), the bottleneck law"),
    (None, 4, "With 4 cores (the host's count, as the server reports it), the bottleneck law"),
    (None, None, "With 1 core (assumed: the server did not report its cores), the bottleneck law")])
def test_the_cores_sentence_reads_for_one_core_and_for_many(cores, reported, words):
    samples, curve = observed(LIGHT)
    if reported is not None:
        samples["cores"] = float(reported)
    text = production_answer(samples, curve, cores=cores, bins=None, n_bootstrap=20).describe()
    assert words in text


def test_a_runway_of_zero_reads_past_the_target_now_in_the_capacity_table():
    # the bundled FTDC sample (report 07's default): its busiest load is past the 80% plan, so its runway is 0; the
    # light generated load has months of runway, shown as a number
    from capmodel.models.runway import PAST_TARGET_WORDS
    from capmodel.observe.observation import observe_ftdc

    observation = observe_ftdc("data/ftdc_sample/diagnostic.data")
    past = production_answer(observation.samples, observation.curve, monthly_growth=0.05, bins=None, n_bootstrap=20)
    samples, curve = observed(LIGHT)
    room = production_answer(samples, curve, cores=1, monthly_growth=0.05, bins=None, n_bootstrap=20)
    assert past.runway_months.estimate == 0 and room.runway_months.estimate > 1
    months = room.runway_months          # exact generated CPU: an interval of no width, left out (the next test)
    ends = ["—", "—"] if f"{months.low:.1f}" == f"{months.high:.1f}" else [f"{months.low:.1f}", f"{months.high:.1f}"]
    for answer, expected in ((past, [PAST_TARGET_WORDS, "—", "—"]), (room, [f"{months.estimate:.1f}", *ends])):
        [row] = [cells for cells in answer.capacity_table().cells() if cells[0] == "runway"]
        assert row[2:] == expected


def test_the_laws_answer_says_past_the_plan_once():
    # the bundled FTDC sample runs 17% above its plan: 'already' and 'reached' are not said twice over
    from capmodel.observe.observation import observe_ftdc

    observation = observe_ftdc("data/ftdc_sample/diagnostic.data")
    answer = production_answer(observation.samples, observation.curve, monthly_growth=0.05, bins=None, n_bootstrap=20)
    assert answer.spare_fraction.estimate < 0 and answer.runway_months.estimate == 0     # past the plan: no runway
    text = answer.describe()
    assert text.count("already") == 1 and "target is already reached" not in text


def test_an_interval_without_width_as_printed_is_left_out_of_the_capacity_table():
    # generated load whose CPU is exactly 0.1 ms per operation plus 0.02 cores: every bootstrap draw fits the same
    # line, so each interval's ends equal its estimate; report 07 printed them (-20.0 / -20.0 / -20.0) where the
    # sentences, by ``shows_width``, say none
    samples, curve = observed(LIGHT, cpu=True)
    answer = production_answer(samples, curve, cores=1, monthly_growth=0.05, bins=None, n_bootstrap=20)
    raw = answer.table.set_index("figure")
    demand = raw.loc["CPU per operation (service demand)"]
    assert demand["estimate"] == pytest.approx(0.1) and demand["low"] == pytest.approx(demand["high"])
    cells = {row[0]: row[2:] for row in answer.capacity_table().cells()}
    assert cells["CPU per operation (service demand)"] == ["0.100", "—", "—"]
    # the capacity figures' intervals carry the CPU per operation's possible change up to saturation: they have a
    # width even where the noise has none, and the table shows it
    spare = raw.loc["spare fraction"]
    assert spare["low"] < spare["estimate"] < spare["high"]
    assert cells["spare fraction"][1:] == [f"{spare['low']:.1f}", f"{spare['high']:.1f}"]
