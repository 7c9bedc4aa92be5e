"""The command line's text goes through the one formatting layer (capmodel.formatting): run as a user runs it (the
command's ``main`` with its own stdout; a separate process costs a second of imports each and tests nothing more
here: tests/cli/test_dispatcher.py runs real processes), on the bundled data and on the adversarial fixtures (every
step client-bound, an exactly determined curve, targets no shard or node count reaches), no ``nan``, ``None`` or
``inf`` reaches stdout, and the figures carry their thousands separators."""
import re

import pytest

from tests.support import cli_run

UNREADABLE = re.compile(r"\b(nan|NaN|NAN|None|inf|Inf|-inf|infinity|Infinity)\b")
USER = "tests/fixtures/user_study"
RUNS = {
    "fit bundled plgm": ["fit", "data/plgm_workload1.csv"],
    "fit bundled plgm auto": ["fit", "data/plgm_workload1.csv", "--model", "auto"],
    "fit raytracer amdahl": ["fit", "data/usl_raytracer.csv", "--model", "amdahl"],
    "fit client-bound usl": ["fit", "tests/fixtures/client_bound_sweep/curve.csv"],
    "fit client-bound auto": ["fit", "tests/fixtures/client_bound_sweep/curve.csv", "--model", "auto"],
    "fit user client-bound": ["fit", f"{USER}/client_bound_sweep.csv", "--model", "auto"],
    "fit three points": ["fit", f"{USER}/three_points.csv"],
    "fit three points auto": ["fit", f"{USER}/three_points.csv", "--model", "auto"],
    "fit p95 sweep": ["fit", f"{USER}/sweep_p95.csv", "--model", "auto"],
    "plan bundled": ["plan", "--target-users", "50000", "90000", "--growth", "0.05"],
    "plan user curves": ["plan", "--catalog", f"{USER}/catalog_chf.csv", "--curves", f"{USER}/curves_chf.csv",
                         "--vm-column", "vm", "--ops-per-user", "0.5", "--target-users", "10000", "90000"],
    "nodes bundled": ["nodes"],
    "nodes unreachable": ["nodes", "--sigma", "0.05", "--kappa", "0.001", "--reference-node-cost", "1000",
                          "--candidate-node-cost", "300"],
    "shards bundled": ["shards"],
    "shards unreachable": ["shards", "--target-rate", "500000", "2000000", "--per-shard-throughput", "62500",
                           "--sigma", "0.05", "--kappa", "0.001"],
    "shards client-bound curve": ["shards", "--target-rate", "5000", "--curve",
                                  "tests/fixtures/client_bound_sweep/curve.csv", "--bootstrap", "20"],
    "observe ftdc": ["observe", "--ftdc", "data/ftdc_sample/diagnostic.data", "--out", "{tmp}/observed"],
}


def run(argv, tmp_path) -> str:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = cli_run.run(*argv)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", sorted(RUNS))
def test_no_nan_none_or_inf_in_the_text(name, tmp_path):
    text = run(RUNS[name], tmp_path)
    assert text.strip()
    found = UNREADABLE.findall(text)
    assert not found, f"{name}: {found} in\n{text}"


def test_figures_carry_separators_and_units(tmp_path):
    import pandas as pd

    curve = pd.read_csv("tests/fixtures/client_bound_sweep/curve.csv")
    text = run(["fit", "tests/fixtures/client_bound_sweep/curve.csv", "--model", "auto"], tmp_path)
    # the best measured rate, written with its separator, and the ranking's RMSE column with its unit
    assert f"{curve['throughput'].max():,.0f} ops/s" in text and "RMSE (ops/s)" in text
    # the DocumentDB study: 1,000,000 inserts/s on 16 shards of 62,500, 64 client processes each
    shards = run(["shards"], tmp_path)
    assert ["1,000,000", "16", "16", "1,000,000", "100%", f"{16 * 64:,}"] in [line.split() for line in shards.splitlines()]


