"""probe9: a ceiling the data came nowhere near is not printed as the answer (capmodel fit)."""
import json

from capmodel.cli import main

# a sweep that kept doubling (1,000 ops/s per client, 2% below linear at 64): the USL's ceiling λ/σ lands in the
# tens of millions, hundreds of times the best measured 63,000 ops/s
LINEAR = {1: 1000, 2: 1990, 4: 3950, 8: 7900, 16: 15800, 32: 31500, 64: 63000}


def test_a_ceiling_hundreds_of_times_the_data_is_unusable(tmp_path, capsys):
    """It printed 'Answer: no peak; throughput approaches a ceiling of 30,701,791 ops/s (USL; evidence: weak)' with a
    reason reading '0% of the ceiling'."""
    path = tmp_path / "curve.csv"
    path.write_text("concurrency,throughput\n" + "".join(f"{n},{x}\n" for n, x in LINEAR.items()))
    assert main(["fit", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    reach = next(r for r in out["evidence"]["reasons"] if r["code"] == "ceiling_reach")
    assert out["evidence"]["grade"] == reach["grade"] == "unusable"
    assert reach["value"] == 63000 / out["ceiling"] < 0.01 and "0%" not in reach["message"]
    assert main(["fit", str(path)]) == 0
    answer = capsys.readouterr().out.splitlines()[0]
    assert "30,701,791" not in answer and "63,000 ops/s at N = 64" in answer and "levels off" in answer
