"""A replica-set member's folder under ``observe``'s ``members/``, named after its host, and the host read back.

The name must be one folder on every file system (no ``/``, not ``.`` or ``..``, nothing a case-insensitive or
unicode-normalising file system folds together), distinct for distinct hosts, and readable back to the host. Kept:
lowercase ASCII letters, digits, ``-`` and ``.`` (a leading ``.`` excepted); the port's colon is ``_`` (so
``db1:27017`` is ``db1_27017``, as before); every other character, upper-case letters included, is ``%`` and its
UTF-8 bytes in two lower-case hex digits (``[::1]:27017`` is ``%5b__1%5d_27017``, ``Db1:1`` is ``%44b1_1``,
``a_b`` is ``a%5fb``), as a URL escapes them.
"""
from __future__ import annotations

from capmodel.errors import InputError

_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


def folder_name(host: str) -> str:
    """The member's folder under ``members/`` (see the module); ``InputError`` for an empty host."""
    if not host:
        raise InputError("a member with an empty host name has no folder")
    out = []
    for i, c in enumerate(host):
        if c == ":":
            out.append("_")
        elif c in _KEPT and not (c == "." and i == 0):
            out.append(c)
        else:
            out.append("".join(f"%{b:02x}" for b in c.encode("utf-8", "surrogatepass")))
    return "".join(out)


def member_host(name: str) -> str:
    """The host whose folder is ``name`` (``folder_name`` read back); ``InputError`` for a name it never gives."""
    raw, i = bytearray(), 0
    while i < len(name):
        c = name[i]
        if c == "%" and len(name) >= i + 3 and all(d in "0123456789abcdef" for d in name[i + 1:i + 3]):
            raw.append(int(name[i + 1:i + 3], 16))
            i += 3
            continue
        if c != "_" and c not in _KEPT:
            raise InputError(f"{name!r} is not a member's folder name (character {c!r} at {i})")
        raw.extend(b":" if c == "_" else c.encode())
        i += 1
    try:
        host = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise InputError(f"{name!r} is not a member's folder name (its escapes are not UTF-8)") from None
    if not host or folder_name(host) != name:       # one spelling per host: "%61" is not "a"'s folder
        raise InputError(f"{name!r} is not a member's folder name (the host {host!r} is written "
                         f"{folder_name(host)!r} if any)" if host else f"{name!r} is not a member's folder name")
    return host
