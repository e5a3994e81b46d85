"""Installs that take code from outside the package registry: a git repository, a code host's
archive or any other URL, named on an install command line or in a dependency file that the next
install reads (ATT&CK T1195.001).

A registry install gets a published, immutable release that the registry's malware scanning and the
advisory databases cover. An install from a repository gets whatever a branch holds today, from
whoever controls that account, and runs its install-time code (npm lifecycle scripts, setup.py,
build.rs, a gemspec) as the user. That is one effect, whichever package manager spells it:
``npm install github:user/repo``, ``pip install git+https://host/user/repo``, ``uv add``/``poetry
add``/``pipx install`` of a ``git+`` URL, ``cargo install --git``, ``bundle add --git``/``--github``,
``gem specific_install``, a package runner given a repository (``npx github:user/repo``, ``uvx
--from git+...``), or the same source written into package.json, requirements, pyproject.toml,
Cargo.toml, a Gemfile or go.mod.

The effect is ``source`` with target ``git:HOST/OWNER/REPO`` (lower case) for a repository or a
code host's archive, so ``ask-before-trust-changes`` judges it against the pack's
``trusted_sources`` globs (``git:github.com/huggingface/*``); an archive URL on any other host is a
``registry`` effect judged by host, like an index. Local paths (``./lib``, ``file:``, ``-e .``)
and registry names are no effect. Go's installs are not read here: ``go install``/``go get``
fetch a module path through the Go module proxy and checksum database, which is Go's registry
(its look-alike owners are :mod:`.lookalikes`'); a ``replace`` that swaps a module for another
owner's (``go mod edit -replace``, a go.mod ``replace`` line) is read, as that owner's repository.

Readers: :func:`code_source` (one install operand), :func:`install_source_acts` (one command's
argv, for ``shell.acts``) and :func:`dependency_installs` (the install lines a dependency file's new
text implies, for the implied shell calls of ``later_commands``). Lexical: nothing is resolved.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.package_runners import runner_specs
from dsh_policy.cmdline.effects.packages import PIP_VALUE_OPTIONS
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import operands

__all__ = [
    "COMMAND_READERS",
    "code_source",
    "dependency_installs",
    "install_source_acts",
    "runner_source_acts",
]

_SHORTHAND_HOSTS = {
    "github": "github.com",
    "gitlab": "gitlab.com",
    "bitbucket": "bitbucket.org",
    "gist": "gist.github.com",
}
"""npm's hosted-git shorthands (``github:user/repo``)."""

_CODE_HOSTS = {
    "github.com": "github.com",
    "www.github.com": "github.com",
    "codeload.github.com": "github.com",
    "gist.github.com": "gist.github.com",
    "gitlab.com": "gitlab.com",
    "bitbucket.org": "bitbucket.org",
    "codeberg.org": "codeberg.org",
}
"""Hosts whose URLs name a repository as their first two path segments (an archive of
``github.com/user/repo/archive/main.zip`` is that repository's code)."""

_VCS_PREFIX = lazy_compile(r"^(?:git|hg|svn|bzr)\+", re.I)
_ALIAS = lazy_compile(
    r"^(?:@[\w.-]+/)?[\w.-]+@(?=(?:git\+|git:|github:|gitlab:|bitbucket:|gist:|https?:|ssh:))"
)
"""npm's ``name@<source>`` (an alias or an explicit name for a git or URL spec)."""
_DIRECT_REFERENCE = lazy_compile(r"^[A-Za-z0-9][\w.-]*(?:\[[^\]]*\])?\s*@\s*(\S+)$")
"""PEP 508's ``name @ URL`` (pip, uv, poetry, pdm, pyproject dependencies)."""
_SCP = lazy_compile(r"^[\w.-]+@([\w.-]+):(?!//)(\S+)$")
"""git's scp-like ``git@host:user/repo.git``."""
_NPM_SHORTHAND = lazy_compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:#\S*)?$")
"""npm's bare ``user/repo`` (a GitHub repository), as against a scoped name or a path."""
_ARCHIVE = lazy_compile(r"\.(?:tgz|tar|tar\.gz|tar\.bz2|zip|whl|gem|crate)$", re.I)


