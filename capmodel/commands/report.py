"""``capmodel report``: execute notebooks with papermill into dated, self-contained HTML reports."""
from __future__ import annotations

import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="render notebook reports (executed .ipynb + self-contained .html + index.html)",
        description="Execute report notebooks with papermill and write NAME.ipynb, NAME.html and index.html into "
        "the output folder. Parameters given with -p take the type of the notebook's default.")
    p.add_argument("names", nargs="*", metavar="NAME", help="report(s) to render, e.g. 03_vm_capacity_plan")
    p.add_argument("--all", action="store_true", help="render every report (the live benchmark only with --live)")
    p.add_argument("--live", action="store_true", help="with --all: also run the live benchmark report(s)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="set a notebook parameter (repeatable); with several reports, applies to those that have it")
    p.add_argument("--out", default="reports", metavar="DIR", help="output folder (default: reports)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="reports rendered at a time (default: 2)")
    p.add_argument("--show-code", action="store_true", help="keep code cells visible in the HTML")
    p.add_argument("--list", action="store_true", help="list the reports and their parameters, render nothing")
    p.add_argument("--json", action="store_true", help="print one JSON object with every report's record")
    p.set_defaults(func=run)


def _selected(args, notebooks) -> list[str]:
    from capmodel.errors import InputError

    if args.all and args.names:
        raise InputError("report: give report names or --all, not both")
    if args.all:
        return [n for n in notebooks.names() if args.live or not notebooks.is_live(n)]
    if not args.names:
        raise InputError(f"report: name a report or use --all (reports: {', '.join(notebooks.names())})")
    for name in args.names:
        notebooks.path(name)  # unknown names fail here, listing the known ones
    return list(args.names)


def _given(parameters: dict) -> str:
    """The parameters a failed report was given, for its error line (an error inside the kernel names no input:
    "no model could be ranked" of which file?); secrets already masked (``redacted``)."""
    if not parameters:
        return ""
    said = ", ".join(f"-p {key} {value}" for key, value in parameters.items())
    return f" (given {said if len(said) <= 200 else said[:200].rsplit(' ', 1)[0] + ' ...'})"


def _parameters(args, names, notebooks) -> dict:
    from capmodel.errors import InputError
    from capmodel.report.params import coerce, notebook_parameters

    defaults = {name: notebook_parameters(notebooks.path(name)) for name in names}
    chosen: dict[str, dict] = {name: {} for name in names}
    given: dict = {}   # (report, parameter) -> the -p that set it: one value per parameter, not the last silently
    for key, text in args.parameter:
        for name in names:
            target = key
            if target not in defaults[name]:
                continue
            before = given.get((name, target))
            if before is not None and before[1] != text:
                raise InputError(f"report: -p {before[0]} {before[1]!r} and -p {key} {text!r} set {name}'s "
                                 f"'{target}' twice; give it once")
            given[(name, target)] = (key, text)
    for key, text in args.parameter:
        takers = [name for name in names if key in defaults[name]]
        if not takers:
            known = sorted({k for d in defaults.values() for k in d})
            raise InputError(f"report: no selected report has a parameter '{key}' (known: {', '.join(known)})")
        for name in takers:
            chosen[name][key] = coerce(key, text, defaults[name][key])
    return chosen


def run(args) -> int:
    from capmodel.errors import ReportError
    from capmodel.jsonable import print_json
    from capmodel.report import notebooks
    from capmodel.report.params import notebook_parameters, redacted

    if args.list:
        for name in notebooks.names():
            live = " (live)" if notebooks.is_live(name) else ""
            print(f"{name}{live}")
            for key, value in redacted(notebook_parameters(notebooks.path(name))).items():
                print(f"    {key} = {value!r}")
        return 0

    from capmodel.extras import require
    from capmodel.output_folder import check_folder
    from capmodel.report.checks import check_report_parameters

    require("notebooks", "capmodel report")
    check_folder(args.out)

    names = _selected(args, notebooks)
    for name in names:
        if notebooks.is_live(name):   # it benchmarks a server: the embedded mongod and the drivers
            require("bench", f"capmodel report {notebooks.report_name(name)}")
    chosen = _parameters(args, names, notebooks)
    for name in names:  # before the rendering machinery (nbformat, papermill: seconds of imports) is even loaded
        check_report_parameters(notebook_parameters(notebooks.path(name)), chosen[name], live=notebooks.is_live(name))

    from capmodel.report.render import render

    try:
        runs, index = render(names, args.out, chosen, jobs=args.jobs, show_code=args.show_code, checked=True)
    except KeyboardInterrupt:
        print(f"capmodel: {_kept(args.out, names)}", file=sys.stderr)
        return 130
    failed = [r for r in runs if r.error]
    record = {"index": str(index), "reports": [r.record() for r in runs]} if args.json else None
    if args.json and not failed:
        print_json(record)
    elif not args.json:
        for r in runs:
            if not r.error:
                print(f"{r.name}: ok  [kernel start {r.kernel_start_s:.1f} s, cells {r.execution_s:.1f} s, "
                      f"papermill total {r.total_s:.1f} s, html {r.convert_s:.1f} s] -> {r.html}")
        print(f"index: {index.resolve()}")
    if failed:   # with --json capmodel.cli prints the records and the error as one object (not two documents)
        sys.stdout.flush()
        raise ReportError("; ".join(f"report {r.name} failed{_given(r.parameters)}: {r.error}" for r in failed)
                          + f" (the traceback is in {Path(args.out) / (failed[0].name + '.log')})",
                          json=record)
    return 0


def _kept(out, names) -> str:
    """What a render interrupted by Ctrl-C leaves: the pages it finished, listed in a fresh index, and which not."""
    from capmodel.report.index import reports_in, write_index

    done = [r["name"] for r in reports_in(out) if r.get("name") in names and r.get("html") and not r.get("error")]
    if not done:
        return f"interrupted; no report was finished, nothing was kept in {out}"
    index = write_index(out)
    rest = [n for n in names if n not in done]
    left = f"; not rendered: {', '.join(rest)} (render them again)" if rest else ""
    return (f"interrupted; kept {len(done)} finished report{'' if len(done) == 1 else 's'} ({', '.join(done)}) in "
            f"{out}, listed in {index}{left}")
