"""The helper functions, against the bypasses they exist to stop."""

from __future__ import annotations

import time

import pytest
from dsh_policy.policy.cel.functions import (
    compile_re2,
    glob_match,
    path_base,
    path_ext,
    path_normalize,
    path_within,
    re2_matches,
    secrets_scan,
    url_host,
)
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("/workspace/./a//b/../c/", "/workspace/a/c"),
        ("/../etc", "/etc"),
        ("//etc///passwd", "/etc/passwd"),
        ("a/../..", ".."),
        ("./a", "a"),
        ("", "."),
        ("~/x/../.ssh", "~/.ssh"),
        ("/", "/"),
    ],
)
def test_normalize_is_lexical_and_keeps_absolute_or_relative(raw: str, normalized: str) -> None:
    assert path_normalize(raw) == normalized


@pytest.mark.parametrize(
    ("p", "root", "inside"),
    [
        ("/workspace/src/a.py", "/workspace", True),
        ("/workspace", "/workspace/", True),
        ("/workspace/../etc/passwd", "/workspace", False),
        ("/workspace2/x", "/workspace", False),
        ("/workspace/./../workspace/x", "/workspace", True),
        ("src/a.py", "/workspace", True),
        ("../etc/passwd", "/workspace", False),
        ("src/../../etc", "/workspace", False),
        ("//workspace//x", "/workspace", True),
        ("~/.ssh/id_rsa", "/workspace", False),
        ("~/notes", "~", True),
        ("/etc", "/", True),
        ("a/b", "a", True),
        ("/a/b", "a", False),
    ],
)
def test_within_resolves_before_comparing(p: str, root: str, inside: bool) -> None:
    assert path_within(p, root) is inside


def test_base_and_ext() -> None:
    assert path_base("/a/b/") == "b"
    assert path_base("/") == "/"
    assert path_ext("a/B.TAR.GZ") == ".gz"
    assert path_ext(".bashrc") == ""


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.COM/path", "example.com"),
        ("http://user@evil.com@good.com/x", "good.com"),
        ("http://good.com@evil.com/x", "evil.com"),
        ("http://user:pw@host.example:8080/", "host.example"),
        ("http://[::1]:8080/", "::1"),
        ("http://[2001:DB8::1]/", "2001:db8::1"),
        ("example.com/x", "example.com"),
        ("example.com:8080/x", "example.com"),
        ("//evil.com/x", "evil.com"),
        ("https://evil.com./", "evil.com"),
        ("http:\\\\evil.com\\x", "evil.com"),
        ("http:/evil.com", "evil.com"),
        ("https:///evil.com", "evil.com"),
        ("  https://evil.com  ", "evil.com"),
        ("http://%65vil.com/", "evil.com"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://evil.com#@good.com", "evil.com"),
        ("http://evil.com?@good.com", "evil.com"),
        ("mailto:someone@example.com", ""),
        ("http://evil.com\\@good.com/", "evil.com"),
        ("http://\uff45\uff56\uff49\uff4c\u3002com/", "evil.com"),
        ("https://B\u00fccher.de/", "b\u00fccher.de"),
        ("", ""),
    ],
)
def test_url_host_is_the_host_a_client_would_connect_to(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(
    ("s", "pattern", "matched"),
    [
        ("src/a.py", "src/*.py", True),
        ("src/deep/a.py", "src/*.py", False),
        ("src/deep/a.py", "src/**/*.py", True),
        ("src/a.py", "src/**/*.py", True),
        ("http_get", "http_*", True),
        ("a.txt", "?.txt", True),
        ("ab.txt", "?.txt", False),
        ("b.txt", "[abc].txt", True),
        ("d.txt", "[!abc].txt", True),
        ("a.txt", "[!abc].txt", False),
        ("*.txt", "\\*.txt", True),
        ("a.txt", "\\*.txt", False),
        ("a+b(c)", "a+b(c)", True),
        (".env", "*", True),
    ],
)
def test_glob(s: str, pattern: str, matched: bool) -> None:
    assert glob_match(s, pattern) is matched


def test_glob_and_matches_run_in_linear_time_on_hostile_input() -> None:
    hostile = "a" * 100_000 + "b"
    start = time.perf_counter()
    assert not glob_match(hostile, "*a*a*a*a*a*a*a*a*a*c")
    assert not re2_matches(hostile, "^(a+)+$")
    assert time.perf_counter() - start < 5  # backtracking engines take astronomically long


def test_matches_searches_anywhere_and_caches_compiled_patterns() -> None:
    assert re2_matches("rm -rf /", "-[a-z]*r")
    assert not re2_matches("ls", "^rm")
    assert compile_re2("x+") is compile_re2("x+")


def test_bad_patterns_and_wrong_types_raise_for_the_engine_to_report() -> None:
    with pytest.raises(ValueError, match="invalid regular expression"):
        re2_matches("x", "(")
    with pytest.raises(ValueError, match="invalid regular expression"):
        re2_matches("x", "(?=lookahead)")
    with pytest.raises(TypeError):
        path_within(1, "/")


def test_secrets_scan_walks_nested_values() -> None:
    value = {"env": ["AWS_KEY=AKIAIOSFODNN7EXAMPLE"], "ghp_" + "a" * 36: {"ok": 1}}
    assert secrets_scan(value) == ["aws-access-key", "github-token"]
    assert secrets_scan("nothing here") == []
    with pytest.raises(ValueError, match="nests deeper"):
        nested: list[object] = []
        for _ in range(100):
            nested = [nested]
        secrets_scan(nested)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=30))
def test_path_and_url_helpers_never_raise_on_strings(p: str, root: str) -> None:
    path_within(p, root)
    path_normalize(p)
    url_host(p)
    glob_match(p, root)


_FINDS_PATTERNS = [r"rm\s+-rf", r"^git$", r"(?i)PASSWORD", r"é+", r"\bpush\b", r"", r"^$", r"[^\x00-\x7f]"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40) | st.sampled_from(["rm -rf /", "git", "a password", "café", "", "push"]))
def test_re2_finds_answers_as_search_does(text: str) -> None:
    """The constant-pattern test (RE2's Match on the UTF-8 bytes) against the wrapper's search,
    on any text, multibyte included; also through the public API where the private one is absent."""
    from dsh_policy.policy.cel import functions

    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return  # not UTF-8: both raise, and the engine makes it an evaluation error
    for pattern in _FINDS_PATTERNS:
        regex = compile_re2(pattern)
        expected = regex.search(text) is not None
        assert functions.re2_finds(regex)(text) is expected, (pattern, text)


def test_re2_finds_falls_back_to_search_without_the_private_match(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_policy.policy.cel import functions

    monkeypatch.setattr(functions, "_RAW_MATCH", None)
    finds = functions.re2_finds(compile_re2(r"rm\s+-rf"))
    assert finds("sudo rm  -rf /") is True and finds("rmdir x") is False