def _repository(host: str, path: str) -> str:
    """``git:HOST/OWNER/REPO`` from a host and a URL path (a ref, ``.git`` and the rest dropped)."""
    path = re.split(r"[#?]", path, maxsplit=1)[0]
    parts = [p for p in path.split("/") if p][:2]
    if parts:
        parts[-1] = re.sub(r"\.git$", "", parts[-1].split("@", 1)[0], flags=re.I)
    return "git:" + "/".join([host.lower(), *(p.lower() for p in parts if p)])


def code_source(spec: str, *, npm_shorthand: bool = False) -> tuple[str, str] | None:
    """``(kind, target)`` when one install operand names code outside the registry: ``("source",
    "git:host/owner/repo")`` for a repository or a code host's archive, ``("registry", URL)`` for
    an archive on any other host; ``None`` for a registry name, a local path or a ``file:`` URL.
    ``npm_shorthand``: read a bare ``user/repo`` as npm does (a GitHub repository)."""
    spec = spec.strip().strip("'\"")
    if not spec or spec.startswith(("file:", "link:", "workspace:", "portal:", "npm:", ".", "/", "~")):
        return None
    spec = _ALIAS.sub("", spec, count=1)
    direct = _DIRECT_REFERENCE.match(spec)
    if direct and ("://" in direct.group(1) or _VCS_PREFIX.match(direct.group(1))):
        spec = direct.group(1)
    scheme, colon, rest = spec.partition(":")
    if colon and scheme.lower() in _SHORTHAND_HOSTS and not rest.startswith("//"):
        return "source", _repository(_SHORTHAND_HOSTS[scheme.lower()], rest)
    vcs = bool(_VCS_PREFIX.match(spec))
    url = _VCS_PREFIX.sub("", spec, count=1)
    scp = _SCP.match(url)
    if scp and "://" not in url:
        return "source", _repository(scp.group(1), scp.group(2))
    if "://" not in url:
        if npm_shorthand and _NPM_SHORTHAND.match(spec) and not _ARCHIVE.search(spec):
            return "source", _repository("github.com", spec)
        return None
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:  # a malformed authority (an unclosed IPv6 bracket): a source to vet
        return "registry", url
    if parts.scheme.lower() == "file" or not host:
        return None
    if vcs or parts.scheme.lower() in ("git", "ssh", "git+ssh") or parts.path.lower().endswith(".git"):
        return "source", _repository(_CODE_HOSTS.get(host, host), parts.path)
    if host in _CODE_HOSTS:
        return "source", _repository(_CODE_HOSTS[host], parts.path)
    return "registry", url


# ----------------------------------------------------------------- install commands
_NPM_VERBS = frozenset(
    {"install", "i", "add", "isntall", "in", "ins", "inst", "insta", "instal", "update", "up"}
)
_NPM_VALUE_OPTIONS = frozenset(
    {"--registry", "--tag", "-w", "--workspace", "--filter", "-F", "--cwd", "--prefix", "-C", "--dir"}
)
_PY_VALUE_OPTIONS = PIP_VALUE_OPTIONS | frozenset(
    {"--from", "--spec", "--with", "--index", "--default-index", "--source", "-G", "-E", "--extras"}
)
_RUNNERS = frozenset({"npx", "bunx", "pnpx"})
_RUNNER_VERBS = {"npm": ("exec", "x"), "pnpm": ("dlx",), "yarn": ("dlx",), "bun": ("x",)}


