"""Commands that act on the gateway as a program: installers that uninstall, replace or shadow the
installed package, variables and aliases that shadow it in the shell, harnesses started with their
hooks off by their own options, the gateway's key generation and its own hook (which writes the
audit log); and the package-manager subcommands whose operands are package names, not paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from dsh_policy.cmdline.programs import PIP, PYTHON, PYTHON_INSTALLERS
from dsh_policy.policy.self_protection.locations import SHADOW_ENV
from dsh_policy.policy.self_protection.refusals import KIND_TEXT, RULE_PREFIX, Refusal, message

_OUR_NAMES: Final[frozenset[str]] = frozenset({"dsh-policy", "dsh_policy", "dsh.policy"})
# Package-manager subcommands whose operands are package names, not paths (what they write is
# their option's folder: ``pip download -d DIR``).
_PACKAGE_FETCHES: Final[frozenset[str]] = frozenset({"download", "wheel", "cache", "config", "hash"})


def gateway_command(argv: list[str], tool: str) -> Refusal | None:
    """Uninstalling or shadowing the gateway, and harnesses started with their hooks off."""
    program = argv[0]
    words = argv[1:]
    if PYTHON.fullmatch(program) and words[:2] == ["-m", "pip"]:
        program, words = "pip", words[2:]
    if program in PYTHON_INSTALLERS or PIP.fullmatch(program):
        names = {normal_name(word) for word in words}
        acts = {"uninstall", "remove", "install", "reinstall", "rm", "upgrade", "sync", "update", "add"}
        if names & _OUR_NAMES and acts & set(words):
            return Refusal(
                f"{RULE_PREFIX}/gateway-package",
                message(
                    f"{tool} would change the installed dsh-policy ({' '.join(argv[:4])})",
                    KIND_TEXT["gateway-package"],
                ),
            )
    if program in ("export", "declare", "typeset", "setenv", "set", "alias", "function", "unalias"):
        for word in words:
            if SHADOW_ENV.match(word) or word.split("=", 1)[0] in ("dsh-policy", "dsh_policy"):
                return Refusal(
                    f"{RULE_PREFIX}/gateway-package",
                    message(
                        f"{tool} would shadow the gateway ({program} {word.split('=', 1)[0]})",
                        KIND_TEXT["gateway-package"],
                    ),
                )
    if program == "unset" and {"PATH"} & set(words):
        return Refusal(
            f"{RULE_PREFIX}/gateway-package",
            message(f"{tool} would unset PATH", KIND_TEXT["gateway-package"]),
        )
    if program in ("claude", "codex"):
        joined = " ".join(words)
        if (
            "disableAllHooks" in joined
            or "--setting-sources" in joined
            or "--settings" in joined
            or (
                program == "claude"
                and words[:1] == ["config"]
                and words[1:2] in (["set"], ["add"], ["remove"])
            )
            or "--dangerously" in joined
            or re.search(r"(?:^|\s)(?:-c|--config)\s+\S*hooks", joined)
            or re.search(r"--disable\s+\S*hooks", joined)
        ):
            return Refusal(
                f"{RULE_PREFIX}/harness-settings",
                message(f"{tool} would start {program} without its hooks", KIND_TEXT["harness-settings"]),
            )
    if program == "dsh-policy" and words[:1] == ["keygen"]:
        return Refusal(
            f"{RULE_PREFIX}/signing-key",
            message(f"{tool} would make audit signing keys", KIND_TEXT["signing-key"]),
        )
    if program == "dsh-policy" and words[:1] == ["hook"]:
        return Refusal(
            f"{RULE_PREFIX}/audit-log",
            message(
                f"{tool} would run the gateway's own hook (it writes the audit log)",
                KIND_TEXT["audit-log"],
            ),
        )
    return None


def package_fetch(argv: Sequence[str]) -> bool:
    """``pip download``/``wheel``/``cache``/``config``: operands are package names (what they
    write is an option's folder, judged by the writers' table)."""
    program, words = argv[0], list(argv[1:])
    if PYTHON.fullmatch(program) and words[:2] == ["-m", "pip"]:
        program, words = "pip", words[2:]
    if program == "uv" and words[:1] == ["pip"]:
        program, words = "pip", words[1:]
    if not (PIP.fullmatch(program) or program in PYTHON_INSTALLERS):
        return False
    operands = [w for w in words if not w.startswith("-")]
    return bool(operands) and operands[0] in _PACKAGE_FETCHES


def normal_name(word: str) -> str:
    """A package requirement's name, PEP 503-normalised (``DSH_Policy==0.1`` is ``dsh-policy``);
    a wheel or source archive's file name gives its project's name (``dsh_policy-9.9-py3...``)."""
    base = word.strip().rstrip("/").rsplit("/", 1)[-1]
    if base.endswith((".whl", ".tar.gz", ".zip", ".tgz", ".egg")):
        word = base.split("-", 1)[0]
    name = re.split(r"[\[=<>!~;@ ]", word.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()
