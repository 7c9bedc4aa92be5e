"""Structured text from users' files (YAML workloads and models, JSON tables and records), read with bounds.

Files that people copy and share may be hostile or broken. Here they are read so that every outcome is either the
data or one ``InputError`` naming the file:

- at most ``MAX_BYTES`` of UTF-8 text; binary content is named by its byte offset;
- nesting at most ``MAX_DEPTH`` levels (deeper JSON or YAML is refused instead of overflowing the stack);
- a key repeated in one mapping (or, in YAML, keys that are the same text once read: ``1`` and ``'1'``) is refused,
  naming the key and its lines, instead of one value silently winning;
- YAML aliases expanded to at most ``MAX_NODES`` nodes: the expanded size is counted on the composed node graph
  (each anchor once, memoised) *before* any Python object is built, so a "billion laughs" bomb of a few hundred
  bytes is refused at once instead of growing to gigabytes when the data is copied or serialised.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capmodel.errors import InputError, shown

MAX_BYTES = 10 * 2**20
MAX_DEPTH = 64
MAX_NODES = 200_000


def read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text (UTF-8); an InputError for one too large, binary, or not UTF-8 (with the byte offset)."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{path}: {size:,} bytes is more than the {max_bytes:,} this file may have")
    data = path.read_bytes()
    return decode(data, path)


def decode(data: bytes, source) -> str:
    """UTF-8 text of ``data``; binary (a NUL byte) or undecodable content named by its byte offset."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(f"{source}: binary content, not text (NUL byte at byte offset {nul})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte offset {exc.start})") from None


