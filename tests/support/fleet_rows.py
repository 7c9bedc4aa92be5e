"""Fleet table rows made by hand for the fleet's tests: a row with the given values and every other column empty, and
a known table of four servers (one sound, one past its target, one unusable, one unreadable)."""
from __future__ import annotations


def fleet_row(**values) -> dict:
    """A fleet row (``capmodel.observe.fleet.FLEET_COLUMNS``) with ``values`` and None elsewhere."""
    from capmodel.observe.fleet import FLEET_COLUMNS

    return {**{c: None for c in FLEET_COLUMNS}, **values}


def known_table():
    """Four servers: b:1 of rs1 sound with 60% spare, a:1 of rs0 3% past its planned throughput, c:1 of rs2 unusable,
    and a folder whose FTDC could not be read."""
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS

    return pd.DataFrame([
        fleet_row(cluster="rs1", member="b:1", busiest_ops=500.0, capacity_ops=2000.0, method="operational laws",
            spare_fraction=0.6, spare_low=0.55, spare_high=0.65, verdict="sound", runway_months=18.8,
            runway_low=17.0, runway_high=20.0, evidence={"grade": "sound", "reasons": []}),
        fleet_row(cluster="rs0", member="a:1", busiest_ops=1030.0, capacity_ops=1250.0, method="operational laws",
            spare_fraction=-0.03, spare_low=-0.05, spare_high=-0.01, verdict="weak", runway_months=0.0,
            runway_low=0.0, runway_high=0.0, evidence={"grade": "weak", "reasons": []}),
        fleet_row(cluster="rs2", member="c:1", verdict="unusable", busiest_ops=9.0, capacity_ops=5.0, spare_fraction=-0.8,
            runway_months=0.0, evidence={"grade": "unusable", "reasons": []}),
        fleet_row(folder="/x/broken", error="/x/broken/metrics.1: truncated FTDC file"),
    ], columns=FLEET_COLUMNS)
