"""Known-malicious packages: which install commands and dependency lists name a package version
that a public malicious-package advisory lists.

The data is a compact snapshot of the OpenSSF malicious-packages feed (OSV records with ``MAL-``
ids) and of the general databases' malicious-release advisories, shipped as
``malicious_packages.json`` beside this module and rebuilt by ``dsh-policy data
refresh-malicious`` (:mod:`.malicious_refresh`) from checkouts of those repositories or from
osv.dev's per-ecosystem exports. A package version is malicious when an advisory lists it, when it falls in
an advisory's range, or when the advisory covers every version; an install that names no version
is judged only by the last kind (a compromised popular package is clean again at its next
release, so its name alone proves nothing).

Readers: :func:`install_acts` (the ``malicious-package`` effects of one command's argv, for
``shell.acts``) and :func:`manifest_hits` (the malicious pins a dependency file's new text names,
for ``path.later_risks``). Lexical: nothing is resolved against a registry.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.package_runners import runner_specs
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import operands

__all__ = [
    "COMMAND_READERS",
    "DATA",
    "PIP_VALUE_OPTIONS",
    "install_acts",
    "install_specs",
    "installs",
    "malicious",
    "manifest_hits",
    "snapshot",
]

#: The options of pip-style installers (pip, uv pip, poetry, pdm) that take a value: the value is
#: no package (shared with the code-source reader, which adds the runners' own).
PIP_VALUE_OPTIONS: frozenset[str] = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--python",
        "-p",
        "--group",
        "--optional",
        "--target",
        "-t",
        "--prefix",
    }
)

DATA = Path(__file__).with_name("malicious_packages.json")
"""The shipped snapshot (``format``, ``source``, ``snapshot`` date, ``packages`` by ecosystem)."""


@cache
def _load(path: Path = DATA) -> dict[str, Any]:
    """The snapshot, or an empty one when the file is missing (a stripped install): the readers
    then find nothing, and ``snapshot()`` says so for the digest and the docs. Format 2 (JSON
    lines: a header, then one line per ecosystem) is what the updater writes; format 1 (one JSON
    document) is still read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"format": 1, "snapshot": "", "packages": {}}
    first, _, rest = text.partition("\n")
    header = _format_2_header(first)
    if header is None:
        loaded: dict[str, Any] = json.loads(text)
        return loaded
    # Tens of thousands of new objects trigger the cyclic collector over the whole heap (a loaded
    # policy: 150 ms against 14 ms, inside the first install call's evaluation budget); nothing
    # parsed here can form a cycle, so it stays off for the parse.
    collecting = gc.isenabled()
    gc.disable()
    try:
        lines = [json.loads(line) for line in rest.splitlines() if line.strip()]
    finally:
        if collecting:
            gc.enable()
    return {**header, "packages": {line["ecosystem"]: line["packages"] for line in lines}}


@cache
def _header(path: Path = DATA) -> dict[str, Any]:
    """The header line alone: the digest names the snapshot without parsing every name."""
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline()
    except FileNotFoundError:
        return {}
    header = _format_2_header(first)
    return header if header is not None else {k: v for k, v in _load(path).items() if k != "packages"}


def _format_2_header(first: str) -> dict[str, Any] | None:
    """The header of a format 2 file from its first line; None for any other first line (format
    1 is one JSON document, often pretty-printed, so its first line alone is no JSON at all)."""
    try:
        header = json.loads(first)
    except ValueError:
        return None
    return header if isinstance(header, dict) and header.get("format") == 2 else None


def snapshot() -> str:
    """The snapshot's identity (``source@date``), ``""`` when no data is installed."""
    data = _header()
    return f"{data.get('source', '')}@{data.get('snapshot', '')}" if data.get("snapshot") else ""


