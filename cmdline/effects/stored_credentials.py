"""Credentials read out of the tools that store them, without naming a credential file: classes a
sixth blind probe (tests/corpus/probe6) found unread.

- ``secret-store`` for **git's persisted authentication printed**: ``git config --get-regexp
  'http\\..*\\.extraheader'`` (the token ``actions/checkout`` leaves in a CI runner's git config,
  which the tj-actions compromise harvested), ``git config --get credential.*`` and the like;
- ``secret-store`` for **a cloud service's keys listed**: ``az cognitiveservices account keys
  list``, ``az storage account keys list``, ``az ... list-keys``/``show-connection-string``
  (the keys themselves, not their names), ``aws apigateway get-api-keys --include-values``,
  ``aws configure get aws_secret_access_key``;
- ``keychain`` for **another session's ssh agent borrowed**: ``SSH_AUTH_SOCK`` pointed at an
  agent socket found under ``/tmp/ssh-*`` (or looked up at run time), so the agent's keys sign for
  whoever asks (HackTricks' ssh-agent hijacking).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "borrowed_agents", "stored_credential_acts"]

_GIT_AUTH_KEYS = lazy_compile(r"(?i)extraheader|^credential\b|\.password$|\.token$|authorization")
_GIT_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch"})
_SECRET_CONFIG_KEYS = lazy_compile(r"(?i)^(?:aws_secret_access_key|aws_session_token|secret_key)$")
_AGENT_SOCKET = lazy_compile(r"SSH_AUTH_SOCK=[\"']?(?:\$\(|`|/+tmp/+ssh-)")


def _git_auth(argv: list[str]) -> Iterator[Effect]:
    rest = argv[1:]
    if "config" not in rest[:3]:
        return
    words = rest[rest.index("config") + 1 :]
    if not any(a in _GIT_READS for a in words) and words[:1] not in (["get"], ["get-regexp"]):
        return
    keys = [a for a in words if not a.startswith("-") and a not in ("get", "get-regexp")]
    if keys and _GIT_AUTH_KEYS.search(keys[0]):
        yield _fx("secret-store", "git config prints stored authentication", keys[0])


def _cloud_keys(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    words = [a for a in rest if not a.startswith("-")]
    if tool == "az" and (
        any(words[i : i + 2] == ["keys", "list"] for i in range(len(words)))
        or any(w in ("list-keys", "show-connection-string", "list-connection-strings") for w in words)
    ):
        yield _fx("secret-store", "az prints a service's access keys", " ".join(words[:3]))
    elif tool == "aws" and (
        (
            words[:1] == ["apigateway"]
            and any(w in ("get-api-keys", "get-api-key") for w in words)
            and "--include-values" in [a.split("=", 1)[0] for a in rest]
        )
        or (words[:2] == ["configure", "get"] and any(_SECRET_CONFIG_KEYS.match(w) for w in words[2:]))
    ):
        yield _fx("secret-store", "aws prints stored keys", " ".join(words[:3]))


def stored_credential_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    if argv[0] == "git":
        return list(_git_auth(argv))
    if argv[0] in ("az", "aws"):
        return list(_cloud_keys(argv))
    return []


def borrowed_agents(line: str) -> Iterator[Effect]:
    """``SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.123 ssh ...``: another session's agent signs for us."""
    if "SSH_AUTH_SOCK=" in line:
        found = _AGENT_SOCKET.search(line)
        if found and not re.search(r"SSH_AUTH_SOCK=[\"']?\$\(\s*gpgconf\b", line):
            yield _fx("keychain", "points SSH_AUTH_SOCK at another session's ssh agent", found.group(0))


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset({"git", "az", "aws"}), stored_credential_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
