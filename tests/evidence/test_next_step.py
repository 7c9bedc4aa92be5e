"""A weak or unusable fit's next step works: measuring what it advises, on the same synthetic server, moves the grade
up (unusable to weak or sound, weak to sound) for at least three in four servers, and the advice points the right
way for each case: data that stop before the peak (measure higher), data that start past it (measure lower), and
noisy data around it (repeat the steps near the peak)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.models.evidence import GRADES

SERVERS = 20


def usl(n, sigma, kappa, lambda_):
    n = np.asarray(n, dtype=float)
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


class Server:
    """A synthetic server of known USL truth; each measurement of a step scatters by ``noise`` (multiplicative)."""

    def __init__(self, rng, sigma, kappa, lambda_, noise):
        self.rng, self.params, self.noise = rng, (sigma, kappa, lambda_), noise

    def measure(self, levels, repeats: int = 1) -> pd.DataFrame:
        n = np.repeat(np.asarray(levels, dtype=float), repeats)
        x = usl(n, *self.params) * np.exp(self.rng.normal(0, self.noise, len(n)))
        return pd.DataFrame({"concurrency": n, "throughput": x})


def follow(server: Server, curve: pd.DataFrame):
    """The fit on ``curve``, then the fit after measuring what its verdict's next step advises (with the old rows)."""
    before = capmodel.fit_usl(curve)
    step = before.evidence.next_step
    assert step is not None, before.evidence.describe()
    levels = step.levels
    after = capmodel.fit_usl(pd.concat([curve, server.measure(levels, step.repeats)], ignore_index=True))
    return before, step, after


def rank(grade: str) -> int:
    return GRADES.index(grade)


@pytest.mark.parametrize("case", ["before_the_peak", "past_the_peak", "noisy_near_the_peak"])
def test_following_the_next_step_moves_the_grade(case):
    moved, advice = 0, []
    for seed in range(3 * SERVERS):
        if len(advice) == SERVERS:
            break
        rng = np.random.default_rng([seed, len(case)])
        n_star = float(rng.uniform(60, 120))
        sigma = float(rng.uniform(0.01, 0.08))
        server = Server(rng, sigma, (1 - sigma) / n_star ** 2, float(rng.uniform(500, 2000)),
                        0.1 if case == "noisy_near_the_peak" else 0.03)
        if case == "before_the_peak":
            levels = np.geomspace(2, 0.35 * n_star, 6).round()
        elif case == "past_the_peak":
            levels = np.linspace(1.6 * n_star, 3.5 * n_star, 6).round()
        else:
            levels = np.geomspace(4, 2.5 * n_star, 8).round()
        curve = server.measure(levels)
        if capmodel.fit_usl(curve).evidence.grade == "sound":     # nothing to advise (a quiet noisy draw)
            continue
        before, step, after = follow(server, curve)
        advice.append((step, levels))
        moved += rank(after.evidence.grade) < rank(before.evidence.grade)
    for step, levels in advice:
        if case == "before_the_peak":      # new levels above the data
            assert min(step.levels) > levels.max() and step.repeats == 1, step
        elif case == "past_the_peak":      # new levels below the data
            assert max(step.levels) < levels.min() and step.repeats == 1, step
        else:                              # measured levels repeated, or new ones where the peak was not passed
            assert set(step.levels) <= set(levels.tolist()) or step.repeats == 1, step
    assert len(advice) == SERVERS and moved >= 0.75 * SERVERS, f"{moved} of {len(advice)} moved up"


def test_the_next_step_is_in_the_json_and_the_words():
    """The advice reaches ``--json`` (``evidence.next_step``, with the levels and repeats) and the verdict's words."""
    rng = np.random.default_rng(4)
    server = Server(rng, 0.03, 0.97 / 100 ** 2, 1000.0, 0.03)
    fit = capmodel.fit_usl(server.measure(np.geomspace(2, 30, 6).round()))
    record = fit.evidence.to_json()
    assert record["next_step"]["levels"] and record["next_step"]["repeats"] == 1
    assert record["next_step"]["text"] in fit.evidence.describe()
    assert record["meaning"].startswith(("on curves of known truth", "the answer stands", "the data cannot"))
