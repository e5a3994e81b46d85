"""Code that runs code it builds at run time from an encoded form (the ``run-decoded`` effect).

``base64 -d | sh`` is read by the shell rules; the same payload inside an interpreter is
``exec(zlib.decompress(b64decode(...)))``, ``eval pack "H*", ...``, ``eval(%w[s y s].join)``,
``eval(Buffer.from(x, "base64").toString())`` or ``loadstring(string.char(...))``: the text the
readers would judge never appears. The effect is the *pair*: a call that evaluates a string as
code, whose argument is produced by a decoder, a decompressor or a string assembled from
characters or reversed; and the same decoded value handed to the shell
(``os.system(b64decode(...))``, ``execSync(Buffer.from(x, "base64"))``). Either alone is ordinary
(printing a decoded value, ``eval`` of a literal expression, ``eval { ... }`` exception handling in
Perl), so neither alone is reported.
"""

from __future__ import annotations

import re

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["decoded_runs"]

_EVALUATORS: dict[str, re.Pattern[str]] = {
    "python": lazy_compile(
        r"(?<![\w.])(?:exec|eval|compile)\s*\(|(?:\bbuiltins|__builtins__|\))\s*\.\s*(?:exec|eval)\s*\("
        r"|\bgetattr\s*\([^)]*[\"'](?:exec|eval)[\"']\s*\)\s*\("
    ),
    "perl": lazy_compile(r"(?<![\w$>])eval\s*(?!\s*\{)(?=\S)"),
    "ruby": lazy_compile(r"(?<![\w.])(?:eval|instance_eval|class_eval|module_eval)\b|\bsend\s*\(?\s*:eval\b"),
    "javascript": lazy_compile(
        r"(?<![\w.])(?:eval|Function)\s*\(|\bnew\s+Function\s*\(|\bvm\.(?:Script|compileFunction)\b|\.runIn\w*Context\s*\("
        # the global object's members called by a computed name: global["ev" + "al"](...)
        r"|\b(?:global|globalThis|window|self)\s*\[[^\]\n]{1,60}\]\s*\("
    ),
    "php": lazy_compile(r"(?<![\w$>])(?:eval|assert|create_function)\s*\("),
    "lua": lazy_compile(r"(?<![\w.])(?:load|loadstring|dostring)\s*\("),
}
"""Per language, the calls that evaluate a string as code in the running interpreter."""

_DECODERS = lazy_compile(
    r"(?i)b(?:64|32|16|85)decode|a85decode|decodebytes|decodestring|decompress|inflate|gzuncompress"
    r"|\bunhexlify|fromhex|codecs\.decode|rot_?13|\bchr\s*\(|\bord\s*\(|fromCharCode|Buffer\.from"
    r"|\batob\s*\(|\bpack\s*[(\s]|\bunpack1?\b|decode64|decode_base64|base64_decode|hex2bin|MIME::Base64"
    r"|Base64\.|\.join\b|\bjoin\s*\(|\.reverse\b|\breverse\s*[(\s]|\[::-1\]|strrev|marshal\.loads"
    r"|string\.char\s*\(|\\x[0-9a-f]{2}(?:\\x[0-9a-f]{2}){7}"
)
"""What turns an opaque value into code text: decoders, decompressors, characters assembled one by
one, reversed or joined strings, long hex escapes."""

_SHELL_OUTS: dict[str, re.Pattern[str]] = {
    "python": lazy_compile(r"\bos\.(?:system|popen)\s*\(|\bsubprocess\.\w+\s*\(|\bpty\.spawn\s*\("),
    "perl": lazy_compile(r"(?<![\w$>])(?:system|exec)\s*(?=\S)|\bqx\s*[({]"),
    "ruby": lazy_compile(r"(?<![\w.])(?:system|exec|spawn)\b|\b(?:IO\.popen|Open3\.\w+|Process\.spawn)\b"),
    "javascript": lazy_compile(r"\b(?:exec|execSync|spawn|spawnSync|execFile|execFileSync)\s*\("),
    "php": lazy_compile(r"(?<![\w$>])(?:system|exec|shell_exec|passthru|popen|proc_open)\s*\("),
    "lua": lazy_compile(r"\b(?:os\.execute|io\.popen)\s*\(?"),
}
"""Per language, the calls that hand a string to the shell: a decoded command is as hidden there."""

_COMMAND_DECODERS = lazy_compile(
    r"(?i)b(?:64|32|16|85)decode|a85decode|decodebytes|decompress|inflate|gzuncompress|\bunhexlify|fromhex"
    r"|codecs\.decode|rot_?13|fromCharCode|Buffer\.from\s*\([^)]*,\s*[\"'](?:base64|hex|base64url)[\"']"
    r"|\batob\s*\(|\bpack\s*[(\s]|\bunpack1?\b|decode64|decode_base64|base64_decode|hex2bin|Base64\.|strrev"
)
"""The decoders that turn an opaque value into a command (joins and characters are everyday there)."""

_WINDOW = 600
_MAX_ARGUMENT = 4000
_MAX_CALLS = 64
"""Bounds that keep the work linear in the code: an argument is read up to 4,000 characters, and
at most 64 calls of each kind are read (code with more is judged by its first ones)."""


def _argument_text(code: str, start: int) -> str:
    """The evaluated argument: up to the matching parenthesis, or the statement's end."""
    pos = start
    while pos < len(code) and code[pos] in " \t":
        pos += 1
    if pos < len(code) and code[pos] == "(":
        depth = 0
        for i in range(pos, min(len(code), pos + _MAX_ARGUMENT)):
            if code[i] == "(":
                depth += 1
            elif code[i] == ")":
                depth -= 1
                if depth == 0:
                    return code[pos : i + 1]
        return code[pos : pos + _MAX_ARGUMENT]
    end = len(code)
    for stop in (";", "\n"):
        found = code.find(stop, pos)
        if found >= 0:
            end = min(end, found)
    return code[pos : min(end, pos + _WINDOW)]


def decoded_runs(code: str, language: str) -> list[dict[str, str]]:
    """``run-decoded`` effects: each evaluator call of ``language`` whose argument is built by a
    decoder, and each shell-out whose command is (see the module doc). ``[]`` for a language
    without a known evaluator."""
    head = _EVALUATORS.get(language)
    if head is None:
        return []
    found: list[dict[str, str]] = []
    for pattern, decoders in ((head, _DECODERS), (_SHELL_OUTS.get(language), _COMMAND_DECODERS)):
        for count, match in enumerate(pattern.finditer(code) if pattern is not None else ()):
            if count >= _MAX_CALLS:
                break
            decoder = decoders.search(_argument_text(code, match.end()))
            if decoder:
                found.append({"kind": "run-decoded", "lang": language, "target": decoder.group()})
    return found
