"""Look-alike package names: an install whose name is a near miss of a most-used package's name
and is not itself an established package (typosquatting and combosquatting, ATT&CK T1195.001).

Squatters publish names one slip away from a popular one (``colourama`` for ``colorama``,
``jeIlyfish`` with a capital I for ``jellyfish``, ``crossenv`` for ``cross-env``) or the popular
name dressed in an ecosystem's customary affix (``python-requests``, ``lodash-js``). The data is
the shipped list of the most-used names per ecosystem (``popular_packages.json``, rebuilt by
``tools/update_popular_packages.py`` from public download rankings); the head of each list is what
gets imitated, the whole list is what is established. A name on the list is never a look-alike,
however close it is to another (``request`` and ``requests`` are both real).

Go installs by repository path (``go install github.com/owner/repo/cmd/x@latest``), so there the
squatter spells the *owner*: a module whose owner is not on the list but imitates a listed owner
that publishes a module of that name (``github.com/spf13-cobra/cobra-cli`` for
``github.com/spf13/cobra``, ``github.com/boltdb-go/bolt``). Go has no download ranking; its list
is avelino/awesome-go's curated modules, all of which count as established.

Read lazily: the list is parsed on the first install command that names a package, never at
policy load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.package_runners import runner_specs
from dsh_policy.cmdline.effects.packages import install_specs, installs, malicious, normalize
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "DATA", "lookalike_acts", "near_miss", "runner_lookalike_acts", "snapshot"]

DATA = Path(__file__).with_name("popular_packages.json")

TARGETS = 5000
"""How many of each list's most-used names count as worth imitating."""

MIN_LENGTH = 5
"""Shorter popular names (``ms``, ``rc``, ``six``) are one edit from thousands of real packages."""

MIN_EDITED_LENGTH = 6
"""One letter away is judged only against names this long: five-letter names sit one edit from
many real ones (``color``/``colour``, ``clone``/``cline``)."""

_SEPARATORS = lazy_compile(r"[-_.]+")
_AFFIXES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pypi": (
        ("python3-", "python-", "py-", "pypi-", "py"),
        ("-python3", "-python", "-py3", "-py", "-lib", "-pkg"),
    ),
    "npm": (
        ("nodejs-", "node-", "npm-", "js-"),
        ("-nodejs", "-node", "-js", ".js", "js", "-npm", "-lib", "-pkg"),
    ),
}
"""Prefixes and suffixes an ecosystem's own names customarily carry, so the popular name wearing
one reads as the real thing to a person or a model (``python-dateutil`` is real; ``python-requests``
is not)."""

_HOMOGLYPHS = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"))
"""Letter runs that render like another letter in a terminal or a chat font."""

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_."


@dataclass(frozen=True)
class _Lists:
    known: frozenset[str]
    scopes: frozenset[str]
    """npm scopes of listed names: only the organisation that owns one publishes under it."""
    targets: dict[str, int]
    """The imitated head, each with its rank (0 is the most used)."""
    skeletons: dict[str, str]


@cache
def _header() -> dict[str, str]:
    try:
        with DATA.open(encoding="utf-8") as handle:
            header: dict[str, str] = json.loads(handle.readline())
    except (FileNotFoundError, ValueError):
        return {}
    return header


def snapshot() -> str:
    """The list's identity (``source@date``), ``""`` when no list is installed."""
    header = _header()
    return f"{header.get('source', '')}@{header.get('snapshot', '')}" if header.get("snapshot") else ""


@cache
def _lists() -> dict[str, _Lists]:
    """Per ecosystem: every listed name, the imitated head, and the head by skeleton."""
    try:
        lines = DATA.read_text(encoding="utf-8").splitlines()[1:]
    except FileNotFoundError:
        return {}
    lists: dict[str, _Lists] = {}
    for line in lines:
        if not line.strip():
            continue
        document = json.loads(line)
        names: list[str] = document["names"]
        head = [n for n in names[:TARGETS] if len(n) >= MIN_LENGTH]
        lists[document["ecosystem"]] = _Lists(
            frozenset(names),
            frozenset(n.partition("/")[0] for n in names if n.startswith("@")),
            {n: rank for rank, n in enumerate(head)},
            {_skeleton(n): n for n in reversed(head)},
        )
    return lists


def _bare(name: str) -> str:
    return name.rpartition("/")[2]


def _skeleton(name: str) -> str:
    """The name without separators: ``cross-env``, ``cross_env`` and ``crossenv`` look alike."""
    return _SEPARATORS.sub("", name)


def _edits(name: str) -> set[str]:
    """Every name one deletion, insertion, substitution or swap of neighbours away."""
    splits = [(name[:i], name[i:]) for i in range(len(name) + 1)]
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in _ALPHABET}
    edits |= {a + c + b for a, b in splits for c in _ALPHABET}
    edits.discard(name)
    return edits


def _unglyphed(raw: str) -> set[str]:
    """The name with look-alike glyphs read as what they imitate; a capital I inside a
    lower-case name is an l (``jeIlyfish``)."""
    variants = {raw.replace("I", "l")} if "I" in raw and raw != raw.upper() else set()
    lowered = raw.lower()
    for glyph, letter in _HOMOGLYPHS:
        if glyph in lowered:
            variants.add(lowered.replace(glyph, letter))
    return variants


def _affixes_removed(ecosystem: str, name: str) -> set[str]:
    prefixes, suffixes = _AFFIXES.get(ecosystem, ((), ()))
    stripped = {name[len(p) :] for p in prefixes if name.startswith(p)}
    stripped |= {name[: -len(s)] for s in suffixes if name.endswith(s)}
    return {s.strip("-_.") for s in stripped if s}


