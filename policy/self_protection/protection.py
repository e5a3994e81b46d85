"""The protected set of one deployment (:class:`SelfProtection`) and how a deployment derives it
(:func:`protection_for`); the check of each call is :mod:`.scan`'s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

from dsh_policy.policy.self_protection.locations import (
    HARNESS_FOLDERS,
    HARNESS_SUFFIXES,
    SHADOW_NAMES,
    SHADOW_SUFFIXES,
    Protected,
    absolute,
    gateway_runtime_locations,
    harness_locations,
    has_suffix,
    package_locations,
    policy_cache_locations,
)
from dsh_policy.policy.self_protection.refusals import Refusal
from dsh_policy.policy.self_protection.scan import CallScan

_KNOWN_READ_TOOLS: Final[frozenset[str]] = frozenset(
    {
        "read_file",
        "list_dir",
        "Glob",
        "Grep",
        "LS",
        "web_fetch",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "Task",
        "ExitPlanMode",
        "BashOutput",
        "KillShell",
        "SlashCommand",
        "AskUserQuestion",
    }
)


@dataclass(frozen=True)
class SelfProtection:
    """The protected set of one deployment and the check every tool call passes (guard level)."""

    enabled: bool
    entries: tuple[Protected, ...]
    home: str = field(default_factory=lambda: os.path.expanduser("~"))
    project_dirs: tuple[str, ...] = ()

    # -- what is protected --------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What the audit log and the policy digest record: on/off and every protected path."""
        return {
            "enabled": self.enabled,
            "paths": sorted(
                {
                    f"{entry.kind}:{entry.path}{'/' if entry.tree else ''}{'*' if entry.prefix else ''}"
                    for entry in self.entries
                }
            ),
        }

    def protected(self, path: str, extra: Sequence[Protected] = ()) -> Protected | None:
        """The entry covering absolute, normalised ``path``: a deployment path, a harness file at
        any depth, or a name that would shadow the gateway. Where several entries cover it (the key
        inside the deployment's folder), a secret one is the answer: a copy or a read of the key
        is judged as one."""
        first: Protected | None = None
        for entry in (*self.entries, *extra):
            if entry.covers(path):
                if entry.secret:
                    return entry
                first = first or entry
        if first is not None:
            return first
        folded = path.lower()
        if folded != path:  # a case-insensitive filesystem opens ``.Claude/Settings.json`` too
            for entry, lowered in self.folded_entries:
                if lowered.covers(folded):
                    if entry.secret:
                        return entry
                    first = first or entry
            if first is not None:
                return first
        parts = folded.split("/")
        for suffix, tree in HARNESS_SUFFIXES:
            if has_suffix(parts, suffix, tree):
                return Protected(path, "harness-settings")
        name = parts[-1]
        if name in SHADOW_NAMES or name.endswith(SHADOW_SUFFIXES) or "dsh_policy" in parts[:-1]:
            return Protected(path, "gateway-package")
        return None

    def holds_protected(self, folder: str, extra: Sequence[Protected] = ()) -> Protected | None:
        """An entry inside ``folder`` (so acting on the whole folder acts on it)."""
        root = "/" if folder == "/" else folder.rstrip("/") + "/"
        for entry in (*self.entries, *extra):
            if entry.path.startswith(root):
                return entry
        if os.path.basename(folder.rstrip("/")) in HARNESS_FOLDERS:
            return Protected(folder, "harness-settings", tree=True)
        return None

    @cached_property
    def component_names(self) -> frozenset[str]:
        """Every path component of every entry: a word whose last component is not one of these
        (nor a glob, ``.``, ``..`` or ``~``) cannot name a protected path or a folder holding one."""
        names: set[str] = {
            ".",
            "..",
            "~",
            "",
            "settings.json",
            "settings.local.json",
            *(name for suffix, _tree in HARNESS_SUFFIXES for name in suffix),
            *SHADOW_NAMES,
        }
        for entry in self.entries:
            names.update(entry.path.split("/"))
        return frozenset(names)

    @cached_property
    def folded_names(self) -> frozenset[str]:
        return frozenset(name.lower() for name in self.component_names)

    @cached_property
    def folded_entries(self) -> tuple[tuple[Protected, Protected], ...]:
        """Each entry with its path in lower case (for filesystems that ignore letter case)."""
        return tuple(
            (entry, Protected(entry.path.lower(), entry.kind, entry.tree, entry.prefix, entry.secret))
            for entry in self.entries
        )

    @cached_property
    def name_prefixes(self) -> tuple[str, ...]:
        return tuple(os.path.basename(entry.path) for entry in self.entries if entry.prefix)

    @cached_property
    def mentions(self) -> re.Pattern[str]:
        """Text that names a protected path inside a longer string (``python -c "open('.dsh/x')"``)."""
        forms: set[str] = {
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/hooks",
            ".codex/",
            *("/".join(suffix) for suffix, _tree in HARNESS_SUFFIXES if len(suffix) > 1),
            "sitecustomize",
            "usercustomize",
            "claude-code/managed-settings",
            "dsh_policy/",
            "dsh_policy.__file__",
            "which dsh-policy",
            "command -v dsh-policy",
            "type -p dsh-policy",
            "whereis dsh-policy",
        }
        for entry in self.entries:
            forms.add(entry.path)
            parts = entry.path.split("/")
            if len(parts) >= 3 and parts[-2].startswith("."):
                forms.add("/".join(parts[-2:]))
            if entry.path.startswith(self.home + "/"):
                forms.add("~/" + entry.path[len(self.home) + 1 :])
            for project in self.project_dirs:
                if entry.path.startswith(project.rstrip("/") + "/"):
                    forms.add(entry.path[len(project.rstrip("/")) + 1 :])
            if entry.secret and entry.kind != "gateway-runtime":
                # A key's file name is its own; the runtime folder's (``dsh-policy``) is the
                # gateway's name, which commit messages and searches use.
                forms.add(parts[-1])
        forms.discard("")
        return re.compile("|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True)))

    @cached_property
    def secrets(self) -> tuple[Protected, ...]:
        return tuple(entry for entry in self.entries if entry.secret)

    # -- the check ----------------------------------------------------------------------------

    def check(self, tool: str, args: Any, cwd: str | None = None) -> Refusal | None:
        """The refusal for one call, or ``None``. Never raises for any input: the caller still
        treats an exception as a refusal (guards fail closed)."""
        if not self.enabled:
            return None
        base = os.path.normpath(cwd) if cwd and os.path.isabs(cwd) else os.getcwd()
        scan = CallScan(self, base)
        if tool == "shell" and isinstance(args, Mapping) and isinstance(args.get("command"), str):
            return scan.shell(args["command"], tool)
        if tool in ("write_file", "edit_file") and isinstance(args, Mapping):
            written = args.get("content") if tool == "write_file" else args.get("new_string")
            return scan.path_write(
                args.get("path"), tool, "write", written if isinstance(written, str) else ""
            )
        if tool == "apply_patch" and isinstance(args, Mapping):
            paths = args.get("paths")
            for path in paths if isinstance(paths, list | tuple) else ():
                refusal = scan.path_write(path, tool, "patch")
                if refusal is not None:
                    return refusal
            return None
        if tool in _KNOWN_READ_TOOLS:
            return scan.reads(args, tool)
        return scan.any_tool(args, tool)


def protection_for(
    *,
    packs: Iterable[str] = (),
    deployment: str | None = None,
    audit_log: str | None = None,
    signing_key: str | None = None,
    extra: Iterable[str] = (),
    extra_secret: Iterable[str] = (),
    enabled: bool = True,
    home: str | None = None,
    include_package: bool = True,
) -> SelfProtection:
    """The protected set of a deployment: its packs, deployment file, audit log (every file of
    it: segments, lock, anchor, torn tails), signing key (secret), the harness settings and the
    installed package, plus what the operator listed."""
    home = absolute(home or "~")
    entries: list[Protected] = [Protected(absolute(pack), "pack") for pack in packs]
    project_dirs: list[str] = []
    if deployment is not None:
        path = absolute(deployment)
        entries.append(Protected(path, "deployment"))
        folder = os.path.dirname(path)
        if os.path.basename(folder) in (".dsh", ".codex", ".claude", ".dsh-policy"):
            project_dirs.append(os.path.dirname(folder))
        if os.path.basename(folder) in (".dsh", ".dsh-policy"):
            # A folder of the deployment's own: nothing in it is the agent's to write (a new
            # file there is a new key, anchor or pack beside the real ones).
            entries.append(Protected(folder, "deployment", tree=True))
    if audit_log is not None:
        entries.append(Protected(absolute(audit_log), "audit-log", prefix=True))
    if signing_key is not None:
        key = absolute(signing_key)
        entries.append(Protected(key, "signing-key", secret=True))
        entries.append(Protected(os.path.splitext(key)[0] + ".pub", "signing-key"))
    entries.extend(Protected(absolute(path), "operator", tree=True) for path in extra)
    entries.extend(Protected(absolute(path), "operator", tree=True, secret=True) for path in extra_secret)
    entries.extend(harness_locations(home))
    if include_package:
        entries.extend(package_locations())
        entries.extend(gateway_runtime_locations())
        entries.extend(policy_cache_locations())
    unique = tuple(dict.fromkeys(entries))
    return SelfProtection(enabled=enabled, entries=unique, home=home, project_dirs=tuple(project_dirs))
