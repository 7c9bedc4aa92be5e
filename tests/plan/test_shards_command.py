"""``capmodel shards`` end to end through capmodel.cli.main: the bundled DocumentDB study (AWS post, seed 004_: "over a
million inserts per second on the 16-shard elastic cluster", 1/2/4/8/16 shards driven by 128/128/256/512/1,024
client processes), assumed and fitted USL over shard count, and bad input (exit 2, one line on stderr).

Expected shard counts are found here by walking the closed-form USL X(s) = X1 s / (1 + sigma (s-1) + kappa s (s-1)),
independently of the planner's quadratic solution."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.cli import main

ROW_KEYS = {"target_rate", "shards", "throughput", "clients", "reachable", "reason", "efficiency"}


def usl_x(s, per_shard, sigma, kappa):
    return per_shard * s / (1 + sigma * (s - 1) + kappa * s * (s - 1))


def smallest_reaching(target, per_shard, sigma, kappa, limit):
    return next((s for s in range(1, limit + 1) if usl_x(s, per_shard, sigma, kappa) >= target), None)


def run_json(capsys, *argv):
    assert main(["shards", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def fails(capsys, *argv):
    assert main(["shards", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def test_no_inputs_reproduces_the_documentdb_post(capsys):
    out = run_json(capsys)
    assert out["source"].startswith("DocumentDB")
    assert out["model"]["per_shard_throughput"] == pytest.approx(1_000_000 / 16)
    assert (out["model"]["sigma"], out["model"]["kappa"], out["model"]["max_shards"]) == (0, 0, 32)
    [row] = out["rows"]
    assert ROW_KEYS <= set(row)
    # 16 shards x 62,500 = 1,000,000; the post's 64 client processes per shard -> 1,024
    assert row["target_rate"] == 1_000_000 and row["shards"] == 16 and row["clients"] == 1024
    assert row["throughput"] == pytest.approx(1_000_000) and row["efficiency"] == pytest.approx(1.0)
    assert row["reachable"] is True and row["reason"] is None


def test_no_inputs_runs_the_study_and_says_so(capsys):
    out = run_json(capsys)
    assert out["source"] == "DocumentDB elastic-cluster insert benchmark (bundled)"
    # 1,000,000 / 62,500 = 16 shards, 64 clients each
    row = out["rows"][0]
    assert (row["target_rate"], row["shards"], row["linear_shards"], row["throughput"], row["efficiency"],
            row["clients"]) == (1_000_000, 16, 16, 1_000_000, 1.0, 1024)


def test_router_contention_needs_19_shards(capsys):
    out = run_json(capsys, "--target-rate", "1000000", "--per-shard-throughput", "62500", "--sigma", "0.01")
    [row] = out["rows"]
    assert usl_x(18, 62_500, 0.01, 0) < 1_000_000 <= usl_x(19, 62_500, 0.01, 0)
    assert row["shards"] == 19 and row["throughput"] == pytest.approx(usl_x(19, 62_500, 0.01, 0))
    assert row["efficiency"] == pytest.approx(1 / 1.18) and row["linear_shards"] == 16
    assert row["clients"] == 64 * 19


def test_several_targets_and_unreachable_beyond_the_peak(capsys):
    sigma, kappa = 0.01, 0.0005
    out = run_json(capsys, "--target-rate", "500000", "1000000", "1300000", "--per-shard-throughput", "62500",
                   "--sigma", str(sigma), "--kappa", str(kappa), "--max-shards", "100")
    rows = {r["target_rate"]: r for r in out["rows"]}
    for target in (500_000, 1_000_000):
        assert rows[target]["shards"] == smallest_reaching(target, 62_500, sigma, kappa, 100)
        assert rows[target]["clients"] == max(128, 64 * rows[target]["shards"])
    # the curve peaks near sqrt(0.99 / 0.0005) = 44.5 shards below 1.3 M: no count up to 100 reaches it
    best = max(usl_x(s, 62_500, sigma, kappa) for s in range(1, 101))
    assert best < 1_300_000
    beyond = rows[1_300_000]
    assert beyond["reachable"] is False and beyond["shards"] is None and beyond["throughput"] is None
    assert "peaks at" in beyond["reason"] and f"{best:,.0f}" in beyond["reason"]
    assert out["model"]["peak_shards"] == pytest.approx(math.sqrt(0.99 / 0.0005))


def test_more_shards_than_the_limit_is_unreachable(capsys):
    # sigma = 0.05: s (62,500 - 50,000) >= 950,000 -> 76 shards, above the 32 an elastic cluster allows
    out = run_json(capsys, "--sigma", "0.05")
    [row] = out["rows"]
    assert smallest_reaching(1_000_000, 62_500, 0.05, 0, 1000) == 76
    assert row["reachable"] is False and "76 shards" in row["reason"] and "32" in row["reason"]


def test_clients_by_littles_law(capsys):
    # 1,000,000 inserts/s in batches of 1,000 with 250 ms per batch: 1,000 batches/s x 0.25 s = 250 in flight
    out = run_json(capsys, "--batch-latency-ms", "250", "--batch-size", "1000")
    assert out["rows"][0]["clients"] == 250 and out["model"]["clients_per_shard"] is None


def test_fitted_curve_over_shard_count(tmp_path, capsys):
    sigma, kappa, per_shard = 0.02, 0.0004, 55_000.0
    shards = np.array([1, 2, 4, 6, 8, 12, 16, 24, 32], dtype=float)
    curve = tmp_path / "elastic.csv"
    pd.DataFrame({"shards": shards, "inserts_per_s": usl_x(shards, per_shard, sigma, kappa)}).to_csv(curve,
                                                                                                    index=False)
    out = run_json(capsys, "--curve", str(curve), "--concurrency", "shards", "--throughput", "inserts_per_s",
                   "--target-rate", "590000", "--bootstrap", "50")
    model = out["model"]
    assert out["source"] == str(curve) and model["basis"].startswith(f"fitted to {curve}")
    assert model["per_shard_throughput"] == pytest.approx(per_shard, rel=1e-4)
    assert model["sigma"] == pytest.approx(sigma, rel=1e-3) and model["kappa"] == pytest.approx(kappa, rel=1e-3)
    [row] = out["rows"]
    expected = smallest_reaching(590_000, per_shard, sigma, kappa, 32)
    # the target is not on a knife edge: the fitted and the true curve agree on the count
    assert usl_x(expected - 1, per_shard, sigma, kappa) < 0.99 * 590_000 < 590_000 * 1.01 < usl_x(
        expected, per_shard, sigma, kappa)
    assert row["shards"] == expected == 15
    assert row["shards_low"] <= row["shards"] <= row["shards_high"]


CURVE = ["--curve", "tests/fixtures/curve_threads.csv", "--concurrency", "threads", "--throughput", "ops_per_sec"]


@pytest.mark.parametrize("argv, words", [
    (["--target-rate", "-5"], "target rates: every value must be a number > 0"),
    (["--per-shard-throughput", "0"], "per-shard throughput must be a number > 0"),
    (["--sigma", "-0.1"], "sigma must be a number >= 0"),
    (["--max-shards", "-3"], "max shards must be an integer from 1 to 1,000,000, got -3"),
    (["--curve", "/nonexistent/shards.csv"], "/nonexistent/shards.csv"),
    ([*CURVE, "--sigma", "0.01"], "do not also give sigma"),
    ([*CURVE, "--kappa", "0", "--per-shard-throughput", "5"], "do not also give per-shard throughput, kappa"),
    (["--concurrency", "shards"], "give --curve FILE"),
    (["--batch-latency-ms", "100", "--clients-per-shard", "32"], "do not also give clients per shard"),
    # every number is checked once, by the planning layer (capmodel.plan.shards.SHARD_CONSTRAINTS); its message
    # reaches the user whole: the figure, what it must be, what was given
    (["--target-rate", "1e6", "nan"], "target rates: every value must be a number > 0 (from a trillionth to a quadrillion), got nan"),
    (["--target-rate", "inf"], "target rates: every value must be a number > 0 (from a trillionth to a quadrillion), got inf"),
    (["--target-rate", "1e16"], "target rates: every value must be a number > 0 (from a trillionth to a quadrillion), got 10,000,000,000,000,000"),
    (["--per-shard-throughput", "-1"], "per-shard throughput must be a number > 0 (from a trillionth to a quadrillion), got -1"),
    (["--sigma", "1"], "sigma must be a number >= 0 and below 1 (contention of 1 means no scaling at all), got 1"),
    (["--kappa", "1.5"], "kappa must be a number from 0 to 1, got 1.5"),
    (["--kappa=-inf"], "kappa must be a number from 0 to 1, got -inf"),
    (["--batch-size", "0"], "batch size must be an integer from 1 to 1,000,000, got 0"),
    (["--batch-size", "1000001"], "batch size must be an integer from 1 to 1,000,000, got 1000001"),
    (["--batch-latency-ms", "0"], "batch latency (ms) must be a number > 0 (from a trillionth to a quadrillion), got 0"),
    (["--clients-per-shard", "0"], "clients per shard must be an integer from 1 to 1,000,000, got 0"),
    (["--min-clients", "-4"], "min clients must be an integer from 1 to a billion, got -4"),
    ([*CURVE, "--bootstrap", "-1"], "bootstrap must be an integer from 0 to 100,000, got -1"),
    ([*CURVE, "--level", "1"], "level must be a number > 0 and < 1, got 1"),
    ([*CURVE, "--level", "0"], "level must be a number > 0 and < 1, got 0"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, words):
    assert words in fails(capsys, *argv)


@pytest.mark.parametrize("kwargs, message", [
    ({"target_rates": [True]}, "target rates: every value must be a number > 0 (from a trillionth to a quadrillion), got True"),
    ({"target_rates": "1000"}, "target rates must be a list of values, each a number > 0"),
    ({"per_shard_throughput": "fast"}, "per-shard throughput must be a number > 0 (from a trillionth to a quadrillion), got 'fast'"),
    ({"sigma": True}, "sigma must be a number >= 0 and below 1"),
    ({"batch_size": 10.5}, "batch size must be an integer from 1 to 1,000,000, got 10.5"),
    ({"batch_size": "1000"}, "batch size must be an integer from 1 to 1,000,000, got '1000'"),
    ({"scenarios": [0.0, 1.2]}, "scenarios: every value must be a number >= 0 and below 1"),
])
def test_the_python_api_refuses_the_same_way(kwargs, message):
    from capmodel.errors import PlanError
    from capmodel.plan import plan_shard_study

    with pytest.raises(PlanError) as caught:
        plan_shard_study(**kwargs)
    assert str(caught.value).startswith(message)


def test_numbers_as_text_and_numpy_are_read_as_numbers_and_the_callers_list_is_untouched():
    from capmodel.plan import plan_shard_study

    rates = [np.float64(500_000.0), "250000"]
    study = plan_shard_study(rates, per_shard_throughput=np.int64(62_500), batch_size=np.int64(1000))
    assert [row["target_rate"] for row in study.rows] == [500_000.0, 250_000.0]
    assert [row["shards"] for row in study.rows] == [500_000 // 62_500, 250_000 // 62_500]   # linear: 8 and 4
    assert rates == [np.float64(500_000.0), "250000"]


def test_unknown_curve_column(tmp_path, capsys):
    curve = tmp_path / "elastic.csv"
    curve.write_text("shards,inserts_per_s\n1,60000\n2,118000\n4,230000\n8,430000\n")
    err = fails(capsys, "--curve", str(curve), "--concurrency", "nodes", "--throughput", "inserts_per_s")
    assert str(curve) in err and "'nodes'" in err


def test_an_unreachable_row_keeps_its_linear_estimate(capsys):
    # sigma = 0.05 needs 76 shards (above the 32 limit); the linear estimate 1,000,000 / 62,500 = 16 still holds
    out = run_json(capsys, "--sigma", "0.05")
    assert out["rows"][0]["reachable"] is False and out["rows"][0]["linear_shards"] == 16


@pytest.mark.parametrize("counts, row, shown", [
    ([1, 1.5, 2, 4], 2, "1.5"),      # a fraction between whole counts
    ([0.5, 1, 2, 4], 1, "0.5"),      # below one shard
    ([1, 2, 4, 7.999], 4, "7.999"),  # nearly whole is not whole
])
def test_a_shard_count_that_is_not_a_whole_number_is_refused_naming_its_row(tmp_path, capsys, counts, row, shown):
    curve = tmp_path / "elastic.csv"
    pd.DataFrame({"shards": counts, "inserts_per_s": [60_000.0 * c for c in counts]}).to_csv(curve, index=False)
    err = fails(capsys, "--curve", str(curve), "--concurrency", "shards", "--throughput", "inserts_per_s")
    assert str(curve) in err and f"row {row}:" in err and shown in err and "whole number >= 1" in err


def test_the_peak_agrees_with_its_shard_count(capsys):
    # X(s) = X1 s / (1 + sigma (s-1) + kappa s (s-1)) peaks at s* = sqrt((1 - sigma) / kappa): sigma 0.5, kappa 1
    # puts it below one shard (the model line read "at 1 shards"); sigma 0.01, kappa 0.001 at sqrt(990) = 31.46
    assert run_json(capsys, "--sigma", "0.01", "--kappa", "0.001")["model"]["peak_shards"] == pytest.approx(
        990 ** 0.5)
    assert run_json(capsys, "--sigma", "0.5", "--kappa", "1")["model"]["peak_shards"] == 1
