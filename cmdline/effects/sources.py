"""Code installed from outside a package manager's official, verified channel, spelled as an
install rather than a config change: system package managers told to skip signature checks,
Homebrew taps (named, from a remote of their own) and formula files, conda channels, PPAs and
repositories added to the system manager, editor extensions side-loaded from a
file or URL, and the public index added *next to* a configured one (dependency confusion).

Each is the same technique for every tool that has it: the install still looks routine, but who
vouches for the code has changed. The effects reuse the kinds ``ask-before-trust-changes`` reads
(``tls-off``: verification off; ``registry``: a source other than the trusted registries), so
one rule judges the flag, the environment variable and the config-file spelling alike.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from dsh_policy.cmdline.effects.model import Effect, Handler
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.web_requests import shell_web_requests

__all__ = ["SOURCE_HANDLERS", "downloaded_archive_runs", "downloaded_installs"]

_UNSIGNED_FLAGS = lazy_compile(
    r"^(?:--allow-unauthenticated|--allow-insecure-repositories|--allow-downgrades-unauthenticated"
    r"|--force-yes|--nogpgcheck|--no-gpgcheck|--no-gpg-checks?|--nosignature|--nodigest"
    r"|--no-check-signature|--skip-signature-check|--allow-untrusted|--allowuntrusted"
    r"|--force-bad-verify|--insecure|--dangerous)$"
)
"""System package managers' switches that install what no trusted key signed (apt, apt-get,
dnf, yum, microdnf, zypper, rpm, dpkg, apk, pacman's and opkg's spellings; snap's
``--dangerous``)."""

_UNSIGNED_SETTINGS = lazy_compile(
    r"(?i)^(?:APT::Get::AllowUnauthenticated|Acquire::AllowInsecureRepositories"
    r"|Acquire::AllowDowngradeToInsecureRepositories|APT::Get::AllowInsecureRepositories"
    r"|Acquire::Check-Valid-Until)=(?:1|true|yes)$"
    r"|^(?:gpgcheck|repo_gpgcheck|localpkg_gpgcheck|sslverify)=(?:0|false|no)$"
    r"|^SigLevel=Never$"
)
"""The same switches given as settings (``apt -o Key=true``, ``dnf --setopt=gpgcheck=0``)."""

_SYSTEM_MANAGERS = (
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "microdnf",
    "zypper",
    "rpm",
    "dpkg",
    "apk",
    "pacman",
    "opkg",
    "tdnf",
    "snap",
    "yum-config-manager",  # probe26: `--setopt=gpgcheck=0 --save` writes the switch for every install
)


def _unsigned_install(argv: list[str]) -> Iterator[Effect]:
    for i, arg in enumerate(argv[1:], start=1):
        setting = ""
        if arg in ("-o", "--option", "--setopt") and i + 1 < len(argv):
            setting = argv[i + 1]
        elif arg.startswith("--setopt=") or arg.startswith("--option="):
            setting = arg.partition("=")[2]
        elif arg.startswith("-o") and len(arg) > 2 and arg[2] != "-":
            setting = arg[2:]
        key, _, value = setting.partition("=")
        if "::" not in key:
            key = key.rsplit(".", 1)[-1]  # dnf's per-repository form: --setopt=myrepo.gpgcheck=0
        setting = f"{key}={value}" if setting else ""
        if _UNSIGNED_FLAGS.match(arg) or (setting and _UNSIGNED_SETTINGS.match(setting)):
            yield _fx("tls-off", f"{argv[0]} installs packages without checking their signatures", arg)
            return


def _brew(argv: list[str]) -> Iterator[Effect]:
    """A tap given its own remote, a formula installed from a file or URL, and every tap a line
    names (``brew tap user/repo``, ``brew install user/repo/formula``, which taps it first): a
    tap's formulae are Ruby that runs at install, published by whoever owns that account's
    ``homebrew-repo``. Kind ``source``, target ``brew:user/repo`` in lower case (brew's own
    comparison); the rule asks unless the pack trusts it (Homebrew's own, vendors' official taps)."""
    words = _words(argv)
    if not words:
        return
    verb, rest = words[0], words[1:]
    if verb == "tap" and len(rest) > 1:
        yield _fx("registry", f"brew taps {rest[0]} from a remote of its own choosing", rest[1])
    elif verb == "tap" and rest and rest[0].count("/") == 1:
        yield _fx("source", f"brew taps {rest[0]}", f"brew:{rest[0].lower()}")
    elif verb in ("install", "reinstall", "upgrade", "fetch"):
        for name in rest:
            if "://" in name or name.endswith(".rb"):
                yield _fx("registry", "brew installs a formula from a file or URL", name)
            elif name.count("/") == 2:
                tap = name.rsplit("/", 1)[0]
                yield _fx("source", f"brew installs {name} from the tap {tap}", f"brew:{tap.lower()}")


def _conda_channels(argv: list[str]) -> Iterator[Effect]:
    """``conda``/``mamba``/``micromamba`` ``install``/``create``/``update`` with ``-c``/``--channel``:
    a channel name is an anaconda.org account anyone can register (``conda:NAME``); a channel URL
    is a registry like any other index."""
    words = _words(argv)
    if not words or words[0] not in ("install", "create", "update", "upgrade"):
        return
    for i, arg in enumerate(argv):
        value = ""
        if arg in ("-c", "--channel") and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--channel="):
            value = arg.partition("=")[2]
        if "://" in value:
            yield _fx("registry", f"{argv[0]} installs from the channel {value}", value)
        elif value:
            yield _fx("source", f"{argv[0]} installs from the channel {value}", f"conda:{value.lower()}")


def _system_repositories(argv: list[str]) -> Iterator[Effect]:
    """Package repositories added to the system manager: a PPA (``add-apt-repository
    ppa:user/name``, ``source`` kind, ``ppa:user/name``), or a repository URL (``add-apt-repository
    "deb URL ..."``, ``dnf config-manager --add-repo URL``, ``zypper addrepo URL``, ``flatpak
    remote-add NAME URL``: ``registry`` kind, judged by host like any index)."""
    words = _words(argv)
    if argv[0] in ("add-apt-repository", "apt-add-repository"):
        for word in words:
            if word.lower().startswith("ppa:"):
                yield _fx("source", f"adds the PPA {word}", word.lower())
            elif match := re.search(r"\b[a-z][a-z0-9+.-]*://\S+", word):
                yield _fx("registry", "adds an apt repository", match.group(0))
        return
    if argv[0] == "apt-key":
        # probe22: a key file trusted for every apt source (apt-key add FILE); a key piped in from
        # a download is judged by the download's host like any repository
        if words[:1] == ["add"] and words[1:2] and words[1] != "-":
            yield _fx("source", "apt-key trusts a signing key for every repository", f"apt-key:{words[1]}")
        return
    urls = [w for w in words if "://" in w]
    adding = (
        (argv[0] in ("dnf", "yum") and "config-manager" in words and "--add-repo" in argv)
        or (argv[0] == "zypper" and words[:1] in (["addrepo"], ["ar"]))
        or (argv[0] == "flatpak" and words[:1] == ["remote-add"])
    )
    if adding:
        for url in urls:
            yield _fx("registry", f"{argv[0]} adds a package repository", url)


_EDITORS = (
    "code",
    "code-insiders",
    "codium",
    "vscodium",
    "cursor",
    "windsurf",
    "positron",
    "code-oss",
    "void",
    "trae",
    "kiro",
)


def _editor_extension(argv: list[str]) -> Iterator[Effect]:
    for i, arg in enumerate(argv):
        value = ""
        if arg == "--install-extension" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--install-extension="):
            value = arg.partition("=")[2]
        # a marketplace id is publisher.name[@version]; anything with a path or a scheme is a file
        if value and ("/" in value or "\\" in value or value.lower().endswith(".vsix")):
            yield _fx(
                "registry",
                f"{argv[0]} side-loads an editor extension from outside the marketplace",
                value if "://" in value else f"file {value}",
            )


_PUBLIC_INDEXES = frozenset({"pypi.org", "pypi.python.org", "registry.npmjs.org"})


def _public_extra_index(argv: list[str]) -> Iterator[Effect]:
    value = _value(argv, "--extra-index-url")
    if value and urlsplit(value).hostname in _PUBLIC_INDEXES:
        # an extra index is merged with the configured one and the highest version wins, so the
        # public index next to a private one lets anyone publish an internal name
        yield _fx(
            "registry",
            "adds the public index next to the configured one (dependency confusion)",
            f"{urlsplit(value).hostname} as an extra index",
        )


SOURCE_HANDLERS: dict[str, tuple[Handler, ...]] = {
    **{name: (_unsigned_install,) for name in _SYSTEM_MANAGERS},
    **{name: (_unsigned_install, _system_repositories) for name in ("dnf", "yum", "zypper")},
    **{
        name: (_system_repositories,)
        for name in ("add-apt-repository", "apt-add-repository", "flatpak", "apt-key")
    },
    **{name: (_conda_channels,) for name in ("conda", "mamba", "micromamba")},
    "brew": (_brew,),
    **{name: (_editor_extension,) for name in _EDITORS},
    **{name: (_public_extra_index,) for name in ("pip", "pip3", "uv", "pipx")},
}
"""The readers by program name (argv[0] basename)."""


_OFFICIAL_INDEX_HOSTS = frozenset(
    {"pypi.org", "pypi.python.org", "files.pythonhosted.org", "download.pytorch.org", "rubygems.org"}
)
"""The public indexes and the one vendor index projects name in their dependency files as
documented (PyTorch's wheels); any other host in a dependency file is a source to vet."""

_INDEX_LINE = lazy_compile(
    r"(?i)^\s*(--extra-index-url|--index-url|-i|--find-links|-f|extra-index-url|index-url"
    r"|extra_index_url|index_url|find-links|url|source)\s*[=\s]\s*\[?\s*[\"']?([^\s\"',\]]+)"
)
"""An index named in a requirements file (pip's option lines), a ``pyproject.toml`` (uv's,
poetry's and pdm's index and source tables, whose ``url =`` key counts only inside them) or a
Gemfile (``source``)."""

_INDEX_TABLE = lazy_compile(r"(?i)^\s*\[\[?[^\]]*(?:index|source)[^\]]*\]")
_ANY_TABLE = lazy_compile(r"^\s*\[")


def dependency_file_index_swap(text: str) -> bool:
    """Whether a dependency file names an index a plain install would not use: a host other than
    the official ones, or the public index as an *extra* index (dependency confusion)."""
    in_index_table = False
    for line in text[:200_000].splitlines():
        if _ANY_TABLE.match(line):
            in_index_table = bool(_INDEX_TABLE.match(line))
            continue
        match = _INDEX_LINE.match(line)
        if not match:
            continue
        option, value = match.group(1).lower(), match.group(2)
        if option == "url" and not in_index_table:
            continue
        host = urlsplit(value).hostname if "://" in value else None
        if option in ("url", "source") and host is None:
            continue  # a Gemfile's `source :rubygems`, a table's other keys
        if host is None or host not in _OFFICIAL_INDEX_HOSTS:
            return True  # a local folder, a bare host or another index
        if "extra" in option and host in _PUBLIC_INDEXES:
            return True
    return False


# ----------------------------------------------------------------- downloaded, then installed
_PACKAGE_FILE = lazy_compile(r"(?i)\.(?:tgz|tar\.gz|tar\.bz2|zip|whl|gem|vsix|nupkg|crate|egg)$")
_LOCAL_INSTALLERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun"), frozenset({"install", "i", "add", "ci"})),
    **dict.fromkeys(("pip", "pip3", "pipx", "uv"), frozenset({"install", "add"})),
    "gem": frozenset({"install"}),
}