def normalize(ecosystem: str, name: str) -> str:
    """The name as the ecosystem compares it (PyPI: PEP 503; others: lower case except Go)."""
    if ecosystem == "pypi":
        return re.sub(r"[-_.]+", "-", name).lower()
    return name if ecosystem == "go" else name.lower()


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A version as a sortable key (numeric parts compare as numbers, others below them)."""
    return tuple(
        (int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"[.+-]", version.lstrip("v"))
    )


def _in_range(version: str, span: dict[str, str]) -> bool:
    """Whether ``version`` is in an OSV-style range; ``after`` is an exclusive lower bound (a
    RubySec ``<= X`` unaffected bound)."""
    key = version_key(version)
    low = span.get("introduced", "0")
    if low not in ("0", "0.0.0-0", "") and key < version_key(low):
        return False
    if "after" in span and key <= version_key(span["after"]):
        return False
    if "fixed" in span:
        return key < version_key(span["fixed"])
    if "last_affected" in span:
        return key <= version_key(span["last_affected"])
    return True


def malicious(ecosystem: str, name: str, version: str | None) -> str:
    """The advisory id listing ``name`` at ``version`` (``None``: no version named), or ``""``."""
    known = _load()["packages"].get(ecosystem, {})
    entry = known.get(normalize(ecosystem, name))
    if not entry and ecosystem == "go":
        # a package path inside a module (module/cmd/tool) belongs to the module
        parts = name.split("/")
        entry = next(
            (known[p] for i in range(len(parts) - 1, 2, -1) if (p := "/".join(parts[:i])) in known), None
        )
    if not entry:
        return ""
    if isinstance(entry, str):  # format 2: every version is malicious
        return entry
    ident = str(entry["id"]) if "id" in entry else str(entry.get("ids", [""])[0])
    if entry.get("all"):
        return ident
    if version is None:
        return ""
    clean = version.strip().lstrip("=v^~")
    if clean in entry.get("versions", ()):
        return str(entry.get("advisories", {}).get(clean, ident))
    span = next((span for span in entry.get("ranges", ()) if _in_range(clean, span)), None)
    return str(span.get("id", ident)) if span is not None else ""


# ----------------------------------------------------------------- install commands
_NPM_SPEC = lazy_compile(r"^(@[\w.-]+/[\w.-]+|[\w.-]+)(?:@([\w.^~<>=*+-]+))?$")
_PY_SPEC = lazy_compile(r"^([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*(?:===?\s*([\w.!+-]+)|[<>~!]=?.*)?$")
_PY_AT_SPEC = lazy_compile(r"^([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?@(?:==?)?(?:(\d[\w.!+-]*)|[\^~<>*].*)$")
"""poetry's and pdm's ``name@1.2.3`` (an exact version) and ``name@^1.2`` (a constraint: no
version named)."""
_NPM_RUNNER_SPEC = lazy_compile(r"@[\w.-]+/[\w.-]+@[\w.^~-]+|[\w.-]+@[\w.^~-]+")
"""The start of an npm runner's operand that names a version (a runner without one is left to the
program name the shell reader folds it into)."""
_PY_RUNNER_SPEC = lazy_compile(r"[A-Za-z0-9][\w.\[\]=@-]*")


def _npm(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    verbs = {"install", "i", "add", "isntall", "in", "ins", "inst", "insta", "instal"}
    i = next((j for j, a in enumerate(argv[1:3], 1) if a in verbs), 0)
    if not i:
        return
    for spec in operands(argv[i + 1 :], frozenset({"--registry", "--tag", "-w", "--workspace", "--filter"})):
        match = _NPM_SPEC.match(spec)
        if match:
            yield "npm", match.group(1), match.group(2)


def _python(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    words = argv[1:]
    if argv[0].startswith("python") and words[:2] == ["-m", "pip"]:
        words = words[2:]
    elif (argv[0] == "uv" and words[:1] in (["pip"], ["tool"])) or (
        argv[0] == "pipx" and words[:1] == ["run"]
    ):
        words = words[1:] if argv[0] == "uv" else ["install", *words[1:]]
    if not words or words[0] not in ("install", "add"):
        return
    for spec in operands(words[1:], PIP_VALUE_OPTIONS):
        if "/" in spec:  # a path, a URL or a direct reference (name @ https://...)
            continue
        match = _PY_SPEC.match(spec) or _PY_AT_SPEC.match(spec)
        if match:
            yield "pypi", match.group(1), match.group(2)


def _gem(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    if argv[1:2] != ["install"]:
        return
    version = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-v", "--version")), None)
    for name in operands(argv[2:], frozenset({"-v", "--version", "--source", "-s", "-i", "--install-dir"})):
        base, _, pinned = name.partition(":")
        yield "rubygems", base, pinned or version


def _cargo(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    if argv[1:2] not in (["add"], ["install"]):
        return
    version = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--vers", "--version")), None)
    for spec in operands(
        argv[2:],
        frozenset(
            {
                "--vers",
                "--version",
                "--git",
                "--path",
                "--index",
                "--registry",
                "-F",
                "--features",
                "--branch",
                "--tag",
                "--rev",
            }
        ),
    ):
        name, _, pinned = spec.partition("@")
        yield "crates", name, pinned or version


def _go(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    if argv[1:2] not in (["get"], ["install"], ["run"]):
        return
    for spec in operands(argv[2:], frozenset()):
        module, _, version = spec.partition("@")
        if "." in module.split("/", 1)[0]:
            yield "go", module, None if version in ("", "latest", "upgrade", "patch") else version


_READERS = {
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun"), _npm),
    **dict.fromkeys(("pip", "pip3", "uv", "poetry", "pipx", "pdm", "python", "python3"), _python),
    "gem": _gem,
    "cargo": _cargo,
    "go": _go,
}


def _effect(ecosystem: str, name: str, version: str | None) -> Effect | None:
    advisory = malicious(ecosystem, name, version)
    if not advisory:
        return None
    shown = f"{name}@{version}" if version else name
    return _fx(
        "malicious-package", f"installs {shown}, listed as malicious ({advisory})", f"{ecosystem}:{shown}"
    )


def installs(program: str) -> bool:
    """Whether :func:`install_specs` reads commands of ``program`` (a base name)."""
    return program in _READERS or program.startswith("python")


def install_specs(argv: list[str]) -> Iterator[tuple[str, str, str | None]]:
    """``(ecosystem, name, version or None)`` for every package one install command names
    (argv[0] a basename); nothing for other commands."""
    reader = _READERS.get(argv[0]) or (_python if argv[0].startswith("python") else None)
    if reader is None or len(argv) < 2:
        return
    yield from reader(argv)


def install_acts(argv: list[str]) -> Iterator[Effect]:
    """The ``malicious-package`` effects of one command (argv[0] a basename)."""
    for ecosystem, name, version in install_specs(argv):
        found = _effect(ecosystem, name, version)
        if found:
            yield found


def runner_acts(line: str) -> Iterator[Effect]:
    """``npx pkg@1.2.3``, ``uvx pkg==1.0``: package runners, whose package the shell reader folds
    into the bin it runs (dropping the version); the runners are :func:`.runner_specs`'."""
    for ecosystem, operand in runner_specs(line):
        found = None
        if ecosystem == "pypi":
            word = _PY_RUNNER_SPEC.match(operand)
            spec = _PY_SPEC.match(word.group(0)) if word else None
            if word and spec:
                found = _effect(
                    "pypi", spec.group(1), spec.group(2) or (word.group(0).partition("@")[2] or None)
                )
        else:
            versioned = _NPM_RUNNER_SPEC.match(operand)
            spec = _NPM_SPEC.match(versioned.group(0)) if versioned else None
            if spec:
                found = _effect("npm", spec.group(1), spec.group(2))
        if found:
            yield found