def _npm(argv: list[str]) -> Iterator[str]:
    """Install operands of npm/pnpm/yarn/bun (``yarn global add``), and the package a runner
    (``npx``, ``npm exec``, ``pnpm dlx``) fetches: its first operand and ``--package`` values."""
    tool = argv[0]
    runner_verb = tool in _RUNNERS or (argv[1:2] and argv[1] in _RUNNER_VERBS.get(tool, ()))
    if runner_verb:
        start = 1 if tool in _RUNNERS else 2
        for i, arg in enumerate(argv[start:], start):
            if arg in ("-p", "--package") and i + 1 < len(argv):
                yield argv[i + 1]
            elif arg.startswith("--package="):
                yield arg.partition("=")[2]
        first = operands(argv[start:], frozenset({"-p", "--package", "-c", "--call"}))
        yield from first[:1]
        return
    verb = next((j for j, a in enumerate(argv[1:4], 1) if a in _NPM_VERBS), 0)
    if verb:
        yield from operands(argv[verb + 1 :], _NPM_VALUE_OPTIONS)


def _python_words(argv: list[str]) -> list[str] | None:
    """The words after the install verb of pip, ``python -m pip``, ``uv pip``/``uv add``/``uv
    tool install``, pipx, poetry and pdm; the package runners ``uvx``, ``uv tool run`` and ``pipx
    run`` count as installs (``--from``/``--spec`` name what they fetch)."""
    tool, words = argv[0], argv[1:]
    if tool.startswith("python") and words[:2] == ["-m", "pip"]:
        words = words[2:]
    elif tool == "uv" and words[:1] in (["pip"], ["tool"]):
        words = words[1:]
    if tool == "uvx" or (tool in ("uv", "pipx") and words[:1] == ["run"]):
        return ["install", *(words if tool == "uvx" else words[1:])]
    if words and words[0] in ("install", "add"):
        return words
    return None


def _python(argv: list[str]) -> Iterator[str]:
    words = _python_words(argv)
    if words is None:
        return
    for option in ("-e", "--editable", "--from", "--spec", "--with"):
        value = _value(words, option)
        if value is not None:
            yield value
    found = operands(words[1:], _PY_VALUE_OPTIONS)
    # ``name @ URL`` given as three words
    for i, word in enumerate(found):
        if word == "@" and 0 < i < len(found) - 1:
            yield f"{found[i - 1]} @ {found[i + 1]}"
        else:
            yield word


def _cargo(argv: list[str]) -> Iterator[str]:
    if argv[1:2] in (["install"], ["add"]):
        value = _value(argv, "--git")
        if value:
            yield "git+" + value if "://" in value else value


def _gem(argv: list[str]) -> Iterator[str]:
    """``gem specific_install URL`` (a plugin that builds a gem from a repository)."""
    if argv[1:2] == ["specific_install"]:
        yield from (
            w for w in operands(argv[2:], frozenset({"-l", "--location", "-b", "--branch"})) if "/" in w
        )
        value = _value(argv, "-l", "--location")
        if value:
            yield value


def _bundle(argv: list[str]) -> Iterator[str]:
    if argv[1:2] == ["add"]:
        git = _value(argv, "--git")
        if git:
            yield "git+" + git if "://" in git else git
        github = _value(argv, "--github")
        if github:
            yield f"github:{github}"


def _go_replace(argv: list[str]) -> Iterator[str]:
    """``go mod edit -replace=OLD=NEW[@v]``: the build takes NEW's code wherever OLD is imported.
    A local folder, the same module at another version and another module of the same owner are
    no new party; a module of another owner is a repository to vet (an ``https://`` spec)."""
    if argv[1:3] != ["mod", "edit"]:
        return
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "-replace" and i + 1 < len(argv) else ""
        value = arg.partition("=")[2] if arg.startswith("-replace=") else value
        old, _, new = value.partition("=")
        new_path = new.partition("@")[0]
        if not new_path or new_path.startswith((".", "/")) or "/" not in new_path:
            continue
        if new_path.split("/")[:2] != old.partition("@")[0].split("/")[:2]:
            yield "https://" + new_path


_READERS = {
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun", "npx", "bunx", "pnpx"), _npm),
    **dict.fromkeys(("pip", "pip3", "uv", "uvx", "poetry", "pipx", "pdm"), _python),
    "cargo": _cargo,
    "gem": _gem,
    **dict.fromkeys(("bundle", "bundler"), _bundle),
    "go": _go_replace,
}


