"""The plain-words summary of a sweep, on a run and steps written here by hand: checked as wording (where the clients
ran, the steps measured and failed, the client-bound steps and why)."""
from capmodel.bench.sweep.describe import describe_sweep


def _step(c, status="ok", bound=False):
    return {"concurrency": c, "status": status, "client_bound": bound, "failure": None if status == "ok" else "boom",
            "client_bound_reasons": ["client host vm: its 2 CPUs shared with the server under test were 97% busy"]
            if bound else []}


def test_describe_names_where_the_clients_ran_and_the_client_bound_steps():
    run = {"clients": "2 Dask workers on 1 host (scheduler tcp://127.0.0.1:1)",
           "shared_host_warning": "the clients run on the server's host (this machine)"}
    text = describe_sweep(run, [_step(1), _step(4, bound=True), _step(8, bound=True), _step(16, "failed")])
    assert text.startswith("The clients ran as 2 Dask workers on 1 host")
    assert "3 steps measured, 1 failed (boom)." in text
    assert "2 of 3 steps may be limited by the client, not the server (at 4, 8 clients)" in text
    assert "97% busy" in text and text.endswith("(this machine).")


def test_describe_says_when_nothing_points_at_the_client():
    text = describe_sweep({"clients": "1 process (this one)"}, [_step(1), _step(2)])
    assert "2 steps measured." in text and "No step shows a sign" in text and "Note" not in text


def test_a_sweep_run_in_one_process_is_not_said_to_run_in_the_reader():
    # run.json keeps the bench's words for its clients; a report rendered later read "1 process (this one)" as if
    # the clients had run in the report's kernel. Older files with those words are read as the bench meant them.
    from capmodel.bench.cluster.executor import InProcess

    for said in (InProcess.workers_described, "1 process (this one)"):
        text = describe_sweep({"clients": said}, [_step(1)])
        assert text.startswith("The clients ran as 1 process (the bench's own); 1 step measured."), text
