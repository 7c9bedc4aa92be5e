"""Numbers and tables formatted for people, the same in reports and in the command line's text.

One set of rules: integers as integers with thousands separators, other numbers to a few significant digits (never
``1.000000e+06``), R² with enough digits to tell 0.9996 from 1, percentages as percentages, a word instead of
NaN/None/inf (the caller says which word: "unreachable", "none fits", "—"), units in column headers. A ``Table`` shows
as HTML in a notebook (no index column, a CSV download link that works offline) and as aligned text in a terminal.

One precision per column: a column shows all its figures with one number of decimals, the most any of them needs as
it reads alone (1.50 under 1.52, 0.30% under 0.53%; never 1.5 beside 1.52), and whole numbers whole where all of them
are. A column that needs other decimals declares them (``decimals``: AICc to 0.1, runway months to 0.1;
``decimals_from``: a row of a figure and its interval, -17.0 / -19.1 / -15.0). One figure, one spelling on a page: a
sentence that names a figure a table shows spells it as the column does (``column_figure``, ``fixed``).

Standard library only (a table is anything with pandas' ``columns`` and ``to_dict("records")``), so every layer may
use it.
"""
from __future__ import annotations

import base64
import csv
import dataclasses
import html
import io
import math
import re
from dataclasses import dataclass, field

from capmodel.csv_cells import guarded

DASH = "—"
TINY = 1e-12    # smaller figures (a residual of a curve fitted exactly, a rounding error) read as "about 0"
SHORT_TEXT = 24  # a text cell up to this long is a name: kept on one line
#: a figure with its interval ("-3.3% (-3.5% to -3.3%)"): it may break before its bracket, where a narrow page needs
#: it, and nowhere else
WITH_INTERVAL = re.compile(r"\S+ \([^()]+ to [^()]+\)")


