"""``server start --cache-gb`` within mongod's own range (0.25 to 10,000 GB) or refused before a mongod is started,
naming the option, not a parameter, and without mongod's log lines."""
from __future__ import annotations

import pytest

from capmodel.cli import main

WANTED = "--cache-gb must be a number of GB from 0.25 to 10,000 (mongod's range for its WiredTiger cache), got "


@pytest.mark.parametrize("value", ["0.1", "0.2499", "10000.5", "1e9", "nan", "inf", "0", "-1"])
def test_out_of_mongods_range_is_refused_naming_the_option(capsys, value):
    assert main(["server", "start", "--cache-gb", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"capmodel: error: {WANTED}") and err.count("\n") == 1
    assert "mongod on port" not in err and "cache_gb" not in err


def test_the_python_api_says_its_parameter():
    from capmodel.bench.server import embedded_server
    from capmodel.errors import ServerError

    with pytest.raises(ServerError, match=r"^cache_gb must be a number of GB from 0.25 to 10,000"):
        with embedded_server(cache_gb=0.1):
            pass
