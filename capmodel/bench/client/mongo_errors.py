"""A driver's error as one sentence a person can read: no ``TopologyDescription`` repr, no cut mid-token, no secret.

pymongo's server-selection error is the reason per server followed by the whole topology's repr (``Timeout: 1.0s,
Topology Description: <TopologyDescription id: ..., servers: [<ServerDescription ...>]>``); cut at 300 characters it
ended mid-token. ``describe_error`` keeps the reason per server and the timeout; an authentication failure loses its
``full error: {...}`` dict; any other error is its first line, cut at a word boundary. A password SASLprep refuses
(a control or unassigned character: pymongo raises a ``ValueError`` from deep in its authentication) is
``password_refused``'s sentence.
"""
from __future__ import annotations

import re

from capmodel.formatting import aside, number
from capmodel.redact import redact_text

LIMIT = 300
_CONFIGURED = re.compile(r"\s*\(configured timeouts:[^)]*\)")
_ERRNO = re.compile(r"\[Errno -?\d+\]\s*")
_SERVER_REASON = re.compile(r"(?:^|,)\s*([^,\s]+:\d+): ([^,]+)")


def describe_error(exc: BaseException) -> str:
    """``exc`` (a pymongo or mongojet error) as one readable sentence, secrets masked."""
    text = " ".join(str(exc).split())
    if "Topology Description:" in text or type(exc).__name__ == "ServerSelectionTimeoutError":
        head, _, tail = text.partition(", Timeout: ")
        seconds = re.match(r"([\d.]+)s", tail)
        head = _CONFIGURED.sub("", head.split(", Topology Description:")[0])
        reasons = [f"{server}: {_ERRNO.sub('', reason).strip().rstrip('.').lower()}"      # sorted: the driver's
                   for server, reason in sorted(_SERVER_REASON.findall(head))]               # order varies per run
        within = f" within {number(float(seconds.group(1)))} s" if seconds else ""
        detail = "; ".join(reasons) if reasons else _ERRNO.sub("", head).strip()
        return _cut(redact_text(f"no server answered{within} ({detail})" if detail else f"no server answered{within}"))
    text = text.split(", full error:")[0]
    return _cut(redact_text(_CONFIGURED.sub("", text)) or type(exc).__name__)


def is_password_refused(exc: BaseException) -> bool:
    return isinstance(exc, ValueError) and "SASLprep" in str(exc)


def password_refused(exc: BaseException) -> str:
    reason = str(exc).split(":", 1)[-1].strip().rstrip(".")
    return (f"the password in the URI cannot be used for SCRAM authentication {aside(reason)}: it holds a character "
            "SASLprep forbids (a control, unassigned or otherwise prohibited character); check how it is "
            "percent-encoded")


def _cut(text: str) -> str:
    if len(text) <= LIMIT:
        return text
    cut = text[:LIMIT].rsplit(" ", 1)[0]
    return cut.rstrip(",;:(") + " ..."
