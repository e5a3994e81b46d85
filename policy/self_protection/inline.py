"""Interpreter code on a command line, judged by what it does: the servers an interpreter starts
(``python -m http.server`` hands out its folder), what inline code writes, deletes or reads (the
interpreter reader's effects), code that only reads (it may read anything but the signing key),
code that may act in ways the reader does not resolve (judged by its literals,
:mod:`.code_literals`), code fed on a here-document, and the files sed and awk programs write.

Every function takes the call's :class:`~.scan.CallScan` (paths resolved against the line's
working folders, links and letter case).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Final, Protocol

from dsh_policy.cmdline.interpreters.effects import analyze
from dsh_policy.cmdline.interpreters.invocation import split_invocation
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import only_reads
from dsh_policy.policy.self_protection import code_literals, later, processes, streams, tactics
from dsh_policy.policy.self_protection.locations import Protected
from dsh_policy.policy.self_protection.refusals import KIND_TEXT, RULE_PREFIX, Refusal, message, refusal


class ProtectedSet(Protocol):
    @property
    def entries(self) -> tuple[Protected, ...]: ...
    @property
    def secrets(self) -> tuple[Protected, ...]: ...
    @property
    def mentions(self) -> re.Pattern[str]: ...


class CallScan(Protocol):
    """What this module uses of one call's scan (:class:`.scan.CallScan`)."""

    @property
    def protection(self) -> ProtectedSet: ...
    @property
    def cwd(self) -> str: ...
    @property
    def bases(self) -> list[str]: ...
    @property
    def local(self) -> list[Protected]: ...
    def hit(self, word: str, *, folders: bool) -> Protected | None: ...
    def candidates(self, word: str) -> list[str]: ...
    def expand(self, word: str) -> str: ...


# Inline code that may act on files or processes beyond what the interpreter reader resolves: such
# code naming a protected path is judged as a writer of it.
_CODE_ACTS: Final[re.Pattern[str]] = lazy_compile(
    r"write|append|remove|unlink|rename|replace|rmtree|rmdir|move|copy|chmod|chown|truncate|symlink"
    r"|\blink|mkdir|makedirs|system|subprocess|popen|spawn|exec|eval|kill|signal|socket|shutil|dump"
    r"|save|touch|utime|delete|erase|argv|import\s*\(|__import__|ctypes"
    # Node's ``fs.rm``/``rmSync``/``cp``/``cpSync``, Ruby's ``FileUtils.rm_rf``/``mv``, PHP's
    # ``file_put_contents``: calls whose names hold none of the words above.
    r"|\brm\w*\s*\(|\bcp\w*\s*\(|\bmv\s*\(|\brm(?:_\w+)?\s+['\"\w]|put_contents|FileUtils",
    re.IGNORECASE,
)
# A file mode that writes (``open(p, "w")``, ``fopen($p, "a+")``), as a whole string literal.
_WRITE_MODE: Final[re.Pattern[str]] = lazy_compile(r"[rbt]*[wax+][rwxabt+]*")
# Languages whose inline code is the only thing that acts (no operand the interpreter rewrites).
_CODE_READERS: Final[frozenset[str]] = frozenset({"python", "javascript", "ruby", "perl", "php", "lua", "r"})

_QUOTED: Final[re.Pattern[str]] = lazy_compile(r"'([^'\n]{1,4096})'|\"([^\"\n]{1,4096})\"")

_AWK_OUTPUT: Final[re.Pattern[str]] = lazy_compile(r'>>?\s*"([^"]+)"')

_SED_OUTPUT: Final[re.Pattern[str]] = lazy_compile(r"(?:^|[;{}\n]|/[gpIiMme0-9]*)\s*w\s+([^;\n}]+)")


def _acts(code: str) -> bool:
    """Whether code may act beyond reading: a call that could (:data:`_CODE_ACTS`, looked for
    outside string literals, so a path that spells ``popen`` is no call) or a writing file mode."""
    literals = [m.group(1) if m.group(1) is not None else m.group(2) for m in _QUOTED.finditer(code)]
    if any(_WRITE_MODE.fullmatch(text or "") for text in literals):
        return True
    return _CODE_ACTS.search(_QUOTED.sub('""', code)) is not None


def program_writes(program: str, code: str) -> list[str]:
    """The files an awk program (``print > "FILE"``) or a sed script (``w FILE``, ``s/a/b/w
    FILE``) writes, from the languages' manuals."""
    pattern = _SED_OUTPUT if program == "sed" else _AWK_OUTPUT
    return [match.group(1).strip() for match in pattern.finditer(code)]


