"""A curve file with one row per load-generator host at each step (threads x hosts) is refused naming the file, not
fitted as replicates of one level; a curve of one host, or one host repeated, is a curve."""
import json

import pytest

import capmodel
from capmodel.cli import main
from capmodel.errors import InputError


def usl(n):
    return 1000.0 * n / (1 + 0.05 * (n - 1) + 0.0005 * n * (n - 1))


def write(tmp_path, hosts, header="host"):
    """Four hosts ran each step together: a step of 4n clients, each host writing its n threads and a quarter of
    the server's throughput."""
    rows = [f"{h},{n},{usl(len(hosts) * n) / len(hosts):.3f}" for n in (1, 2, 4, 8, 16, 32, 64) for h in hosts]
    path = tmp_path / "hosts.csv"
    path.write_text(f"{header},concurrency,throughput\n" + "\n".join(rows) + "\n")
    return path


def test_per_host_rows_are_refused_not_fitted_as_replicates(tmp_path, capsys):
    """It printed 'Answer: throughput peaks at 2,686 ops/s at about 10.9 clients (USL; evidence: sound)': one host's
    share (a quarter of the server's 10,742 ops/s at 43.6 clients), with the verdict 'sound'."""
    for header in ("host", "Hostname"):
        path = write(tmp_path, ["h1", "h2", "h3", "h4"], header)
        assert main(["fit", str(path)]) == 2
        err = capsys.readouterr().err
        said = (f"column '{header}' labels the rows at every concurrency with the same 4 values, each once, naming 4 "
                "load-generator hosts: the rows are parts of one step, not replicates")
        assert said in err and str(path) in err
        # the rule lives in the model layer: the Python API refuses the same table in the same words
        with pytest.raises(InputError, match=said):
            capmodel.fit_usl(capmodel.read_curve(path))


def test_one_host_or_a_repeated_host_is_a_curve(tmp_path, capsys):
    assert main(["fit", str(write(tmp_path, ["h1"])), "--json"]) == 0
    # one host ran every client: the server's curve, whose peak is the USL's at N* = sqrt((1 - sigma) / kappa)
    peak = json.loads(capsys.readouterr().out)["peak_throughput"]
    assert peak == pytest.approx(usl(((1 - 0.05) / 0.0005) ** 0.5), rel=1e-4)
    path = tmp_path / "again.csv"
    text = write(tmp_path, ["h1"]).read_text()
    path.write_text(text + "\n".join(text.splitlines()[1:]) + "\n")   # the same host's sweep twice: replicates
    assert main(["fit", str(path)]) == 0
