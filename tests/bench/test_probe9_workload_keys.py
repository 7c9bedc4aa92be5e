"""probe9: a workload file's request-distribution options are checked when the file is read."""
import pytest

from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.errors import InputError

BASE = ("name: t\nrecords: 1000\nkeys: {prefix: user, order: hashed, distribution: DIST}\n"
        "fields: {count: 2, length: 10}\noperations: {read: 1}\n")


def write(tmp_path, dist):
    path = tmp_path / "w.yaml"
    path.write_text(BASE.replace("DIST", dist))
    return path


@pytest.mark.parametrize("dist, message", [
    ("zipfian, thetta: 0.5", "keys.thetta does not apply to the zipfian distribution (it takes theta, method)"),
    ("uniform, theta: 0.5", "keys.theta does not apply to the uniform distribution (it takes no options)"),
    ("zipfian, theta: x", "keys.theta must be a number, got 'x'"),
    ("zipfian, theta: 5", "theta 5 must be between 0 and 1"),
    ("hotspot, hot_data: 1.5", "hot_data must be in (0, 1)"),
    ("zipfian, method: fast", "method 'fast' must be 'gray' or 'exact'"),
])
def test_distribution_options_are_refused_when_read(tmp_path, dist, message):
    """theta 'x' raised a TypeError from the generator; 'thetta' and a theta under uniform were dropped in silence;
    a theta of 5 was refused only when the sweep drew its first key, after the server was reached."""
    path = write(tmp_path, dist)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_good_options_still_load(tmp_path):
    assert load_workload(write(tmp_path, "zipfian, theta: 0.8")).distribution_options == {"theta": 0.8}
    assert load_workload(write(tmp_path, "hotspot, hot_data: 0.1, hot_ops: 0.9")).distribution == "hotspot"


def test_the_cli_refuses_before_reaching_a_server(tmp_path, capsys):
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--workload", str(write(tmp_path, "zipfian, theta: x")),
                 "--concurrency", "1,2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "keys.theta must be a number" in err and "Traceback" not in err


def test_key_reads_on_no_records_and_no_inserts_are_refused(tmp_path, capsys):
    """bench --workload ycsb-b --records 0 (or a file with records: 0) timed 95% reads of keys that do not exist."""
    path = tmp_path / "w.yaml"
    path.write_text(BASE.replace("DIST", "uniform").replace("records: 1000", "records: 0"))
    with pytest.raises(InputError, match="'records' is 0 and nothing inserts, so read would ask for keys"):
        load_workload(path)
    with pytest.raises(InputError, match="so read, update would ask"):
        load_workload("ycsb-b", records=0)
    assert load_workload("ycsb-d", records=0).records == 0          # reads of the latest inserts: keys appear
    assert load_workload("docdb-insert").records == 0               # insert-only
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--records", "0", "--concurrency", "1,2",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "'records' is 0" in err and "cannot reach" not in err