def _fetched_files(line: str) -> dict[str, str]:
    """File basename -> URL for what the line's web clients save (the web-request reader's
    ``writes``, ``shell.web_requests``)."""
    return {
        posixpath.basename(written): request["url"]
        for request in shell_web_requests(line)
        if request["url"]
        for written in request["writes"]
        if written != "-"
    }


_ARCHIVE = lazy_compile(r"(?i)\.(?:tar(?:\.(?:gz|bz2|xz|zst))?|tgz|tbz2?|txz|zip|7z)$")
_EXTRACTORS = {"tar": None, "bsdtar": None, "gtar": None, "unzip": None, "7z": "x", "7za": "x"}
_RUN_HERE = lazy_compile(r"(?:^|[;&|(]|&&|\|\|)\s*(?:nohup\s+|exec\s+)?\./([\w][\w.+-]*)(?![\w.+-]*/)")


def downloaded_archive_runs(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """An archive one command of the line downloads, another unpacks, and a program from the
    current folder the line then runs (``curl -LO URL/x.tgz && tar xzf x.tgz && ./x``): the
    ZombAI download of a release archive whose program the hijacked agent starts. The program
    ran is the archive's, so it is judged as code from the URL (``source``), as an install from
    it would be. A program the project builds or already holds is not downloaded by the line."""
    if "./" not in line:
        return
    fetched = {name: url for name, url in _fetched_files(line).items() if _ARCHIVE.search(name)}
    if not fetched:
        return
    unpacked: list[str] = []
    for argv in commands:
        if argv[0] in _EXTRACTORS:
            words = _words(argv)
            verb = _EXTRACTORS[argv[0]]
            if verb is not None and words[:1] != [verb]:
                continue
            unpacked.extend(fetched[w.rsplit("/", 1)[-1]] for w in words if w.rsplit("/", 1)[-1] in fetched)
            # tar's archive also arrives bundled with -f (`-xzf x.tgz`)
            unpacked.extend(
                fetched[argv[i + 1].rsplit("/", 1)[-1]]
                for i, a in enumerate(argv[:-1])
                if re.match(r"^-[a-zA-Z]*f$", a) and argv[i + 1].rsplit("/", 1)[-1] in fetched
            )
    if not unpacked:
        return
    ran = [m.group(1) for m in _RUN_HERE.finditer(line)]
    if ran:
        what = f"runs ./{ran[0]}, unpacked from an archive downloaded from {unpacked[0]}"
        yield _fx("source", what, unpacked[0])


def downloaded_installs(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """A package file one command of the line downloads and another installs is installed from
    the URL it came from (``curl -o x.tgz URL && npm i ./x.tgz``; ``wget URL.whl && pip install
    x.whl``): judged as the registry it names, as ``npm i URL`` is. A file the line did not fetch
    (a ``dist/`` wheel, ``npm pack``'s tarball) is the project's own build. What each client
    saves, and where, is the web-request reader's answer (``shell.web_requests``)."""
    if not any(argv[0] in _LOCAL_INSTALLERS for argv in commands):
        return
    fetched = _fetched_files(line)
    if not fetched:
        return
    for argv in commands:
        verbs = _LOCAL_INSTALLERS.get(argv[0])
        if verbs is None:
            continue
        words = _words(argv)
        if argv[0] == "uv" and words[:1] == ["pip"]:
            words = words[1:]
        if not words or words[0] not in verbs:
            continue
        for operand in words[1:]:
            base = operand.rsplit("/", 1)[-1]
            if _PACKAGE_FILE.search(base) and base in fetched:
                yield _fx("registry", f"installs {base}, downloaded from {fetched[base]}", fetched[base])
