"""The metrics of an FTDC reference document, read from its raw BSON as MongoDB's ``util.cpp``
(``extractMetricsFromDocument``) counts them, with a cache of sub-document layouts.

Metrics are the fields of type double, int32, int64, decimal128, bool, Date and Timestamp (two metrics: seconds, then
increment), in document order, descending into objects and arrays. The walk refuses what MongoDB refuses: nesting
deeper than ``kMaxRecursion`` (10, ``src/mongo/db/ftdc/util.cpp``), an unknown BSON type, an element that overruns its
document; and it stops as soon as it has counted more metrics than the chunk's header promises.

Why a cache of sub-documents: one chunk's reference document differs from the next in its numbers and in a few strings
(tcmalloc's ``formattedString`` changes every chunk), so a cache of whole documents never hits on real files. A
``Section`` is one walked sub-document: its metrics, where each value sits, and a byte mask that zeroes the value bytes
and string contents. Another sub-document of the same size whose masked bytes are equal has the same field names,
types and string lengths, so the same metrics at the same offsets: only the sub-documents around a changed string
(``serverStatus``, ``serverStatus.tcmalloc`` ...) are walked again, their unchanged children are taken from the cache.
"""
from __future__ import annotations

import math
import struct

import numpy as np

MAX_RECURSION = 10          # util.cpp: kMaxRecursion; a deeper document is refused ("Recursion limit reached.")
_CACHED_FROM = 64           # sub-documents smaller than this are walked, not looked up
_CACHE_BYTES = 2_000_000    # bytes of sub-documents kept
_PER_SIZE = 4               # sections kept for one size
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_U64 = 2 ** 64 - 1

# how a metric's value is stored (U4: a Timestamp's half); _SCALARS: BSON type -> (coding, width in bytes)
F8, I4, I8, DATE, BOOL, U4, DEC = range(7)
_SCALARS = {0x01: (F8, 8), 0x10: (I4, 4), 0x12: (I8, 8), 0x09: (DATE, 8), 0x08: (BOOL, 1), 0x13: (DEC, 16)}
_FIXED = {0x06: 0, 0x07: 12, 0x0A: 0, 0x7F: 0, 0xFF: 0}          # undefined, ObjectId, null, MaxKey, MinKey
_STRINGS = (0x02, 0x0D, 0x0E)                                       # string, JavaScript code, symbol


class BadDocument(ValueError):
    """A reference document MongoDB would refuse; ``at`` is the byte offset in the uncompressed chunk."""

    def __init__(self, message: str, at: int):
        super().__init__(message)
        self.at = at


class Section:
    """One walked (sub-)document: ``count`` metrics; ``leaves`` (metric name -> (index, coding, offset)) and
    ``children`` (field name -> (Section, first index, offset)), offsets relative to the section's start, the first
    of duplicated names winning; ``order`` keeps document order for the full list of names."""

    __slots__ = ("size", "count", "height", "leaves", "children", "order", "mask", "mask_array", "template", "memo")

    def __init__(self, size, count, height, leaves, children, order, mask):
        self.size, self.count, self.height = size, count, height
        self.leaves, self.children, self.order, self.mask = leaves, children, order, mask
        self.mask_array = self.template = None       # set when the section enters a LayoutCache
        self.memo: dict = {}                          # name -> locate(name), for sections read again from the cache

    def locate(self, name: str):
        """(index, coding, offset) of one dotted metric name, or None."""
        if name in self.memo:
            return self.memo[name]
        found = self.leaves.get(name)
        dot = name.find(".") if found is None else -1
        while dot != -1:
            child = self.children.get(name[:dot])
            if child is not None:
                inner = child[0].locate(name[dot + 1:])
                if inner is not None:
                    found = child[1] + inner[0], inner[1], child[2] + inner[2]
                    break
            dot = name.find(".", dot + 1)
        self.memo[name] = found
        return found

    def entries(self, prefix: str = "", base: int = 0) -> list:
        """Every metric as (dotted name, coding, offset from the document's start), in document order."""
        out = []
        for key, coding, child, at in self.order:
            if child is None:
                out.append((prefix + key, coding, base + at))
            else:
                out += child.entries(prefix + key + ".", base + at)
        return out


