"""A ceiling the data came nowhere near is not given as the answer: ``capmodel fit`` on a curve still rising at its
last point calls a ceiling hundreds of times the measured throughput unusable."""
import json

import pandas as pd
from scipy.stats import f

from capmodel.cli import main
from capmodel.models.usl.rivals import fit_linear
from capmodel.models.usl.fit import fit_usl

# a sweep that kept doubling (1,000 ops/s per client, 2% below linear at 64): the USL's ceiling λ/σ lands in the
# tens of millions, hundreds of times the best measured 63,000 ops/s
LINEAR = {1: 1000, 2: 1990, 4: 3950, 8: 7900, 16: 15800, 32: 31500, 64: 63000}


def test_a_ceiling_hundreds_of_times_the_data_is_unusable(tmp_path, capsys):
    """The straight line X = λN fits these points within the likelihood region's threshold (its residual sum of
    squares within 1 + F(1, m - 3; 0.975) / (m - 3) of the USL's, m = 7): a curve that never stops rising is not
    rejected, so the most the server delivers has no upper end, and the answer is the lower end and the best
    measured, not the fitted ceiling."""
    path = tmp_path / "curve.csv"
    path.write_text("concurrency,throughput\n" + "".join(f"{n},{x}\n" for n, x in LINEAR.items()))
    curve = pd.read_csv(path)
    usl, line = fit_usl(curve), fit_linear(curve)
    rss = {fit: float(((fit.throughput - fit.fitted) ** 2).sum()) for fit in (usl, line)}
    assert rss[line] / rss[usl] <= 1 + f.ppf(0.975, 1, 4) / 4
    assert main(["fit", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ceiling"] > 100 * 63000                       # the fitted λ/σ: tens of millions
    low, high = out["ci"]["peak_throughput"]
    assert high is None and out["ci"]["ceiling"][1] is None and low > 63000
    unbounded = next(r for r in out["evidence"]["reasons"] if r["code"] == "unbounded")
    assert out["evidence"]["grade"] == unbounded["grade"] == "unusable" and unbounded["value"] == low
    assert max(unbounded["next_step"]["levels"]) > 64          # measure past the data
    assert main(["fit", str(path)]) == 0
    answer = capsys.readouterr().out.splitlines()[0]
    assert f"{out['ceiling']:,.0f}"[:6] not in answer         # no digit of the ceiling's estimate
    assert "sustained 63,000 ops/s" in answer and f"at least {low:,.0f} ops/s" in answer
    assert out["supported"] in answer
