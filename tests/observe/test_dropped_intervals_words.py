"""What was dropped from an observation is said in words, for every reason the sampler declares: '21 intervals
dropped: no operations in them', not 'dropped: 21 no operations'."""
import pytest

from capmodel.observe import serverstatus
from capmodel.observe.observation import dropped_words, observe_ftdc

FTDC = "data/ftdc_sample/diagnostic.data"


@pytest.mark.parametrize("reason", [serverstatus.COUNTER_RESET, serverstatus.NO_OPERATIONS])
@pytest.mark.parametrize("count", [1, 2, 21, 1500])
def test_each_reason_is_said_with_its_count_in_words(reason, count):
    text = dropped_words({reason: count})
    noun = "interval" if count == 1 else "intervals"
    assert text == f"{count:,} {noun} dropped: {serverstatus.DROPPED_WORDS[reason]}"
    assert "_" not in text


def test_two_reasons_and_none():
    text = dropped_words({serverstatus.COUNTER_RESET: 1, serverstatus.NO_OPERATIONS: 21})
    assert text == ("1 interval dropped: a counter went back (the server restarted); "
                    "21 intervals dropped: no operations in them")
    assert dropped_words({}) == "no interval dropped"


def test_the_summary_of_the_bundled_ftdc_says_what_was_dropped_in_words():
    observation = observe_ftdc(FTDC)
    line = [ln for ln in observation.summary().splitlines() if "dropped" in ln]
    assert len(line) == 1 and not line[0].startswith("dropped:")
    for reason, count in observation.dropped.items():
        assert f"dropped: {serverstatus.DROPPED_WORDS[reason]}" in line[0]
