"""Property-based tests (hypothesis) of the readers, fit, the plan/nodes/shards options, workload YAML, model files,
output folders and the bench options: whatever is drawn, capmodel accepts it or refuses it with one CapmodelError
(one line and exit 2 on the command line) that names the input; never a traceback, a warning or stray output.
``benchmarks/fuzz.py`` runs the same checks on tens of thousands of examples.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.support import awkward_folders as hf
from tests.support import awkward_inputs as hi
from tests.support import awkward_models as hm

QUICK = settings(max_examples=60, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@QUICK
@given(data=hi.csv_files())
def test_reader(data):
    assert hi.check_reader(data) in hi.ACCEPTABLE


@QUICK
@given(rows=hi.curves)
def test_fit(rows):
    assert hi.check_fit(rows) in hi.ACCEPTABLE


@QUICK
@given(data=hi.workload_files())
def test_workload_yaml(data):
    assert hi.check_workload(data) in hi.ACCEPTABLE


@QUICK
@given(kwargs=hi.bench_options)
def test_bench_options(kwargs):
    assert hi.check_bench_config(kwargs) in hi.ACCEPTABLE


@settings(QUICK, max_examples=30)
@given(pairs=hi.option_sets(hi.PLAN_OPTIONS))
def test_plan_options(pairs):
    assert hi.check_command("plan", pairs) in hi.ACCEPTABLE


@settings(QUICK, max_examples=30)
@given(pairs=hi.option_sets(hi.NODES_OPTIONS))
def test_nodes_options(pairs):
    assert hi.check_command("nodes", pairs) in hi.ACCEPTABLE


@settings(QUICK, max_examples=30)
@given(pairs=hi.option_sets(hi.SHARDS_OPTIONS))
def test_shards_options(pairs):
    assert hi.check_command("shards", pairs) in hi.ACCEPTABLE


@settings(QUICK, max_examples=150)
@given(state=hf.folder_states)
def test_output_folders(state):
    """Whatever --out holds (foreign files, symlinks, folders, FIFOs, torn or newer records, another
    run's lock), a run's writes are accepted or refused naming the folder, and nothing it did not write changes."""
    assert hf.check_output_folder(state) in hi.ACCEPTABLE


@settings(QUICK, max_examples=60)
@given(example=hf.wide_csv_files())
def test_reader_bounds(example):
    assert hf.check_bounded_reader(example) in hi.ACCEPTABLE


# outcome of each model file already checked in this session: the strategy draws some files again and again (its
# many-classes kind is one of three files, 2,000 classes costing about a second under the memory guard)
_MODEL_OUTCOMES: dict[bytes, str] = {}


@settings(QUICK, max_examples=100)
@given(data=hm.model_files())
def test_mva_model_files(data):
    """A hundred model files (every kind the strategy draws; a file of 2,000 classes costs seconds under the memory
    guard, so ``benchmarks/fuzz.py`` runs the thousands): only one-line refusals naming the file, in bounded time and
    memory (tests/support/awkward_models.py). A file drawn again is not run again: its outcome is the one ``capmodel
    mva`` gave it."""
    if data not in _MODEL_OUTCOMES:
        _MODEL_OUTCOMES[data] = hm.check_model(data)
    assert _MODEL_OUTCOMES[data] in hi.ACCEPTABLE
