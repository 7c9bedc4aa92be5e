"""The SLO search's printed headline, checked as wording: the capacity under the objectives with the interval the
search bracketed, in the project's number format. The search's figures are checked in test_slo_search.py."""
from capmodel.formatting import number
from tests.bench.test_slo_search import scripted


def test_the_headline_says_the_capacity_and_its_bracket():
    answer = scripted(lambda rate: 5.0 * rate / 730.0)   # the bound is crossed at 730 ops/s
    low, high = answer.interval
    assert answer.summary().splitlines()[0] == (f"capacity under the objectives: {number(low, 4)} ops/s, the highest "
                                                f"rate that met them ({number(low, 4)} to {number(high, 4)} ops/s)")
