"""``dsh-policy init codex --managed [FILE] [--managed-only]``: the hooks as Codex managed hooks.

Merges the five hook tables into Codex's system ``requirements.toml`` (default: the file Codex
reads, :func:`~dsh_policy.policy.hooks.codex.managed.requirements_path`), keeping every key and hook
that is there. Managed hooks need no trust and users cannot switch them off, so ``codex exec``
cannot silently run without them. The hook commands name this installation's ``dsh-policy`` and
the deployment file by absolute path: a managed hook runs in whatever folder Codex starts in, and
the user's PATH must not choose the guard. ``--managed-only`` also sets
``allow_managed_hooks_only = true``: Codex then ignores user, project and plugin hooks.
"""

from __future__ import annotations

import os

from dsh_policy.policy.hooks.codex import managed as codex_managed
from dsh_policy.policy.hooks.codex import trust as codex_trust
from dsh_policy.policy.hooks.install.settings_files import (
    SettingsError,
    codex_hooks_toml,
    merge_codex_config,
    write_atomically,
)


def merge_managed(path: str, project: str, deployment: str, *, managed_only: bool) -> int:
    """Write the managed hooks into ``path``; 0 when done (or already there), 1 on any problem."""
    program = codex_managed.dsh_policy_program()
    if program is None:
        _say("FAIL", "cannot find this installation's `dsh-policy` command to name in the hooks")
        return 1
    tables = codex_hooks_toml(deployment, program)
    try:
        with open(path, encoding="utf-8") as handle:
            existing: str | None = handle.read()
    except FileNotFoundError:
        existing = None
    except OSError as error:
        _say("FAIL", f"cannot read {path}: {error}")
        return 1
    try:
        conflicts = codex_managed.conflicting_hooks(existing, tables)
        if conflicts:
            _say(
                "FAIL",
                f"{path} already runs other dsh-policy hooks ({'; '.join(conflicts)}); adding ours "
                "would decide every event twice: edit or remove them, then run init again",
            )
            return 1
        merged = merge_codex_config(existing, tables)
        text = codex_managed.with_managed_only(merged.text) if managed_only else merged.text
    except SettingsError as error:
        _say("FAIL", f"{path}: {error}")
        return 1
    if text != (existing or ""):
        try:
            os.makedirs(os.path.dirname(path) or ".", mode=0o755, exist_ok=True)
            write_atomically(path, text, 0o644)
        except OSError as error:
            _say("FAIL", f"cannot write {path}: {error} (it must belong to root: run init as root)")
            return 1
        what = f"hooks for {', '.join(merged.added)}" if merged.added else "no new hooks"
        only = f", {codex_managed.MANAGED_ONLY_KEY} = true" if managed_only else ""
        _say("merged", f"{path}: {what}{only}")
    else:
        _say("kept", f"{path} (every dsh-policy hook is already there)")
    if not codex_managed.is_codex_requirements(path):
        print(
            f"note    Codex reads only {codex_managed.requirements_path()}: deliver {path} there "
            "(configuration management, MDM); `dsh-policy doctor codex` then checks it"
        )
        return 0
    return _report_managed(project, path)


def _report_managed(project: str, path: str) -> int:
    """What Codex itself says about the hooks now (``hooks/list``)."""
    listed = codex_trust.list_hooks(project)
    if isinstance(listed, str):
        _say("warn", f"cannot ask Codex about its managed hooks: {listed}")
        return 0
    mine = codex_trust.ours(listed)
    managed = [hook for hook in mine if hook.managed and hook.source_path == path]
    if not managed:
        _say("FAIL", f"Codex does not list the hooks in {path} as managed (run `dsh-policy doctor codex`)")
        return 1
    _say(
        "managed",
        f"Codex runs {len(managed)} dsh-policy hooks from {path} as managed: no trust review, "
        "and users cannot switch them off",
    )
    doubled = [hook for hook in mine if not hook.managed and hook.trusted]
    if doubled:
        sources = ", ".join(sorted({hook.source_path for hook in doubled}))
        _say(
            "note",
            f"trusted dsh-policy hooks in {sources} run as well, so every event is decided twice: "
            "remove them, or use --managed-only",
        )
    return 0


def _say(status: str, message: str) -> None:
    print(f"{status:<7} {message}")
