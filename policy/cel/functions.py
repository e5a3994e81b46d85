"""The gateway's CEL helper functions, as plain Python independent of any CEL engine.

Every argument of these functions can be attacker-controlled (a tool call's arguments come from
the model), so each one is lexical (never touches the filesystem or the network), bounded in work,
and written against a known bypass: ``/workspace/../etc``, ``http://user@evil.com@good.com``,
``$'\\x72m' -rf /``, catastrophic regular expressions. Type errors raise ``TypeError`` and bad
patterns ``ValueError``; the engines turn both into CEL evaluation errors (fail closed).

The engines register them under these CEL names (see :data:`CEL_FUNCTIONS`):
``path.normalize``, ``path.within``, ``path.base``, ``path.ext``, ``shell.commands``,
``shell.argv0s``, ``shell.programs``, ``shell.redirects``, ``shell.effects`` (what interpreter code does),
``shell.sql`` (statements database clients send), ``shell.cli`` (infrastructure CLIs read with
their grammars), ``shell.acts`` (a line's effects on trust, identity, defences and the network),
``shell.web_requests`` (what each curl, wget, HTTPie or xh command would send),
``path.later`` and ``path.later_risks`` (files that run later, and what in their text makes a
write a technique), ``path.later_unread`` (whether what such a file runs cannot be judged as its
command lines), ``sql.statements``, ``call.acts`` (what a tool call's name says it does to the
world: deletes, grants, payments, ...), ``call.checks_off`` (a write, edit or patch that switches
the project's own checks off), ``url.host``, ``url.encoded_text`` (text carried base64-encoded in a
URL), ``glob``, ``secrets.scan`` and ``matches``
(RE2, cached).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import re2
from dsh_policy.cmdline.deadline import one_time_setup
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy import detectors

if TYPE_CHECKING:  # imported on first use (see DeferredHelper): a policy is ready without them
    from dsh_policy.cmdline.cli_grammars import shell_cli
    from dsh_policy.cmdline.shell import (
        shell_argv0s,
        shell_commands,
        shell_effects,
        shell_programs,
        shell_redirects,
        shell_sql,
    )
    from dsh_policy.cmdline.sql import sql_statements
    from dsh_policy.cmdline.web_requests import shell_web_requests

__all__ = [
    "CEL_FUNCTIONS",
    "CEL_SIGNATURES",
    "FUNCTION_NAMESPACES",
    "glob_match",
    "path_base",
    "path_ext",
    "path_normalize",
    "path_within",
    "re2_matches",
    "secrets_scan",
    "shell_argv0s",
    "shell_cli",
    "shell_commands",
    "shell_effects",
    "shell_programs",
    "shell_redirects",
    "shell_sql",
    "shell_web_requests",
    "sql_statements",
    "url_host",
]


def _require_str(value: Any, function: str, position: int = 1) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{function} expects a string as argument {position}, got {type(value).__name__}")
    return value


# -- path ---------------------------------------------------------------------------------------


def path_normalize(p: str) -> str:
    """Resolve ``.``, ``..`` and repeated slashes lexically, keeping the path absolute or relative.

    ``/a/./b/../c//d/`` -> ``/a/c/d``; ``/..`` -> ``/``; ``a/../..`` -> ``..``; ``""`` -> ``.``.
    ``~`` is an ordinary first component (never expanded) and the filesystem is never consulted,
    so symlinks are not resolved: a rule about real files also needs the tool to refuse symlinks.
    """
    _require_str(p, "path.normalize")
    normalized = posixpath.normpath(p)
    if normalized.startswith("//"):
        normalized = "/" + normalized.lstrip("/")  # POSIX keeps a leading "//"; we do not
    return normalized


def _is_home_relative(p: str) -> bool:
    return p.startswith("~")


def path_within(p: str, root: str) -> bool:
    """Whether ``p`` names ``root`` or something below it, after normalizing both.

    A relative ``p`` is resolved against ``root`` (``../etc`` is not within ``/workspace``);
    ``/workspace2`` is not within ``/workspace``. A ``~`` path is within only a ``~`` root, since a
    tool that expands ``~`` would leave any absolute root: ``~/.ssh`` is never within
    ``/workspace``.
    """
    _require_str(p, "path.within", 1)
    _require_str(root, "path.within", 2)
    norm_root = path_normalize(root)
    if _is_home_relative(p) and not _is_home_relative(norm_root):
        return False
    if not p.startswith("/") and not _is_home_relative(p):
        p = norm_root + "/" + p
    norm_p = path_normalize(p)
    if norm_p.startswith("/") != norm_root.startswith("/"):
        return False
    if norm_root in ("/", "."):
        return norm_root == "/" or not norm_p.startswith("..")
    return norm_p == norm_root or norm_p.startswith(norm_root + "/")


def path_base(p: str) -> str:
    """The last component of the normalized path (``/a/b/`` -> ``b``; ``/`` -> ``/``)."""
    normalized = path_normalize(p)
    return normalized if normalized == "/" else normalized.rsplit("/", 1)[-1]


def path_ext(p: str) -> str:
    """The extension of the last component, lowercased, with its dot (``a/B.TAR.GZ`` -> ``.gz``;
    ``.bashrc`` -> ``""``)."""
    return posixpath.splitext(path_base(p))[1].lower()


# -- url ----------------------------------------------------------------------------------------

_SCHEME = lazy_compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_AUTHORITY_END = lazy_compile(r"[/?#\\]")
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_IDNA_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # dots IDNA maps to "."


def _ipv4_number(part: str) -> int | None:
    """A WHATWG IPv4 part: decimal, ``0x`` hex or leading-zero octal."""
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        return int(part, 10)
    except ValueError:
        return None


def _canonical_ipv4(host: str) -> str | None:
    """``2130706433``, ``0x7f.1`` and ``0177.0.0.1`` are all ``127.0.0.1`` to a browser or curl."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for index, n in enumerate(values[:-1]):
        address += n << (8 * (3 - index))
    return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))