def inline(scan: CallScan, argv: list[str], tool: str) -> tuple[bool, Refusal | None]:
    """Interpreter inline code (``python -c``, ``node -e``) and the servers an interpreter
    starts (``python -m http.server``): ``(judged, refusal)``, see :func:`judge_code`."""
    invocation = split_invocation(argv)
    if invocation is None:
        return False, None
    for effect in invocation.effects:  # a server hands out every file under its folder
        if effect.get("kind") == "serve":
            found = serves_secret(scan, effect.get("target") or ".")
            if found is not None:
                return True, refusal(found, f"{argv[0]} would serve {effect.get('target') or '.'}")
    if not invocation.code:
        return False, None
    # sed and awk programs, and ``perl -i``/``ruby -i``, write the files they are given:
    # only code that is the sole actor can be a reader.
    rewrites = invocation.language not in _CODE_READERS or any(
        w.startswith("-") and not w.startswith("--") and "i" in w[1:] for w in argv[1:]
    )
    return judge_code(scan, argv[0], invocation.language, invocation.code, rewrites)


def serves_secret(scan: CallScan, folder: str) -> Protected | None:
    for base in scan.bases:
        joined = folder if os.path.isabs(scan.expand(folder)) else os.path.join(base, folder)
        for candidate in scan.candidates(joined):
            for secret in scan.protection.secrets:
                if secret.covers(candidate) or (candidate != "/" and tactics.holds(candidate, secret.path)):
                    return secret
    return None


def judge_code(
    scan: CallScan, program: str, language: str, codes: Sequence[str], rewrites: bool
) -> tuple[bool, Refusal | None]:
    """What code writes or deletes is judged as a path; code that only reads (no call that
    could act, per the interpreter reader and :data:`_CODE_ACTS`) is a reader: it may read
    anything but the signing key and the folders holding it. ``(judged, refusal)``: not
    judged when the code may act in ways the reader does not resolve."""
    reads_only = not rewrites
    for code in codes:
        analysis = analyze(code, language)
        for effect in analysis.effects:
            kind, target = effect.get("kind", ""), effect.get("target", "")
            if kind in ("write", "delete", "delete-tree") and target:
                found = scan.hit(target, folders=kind == "delete-tree")
                if found is not None:
                    return True, refusal(found, f"{program} code would {kind.replace('-tree', '')} {target}")
            elif kind == "read" and target:
                found = scan.hit(target, folders=False)
                if found is not None and found.secret:
                    return True, refusal(found, f"{program} code would read {target}")
        if (
            analysis.shell_lines
            or analysis.argvs
            or analysis.nested
            or any(e.get("kind") not in ("read",) for e in analysis.effects)
            or _acts(code)
        ):
            reads_only = False
    if not reads_only:
        return acting_code(scan, program, codes)
    secret = code_literals.assembled_secret(scan, codes)
    if secret is not None:
        return True, refusal(secret, f"{program} code would read the key by a path it assembles")
    for code in codes:
        for match in _QUOTED.finditer(code):
            text = match.group(1) or match.group(2) or ""
            for candidate in scan.candidates(text):
                for secret in scan.protection.secrets:
                    if secret.covers(candidate) or (
                        candidate not in ("/", scan.cwd) and tactics.holds(candidate, secret.path)
                    ):
                        return True, refusal(secret, f"{program} code would read {text}")
    return True, None


def acting_code(scan: CallScan, program: str, codes: Sequence[str]) -> tuple[bool, Refusal | None]:
    """Code that may act, judged by its literals (:mod:`.code_literals`): a protected path
    spelled in pieces, the gateway picked out for a signal. ``(False, None)`` leaves the code
    to the checks of its words."""
    session = later.code_session_write(scan, program, codes)
    if session is not None:
        return True, session
    runtime = [e.path for e in scan.protection.entries if e.kind == "gateway-runtime"]
    if any(code_literals.SIGNALS.search(code) for code in codes):
        picked = code_literals.signals_gateway(codes, processes.gateway_processes(runtime))
        if picked is not None:
            return True, Refusal(
                f"{RULE_PREFIX}/gateway-runtime",
                message(
                    f"{program} code would signal the processes {picked!r} picks, the gateway among them",
                    KIND_TEXT["gateway-runtime"],
                ),
            )
    found = code_literals.assembled_path(scan, codes)
    if found is not None:
        return True, refusal(found, f"{program} code assembles the path {found.path}")
    return False, None


def heredoc_reads(scan: CallScan, commands: Sequence[Sequence[str]], line: str) -> bool:
    """Whether every program fed a here-document only reads: a reader, or an interpreter
    reading its code from stdin (``python3 - <<EOF``) whose code only reads."""
    bodies = streams.heredoc_bodies(line)
    for argv in commands:
        if not argv or only_reads(list(argv)):
            continue
        invocation = split_invocation(list(argv))
        if invocation is None or not invocation.reads_stdin or invocation.language not in _CODE_READERS:
            return False
        judged, found = judge_code(scan, argv[0], invocation.language, bodies, False)
        if not judged or found is not None:
            return False
    return True
