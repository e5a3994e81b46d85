"""Doctor checks for Codex: which dsh-policy hooks Codex really runs, and why.

Codex runs a hook it loaded in one of two cases: the hook is *managed* (it came from the system
``requirements.toml`` or another administrator's layer; no trust review, users cannot switch it
off), or a user trusted its exact definition. Everything else is skipped, and ``codex exec`` says
nothing about it. So the findings come from Codex itself (``codex app-server`` ``hooks/list``):
hooks configured but not loaded, loaded but untrusted, managed ones (and whether
``allow_managed_hooks_only`` makes them the only ones), and user hooks that would decide every
event a second time beside managed ones.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence

from dsh_policy.policy.hooks.codex import managed as codex_managed
from dsh_policy.policy.hooks.codex import trust as codex_trust
from dsh_policy.policy.hooks.harness_files import read_text
from dsh_policy.policy.hooks.install.doctor import Finding, InstalledHook
from dsh_policy.policy.hooks.install.settings_files import HOOK_EVENTS

SUBJECT = "codex trust"


def codex_config_files(project: str, home: str) -> list[str]:
    """Where Codex reads hooks from: the system requirements (managed) first, then the project
    layer and the user's config."""
    return [
        codex_managed.requirements_path(),
        os.path.join(project, ".codex", "config.toml"),
        os.path.join(home, "config.toml"),
    ]


def check_codex_trust(project: str, hooks: Sequence[InstalledHook]) -> Iterator[Finding]:
    """What Codex says about our hooks."""
    listed = codex_trust.list_hooks(project)
    if isinstance(listed, str):
        yield Finding("fail", SUBJECT, f"cannot ask Codex which hooks it trusts: {listed}")
        return
    requirements = codex_managed.requirements_path()
    managed_only = codex_managed.managed_only(read_text(requirements)) is True
    mine = codex_trust.ours(listed)
    yield from _not_loaded(project, {hook.source for hook in hooks}, mine, requirements, managed_only)
    managed = [hook for hook in mine if hook.managed]
    if {_camel(event) for event, _, _ in HOOK_EVENTS} <= {hook.event for hook in managed}:
        yield from _managed_findings(managed, [hook for hook in mine if not hook.managed], managed_only)
        return
    untrusted = [hook for hook in mine if not hook.trusted]
    if untrusted:
        events = ", ".join(sorted({hook.event for hook in untrusted}))
        yield Finding(
            "fail",
            SUBJECT,
            f"{len(untrusted)} of {len(mine)} dsh-policy hooks are not trusted ({events}); `codex exec` "
            f"skips them without a warning: {codex_trust.TRUST_HINT}; {codex_trust.MANAGED_HINT}",
        )
    elif mine:
        yield Finding("ok", SUBJECT, f"Codex trusts all {len(mine)} dsh-policy hooks")


def _not_loaded(
    project: str,
    configured: set[str],
    mine: Sequence[codex_trust.CodexHook],
    requirements: str,
    managed_only: bool,
) -> Iterator[Finding]:
    for source in sorted(configured - {hook.source_path for hook in mine}):
        if source == requirements:
            yield Finding(
                "fail",
                SUBJECT,
                f"Codex does not load the hooks in {source} (this Codex may read another requirements "
                f"file: Codex 0.171.0 reads {codex_managed.CODEX_REQUIREMENTS})",
            )
        elif managed_only:
            yield Finding(
                "warn",
                SUBJECT,
                f"Codex ignores the dsh-policy hooks in {source} ({codex_managed.MANAGED_ONLY_KEY} = true "
                f"in {requirements}); remove them",
            )
        else:
            yield Finding(
                "fail",
                SUBJECT,
                f"Codex does not load {source} for {project} (a project folder must be trusted "
                "first: run `codex` there once and trust it)",
            )


def _managed_findings(
    managed: Sequence[codex_trust.CodexHook], others: Sequence[codex_trust.CodexHook], managed_only: bool
) -> Iterator[Finding]:
    sources = ", ".join(sorted({hook.source_path for hook in managed}))
    yield Finding(
        "ok",
        SUBJECT,
        f"Codex runs {len(managed)} dsh-policy hooks as managed ({sources}): no trust needed, users "
        "cannot switch them off"
        + (f"; {codex_managed.MANAGED_ONLY_KEY}: user and project hooks are ignored" if managed_only else ""),
    )
    doubled = sorted({hook.source_path for hook in others if hook.trusted})
    if doubled:
        yield Finding(
            "warn",
            SUBJECT,
            f"trusted dsh-policy hooks in {', '.join(doubled)} run too, so every event is decided twice: "
            f"remove them, or set {codex_managed.MANAGED_ONLY_KEY} = true",
        )
    idle = sorted({hook.source_path for hook in others if not hook.trusted})
    if idle:
        where = ", ".join(idle)
        yield Finding("warn", SUBJECT, f"untrusted dsh-policy hooks in {where} never run (managed ones do)")


def check_requirements_file(path: str) -> Iterator[Finding]:
    """Managed hooks are only as safe as the file they live in: it and its folder must belong to
    root and be writable by nobody else."""
    for target in (path, os.path.dirname(path)):
        try:
            info = os.stat(target)
        except OSError as error:
            yield Finding("fail", "managed", f"cannot inspect {target}: {error}")
            return
        if info.st_uid != 0 or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            yield Finding(
                "warn",
                "managed",
                f"{target} (owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}) can be changed "
                "by someone other than root, and so can the managed hooks: make it root's, mode 0644 "
                "(a folder 0755)",
            )


def _camel(event: str) -> str:
    """``PreToolUse`` as ``hooks/list`` spells it (``preToolUse``)."""
    return event[0].lower() + event[1:]
