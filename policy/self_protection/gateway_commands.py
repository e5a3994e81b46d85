"""Commands that act on the gateway as a program: installers that uninstall, replace or shadow the
installed package, variables and aliases that shadow it in the shell, harnesses started with their
hooks off by their own options, the gateway's key generation and its own hook (which writes the
audit log); and the package-manager subcommands whose operands are package names, not paths.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from typing import Any, Final

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


# Package managers that install a local folder's commands onto the PATH, and the verbs that do.
_LOCAL_INSTALLERS: Final[frozenset[str]] = frozenset(
    {"pip", "pip3", "pipx", "uv", "npm", "pnpm", "yarn", "bun", "cargo", "poetry", "pdm", "hatch"}
)
_INSTALL_VERBS: Final[frozenset[str]] = frozenset(
    {"install", "i", "add", "inject", "link", "reinstall", "upgrade"}
)
_MAX_METADATA: Final[int] = 256 * 1024


def shadowing_install(argv: Sequence[str], resolve: Callable[[str], list[str]]) -> Refusal | None:
    """An installer given a local package folder (``pipx install ./shim``, ``npm i -g ./shim``,
    ``cargo install --path shim``) that provides a command named as the gateway: installed onto
    the PATH, it may stand in for the hook command. The commands are read from the folder's
    metadata (``[project.scripts]``, ``console_scripts``, ``package.json``'s ``bin``, Cargo's
    ``[[bin]]``). A global install (onto the user's PATH: ``pipx``, ``uv tool``, ``npm -g``,
    ``cargo install``) of a local folder whose metadata cannot be read now (missing here, made by
    another call) is judged by where it lands, not by whether it would succeed: its commands may be
    any, the gateway's included, so it is refused."""
    program = (argv[0] if argv else "").rsplit("/", 1)[-1]
    words = list(argv[1:])
    if program not in _LOCAL_INSTALLERS and not PIP.fullmatch(program):
        return None
    if not _INSTALL_VERBS & set(words):
        return None
    onto_path = _installs_globally(program, words)
    skip = False
    for word in words:
        if skip or word.startswith("-") or word in _INSTALL_VERBS:
            skip = not skip and word in _VALUED_OPTIONS
            continue
        for folder in resolve(word.removeprefix("file:"))[:1]:
            if onto_path and _local_path(word) and not _readable_package(folder):
                return Refusal(
                    f"{RULE_PREFIX}/gateway-package",
                    message(
                        f"{program} would put the commands of {word} onto the PATH, a package "
                        "whose commands cannot be read now (one may be named as the gateway)",
                        KIND_TEXT["gateway-package"],
                    ),
                )
            provided = provided_commands(folder)
            if provided & _OUR_NAMES:
                return Refusal(
                    f"{RULE_PREFIX}/gateway-package",
                    message(
                        f"{program} would install {word}, which provides a "
                        f"{sorted(provided & _OUR_NAMES)[0]} command in place of the gateway's",
                        KIND_TEXT["gateway-package"],
                    ),
                )
    return None


# Installer options whose value is not a package (an index, a requirements file, a place).
_VALUED_OPTIONS: Final[frozenset[str]] = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
     "--find-links", "-t", "--target", "--prefix", "--root", "--python", "--registry", "--pip-args",
     "--suffix", "--index", "--default-index", "--with", "--root-dir"}
)
_METADATA_FILES: Final[tuple[str, ...]] = (
    "pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml"
)
_ARCHIVES: Final[tuple[str, ...]] = (".whl", ".tar.gz", ".zip", ".tgz", ".egg")


def _installs_globally(program: str, words: Sequence[str]) -> bool:
    """Whether the install puts its commands on the user's PATH, outside any project."""
    if program == "pipx" or program == "cargo":
        return True
    if program == "uv":
        return words[:1] == ["tool"]
    if program in ("npm", "pnpm", "yarn", "bun"):
        return bool({"-g", "--global", "global"} & set(words))
    return False


def _local_path(word: str) -> bool:
    """A package operand that names a folder on this machine rather than a registry package."""
    word = word.removeprefix("file:")
    return word.startswith(("/", "./", "../", "~")) and not word.endswith(_ARCHIVES)


def _readable_package(folder: str) -> bool:
    """A folder holding package metadata that can be read now."""
    return os.path.isdir(folder) and any(
        os.path.isfile(os.path.join(folder, name)) for name in _METADATA_FILES
    )


def provided_commands(folder: str) -> set[str]:
    """The command names a local package folder installs (empty for anything else)."""
    if not os.path.isdir(folder):
        return set()
    names: set[str] = set()
    pyproject = _load(os.path.join(folder, "pyproject.toml"), tomllib.loads)
    project, poetry = _table(pyproject, "project"), _table(_table(pyproject, "tool"), "poetry")
    for scripts in (_table(project, "scripts"), _table(project, "gui-scripts"), _table(poetry, "scripts")):
        names.update(scripts)
    setup_cfg = _text(os.path.join(folder, "setup.cfg")) + _text(os.path.join(folder, "setup.py"))
    names.update(re.findall(r"""(?m)^\s*['"]?([\w.-]+)\s*=\s*[\w.]+:\w""", setup_cfg))
    package = _load(os.path.join(folder, "package.json"), json.loads)
    if isinstance(package, dict):
        bin_field = package.get("bin")
        if isinstance(bin_field, str):
            names.add(str(package.get("name", "")).rsplit("/", 1)[-1])
        elif isinstance(bin_field, dict):
            names.update(str(key) for key in bin_field)
    cargo = _load(os.path.join(folder, "Cargo.toml"), tomllib.loads)
    bins = cargo.get("bin") if isinstance(cargo, dict) else None
    for entry in bins if isinstance(bins, list) else ():
        names.add(str(entry.get("name", "")) if isinstance(entry, dict) else "")
    names.add(str(_table(cargo, "package").get("name", "")))
    return {normal_name(str(name)) for name in names if name}


def _table(document: Any, key: str) -> dict[str, Any]:
    """``document[key]`` when both are mappings, else an empty one."""
    value = document.get(key) if isinstance(document, dict) else None
    return value if isinstance(value, dict) else {}


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(_MAX_METADATA)
    except (OSError, ValueError):
        return ""


def _load(path: str, parse: Callable[[str], Any]) -> Any:
    try:
        return parse(_text(path) or "{}")
    except ValueError:  # tomllib.TOMLDecodeError and json.JSONDecodeError are ValueErrors
        return {}


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
