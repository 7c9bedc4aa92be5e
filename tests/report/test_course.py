"""Report 01's course (capmodel.report.course): each exercise's check accepts the right answer and refuses wrong ones,
the right answers being computed here from the bundled CSV files and the textbook formulas, not read from the
module; the MVA recursion agrees with exact MVA; the κ slider's stops are exact; and the rendered page shows the
solutions when asked and hides them otherwise."""
from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import curve_fit

from capmodel._bundled import bundled_dir
from capmodel.report.course import ANSWER_TOLERANCE, Exercise

DATA = bundled_dir("data")


@pytest.fixture(scope="module")
def course():
    from capmodel.report.methodology_report import methodology_report

    return methodology_report().course   # the notebook's defaults: plgm_workload1, 54% reads, 4 CPUs, upto 128


def _usl(n, sigma, kappa, lambda_):
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


@pytest.fixture(scope="module")
def usl_by_hand():
    """σ, κ, λ fitted here by least squares on the raw plgm workload 1 table (Percona plgm post, workload #1)."""
    raw = pd.read_csv(DATA / "plgm_workload1.csv")
    (sigma, kappa, lambda_), _ = curve_fit(_usl, raw["concurrency"], raw["throughput"], p0=[0.05, 1e-4, 1000])
    return sigma, kappa, lambda_


def _right_and_wrong(exercise: Exercise, truth: float, rel: float = 1e-6):
    assert exercise.answer == pytest.approx(truth, rel=rel)
    for right in (truth, truth * (1 + ANSWER_TOLERANCE / 2), truth * (1 - ANSWER_TOLERANCE / 2), round(truth, 1)):
        feedback = exercise.check(right)
        assert feedback.right is True and "Right" in feedback.text, (right, feedback.text)
    for wrong in (truth * 1.05, truth * 0.9, truth * 1000, -truth, 0.0, float("nan"), float("inf")):
        feedback = exercise.check(wrong)
        assert feedback.right is False and "Right" not in feedback.text, (wrong, feedback.text)
    assert "too high" in exercise.check(truth * 1.05).text and "too low" in exercise.check(truth * 0.9).text


def test_littles_law_with_think_time_is_n_over_x_minus_z(course):
    # plgm workload 1 at 64 threads: 13,548 ops/s (the raw table); Z: the reads' time outside the database
    raw = pd.read_csv(DATA / "plgm_workload1.csv").set_index("concurrency")
    assert raw.loc[64, "throughput"] == 13548
    z_ms = course.mix.parameters.loc["read", "delay_ms"]
    assert 1.0 < z_ms < 1.5
    _right_and_wrong(course.little, 64 / 13548 * 1000 - z_ms)
    # the classic slip: N/X in seconds, minus Z in ms
    assert course.check("little", 64 / 13548 - z_ms).right is False


def test_bottleneck_bound_of_the_mix_is_c_over_its_weighted_demand(course):
    demands = course.mix.parameters["database_demand_ms"]
    # a class alone on 4 processors: c / D_c, the demands table's "largest throughput alone"
    assert 4 / demands["read"] * 1000 == pytest.approx(course.mix.parameters.loc["read", "max_throughput_alone"])
    truth = 4 / (0.54 * demands["read"] + 0.46 * demands["write"]) * 1000
    _right_and_wrong(course.utilization, truth)
    assert 8_600 < truth < 8_800   # section 7 predicts the 54/46 mix's ceiling at 8,704 ops/s
    # forgetting the 4 processors is a quarter of the answer
    assert course.check("utilization", truth / 4).right is False


def test_usl_peak_is_the_square_root_of_one_minus_sigma_over_kappa(course, usl_by_hand):
    sigma, kappa, _ = usl_by_hand
    truth = math.sqrt((1 - sigma) / kappa)
    assert 60 < truth < 70
    _right_and_wrong(course.peak, truth, rel=2e-3)


def test_mva_recursion_by_hand_matches_exact_mva_and_the_next_step_is_checked(course, usl_by_hand):
    from capmodel.models.queueing.mva import exact_mva

    sigma, _, lambda_ = usl_by_hand
    d, z = sigma / lambda_, (1 - sigma) / lambda_   # seconds: the USL's serial demand and parallel time
    queue, by_hand = 0.0, []
    for n in range(1, 8):                            # R = D(1 + Q(n-1)), X = n/(Z + R), Q = X R
        residence = d * (1 + queue)
        x = n / (z + residence)
        queue = x * residence
        by_hand.append(x)
    steps = course.mva_steps
    assert steps["n"].tolist() == list(range(1, 8))
    assert steps["throughput"].to_numpy() == pytest.approx(by_hand, rel=2e-3)
    exact = exact_mva({"serial": course.serial_demand_ms / 1000}, think_time=course.parallel_time_ms / 1000,
                      populations=7)["throughput"].to_numpy()
    assert course.mva_check["exact_mva"].to_numpy() == pytest.approx(exact, rel=1e-12)
    assert course.mva_check["by_hand"].to_numpy() == pytest.approx(exact, rel=1e-12)
    _right_and_wrong(course.mva_exercise, by_hand[6], rel=2e-3)
    # the table stops one step short of the exercise's answer
    assert not any(f"{round(by_hand[6]):,}" in cell for cell in re.findall(r"<td[^>]*>([^<]*)</td>",
                                                                            course.mva_table()._repr_html_()))


