"""Keep secrets out of logs, run.json files and reports: MongoDB URIs, secret-looking keys, URIs inside free text.

The one place that knows what a secret looks like (``SECRET_KEY``: names such as password, token, api_key) and how it
is shown (``MASK``); the benchmark (run.json, logs) and the reports (notebook parameters) both call it. It sits at the
bottom of the package (standard library only), below every layer that writes something a person reads.

    redact_uri("mongodb://app:s3cr%40t@db1,db2/?replicaSet=rs")  -> "mongodb://app:***@db1,db2/?replicaSet=rs"
    redact_uri("app:pw@db:27017")                                 -> "app:***@db:27017"   (no scheme)
    redact_uri("http://app:pw@db/?password=x")                    -> "http://app:***@db/?password=***"
    redact_text("failed to reach mongodb://app:pw@db:27017/x")   -> "failed to reach mongodb://app:***@db:27017/x"
    redact_mapping({"uri": "...", "password": "pw", "nested": [{"token": "t"}]})

Only the secret parts change; everything else of a URI (hosts, ports, database, other options) is kept as written,
except that a password is masked wherever else it appears in the URI too (in ``appName`` or any option, in the user
name, in the path), as written, percent-decoded or encoded. Inside ``with secrets_masked(uri):`` ``redact_text`` masks
that URI's password in any text, even where it appears without its URI (a driver's error that quotes an option, a
worker's message).
Passwords are found whatever the scheme (``mongodb://``, ``mongodb+srv://``, ``http://``, ...) or with none
(``user:pw@host``, which pymongo refuses but people type), and even when they contain '@', ':' or '/' unencoded (not
valid, but people write them). Secret options (``password=``, ``tlsCertificateKeyFilePassword=``,
``authMechanismProperties=AWS_SESSION_TOKEN:...``) are masked inside a URI and in free text alike.
"""
from __future__ import annotations

import contextlib
import re
from collections import Counter
from typing import Any
from urllib.parse import quote, unquote

MASK = "***"

_SCHEME = re.compile(r"(?i)^([a-z][a-z0-9+.\-]*://)?(.*)$", re.S)  # any scheme, or none
_HOSTS = re.compile(r"^[A-Za-z0-9_.\-\[\]:%,]*$")  # host[:port] list, IPv6 in brackets, %-encoded socket paths
SECRET_KEY = re.compile(r"(?i)pass(?:word|wd|phrase)|^pass$|pwd|secret|token|credential|api[-_]?key|private[-_]?key")
_URI_KEY = re.compile(r"(?i)(?:^|[-_.])(?:uri|url|dsn|connection(?:[-_]?string)?)$|^(?:uri|url|dsn)s?$")
# in free text: a URI of any scheme, or a schemeless user:password@host
_URI_IN_TEXT = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s\"'<>`]+"
                          r"|(?<![\w/:@%])[\w.%+\-!~*$]+:[^\s\"'<>`]*@[^\s\"'<>`]+")
# key=value pairs in free text (outside a URI too): masked when the key is secret-like or authMechanismProperties
_PAIR_IN_TEXT = re.compile(r"(?<![\w.\-])([A-Za-z_][\w.\-]*)=([^&;\s\"'<>`]*)")
# sub-keys of authMechanismProperties whose values are secret (AWS_SESSION_TOKEN, ...): key:value pairs, ',' separated
_PROPERTY_PAIR = re.compile(r"(?i)((?:^|,|%2C)([A-Za-z0-9_]+)(?::|%3A))([^,%]*(?:%(?!2C)[^,%]*)*)")


def _scheme_and_rest(text: str) -> tuple[str | None, str]:
    """(``scheme://`` or None, the rest): ``_SCHEME`` matches every string."""
    match = _SCHEME.match(text)
    assert match is not None
    return match.group(1), match.group(2)


def redact_uri(uri: str, user: bool = False, mask: str = MASK) -> str:
    """The URI with its password (and with ``user=True`` its user name) and secret query options replaced by mask.

    Any scheme or none: ``user:pw@host`` loses its password as ``mongodb://user:pw@host`` does. Strings without
    credentials or secret options come back unchanged.
    """
    scheme, rest = _scheme_and_rest(uri)
    scheme = scheme or ""
    at = _userinfo_end(rest)
    if at is not None:
        userinfo, rest = rest[:at], rest[at:]  # rest starts with '@'
        name, colon, _password = userinfo.partition(":")
        name = mask if user and name else name
        userinfo = name + (colon + mask if colon else "")
        forms = _password_forms(_password)
    else:
        userinfo, forms = None, ()
    hosts_end = _first_of(rest, "/?", start=1 if userinfo is not None else 0)
    head, query_part = rest[:hosts_end], rest[hosts_end:]
    question = query_part.find("?")
    if question >= 0:
        query_part = query_part[: question + 1] + _redact_query(query_part[question + 1:], mask)
    if userinfo is not None and forms:  # the same password elsewhere: user name, path, any option's value
        name, colon, _ = userinfo.partition(":")
        userinfo = _mask_forms(name, forms, mask) + colon + (mask if colon else "")
        query_part = _mask_forms(query_part, forms, mask)
        hosts, slash, path = head.partition("/")
        head = hosts + slash + _mask_forms(path, forms, mask)
    return scheme + (userinfo if userinfo is not None else "") + head + query_part


