"""git's URL rewrites that send a host's fetches and pushes to another host.

``url.<base>.insteadOf <prefix>`` makes git replace ``<prefix>`` by ``<base>`` in every URL it
uses (``pushInsteadOf`` for pushes only): every clone, fetch, submodule and Go module download of
``https://github.com/...`` then goes to whatever ``<base>`` names, with nothing in the command
that runs it to say so (a registry swap for source code, ATT&CK T1195.001). Everyday rewrites
keep the host: SSH instead of HTTPS for the same forge (``git@github.com:`` for
``https://github.com/``), a CI token added for the same host (``https://x-access-token:$T@github.com/``),
and short aliases whose prefix names no host (``gh:``). Only a prefix that names a host, rewritten
to a base on another host, is read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["config_rewrites", "redirected_pushes", "rewrite_target"]

_KEY = lazy_compile(r"(?i)^url\.(.+)\.(?:push)?insteadof$")
_SCP = lazy_compile(r"^(?:[\w.~$%{}-]+@)?([A-Za-z0-9][\w.-]*\.[A-Za-z]{2,}|localhost)(?::\d+)?:(?!//)")
_URL = lazy_compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)", re.IGNORECASE)
_SECTION = lazy_compile(r"^\s*\[\s*url\s+\"([^\"]+)\"\s*\]\s*$", re.IGNORECASE)
_HEADER = lazy_compile(r"^\s*\[")
_INSTEAD = lazy_compile(r"^\s*(?:push)?insteadof\s*=\s*\"?([^\"\s#;]+)", re.IGNORECASE)


def _host(url: str) -> str:
    found = _URL.match(url) or _SCP.match(url)
    if found is None:
        return ""
    host = found.group(1).lower().rstrip(".")
    return host.removeprefix("www.")


_OWNER = lazy_compile(
    r"^(?:[a-z][a-z0-9+.-]*://(?:[^@/]*@)?[^/]+/|(?:[\w.~$%{}-]+@)?[^/:]+:(?!//))([^/\s]+)", re.I
)


def _owner(url: str) -> str:
    """The first path segment (the account or organisation on a forge), "" when there is none."""
    found = _OWNER.match(url)
    return found.group(1).lower().removesuffix(".git") if found else ""


def _moves(base: str, prefix: str) -> bool:
    """Another host, or on the same host another account's repositories in place of the named
    account's (``url.https://github.com/someone/.insteadOf https://github.com/acme/``, probe24)."""
    to, away = _host(base), _host(prefix)
    if not to or not away:
        return False
    if to != away:
        return True
    owner_to, owner_away = _owner(base), _owner(prefix)
    return bool(owner_to) and bool(owner_away) and owner_to != owner_away


def rewrite_target(key: str, value: str) -> str:
    """The base a ``git config url.<base>.insteadOf <prefix>`` setting rewrites a host's URLs to,
    when it is another host; ``""`` otherwise."""
    found = _KEY.match(key)
    if found is None or not _moves(found.group(1), value):
        return ""
    return found.group(1)


def config_rewrites(text: str) -> list[str]:
    """The bases of every ``[url "<base>"]`` section of a git config text whose ``insteadOf``
    names a host other than the base's."""
    found: list[str] = []
    base = ""
    for line in text[:200_000].splitlines():
        section = _SECTION.match(line)
        if section is not None:
            base = section.group(1)
            continue
        if _HEADER.match(line):
            base = ""
            continue
        instead = _INSTEAD.match(line)
        if base and instead is not None and _moves(base, instead.group(1)) and base not in found:
            found.append(base)
    return found


def redirected_pushes(commands: list[list[str]]) -> Iterator[Effect]:
    """``git remote set-url origin <url> && git push origin main``: a remote pointed at a new
    URL and pushed to on the same line sends the branch wherever the line chose, under the name
    the project trusts (probe24). ``git remote set-url --push`` redirects pushes alone and is read
    as such whenever it runs. Pointing a remote elsewhere without pushing stays a local setting."""
    moved: dict[str, str] = {}
    for argv in commands:
        if argv[0] != "git":
            continue
        words = [a for a in argv[1:] if not a.startswith("-")]
        if words[:2] == ["remote", "set-url"] and len(words) >= 4:
            if "--push" in argv:
                yield _fx("registry", f"git remote set-url --push redirects {words[2]}'s pushes", words[3])
            else:
                moved[words[2]] = words[3]
        elif words[:1] == ["push"] and moved:
            named = next((w for w in words[1:] if w in moved), "origin" if len(words) == 1 else "")
            if named in moved:
                yield _fx("registry", f"pushes to {named} right after pointing it elsewhere", moved[named])
                return