def test_load_dependent_bound_falls_with_the_population_and_mva_meets_it(course, usl_by_hand):
    sigma, kappa, lambda_ = usl_by_hand
    truth = lambda_ / (sigma + kappa * 127)          # 1 / D(128), D(N) = (σ + κ(N − 1)) / λ
    _right_and_wrong(course.exercises["load_dependent"], truth, rel=2e-3)
    frame = course.mva_with_bound
    assert (np.diff(frame["bottleneck bound 1/D(N)"]) < 0).all()
    assert (frame["MVA (exact)"] <= frame["bottleneck bound 1/D(N)"] * (1 + 1e-9)).all()
    words = course.why_throughput_falls
    top = frame.loc[frame["MVA (exact)"].idxmax()]
    assert f"rises to {round(top['MVA (exact)']):,} ops/s at {int(top['concurrency'])} clients" in words
    assert f"falls to {round(frame['MVA (exact)'].iloc[-1]):,} ops/s at 128" in words


def test_no_answer_yet_and_text_answers_are_said_so_and_solutions_follow_the_switch(course):
    exercise = course.little
    assert exercise.check(None).right is None and "No answer yet" in exercise.check(None).text
    assert exercise.check("3.5").right is False and "Give a number" in exercise.check("3.5").text
    assert exercise.check(True).right is False
    hidden = exercise.check(exercise.answer * 2, solutions=False).text
    shown = exercise.check(exercise.answer * 2, solutions=True).text
    assert "Solution" not in hidden and "Solution" in shown and "Not yet" in shown
    assert course.check("little", None, solutions=True).text == exercise.solution()   # a teacher's copy
    assert "**3.51 ms**" in exercise.solution()


def test_kappa_slider_stops_are_exact_and_include_the_fitted_value():
    from capmodel.plots.methodology import term_steps

    steps = term_steps(0.000213390, 1e-6, 0.1)
    values = [v for _, v in steps]
    assert 0.0005 in values and 0.0002 in values and 0.000213390 in values and values[0] == 0.0
    labels = dict((v, label) for label, v in steps)
    assert labels[0.0005] == "0.0005" and labels[0.000213390] == "0.000213 (fitted)"
    assert values == sorted(values) and min(v for v in values if v) == 1e-6 and max(values) == 0.1


@pytest.mark.notebooks
def test_rendered_page_shows_the_solutions_only_when_asked(tmp_path, course):
    from capmodel.report.render import render

    render(["01_methodology"], tmp_path / "teacher", {"01_methodology": {"upto": 128}}, jobs=1)
    render(["01_methodology"], tmp_path / "student", {"01_methodology": {"upto": 128, "solutions": False}}, jobs=1)
    teacher = (tmp_path / "teacher" / "01_methodology.html").read_text()
    student = (tmp_path / "student" / "01_methodology.html").read_text()
    for name, exercise in course.exercises.items():
        answer = re.search(r"\*\*([^*]+)\*\*\.$", exercise.solution()).group(1)   # "8,704 ops/s"
        # the solution's working and answer, as the page writes them (the headline states some figures too)
        solution = f"{html.escape(exercise.working)} = <strong>{answer}</strong>"
        assert solution in teacher, name
        assert html.escape(exercise.working) not in student, name
        question = exercise.question.split(",")[0].split("`")[0]
        assert question in teacher and question in student, name
    assert teacher.count("<strong>Solution</strong>") == 5 and "Solution" not in student
    assert student.count("No answer yet") == 5


def test_the_three_terms_figure_draws_the_fitted_terms_the_headline_states():
    # the page showed "sigma = 0.05, kappa = 0.0005" (the illustration's own inputs) under a headline saying
    # "σ = 0.0563, κ = 0.000213": the figure now draws the fit, and no parameter claims otherwise
    import json

    from capmodel.plots.methodology import usl_terms_figure
    from capmodel.report import notebooks
    from capmodel.report.methodology_report import methodology_report
    from capmodel.report.params import notebook_parameters

    path = notebooks.path("01_methodology")
    assert not {"sigma", "kappa", "lambda_"} & set(notebook_parameters(path))
    assert notebook_parameters(path)["solutions"] is True     # the rendered report is the teacher's copy
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert any(c.startswith("usl_terms_figure(fit.sigma, fit.kappa, fit.lambda_") for c in cells)
    fit = methodology_report().fit
    usl = usl_terms_figure(fit.sigma, fit.kappa, fit.lambda_).data[2]
    assert usl.name == "USL: sigma = 0.0563, kappa = 0.000213"
    assert "σ = 0.0563, κ = 0.000213" in methodology_report().details