class LayoutCache:
    """Sections seen in earlier chunks, by size, the least recently used dropped first once they hold more than
    ``_CACHE_BYTES`` (a document around a changed string is new in every chunk and never used again; the large
    unchanged ones, ``wiredTiger`` or ``metrics``, stay); ``hits`` counts sub-documents taken from it."""

    def __init__(self):
        self.by_size: dict = {}
        self.recent: dict = {}              # id -> section, oldest first (a dict keeps insertion order)
        self.hits = self.held = 0

    def find(self, buf: np.ndarray, start: int, size: int, depth: int):
        for section in self.by_size.get(size, ()):
            if depth + section.height <= MAX_RECURSION and \
                    (buf[start:start + size] & section.mask_array).tobytes() == section.template:
                self.hits += 1
                self.recent[id(section)] = self.recent.pop(id(section))
                return section
        return None

    def add(self, buf: np.ndarray, start: int, section: Section) -> None:
        section.mask_array = np.frombuffer(section.mask, dtype=np.uint8)
        section.template = (buf[start:start + section.size] & section.mask_array).tobytes()
        kept = self.by_size.setdefault(section.size, [])
        kept.insert(0, section)
        self.recent[id(section)] = section
        self.held += section.size
        for dropped in kept[_PER_SIZE:]:
            self._forget(dropped)
        while self.held > _CACHE_BYTES:
            self._forget(next(iter(self.recent.values())))

    def _forget(self, section: Section) -> None:
        del self.recent[id(section)]
        self.by_size[section.size].remove(section)
        if not self.by_size[section.size]:
            del self.by_size[section.size]
        self.held -= section.size


def read_layout(raw: bytes, size: int, limit: int, cache: LayoutCache | None = None) -> Section:
    """The Section of the reference document raw[:size]; more than ``limit`` metrics is refused (the header's count:
    the walk stops there instead of reading on)."""
    buf = np.frombuffer(raw, dtype=np.uint8) if cache is not None else None
    return _walk(raw, buf, 0, size, 0, cache, limit)


def _overrun(what: str, at: int) -> BadDocument:
    return BadDocument(f"{what} runs past the end of its document", at)


