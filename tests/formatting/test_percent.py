"""One percentage rule (capmodel.formatting.percent) for every sentence and table, the mix answer's included."""
import math

from capmodel import formatting
from capmodel.formatting import percent
from capmodel.models.mix import answer as mix_answer


def test_the_mix_answer_spells_percentages_by_the_one_rule():
    assert mix_answer.percent is formatting.percent


def test_whole_per_cents_from_ten_up_two_digits_below_and_no_word_lost():
    # 113 % of a server is 113 %, not 110 % (two significant digits would say 110)
    assert percent(1.13) == "113%" and percent(12_500) == "1,250,000%"
    assert percent(0.0355) == "3.5%" and percent(0.00042) == "0.042%" and percent(-0.05) == "-5%"
    assert percent(math.nan) == "—" and percent(math.inf) == "—" and percent(None) == "—"


def test_a_share_short_of_or_past_a_whole_server_never_reads_as_exactly_one():
    # 99.6 % fits and 100.4 % does not: both rounded to whole per cents would read "100%"
    assert percent(0.996) == "99.6%" and percent(1.004) == "100.4%" and percent(0.9996) == "99.96%"
    assert percent(1.0) == "100%" and percent(1) == "100%" and percent(0.994) == "99%"