def check_depth(value: Any, source, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` unchanged when its lists and mappings nest at most ``max_depth`` levels (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > max_depth:
                raise InputError(f"{source}: nested more than {max_depth} levels deep")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return value


def load_json(text: str, source) -> Any:
    """JSON text parsed, nesting bounded; invalid JSON names the line and column."""
    def unique(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise InputError(f"{source}: key {shown(key)} appears twice in one object")
            out[key] = value
        return out

    try:
        value = json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{source}: nested more than {MAX_DEPTH} levels deep") from None
    return check_depth(value, source)


def _expanded_size(node, source, memo: dict, depth: int = 1) -> int:
    """Nodes of ``node`` with every alias expanded (memoised per node, so the walk is linear in the graph)."""
    import yaml

    key = id(node)
    if key in memo:
        if memo[key] is None:
            raise InputError(f"{source}: a YAML alias refers to itself (a recursive structure)")
        return memo[key]
    if depth > MAX_DEPTH:
        raise InputError(f"{source}: nested more than {MAX_DEPTH} levels deep")
    memo[key] = None  # on the path: seeing it again is a cycle
    total = 1
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            total += _expanded_size(child, source, memo, depth + 1)
    elif isinstance(node, yaml.MappingNode):
        _check_unique_keys(node, source)
        for k, v in node.value:
            total += _expanded_size(k, source, memo, depth + 1) + _expanded_size(v, source, memo, depth + 1)
    if total > MAX_NODES:
        raise InputError(f"{source}: the YAML expands to more than {MAX_NODES:,} values (aliases included); "
                         "refusing it")
    memo[key] = total
    return total


def _check_unique_keys(node, source) -> None:
    """Refuse a mapping that repeats a key (YAML keeps the last silently) or whose keys collide once read as names
    (``1`` and ``'1'``: capmodel names classes and stations by text)."""
    import yaml

    seen: dict = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line = key.start_mark.line + 1
        if key.value in seen:
            first_line, first_tag = seen[key.value]
            what = (f"key {shown(key.value)} appears twice" if first_tag == key.tag else
                    f"keys {shown(key.value)} collide (a number and a string, the same name once read)")
            raise InputError(f"{source}: {what} in one mapping (lines {first_line} and {line})")
        seen[key.value] = (line, key.tag)


def _loader_class():
    """libyaml's safe loader when PyYAML was built with it (a C parser, ~10x faster), else the pure-Python one: both
    give the same events, nodes and objects."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose(loader, source):
    """The one document's node graph, composed from the parser's events without recursion (PyYAML's composer
    recurses, and libyaml's in C could overflow the stack): nesting deeper than ``MAX_DEPTH`` is refused as it is
    reached (at level 65 of a 3,000-deep file, naming the line), in the one parse that builds the graph. None for an
    empty stream."""
    import yaml
    from yaml.composer import ComposerError

    loader.get_event()                                      # stream start
    if loader.check_event(yaml.StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()                                      # document start
    anchors: dict = {}
    stack: list = []   # [collection node, its pending key]
    root, no_key = None, object()
    while root is None:
        event = loader.get_event()
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            node = stack.pop()[0]
            node.end_mark = event.end_mark
            if not stack:
                root = node
            continue
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
            node = anchors[event.anchor]
        else:
            if event.anchor is not None and event.anchor in anchors:
                raise ComposerError(f"found duplicate anchor {event.anchor!r}; first occurrence",
                                    anchors[event.anchor].start_mark, "second occurrence", event.start_mark)
            kind = (yaml.ScalarNode if isinstance(event, yaml.ScalarEvent) else
                    yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode)
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(kind, event.value if kind is yaml.ScalarNode else None, event.implicit)
            if kind is yaml.ScalarNode:
                node = kind(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            else:
                node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                anchors[event.anchor] = node
        if stack:
            parent = stack[-1]
            if isinstance(parent[0], yaml.SequenceNode):
                parent[0].value.append(node)
            elif parent[1] is no_key:
                parent[1] = node
            else:
                parent[0].value.append((parent[1], node))
                parent[1] = no_key
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise InputError(f"{source}: nested more than {MAX_DEPTH} levels deep (line "
                                 f"{event.start_mark.line + 1})")
            stack.append([node, no_key])
        elif not stack:
            root = node
    loader.get_event()                                      # document end
    if not loader.check_event(yaml.StreamEndEvent):
        raise ComposerError("expected a single document in the stream", root.start_mark,
                            "but found another document", loader.get_event().start_mark)
    loader.get_event()
    return root


def load_yaml(text: str, source) -> Any:
    """YAML text (one document) parsed once with the safe loader (libyaml's when present), alias expansion and
    nesting bounded, a repeated key refused."""
    import yaml

    try:
        loader = _loader_class()(text)
    except yaml.YAMLError as exc:  # the pure-Python reader refuses a control character at once
        raise InputError(f"{source}: not valid YAML ({str(exc).splitlines()[0][:100]})") from None
    try:
        try:
            node = _compose(loader, source)
        except RecursionError:
            raise InputError(f"{source}: nested more than {MAX_DEPTH} levels deep") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0][:100] or "cannot parse"
            if "maximum nesting depth" in problem:   # libyaml's own bound (1,000), met before the composer's
                line = f" (line {mark.line + 1})" if mark is not None else ""
                raise InputError(f"{source}: nested more than {MAX_DEPTH} levels deep{line}") from None
            raise InputError(f"{source}: not valid YAML{where} ({problem})") from None
        if node is None:
            return None
        _expanded_size(node, source, {})
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise InputError(f"{source}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
        except (ValueError, OverflowError, TypeError) as exc:  # e.g. a timestamp or number the constructor rejects
            raise InputError(f"{source}: a value cannot be read ({str(exc)[:80]})") from None
    finally:
        loader.dispose()


def read_structured(path: str | Path) -> Any:
    """A YAML or JSON file's content (JSON when its name ends in .json), bounded and checked as ``read_text``,
    ``load_json`` and ``load_yaml`` do; a problem is an ``InputError`` naming the file."""
    text = read_text(path)
    return load_json(text, path) if str(path).endswith(".json") else load_yaml(text, path)