def install_source_acts(argv: list[str]) -> Iterator[Effect]:
    """The ``source``/``registry`` effects of one install command (argv[0] a basename) that takes
    code from a repository or a URL instead of the registry."""
    reader = _READERS.get(argv[0]) or (_python if argv[0].startswith("python") else None)
    if reader is None or len(argv) < 2:
        return
    npm_like = reader is _npm
    for spec in reader(argv):
        found = code_source(spec, npm_shorthand=npm_like)
        if found is None:
            continue
        kind, target = found
        where = target.removeprefix("git:") if kind == "source" else target
        yield _fx(
            kind,
            f"{argv[0]} installs code from {where}, outside the package registry (its install code runs)",
            target,
        )


def runner_source_acts(line: str) -> Iterator[Effect]:
    """``npx github:user/repo``, ``pnpm dlx git+https://...``, ``uvx git+https://...``: a runner
    fetching a repository (the runners are :func:`.runner_specs`'; the shell reader folds the
    package into the program it runs, so the runner's own argv no longer shows it)."""
    if "/" not in line:
        return
    for ecosystem, spec in runner_specs(line):
        found = code_source(spec, npm_shorthand=ecosystem == "npm")
        if found is not None:
            kind, target = found
            where = target.removeprefix("git:") if kind == "source" else target
            yield _fx(
                kind,
                f"a package runner fetches and runs code from {where}, outside the package registry",
                target,
            )


# ----------------------------------------------------------------- dependency files
_DEPENDENCY_TABLES = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
"""package.json's dependency tables; ``overrides``, ``resolutions`` and ``pnpm.overrides`` swap a
dependency anywhere in the tree for another spec and are read the same way."""
_JSON_PAIR = lazy_compile(r'"(@?[\w./-]+)"\s*:\s*"((?:[^"\\\n]|\\.){0,2000})"')
_TABLE_OPENED = lazy_compile(
    r'"(?:dependencies|devDependencies|optionalDependencies|peerDependencies|overrides|resolutions)"\s*:\s*\{'
)
_ARCHIVE_URL = lazy_compile(r"(?i)^https?://[^\s\"]+\.(?:tgz|tar\.gz)(?:[?#][^\s\"]*)?$")
_PACKAGE_METADATA = frozenset(
    {
        "repository",
        "url",
        "homepage",
        "bugs",
        "funding",
        "author",
        "name",
        "description",
        "main",
        "types",
        "typings",
        "module",
        "browser",
        "bin",
        "man",
        "directories",
        "files",
        "license",
        "type",
        "$schema",
        "email",
        "registry",
    }
)
_REQUIREMENT_EDITABLE = lazy_compile(r"^(?:-e|--editable)[\s=]+(\S+)")
_PEP508_STRING = lazy_compile(r"[\"']([A-Za-z0-9][\w.-]*(?:\[[^\]\"']*\])?\s*@\s*[^\"'\s;]+)")
_INLINE_SOURCE = lazy_compile(r"(?m)^\s*([\w.-]+)\s*=\s*\{[^}\n]*?\b(git|url)\s*=\s*[\"']([^\"']+)[\"']")
_CARGO_GIT = lazy_compile(r"(?m)\bgit\s*=\s*\"([^\"]+)\"")
_GEM_SOURCE = lazy_compile(
    r"(?m)^\s*gem\s+[\"']([\w.-]+)[\"'][^\n]*?(?:\b|:)(git|github)(?::|\s*=>)\s*[\"']([^\"']+)[\"']"
)
_GO_REPLACE = lazy_compile(
    r"(?m)^\s*(?:replace\s+)?([\w.~-]+(?:/[\w.~-]+)+)(?:\s+v\S+)?\s+=>\s+([\w.~-]+(?:/[\w.~-]+)+)\s+(v\S+)"
)
_GEM_GIT_BLOCK = lazy_compile(r"(?m)^\s*(git|github)\s+[\"']([^\"']+)[\"']\s*(?:,|do\b)")