@cache
def _go_owners() -> dict[str, frozenset[str]]:
    """``host/owner`` of every listed Go module, with the repository names listed under it."""
    lists = _lists().get("go")
    owners: dict[str, set[str]] = {}
    for module in lists.known if lists is not None else ():
        host, owner, repo = [*module.split("/"), "", ""][:3]
        owners.setdefault(f"{host}/{owner}", set()).add(repo)
    return {owner: frozenset(repos) for owner, repos in owners.items()}


@cache
def _go_skeletons() -> dict[str, str]:
    """Listed owners by their name without separators (``gin_gonic`` and ``gingonic`` read as
    ``gin-gonic``)."""
    return {_skeleton(owner.partition("/")[2]): owner.partition("/")[2] for owner in _go_owners()}


def _owner_variants(owner: str) -> Iterator[tuple[str, str]]:
    """The owners ``owner`` may imitate: with one word joined by a separator removed
    (``spf13-cobra``, ``boltdb-go``), with its separators changed, with look-alike glyphs read
    as letters, and one letter away (owners of six letters and more)."""
    for separator in "-_.":
        if separator in owner:
            yield owner.rpartition(separator)[0], "the owner with a word added"
            yield owner.partition(separator)[2], "the owner with a word added"
    for variant in _unglyphed(owner):
        yield variant, "look-alike letters"
    if (same := _go_skeletons().get(_skeleton(owner.lower()), "")) and same != owner.lower():
        yield same, "separators changed"
    if len(owner) >= MIN_EDITED_LENGTH:
        for edited in _edits(owner):
            yield edited, "one letter away"


def _go_near_miss(module: str) -> tuple[str, str]:
    """A Go module whose owner is not an established one but imitates one that publishes a
    module of the same name (``github.com/spf13-cobra/cobra-cli`` for ``github.com/spf13/cobra``):
    Go installs by repository path, so the owner is what a squatter spells."""
    host, owner, repo = [*module.split("/"), "", ""][:3]
    owners = _go_owners()
    raw_owner, owner, repo = owner, owner.lower(), repo.lower()
    if not repo or f"{host}/{owner}" in owners:
        return "", ""
    for variant, how in _owner_variants(raw_owner):
        candidate = variant.lower()
        repos = owners.get(f"{host}/{candidate}") if candidate and candidate != owner else None
        for listed in sorted(repos or ()):
            if repo == listed or repo.startswith(listed + "-"):
                return f"{host}/{candidate}/{listed}", how
    return "", ""


def near_miss(ecosystem: str, raw_name: str) -> tuple[str, str]:
    """The popular name ``raw_name`` imitates and how (``""`` twice when it imitates none): a
    listed name is established and never a look-alike."""
    if ecosystem == "go":
        return _go_near_miss(raw_name)
    lists = _lists().get(ecosystem)
    if lists is None:
        return "", ""
    name = normalize(ecosystem, raw_name)
    if name in lists.known or len(_bare(name)) < MIN_LENGTH - 1 or name.partition("/")[0] in lists.scopes:
        return "", ""
    for variant in _unglyphed(raw_name):
        if (target := normalize(ecosystem, variant)) in lists.targets:
            return target, "look-alike letters"
    if (target := lists.skeletons.get(_skeleton(name), "")) and target != name:
        return target, "separators changed"
    for stripped in _affixes_removed(ecosystem, name):
        if stripped in lists.targets:
            return stripped, "the name with an affix added"
    close = [n for n in _edits(name) if n in lists.targets and len(n) >= MIN_EDITED_LENGTH]
    if close:
        return min(close, key=lists.targets.__getitem__), "one letter away"
    return "", ""


def lookalike_acts(argv: list[str]) -> Iterator[Effect]:
    """The ``lookalike-package`` effects of one install command (argv[0] a basename); none for a
    package the malicious-package snapshot already refuses."""
    for ecosystem, name, version in install_specs(argv):
        yield from _lookalike("installs", ecosystem, name, version)


def _lookalike(verb: str, ecosystem: str, name: str, version: str | None) -> Iterator[Effect]:
    """The ``lookalike-package`` effect of one package a command ``verb``s (installs or runs),
    unless the malicious-package snapshot already refuses it."""
    if malicious(ecosystem, name, version):
        return
    target, how = near_miss(ecosystem, name)
    if target:
        yield _fx(
            "lookalike-package",
            f"{verb} {name}, a look-alike of the popular {ecosystem} package {target} ({how})",
            f"{ecosystem}:{normalize(ecosystem, name)}",
        )


_RUNNER_NAMES = {
    "npm": lazy_compile(r"@[\w.-]+/[\w.-]+|[\w.-]+"),
    "pypi": lazy_compile(r"[A-Za-z0-9][\w.-]*"),
}
"""The package name at the start of a runner's operand, per ecosystem."""


def runner_lookalike_acts(line: str) -> Iterator[Effect]:
    """The ``lookalike-package`` effects of the package runners on one line (``npx pkg``, ``uvx
    pkg``: they fetch and run the package in one step, and the shell reader folds the package
    into the command it runs, so they are read from the line by :func:`.runner_specs`)."""
    for ecosystem, spec in runner_specs(line):
        name = _RUNNER_NAMES[ecosystem].match(spec)
        if name:
            yield from _lookalike("runs", ecosystem, name.group(0), None)


COMMAND_READERS: tuple[CommandReader, ...] = ((installs, lookalike_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
