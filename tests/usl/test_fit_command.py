"""``capmodel fit`` end to end through capmodel.cli.main: the JSON contract (DESIGN.md, README "Fitting models"),
the R usl reference data, and bad input (exit 2, one line on stderr naming file/column/row, no traceback)."""
import json

import pandas as pd
import pytest

from capmodel import datasets
from capmodel.cli import main

KEYS = {"model", "sigma", "kappa", "lambda", "peak_concurrency", "peak_throughput", "ceiling", "r2", "n_points", "ci",
        "warnings"}


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def fails(capsys, *argv):
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def write(tmp_path, text, name="sweep.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_json_contract_on_specsdm91(capsys):
    out = run_json(capsys, "fit", str(datasets.path("usl_specsdm91")), "--json")
    assert KEYS <= set(out)
    # R usl, tests/summary.Rout.save (smoeding/usl): alpha 2.773e-02, beta 1.044e-04, gamma 9.000e+01, R^2 0.9896
    assert out["model"] == "usl" and out["n_points"] == 7
    assert out["sigma"] == pytest.approx(2.773e-02, rel=5e-4) and out["kappa"] == pytest.approx(1.044e-04, rel=5e-4)
    assert out["lambda"] == pytest.approx(90.00, rel=5e-4) and out["r2"] == pytest.approx(0.9896, rel=5e-4)
    # tests/limit-scalability.Rout.save: 3245.589; tests/peak-scalability.Rout.save: 97 (2 digits)
    assert out["ceiling"] == pytest.approx(3245.589, rel=1e-4) and float(f"{out['peak_concurrency']:.2g}") == 97
    assert out["peak_throughput"] > max(1853.2, 1878.8)
    # one interval per parameter and per figure, each its range over the likelihood region
    assert set(out["ci"]) == {"sigma", "kappa", "lambda", "peak_throughput", "peak_concurrency", "ceiling"}
    assert out["interval_method"].startswith("profile likelihood")
    for name in ("sigma", "kappa", "lambda", "peak_throughput", "ceiling"):
        low, high = out["ci"][name]
        assert low <= out[name] < high, name
    assert out["ci"]["kappa"][0] == 0.0                     # κ = 0 (Amdahl's law) is an edge of the family
    # the Amdahl curve, which has no peak, is not rejected at the family's 99% edge test (its residual sum of squares
    # against the USL's within 1 + F(1, m - 3; 0.99) / (m - 3)): the peak's concurrency has no upper end (null)
    from scipy.stats import f

    from capmodel.models.usl.fit import fit_usl
    from capmodel.models.usl.rivals import fit_amdahl

    curve = datasets.load_curve("usl_specsdm91")
    usl, amdahl = fit_usl(curve), fit_amdahl(curve)
    rss = {m: float(((m.throughput - m.fitted) ** 2).sum()) for m in (usl, amdahl)}
    assert rss[amdahl] / rss[usl] <= 1 + f.ppf(0.99, 1, 4) / 4
    low, high = out["ci"]["peak_concurrency"]
    assert low < out["peak_concurrency"] and high is None
    assert out["warnings"] == []


def test_amdahl_has_no_peak(capsys):
    out = run_json(capsys, "fit", str(datasets.path("usl_raytracer")), "--model", "amdahl", "--json")
    assert out["model"] == "amdahl" and out["kappa"] == 0 and out["peak_concurrency"] is None
    # R usl, tests/confint.Rout.save: raytracer alpha 0.0578, gamma 21.8488 (beta 0, so Amdahl is the same fit)
    assert out["sigma"] == pytest.approx(0.0578, rel=1e-3) and out["lambda"] == pytest.approx(21.8488, rel=1e-5)
    assert out["ceiling"] == pytest.approx(out["lambda"] / out["sigma"]) == out["peak_throughput"]
    assert out["ci"]["kappa"] == [0.0, 0.0]


def test_auto_reports_the_selection(capsys):
    out = run_json(capsys, "fit", str(datasets.path("usl_raytracer")), "--model", "auto", "--json")
    assert out["model"] == "amdahl" and out["selection"]["criterion"] == "aicc"
    assert [row["model"] for row in out["selection"]["table"]][0] == "amdahl"


def test_level_changes_the_intervals(capsys):
    path = str(datasets.path("usl_specsdm91"))
    wide = run_json(capsys, "fit", path, "--json", "--level", "0.99")["ci"]["lambda"]
    narrow = run_json(capsys, "fit", path, "--json", "--level", "0.8")["ci"]["lambda"]
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_column_mapping_reads_the_named_columns(capsys, tmp_path):
    # specsdm91 under other column names: R usl-nlxb's alpha 0.0277285 and peak.scalability 97 (see test_fit.py)
    path = write(tmp_path, "threads,ops\n1,64.9\n18,995.9\n36,1652.4\n72,1853.2\n108,1828.9\n144,1775.0\n216,1702.2\n")
    out = run_json(capsys, "fit", path, "--concurrency", "threads", "--throughput", "ops", "--json")
    assert out["sigma"] == pytest.approx(0.0277285, rel=1e-4) and out["recommended_concurrency"] == 97


def test_replicate_weights_option(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,100\n1,104\n2,190\n2,198\n4,350\n4,362\n8,600\n16,820\n")
    out = run_json(capsys, "fit", path, "--weights", "replicates", "--json")
    assert out["n_points"] == 8 and out["kappa"] > 0


def test_missing_file(capsys, tmp_path):
    err = fails(capsys, "fit", str(tmp_path / "nope.csv"))
    assert "nope.csv" in err


def test_missing_column(capsys, tmp_path):
    path = write(tmp_path, "threads,ops\n1,10\n2,19\n4,35\n8,60\n")
    err = fails(capsys, "fit", path, "--concurrency", "threads", "--throughput", "qps")
    assert "sweep.csv" in err and "qps" in err


def test_non_numeric_cell(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,10\n2,abc\n4,35\n8,60\n")
    err = fails(capsys, "fit", path)
    assert "sweep.csv" in err and "'throughput'" in err and "row 2" in err


def test_nan_cell(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,10\n2,19\n4,\n8,60\n")
    err = fails(capsys, "fit", path)
    assert "sweep.csv" in err and "'throughput'" in err and "row 3" in err


def test_concurrency_not_positive(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,10\n0,19\n4,35\n8,60\n")
    err = fails(capsys, "fit", path)
    assert "sweep.csv" in err and "'concurrency'" in err and "row 2" in err and "> 0" in err


def test_too_few_points(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,10\n2,19\n")
    err = fails(capsys, "fit", path)
    assert "sweep.csv" in err and "2 points cannot fit usl" in err


def test_as_many_points_as_parameters_fit_without_intervals(capsys, tmp_path):
    # X(N) = 10 N / (1 + 0.05 (N-1) + 0.002 N (N-1)) at N = 1, 2, 4, written to 12 digits
    x = [10 * n / (1 + 0.05 * (n - 1) + 0.002 * n * (n - 1)) for n in (1, 2, 4)]
    path = write(tmp_path, "concurrency,throughput\n" + "".join(f"{n},{v:.12g}\n" for n, v in zip((1, 2, 4), x)))
    assert main(["fit", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_points"] == 3 and out["sigma"] == pytest.approx(0.05, rel=1e-6)
    assert out["kappa"] == pytest.approx(0.002, rel=1e-6) and out["lambda"] == pytest.approx(10, rel=1e-9)
    assert out["ci"]["sigma"] == [None, None] and out["rse"] is None
    assert any(w.startswith("exactly determined") for w in out["warnings"])


def test_fit_that_fails(capsys, tmp_path):
    path = write(tmp_path, "concurrency,throughput\n1,0\n2,0\n4,0\n8,0\n")
    err = fails(capsys, "fit", path)
    assert "sweep.csv" in err and "every throughput is 0" in err


def test_bad_level(capsys):
    err = fails(capsys, "fit", str(datasets.path("usl_specsdm91")), "--level", "95")
    assert "--level" in err


def test_allow_superlinear_option(capsys, tmp_path):
    # X = 100 N / (1 - 0.02 (N - 1) + 5e-4 N (N - 1)): sigma < 0 is only reachable with the option
    rows = "\n".join(f"{n},{100 * n / (1 - 0.02 * (n - 1) + 5e-4 * n * (n - 1))}" for n in (1, 2, 4, 8, 16, 24, 32, 48))
    path = write(tmp_path, "concurrency,throughput\n" + rows + "\n")
    bounded = run_json(capsys, "fit", path, "--json")
    assert bounded["sigma"] == 0 and any("sigma is at its lower bound" in w for w in bounded["warnings"])
    free = run_json(capsys, "fit", path, "--json", "--allow-superlinear")
    assert free["sigma"] == pytest.approx(-0.02, rel=1e-6) and any("superlinear" in w for w in free["warnings"])


def _cli(*argv):
    from tests.support import cli_run

    proc = cli_run.run(*argv)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fit_on_an_all_client_bound_sweep_prints_no_bare_ceiling():
    # a sweep as `capmodel bench` writes curve.csv, every step flagged client_bound
    sweep = "tests/fixtures/client_bound_sweep/curve.csv"
    for model in ("usl", "amdahl", "auto"):
        answer = json.loads(_cli("fit", sweep, "--model", model, "--json"))
        assert answer["evidence"]["grade"] == "unusable" and answer["evidence"]["reasons"][0]["code"] == "client_bound"
        assert "the server's ceiling is at least the best measured 3,905 ops/s" in answer["supported"]
    record = json.loads(_cli("fit", sweep, "--json"))
    assert KEYS <= set(record)
    assert record["evidence"]["grade"] == "unusable"
    steps = sorted(set(pd.read_csv(sweep)["concurrency"].astype(float)))
    assert record["evidence"]["reasons"][0] == {
        "code": "client_bound", "grade": "unusable", "value": 7.0,
        "next_step": {"levels": steps, "repeats": 1, "text": "measure the client-bound steps again (1, 2, 4, 8, 16, "
                      "32, 64 clients) from a separate client host, with more client processes, or without a "
                      "throughput target"},
        "message": "every one of the 7 steps was client-bound (the load generator, not the server, set the pace): "
                   "the curve describes the client"}
    assert record["evidence"]["next_step"] == record["evidence"]["reasons"][0]["next_step"]
    assert "at least the best measured 3,905 ops/s" in record["supported"]


def test_fit_on_bundled_data_carries_its_verdict():
    import math

    usl = json.loads(_cli("fit", "data/usl_raytracer.csv", "--json"))
    assert usl["evidence"]["grade"] == "weak"
    record = json.loads(_cli("fit", "data/usl_raytracer.csv", "--model", "auto", "--json"))
    assert record["model"] == "amdahl" and record["evidence"]["grade"] in ("sound", "weak")
    assert record["supported"] is None and math.isfinite(record["ceiling"])
    # the USL's κ is 0 here: its answer is the Amdahl ceiling the comparison prefers, inside its stated interval
    low, high = usl["ci"]["peak_throughput"]
    assert usl["kappa"] == 0 and low <= record["ceiling"] <= high


def test_fit_on_an_observed_curve_follows_its_verdict(tmp_path):
    # `capmodel observe --ftdc` on the bundled FTDC sample, then `capmodel fit` on its curve, as the README shows
    import pandas as pd

    from capmodel.models.usl.verdict.curve_rules import BELOW_ONE_SHARE_UNUSABLE

    out = tmp_path / "obs"
    _cli("observe", "--ftdc", "data/ftdc_sample/diagnostic.data", "--out", str(out))
    curve = pd.read_csv(out / "curve.csv")
    record = json.loads(_cli("fit", str(out / "curve.csv"), "--json"))
    codes = [r["code"] for r in record["evidence"]["reasons"]]
    share = float((curve["concurrency"] < 1).mean())
    assert ("below_one" in codes) == (share > 0)
    # an unusable verdict states what the data support instead of a peak or ceiling; a usable one does not
    assert (record["supported"] is None) == (record["evidence"]["grade"] != "unusable")
    if share >= BELOW_ONE_SHARE_UNUSABLE:
        below_one = next(r for r in record["evidence"]["reasons"] if r["code"] == "below_one")
        assert below_one["grade"] == "unusable" and below_one["value"] == pytest.approx(share)
        # what the data support: the server never ran more than the largest concurrency measured
        assert f"never ran more than {curve['concurrency'].max():.3g} operations at once" in record["supported"]
