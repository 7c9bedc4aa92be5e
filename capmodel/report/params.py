"""Report parameters: read a notebook's ``parameters`` cell, coerce ``-p KEY VALUE`` text to its types, redact secrets.

A value given on the command line is text; it takes the type of the notebook's default for that name (``8`` becomes
an int where the default is ``4``, ``1,2,4`` a list where the default is a list). Passwords never leave the kernel:
``redacted`` is what reports show, ``secrets_in`` what must be scrubbed from every written file.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from urllib.parse import unquote

from capmodel.constraints import Number, Sequence, number_in, with_name
from capmodel.errors import InputError, ReportError
from capmodel.redact import MASK, is_secret_name, redact_mapping, redact_url_password, url_password

# What each numeric report parameter may be (capmodel.constraints), by name: the same name means the same thing in
# every report; bounds inclusive. The kind follows the notebook's default (an int stays an int, a float a float); a
# number without an entry must still be finite and at most ANY_NUMBER in size. A list (concurrency, targets,
# sensitivity, scenarios) has every value checked.
ANY_NUMBER = 1e15
#: rates the shard study divides by or targets: 0 is refused before a kernel starts, not inside it (03's
#: ops_per_user and baseline_users keep 0: it is their "not given")
ABOVE_ZERO = {"target_rate", "per_shard_throughput"}
REPORT_PARAMETER_CONSTRAINTS = {name: Number(None, low, high, low_open=name in ABOVE_ZERO) for name, (low, high) in {
    "upto": (0, 100_000), "bootstrap": (0, 100_000), "level": (0.5, 0.9999), "peak_fraction": (0.01, 1.0),
    "growth": (-0.99, 10.0), "sigma": (0.0, 1.0), "kappa": (0.0, 1.0), "lambda_": (1e-9, 1e12),
    "sensitivity": (0.0, 1.0), "scenarios": (0.0, 1.0), "read_share": (0.0, 1.0),
    "latency_target_ms": (0.0, 1e7), "latency_p95_ms": (0.0, 1e7), "latency_increase": (0.0, 100.0),
    "batch_latency_ms": (0.0, 1e7),
    "baseline_users": (0.0, 1e12), "current_users": (0.0, 1e12), "targets": (1, 1e12), "target_rate": (0.0, 1e12),
    "per_shard_throughput": (0.0, 1e12), "ops_per_user": (0.0, 1e9),
    "max_nodes": (1, 100_000), "max_shards": (1, 100_000), "batch_size": (1, 1_000_000),
    "database_cpus": (1, 10_000), "tenant_threads": (1, 100_000),
    "clusters": (1, 1_000), "members": (1, 50), "hours": (0.05, 24 * 31), "utilization_target": (0.01, 1.0),
    "workers": (1, 1_024), "cores": (0.0, 1_024), "monthly_growth": (-0.99, 10.0), "seed": (0, 2**32 - 1),
    "concurrency": (1, 10_000), "duration": (0.001, 86_400), "warmup": (0.0, 3_600), "records": (0, 1_000_000_000),
    "interval": (0.01, 3_600), "bins": (0, 10_000),
}.items()}
ANY = Number(None, -ANY_NUMBER, ANY_NUMBER)


def parameter_constraint(name: str, like=None) -> Number:
    """The constraint of report parameter ``name``, of the kind of ``like`` (the notebook's default: an int or a
    float; anything else keeps the kind of the value given)."""
    kind = None if isinstance(like, bool) or not isinstance(like, (int, float)) else type(like)
    return with_name(REPORT_PARAMETER_CONSTRAINTS.get(name, ANY), f"parameter {name}", kind=kind)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked_parameter(name: str, value, like=None):
    """A checked copy of ``value`` for parameter ``name`` whose notebook default is ``like``: a number (or anything
    given where the default is a number) inside ``name``'s range and of the default's kind, a list whose every value
    is; text, flags, mappings and None where the default is none of those come back as they are."""
    constraint = parameter_constraint(name, like)
    if _is_number(value) or (_is_number(like) and value is not None):
        return constraint.check(value, InputError)
    if isinstance(value, (list, tuple)) and not value and isinstance(like, (list, tuple)) and like:
        raise InputError(f"parameter {name}: give at least one value (the default is {', '.join(map(str, like))})")
    if isinstance(value, (list, tuple)) and (isinstance(like, (list, tuple)) or all(map(_is_number, value))):
        return Sequence(constraint, constraint.name).check(value, InputError)
    return value


#: a parameters cell's comment saying what a value that stands for "not given" means: '0 means 1.5 x the largest
#: measured', '"" means the bundled benchANT study', '0: none (...)', '0 takes what the server reports (...)'
_NOT_GIVEN = re.compile(r'(?:^|;\s*)((?:0|"")(?::| means| takes| reads| runs| starts| generates| recognises)[^;]*)')


def not_given_meanings(path: str | Path) -> dict:
    """Name -> the notebook's own words for its parameter's "not given" value (0 or ""), from the comment beside it in
    the ``parameters`` cell: a page forwarded with 'latency_p95_ms = 0' must say that 0 is no target of 0 ms."""
    from capmodel.report.notebooks import read_json

    out = {}
    for cell in read_json(path)["cells"]:
        if isinstance(cell, dict) and "parameters" in ((cell.get("metadata") or {}).get("tags") or []):
            source = cell.get("source", "")
            for line in ("".join(source) if isinstance(source, list) else str(source)).splitlines():
                name, _, comment = line.partition("#")
                found = _NOT_GIVEN.search(comment.strip())
                if "=" in name and found:
                    out[name.split("=")[0].strip()] = found.group(1).strip()
            break
    return out


def notebook_parameters(path: str | Path) -> dict:
    """Name -> default value of the notebook's cell tagged ``parameters`` (its top-level assignments, as papermill
    reads them: a Python literal's value, else the expression's text)."""
    from capmodel.report.notebooks import read_json

    cells = [c for c in read_json(path)["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"
             and "parameters" in ((c.get("metadata") or {}).get("tags") or [])]
    if not cells:
        raise ReportError(f"{path}: no code cell tagged 'parameters'")
    source = cells[0].get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        raise ReportError(f"{path}: the parameters cell is not valid Python") from None
    defaults = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        try:
            defaults[target.id] = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            defaults[target.id] = ast.get_source_segment(source, value)  # an expression; passed as text
    return defaults


def _coerce_scalar(text: str, like, name: str, constraint: Number | None = None):
    text = text.strip()
    if isinstance(like, bool):
        lowered = text.lower()
        if lowered in {"true", "yes", "on", "1"}:
            return True
        if lowered in {"false", "no", "off", "0"}:
            return False
        raise InputError(f"parameter {name}: expected true or false, got {text[:40]!r}")
    if isinstance(like, (int, float)):
        constraint = constraint or parameter_constraint(name, like)
        return constraint.check(number_in(text, type(like)), InputError)
    if like is None:  # no type to follow: a number or literal if it reads as one, else text
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
    return text


def coerce(name: str, text: str, default):
    """The value of ``-p name text`` in the type of the notebook's ``default``, checked against its constraint."""
    if not isinstance(text, str):
        return checked_parameter(name, text, default)
    if isinstance(default, (list, tuple)):
        stripped = text.strip()
        like = default[0] if default else None
        if stripped.startswith(("[", "(")):
            try:
                items = json.loads(stripped)
            except (ValueError, RecursionError):
                try:
                    items = ast.literal_eval(stripped)
                except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                    raise InputError(f"parameter {name}: cannot read {text[:40]!r} as a list") from None
            if not isinstance(items, (list, tuple)) or any(isinstance(i, (list, tuple, dict)) for i in items):
                raise InputError(f"parameter {name}: expected a flat list, got {text[:40]!r}")
            return checked_parameter(name, list(items), default)
        every = with_name(parameter_constraint(name, like), f"parameter {name}: every value")
        items = [_coerce_scalar(part, like, name, every) for part in stripped.split(",") if part.strip()]
        return checked_parameter(name, items, default)
    if isinstance(default, dict):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            raise InputError(f"parameter {name}: expected a JSON object, got {text[:40]!r}") from None
        if not isinstance(value, dict):
            raise InputError(f"parameter {name}: expected a JSON object, got {text[:40]!r}")
        return value
    return checked_parameter(name, _coerce_scalar(text, default, name), default)