def _package_json(text: str) -> Iterator[str]:
    document = _json_document(text)
    if isinstance(document, dict):
        pnpm = document.get("pnpm")
        sections = [document.get(table) for table in _DEPENDENCY_TABLES]
        sections += [document.get("overrides"), document.get("resolutions")]
        sections += [pnpm.get("overrides")] if isinstance(pnpm, dict) else []
        for value in _strings(sections):
            if code_source(value, npm_shorthand=True):
                yield f"npm install {shlex.quote(value)}"
        return
    # a fragment (an edit's new text): repositories and package archives named explicitly, never
    # a metadata field or another URL (a publishConfig registry, a docs link: no dependency table
    # is shown around it; an archive URL, ``https://host/pkg-1.0.0.tgz``, under a dependency table
    # the fragment opens is a package)
    in_table = _TABLE_OPENED.search(text) is not None
    for key, value in _JSON_PAIR.findall(text):
        found = code_source(value)
        if (
            key not in _PACKAGE_METADATA
            and found is not None
            and (found[0] == "source" or (in_table and _ARCHIVE_URL.match(value)))
        ):
            yield f"npm install {shlex.quote(value)}"


def _strings(node: Any, depth: int = 0) -> Iterator[str]:
    """The string values of dependency tables and of overrides, which nest (npm's
    ``overrides: {"a": {"b": "spec"}}``); bounded in depth."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, (dict, list)) and depth < 8:
        for item in node.values() if isinstance(node, dict) else node:
            yield from _strings(item, depth + 1)


def _json_document(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _requirements(text: str) -> Iterator[str]:
    for raw in text.splitlines():
        line = re.sub(r"(?:^|\s)#.*$", "", raw).strip()
        editable = _REQUIREMENT_EDITABLE.match(line)
        spec = editable.group(1) if editable else line
        if spec and not spec.startswith("-") and code_source(spec):
            yield "pip install " + (f"-e {shlex.quote(spec)}" if editable else shlex.quote(spec))


def _pyproject(text: str) -> Iterator[str]:
    for match in _PEP508_STRING.finditer(text):
        if code_source(match.group(1)):
            yield f"pip install {shlex.quote(match.group(1))}"
    for match in _INLINE_SOURCE.finditer(text):
        url = match.group(3)
        spec = f"git+{url}" if match.group(2) == "git" and "://" in url else url
        if code_source(spec):
            yield f"pip install {shlex.quote(spec)}"


def _cargo_toml(text: str) -> Iterator[str]:
    for match in _CARGO_GIT.finditer(text):
        yield f"cargo add --git {shlex.quote(match.group(1))}"


def _gemfile(text: str) -> Iterator[str]:
    for match in _GEM_SOURCE.finditer(text):
        name, kind, where = match.groups()
        yield f"bundle add {shlex.quote(name)} --{kind} {shlex.quote(where)}"
    for match in _GEM_GIT_BLOCK.finditer(text):
        kind, where = match.groups()
        yield f"bundle add --{kind} {shlex.quote(where)}"


def _go_mod(text: str) -> Iterator[str]:
    """``replace OLD [v] => NEW v`` lines (alone or in a ``replace (...)`` block)."""
    for match in _GO_REPLACE.finditer(text):
        old, new, version = match.groups()
        yield f"go mod edit -replace={old}={new}@{version}"


# ----------------------------------------------------------------- lockfiles
_MAX_LOCK_LINES = 20
"""A lockfile names the same few hosts thousands of times: one install line per host or repository
is judged, at most this many (more distinct sources than that is itself worth a look: the rest are
judged as one line naming the first source past the cap)."""
_CRATES_IO_INDEX = "https://github.com/rust-lang/crates.io-index"
"""Cargo's own name for crates.io in Cargo.lock (``registry+`` this URL): the registry, not a
repository on GitHub."""
_NPM_RESOLVED = lazy_compile(r"\bresolved\"?\s*:?\s*\"([^\"\s]+)\"")
_PNPM_RESOLUTION = lazy_compile(r"\b(tarball|repo):\s*['\"]?([^\s,'\"}]+)")
_TOML_SOURCE = lazy_compile(r"\bsource\s*=\s*\{\s*(registry|git|url)\s*=\s*\"([^\"]+)\"")
_POETRY_BLOCK = lazy_compile(r"(?m)^\[package\.source\][ \t]*\n((?:[^\[\n][^\n]*\n?)*)")
_TOML_KEY = lazy_compile(r"(?m)^\s*(type|url)\s*=\s*\"([^\"]*)\"")
_CARGO_SOURCE = lazy_compile(r"\bsource\s*=\s*\"(registry|sparse|git)\+([^\"]+)\"")
_GEMFILE_LOCK_REMOTE = lazy_compile(r"(?m)^(GIT|GEM)\n\s+remote:\s*(\S+)")


def _lock_line(kind: str, url: str, ecosystem: str) -> str:
    """The install a lockfile's source implies: a repository (``git``), an index (``registry``)
    or an archive (``url``) of one ecosystem."""
    quoted = shlex.quote(url if kind != "git" or url.startswith("git+") or "://" not in url else "git+" + url)
    if ecosystem == "npm":
        return f"npm install {quoted}"
    if ecosystem == "pypi":
        return (
            f"pip install --index-url {shlex.quote(url)} -r requirements.txt"
            if kind == "registry"
            else f"pip install {quoted}"
        )
    if ecosystem == "crates":
        return (
            f"cargo add --git {shlex.quote(url)}"
            if kind == "git"
            else f"cargo install --index {shlex.quote(url)}"
        )
    return (
        f"bundle add --git {shlex.quote(url)}"
        if kind == "git"
        else f"gem install --source {shlex.quote(url)}"
    )


def _lock_sources(path: str, text: str) -> Iterator[tuple[str, str, str]]:
    """``(kind, url, ecosystem)`` for every source a lockfile names."""
    name = path.rsplit("/", 1)[-1]
    if name in ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock"):
        for url in _NPM_RESOLVED.findall(text):
            yield "url", url.split("#", 1)[0] if "://" in url and not url.startswith("git") else url, "npm"
    elif name == "pnpm-lock.yaml":
        for key, url in _PNPM_RESOLUTION.findall(text):
            yield ("git" if key == "repo" else "url"), url, "npm"
    elif name == "uv.lock":
        for kind, url in _TOML_SOURCE.findall(text):
            yield kind, url, "pypi"
    elif name == "poetry.lock":
        for block in _POETRY_BLOCK.findall(text):
            keys = dict(_TOML_KEY.findall(block))
            kind, url = keys.get("type", ""), keys.get("url", "")
            if url and kind != "directory":
                yield (
                    ("git" if kind == "git" else "url" if kind in ("url", "file") else "registry"),
                    url,
                    "pypi",
                )
    elif name == "Cargo.lock":
        for kind, url in _CARGO_SOURCE.findall(text):
            if url.split("?", 1)[0].rstrip("/") != _CRATES_IO_INDEX:
                yield ("git" if kind == "git" else "registry"), url.split("#", 1)[0], "crates"
    elif name == "Gemfile.lock":
        for section, url in _GEMFILE_LOCK_REMOTE.findall(text):
            yield ("git" if section == "GIT" else "registry"), url, "rubygems"


def _host(url: str) -> str:
    """A URL's host (the URL itself when it has none or is malformed)."""
    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


