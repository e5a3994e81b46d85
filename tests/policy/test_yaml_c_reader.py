"""libyaml composes the node trees packs are read from: its marks and values must be exactly the
pure-Python composer's, or an error position (FILE:LINE:COL, a column inside a ``when``) would
move. Both are compared on the repository's YAML files (a sample of the corpora, every other file in
full) and on texts built to stress marks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dsh_policy.policy.source import yaml_source
from dsh_policy.policy.source.yaml_source import read_yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

ROOT = Path(__file__).resolve().parents[2]
C_LOADER = getattr(yaml, "CSafeLoader", None)
pytestmark = pytest.mark.skipif(
    C_LOADER is None or not yaml.__with_libyaml__, reason="PyYAML built without libyaml"
)

STRESS = [
    'a: 1\nb: |\n  x\n  y\nc: "q\\n\\t\\u00e9"\nd: >-\n  p\n  q\n',
    'é: "ü😀x"\nb: |\n  ẞ😀\n  y\nc: q  # comment\n',
    "base: &b {x: 1, y: [a, 'b''c', \"d\"]}\nother:\n  <<: *b\n  z: *b\n",
    '- when: >\n    has(args.command) &&\n      args.command.contains("rm")\n- ? complex\n  : value\n',
    "k: 'multi\n\n  line single'\nm: \"esc \\\n  aped\"\nn: |+\n  keep\n\n",
    "list:\n- 1\n- -2.5e3\n- 0x1F\n- ~\n- true\n- 2026-01-01\n- !!str 12\n",
]


CORPORA = (
    ROOT / "tests" / "corpus",
    ROOT / "tests" / "self_protection",
    ROOT / "benchmarks" / "reference",
)
CORPUS_SAMPLE_EVERY = 12
"""The corpora (command entries, self-protection spellings, frozen copies of old packs) are three
quarters of the repository's YAML and alike: every twelfth of their files is compared, everything
the product reads (packs, cases, examples, configuration) in full. The pure-Python composer costs
about 0.4 s of CPU per 100 KB, and both tests compose every file with it: a fourth of the corpora
cost the suite ~8 s of CPU for no new kind of text."""


def _texts() -> list[tuple[str, str]]:
    found = []
    corpus_files = 0
    for path in sorted(ROOT.glob("**/*.y*ml")):
        if any(part in (".venv", "build", "node_modules") or part.startswith(".") for part in path.parts):
            continue
        if any(path.is_relative_to(folder) for folder in CORPORA):
            corpus_files += 1
            if corpus_files % CORPUS_SAMPLE_EVERY != 1:
                continue
        try:
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        except (UnicodeDecodeError, OSError):
            continue
        found.append((str(path.relative_to(ROOT)), text))
    return found + [(f"stress-{index}", text) for index, text in enumerate(STRESS)]


def _shape(node: Node | None, seen: set[int]) -> Any:
    if node is None:
        return None
    marks = tuple((mark.line, mark.column, mark.index) for mark in (node.start_mark, node.end_mark))
    if id(node) in seen:  # an alias: the same node again
        return ("alias", node.tag, marks)
    seen.add(id(node))
    if isinstance(node, ScalarNode):
        return ("scalar", node.tag, node.value, node.style or None, marks)
    if isinstance(node, SequenceNode):
        return ("seq", node.tag, marks, [_shape(item, seen) for item in node.value])
    assert isinstance(node, MappingNode)
    return ("map", node.tag, marks, [(_shape(k, seen), _shape(v, seen)) for k, v in node.value])


def _compose(text: str, loader: Any) -> Any:
    try:
        return _shape(yaml.compose(text, Loader=loader), set())
    except yaml.YAMLError:
        return "error"


def test_libyaml_marks_equal_the_python_composer_on_the_repository_yaml() -> None:
    texts = _texts()
    assert len(texts) > 50  # the glob found the repository's files
    compared = 0
    for name, text in texts:
        expected = _compose(text, yaml.SafeLoader)
        if expected == "error" or "\t" in text:
            continue  # such texts are composed by the pure-Python parser (see _compose)
        assert _compose(text, C_LOADER) == expected, name
        compared += 1
    assert compared > 50


def test_read_yaml_gives_the_same_document_on_either_composer(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in _texts():
        fast = read_yaml(text)
        monkeypatch.setattr(yaml_source, "_C_LOADER", None)
        slow = read_yaml(text)
        monkeypatch.undo()
        if isinstance(slow, list):
            assert fast == slow, name
            continue
        assert not isinstance(fast, list), name
        assert (fast.value, fast.source) == (slow.value, slow.source), name


@pytest.mark.parametrize(
    "text",
    ["a: b: c\n", "a:\n  - x\n y: 1\n", "a: [1, 2\n", "a: \t b\n", "x: 1\n---\ny: 2\n", "a: *nope\n"],
)
def test_errors_read_as_the_python_composer_words_them(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = read_yaml(text)
    monkeypatch.setattr(yaml_source, "_C_LOADER", None)
    assert isinstance(fast, list)
    assert fast == read_yaml(text)
