"""``dsh-policy init claude-code|codex --system``: install the hardened mode (run as root).

Lays out :class:`~.hardened.Layout` with the owners and modes the hardened mode rests on, writes
the client's managed settings with hooks that talk only to the service user's gateway
(``--gateway-socket``, ``--gateway-user``), the systemd unit, and the record ``doctor --hardened``
checks against. An existing deployment file, key or settings entry is kept, never overwritten;
running it for the second client reuses what the first one installed. It does not install the
package: the gateway runs from this installation, which must already be one no other user may
change (``sudo python3 -m venv /opt/dsh-policy`` and ``pip install`` into it); it says so when not.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable

from dsh_policy.policy.hooks.codex import managed as codex_managed
from dsh_policy.policy.hooks.install import hardened
from dsh_policy.policy.hooks.install.hardened import Layout, Record
from dsh_policy.policy.hooks.install.ownership import (
    Trusted,
    groups_of,
    tree_writable_by_others,
    unusable_by,
    writable_by_others,
)
from dsh_policy.policy.hooks.install.settings_files import (
    SettingsError,
    claude_code_hooks,
    codex_hooks_toml,
    merge_claude_code_settings,
    merge_codex_config,
    read_text,
    write_atomically,
)

Say = Callable[[str, str], None]


def install_paths(program: str) -> tuple[str, str, str]:
    """(interpreter, package folder, environment) of this installation."""
    import dsh_policy

    package = os.path.dirname(os.path.realpath(dsh_policy.__file__))
    return os.path.realpath(sys.executable), package, os.path.realpath(sys.prefix)


def install_problems(record: Record, trusted: Trusted) -> list[str]:
    """Why another user could change the installation the gateway and the hooks run."""
    problems = []
    for path in (record.program, record.python):
        problems += writable_by_others(path, trusted)
    problems += tree_writable_by_others(record.package, trusted)
    site = [os.path.join(record.prefix, "bin"), *_site_folders(record.prefix)]
    for folder in site:  # a new sitecustomize.py or .pth there would run in the gateway
        if os.path.isdir(folder):
            problems += writable_by_others(folder, trusted)
    return list(dict.fromkeys(problems))


def unusable_install(record: Record, name: str, uid: int, gid: int) -> list[str]:
    """Why user ``name`` cannot run the installation (the gateway's user, and the agent's, whose
    hooks run the same command): an interpreter under a home folder others cannot enter, say."""
    gids = groups_of(name, gid)
    found = [
        unusable_by(record.program, uid, gids, run=True),
        unusable_by(record.python, uid, gids, run=True),
        unusable_by(os.path.join(record.package, "__init__.py"), uid, gids, run=False),
    ]
    return [f"{name}: {why}" for why in found if why is not None]


def _site_folders(prefix: str) -> list[str]:
    lib = os.path.join(prefix, "lib")
    with contextlib.suppress(OSError):
        return [
            os.path.join(lib, name, "site-packages") for name in os.listdir(lib) if name.startswith("python")
        ]
    return []


def install(client: str, service_user: str, project: str, packs: list[str], program: str, say: Say) -> int:
    """Install (or complete) the hardened deployment for ``client``; 0 when done, 1 otherwise."""
    if os.geteuid() != 0:
        say("FAIL", "init --system must run as root: it gives the deployment to root and the service user")
        return 1
    try:
        account = pwd.getpwnam(service_user)
    except KeyError:
        say(
            "FAIL",
            f"no user {service_user!r} for the gateway; create it first: "
            f"useradd --system --no-create-home --shell /usr/sbin/nologin {service_user}",
        )
        return 1
    layout = Layout(hardened.system_root())
    uid, gid = account.pw_uid, account.pw_gid
    python, package, prefix = install_paths(program)
    previous = hardened.read_record(layout.record)
    record = Record(
        service_user=service_user,
        program=program,
        python=python,
        package=package,
        prefix=prefix,
        socket=layout.socket,
        deployment=layout.deployment,
        key=layout.key,
        public_key=layout.public_key,
        log=layout.log,
        unit=layout.unit,
        clients=dict(previous.clients) if isinstance(previous, Record) else {},
    )
    problems = install_problems(record, Trusted.of(uid, gid))
    problems += unusable_install(record, service_user, uid, gid)
    if problems:
        for problem in problems[:10]:
            say("FAIL", f"the installation is not root's alone: {problem}")
        say(
            "hint",
            "install dsh-policy into a root-owned environment every user may run "
            "(sudo /usr/bin/python3 -m venv /opt/dsh-policy)",
        )
        return 1
    try:
        _folders(layout, uid, gid)
        installed = _packs(layout, packs, say)
        _key(layout, uid, gid, say)
        _log(layout, uid, gid, say)
        if not os.path.exists(layout.deployment):
            _write_root(layout.deployment, _deployment_yaml(layout, installed, project))
            say("wrote", layout.deployment)
        else:
            say("kept", f"{layout.deployment} (an existing deployment file is never overwritten)")
        settings = layout.client_settings(client)
        if _settings(client, settings, record, say):
            return 1
        record.clients[client] = settings
        _ensure_folder(os.path.dirname(layout.unit), 0, 0, 0o755)
        _write_root(layout.unit, hardened.unit_text(record, layout))
        say("wrote", f"{layout.unit} (the gateway as {service_user})")
        _write_root(layout.record, record.to_json())
    except (OSError, SettingsError) as error:
        say("FAIL", str(error))
        return 1
    print("next: systemctl daemon-reload && systemctl enable --now " + hardened.UNIT_NAME)
    print("  or, without systemd: " + hardened.manual_start(record) + " &")
    print("then: dsh-policy doctor --hardened --agent-user <the agent's user>")
    return 0


def _write_root(path: str, text: str) -> None:
    """``path`` replaced by ``text``, root's, 0644 (whatever mode the old file had)."""
    write_atomically(path, text, 0o644)
    os.chown(path, 0, 0)
    os.chmod(path, 0o644)


