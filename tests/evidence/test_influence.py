"""One point ten times off its neighbours decides a fit's answer: the verdict names it
(capmodel.models.usl.verdict.influence)."""
import json

import pytest

from capmodel.cli import main

NS = (1, 2, 4, 8, 16, 32, 64, 128)


def usl(n, lam=1000.0, sigma=0.05, kappa=0.0005):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def write(tmp_path, factors):
    path = tmp_path / "curve.csv"
    path.write_text("concurrency,throughput\n" + "".join(f"{n},{usl(n) * factors.get(n, 1.0):.3f}\n" for n in NS))
    return path


def fit_json(capsys, path):
    assert main(["fit", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("n, factor", [(16, 10.0), (32, 0.1), (8, 10.0), (128, 10.0)])
def test_one_outlier_that_moves_the_answer_is_named(tmp_path, capsys, n, factor):
    """A point 10x (or a tenth) off a smooth USL curve (peak 10,742 ops/s): the fit bends to it and printed a peak the
    other seven points contradict, with reasons (R², interval widths) that never said which point or why."""
    out = fit_json(capsys, write(tmp_path, {n: factor}))
    found = [r for r in out["evidence"]["reasons"] if r["code"] == "single_point"]
    assert len(found) == 1 and found[0]["grade"] == "weak"
    assert f"the point at N = {n} " in found[0]["message"]
    assert found[0]["value"] == pytest.approx(factor, rel=0.02)   # measured over what the other points' USL gives
    assert "10,742 ops/s" in found[0]["message"]                    # the peak of the other seven points


def test_a_smooth_curve_and_a_real_fall_are_not_flagged(tmp_path, capsys):
    """The same curve with 3% scatter, and one whose last point falls to half (a server past its knee: below-the-curve
    points at the end of the range are a retrograde server, not an outlier)."""
    scatter = {n: 1 + 0.03 * (-1) ** i for i, n in enumerate(NS)}
    assert "single_point" not in [r["code"] for r in fit_json(capsys, write(tmp_path, scatter))["evidence"]["reasons"]]
    fall = {128: 0.45}
    assert "single_point" not in [r["code"] for r in fit_json(capsys, write(tmp_path, fall))["evidence"]["reasons"]]
