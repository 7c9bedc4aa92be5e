"""Operational laws: a textbook measurement example, Jain's timesharing model, and named errors."""
import pytest

from capmodel.errors import InputError
from capmodel.models.queueing.laws import (
    demand_from_visits,
    forced_flow,
    interactive_response_time,
    interactive_throughput,
    littles_law,
    service_demand,
    utilization,
)
from capmodel.models.queueing.mva import exact_mva


def test_menasce_motivating_problem():
    # Menasce, Almeida & Dowdy, "Performance by Design" (2004), ch. 3 motivating problem: in 60 s the CPU is busy
    # 36 s and 1800 transactions complete -> X = 30 tps, S = 36/1800 = 0.02 s, U = 0.6.
    throughput, service_time = 1800 / 60, 36 / 1800
    assert utilization(throughput, service_time) == pytest.approx(0.6)
    assert service_demand(0.6, throughput) == pytest.approx(0.02)


def test_forced_flow_and_utilization_on_jain_example_34_2():
    # Jain (1991) Example 34.2: CPU V = 16 visits, S = 0.125 s. With one user X = 0.1/s (Table 34.1), and the CPU
    # queue length printed for N = 1 is 0.200, which with one job equals the CPU utilization.
    cpu_throughput = forced_flow(16, 0.1)
    assert cpu_throughput == pytest.approx(1.6)
    assert utilization(cpu_throughput, 0.125) == pytest.approx(0.200)
    assert demand_from_visits(16, 0.125) == pytest.approx(2.0)


def test_littles_law_solves_for_each_quantity():
    # Jain Table 34.1, N = 2: X = 0.175/s, R = 7.4 s; jobs in the queueing part = X R = 1.295 (0.421 + 0.684 + 0.193
    # printed queue lengths, 1.298 after their rounding)
    assert littles_law(throughput=0.175, response_time=7.4) == pytest.approx(1.295)
    assert littles_law(population=1.295, response_time=7.4) == pytest.approx(0.175)
    assert littles_law(population=1.295, throughput=0.175) == pytest.approx(7.4)
    assert 0.421 + 0.684 + 0.193 == pytest.approx(littles_law(throughput=0.175, response_time=7.4), abs=0.004)
    with pytest.raises(InputError, match="exactly two"):
        littles_law(population=1.0)


def test_interactive_response_time_law_holds_for_an_mva_solution():
    z = 4.0
    table = exact_mva({"cpu": 2.0, "disk_a": 3.0, "disk_b": 1.0}, think_time=z, populations=20)
    for _, row in table.iterrows():
        r = interactive_response_time(row["concurrency"], row["throughput"], z)
        assert r == pytest.approx(row["response_time"], rel=1e-12)
        assert interactive_throughput(row["concurrency"], r, z) == pytest.approx(row["throughput"], rel=1e-12)


def test_impossible_inputs_name_the_argument():
    with pytest.raises(InputError, match="throughput"):
        utilization(-1.0, 0.1)
    with pytest.raises(InputError, match="service_time"):
        utilization(1.0, float("nan"))
    with pytest.raises(InputError, match="throughput"):
        service_demand(0.5, 0.0)
    with pytest.raises(InputError, match="think_time"):
        interactive_response_time(10, 1.0, 20.0)  # 10 users / 1 per s = 10 s per cycle, less than 20 s think time
    with pytest.raises(InputError, match="users"):
        interactive_response_time(0, 1.0)


# The models' vocabulary for their inputs (capmodel.models.queueing.laws: SERVERS, NONNEGATIVE, POSITIVE on
# capmodel.constraints): numbers are numbers, finite, in range; each refusal names the input, the range and the value.
@pytest.mark.parametrize("call, message", [
    (lambda: littles_law(population=-1.0, response_time=2.0), "population must be a finite number >= 0, got -1"),
    (lambda: littles_law(population=float("nan"), throughput=2.0), "population must be a finite number >= 0, got nan"),
    (lambda: littles_law(throughput=float("inf"), response_time=2.0),
     "throughput must be a finite number >= 0, got inf"),
    (lambda: littles_law(throughput=True, response_time=2.0), "throughput must be a finite number >= 0, got True"),
    (lambda: littles_law(throughput="30", response_time=2.0), "throughput must be a finite number >= 0, got '30'"),
    (lambda: littles_law(throughput=[30], response_time=2.0), "throughput must be a finite number >= 0, got [30]"),
    (lambda: littles_law(population=4.0, throughput=0.0), "throughput must be a finite number > 0, got 0"),
    (lambda: interactive_response_time(0, 1.0), "users must be a finite number > 0, got 0"),
    (lambda: utilization(10**400, 0.1), "throughput must be a finite number >= 0, got 1000"),
])
def test_bad_model_inputs_are_one_error_naming_the_input_the_range_and_the_value(call, message):
    with pytest.raises(InputError) as caught:
        call()
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("c, message", [
    (0, "c (number of servers) must be an integer >= 1, got 0"),
    (-3, "c (number of servers) must be an integer >= 1, got -3"),
    (2.5, "c (number of servers) must be an integer >= 1, got 2.5"),
    (True, "c (number of servers) must be an integer >= 1, got True"),
    ("4", "c (number of servers) must be an integer >= 1, got '4'"),
    (float("inf"), "c (number of servers) must be an integer >= 1, got inf"),
    (None, "c (number of servers) must be given"),
])
def test_a_server_count_is_a_whole_number_of_at_least_one(c, message):
    from capmodel.models.queueing.erlang import erlang_c

    with pytest.raises(InputError) as caught:
        erlang_c(c, 0.5)
    assert str(caught.value) == message


def test_server_counts_and_times_given_as_numpy_or_whole_floats_are_read_as_numbers():
    import numpy as np

    from capmodel.models.queueing.erlang import erlang_c
    from capmodel.models.queueing.laws import check_servers

    # Erlang C for c = 2 servers, a = 1 Erlang: with T = (a^c / c!) c / (c - a) = 1, C = T / (sum_{k<c} a^k / k! + T)
    # = 1 / (1 + 1 + 1) = 1/3 (Kleinrock, Queueing Systems vol. 1, eq. 3.42)
    assert erlang_c(np.int64(2), np.float64(1.0)) == pytest.approx(1 / 3)
    assert erlang_c(2.0, 1) == pytest.approx(1 / 3)
    assert check_servers(np.int32(3)) == 3 and type(check_servers(np.int32(3))) is int


def test_the_cli_user_sees_the_models_sentence_for_a_bad_server_count(tmp_path, capsys):
    """``capmodel mva --observed DIR --cores N``: the model's rule for the cores, said in the option's name."""
    from capmodel.cli import main
    from tests.mix.test_production import synthetic_samples

    (tmp_path / "primary").mkdir()
    synthetic_samples().to_csv(tmp_path / "primary" / "samples.csv", index=False)
    for cores in ("0", "-2", "1025"):   # 1,024: the what-if's work grows with the cores (10^5 ran for minutes)
        assert main(["mva", "--observed", str(tmp_path / "primary"), "--cores", cores]) == 2
        err = capsys.readouterr().err
        assert err == ("capmodel: error: --cores must be an integer from 1 to 1,024, "
                       f"got {cores}\n")