_ENCODED_RUN = lazy_compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_URL_AUTHORITY = lazy_compile(r"(?i)^\s*[a-z][a-z0-9+.-]*://[^/?#]*")
_HEX = frozenset("0123456789abcdefABCDEF")


def url_encoded_text(u: str) -> bool:
    """Whether the path, query or fragment of ``u`` carries text encoded as base64 (standard or
    URL-safe, percent-escaped or not): a run of 24+ base64 characters that decodes to 16+ bytes of
    printable text, at least half of them letters or digits. Random identifiers (document ids,
    hashes, tokens of random bytes) decode to binary and are not text; plain hex digests are never
    read. Data smuggled out in a URL is text (a key, an environment, a file), whatever its length."""
    _require_str(u, "url.encoded_text")
    text = u[:8192]
    authority = _URL_AUTHORITY.match(text)
    rest = urllib.parse.unquote(text[authority.end() :] if authority else text)
    for run in _ENCODED_RUN.findall(rest):
        pieces = [run, *run.split("/")] if "/" in run else [run]
        if any(_decodes_to_text(piece) for piece in pieces):
            return True
    return False


def _decodes_to_text(run: str) -> bool:
    body = run.rstrip("=")
    if len(body) < 24 or all(c in _HEX for c in body):
        return False
    body = body.replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        body = body[:-1]
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 16 or any(not (32 <= b < 127 or b in (9, 10, 13)) for b in raw):
        return False
    return sum(1 for b in raw if chr(b).isalnum()) * 2 >= len(raw)