def _lockfile(path: str, text: str) -> Iterator[str]:
    """One install line per distinct host (an index, an archive) or repository a lockfile names."""
    seen: set[str] = set()
    for kind, url, ecosystem in _lock_sources(path, text):
        if url.startswith(("file:", ".", "/")):
            continue
        found = code_source(
            ("git+" + url) if kind == "git" and "://" in url and not url.startswith("git") else url
        )
        key = found[1] if found is not None and found[0] == "source" else _host(url)
        if key in seen:
            continue
        seen.add(key)
        yield _lock_line(kind, url, ecosystem)
        if len(seen) >= _MAX_LOCK_LINES:
            return


_LOCKFILE = lazy_compile(
    r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock"
    r"|Cargo\.lock|Gemfile\.lock)$"
)

_DEPENDENCY_FILES: tuple[tuple[re.Pattern[str], Any], ...] = (
    (lazy_compile(r"(?:^|/)package\.json$"), _package_json),
    (
        lazy_compile(
            r"(?:^|/)(?:requirements[\w.-]*\.(?:txt|in)|constraints\.txt)$|(?:^|/)requirements/+[\w.-]+\.(?:txt|in)$"
        ),
        _requirements,
    ),
    (lazy_compile(r"(?:^|/)pyproject\.toml$"), _pyproject),
    (lazy_compile(r"(?:^|/)Cargo\.toml$"), _cargo_toml),
    (lazy_compile(r"(?:^|/)Gemfile$"), _gemfile),
    (lazy_compile(r"(?:^|/)go\.mod$"), _go_mod),
)


