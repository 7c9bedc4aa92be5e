"""Report 07's source choice (``capmodel.report.production_report``) and report 05's study check
(``ShardReport.on_study``): which telemetry is read, what is hashed and named unused, and the same answer as
``production_answer`` called on the same samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from capmodel.observe import bundled_sample, observe_ftdc
from capmodel.plan.production import production_answer
from capmodel.report.production_report import production_report
from capmodel.report.shard_report import shard_report
from capmodel.studies import DOCUMENTDB_SHARDS, DOCUMENTDB_TARGET_RATE


@pytest.fixture(scope="module")
def bundled():
    return production_report(bootstrap=20)


def test_the_bundled_sample_is_read_when_no_source_is_given(bundled):
    sample = bundled_sample()
    assert bundled.bundled and bundled.bundled_note and bundled.source == "the bundled FTDC sample"
    assert bundled.unused == ["uri", "duration", "interval"]
    assert [Path(p).parent for p in bundled.inputs.values()] == [Path(sample["path"])] * len(bundled.inputs)
    assert bundled.mongodb_version == sample["mongod"]
    direct = observe_ftdc(sample["path"], sample["since"], sample["until"])
    assert len(bundled.samples) == len(direct.samples)
    answer = production_answer(direct.samples, direct.curve, n_bootstrap=20, bins=8, latency_target_ms=5.0,
                               monthly_growth=0.05)
    assert bundled.result.observed_peak_throughput == pytest.approx(answer.observed_peak_throughput, rel=1e-12)
    assert bundled.result.saturation_throughput.estimate == pytest.approx(answer.saturation_throughput.estimate,
                                                                         rel=1e-12)


def test_an_observe_folder_is_read_as_written_and_named(bundled, tmp_path):
    bundled.observation.write(tmp_path)
    report = production_report(observed=str(tmp_path), bootstrap=20)
    assert not report.bundled and report.bundled_note is None
    assert report.inputs == {"observed": str(tmp_path / "samples.csv")}
    assert report.unused == ["ftdc", "uri", "duration", "interval", "since", "until"]
    assert len(report.samples) == len(bundled.samples)
    assert report.result.observed_peak_throughput == pytest.approx(bundled.result.observed_peak_throughput,
                                                                   rel=1e-9)
    assert report.source in report.summary()


@pytest.mark.parametrize("target, per_shard, on_study", [
    (DOCUMENTDB_TARGET_RATE, DOCUMENTDB_TARGET_RATE / DOCUMENTDB_SHARDS, True),
    (DOCUMENTDB_TARGET_RATE, 60_000.0, False),
    (2 * DOCUMENTDB_TARGET_RATE, DOCUMENTDB_TARGET_RATE / DOCUMENTDB_SHARDS, False),
])
def test_report_05_introduces_the_study_only_on_its_figures(target, per_shard, on_study):
    assert shard_report(target, per_shard, 0.0, 0.0).on_study is on_study
