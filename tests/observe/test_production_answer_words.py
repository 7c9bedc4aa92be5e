"""The production answer (capmodel.plan.production) in words, checked as wording: its figures in bold, the latency
sentence for a target reached, met at the peak or unreachable, each reason and "already" said once, no ``nan``,
``None`` or ``inf``, sentences that start with a capital and none after a colon, the cores sentence for one core and
for many, a peak at one operation in the singular, and the capacity table's cells (one format per row, "past the
target now" for a runway of zero, an interval of no width left out). Which method answers and its figures are
checked on the result object in test_production_answer.py."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from capmodel.models.usl.latency_form import LatencyFit
from capmodel.plan.production import production_answer
from capmodel.plan.usl_observed import usl_verdict
from tests.observe.test_production_answer import (
    D_S,
    KNEE,
    LAMBDA,
    LIGHT,
    N_STAR,
    n_at_latency,
    observed,
    x_of,
)

UNREADABLE = re.compile(r"\b(nan|None|inf)\b")


def test_the_usl_answer_states_its_figures_in_bold():
    samples, curve = observed(KNEE)
    text = production_answer(samples, curve, cores=1, latency_target_ms=2.0, monthly_growth=0.05, bins=None,
                             n_bootstrap=20).describe()
    # the latency target's throughput and the peak, from the USL's definition
    assert f"**{float(x_of(n_at_latency(0.002))):,.0f} ops/s**" in text
    assert f"**{float(x_of(N_STAR)):,.0f} ops/s**" in text


def test_an_answer_no_method_can_give_says_each_reason_once():
    samples, curve = observed(LIGHT)
    cores = 0.02 + D_S * float(np.quantile(curve["throughput"], 0.95)) * 0.5     # half the CPU the busiest used
    answer = production_answer(samples, curve, cores=cores, monthly_growth=0.05, n_bootstrap=10)
    text = answer.describe()
    assert text.count("probably wrong") == 1                     # each reason said once
    assert "neither method can state a capacity" not in text      # the reasons themselves say it
    knee = next(r for r in answer.evidence.reasons if r.code == "knee_not_reached")
    assert f"the fitted peak at {answer.usl.peak_concurrency:.2g} operations lies" in knee.message
    assert not UNREADABLE.search(text)


def test_the_latency_sentence_for_a_target_met_at_the_peak_or_unreachable():
    samples, curve = observed(KNEE)
    r_peak_ms = N_STAR / float(x_of(N_STAR)) * 1000.0                  # 2.9 ms at the nose
    loose = production_answer(samples, curve, latency_target_ms=3 * r_peak_ms, bins=None, n_bootstrap=10).describe()
    assert "reaches the" not in loose and "up to the peak" in loose
    tight = production_answer(samples, curve, latency_target_ms=0.5, bins=None, n_bootstrap=10).describe()
    assert "no load meets it" in tight and "reaches the" not in tight


def test_the_lower_bound_alone_reads_without_nan():
    no_cpu = production_answer(*observed(LIGHT, cpu=False), n_bootstrap=10)
    text = no_cpu.describe()
    assert no_cpu.capacity_error in text and not UNREADABLE.search(text)      # without a laws verdict: why


def test_the_laws_answer_says_past_the_plan_once():
    # the bundled FTDC sample runs 17% above its plan: 'already' and 'reached' are not said twice over
    from capmodel.observe.observation import observe_ftdc

    observation = observe_ftdc("data/ftdc_sample/diagnostic.data")
    answer = production_answer(observation.samples, observation.curve, monthly_growth=0.05, bins=None, n_bootstrap=20)
    assert answer.spare_fraction.estimate < 0 and answer.runway_months.estimate == 0     # past the plan: no runway
    text = answer.describe()
    assert text.count("already") == 1 and "target is already reached" not in text


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