def printable(text) -> str:
    """Text as one line on a terminal or in a list: control characters that a folder's or a host's name can hold (a
    newline, a carriage return, a tab, an escape) written as their escapes, so that a row is never split in two or
    its neighbours overwritten."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in str(text))


def markdown_literal(text) -> str:
    """Text as markdown shows it literally: HTML's characters escaped (a host named ``<img onerror=...>`` in a
    server's metadata is shown, never run, on a page), markdown's marks and the dollar that starts a formula escaped
    (a filter shape's ``{$gte: ?, $lt: ?}``), control characters written as their escapes (``printable``), so that
    a list item stays one line."""
    import html

    shown = html.escape(printable(text), quote=False)
    return "".join("\\" + c if c in "\\`*_[]#|~$" else c for c in shown)


def is_missing(value) -> bool:
    """True for None, NaN and pandas' missing markers (anything not equal to itself, or NA-like)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):  # pandas.NA refuses bool()
        return True


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or type(value).__module__ == "numpy" and \
        hasattr(value, "dtype") and value.dtype.kind in "iuf"


def number(value, digits: int = 3, missing: str = DASH, infinite: str = "unreachable", trim: bool = True) -> str:
    """``value`` for reading: whole numbers and values of 1,000 or more as integers with separators, others to
    ``digits`` significant digits (never an exponent: 0.000000326; below TINY "about 0"; trailing zeros dropped unless
    ``trim`` is False);
    ``missing`` for None/NaN, ``infinite`` for ±inf."""
    if is_missing(value):
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not _is_number(value):
        return str(value)
    value = float(value)
    if math.isinf(value):
        return infinite if value > 0 else "-" + infinite
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (digits - 1) or value.is_integer():
        return f"{round(value):,}"
    if abs(value) < TINY:           # beyond every figure this toolkit plans with: no exponent, no 300 zeros
        return "about 0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def decimals_for(*values) -> int:
    """Decimals that show a figure (the first finite non-zero of ``values``: the estimate, else an end of its
    interval) to three significant digits as ``number`` does, for it and its interval alike; none at 100 or more, or
    when every value is whole. A table row of a figure and its interval, and the sentence naming them, use it."""
    finite = [float(v) for v in values if not is_missing(v) and _is_number(v) and math.isfinite(float(v))]
    lead = next((v for v in finite if v != 0), 0.0)
    if all(v.is_integer() for v in finite) or lead == 0 or abs(lead) >= 100:
        return 0
    return max(0, 2 - math.floor(math.log10(abs(lead))))


def fixed(value, row=()) -> str:
    """``value`` with the decimals ``decimals_for(*row)`` gives (``row``: the estimate, low and high of the table row
    showing it; default the value alone), trailing zeros kept: a figure as that row spells it (-17.0 beside -19.1 and
    -15.0)."""
    return f"{float(value):,.{decimals_for(*(row or (value,)))}f}"


def integer(value, missing: str = DASH, infinite: str = "unreachable") -> str:
    """A count: rounded to a whole number with thousands separators."""
    if is_missing(value):
        return missing
    if math.isinf(float(value)):
        return infinite
    return f"{round(float(value)):,}"


def plural(count, word: str, many: str | None = None) -> str:
    """A count and its noun, agreeing: ``plural(1, "VM")`` -> "1 VM", ``plural(3, "VM")`` -> "3 VMs",
    ``plural(2, "degree of freedom", "degrees of freedom")``; the count as ``integer`` prints it."""
    one = round(float(count)) == 1 and not is_missing(count)
    return f"{integer(count)} {word if one else (many or word + 's')}"





def shows_width(low, high, shown=number, finite: bool = True) -> bool:
    """The one rule for every interval printed beside its figure: print it only when both ends are there (finite,
    unless ``finite`` is False: a printer with a word for infinity) and ``shown`` (the printer's own format) writes
    them differently, and differently at three significant digits (``_significant``). An interval without width as
    printed (a CPU per operation fitted exactly, as on generated FTDC: '-3.3% (-3.3% to -3.3%)'), with a width below
    the figures' precision (an exactly fitted load's '36,531–36,532 ops/s') or without an end says nothing the
    figure alone does not."""
    if any(is_missing(x) or finite and not math.isfinite(float(x)) for x in (low, high)):
        return False
    return shown(low) != shown(high) and _significant(low) != _significant(high)


def _significant(value, digits: int = 3) -> float:
    """``value`` rounded to ``digits`` significant digits (infinity as it is): the precision a range's ends must
    differ at to have a width worth reading. An exact fit's 36,531–36,532 ops/s differ only past it (36,500 both)
    and reads as its one figure; a one-unit step of a whole number below 1,000 (5 to 6 months) is a width."""
    value = float(value)
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def interval_words(value: float, low: float, high: float, shown=lambda x: f"{x:,.0f}") -> str:
    """The interval of a figure said in plain words, to follow it in a sentence after a comma: ', between 62,500 and
    70,000'; an interval ending at its estimate (a one-sided stated range, as the study's "2.5-2.6x" used as 2.6x)
    says which way the figure may move: ', at least 62,500' (the estimate its top) or ', at most 65,000' (its
    bottom). No brackets, no symbols: a headline's qualifications read as a manager reads them. Empty when there is
    no interval to show (``shows_width``)."""
    if not shows_width(low, high, shown):
        return ""
    if shown(value) == shown(high):
        return f", at least {shown(low)}"
    if shown(value) == shown(low):
        return f", at most {shown(high)}"
    return f", between {shown(low)} and {shown(high)}"


def money(value, currency: str = "", missing: str = DASH, infinite: str = "unreachable") -> str:
    """An amount: two decimals below 100, whole units with separators from 100 up, then the currency code."""
    if is_missing(value):
        return missing
    value = float(value)
    if math.isinf(value):
        return infinite
    text = f"{value:,.2f}" if abs(value) < 100 else f"{round(value):,}"
    return f"{text} {currency}".strip()


def percent(value, digits: int = 2, missing: str = DASH, trim: bool = True) -> str:
    """A fraction as a percentage, the one rule for every percentage a user reads: ``digits`` significant digits
    below 10 % (0.0355 -> "3.5%", 0.00042 -> "0.042%"), whole per cents with separators from 10 % up (0.8 -> "80%",
    1.13 -> "113%", never "110%"; 12,500 -> "1,250,000%"), and a share that is not all of a thing never reads
    "100%" (0.996 -> "99.6%", 1.004 -> "100.4%": on either side of a full server the answer differs); trailing zeros
    kept when ``trim`` is False (0.0017 -> "0.170%" at 3 digits). ``missing`` for None/NaN/inf."""
    if is_missing(value) or math.isinf(float(value)):
        return missing
    value = float(value)
    shown = number(value * 100.0, digits=digits, trim=trim)
    places = 1
    while value != 1.0 and shown.replace(",", "") in ("100", "100.0", "100.00") and places < 12:
        shown = f"{value * 100.0:.{places}f}"
        places += 1
    return f"{shown}%"


def r_squared(value, missing: str = DASH) -> str:
    """R² with digits enough to tell it from 1 and from 0: 0.9231 -> "0.923", 0.9996 -> "0.9996", 0.999991 ->
    "0.99999", -0.0004 -> "-0.0004"."""
    if is_missing(value) or math.isinf(float(value)):
        return missing
    value = float(value)
    if value >= 1.0:
        return "1"
    if value < -1000:               # far worse than the mean: its digits tell nothing more (-27272727614986764.000)
        return "below -1,000"
    decimals = 3
    if value > 0.99:
        decimals = min(8, max(3, math.floor(-math.log10(1.0 - value)) + 1))
    text = f"{value:.{decimals}f}"
    while (float(text) >= 1.0 or value < 0 and float(text) == 0) and decimals < 12:
        decimals += 1          # never round up to a perfect fit, nor a value below 0 to "-0.000"
        text = f"{value:.{decimals}f}"
    return text


def interval(estimate, low, high, digits: int = 3, unit: str = "") -> str:
    """"estimate (low to high) unit" with the three numbers in one format; the estimate alone when there is no
    interval to show (``shows_width``)."""
    unit = f" {unit}" if unit else ""
    if not shows_width(low, high, lambda x: number(x, digits), finite=False):
        return f"{number(estimate, digits)}{unit}"
    return f"{number(estimate, digits)} ({number(low, digits)} to {number(high, digits)}){unit}"


def seconds(value, missing: str = DASH) -> str:
    """A duration with its unit: "5.8 ms", "1.2 s", "3 min"."""
    if is_missing(value):
        return missing
    value = float(value)
    if value < 1.0:
        return f"{number(value * 1000.0)} ms"
    if value < 120:
        return f"{number(value)} s"
    return f"{number(value / 60.0)} min"


_INNER_ASIDE = re.compile(r"(?<=\s)\(([^()]*)\)")


def unnested(clause: str) -> str:
    """``clause`` with its own bracketed asides (opened after a space: never a formula's X(N) or σ(N − 1)) said
    without brackets, so the clause can itself stand in brackets and no bracket closes twice: 'what the server reports
    (the host's CPU count)' -> 'what the server reports: the host's CPU count'; an aside in the middle between commas
    ('the fit (R² 0.62) is weak' -> 'the fit, R² 0.62, is weak')."""
    text = clause
    while (found := _INNER_ASIDE.search(text)) is not None:
        before, inner, after = text[:found.start()].rstrip(), found.group(1).strip().rstrip(","), text[found.end():]
        if not after.strip() or after.lstrip()[:1] in ".;":     # the aside ends the clause (or a part of it)
            text = f"{before}{'' if before.endswith(':') else ':'} {inner}{after}"
        else:
            text = f"{before}, {inner}{'' if after[:1] in ',:' else ','}{after}"
    return text


def aside(clause: str) -> str:
    """``clause`` in brackets, its own asides unbracketed (``unnested``): '(the USL explains little: R² 0.624)', never
    '(the USL explains little (R² 0.624))'. Every sentence that brackets a clause built elsewhere (a reason, a
    notebook's note on a parameter) brackets it with this."""
    return f"({unnested(clause)})"


#: the kinds of column whose figures have decimals (an "int" column has none, a "seconds" one changes its unit)
DECIMAL_KINDS = ("num", "percent", "money", "r2")
#: a figure as a column prints it (a word such as "none" or "about 0" is not one), its decimals the first group
FIGURE = re.compile(r"-?\d[\d,]*(?:\.(\d+))?%?")


def column_figure(value, values, column: "Column") -> str:
    """``value`` as a table's ``column`` of ``values`` shows it (``Table``'s one precision per column): a sentence
    that names a figure of a table spells it with this, so the page has one spelling of it."""
    return Table([{"v": v} for v in values], {"v": column}).show_value("v", value)


_TAG = re.compile(r"(<[^>]*>)")
_HYPHENATED = re.compile(r"[^\s<>]*[^\s<>-]-[^\s<>]*[^\s<>-]")
NOWRAP = '<span style="white-space: nowrap">'


def _kept(word: str) -> str:
    """One hyphenated word kept on one line; a path (a word with '/') may break after each '/' (``<wbr>``), and only
    there: each of its parts is kept whole."""
    if "/" not in word:
        return f"{NOWRAP}{word}</span>"
    parts = [part for part in re.split(r"(?<=/)", word) if part]
    if len(parts) > 1 and parts[0] == "/":      # a path from the root: its first folder stays with its '/'
        parts[:2] = ["/" + parts[1]]
    return "<wbr>".join(f"{NOWRAP}{part}</span>" if "-" in part.strip("-") else part for part in parts if part)


def unbroken_names(markup: str) -> str:
    """``markup`` (HTML) with every hyphenated word of its text (a VM name such as m5-large or c4-2xlarge-4-SSD, a
    host:port) kept on one line: a browser breaks a line after a hyphen, which splits a name into two that do not
    exist. A long path breaks after a '/' instead (/data/eu-central-1/<wbr>mongodb-rs0/<wbr>diagnostic.data), never
    inside a folder's name. Tags and their attributes are left as they are, and so is text already kept whole."""
    parts = _TAG.split(markup)
    out, kept = [], False
    for part in parts:
        if part.startswith("<"):
            kept = part == NOWRAP or (kept and part != "</span>")
            out.append(part)
        else:
            out.append(part if kept else _HYPHENATED.sub(lambda m: _kept(m.group(0)), part))
    return "".join(out)


@dataclass(frozen=True)
class Column:
    """How one column shows: its header (units in it, e.g. "throughput (ops/s)"), its kind (int, num, money,
    percent, r2, seconds, text), the word for a missing value and for infinity, and the currency of money."""

    header: str
    kind: str = "num"
    missing: str = DASH
    infinite: str = "unreachable"
    currency: str = ""
    digits: int = 3
    decimals: int | None = None   # a fixed number of decimals for the whole column (num, percent, money, r2)
    decimals_from: str | None = None   # a row field giving that row's decimals (a figure and its interval alike)
    trim: bool = True   # trailing zeros dropped ("0.38", as a sentence says it); False keeps them (declared per column)
    per_row: bool = False   # its rows are different figures (σ, κ, λ): each keeps its own precision, not the column's
    interval: tuple[str, str] | None = None   # row fields of the figure's interval, shown beside it: "31% (20% to 40%)"

    def show(self, value) -> str:
        if self.kind == "text" or not (_is_number(value) or is_missing(value) or isinstance(value, bool)):
            if is_missing(value):
                return self.missing
            if isinstance(value, bool):
                return "yes" if value else "no"
            return str(value)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if self.decimals is not None and self.kind in DECIMAL_KINDS and not is_missing(value) and \
                math.isfinite(float(value)):
            scaled = float(value) * (100.0 if self.kind == "percent" else 1.0)
            return f"{scaled:,.{self.decimals}f}" + ("%" if self.kind == "percent" else "")
        if self.kind == "int":
            return integer(value, self.missing, self.infinite)
        if self.kind == "money":
            return money(value, "", self.missing, self.infinite)
        if self.kind == "percent":
            return percent(value, self.digits, self.missing, self.trim)
        if self.kind == "r2":
            return r_squared(value, self.missing)
        if self.kind == "seconds":
            return seconds(value, self.missing)
        if not self.trim and self.kind == "num" and not is_missing(value) and float(value).is_integer() and \
                0 < abs(float(value)) < 10 ** (self.digits - 1):   # 2 among 1.90 and 2.20 is 2.00
            return f"{float(value):,.{self.digits - 1 - math.floor(math.log10(abs(float(value))))}f}"
        return number(value, self.digits, self.missing, self.infinite, self.trim)


@dataclass
class Table:
    """A table for people: ``rows`` (list of dicts), ``columns`` key -> Column (only these, in this order),
    a ``caption``, ``footnotes`` (what a word standing in for a number means), and a file name for its CSV."""

    rows: list
    columns: dict
    caption: str = ""
    footnotes: list = field(default_factory=list)
    csv_name: str = "table.csv"

    def cells(self) -> list[list[str]]:
        """Each row's figures as ``Column.show`` writes them: the one spelling a figure has on a page (see the module's
        note on precision), so a sentence that names it with ``number`` reads as the table does."""
        columns = {key: self._one_precision(key, self._whole(key, col)) for key, col in self.columns.items()}
        return [[self._shown(self._column(col, row), row, key) for key, col in columns.items()] for row in self.rows]

    @staticmethod
    def _shown(col: Column, row: dict, key: str) -> str:
        """A cell: the figure, and its interval beside it when the column has one and it shows a width
        (``shows_width``), every figure at the column's precision."""
        shown = col.show(row.get(key))
        if col.interval is None or not FIGURE.fullmatch(shown):
            return shown
        low, high = (row.get(end) for end in col.interval)
        if not shows_width(low, high, col.show):
            return shown
        return f"{shown} ({col.show(low)} to {col.show(high)})"

    def _whole(self, key: str, col: Column) -> Column:
        """``col`` without its fixed decimals when every figure of the column shows as a whole number at them (6
        hours, not 6.0: whole numbers read as whole numbers; one value with a fraction keeps the decimals for the whole
        column)."""
        if not col.decimals or col.kind != "num":
            return col
        values = [row.get(key) for row in self.rows]
        figures = [float(v) for v in values if _is_number(v) and not is_missing(v) and math.isfinite(float(v))]
        whole = figures and all(round(v, col.decimals).is_integer() for v in figures)
        return dataclasses.replace(col, decimals=0) if whole else col

    def _one_precision(self, key: str, col: Column) -> Column:
        """``col`` with one number of decimals for all its figures: the most any of them needs as it reads alone
        (``number``, ``percent``, ``money``, ``r_squared`` each give the fewest that show its significant digits), so
        1.50 stands under 1.52 and 0.30% under 0.53%, never 1.5 and 0.3%. A column that declares its decimals, takes
        them per row, or whose rows are different figures (``per_row``) keeps them; words (none, unreachable, about
        0) stay words."""
        if col.kind not in DECIMAL_KINDS or col.decimals is not None or col.decimals_from or col.per_row:
            return col
        keys = (key, *(col.interval or ()))     # a figure's interval is spelled as the figure is
        places = {len(found.group(1) or "") for row in self.rows for k in keys
                  if (found := FIGURE.fullmatch(col.show(row.get(k)))) is not None}
        return col if len(places) <= 1 else dataclasses.replace(col, decimals=max(places))

    @staticmethod
    def _column(col: Column, row: dict) -> Column:
        """``col`` with the row's decimals when it takes them from a row field (``Column.decimals_from``)."""
        places = row.get(col.decimals_from) if col.decimals_from else None
        if places is None or is_missing(places):
            return col
        return dataclasses.replace(col, decimals=int(places))

    def show_value(self, key: str, value) -> str:
        """``value`` spelled as this table's column ``key`` spells its figures (its one precision)."""
        return self._one_precision(key, self._whole(key, self.columns[key])).show(value)

    def csv(self) -> str:
        """The raw values (not rounded) with the readable headers; missing values empty; a text cell a spreadsheet
        would take for a formula guarded (``capmodel.csv_cells``: a host name from a server's metadata is outside
        text)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        keys = []
        for key, col in self.columns.items():     # an interval's ends are columns of their own
            keys += [(key, col.header)] + [(end, f"{col.header}, {side} end")
                                           for end, side in zip(col.interval or (), ("low", "high"))]
        writer.writerow([header for _, header in keys])
        for row in self.rows:
            writer.writerow(["" if is_missing(row.get(key)) else guarded(row.get(key)) for key, _ in keys])
        return out.getvalue()

    def text(self) -> str:
        """Aligned plain text for a terminal (numbers right-aligned)."""
        headers = [c.header for c in self.columns.values()]
        body = self.cells()
        widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]
        kinds = [c.kind for c in self.columns.values()]

        def line(cells):
            aligned = (c.ljust(w) if k == "text" else c.rjust(w) for c, w, k in zip(cells, widths, kinds))
            return "  ".join(aligned).rstrip()

        lines = ([self.caption] if self.caption else []) + [line(headers)] + [line(r) for r in body]
        return "\n".join(lines + [f"  {n}" for n in self.footnotes])

    def _repr_html_(self) -> str:
        kinds = ["text" if c.kind == "text" else "num" for c in self.columns.values()]
        per_row = ' data-precision="per-row"'    # a column of different figures: each row's decimals, said so
        head = "".join(f'<th class="{k}"{per_row if c.decimals_from or c.per_row else ""}>{html.escape(c.header)}</th>'
                       for c, k in zip(self.columns.values(), kinds))

        def cell(value, kind):  # names and numbers never wrap (a VM name breaks at its hyphens); sentences do,
            # between words, never inside a hyphenated name they mention ("c4-" / "2xlarge-4-" / "SSD")
            if WITH_INTERVAL.fullmatch(value):   # on one line, or two: the figure, its interval
                figure, interval = value.split(" ", 1)
                return f'<td class="{kind}">{html.escape(figure)} {NOWRAP}{html.escape(interval)}</span></td>'
            keep = " keep" if kind == "num" or len(value) <= SHORT_TEXT or " " not in value.strip() else ""
            return f'<td class="{kind}{keep}">{unbroken_names(html.escape(value))}</td>'

        rows = "".join("<tr>" + "".join(cell(v, k) for v, k in zip(r, kinds)) + "</tr>" for r in self.cells())
        data = base64.b64encode(self.csv().encode("utf-8")).decode("ascii")
        link = (f'<a class="download" download="{html.escape(self.csv_name)}" '
                f'href="data:text/csv;charset=utf-8;base64,{data}">download as CSV</a>')
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        notes = "".join(f"<div>{html.escape(n)}</div>" for n in self.footnotes)
        return (f'<div class="capmodel-table"><table>{caption}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
                f'</table><div class="footnotes">{notes}</div>{link}</div>')

    def __repr__(self) -> str:
        return self.text()


def table(frame, columns: dict, caption: str = "", footnotes=(), csv_name: str = "table.csv") -> Table:
    """A ``Table`` of the DataFrame ``frame`` showing ``columns`` (key -> Column, or key -> header text for a
    number column); columns the frame lacks are left out, and so are footnotes whose word does not appear."""
    cols = {k: (c if isinstance(c, Column) else Column(str(c))) for k, c in columns.items() if k in frame.columns}
    records = frame.to_dict("records")
    made = Table(records, cols, caption, [], csv_name)
    shown = {v for row in made.cells() for v in row}
    made.footnotes = [note for note in footnotes if any(note.split(":")[0].strip('" ') == v for v in shown)]
    return made
