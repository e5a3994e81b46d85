"""Mapping a character offset inside a YAML scalar back to FILE:LINE:COL, for every scalar style."""

from __future__ import annotations

import pytest
from dsh_policy.policy.source.yaml_source import YamlDocument, read_yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st


def char_at(text: str, line: int, col: int) -> str:
    return text.splitlines()[line - 1][col - 1]


DOC = """\
rule:
  folded: >-
    foo(x)
      && bar
    || baz
  double: "ab\\ncd ef"
  plain: hello
    world  there
  literal: |
    one
    two three
  single: 'it''s x'
"""


@pytest.mark.parametrize(
    ("key", "needle", "exact"),
    [
        ("folded", "bar", True),
        ("folded", "baz", True),
        ("double", "cd", False),  # after an escape the alignment is approximate...
        ("double", "ef", False),
        ("plain", "there", True),
        ("literal", "three", True),
        ("single", "x", True),
    ],
)
def test_offsets_map_to_the_character_in_the_file(key: str, needle: str, exact: bool) -> None:
    document = read_yaml(DOC)
    assert isinstance(document, YamlDocument)
    value = document.value["rule"][key]
    line, col, was_exact = document.source.expression_position(("rule", key), value.index(needle))
    assert was_exact is exact
    assert char_at(DOC, line, col) == needle[0]  # ...but still lands on the right character


def test_duplicate_keys_and_non_string_keys_are_reported() -> None:
    issues = read_yaml("a: 1\nb: 2\na: 3\nyes: 4\n")
    assert isinstance(issues, list)
    assert [(i.line, i.col, i.message) for i in issues] == [
        (3, 1, "duplicate key 'a' (first given on line 1)"),
        (4, 1, "mapping key 'yes' is read as bool; quote it"),
    ]


def test_alias_bombs_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefgh":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
    issues = read_yaml(bomb)
    assert isinstance(issues, list)
    assert any("node budget" in issue.message for issue in issues)


WORD = st.text(alphabet="abcdefghij()=&|!.<> ", min_size=1, max_size=12).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(WORD, min_size=1, max_size=4), style=st.sampled_from(["literal", "plain", "single"]))
def test_every_character_maps_home(lines: list[str], style: str) -> None:
    if style == "literal":
        text = "k: |-\n" + "".join(f"    {line}\n" for line in lines)
    elif style == "plain":
        assume(lines[0][0] not in "&|!>.=<()")
        text = "k: " + "\n  ".join(lines) + "\n"
    else:
        text = "k: '" + "\n  ".join(lines) + "'\n"
    document = read_yaml(text)
    # not every generated plain scalar is valid YAML; those are not this test's subject
    assume(isinstance(document, YamlDocument) and isinstance(document.value.get("k"), str))
    assert isinstance(document, YamlDocument)
    value = document.value["k"]
    for offset, char in enumerate(value):
        if char == " " or char == "\n":
            continue
        line, col, exact = document.source.expression_position(("k",), offset)
        assert exact
        assert char_at(text, line, col) == char, (offset, value, text)
