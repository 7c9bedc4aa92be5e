"""capmodel.formatting: numbers and tables for people, checked against strings written out by hand."""
import base64
import math

import pandas as pd
import pytest

from capmodel.formatting import Column, integer, interval, money, number, percent, r_squared, seconds, table


@pytest.mark.parametrize("value, expected", [
    (25000.0, "25,000"), (4.0, "4"), (1_000_000.0, "1,000,000"), (5916.749356, "5,917"), (3.258883, "3.26"),
    (8.701088, "8.7"), (0.0355, "0.0355"), (0.0001, "0.0001"), (0.0, "0"), (-12.5, "-12.5"), (1423.65, "1,424"),
    (float("nan"), "—"), (None, "—"), (float("inf"), "unreachable"), (True, "yes")])
def test_numbers_read_as_people_write_them(value, expected):
    assert number(value) == expected


def test_r_squared_keeps_the_digits_that_tell_it_from_one():
    assert r_squared(0.9231) == "0.923"
    assert r_squared(0.9996) == "0.9996"     # not "1.000"
    assert r_squared(0.999991) == "0.999991"
    assert r_squared(0.99999999) != "1" and float(r_squared(0.99999999)) < 1
    assert r_squared(-1.1336) == "-1.134" and r_squared(float("nan")) == "—"


def test_percentages_money_intervals_and_durations_in_one_format_each():
    assert percent(0.0355) == "3.5%" and percent(0.8) == "80%" and percent(1.0) == "100%"
    assert money(1180.08, "EUR/month") == "1,180 EUR/month" and money(31.9104, "CHF") == "31.91 CHF"
    assert interval(1423.65, 793.85, 2053.45) == "1,424 (794 to 2,053)"   # not "1424 (794 to 2.05e+03)"
    assert seconds(0.005826) == "5.83 ms" and seconds(3.0) == "3 s" and seconds(600) == "10 min"
    assert integer(16.0) == "16" and integer(float("inf"), infinite="none fits") == "none fits"


def test_a_table_has_no_index_units_in_headers_words_for_missing_values_and_a_csv_download():
    frame = pd.DataFrame({"vm": ["a-1", "b-2"], "users": [25000.0, math.nan], "cost": [797.76, 694.08]},
                         index=[7, 9])
    shown = table(frame, {"vm": Column("VM", "text"), "users": Column("users", "int", missing="none"),
                          "cost": Column("monthly cost (EUR/month)", "money"), "absent": Column("not there")},
                  footnotes=['"none": fails an objective', '"unreachable": never shown here'], csv_name="vms.csv")
    assert shown.cells() == [["a-1", "25,000", "798"], ["b-2", "none", "694"]]
    assert shown.footnotes == ['"none": fails an objective']   # only the words the table uses
    page = shown._repr_html_()
    assert ">7<" not in page and ">9<" not in page            # no index column
    assert "<th class=\"num\">monthly cost (EUR/month)</th>" in page
    data = page.split("base64,")[1].split('"')[0]
    assert base64.b64decode(data).decode() == "VM,users,monthly cost (EUR/month)\na-1,25000.0,797.76\nb-2,,694.08\n"
    assert 'download="vms.csv"' in page
    assert shown.text().splitlines()[1].split() == ["a-1", "25,000", "798"]


def test_a_fixed_decimals_column_shows_a_missing_value_as_its_word():
    from capmodel.formatting import Column

    column = Column("runway (months)", decimals=1)
    assert column.show(None) == "—" and column.show(float("nan")) == "—" and column.show(12.345) == "12.3"


def test_one_rule_hides_an_interval_with_no_width_as_printed():
    from capmodel.formatting import interval_words, shows_width
    from capmodel.models.estimate import format_estimate

    assert shows_width(0.25, 0.36, percent)                              # "25%" and "36%": shown
    assert not shows_width(-0.0331, -0.0334, percent)                    # both "-3.3%": no width to show
    assert shows_width(-0.0331, -0.0334, lambda x: f"{x:.4f}")           # the same ends, printed finer: shown
    for low, high in ((None, 0.3), (0.2, math.nan), (0.2, math.inf)):
        assert not shows_width(low, high, percent)                       # an end missing or infinite
    assert shows_width(0.2, math.inf, percent, finite=False)             # ... unless the printer has a word for it
    # every interval printer follows it: the figure alone where the ends print the same
    assert interval(2.0, 1.9996, 2.0004) == "2"
    assert interval(2.0, 1.5, math.inf) == "2 (1.5 to unreachable)"
    assert interval_words(62500, 62499.8, 62500.2) == ""
    assert format_estimate(25000, 25000.4, 24999.6) == "25,000"
    assert format_estimate(8.147, 7.52, 8.77) == "8.15 (7.52-8.77)"

