"""YAML read into plain JSON-like values while keeping where every node came from.

``yaml.safe_load`` forgets positions and silently keeps the last of two duplicate keys. Rule packs
need both: every error is reported as FILE:LINE:COL, and a duplicated ``when:`` must not quietly
replace the first one. So we compose the node tree ourselves, build the values from it, and record
the mark of every key and value, plus the raw source of string scalars so that a column reported by
the CEL compiler *inside* an expression can be mapped back into the file.

The node tree is composed by libyaml (PyYAML's C parser) when PyYAML was built with it: its marks
are the same character positions the pure-Python composer gives (``tests/policy/test_yaml_c_reader.py``
compares both on every YAML file of the repository), at a fraction of the cost. A text libyaml
refuses, or one holding a tab (where the two disagree: PyYAML refuses tabs libyaml accepts), is
composed again by the pure-Python parser, so every error reads as it always has.
"""

from __future__ import annotations

import datetime
import math
import os
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import yaml
from dsh_policy.policy.errors import PolicyError
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Path: TypeAlias = tuple[str | int, ...]

# Aliases can expand a small file exponentially ("billion laughs"); a pack never needs this many.
_NODE_BUDGET = 200_000
# ... and a few aliases to one long string expand it just as well: the characters built, counting
# every expansion, are bounded too (a 1 MiB string aliased 12,000 times would be 12 GB).
MAX_EXPANDED_CHARS = 32 * 1024 * 1024
# Nothing we read from YAML (packs, cases, deployment files, sessions) comes near this.
MAX_FILE_BYTES = 16 * 1024 * 1024
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
# libyaml's loader, when PyYAML was built with it (its wheels are); else the pure-Python one only.
_C_LOADER: type | None = (
    getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
)


@dataclass(frozen=True, slots=True)
class SourceIssue:
    """A problem found while reading YAML (1-based position)."""

    line: int
    col: int
    message: str


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_LONE_SURROGATE_MESSAGE = (
    "string holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair): not Unicode text"
)