# ----------------------------------------------------------------- dependency files
_MANIFESTS: tuple[tuple[re.Pattern[str], str, re.Pattern[str]], ...] = (
    (
        lazy_compile(r"(?:^|/)package\.json$", re.IGNORECASE),
        "npm",
        lazy_compile(r"\"(@?[\w./-]+)\"\s*:\s*\"[\^~=v]*([\w.+-]+)\""),
    ),
    (
        lazy_compile(r"(?:^|/)(?:requirements[\w.-]*\.(?:txt|in)|constraints\.txt)$", re.IGNORECASE),
        "pypi",
        lazy_compile(r"(?m)^\s*([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*===?\s*([\w.!+-]+)"),
    ),
    (
        lazy_compile(r"(?:^|/)pyproject\.toml$", re.IGNORECASE),
        "pypi",
        lazy_compile(r"[\"']([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*===?\s*([\w.!+-]+)[\"']"),
    ),
    (
        lazy_compile(r"(?:^|/)Gemfile$", re.IGNORECASE),
        "rubygems",
        lazy_compile(r"gem\s+[\"']([\w.-]+)[\"']\s*,\s*[\"']=?\s*([\w.]+)[\"']"),
    ),
    (
        lazy_compile(r"(?:^|/)Cargo\.toml$", re.IGNORECASE),
        "crates",
        lazy_compile(r"(?m)^\s*([\w-]+)\s*=\s*(?:\{[^}\n]*version\s*=\s*)?\"=?([\w.+-]+)\""),
    ),
    (
        lazy_compile(r"(?:^|/)go\.mod$", re.IGNORECASE),
        "go",
        lazy_compile(r"(?m)^\s*(?:require\s+)?([\w.-]+\.[\w.-]+/[\w./-]+)\s+(v[\w.+-]+)"),
    ),
)


def manifest_class(path: str) -> bool:
    """Whether ``path`` is a dependency file this module reads."""
    return any(pattern.search(path) for pattern, _, _ in _MANIFESTS)


def manifest_hits(path: str, text: str) -> list[str]:
    """``ecosystem:name@version (MAL-...)`` for every malicious pin the new text names."""
    hits: list[str] = []
    for pattern, ecosystem, pin in _MANIFESTS:
        if pattern.search(path):
            for match in pin.finditer(text[:200_000]):
                version = match.group(2)
                advisory = malicious(
                    ecosystem, match.group(1), version.lstrip("v") if ecosystem != "go" else version
                )
                if advisory:
                    hits.append(f"{ecosystem}:{match.group(1)}@{version} ({advisory})")
    return hits


COMMAND_READERS: tuple[CommandReader, ...] = ((installs, install_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
