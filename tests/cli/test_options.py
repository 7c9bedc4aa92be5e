"""Numbers on the command line as a user writes them: counts up to 10⁹ may be written 1e9; a list with an empty
item ('1,,2', '1,2,') is refused naming the item, not read as a shorter list."""
import pytest

from capmodel.cli import build_parser, main


@pytest.mark.parametrize("text, value", [("1000", 1000), ("1e9", 10**9), ("1_000_000", 10**6), ("2.0e3", 2000)])
def test_record_and_operation_counts_take_the_ways_people_write_them(text, value):
    args = build_parser().parse_args(["bench", "--out", "x", "--records", text, "--operations", text])
    assert args.records == value and args.operations == value and isinstance(args.records, int)


@pytest.mark.parametrize("text", ["1.5", "nan", "inf", "ten", "1e400", ""])
def test_a_count_that_is_not_whole_is_one_line_naming_the_option(text, capsys):
    assert main(["bench", "--out", "x", "--records", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --records: expected a whole number" in err and repr(text) in err


@pytest.mark.parametrize("argv, item", [(["bench", "--out", "x", "--concurrency", "1,,2"], "item 2 of '1,,2'"),
                                        (["bench", "--out", "x", "--concurrency", "1,2,"], "item 3 of '1,2,'"),
                                        (["plan", "--baseline-range", "1000,,2000"], "item 2 of '1000,,2000'")])
def test_a_list_with_an_empty_item_is_refused_naming_it(argv, item, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{item} is empty" in err, err
    assert not (tmp_path / "x").exists()          # refused before any folder is made
