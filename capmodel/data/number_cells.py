"""A number as a spreadsheet writes it in a text cell, read as one: thousands separators (``2,635``, ``1.234,5``,
``1 234``), a decimal comma (``420,50``) and, in a money column, a currency symbol or code (``$420.00``, ``€ 99``,
``420 USD``). The one rule for every reader's text cells (the curve table's and the VM catalog's).

Standard library only. A cell in no known spelling comes back as it was, for the validation to name by column and row.
"""
from __future__ import annotations

import re

#: currency symbols and the ISO 4217 code each stands for ("$" is read as US dollars)
CURRENCY_SYMBOLS = {"US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "CHF": "CHF"}
_SYMBOL = "|".join(re.escape(s) for s in sorted(CURRENCY_SYMBOLS, key=len, reverse=True))
_MONEY = re.compile(rf"^(?P<sign>[-+]?)\s*(?P<pre>{_SYMBOL}|[A-Z]{{3}})?\s*(?P<number>[-+]?[\d.,\s\u00a0\u202f]*\d)"
                    rf"\s*(?P<post>{_SYMBOL}|[A-Z]{{3}})?$")
_SPACE = r"[ \u00a0\u202f]"
_GROUPED_POINT = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")                        # 1,234.5
_GROUPED_COMMA = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+,\d+$|^[-+]?\d{1,3}(\.\d{3}){2,}$")  # 1.234,5 and 1.234.567
_GROUPED_SPACE = re.compile(rf"^[-+]?\d{{1,3}}({_SPACE}\d{{3}})+([.,]\d+)?$")              # 1 234,5 and 1 234.5
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d{1,2}$|^[-+]?\d+,\d{4,}$")                      # 420,50 (not 1,234)


def plain_number(text: str) -> str | None:
    """``text`` as ``float()`` reads it when it is a number in a known spelling (None otherwise)."""
    text = text.strip()
    if _GROUPED_POINT.match(text):
        return text.replace(",", "")
    if _GROUPED_COMMA.match(text):
        return text.replace(".", "").replace(",", ".")
    if _GROUPED_SPACE.match(text):
        return re.sub(_SPACE, "", text).replace(",", ".")
    if _DECIMAL_COMMA.match(text):
        return text.replace(",", ".")
    try:
        float(text)
    except ValueError:
        return None
    return text


def number_cell(cell, money: bool = False):
    """A cell as a number's text ``float()`` reads, or as it was when it is none (not text, or no number): see the
    module's spellings; a currency is read only in a ``money`` column."""
    return read_money(cell)[0] if money else (plain_number(cell) or cell) if isinstance(cell, str) else cell


def read_money(cell) -> tuple[object, str]:
    """A money cell read: its amount as text ``float()`` reads, and the currency its symbol or code names.

    Parameters
    ----------
    cell : object
        A cell of a cost column; only text is read.

    Returns
    -------
    tuple of (object, str)
        The amount's text (or the cell as it was, when it is no amount in a known spelling) and the ISO 4217 code
        (``"USD"`` for ``$``), or "" when the cell names none.

    Examples
    --------
    >>> from capmodel.data.number_cells import read_money
    >>> read_money("$1,250.50"), read_money("1.234,50 €"), read_money("420")
    (('1250.50', 'USD'), ('1234.50', 'EUR'), ('420', ''))
    """
    if not isinstance(cell, str):
        return cell, ""
    found = _MONEY.match(cell.strip())
    if not found or (found["pre"] and found["post"]):
        return (plain_number(cell) or cell), ""
    number = plain_number(found["number"])
    if number is None:
        return cell, ""
    mark = found["pre"] or found["post"] or ""
    return found["sign"].replace("+", "") + number, CURRENCY_SYMBOLS.get(mark, mark)