def _password_forms(password: str) -> tuple[str, ...]:
    """The password as written, percent-decoded and percent-encoded (longest first), empty ones left out."""
    decoded = unquote(password)
    forms = {password, decoded, quote(decoded, safe=""), quote(decoded, safe="")}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def _mask_forms(text: str, forms, mask: str) -> str:
    for form in forms:
        text = text.replace(form, mask)
    return text


_REMEMBERED: Counter = Counter()  # password forms masked in all text while a ``secrets_masked`` block runs


@contextlib.contextmanager
def secrets_masked(uri: str):
    """While the block runs, ``redact_text`` masks ``uri``'s password (every form of it) wherever it appears."""
    rest = _scheme_and_rest(uri)[1]
    at = _userinfo_end(rest)
    forms = _password_forms(rest[:at].partition(":")[2]) if at is not None else ()
    _REMEMBERED.update(forms)
    try:
        yield
    finally:
        _REMEMBERED.subtract(forms)
        for form in [f for f, n in _REMEMBERED.items() if n <= 0]:
            del _REMEMBERED[form]


def _first_of(text: str, chars: str, start: int = 0) -> int:
    positions = [i for i in (text.find(c, start) for c in chars) if i >= 0]
    return min(positions) if positions else len(text)


def _userinfo_end(rest: str) -> int | None:
    """Index of the '@' ending the user:password part, or None when the URI has no credentials.

    The '@' must be followed by a host list. Prefer the rightmost such '@' with no '/' or '?' before it (so an '@' in a
    query option is not mistaken for it); else the rightmost one (a password with an unencoded '/': over-redacting
    is the safe side).
    """
    candidates = []
    for i, ch in enumerate(rest):
        if ch == "@":
            hosts = rest[i + 1: _first_of(rest, "/?", i + 1)]
            if hosts and _HOSTS.match(hosts):
                candidates.append(i)
    if not candidates:
        return None
    clean = [i for i in candidates if _first_of(rest[:i], "/?") == i]
    return clean[-1] if clean else candidates[-1]


def _redact_query(query: str, mask: str) -> str:
    parts = re.split(r"([&;])", query)
    for index in range(0, len(parts), 2):
        key, eq, value = parts[index].partition("=")
        if not eq:
            continue
        if SECRET_KEY.search(key):
            value = mask
        elif key.lower() == "authmechanismproperties":
            value = _redact_properties(value, mask)
        parts[index] = key + eq + value
    return "".join(parts)


def _redact_properties(value: str, mask: str) -> str:
    def replace(m: re.Match) -> str:
        return m.group(1) + (mask if SECRET_KEY.search(m.group(2)) else m.group(3))

    return _PROPERTY_PAIR.sub(replace, value)


def redact_text(text: str, user: bool = False, mask: str = MASK) -> str:
    """Every URI (any scheme, or a schemeless ``user:password@host``) and every secret ``key=value`` inside free
    text (a log line, an error message) redacted."""
    text = _URI_IN_TEXT.sub(lambda m: redact_uri(m.group(0), user=user, mask=mask), text)
    text = _PAIR_IN_TEXT.sub(lambda m: _redact_query(m.group(0), mask), text)
    return _mask_forms(text, sorted(_REMEMBERED, key=len, reverse=True), mask) if _REMEMBERED else text


def redact_mapping(value: Any, mask: str = MASK) -> Any:
    """A copy of a JSON-like structure with secrets masked (the input is not changed).

    Values under keys named like password/secret/token/credential/api_key are replaced by ``mask`` (None stays None);
    strings anywhere else have the URIs inside them redacted (so ``uri``, ``url``, ``dsn`` and free-text values too).
    """
    if isinstance(value, dict):
        return {key: _redact_item(key, item, mask) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_mapping(item, mask) for item in value)
    if isinstance(value, str):
        return redact_text(value, mask=mask)
    return value


def _redact_item(key: Any, item: Any, mask: str) -> Any:
    if isinstance(key, str) and SECRET_KEY.search(key) and not isinstance(item, (dict, list, tuple)):
        return None if item is None else mask
    if isinstance(key, str) and _URI_KEY.search(key) and isinstance(item, str):
        return redact_text(redact_uri(item, mask=mask), mask=mask)
    return redact_mapping(item, mask)


def is_secret_name(name: Any) -> bool:
    """Whether a key or parameter name looks like it holds a secret (password, token, api_key ...)."""
    return isinstance(name, str) and bool(SECRET_KEY.search(name))


def url_password(value: str) -> str | None:
    """The password of a URL of any scheme or none (``scheme://user:password@host``, ``user:password@host``), as
    written (not decoded), or None."""
    rest = _scheme_and_rest(value)[1]
    at = _userinfo_end(rest)
    if at is None:
        return None
    name, colon, password = rest[:at].partition(":")
    return password or None


def redact_url_password(value: str, mask: str = MASK) -> str:
    """Any URL's password masked (``redact_uri``; kept under this name for its callers)."""
    return redact_uri(value, mask=mask)