def _walk(raw: bytes, buf, start: int, size: int, depth: int, cache, limit: int) -> Section:
    if cache is not None and size >= _CACHED_FROM:
        found = cache.find(buf, start, size, depth)
        if found is not None:
            return found
    unpack = struct.unpack_from
    end = start + size - 1                          # the document's closing NUL
    mask = bytearray(b"\xff") * size
    leaves: dict[str, tuple[int, int, int]] = {}
    children: dict[str, tuple[Section, int, int]] = {}
    order: list[tuple[str, int | None, Section | None, int]] = []
    count, height, pos = 0, 0, start + 4
    while pos < end:
        kind = raw[pos]
        key_end = raw.find(b"\x00", pos + 1, end)
        if key_end < 0:
            raise _overrun("a field name", pos)
        key = raw[pos + 1:key_end].decode("utf-8", "replace")
        pos = key_end + 1
        scalar = _SCALARS.get(kind)
        if scalar is not None:
            coding, width = scalar
            if pos + width > end:
                raise _overrun(f"field {key!r}", pos)
            at = pos - start
            mask[at:at + width] = bytes(width)
            leaves.setdefault(key, (count, coding, at))
            order.append((key, coding, None, at))
            count += 1
            pos += width
        elif kind == 0x11:                          # Timestamp: increment, then seconds; FTDC counts seconds first
            if pos + 8 > end:
                raise _overrun(f"field {key!r}", pos)
            at = pos - start
            mask[at:at + 8] = bytes(8)
            leaves.setdefault(key + ".t", (count, U4, at + 4))
            leaves.setdefault(key + ".i", (count + 1, U4, at))
            order += [(key + ".t", U4, None, at + 4), (key + ".i", U4, None, at)]
            count += 2
            pos += 8
        elif kind in (0x03, 0x04):
            if pos + 5 > end:
                raise _overrun(f"sub-document {key!r}", pos)
            (sub,) = unpack("<i", raw, pos)
            if sub < 5 or pos + sub > end or raw[pos + sub - 1] != 0:
                raise BadDocument(f"sub-document {key!r} declares {sub} bytes, which do not fit its parent", pos)
            if depth + 1 > MAX_RECURSION:
                raise BadDocument(f"sub-document {key!r} is nested more than {MAX_RECURSION} levels deep (MongoDB's "
                                  "limit, kMaxRecursion in src/mongo/db/ftdc/util.cpp)", pos)
            child = _walk(raw, buf, pos, sub, depth + 1, cache, limit - count)
            at = pos - start
            children.setdefault(key, (child, count, at))
            order.append((key, None, child, at))
            mask[at:at + sub] = child.mask
            count += child.count
            height = max(height, child.height + 1)
            pos += sub
        elif kind in _STRINGS or kind == 0x0C:      # string-like (DBPointer: a string, then an ObjectId)
            if pos + 4 > end:
                raise _overrun(f"field {key!r}", pos)
            (length,) = unpack("<i", raw, pos)
            tail = 12 if kind == 0x0C else 0
            if length < 1 or pos + 4 + length + tail > end:
                raise BadDocument(f"string {key!r} declares {length} bytes, which do not fit its document", pos)
            if kind != 0x0C:                        # the text may change; its length may not
                mask[pos - start + 4:pos - start + 3 + length] = bytes(length - 1)
            pos += 4 + length + tail
        elif kind == 0x05:
            if pos + 5 > end:
                raise _overrun(f"field {key!r}", pos)
            (length,) = unpack("<i", raw, pos)
            if length < 0 or pos + 5 + length > end:
                raise BadDocument(f"binary {key!r} declares {length} bytes, which do not fit its document", pos)
            pos += 5 + length
        elif kind == 0x0F:                          # code with scope: its total length first
            if pos + 4 > end:
                raise _overrun(f"field {key!r}", pos)
            (length,) = unpack("<i", raw, pos)
            if length < 14 or pos + length > end:
                raise BadDocument(f"code {key!r} declares {length} bytes, which do not fit its document", pos)
            pos += length
        elif kind == 0x0B:                          # regex: two C strings
            first = raw.find(b"\x00", pos, end)
            second = raw.find(b"\x00", first + 1, end) if first >= 0 else -1
            if second < 0:
                raise _overrun(f"regex {key!r}", pos)
            pos = second + 1
        elif kind in _FIXED:
            pos += _FIXED[kind]
            if pos > end:
                raise _overrun(f"field {key!r}", pos)
        else:
            raise BadDocument(f"unknown BSON type 0x{kind:02x} at field {key!r}", pos - len(key) - 2)
        if count > limit:
            raise BadDocument("more metrics than the chunk's header promises", pos)
    section = Section(size, count, height, leaves, children, order, bytes(mask))
    if cache is not None and size >= _CACHED_FROM:
        cache.add(buf, start, section)
    return section


def value_at(raw: bytes, coding: int, at: int) -> int:
    """One metric's value in the reference document, as the uint64 FTDC computes its deltas from."""
    if coding == F8:
        value = struct.unpack_from("<d", raw, at)[0]
        value = 0 if math.isnan(value) else int(min(max(value, _INT64_MIN), _INT64_MAX))   # numberLong()
    elif coding == I4:
        value = struct.unpack_from("<i", raw, at)[0]
    elif coding in (I8, DATE):
        value = struct.unpack_from("<q", raw, at)[0]
    elif coding == BOOL:
        value = int(raw[at] != 0)
    elif coding == U4:
        value = struct.unpack_from("<I", raw, at)[0]
    else:
        from bson.decimal128 import Decimal128

        decimal = Decimal128.from_bid(raw[at:at + 16]).to_decimal()
        value = min(max(int(decimal), _INT64_MIN), _INT64_MAX) if decimal.is_finite() else 0
    return value & _U64
