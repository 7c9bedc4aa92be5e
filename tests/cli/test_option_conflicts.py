"""Option edge values and contradictions, through capmodel.cli.main: a negative seed, a latency target without a
latency column, options that apply only with another (nodes' assumed scaling and bootstrap, shards' and mva's
interval options, bench's adaptive options) are refused naming them; what a measured curve says against an answer
(a linear node count short on it, a batch latency in seconds) is said.
"""
import json

import pytest

from capmodel.cli import main
from capmodel.errors import InputError
from tests.plan.test_latency_objective import write_curves


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_negative_seed_is_refused_not_a_numpy_traceback(tmp_path, capsys, json_flag):
    """plan --curves --seed -1 raised numpy's 'expected non-negative integer' from SeedSequence, a traceback."""
    catalog, curves = write_curves(tmp_path)
    code = main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "0.5",
                 "--seed", "-1", *json_flag])
    err = capsys.readouterr()
    assert code == 2
    text = json.loads(err.out)["error"] if json_flag else err.err
    assert "seed" in text and "-1" in text and "Traceback" not in text and "numpy" not in text


def test_negative_seed_in_the_python_api(tmp_path):
    import capmodel

    curve = capmodel.read_curve(write_curves(tmp_path)[1]).query("system == 'big'")
    fit = capmodel.fit_usl(curve)
    with pytest.raises(InputError, match="seed must be a whole number >= 0, got -1"):
        fit.bootstrap(10, seed=-1)
    assert len(fit.bootstrap(10, seed=2**70).samples) == 10   # numpy takes any whole number >= 0


@pytest.mark.parametrize("latency", [["--latency-p95-ms", "3"], ["--latency-increase", "0.05"]])
def test_no_latency_with_a_latency_target_is_refused(capsys, latency):
    """plan --no-latency --latency-p95-ms 3 planned with no latency objective: the target the user typed was
    silently dropped ('Objectives: utilization <= 80%')."""
    assert main(["plan", "--no-latency", *latency]) == 2
    err = capsys.readouterr().err
    assert "--no-latency" in err and latency[0] in err and len(err.strip().splitlines()) == 1


