"""The bundled planning tables against their source text: the benchANT price table (seeds 000_/002_) and the Micron
Table 1 (seed 001_), parsed here with their own regexes. The excerpts below are verbatim lines of the seeds; where
../shared/seeds/ is present, the test also checks that each excerpt occurs in the seed file."""
import re
from pathlib import Path

import pytest

from capmodel import datasets

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"

BENCHANT_TABLE = """\
m3-xlarge-8-SASmemory-optimized4 vCPU / 32 GB RAMHigh-IO SSD797.76 €
c4-xlarge-4-SASdedicated4 vCPU / 16 GB RAMHigh-IO SSD694.08 €
s3-2xlarge-4-SASgeneral-purpose8 vCPU / 32 GB RAMHigh-IO SSD1,026.72 €
s3-2xlarge-8-SASgeneral-purpose8 vCPU / 64 GB RAMHigh-IO SSD1,180.08 €
m4-2xlarge-8-SASmemory-optimized8 vCPU / 64 GB RAMHigh-IO SSD1,625.04 €
c4-2xlarge-4-SSDdedicated8 vCPU / 32 GB RAMUltra-High-IO SSD1,377.12 €"""

MICRON_TABLE = """\
A 7120.1 818.3 
B 10404.4 1080.4 
C 11455.4 1347.2 
D 28671.5 2464.6 
F 6315.0 794.7 """

MICRON_MULTIPLIERS = """\
A 8.7X 
B 9.6X 
C 8.5X 
D 11.6X 
F 7.9X """


@pytest.mark.parametrize("seed, excerpt", [
    ("000_04c0b366dc252d21.txt", BENCHANT_TABLE), ("002_909615265d08b43c.txt", BENCHANT_TABLE),
    ("001_8ed516b3b3056d2d.txt", MICRON_TABLE), ("001_8ed516b3b3056d2d.txt", MICRON_MULTIPLIERS),
])
def test_excerpts_are_verbatim_from_the_seeds(seed, excerpt):
    path = SEEDS / seed
    if not path.exists():
        pytest.skip(f"{path} not present; the excerpts in this file stand for it")
    text = path.read_text(encoding="utf-8")
    for line in excerpt.splitlines():
        assert line in text


def test_benchant_vm_table_matches_the_article():
    pattern = re.compile(r"^(\S+?-(?:SAS|SSD))(memory-optimized|dedicated|general-purpose)(\d+) vCPU / (\d+) GB "
                         r"RAM(.*SSD)([\d,]+\.\d\d) €$")
    parsed = [pattern.match(line).groups() for line in BENCHANT_TABLE.splitlines()]
    vms = datasets.load("benchant_vms")
    assert len(vms) == len(parsed) == 6
    for (name, family, vcpu, ram, storage, cost), (_, row) in zip(parsed, vms.iterrows()):
        assert (row["vm"], row["family"], row["vcpu"], row["ram_gb"], row["storage"]) == (
            name, family, int(vcpu), int(ram), storage)
        assert row["monthly_cost"] == float(cost.replace(",", ""))
        assert row["currency"] == "EUR"
    assert set(datasets.load("benchant_throughput")["vm"]) == set(vms["vm"])


def test_micron_table_matches_the_brief():
    table = datasets.load("micron_ycsb_96threads")
    parsed = [line.split() for line in MICRON_TABLE.splitlines()]
    stated = {w: float(m.rstrip("X")) for w, m in (line.split() for line in MICRON_MULTIPLIERS.splitlines())}
    assert table["workload"].tolist() == [p[0] for p in parsed]
    assert table["reference_ops_per_s"].tolist() == [float(p[1]) for p in parsed]
    assert table["candidate_ops_per_s"].tolist() == [float(p[2]) for p in parsed]
    assert table.set_index("workload")["stated_multiplier"].to_dict() == stated
    assert (table["reference_nodes"] == 3).all() and (table["candidate_nodes"] == 3).all()
    assert (table["threads"] == 96).all()