def _ensure_folder(path: str, uid: int, gid: int, mode: int) -> None:
    """``path`` made (parents root's, 0755) and given to ``uid`` with ``mode``."""
    missing = []
    folder = path
    while not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for made in reversed(missing):
        os.mkdir(made)
        os.chmod(made, 0o755)  # whatever the umask: the service user must pass through
    os.chown(path, uid, gid)
    os.chmod(path, mode)


def _folders(layout: Layout, uid: int, gid: int) -> None:
    _ensure_folder(layout.etc, 0, 0, 0o755)
    _ensure_folder(layout.packs, 0, 0, 0o755)
    _ensure_folder(os.path.dirname(layout.keys), uid, gid, 0o700)
    _ensure_folder(layout.keys, uid, gid, 0o700)
    _ensure_folder(layout.logs, uid, gid, 0o755)
    _ensure_folder(layout.run, uid, gid, 0o755)


def _packs(layout: Layout, packs: list[str], say: Say) -> list[str]:
    """The packs copied under ``/etc/dsh-policy/packs`` (root's): a pack the agent's user can
    edit would be a policy the agent writes."""
    installed = []
    for pack in packs:
        target = os.path.join(layout.packs, os.path.basename(pack))
        if not os.path.exists(target):
            shutil.copyfile(pack, target)
            os.chown(target, 0, 0)
            os.chmod(target, 0o644)
            say("copied", f"{pack} -> {target}")
        installed.append(target)
    return installed


def _key(layout: Layout, uid: int, gid: int, say: Say) -> None:
    """The signing key, the service user's alone; its public half in ``/etc``."""
    from dsh_policy.audit.keys import write_key_pair

    if os.path.exists(layout.key):
        say("kept", f"{layout.key} (a signing key is never replaced)")
    else:
        write_key_pair(layout.key[: -len(".key")])
        os.chown(layout.key, uid, gid)
        os.chmod(layout.key, 0o600)
        say("wrote", f"{layout.key} (mode 0600, the service user's alone)")
    public = layout.key[: -len(".key")] + ".pub"
    if os.path.exists(public):
        shutil.copyfile(public, layout.public_key)
        os.chmod(layout.public_key, 0o644)


def _log(layout: Layout, uid: int, gid: int, say: Say) -> None:
    """The audit log's active file, the service user's, made append-only where ``chattr`` works
    (no rotation in this deployment: a rotation renames the file, which append-only forbids)."""
    if not os.path.exists(layout.log):
        fd = os.open(layout.log, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        os.chown(layout.log, uid, gid)
    chattr = shutil.which("chattr")
    if chattr is None:
        say("note", f"no chattr here: {layout.log} is the service user's, but not append-only")
        return
    done = subprocess.run([chattr, "+a", layout.log], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        say("wrote", f"{layout.log} (append-only: chattr +a)")
    else:
        say("note", f"{layout.log} cannot be made append-only here: {done.stderr.strip()}")


def _deployment_yaml(layout: Layout, packs: list[str], project: str) -> str:
    listed = ", ".join(json.dumps(pack) for pack in packs)
    return (
        "# Written by `dsh-policy init --system`; see docs/hardened.md.\n"
        "apiVersion: dsh-policy/v1\nkind: Gateway\nmetadata:\n  name: hardened\n"
        f"spec:\n  packs: [{listed}]\n"
        f"  params:\n    workspace: {json.dumps(project)}\n"
        f"  audit:\n    path: {json.dumps(layout.log)}\n    fsync: batch\n"
        f"    checkpoint_key: {json.dumps(layout.key)}\n    fail_closed: true\n"
    )


def _settings(client: str, path: str, record: Record, say: Say) -> int:
    """The client's managed hooks (root's, 0644), naming the system gateway; 1 on a problem."""
    extra = hardened.hook_extra(record)
    existing = read_text(path)
    if client == "claude-code":
        hooks = claude_code_hooks(shlex.quote(record.deployment), record.program, extra)
        document = json.loads(merge_claude_code_settings(existing, hooks).text)
        if document.get("allowManagedHooksOnly") is False:
            say(
                "FAIL",
                f"{path} sets allowManagedHooksOnly to false, an administrator's choice: change it by hand",
            )
            return 1
        document["allowManagedHooksOnly"] = True
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        tables = codex_hooks_toml(record.deployment, record.program, extra)
        text = codex_managed.with_managed_only(merge_codex_config(existing, tables).text)
    _ensure_folder(os.path.dirname(path), 0, 0, 0o755)
    if text == (existing or ""):
        say("kept", f"{path} (every hook is already there)")
    else:
        _write_root(path, text)
        say("merged", f"{path}: managed hooks to the gateway at {record.socket}, managed hooks only")
    os.chown(path, 0, 0)
    os.chmod(path, 0o644)
    return 0
