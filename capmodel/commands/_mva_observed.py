"""``capmodel mva --observed DIR ... --cores N --scale reads=1.3,writes=2``: the mix what-if from production.

Each DIR is a ``capmodel observe`` output folder (its ``samples.csv``); several DIRs are the members of one replica
set (named by their folders), and the answer names the one that saturates first. The model is
``capmodel.models.mix.production``.
"""
from __future__ import annotations

import math
from pathlib import Path

from capmodel.errors import InputError, shown
from capmodel.models.mix.intervals import usable_intervals

MAX_SAMPLES_BYTES = 64 * 2**20


def parse_assignments(text: str, option: str, bound=None) -> dict:
    """'reads=1.3,writes=2' -> {'reads': 1.3, 'writes': 2.0}; one error naming the option and the part otherwise;
    ``bound`` (a ``capmodel.constraints.Number``) is each value's range."""

    out = {}
    for part in [p for p in text.replace(" ", "").split(",") if p]:
        name, sep, value = part.partition("=")
        if not sep or not name:
            raise InputError(f"{option}: expected CLASS=NUMBER[,CLASS=NUMBER], got {shown(part)}")
        if name in out:
            raise InputError(f"{option}: {name} is given twice")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"{option}: {name}={shown(value)} is not a number") from None
        if not math.isfinite(number) or number < 0:
            raise InputError(f"{option}: {name}={value} must be a finite number >= 0")
        if bound is not None:
            number = bound.check(number, InputError, f"{option}: {name}")
        out[name] = number
    if not out:
        raise InputError(f"{option}: empty; give e.g. reads=1.3,writes=2")
    return out


def observed_samples(folder: str):
    """The ``samples.csv`` of an observe output folder (or the file itself), size-bounded, with the columns the
    what-if needs; errors name the file."""
    from capmodel.observe.observation import read_samples, refuse_several_members

    path = Path(folder)
    if path.is_dir():
        path = path / "samples.csv"
    if not path.is_file():
        raise InputError(f"--observed {folder}: no samples.csv there (write one with capmodel observe --out)")
    table = read_samples(path, MAX_SAMPLES_BYTES)
    usable_intervals(table, str(path))  # the columns, checked here so that the error names the file
    refuse_several_members(table, path.parent, "--observed", repeatable=True)
    return table


def samples_path(folder: str) -> Path:
    """The ``samples.csv`` an ``--observed`` value names, resolved (a folder, its ``samples.csv``, a symlink to
    either: one file)."""
    path = Path(folder)
    return (path / "samples.csv" if path.is_dir() else path).resolve()


def member_name(folder: str, taken: set) -> str:
    name = Path(folder).resolve().name if Path(folder).is_dir() else Path(folder).resolve().parent.name
    base, i = name or "server", 2
    while name in taken:
        name, i = f"{base}-{i}", i + 1
    return name


