"""Hypothesis strategies that damage YAML documents the way people and attackers do: structural
edits of the parsed tree (delete, duplicate, rename, retype, corrupt CEL), text edits (truncate,
splice bytes, duplicate a line, break indentation) and plain junk."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import strategies as st

#: Scalars of every YAML type, for retyping a node.
_OTHER_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["deny", "allow", "ask", "block", "reject", "guard", "pre-step", "warn", "~", "*", ""]),
    st.just([]),
    st.just({}),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
#: Fragments that break CEL in interesting places.
_CEL_JUNK = st.sampled_from(
    [
        "(",
        ")",
        "&&",
        "||",
        "!",
        '"',
        "'",
        "\\",
        ".",
        "[",
        "]",
        "{",
        "}",
        ",",
        "?",
        ":",
        "has(",
        "in",
        "size(",
        "matches(",
        '"[',
        "a.map(x, ",
        "1/0",
        "int('x')",
        "args.",
        "\x00",
        "\ud800",
        "\u202e",
        "vars.nope",
        "params.nope",
        " == ",
        "true",
        "null",
        "b'\\xff'",
        "dyn(",
        "1e999",
        "0x",
        "-9223372036854775809",
    ]
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in a parsed YAML tree (the root included)."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_paths(value, (*prefix, index)))
    return out


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    node = tree
    for part in path[:-1]:
        node = node[part]
    return node


@st.composite
def tree_mutation(draw: st.DrawFn, tree: Any) -> Any:
    """One to three structural edits of a parsed document."""
    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(tree) if p]
        if not paths:
            return draw(_OTHER_SCALARS)
        path = draw(st.sampled_from(paths))
        parent, last = _parent(tree, path), path[-1]
        action = draw(st.sampled_from(["delete", "duplicate", "rename", "retype", "corrupt", "swap"]))
        if action == "delete":
            del parent[last]
        elif action == "duplicate":
            if isinstance(parent, list):
                parent.insert(last, copy.deepcopy(parent[last]))
            else:
                twin = f"{last}_copy" if draw(st.booleans()) else str(last).upper()
                parent[twin] = copy.deepcopy(parent[last])
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from([f"{last}x", str(last)[:-1], "wehn", "id", "when", "", "1"]))] = (
                parent.pop(last)
            )
        elif action == "corrupt" and isinstance(parent[last], str):
            text: str = parent[last]
            at = draw(st.integers(0, len(text)))
            cut = draw(st.integers(0, 3))
            parent[last] = text[:at] + draw(_CEL_JUNK) + text[at + cut :]
        elif action == "swap" and isinstance(parent, list) and len(parent) > 1:
            parent.reverse()
        else:
            parent[last] = draw(_OTHER_SCALARS)
    return tree


def _dump(tree: Any) -> bytes:
    try:
        return yaml.safe_dump(tree, sort_keys=False, allow_unicode=True).encode("utf-8", "surrogatepass")
    except yaml.YAMLError:
        return b"{}"


@st.composite
def text_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """One text-level edit of a document's bytes."""
    action = draw(st.sampled_from(["truncate", "splice", "flip", "dup-line", "indent", "junk", "empty"]))
    if action == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    if action == "splice":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    if action == "flip":
        if not data:
            return b"\xff"
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    lines = data.split(b"\n")
    if action == "dup-line" and lines:
        at = draw(st.integers(0, len(lines) - 1))
        return b"\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
    if action == "indent" and lines:
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = draw(st.sampled_from([b"   ", b"\t", b""])) + lines[at].lstrip()
        return b"\n".join(lines)
    if action == "junk":
        return draw(st.binary(max_size=200))
    return b""


def mutated_document(source: bytes) -> st.SearchStrategy[bytes]:
    """A damaged version of ``source``: a structural edit (dumped back to YAML) or a text edit,
    sometimes both."""
    tree = yaml.load(source, Loader=yaml.CSafeLoader)
    structural = tree_mutation(tree).map(_dump)
    return st.one_of(
        structural,
        text_mutation(source),
        structural.flatmap(text_mutation),
    )
