"""`capmodel mva MODEL.yaml` at sizes past the exact solver (hostile round six).

Before: the exact solver's refusal advised the Python call (``use approximate_multiclass_mva (method=...) or raise
max_states``), which a command-line user cannot make, and the approximate answer printed ``3e+04 s`` and a queue of
``1e+08``. Reference figures: one class of N customers on one queueing station of demand D with no think time
saturates it, so X = 1/D and R = N/X (Little's law) exactly, whatever the approximation.
"""
from __future__ import annotations

import pytest

from capmodel.cli import main


def _model(tmp_path, classes: dict, demand: float = 0.0003):
    lines = ["classes:"] + [f"  {c}: {{population: {n}}}" for c, n in classes.items()]
    demands = ", ".join(f"{c}: {demand}" for c in classes)
    lines += ["stations:", f"  cpu: {{demands: {{{demands}}}}}"]
    path = tmp_path / "model.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("classes", [{"reads": 100_000_000}, {c: 40 for c in "abcde"}])
def test_a_network_too_big_for_the_exact_solver_names_the_option_that_solves_it(tmp_path, capsys, classes):
    path = _model(tmp_path, classes)
    assert main(["mva", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(path) in err
    assert "--solver linearizer or --solver schweitzer" in err, err
    assert "approximate_multiclass_mva" not in err and "max_states" not in err.split("; ")[-1]


def test_large_figures_read_with_separators_not_exponents(tmp_path, capsys):
    n, demand = 100_000_000, 0.0003
    path = _model(tmp_path, {"reads": n}, demand)
    assert main(["mva", str(path), "--solver", "schweitzer"]) == 0
    out, err = capsys.readouterr()
    x = 1 / demand
    response = n / x
    assert f"reads: {round(x):,} ops/s at {round(response * 1000):,} ms" in out, out
    assert f"{n:,}" in out          # the queue at the station: every customer
    assert "e+" not in out
