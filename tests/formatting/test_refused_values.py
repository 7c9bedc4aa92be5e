"""A refused number is shown without a float's '.0' (0.0, -1.0 and 1e9 read "got 0", "got -1", "got 1000000000"),
in the constraint's message and through the command line; fractions, nan and inf read as they are."""
from __future__ import annotations

import numpy as np
import pytest

from capmodel.cli import main
from capmodel.constraints import Number
from capmodel.errors import InputError


@pytest.mark.parametrize("value, shown", [(0.0, "0"), (-1.0, "-1"), (1e9, "1000000000"), (np.float64(2.0), "2"),
                                          (0.5, "0.5"), (float("nan"), "nan"), (float("inf"), "inf"), (7, "7")])
def test_the_refused_value_reads_as_typed(value, shown):
    with pytest.raises(InputError) as info:
        Number(float, 1.0, 1.5, name="x", low_open=True).check(value, InputError)
    assert str(info.value).endswith(f", got {shown}")


@pytest.mark.parametrize("argv, tail", [
    (["plan", "--target-users", "0"], "got 0"),
    (["shards", "--level", "1"], "got 1"),
    (["server", "start", "--cache-gb", "1e9"], "got 1000000000"),
])
def test_through_the_command_line(capsys, argv, tail):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"{tail}\n") and ".0\n" not in err
