"""Secrets harvested without naming a secret file, and data destroyed behind encryption: classes a
third blind probe (tests/corpus/probe3) found unread.

- ``secret-store`` for the **accounts' password hashes** read through a name service or a directory
  tool rather than a path (``getent shadow``/``gshadow``, ``unshadow``, macOS ``ShadowHashData``);
- ``secret-hunt`` for the **environment dumped and hunted**: a whole-environment dump (``env``,
  ``printenv``, ``set``, ``export -p``, ``declare -x``, a process's ``environ``, ``ps e``,
  interpreter code printing ``os.environ``/``process.env``/``ENV``) on a line that filters it for
  secret names or encodes or sends it; ``env | grep PATH`` stays ordinary; and a **record of
  past commands or changes hunted** (the shell's ``history``, ``git log -p``) through a filter
  for secret words (``history | grep -i token``); ``history | grep docker`` stays ordinary;
- ``encrypt-destroy`` for **data encrypted for impact**: a file encrypted (gpg, openssl enc, age,
  7z/zip with a password, ccrypt, scrypt) and the same file then removed, shredded or overwritten
  by a move or copy on the line, leaving only a copy someone else holds the key to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["harvest_acts", "hash_reader"]

_HASH_DATABASES = frozenset({"shadow", "gshadow"})


_CRACKERS = frozenset({"john", "hashcat", "hashcat.bin", "ophcrack", "rcracki_mt", "crackstation"})
_SHOWS_SECRETS = frozenset({"--show-secrets", "-s"})
# Help, version and the crackers' own benchmarks and self-tests (``hashcat -b``, ``john --test``)
# crack nothing of anyone's.
_HELP = frozenset(
    {"--help", "-h", "--version", "-V", "--list", "-b", "--benchmark", "--benchmark-all", "--test", "-I",
     "--backend-info", "--example-hashes", "--hash-info", "--identify"}
)  # fmt: skip


def hash_reader(argv: list[str]) -> Iterator[Effect]:
    """``getent shadow``, ``unshadow``, ``dscl . -read /Users/x ShadowHashData``; password hashes
    cracked (``john``, ``hashcat``; probe22), and the logins a tool keeps printed in clear
    (``mysql_config_editor print``, ``nmcli --show-secrets connection show``)."""
    tool = argv[0]
    if (
        (tool == "getent" and any(a in _HASH_DATABASES for a in argv[1:]))
        or tool == "unshadow"
        or any(a == "ShadowHashData" or a.endswith(":ShadowHashData") for a in argv[1:])
    ):
        yield _fx("secret-store", f"{tool} reads the accounts' password hashes", " ".join(argv[1:]))
    elif tool in _CRACKERS and len(argv) > 1 and not any(a in _HELP or a.startswith("--list=") for a in argv):
        yield _fx("secret-store", f"{tool} cracks password hashes", " ".join(argv[1:])[:80])
    elif tool == "mysql_config_editor" and argv[1:2] == ["print"]:
        yield _fx("secret-store", "mysql_config_editor prints the stored MySQL logins", " ".join(argv[1:]))
    elif (
        tool == "nmcli"
        and any(a in _SHOWS_SECRETS for a in argv[1:])
        and any(a in ("connection", "con", "c") for a in argv[1:])
    ):
        yield _fx("secret-store", "nmcli prints the network's stored passwords", " ".join(argv[1:])[:80])


_SECRET_WORDS = lazy_compile(
    r"(?i)passw|(?:^|[^a-z])pass(?:$|[^a-z])|secret|token|credential|api[_-]?key|private|aws_|\bkeys?\b"
)
_ENCODERS_AND_SENDERS = frozenset(
    {"base64", "base32", "basenc", "xxd", "od", "hexdump", "curl", "wget", "nc", "ncat", "netcat", "socat"}
    # mail and message senders, HTTP clients and the forge's CLIs that publish what they are fed
    # (`printenv | mailx x@y`, `swaks --body "$(env)"`, `env | gh gist create -`): probe24
    | {"mail", "mailx", "s-nail", "bsd-mailx", "sendmail", "mutt", "neomutt", "swaks", "msmtp", "ssmtp"}
    | {"http", "https", "xh", "xhs", "openssl", "telnet", "gh", "glab", "ssh", "scp", "rclone"}
)
_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg", "awk", "sed", "ag", "ugrep"})


_CODE_DUMP = lazy_compile(
    r"\b(?:print|pprint|dict|json\.dumps|repr|str)\(\s*(?:dict\()?os\.environ\b|os\.environ\.items\(\)"
    r"|\b(?:JSON\.stringify|console\.log|console\.dir)\(\s*process\.env\b|\bENV\.(?:to_h|each|inspect)\b"
    r"|\bp\s+ENV\b|\b(?:keys|each)\s*%ENV|%ENV\b[^;]*\bprint|getenv\(\s*\)"
)
"""Interpreter code that prints or serialises the whole environment."""
_INTERPRETERS = lazy_compile(r"^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php)$")


def _dumps_environment(argv: list[str]) -> bool:
    tool, rest = argv[0], argv[1:]
    if tool in ("env", "printenv"):
        return all(a.startswith("-") for a in rest)  # with a command or names it is not a dump
    if tool == "set":  # `set` alone lists every variable; `set -e` only changes an option
        return not rest
    if tool in ("export", "declare", "typeset"):
        return all(a.startswith("-") for a in rest) and any(a in ("-p", "-x", "-px", "-xp") for a in rest)
    if tool == "ps":  # BSD-style flags with e print every process's environment (ps auxe, ps eww)
        return any(re.match(r"^[a-zA-Z]*e[a-zA-Z]*$", a) for a in rest)
    if _INTERPRETERS.match(tool):
        return any(_CODE_DUMP.search(a) for a in rest)
    return tool in ("cat", "strings", "tr", "xargs") and any(
        re.match(r"^/proc/+(?:\d+|self|\*|\$\w+|\$\$|\$\{\w+\})/+environ$", a) for a in rest
    )


_HISTORY_FILE = lazy_compile(r"(?:^|/)\.?[\w.-]*_?history$|(?:^|/)fish_history$")
_PAGERS = frozenset({"cat", "tail", "head", "less", "more", "strings", "tac"})


def _history_hunt(commands: list[list[str]]) -> Iterator[Effect]:
    """The shell history searched for secrets typed into it (``history | grep -i passw``, ``grep
    token ~/.zsh_history``; probe22): where passwords given on command lines end up."""
    dumped = False
    for argv in commands:
        if (
            argv[0] == "history"
            or (argv[0] == "fc" and "-l" in argv[1:])
            or (argv[0] in _PAGERS and any(_HISTORY_FILE.search(a) for a in argv[1:]))
        ):
            dumped = True
            continue
        searched = dumped or any(_HISTORY_FILE.search(a) for a in argv[1:])
        if argv[0] in _FILTERS and searched and any(_SECRET_WORDS.search(a) for a in argv[1:]):
            yield _fx("secret-hunt", "searches the shell history for secrets", " ".join(argv[:4]))
            return


def _environment_hunt(commands: list[list[str]]) -> Iterator[Effect]:
    """A dump, then (in execution order) a filter for secret names, an encoder or a sender."""
    yield from _history_hunt(commands)
    first = next((i for i, c in enumerate(commands) if _dumps_environment(c)), None)
    if first is None:
        return
    for argv in commands[first + 1 :]:
        if argv[0] == "wc" or (argv[0] in _FILTERS and any(a in ("-c", "--count") for a in argv[1:])):
            return  # reduced to a count: nothing of the values goes further
        hunted = argv[0] in _FILTERS and any(_SECRET_WORDS.search(a) for a in argv[1:])
        if hunted or argv[0] in _ENCODERS_AND_SENDERS:
            how = "filters it for secrets" if hunted else f"hands it to {argv[0]}"
            yield _fx("secret-hunt", f"dumps the environment and {how}", " ".join(argv[:4]))
            return


_HUNT_WORDS = lazy_compile(
    r"(?i)passw|(?:^|[^a-z])pass(?:phrase)?(?:$|[^a-z])|secret|api[_-]?key|credential|(?:^|[^a-z])tokens?(?:$|[^a-z])"
    r"|private[_ -]?key|BEGIN [A-Z ]*PRIVATE|AKIA|ghp_|xox[bp]-"
)
"""What a hunt through a repository's patches filters for (stricter than the environment's
names: a search of the patches for a function named ``tokenize`` is not a hunt)."""


def _prints_every_patch(argv: list[str]) -> bool:
    """``git log -p`` (or ``-S``/``-G``): every change ever committed, secrets committed and then
    removed included."""
    rest = argv[1:]
    return (
        argv[0] == "git"
        and rest[:1] == ["log"]
        and any(a in ("-p", "--patch", "-u") or a.startswith(("-S", "-G")) for a in rest)
    )


def _patch_hunt(commands: list[list[str]]) -> Iterator[Effect]:
    """A repository's patches filtered for secret words (the secret scanners' reason to read the
    history, ATT&CK T1552.001): the same hunt as a filtered environment dump or shell history."""
    for index, argv in enumerate(commands):
        if not _prints_every_patch(argv):
            continue
        for later in commands[index + 1 :]:
            if later[0] in _FILTERS and any(
                _HUNT_WORDS.search(a) for a in later[1:] if not a.startswith("-")
            ):
                yield _fx(
                    "secret-hunt",
                    "searches every patch in the repository's history for secrets",
                    " ".join(later[:4]),
                )
                return


_ENCRYPTS: dict[str, re.Pattern[str]] = {
    "gpg": lazy_compile(r"^(?:-[a-zA-Z]*[ce][a-zA-Z]*|--symmetric|--encrypt)$"),
    "gpg2": lazy_compile(r"^(?:-[a-zA-Z]*[ce][a-zA-Z]*|--symmetric|--encrypt)$"),
    "openssl": lazy_compile(r"^(?:enc|-e|-encrypt|aes-\S+|des\S*|chacha20\S*|camellia\S*)$"),
    "age": lazy_compile(r"^(?:-[ep]|--encrypt|--passphrase|-r|--recipient|-R)$"),
    "7z": lazy_compile(r"^-p\S*$"),
    "7za": lazy_compile(r"^-p\S*$"),
    "zip": lazy_compile(r"^(?:-[a-zA-Z]*e[a-zA-Z]*|-P|--encrypt|--password)$"),
    "ccrypt": lazy_compile(r"^(?:-e|--encrypt)$"),
    "scrypt": lazy_compile(r"^enc$"),
}
_DESTROYS = frozenset({"rm", "shred", "srm", "wipe", "unlink", "truncate"})


def _encrypt_then_destroy(commands: list[list[str]]) -> Iterator[Effect]:
    """In execution order: a file encrypted, then removed, shredded, or overwritten by a move or
    copy onto it (a copy made before the encryption is no destruction)."""
    encrypted: set[str] = set()
    for argv in commands:
        pattern = _ENCRYPTS.get(argv[0])
        if (
            pattern is not None
            and not any(a in ("-d", "--decrypt", "-decrypt") for a in argv[1:])
            and any(pattern.match(a) for a in argv[1:])
        ):
            encrypted.update(a for a in argv[1:] if not a.startswith("-"))
            continue
        if not encrypted:
            continue
        named = argv[1:] if argv[0] in _DESTROYS else argv[-1:] if argv[0] in ("mv", "cp") else []
        gone = [a for a in named if not a.startswith("-") and a in encrypted]
        if gone:
            yield _fx("encrypt-destroy", f"encrypts {gone[0]} and then destroys the original", gone[0])
            return


def harvest_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """The line-level effects of this module (see its doc) over a line's unwrapped commands."""
    yield from _environment_hunt(commands)
    yield from _patch_hunt(commands)
    yield from _encrypt_then_destroy(commands)