def run_observed(args) -> int:
    from capmodel.constraints import with_name
    from capmodel.jsonable import print_json
    from capmodel.models.mix.production import SERVER_CORES, mix_what_if
    from capmodel.models.mix.rates import RATE, SCALE_FACTOR

    if args.model is not None:
        raise InputError("give either MODEL.yaml or --observed DIR, not both")
    for folder in args.observed:      # a folder that is not there is the first thing to say, before any option
        if not folder.strip():
            raise InputError("--observed is empty: give a capmodel observe output folder")
        if not Path(folder).exists():
            raise InputError(f"--observed {folder}: no such folder (write one with capmodel observe --out)")
        if not samples_path(folder).is_file():
            raise InputError(f"--observed {folder}: no samples.csv there (write one with capmodel observe --out)")
    if args.cores is not None:
        with_name(SERVER_CORES, "--cores").check(args.cores, InputError)     # the model's rule, in the option's name
    if args.scale and args.rates:
        raise InputError("give either --scale or --rates, not both")
    if not 0 <= args.bootstrap <= 10_000:
        raise InputError(f"--bootstrap must be from 0 to 10,000 resamples, got {args.bootstrap}")
    if not 0 < args.level < 1:
        raise InputError(f"--level must be between 0 and 1 (e.g. 0.9), got {args.level}")
    observations: dict = {}
    taken: set = set()
    seen: dict = {}
    for folder in args.observed:
        where = samples_path(folder)
        if where in seen:   # one server given twice would be two members, and the set's limit counted twice
            raise InputError(f"--observed {folder}: the same samples as --observed {seen[where]}: "
                             "give each member once")
        seen[where] = folder
        name = member_name(folder, taken)
        taken.add(name)
        observations[name] = observed_samples(folder)
    # a repeated option adds its classes (argparse would keep the last one alone); a class given twice is refused
    scale = parse_assignments(",".join(args.scale), "--scale", SCALE_FACTOR) if args.scale else None
    rates = parse_assignments(",".join(args.rates), "--rates", RATE) if args.rates else None
    cores, said = cores_by_member(observations, args.cores)
    result = mix_what_if(observations, cores, scale=scale, rates=rates, n_bootstrap=args.bootstrap,
                         level=args.level)
    if args.json:
        record = result.to_json()
        for member in record["members"]:
            member["cores_source"] = "--cores" if args.cores is not None else "samples"
        print_json({**record, "cores_note": said})
        return 0
    print(asked_load(scale, rates))
    if said:
        print(said)
    print(result.describe())
    print(result.evidence.describe().replace("**", ""))     # markdown for reports; plain on a terminal
    return 0


def cores_by_member(observations: dict, given: int | None) -> tuple[dict, str]:
    """{member: cores} and what to say of them: each member's host cores as its samples record them (observe's
    ``cores`` column), or ``given`` (--cores) for every member, said where it overrides a recorded figure; a
    member whose samples record none is named in the refusal."""
    from capmodel.formatting import number
    from capmodel.observe.capacity import recorded_cores

    recorded = {name: recorded_cores(samples) for name, samples in observations.items()}
    if given is not None:
        other = {name: c for name, c in recorded.items() if c is not None and c != given}
        said = (f"--cores {given} overrides the cores the samples record for every member ("
                + ", ".join(f"{name}: {number(c)}" for name, c in other.items()) + ")." if other else "")
        return {name: given for name in observations}, said
    lacking = [name for name, c in recorded.items() if c is None]
    if lacking:
        raise InputError(f"--observed: the samples of {', '.join(lacking)} record no cores (no 'cores' column with a "
                         "figure: an older observe, or a server that did not report them): give --cores N")
    cores = {name: c for name, c in recorded.items() if c is not None}     # every one, after the check above
    odd = {name: c for name, c in cores.items() if c != int(c)}
    if odd:
        name, c = next(iter(odd.items()))
        raise InputError(f"--observed {name}: its samples record {number(c)} cores, not a whole number: give --cores N")
    return {name: int(c) for name, c in cores.items()}, ""


def asked_load(scale: dict | None, rates: dict | None) -> str:
    """The load the answer is for, said before it (the figures alone do not tell a scaled load from the observed
    one): 'What if: reads ×1.3, writes ×2 (the other classes as observed).'"""
    from capmodel.data.curve_columns import OPERATION_CLASSES
    from capmodel.formatting import number

    if rates:      # a class not named runs no operations (models.mix_rates.scaled_rates)
        named = ", ".join(f"{c} at {number(v, 4)} ops/s" for c, v in rates.items())
        return f"What if: {named}" + ("." if set(OPERATION_CLASSES) <= set(rates) else " (no other operations).")
    if scale:
        return "What if: " + ", ".join(f"{c} ×{number(v, 4)}" for c, v in scale.items()) + \
            " (the other classes as observed)."
    return "The observed load (no --scale or --rates asked):"