def test_mva_prints_the_answer_first_and_tables_with_units(tmp_path):
    # one customer, no think time: nothing queues, so X = 1 / (0.004 + 0.006 + 0.002) s = 83.33 ops/s, R = 12 ms,
    # U(cpu) = 0.004 X = 33.3%, U(disk) = 0.006 X = 50%, and the delay's mean population 0.002 X = 0.167 (Jain 1991,
    # ch. 34: the operational laws). The text was pandas' own print: response_time 0.012 (seconds, no unit),
    # utilization 0.333333, an index header on a line of its own, and the answer under the tables.
    model = tmp_path / "one.yaml"
    model.write_text("classes:\n  reads: {population: 1, think_time: 0}\n"
                     "stations:\n  cpu: {demands: {reads: 0.004}}\n  disk: {demands: {reads: 0.006}}\n"
                     "  net: {delay: true, demands: {reads: 0.002}}\n")
    lines = run(["mva", str(model)], tmp_path).splitlines()
    assert lines[0].startswith(f"{model}: exact MVA: ") and "Bottleneck: disk" in lines[0]
    header = lines.index(next(line for line in lines if line.startswith("class ")))
    assert lines[header].split("  ")[0] == "class" and "response time (ms)" in lines[header]
    assert "throughput (ops/s)" in lines[header] and "at cpu (ms)" in lines[header]
    assert lines[header + 1].split() == ["reads", "1", "0", "83.33", "12", "4", "6", "2"]
    stations = {line.split()[0]: line.split() for line in lines if line.split()[:1] in (["cpu"], ["disk"], ["net"])}
    # one precision per column: 50.0% under 33.3%, 0.500 under 0.333; the answer names the bottleneck's as its column
    assert stations["cpu"][-2:] == ["33.3%", "0.333"] and stations["disk"][-2:] == ["50.0%", "0.500"]
    assert "Bottleneck: disk (utilization 50.0%)." in lines[0]
    assert stations["net"][-2:] == ["—", "0.167"]
    tables = "\n".join(lines[header:])
    assert "0.012" not in tables and "queue_reads" not in tables and "response_time" not in tables


def test_plan_prints_its_answer_first_and_months_to_one_decimal(tmp_path):
    # the recommendations (the answer to --target-users) came last, under the VM table, the runway and the notes; and
    # the runway read "26 months (interval 25.7 to 26)" beside "19.6 months". c4-2xlarge-4-SSD carries 89,000 users
    # (23,140 ops/s / 0.26) and today's 25,000 grow 5% a month: ln(89,000 / 25,000) / ln(1.05) = 26.03 months.
    import math

    lines = run(["plan", "--target-users", "50000", "90000", "--growth", "0.05"], tmp_path).splitlines()
    assert lines[0] == "Recommendations:" and "50,000 users -> s3-2xlarge-8-SAS" in lines[1]
    from capmodel.models.evidence import MEANINGS

    assert lines[3] == f"Evidence of the answer (the VMs it names): weak ({MEANINGS['weak']})"
    assert lines.index("Recommendations:") < min(i for i, line in enumerate(lines) if line.startswith("User load:"))
    months = math.log(89_000 / 25_000) / math.log(1.05)
    ssd = next(line for line in lines if line.strip().startswith("c4-2xlarge-4-SSD ") and "months" in line)
    assert ssd.split()[1:3] == [f"{months:.1f}", "months"] and ssd.endswith(f"to {months:.1f})")
    # without targets there is no recommendation: the evidence stays under the plan
    plain = run(["plan"], tmp_path).splitlines()
    assert "Recommendations:" not in plain and plain[-1].startswith("  - weak: ")


