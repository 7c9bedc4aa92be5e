"""Record keys of the YCSB workloads are YCSB's own: ``_id`` = "user" + zeros to ``zeropadding`` + the record number
(``insertorder=ordered``) or its ``Utils.fnvhash64`` (``hashed``, YCSB's default).

The expected keys were printed by YCSB 0.17.0 itself: ``site.ycsb.workloads.CoreWorkload.buildKeyName`` of
``core-0.17.0.jar`` (``../shared/tools/ycsb-0.17/lib``) called for each record number, with ``zeropadding`` 1 (the
default) and 25. ``benchmarks/bench_vs_ycsb.py`` checks the same against a collection the YCSB jars load. Against the
real embedded mongod, a run with ``allow_existing`` over a collection named as YCSB names it finds every key.
"""
from __future__ import annotations

import dataclasses

import pytest

from capmodel.bench.client.operations import KeySpace
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.bench.workload.definition import load_workload, parse_workload
from capmodel.errors import InputError

YCSB_HASHED_KEYS = {  # record number: CoreWorkload.buildKeyName(number), insertorder=hashed, zeropadding=1
    0: "user6284781860667377211",
    1: "user8517097267634966620",
    2: "user1820151046732198393",
    3: "user4052466453699787802",
    299: "user6515985265932213335",
    300: "user9221199768492291250",
    9999: "user1396365430676646275",
    123456789: "user2350796791908741607",
}
YCSB_PADDED_KEYS = {  # the same with zeropadding=25
    0: "user0000006284781860667377211",
    300: "user0000009221199768492291250",
    123456789: "user0000002350796791908741607",
}


@pytest.mark.parametrize("name", ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"])
def test_bundled_ycsb_workloads_name_records_as_ycsb_does(name):
    workload = load_workload(name)
    numbers = list(YCSB_HASHED_KEYS)
    assert workload.key_names(numbers) == [YCSB_HASHED_KEYS[k] for k in numbers]
    keyspace = KeySpace(workload, existing=10)
    assert [keyspace.name(k) for k in numbers] == keyspace.names(numbers)


def test_zero_padding_pads_the_number_as_ycsb_zeropadding_does():
    spec = {"name": "padded", "collection": "t", "records": 10, "fields": {"count": 1, "length": 10},
            "keys": {"order": "hashed", "zero_padding": 25}, "operations": {"read": 1}}
    workload = parse_workload(spec)
    assert workload.key_names(list(YCSB_PADDED_KEYS)) == list(YCSB_PADDED_KEYS.values())
    ordered = parse_workload({**spec, "keys": {"order": "ordered", "zero_padding": 6}})
    assert ordered.key_names([0, 42, 1234567]) == ["user000000", "user000042", "user1234567"]


def test_key_naming_is_part_of_what_the_loaded_data_is():
    workload = load_workload("ycsb-c")
    assert dataclasses.replace(workload, key_padding=25).fingerprint() != workload.fingerprint()


@pytest.mark.parametrize("padding", [0, 101, "5", True, 2.5])
def test_zero_padding_out_of_range_is_refused_naming_the_key(padding):
    spec = {"name": "padded", "collection": "t", "records": 10, "fields": {"count": 1, "length": 10},
            "keys": {"order": "hashed", "zero_padding": padding}, "operations": {"read": 1}}
    with pytest.raises(InputError, match="keys.zero_padding must be an integer from 1 to 100"):
        parse_workload(spec)


def ycsb_key(number: int) -> str:
    """YCSB's key for a record number, from its published algorithm: FNV-1a over the number's 8 bytes (lowest
    first), the 64-bit result read as a Java long, Math.abs, after "user" (zeropadding 1)."""
    h = 0xCBF29CE484222325
    for byte in number.to_bytes(8, "little"):
        h = ((h ^ byte) * 0x100000001B3) % 2**64
    signed = h - 2**64 if h >= 2**63 else h
    return f"user{signed if signed == -(2**63) else abs(signed)}"


def test_the_published_algorithm_gives_the_keys_ycsb_printed():
    assert {k: ycsb_key(k) for k in YCSB_HASHED_KEYS} == YCSB_HASHED_KEYS


def test_a_run_over_a_collection_ycsb_loaded_finds_every_key(mongod, tmp_path):
    records = 2000
    client = mongod.client()
    database = client["capmodel_test_ycsb_keys"]
    client.drop_database(database.name)
    try:
        # the collection as YCSB's -load writes it: usertable, _id YCSB's key, field0..field9 (not capmodel's)
        database["usertable"].insert_many(
            [{"_id": ycsb_key(k), **{f"field{j}": "x" * 100 for j in range(10)}} for k in range(records)])
        before = client.admin.command("serverStatus")
        cfg = BenchConfig(workload="ycsb-c", concurrency=[2], records=records, database=database.name,
                          allow_existing=True, duration=1.0, warmup=0.2, calibrate=False)
        sweep = run_sweep(mongod.uri, cfg, tmp_path / "run", progress=False)
        after = client.admin.command("serverStatus")
    finally:
        client.drop_database(database.name)
        client.close()
    assert sweep.run["data"] == "as-is"
    reads = after["opLatencies"]["reads"]["ops"] - before["opLatencies"]["reads"]["ops"]
    returned = after["metrics"]["document"]["returned"] - before["metrics"]["document"]["returned"]
    assert reads > 200
    # each workload-C read asks for one key; every one found returns one document (the serverStatus calls and the
    # run's set-up add a few reads that return nothing, so returned may fall short by those, never by a share)
    assert 0.98 * reads <= returned <= reads