def node_curve(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text("nodes,ops\n1,6000\n2,11000\n4,20000\n8,33000\n")
    return ["--node-curve", str(path), "--concurrency", "nodes", "--throughput", "ops"]


@pytest.mark.parametrize("assumed", [["--sigma", "0.1"], ["--kappa", "0.001"], ["--sigma", "0"]])
def test_nodes_assumed_scaling_beside_a_node_curve_is_refused(tmp_path, capsys, assumed):
    """nodes --sigma 0.1 --node-curve FILE printed the fitted sigma (0.05842) as if the typed one did not exist."""
    code = main(["nodes", "--reference-ops", "100000", "--candidate-ops", "20000", "--reference-nodes", "4",
                 *assumed, *node_curve(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and assumed[0] in err and "--node-curve" in err


def test_nodes_bootstrap_without_a_node_curve_is_refused(capsys):
    """nodes --bootstrap 50 without --node-curve: no interval was drawn, and nothing said the option did nothing."""
    assert main(["nodes", "--reference-ops", "100000", "--candidate-ops", "20000", "--bootstrap", "50"]) == 2
    assert "--bootstrap" in capsys.readouterr().err


def test_nodes_defaults_still_hold(tmp_path, capsys):
    """Without the options: sigma = kappa = 0 assumed (20 nodes = 4 x 100,000 / 20,000), 200 bootstrap samples."""
    assert main(["nodes", "--reference-ops", "100000", "--candidate-ops", "20000", "--reference-nodes", "4",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["usl"]["sigma"] == 0 and out["usl"]["kappa"] == 0 and out["rows"][0]["nodes_usl"] == 20
    assert main(["nodes", "--reference-ops", "100000", "--candidate-ops", "20000", "--reference-nodes", "4",
                 *node_curve(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["usl"]["bootstrap"] == 200


@pytest.mark.parametrize("interval", [["--bootstrap", "50"], ["--level", "0.9"]])
def test_shards_interval_options_without_a_curve_are_refused(capsys, interval):
    """shards --bootstrap 50 (or --level 0.9) on assumed scaling printed the bundled answer with no interval and no
    word that the option did nothing."""
    assert main(["shards", *interval]) == 2
    err = capsys.readouterr().err
    assert interval[0] in err and "--curve" in err


def test_shards_level_with_no_bootstrap_is_refused(tmp_path, capsys):
    path = tmp_path / "shards.csv"
    path.write_text("shards,ops\n1,60000\n2,118000\n4,230000\n8,440000\n")
    curve = ["--curve", str(path), "--concurrency", "shards", "--throughput", "ops"]
    assert main(["shards", *curve, "--bootstrap", "0", "--level", "0.9"]) == 2
    assert "--level" in capsys.readouterr().err
    assert main(["shards", *curve, "--bootstrap", "30", "--level", "0.9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["level"] == 0.9


def test_shards_bad_interval_value_is_named_before_its_applicability(capsys):
    assert main(["shards", "--level", "1"]) == 2
    assert "level must be" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--bootstrap", "10"], ["--level", "0.5"]])
def test_mva_interval_options_with_a_model_file_are_refused(tmp_path, capsys, option):
    """mva MODEL.yaml --bootstrap 10 (or --level 0.5) solved the file and printed no interval: the options belong to
    --observed, as --cores, --scale and --rates (already refused) do."""
    model = tmp_path / "model.yaml"
    model.write_text("classes:\n  web: {population: 20, think_time: 1.0}\nstations:\n  cpu: {demands: {web: 0.05}}\n")
    assert main(["mva", str(model), *option]) == 2
    err = capsys.readouterr().err
    assert option[0] in err and "--observed" in err
    assert main(["mva", str(model), "--json"]) == 0   # the file alone still solves: exact MVA, one queue
    queue = 0.0
    for n in range(1, 21):   # Reiser & Lavenberg's recursion: R = D (1 + Q), X = n / (Z + R), Q = X R
        response = 0.05 * (1 + queue)
        throughput = n / (1.0 + response)
        queue = throughput * response
    assert json.loads(capsys.readouterr().out)["classes"][0]["throughput"] == pytest.approx(throughput, rel=1e-9)


@pytest.mark.parametrize("option", [["--tolerance", "0.05"], ["--max-steps", "5"]])
def test_bench_adaptive_options_without_adaptive_are_refused(tmp_path, capsys, option):
    """bench --tolerance 0.05 (or --max-steps 5) without --adaptive went on to measure every --concurrency value:
    the option steered nothing. Refused before any server is reached (the URI has no server)."""
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--concurrency", "1,2", *option,
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and option[0] in err and "--adaptive" in err and "cannot reach" not in err


def test_nodes_linear_count_short_on_the_measured_curve_is_said(tmp_path, capsys):
    """nodes with a measured node curve printed 'nodes, linear 12' beside 'nodes, USL 24' with the row 'sound': by
    the user's own curve 12 nodes deliver 43,023 ops/s, 28% short of the 60,000 wanted."""
    path = tmp_path / "nodes.csv"
    path.write_text("nodes,ops\n1,6000\n2,11000\n4,20000\n8,33000\n16,50000\n")
    assert main(["nodes", "--reference-ops", "60000", "--candidate-ops", "20000", "--reference-nodes", "4",
                 "--node-curve", str(path), "--concurrency", "nodes", "--throughput", "ops", "--bootstrap", "0",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row, sigma = out["rows"][0], out["usl"]["sigma"]
    assert out["usl"]["kappa"] == 0 and row["nodes_linear"] == 12
    delivered = 20000 * (12 / (1 + sigma * 11)) / (4 / (1 + sigma * 3))   # Amdahl through the measured 4-node rate
    short = [r for r in row["evidence"]["reasons"] if r["code"] == "linear_short"]
    assert len(short) == 1 and short[0]["value"] == pytest.approx(delivered / 60000, rel=1e-9)
    assert "linear_short" in [r["code"] for r in out["evidence"]["reasons"]]


def test_nodes_linear_count_on_a_linear_curve_is_not_flagged(tmp_path, capsys):
    path = tmp_path / "nodes.csv"
    path.write_text("nodes,ops\n1,5000\n2,9950\n4,19800\n8,39300\n16,77900\n")   # 3% below linear at 16
    assert main(["nodes", "--reference-ops", "60000", "--candidate-ops", "20000", "--reference-nodes", "4",
                 "--node-curve", str(path), "--concurrency", "nodes", "--throughput", "ops", "--bootstrap", "0",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["nodes_linear"] == 12 and out["rows"][0]["nodes_usl"] == 13   # 12 falls short by ~1%
    assert "linear_short" not in json.dumps(out)


def test_shards_batch_latency_in_seconds_is_said(capsys):
    """shards --batch-latency-ms 0.05 (50 ms typed as seconds): 0.05 µs a document, and Little's law sized
    1 client process for 1,000,000 inserts/s (1,000,000 / 1,000 x 0.00005 s = 0.05, rounded up), 'weak' only for the
    assumed scaling."""
    assert main(["shards", "--batch-latency-ms", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["clients"] == 1
    found = [r for r in out["evidence"]["reasons"] if r["code"] == "latency_scale"]
    assert len(found) == 1 and found[0]["value"] == 0.05 and "in seconds" in found[0]["message"]
    assert main(["shards", "--batch-latency-ms", "50", "--json"]) == 0   # 50 µs a document: plausible
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["clients"] == 50 and "latency_scale" not in json.dumps(out)
