"""Which paths and names self-protection guards: the entry type, the harness files protected in
any project, the names that would shadow the gateway, and where this machine keeps the harness
settings, the installed package and the resident gateway's runtime folder.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

from dsh_policy.cmdline.lazy_regex import lazy_compile

Kind = Literal[
    "pack",
    "deployment",
    "audit-log",
    "signing-key",
    "harness-settings",
    "gateway-package",
    "gateway-runtime",
    "policy-cache",
    "operator",
]


@dataclass(frozen=True, slots=True)
class Protected:
    """One protected file or folder. ``tree``: everything inside is protected too; ``prefix``:
    every sibling whose name starts with this one's (an audit log's segments, lock and anchor);
    ``secret``: reading is refused as well."""

    path: str
    kind: Kind
    tree: bool = False
    prefix: bool = False
    secret: bool = False

    def covers(self, path: str) -> bool:
        """Whether ``path`` (absolute, normalised) is this entry or inside it."""
        if path == self.path:
            return True
        if self.tree and path.startswith(self.path.rstrip("/") + "/"):
            return True
        if self.prefix:
            head, name = os.path.split(path)
            return head == os.path.dirname(self.path) and name.startswith(os.path.basename(self.path))
        return False


# Every supported client's hook files in a project, protected wherever they are (any project, any
# depth): a trailing run of path components, and whether everything under it counts. Claude Code:
# project and local settings and hook scripts; Codex: the whole project/user ``.codex`` folder
# (config.toml, hooks.json, requirements); Gemini CLI and Qwen Code: their settings (hooks and MCP
# servers); OpenCode: its plugin folder (every file there is loaded at start); GitHub Copilot CLI:
# its hook folder ``.github/hooks`` (every ``*.json`` there is a hook file). Managed and
# user-level locations are added as absolute paths (:func:`harness_locations`).
HARNESS_SUFFIXES: Final[tuple[tuple[tuple[str, ...], bool], ...]] = (
    ((".claude", "settings.json"), False),
    ((".claude", "settings.local.json"), False),
    ((".claude", "hooks"), True),
    ((".codex",), True),
    ((".gemini", "settings.json"), False),
    ((".qwen", "settings.json"), False),
    ((".opencode", "plugin"), True),
    ((".opencode", "plugins"), True),
    ((".github", "hooks"), True),
)
# The folders that hold them: acting on one of these as a whole (``rm -rf .github``) acts on them.
HARNESS_FOLDERS: Final[frozenset[str]] = frozenset(suffix[0] for suffix, _tree in HARNESS_SUFFIXES)
# The files each client's project wiring consists of (what the tamper watch fingerprints in each
# project: a settings file that stops running ``dsh-policy hook`` is a weakening).
PROJECT_HOOK_FILES: Final[tuple[str, ...]] = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".gemini/settings.json",
    ".qwen/settings.json",
    ".opencode/plugin/dsh-policy.js",
    ".github/hooks/dsh-policy.json",
)

# Names that shadow the gateway wherever they are written: an interpreter start-up hook, a path
# file, a package or program of our name placed earlier on the path.
SHADOW_NAMES: Final[frozenset[str]] = frozenset(
    {"sitecustomize.py", "usercustomize.py", "dsh_policy", "dsh-policy"}
)
SHADOW_SUFFIXES: Final[tuple[str, ...]] = (".pth",)
SHADOW_ENV: Final[re.Pattern[str]] = lazy_compile(
    r"\b(?:PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONUSERBASE|PYTHONEXECUTABLE|PYTHONSAFEPATH"
    r"|BASH_ENV|ENV|LD_PRELOAD|CLAUDE_CONFIG_DIR|CODEX_HOME)="
)
SHELL_STARTUP: Final[frozenset[str]] = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        "config.fish",
        "environment",
        ".envrc",
        ".pam_environment",
    }
)


def has_suffix(parts: list[str], suffix: tuple[str, ...], tree: bool) -> bool:
    if not tree:
        return tuple(parts[-len(suffix) :]) == suffix
    for index in range(len(parts) - len(suffix) + 1):
        if tuple(parts[index : index + len(suffix)]) == suffix:
            return True
    return False


def absolute(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def harness_locations(home: str) -> Iterator[Protected]:
    """User-level and managed settings of every supported client (project-level ones are matched
    by name at any depth, see :data:`HARNESS_SUFFIXES`)."""
    claude_home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    for name in ("settings.json", "settings.local.json"):
        yield Protected(absolute(os.path.join(claude_home, name)), "harness-settings")
    yield Protected(absolute(os.path.join(claude_home, "hooks")), "harness-settings", tree=True)
    yield Protected(absolute(os.path.join(home, ".claude.json")), "harness-settings")
    yield Protected(
        absolute(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")), "harness-settings", tree=True
    )
    # Gemini CLI and Qwen Code user settings (hooks, MCP servers, folder trust).
    for folder in (".gemini", ".qwen"):
        yield Protected(absolute(os.path.join(home, folder, "settings.json")), "harness-settings")
        yield Protected(absolute(os.path.join(home, folder, "trustedFolders.json")), "harness-settings")
    # OpenCode: the user plugin folders and configuration (which names plugins and MCP servers).
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for name in ("plugin", "plugins"):
        yield Protected(absolute(os.path.join(config_home, "opencode", name)), "harness-settings", tree=True)
    for name in ("opencode.json", "opencode.jsonc", "config.json"):
        yield Protected(absolute(os.path.join(config_home, "opencode", name)), "harness-settings")
    # GitHub Copilot CLI: its user settings (the ``hooks`` key), the folder trust its repository
    # hooks depend on (``config.json``), its MCP servers and hook folder.
    copilot = absolute(os.environ.get("COPILOT_HOME") or os.path.join(home, ".copilot"))
    for name in ("settings.json", "config.json", "mcp-config.json"):
        yield Protected(os.path.join(copilot, name), "harness-settings")
    yield Protected(os.path.join(copilot, "hooks"), "harness-settings", tree=True)
    for managed in (
        "/etc/claude-code",
        "/Library/Application Support/ClaudeCode",
        "/etc/codex",
        "/etc/gemini-cli",
        "/etc/qwen-code",
        "/Library/Application Support/GeminiCli",
        "C:/ProgramData/ClaudeCode",
        "C:/Program Files/ClaudeCode",
    ):
        yield Protected(managed, "harness-settings", tree=True)


def gateway_runtime_locations() -> Iterator[Protected]:
    """Every folder the resident gateway may use here (reading too: the HTTP token is there).
    Whoever can write in it can stand in for the gateway: remove its socket, bind another that
    answers "allow" to every hook (the hook trusts a socket of its own user)."""
    from dsh_policy.policy.gateway_folders import runtime_dir_candidates  # stdlib only

    for folder in runtime_dir_candidates():
        yield Protected(absolute(folder), "gateway-runtime", tree=True, secret=True)


def policy_cache_locations() -> Iterator[Protected]:
    """Every folder the compiled-policy cache may use here: whoever writes a kept policy there
    changes what the packs decide (entries are checked for owner and mode, which an agent of the
    same user passes)."""
    from dsh_policy.policy.cache_folders import cache_folder_candidates  # stdlib only

    for folder in cache_folder_candidates():
        yield Protected(absolute(folder), "policy-cache", tree=True)


def package_locations() -> Iterator[Protected]:
    """The gateway's own code, its install records and its command (``pip uninstall`` is refused
    separately): whoever rewrites these rewrites the gateway."""
    import dsh_policy

    package = os.path.dirname(os.path.abspath(dsh_policy.__file__))
    yield Protected(package, "gateway-package", tree=True)
    sites = {sysconfig.get_paths().get(key) for key in ("purelib", "platlib")}
    for site in filter(None, sites):
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for name in names:
            lowered = name.lower().replace("-", "_")
            if lowered.startswith(("dsh_policy", "__editable__.dsh_policy", "__editable___dsh_policy")):
                yield Protected(os.path.join(site, name), "gateway-package", tree=True)
    scripts = sysconfig.get_paths().get("scripts")
    for folder in filter(None, {scripts, os.path.dirname(sys.executable)}):
        yield Protected(os.path.join(folder, "dsh-policy"), "gateway-package")
    yield Protected(os.path.realpath(sys.executable), "gateway-package")
    if sys.prefix != sys.base_prefix:
        # The gateway's virtual environment: its interpreter link, ``pyvenv.cfg`` and every
        # package the gateway imports (a stand-in ``pydantic`` is a stand-in gateway).
        yield Protected(absolute(sys.prefix), "gateway-package", tree=True)