def _has_lone_surrogate(text: str) -> bool:
    # YAML's "\ud800" escape yields one; nothing downstream (digests, RE2, the audit log) can
    # encode it, so it is a load error at its position rather than a crash later.
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_utf8(path: str | os.PathLike[str]) -> str | SourceIssue:
    """The text of a UTF-8 file with universal newlines (as ``Path.read_text`` gives it), or why
    it cannot be read: position 0:0 when the file cannot be opened at all, else the line and
    column of the first byte that is not UTF-8 (so a stray byte is as easy to find as a typo)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return SourceIssue(0, 0, f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    except FileNotFoundError:
        return SourceIssue(0, 0, "no such file")
    except OSError as exc:
        return SourceIssue(0, 0, f"cannot read: {exc}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - data.rfind(b"\n", 0, exc.start)
        return SourceIssue(line, col, f"not UTF-8: byte 0x{data[exc.start]:02x} ({exc.reason})")
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True, slots=True)
class ScalarSpan:
    """Where a string scalar sits in the file: its first character, its style (``None`` plain,
    ``'`` / ``"`` quoted, ``|`` literal, ``>`` folded), its raw text as written and its value."""

    line: int
    col: int
    style: str | None
    raw: str
    value: str


@dataclass(slots=True)
class SourceMap:
    """Positions of the nodes of one YAML document, addressed by JSON path."""

    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    scalars: dict[Path, ScalarSpan] = field(default_factory=dict)
    text: str = ""

    def line_text(self, line: int) -> str | None:
        """The document's 1-based ``line`` as written (for a caret under an error's column)."""
        if line <= 0 or not self.text:
            return None
        lines = self.text.split("\n", line)
        return lines[line - 1].rstrip("\r") if line <= len(lines) else None

    def value_position(self, path: Path) -> tuple[int, int]:
        """Position of the value at ``path``, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.values.get(path[:end])
            if found is not None:
                return found
        return (1, 1)

    def key_position(self, path: Path) -> tuple[int, int]:
        """Position of the mapping key that holds ``path`` (falls back to the value position)."""
        found = self.keys.get(path)
        return found if found is not None else self.value_position(path)

    def expression_position(self, path: Path, offset: int | None) -> tuple[int, int, bool]:
        """Map a 0-based character ``offset`` inside the string at ``path`` to (line, col, exact).

        Plain, literal and single-quoted scalars map exactly. Folded scalars (``>``) and
        double-quoted escapes change characters between the file and the value, so the mapping
        aligns both texts greedily; ``exact`` is False when that alignment had to guess (the line
        is still the right one in practice, the column may be off by the escape's length).
        """
        span = self.scalars.get(path)
        if span is None:
            line, col = self.value_position(path)
            return line, col, offset is None
        if offset is None:
            return span.line, span.col, True
        return _map_offset(span, offset)


def _map_offset(span: ScalarSpan, offset: int) -> tuple[int, int, bool]:
    raw = span.raw
    value = span.value
    if span.style in ("|", ">"):
        newline = raw.find("\n")
        j = len(raw) if newline < 0 else newline + 1
    elif span.style in ("'", '"'):
        j = 1
    else:
        j = 0
    skippable = " \t\r\n"
    if span.style == '"':
        skippable += "\\"
    elif span.style == "'":
        skippable += "'"
    exact = True
    target = max(0, min(offset, len(value)))
    for i in range(target + 1):
        if i == len(value):
            break
        char = value[i]
        k = j
        while k < len(raw) and raw[k] != char and raw[k] in skippable:
            k += 1
        if k < len(raw) and raw[k] == char:
            if i == target:
                j = k
                break
            j = k + 1
        else:
            exact = False
            if i == target:
                j = min(k, len(raw))
                break
            j = min(k + 1, len(raw))
    before = raw[:j]
    newlines = before.count("\n")
    if newlines == 0:
        return span.line, span.col + j, exact
    return span.line + newlines, j - before.rfind("\n"), exact


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """A document read from YAML: its plain value and where each node came from."""

    value: Any
    source: SourceMap


def read_yaml(text: str) -> YamlDocument | list[SourceIssue]:
    """Parse one YAML document into plain values with positions, or return every issue found."""
    try:
        root = _compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        return [SourceIssue(line, col, f"invalid YAML: {problem}")]
    except yaml.YAMLError as exc:
        return [SourceIssue(1, 1, f"invalid YAML: {exc}")]
    builder = _Builder(text)
    if root is None:
        return [SourceIssue(1, 1, "the file is empty")]
    value = builder.build(root, ())
    if builder.issues:
        return sorted(builder.issues, key=lambda issue: (issue.line, issue.col))
    return YamlDocument(value, builder.source)


def _compose(text: str) -> Node | None:
    """The node tree of ``text``: libyaml's when it accepts the text, else the pure-Python
    composer's (whose errors are the ones reported, worded as they always were)."""
    if _C_LOADER is not None and "\t" not in text:
        try:
            return yaml.compose(text, Loader=_C_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


class _Builder:
    """Walks a composed node tree once, building values and recording positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.source = SourceMap(text=text)
        self.issues: list[SourceIssue] = []
        self.constructor = SafeConstructor()
        self.budget = _NODE_BUDGET
        self.chars = MAX_EXPANDED_CHARS
        self.active: set[int] = set()

    def issue(self, node: Node, message: str) -> None:
        self.issues.append(SourceIssue(node.start_mark.line + 1, node.start_mark.column + 1, message))

    def build(self, node: Node, path: Path) -> Any:
        self.budget -= 1
        if self.budget < 0:
            if self.budget == -1:
                self.issue(node, "document too large (alias expansion exceeds the node budget)")
            return None
        self.source.values.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if id(node) in self.active:
            self.issue(node, "recursive alias")
            return None
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
            if isinstance(node, MappingNode):
                return self.mapping(node, path)
        finally:
            self.active.discard(id(node))
        self.issue(node, "unsupported YAML node")
        return None

    def scalar(self, node: ScalarNode, path: Path) -> Any:
        try:
            # A string is its node's value (what SafeConstructor would build, without its walk).
            value = node.value if node.tag == _STR_TAG else self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            self.issue(node, f"invalid value: {getattr(exc, 'problem', None) or exc}")
            return None
        if isinstance(value, str):
            self.chars -= 2 * len(value)  # the value and its raw text
            if self.chars < 0:
                if self.chars + 2 * len(value) >= 0:
                    self.issue(
                        node,
                        "document too large (alias expansion exceeds "
                        f"{MAX_EXPANDED_CHARS // (1024 * 1024)} MiB of text)",
                    )
                return None
            if _has_lone_surrogate(value):
                self.issue(node, _LONE_SURROGATE_MESSAGE)
                return None
            raw = self.text[node.start_mark.index : node.end_mark.index]
            # libyaml marks a plain scalar's style "", the pure-Python parser None.
            self.source.scalars[path] = ScalarSpan(
                node.start_mark.line + 1, node.start_mark.column + 1, node.style or None, raw, value
            )
            return value
        if isinstance(value, datetime.date | datetime.datetime):
            # JSON has no dates; keep what the author wrote rather than a Python object.
            return value.isoformat()
        if isinstance(value, float) and not math.isfinite(value):
            self.issue(node, f"non-finite number {node.value!r} is not JSON")
            return None
        if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT64_MAX:
            # CEL integers are 64-bit, and the pack digest (orjson) cannot hold a larger one either.
            self.issue(node, f"integer {node.value!r} is outside the 64-bit range CEL supports")
            return None
        if value is None or isinstance(value, bool | int | float):
            return value
        self.issue(node, f"unsupported YAML value of type {type(value).__name__}")
        return None

    def mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        merged: list[MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.extend(_merge_sources(value_node))
                continue
            if not isinstance(key_node, ScalarNode):
                self.issue(key_node, "mapping keys must be plain strings")
                continue
            key = (
                key_node.value
                if key_node.tag == _STR_TAG
                else self.constructor.construct_object(key_node, deep=True)
            )
            if not isinstance(key, str):
                self.issue(
                    key_node,
                    f"mapping key {key_node.value!r} is read as {type(key).__name__}; quote it",
                )
                continue
            if _has_lone_surrogate(key):
                self.issue(key_node, _LONE_SURROGATE_MESSAGE)
                continue
            if key in first_seen:
                self.issue(key_node, f"duplicate key {key!r} (first given on line {first_seen[key]})")
                continue
            first_seen[key] = key_node.start_mark.line + 1
            child = (*path, key)
            self.source.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.build(value_node, child)
        for source in merged:
            # ``<<: *defaults``: explicit keys win over merged ones (YAML merge-key semantics).
            for key, value in self.mapping(source, path).items():
                out.setdefault(key, value)
        return out


def _merge_sources(node: Node) -> list[MappingNode]:
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [item for item in node.value if isinstance(item, MappingNode)]
    return []


def read_yaml_file(path: str | os.PathLike[str]) -> YamlDocument | list[PolicyError]:
    """Read a UTF-8 YAML file into a document with positions, or every problem as a
    ``FILE:LINE:COL`` error (unreadable file, stray byte, invalid YAML, duplicate key)."""
    file = str(path)
    text = read_utf8(path)
    if isinstance(text, SourceIssue):
        return [PolicyError(file, text.line, text.col, text.message)]
    document = read_yaml(text)
    if isinstance(document, list):
        return [PolicyError(file, issue.line, issue.col, issue.message) for issue in document]
    return document
