"""``capmodel mva MODEL.yaml`` end to end through capmodel.cli.main: a published example in, per-class figures out;
bad model files end with exit 2 and one line naming the file and the key."""
import json

import pytest

from capmodel.cli import main

# Lazowska et al., "Quantitative System Performance" (1984), ch. 7, p. 131 (see tests/test_mva_multiclass.py): exact
# queue lengths CPU 9.717 / 0.8496, disk 0.2827 / 2.0900 (batch / interactive)
LAZOWSKA = """
classes:
  batch: {population: 10}
  interactive: {population: 25, think_time: 30}
stations:
  cpu: {demands: {batch: 1.0, interactive: 0.1}}
  disk: {demands: {batch: 0.09, interactive: 0.9}}
"""


def write(tmp_path, text, name="model.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_json(capsys, *argv):
    assert main(["mva", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def fails(capsys, *argv):
    assert main(["mva", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def test_yaml_model_reproduces_the_lazowska_example(tmp_path, capsys):
    out = run_json(capsys, write(tmp_path, LAZOWSKA))
    assert out["solver"] == "exact" and out["bottleneck"] == "cpu"
    stations = {s["station"]: s for s in out["stations"]}
    assert stations["cpu"]["queue_length"] == pytest.approx({"batch": 9.717, "interactive": 0.8496}, abs=6e-4)
    assert stations["disk"]["queue_length"] == pytest.approx({"batch": 0.2827, "interactive": 2.0900}, abs=6e-4)
    rows = {r["class"]: r for r in out["classes"]}
    # Little's law per class: N = X (R + Z)
    assert rows["interactive"]["throughput"] * (rows["interactive"]["response_time"] + 30) == pytest.approx(25)
    assert rows["batch"]["response_time"] == pytest.approx(sum(rows["batch"]["residence"].values()))


def test_text_output_and_the_same_model_as_json(tmp_path, capsys):
    path = write(tmp_path, json.dumps({"classes": {"a": {"population": 3}}, "stations": {"cpu": {"demands": {"a": 1}}}}),
                 "model.json")
    assert main(["mva", path]) == 0
    text = capsys.readouterr().out
    assert "exact MVA" in text and "Bottleneck: cpu" in text
    # one class alone at one queue: X = 1 / D whatever N, R = N D
    out = run_json(capsys, path)
    assert out["classes"][0]["throughput"] == pytest.approx(1.0)
    assert out["classes"][0]["response_time"] == pytest.approx(3.0)


def test_approximate_solver_open_and_mixed_models(tmp_path, capsys):
    out = run_json(capsys, write(tmp_path, LAZOWSKA), "--solver", "schweitzer")
    assert out["method"] == "Bard-Schweitzer approximate MVA"
    open_model = ("classes:\n  r: {arrival_rate: 60}\nstations:\n  db: {demands: {r: 0.01}}\n"
                  "  net: {delay: true, demands: {r: 0.002}}\n")
    out = run_json(capsys, write(tmp_path, open_model))
    # M/M/1: R = D / (1 - U) = 0.01 / 0.4, plus the delay
    assert out["classes"][0]["response_time"] == pytest.approx(0.01 / 0.4 + 0.002)
    assert out["stations"][1]["utilization"] is None and "stable up to" in out["notes"][0]
    mixed = LAZOWSKA.replace("classes:\n", "classes:\n  reports: {arrival_rate: 0.05}\n").replace(
        "disk: {demands: {batch: 0.09,", "disk: {demands: {reports: 2.0, batch: 0.09,")
    out = run_json(capsys, write(tmp_path, mixed))
    assert out["method"].startswith("mixed network")
    assert {r["class"] for r in out["classes"]} == {"batch", "interactive", "reports"}


@pytest.mark.parametrize("text, expected", [
    ("classes: {a: {population: 2}}\n", "model.yaml: stations: missing or empty"),
    ("classes: {a: {population: 2.5}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: classes.a.population: must be a whole number"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {b: 1}}}\n",
     "model.yaml: stations.cpu.demands.b: no such class"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {a: -1}}}\n",
     "model.yaml: stations.cpu.demands.a: must be a number of seconds from 0 to 1,000,000,000 (about 32 years), "
     "got -1"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {servers: 0, demands: {a: 1}}}\n",
     "model.yaml: stations.cpu.servers: must be a whole number >= 1, got 0"),
    ("classes: {a: {population: 2, arrival_rate: 1}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: classes.a: give either population"),
    ("classes: {a: {population: 2}}\nstations: {cpu: {demands: {a: 1}}}\nsolver: magic\n",
     "model.yaml: solver: must be one of exact, linearizer, schweitzer"),
    ("classes: {a: {arrival_rate: 2}}\nstations: {cpu: {demands: {a: 1}}}\n",
     "model.yaml: the arrival rates load station cpu to utilization 2 >= 1"),
    ("classes: [a\n", "model.yaml: (file): not valid YAML at line"),
])
def test_bad_model_files_name_the_file_and_key(tmp_path, capsys, text, expected):
    err = fails(capsys, write(tmp_path, text))
    assert expected in err


def test_missing_file_is_one_line(tmp_path, capsys):
    err = fails(capsys, str(tmp_path / "nope.yaml"))
    assert "nope.yaml" in err