def test_fleet_text_shows_a_spare_interval_only_where_it_has_width():
    # generated FTDC fits its CPU per operation exactly: the report's table shows "-26%", the command printed
    # "-26% (-26% to -26%)"; a real interval keeps its bounds in both
    import pandas as pd
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    def row(member, low, high):
        values = {c: None for c in FLEET_COLUMNS}
        values.update(cluster="rs0", member=member, hours=6.0, busiest_ops=13_325.0, capacity_ops=13_266.0,
                      spare_fraction=-0.26, spare_low=low, spare_high=high, verdict="weak", runway_months=0.0,
                      method="operational laws", evidence={"grade": "weak", "reasons": []})
        return values

    rows = pd.DataFrame([row("a:27017", -0.26, -0.26), row("b:27017", -0.3, -0.2)], columns=FLEET_COLUMNS)
    lines = Fleet(rows, "1 local Dask worker", 0.05).summary().splitlines()
    a, b = (next(line for line in lines if line.split()[1:2] == [m]) for m in ("a:27017", "b:27017"))
    assert "-26%" in a.split() and "(-26%" not in a
    assert "-26% (-30% to -20%)" in b


def test_fit_opens_with_its_answer(tmp_path):
    # the peak (or what the data support instead) sat under the formula, the parameter table and the peak's details;
    # the first line now says it. USL peak by the closed form: N* = sqrt((1 - σ) / κ), X(N*) = λN* / (1 + σ(N* - 1)
    # + κN*(N* - 1)) (Gunther 2007), from the JSON's own parameters
    import json
    import math

    params = json.loads(run(["fit", "data/plgm_workload1.csv", "--json"], tmp_path))
    s, k, lam = params["sigma"], params["kappa"], params["lambda"]
    n = math.sqrt((1 - s) / k)
    x = lam * n / (1 + s * (n - 1) + k * n * (n - 1))
    # each figure with its interval from the JSON's ci (the peak's concurrency has no upper end here: null)
    (x_low, x_high), (n_low, n_high) = params["ci"]["peak_throughput"], params["ci"]["peak_concurrency"]
    assert n_high is None and params["evidence"]["grade"] == "weak"
    first = run(["fit", "data/plgm_workload1.csv"], tmp_path).splitlines()[0]
    assert first == (f"Answer: throughput peaks at {x:,.0f} ops/s (95% interval {x_low:,.0f} to {x_high:,.0f} ops/s) "
                     f"at about {n:.1f} clients (95% interval: {n_low:.1f} or more); past that, more clients lower it "
                     "(USL; evidence: weak).")
    amdahl = json.loads(run(["fit", "data/plgm_workload1.csv", "--model", "amdahl", "--json"], tmp_path))
    first = run(["fit", "data/plgm_workload1.csv", "--model", "amdahl"], tmp_path).splitlines()[0]
    low, high = amdahl["ci"]["ceiling"]
    assert first == (f"Answer: throughput has no peak but levels off towards a ceiling of "
                     f"{amdahl['lambda'] / amdahl['sigma']:,.0f} ops/s (95% interval {low:,.0f} to {high:,.0f} ops/s) "
                     f"(Amdahl; evidence: {amdahl['evidence']['grade']}).")
    bound = run(["fit", "tests/fixtures/client_bound_sweep/curve.csv"], tmp_path).splitlines()[0]
    assert bound.startswith("Answer: no peak or ceiling is supported by these data; every step was client-bound")
    assert bound.endswith(".") and not bound.endswith("..")


def test_mva_observed_says_which_load_it_answers_for(tmp_path):
    # with --scale the figures were printed as "obslive: reads 4,184 ops/s ..." with nothing telling them from the
    # observed load; with --rates a class not named ran no operations, silently
    from capmodel.observe import bundled_sample, observe_ftdc

    sample = bundled_sample()
    observe_ftdc(sample["path"], sample["since"], sample["until"]).write(tmp_path / "obs")
    base = ["mva", "--observed", str(tmp_path / "obs"), "--cores", "1", "--bootstrap", "0"]
    scaled = run(base + ["--scale", "reads=1.3,writes=2"], tmp_path).splitlines()
    assert scaled[0] == "What if: reads ×1.3, writes ×2 (the other classes as observed)."
    only = run(base + ["--rates", "reads=300"], tmp_path).splitlines()
    assert only[0] == "What if: reads at 300 ops/s (no other operations)."
    assert "reads 300 ops/s" in only[1] and "writes" not in only[1]
    assert run(base, tmp_path).splitlines()[0] == "The observed load (no --scale or --rates asked):"