def url_host(u: str) -> str:
    """The host a client would connect to, lowercased, without userinfo, port, brackets or
    trailing dots; ``""`` when there is none (``mailto:x``).

    Follows what browsers and curl do with tricky input: the LAST ``@`` ends the userinfo
    (``http://user@evil.com@good.com`` -> ``good.com``), backslashes and extra slashes after a web
    scheme are separators, percent-escapes in the host are decoded, numeric IPv4 forms are
    canonical (``http://0x7f.1`` -> ``127.0.0.1``), and a scheme-less ``example.com/x`` or
    ``example.com:8080`` is read as a host. Unicode is NFKC-folded as IDNA does, so fullwidth
    ``ｅｖｉｌ.com`` is ``evil.com``; other international names stay in Unicode (not punycode).
    A public wildcard-DNS name is the address it spells (``10.0.0.5.nip.io`` -> ``10.0.0.5``).
    """
    _require_str(u, "url.host")
    text = u.strip(_C0_AND_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme_match = _SCHEME.match(text)
    rest = text
    if scheme_match is not None:
        after = text[scheme_match.end() :]
        port_like = after.split("/", 1)[0].split("?", 1)[0]
        scheme = scheme_match.group(1).lower()
        if scheme in _SPECIAL_SCHEMES:
            rest = "//" + after.lstrip("/\\")
        elif after.startswith("//"):
            rest = after
        elif port_like.isdigit():
            rest = "//" + text  # "example.com:8080/x": a host and port, not a scheme
        else:
            return ""
    elif not text.startswith("//"):
        rest = "//" + text
    authority = _AUTHORITY_END.split(rest[2:], maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        end = host.find("]")
        host = host[1:end] if end > 0 else host[1:]
        return host.lower()
    host = host.rpartition(":")[0] if ":" in host else host
    host = unicodedata.normalize("NFKC", urllib.parse.unquote(host)).translate(_IDNA_DOTS)
    host = host.lower().rstrip(".")
    return _canonical_ipv4(host) or _wildcard_dns_address(host) or host


# Public wildcard-DNS names answer with the address written in the name itself
# (``169.254.169.254.nip.io``, ``app-10-0-0-5.sslip.io``, ``a9fea9fe.nip.io``): the client reaches
# that address, so the name is read as it (probe17).
_WILDCARD_DNS = lazy_compile(
    r"^(?:.*[.-])?(?:(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})|([0-9a-f]{8}))"
    r"\.(?:nip\.io|sslip\.io|xip\.io|nip\.direct|traefik\.me|backname\.io)$"
)


def _wildcard_dns_address(host: str) -> str | None:
    match = _WILDCARD_DNS.match(host)
    if match is None:
        return None
    if match.group(5):
        number = int(match.group(5), 16)
        return ".".join(str((number >> shift) & 0xFF) for shift in (24, 16, 8, 0))
    parts = [int(match.group(i)) for i in range(1, 5)]
    return ".".join(str(p) for p in parts) if all(p <= 255 for p in parts) else None


# -- glob ---------------------------------------------------------------------------------------


def _quiet_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a bad pattern is reported as a value, not logged to stderr
    return options


_RE2_OPTIONS = _quiet_options()


def _re2_error_text(exc: re2.error) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re2._Regexp:
    """Translate a glob into an anchored RE2 program: linear time whatever the input."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    out.append("(?:.*/)?")  # "a/**/b" also matches "a/b"
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if pattern.startswith("]", i + 1):
                end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                escaped = "".join("\\" + c if c in "\\[]^" else c for c in body)
                out.append(f"[{'^/' if negate else ''}{escaped}]")
                i = end
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return re2.compile("(?s)" + "".join(out) + r"\z", _RE2_OPTIONS)


def glob_match(s: str, pattern: str) -> bool:
    """Whether the whole of ``s`` matches the glob: ``*`` and ``?`` stay within one ``/``
    segment, ``**`` crosses segments (``a/**/b`` also matches ``a/b``), ``[abc]``/``[!a-z]``
    classes, ``\\`` escapes. Case-sensitive. Linear time (compiled to RE2)."""
    _require_str(s, "glob", 1)
    _require_str(pattern, "glob", 2)
    try:
        regex = _glob_regex(pattern)
    except re2.error as exc:
        raise ValueError(f"invalid glob {pattern!r}: {_re2_error_text(exc)}") from exc
    return regex.match(s) is not None


# -- matches ------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> re2._Regexp:
    """Compile (and cache, LRU, bounded) an RE2 program; raises ``ValueError`` for a bad pattern.

    The cache matters: a rule's pattern is usually a constant, and both native CEL runtimes would
    otherwise recompile it on every evaluation."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {_re2_error_text(exc)}") from exc


def re2_matches(s: str, pattern: str) -> bool:
    """CEL ``matches``: whether RE2 ``pattern`` matches anywhere in ``s`` (use ``^...$`` to anchor).
    Linear time in ``len(s)`` whatever the pattern, so attacker-chosen input cannot stall it."""
    if type(s) is not str or type(pattern) is not str:
        _require_str(s, "matches", 1)
        _require_str(pattern, "matches", 2)
    regex = compile_re2(pattern)
    if _RAW_MATCH is None:
        return regex.search(s) is not None
    data = _utf8(s) if len(s) <= _UTF8_CACHE_MAX_CHARS else s.encode("utf-8")
    # A yes/no answer needs no match object: RE2's own Match on the UTF-8 bytes, without the
    # wrapper's offset bookkeeping (most of the cost of a rule's many tests of one short line).
    span: tuple[int, int] = regex._regexp.Match(_RAW_MATCH, data, 0, len(data))[0]
    return span != (-1, -1)


def re2_finds(regex: re2._Regexp) -> Callable[[str], bool]:
    """``regex.search(text) is not None`` for a string, as :func:`re2_matches` answers it (RE2's
    own Match on the UTF-8 bytes, no match object): for a constant ``matches`` pattern, which
    the closure compiler tests many times per event."""
    if _RAW_MATCH is None:
        search = regex.search
        return lambda text: search(text) is not None
    raw_match = regex._regexp.Match
    anchor = _RAW_MATCH
    utf8 = _utf8

    def finds(text: str) -> bool:
        data = utf8(text) if len(text) <= _UTF8_CACHE_MAX_CHARS else text.encode("utf-8")
        return bool(raw_match(anchor, data, 0, len(data))[0] != (-1, -1))

    return finds


def _raw_match_anchor() -> Any:
    """RE2's unanchored mode when the installed google-re2 exposes its matcher, else None (then
    ``re2_matches`` uses the public ``search``)."""
    anchor = getattr(getattr(getattr(re2, "_re2", None), "RE2", None), "Anchor", None)
    probe = re2.compile("b")
    if anchor is None or not hasattr(probe, "_regexp"):
        return None
    try:
        if probe._regexp.Match(anchor.UNANCHORED, b"ab", 0, 2)[0] != (1, 2):
            return None
    except Exception:  # a changed private API: fall back to the public one
        return None
    return anchor.UNANCHORED


_RAW_MATCH = _raw_match_anchor()
_UTF8_CACHE_MAX_CHARS = 64 * 1024


@lru_cache(maxsize=128)
def _utf8(s: str) -> bytes:
    """UTF-8 of a short string, cached: one event's rules test the same line dozens of times."""
    return s.encode("utf-8")


# -- secrets ------------------------------------------------------------------------------------

MAX_SCAN_DEPTH = 64
"""Deepest nesting of lists and maps ``secrets.scan`` walks; deeper values raise ``ValueError``."""


def secrets_scan(value: Any) -> list[str]:
    """Names of the secret detectors (``policy/detectors.py``) that fire anywhere in ``value``: a
    string, or every string key and value inside nested maps and lists. Sorted, without
    duplicates, so results compare equal across engines."""
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_SCAN_DEPTH:
            raise ValueError(f"secrets.scan: value nests deeper than {MAX_SCAN_DEPTH} levels")
        if isinstance(item, str):
            found.update(_detector_names(item))
        elif isinstance(item, bytes):
            found.update(_detector_names(item.decode("utf-8", "replace")))
        elif isinstance(item, Mapping):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
    return sorted(found)


_SCAN_CACHE_MAX_CHARS = 64 * 1024


@lru_cache(maxsize=256)
def _cached_detector_names(text: str) -> frozenset[str]:
    return frozenset(match.name for match in detectors.find(text))


def _detector_names(text: str) -> frozenset[str]:
    """Detector names in ``text``, and in its percent-decoded form when it has escapes (a key in a
    URL's query is ``-----BEGIN%20OPENSSH%20PRIVATE%20KEY-----``); short texts are cached (rules of
    one event scan the same output), long ones are not, so the cache never pins megabytes of tool
    output."""
    names = _names_in(text)
    if "%" in text:
        decoded = urllib.parse.unquote_plus(text)
        if decoded != text:
            names |= _names_in(decoded)
    return names


def _names_in(text: str) -> frozenset[str]:
    if len(text) <= _SCAN_CACHE_MAX_CHARS:
        return _cached_detector_names(text)
    return frozenset(match.name for match in detectors.find(text))


FUNCTION_NAMESPACES = frozenset({"path", "shell", "url", "secrets", "sql", "call"})
"""Receivers that name a function namespace (``path.normalize(p)``) rather than a variable."""


class DeferredHelper:
    """A helper whose command-line reader is imported on its first call, not when the CEL
    functions are: the readers (the shell reader, its wrapper and grammar tables, the effects,
    SQL and interpreter readers) are about 20 ms of imports that a policy does not need to be
    ready, and that a decision pays only when it calls one. The closure compiler binds
    :meth:`resolve` on a node's first evaluation, so later calls pay nothing for the deferral;
    an import that fails raises, which the engines make an evaluation error like any other."""

    __slots__ = ("_function", "module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._function: Callable[..., Any] | None = None

    def resolve(self) -> Callable[..., Any]:
        """The reader's function (imported on the first call)."""
        if self._function is None:
            with one_time_setup():  # an import once per process: outside the stage's budget
                self._function = getattr(importlib.import_module(self.module), self.name)
        return self._function

    def __call__(self, *args: Any) -> Any:
        return self.resolve()(*args)

    @property
    def __name__(self) -> str:  # as a function has, for the engines that name their host functions
        return self.name

    def __repr__(self) -> str:
        return f"<helper {self.module}.{self.name}>"


_READERS: Mapping[str, DeferredHelper] = {
    helper.name: helper
    for helper in (
        DeferredHelper("dsh_policy.cmdline.shell", "shell_commands"),
        DeferredHelper("dsh_policy.cmdline.shell", "shell_argv0s"),
        DeferredHelper("dsh_policy.cmdline.shell", "shell_redirects"),
        DeferredHelper("dsh_policy.cmdline.shell", "shell_effects"),
        DeferredHelper("dsh_policy.cmdline.shell", "shell_programs"),
        DeferredHelper("dsh_policy.cmdline.shell", "shell_sql"),
        DeferredHelper("dsh_policy.cmdline.cli_grammars", "shell_cli"),
        DeferredHelper("dsh_policy.cmdline.effects", "shell_acts"),
        DeferredHelper("dsh_policy.cmdline.effects", "later_class"),
        DeferredHelper("dsh_policy.cmdline.effects", "later_risks"),
        DeferredHelper("dsh_policy.cmdline.effects.later_commands", "later_unread"),
        DeferredHelper("dsh_policy.cmdline.sql", "sql_statements"),
        DeferredHelper("dsh_policy.cmdline.web_requests", "shell_web_requests"),
        DeferredHelper("dsh_policy.cmdline.tool_acts", "tool_acts"),
        DeferredHelper("dsh_policy.cmdline.effects.checks_files", "file_checks_off"),
    )
}


def __getattr__(name: str) -> Callable[..., Any]:
    """``shell_commands`` and the other readers' functions, imported when first asked for."""
    helper = _READERS.get(name)
    if helper is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return helper.resolve()


CEL_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "path.normalize": path_normalize,
    "path.within": path_within,
    "path.base": path_base,
    "path.ext": path_ext,
    "shell.commands": _READERS["shell_commands"],
    "shell.argv0s": _READERS["shell_argv0s"],
    "shell.redirects": _READERS["shell_redirects"],
    "shell.effects": _READERS["shell_effects"],
    "shell.programs": _READERS["shell_programs"],
    "shell.sql": _READERS["shell_sql"],
    "shell.cli": _READERS["shell_cli"],
    "shell.acts": _READERS["shell_acts"],
    "shell.web_requests": _READERS["shell_web_requests"],
    "path.later": _READERS["later_class"],
    "path.later_risks": _READERS["later_risks"],
    "path.later_unread": _READERS["later_unread"],
    "sql.statements": _READERS["sql_statements"],
    "call.acts": _READERS["tool_acts"],
    "call.checks_off": _READERS["file_checks_off"],
    "url.host": url_host,
    "url.encoded_text": url_encoded_text,
    "glob": glob_match,
    "secrets.scan": secrets_scan,
    "matches": re2_matches,
}
"""Every helper by its CEL name; both engines register exactly this table."""

CEL_SIGNATURES: Mapping[str, tuple[str, ...]] = {
    "path.normalize": ("path.normalize(string) -> string",),
    "path.within": ("path.within(string, string) -> bool",),
    "path.base": ("path.base(string) -> string",),
    "path.ext": ("path.ext(string) -> string",),
    "shell.commands": ("shell.commands(string) -> list(list(string))",),
    "shell.argv0s": ("shell.argv0s(string) -> list(string)",),
    "shell.redirects": ("shell.redirects(string) -> list(map(string, string))",),
    "shell.effects": ("shell.effects(string) -> list(map(string, string))",),
    "shell.programs": ("shell.programs(string) -> string",),
    "shell.sql": ("shell.sql(string) -> list(map(string, string))",),
    "shell.cli": ("shell.cli(string) -> list(map(string, dyn))",),
    "shell.acts": ("shell.acts(string) -> list(map(string, string))",),
    "shell.web_requests": ("shell.web_requests(string) -> list(map(string, dyn))",),
    "path.later": ("path.later(string) -> string",),
    "path.later_risks": ("path.later_risks(string, string) -> list(string)",),
    "path.later_unread": ("path.later_unread(string, string) -> bool",),
    "sql.statements": ("sql.statements(string) -> list(map(string, string))",),
    "call.acts": ("call.acts(string, map(string, dyn)) -> list(map(string, string))",),
    "call.checks_off": ("call.checks_off(map(string, dyn)) -> string",),
    "url.host": ("url.host(string) -> string",),
    "url.encoded_text": ("url.encoded_text(string) -> bool",),
    "glob": ("glob(string, string) -> bool",),
    "secrets.scan": (
        "secrets.scan(string) -> list(string)",
        "secrets.scan(bytes) -> list(string)",
        "secrets.scan(list(dyn)) -> list(string)",
        "secrets.scan(map(dyn, dyn)) -> list(string)",
    ),
    "matches": ("matches(string, string) -> bool", "string.matches(string) -> bool"),
}
"""The overloads of every helper in :data:`CEL_FUNCTIONS`, in CEL type notation: ``name(T, ...) ->
R`` for a function, ``T.name(...) -> R`` for a method of ``T``. Declared once, here: the type
checker resolves calls against them and the native engine declares exactly these overloads, so a
new helper is typed by adding its line (``tests/cel/test_cel_checker.py`` fails for a helper
without one). Parameter types are concrete (never ``dyn``) because the native runtime does not
dispatch a ``dyn`` parameter; a helper taking several kinds of value lists one overload each."""
