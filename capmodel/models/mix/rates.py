"""The rates a mix what-if asks of each member (``capmodel.models.mix.production.mix_what_if``): the classes' rates,
as given or as factors of the observed ones, and the factor of the set's writes that the members' replication work
follows."""
from __future__ import annotations

from collections.abc import Mapping

from capmodel.constraints import Number
from capmodel.data.curve_columns import OPERATION_CLASSES
from capmodel.errors import InputError
from capmodel.models.evidence import Reason

#: what a what-if may ask (capmodel.constraints): a factor of the observed rate, or a rate in ops/s; beyond these a
#: figure is a slip of the keyboard, and near 1e308 the utilization overflows to infinity
SCALE_FACTOR = Number(float, 0.0, 1e6, name="scale factor", wanted_text="a number from 0 to 1,000,000",
                      text=False)
RATE = Number(float, 0.0, 1e9, name="rate", wanted_text="a number from 0 to 1,000,000,000 ops/s",
              text=False)

def scaled_rates(demands, scale: Mapping[str, float] | None = None,
                 rates: Mapping[str, float] | None = None) -> dict:
    """Per-class rates of the what-if: ``rates`` as given, or the observed means times ``scale`` (default 1)."""
    if rates is not None and scale is not None:
        raise InputError("give either scale (factors of the observed rates) or rates (ops/s), not both")
    given = dict(rates if rates is not None else (scale or {}))
    unknown = sorted(set(map(str, given)) - set(OPERATION_CLASSES))
    if unknown:
        raise InputError(f"{'rates' if rates is not None else 'scale'} names {unknown[0]!r}; classes are "
                         f"{', '.join(OPERATION_CLASSES)}")
    out = {}
    for c in demands.classes:
        value = given.get(c, None if rates is not None else 1.0)
        if value is None:
            value = 0.0
        value = (RATE if rates is not None else SCALE_FACTOR).check(
            value, InputError, f"{'rates' if rates is not None else 'scale'}: {c}")
        out[c] = float(value) if rates is not None else float(value) * demands.baseline[c]
    return out


def writes_factor(members: list, scale: Mapping[str, float] | None = None,
                  rates: Mapping[str, float] | None = None) -> tuple[float, list]:
    """How many times the observed writes the what-if asks of the set, which its members' replication work follows:
    the writes' scale factor; for rates, the writes asked over the writes its members were observed serving (none
    asked: 0). (factor, reasons): where rates are asked and no member was observed serving writes, the replication
    work stays as observed, and a reason says so."""
    if rates is None:
        given = (scale or {}).get("writes", 1.0)
        return float(SCALE_FACTOR.check(given, InputError, "scale: writes")), []
    asked = float(RATE.check(rates.get("writes", 0.0), InputError, "rates: writes"))
    observed = sum(m.baseline.get("writes", 0.0) for m in members)
    if observed > 0:
        return asked / observed, []
    replicating = [m.member for m in members if m.replication_cpu_per_op > 0]
    return 1.0, [Reason("replication_kept", "weak", f"{member}: no member was observed serving writes, so its "
                        "replication work (which follows the primary's writes) is kept as observed") for member in
                 replicating]