def _masked_parts(original: str, shown: str) -> set[str]:
    """The pieces of ``original`` that redaction replaced by the mask in ``shown``."""
    from difflib import SequenceMatcher

    parts = set()
    for op, i1, i2, j1, j2 in SequenceMatcher(None, original, shown, autojunk=False).get_opcodes():
        if op == "replace" and MASK in shown[j1:j2]:
            parts.add(original[i1:i2])
    return parts


def secrets_in(parameters: dict) -> list[str]:
    """Every secret text in the parameters (longest first): passwords inside URIs (as written and decoded), secret
    URI options, and values of password-like names."""
    found = set()
    shown = redacted(parameters)
    for key, value in parameters.items():
        if isinstance(value, str):
            if is_secret_name(key) and value:
                found.add(value)
            password = url_password(value)
            if password:
                found.update({password, unquote(password)})
            if isinstance(shown.get(key), str) and shown[key] != value:
                found.update(_masked_parts(value, shown[key]))
        elif isinstance(value, dict):
            found.update(secrets_in(value))
    return sorted((s for s in found if s and s != MASK), key=len, reverse=True)


def _redact_value(key: str, value):
    if isinstance(value, dict):
        return redacted(value)
    if isinstance(value, str):
        if is_secret_name(key) and value:
            return MASK
        return redact_url_password(value)
    return value


def redacted(parameters: dict) -> dict:
    """A copy of the parameters safe to show: passwords in URIs and password-like values become ``***``."""
    return redact_mapping({key: _redact_value(key, value) for key, value in parameters.items()})


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` with every secret replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