def dependency_installs(path: str, text: str) -> list[str]:
    """The install command lines the next install of a dependency file at ``path`` runs for the
    sources in ``text`` that are not the registry (a git repository, an archive URL), so the write
    is judged like those installs; ``[]`` for registry-only text and for other files."""
    if _LOCKFILE.search(path):
        return list(_lockfile(path, text[:2_000_000]))
    for pattern, reader in _DEPENDENCY_FILES:
        if pattern.search(path):
            return list(dict.fromkeys(reader(text[:200_000])))
    return []


# ----------------------------------------------------------------- images and charts
_IMAGE_PROGRAMS = frozenset(
    {"docker", "podman", "nerdctl", "ctr", "crictl", "kubectl", "oc", "helm", "skopeo"}
)
# an image or chart reference whose registry is a bare IPv4 address (also after `--image=` or a
# container's `name=` in `kubectl set image`, and as an `oci://` URL); a CIDR (`IP/24`) names no image
_IP_IMAGE = lazy_compile(
    r"^(?:--image=|[\w.-]+=)?(?:oci://|docker://)?((?:[0-9]{1,3}\.){3}[0-9]{1,3})(:[0-9]{1,5})?(/\S*[A-Za-z]\S*)$"
)


# the ranges a team's own registry lives in: loopback, the RFC 1918 networks, link-local, shared
# (CGNAT) space; the documentation ranges stand for public hosts, as they do in every example
_LOCAL_NETWORKS = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
    )
)


def _public_address(text: str) -> bool:
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return not any(address in network for network in _LOCAL_NETWORKS)


def image_source_acts(argv: list[str]) -> Iterator[Effect]:
    """An image or a chart pulled from a registry that is a bare public IP address (``docker run
    203.0.113.9:5000/agent``, ``kubectl set image deploy/api api=IP/img``, ``helm install x
    oci://IP/charts/x``): code from a host no name vouches for, the way miners and botnets ship
    their images. A ``registry`` effect judged by host like an index, so a team's own listed
    registry stays allowed; names (``ghcr.io/...``), loopback and private addresses (a kind or
    minikube registry on the LAN) are no effect here."""
    if not argv or argv[0] not in _IMAGE_PROGRAMS:
        return
    for arg in argv[1:]:
        found = _IP_IMAGE.match(arg)
        if found is None or not _public_address(found.group(1)):
            continue
        host = found.group(1) + (found.group(2) or "")
        yield _fx(
            "registry",
            f"{argv[0]} takes an image or a chart from {host}, a bare IP address",
            f"https://{host}{found.group(3)}",
        )


COMMAND_READERS: tuple[CommandReader, ...] = (
    (lambda program: program in _READERS or program.startswith("python"), install_source_acts),
    (_IMAGE_PROGRAMS, image_source_acts),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
