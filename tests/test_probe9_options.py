"""probe9: option edge values and contradictions, through capmodel.cli.main."""
import json

import pytest

from capmodel.cli import main
from capmodel.errors import InputError
from tests.test_probe9_plan_latency import write_curves


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
