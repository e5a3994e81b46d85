"""``dsh-policy doctor --hardened [--agent-user NAME]``: check, on the live machine, each property
the hardened mode rests on, and name every one that fails.

Read from the record ``init --system`` left (:mod:`.hardened`): who may change the deployment,
its packs, the installation, the managed settings and the unit (root and the service user only,
folders on the way included); who may read the signing key (the service user only); who owns the
audit log and its folder, and whether the log is append-only (where ``lsattr`` can tell); who owns
the socket and its folder, whether the agent's user may connect, and which user the process that
listens there runs as (``SO_PEERCRED`` and ``/proc``); and that the gateway answers.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator

from dsh_policy.policy.hooks.install import hardened
from dsh_policy.policy.hooks.install.doctor import Finding
from dsh_policy.policy.hooks.install.hardened import Layout, Record
from dsh_policy.policy.hooks.install.hardened_install import install_problems, unusable_install
from dsh_policy.policy.hooks.install.ownership import Trusted, readable_by_others, writable_by_others


def findings(agent_user: str | None = None) -> list[Finding]:
    """Every check, in order; a missing record is the only finding then."""
    layout = Layout(hardened.system_root())
    record = hardened.read_record(layout.record)
    if isinstance(record, str):
        return [Finding("fail", "record", record)]
    try:
        service = pwd.getpwnam(record.service_user)
    except KeyError:
        return [Finding("fail", "service user", f"no user {record.service_user!r} (the record names it)")]
    agent: pwd.struct_passwd | None = None
    out: list[Finding] = []
    if agent_user is not None:
        try:
            agent = pwd.getpwnam(agent_user)
        except KeyError:
            out.append(Finding("fail", "agent user", f"no user {agent_user!r}"))
        else:
            if agent.pw_uid in (0, service.pw_uid):
                out.append(Finding("fail", "agent user", f"{agent_user} is root or the gateway's own user"))
    trusted = Trusted.of(service.pw_uid, service.pw_gid)
    out += _unchangeable("record", [layout.record], trusted)
    out += _unchangeable("deployment", [record.deployment], trusted)
    out += _unchangeable("packs", _packs(record.deployment), trusted)
    unusable = unusable_install(record, service.pw_name, service.pw_uid, service.pw_gid)
    if agent is not None:
        unusable += unusable_install(record, agent.pw_name, agent.pw_uid, agent.pw_gid)
    out += _listed("install", install_problems(record, trusted), f"{record.package} and {record.prefix}")
    out += [Finding("fail", "install", why) for why in unusable]
    out += _unchangeable("unit", [record.unit], trusted)
    out += list(_unit(record))
    for client, path in sorted(record.clients.items()):
        out += _unchangeable(f"{client} settings", [path], trusted)
        out += list(_settings(client, path, record))
    out += list(_key(record, service.pw_uid))
    out += list(_log(record, service.pw_uid, trusted))
    out += list(_gateway(record, service, agent))
    return out


def _listed(subject: str, problems: list[str], fine: str) -> list[Finding]:
    if not problems:
        return [Finding("ok", subject, f"{fine}: only root and the service user may change it")]
    return [Finding("fail", subject, problem) for problem in problems[:10]]


def _unchangeable(subject: str, paths: list[str], trusted: Trusted) -> list[Finding]:
    problems = [problem for path in paths for problem in writable_by_others(path, trusted)]
    return _listed(subject, list(dict.fromkeys(problems)), ", ".join(paths) or "(none)")


def _packs(deployment: str) -> list[str]:
    """The packs the deployment file names (absolute against its folder)."""
    import yaml

    try:
        with open(deployment, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
        packs = document["spec"]["packs"]
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError):
        return []
    base = os.path.dirname(deployment)
    return [os.path.join(base, str(pack)) for pack in packs if isinstance(pack, str)]


def _unit(record: Record) -> Iterator[Finding]:
    try:
        with open(record.unit, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        yield Finding("fail", "unit", f"{record.unit}: {error.strerror}")
        return
    if f"User={record.service_user}\n" not in text or f"--socket {record.socket}" not in text:
        yield Finding(
            "fail",
            "unit",
            f"{record.unit} does not run the gateway as {record.service_user} on {record.socket}",
        )
    else:
        yield Finding("ok", "unit", f"{record.unit} runs the gateway as {record.service_user}")


def _settings(client: str, path: str, record: Record) -> Iterator[Finding]:
    """Every PreToolUse hook there names the system gateway; the client runs managed hooks only."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        yield Finding("fail", f"{client} settings", f"{path}: {error.strerror}")
        return
    needle = hardened.hook_extra(record)
    only = '"allowManagedHooksOnly": true' if client == "claude-code" else "allow_managed_hooks_only = true"
    if needle not in text:
        yield Finding("fail", f"{client} settings", f"{path}: no hook names the gateway ({needle})")
    elif only not in text:
        yield Finding(
            "fail", f"{client} settings", f"{path}: user and project hooks still run ({only} is not set)"
        )
    else:
        yield Finding("ok", f"{client} settings", f"{path}: managed hooks only, to {record.socket}")


def _key(record: Record, service_uid: int) -> Iterator[Finding]:
    why = readable_by_others(record.key, service_uid)
    if why is not None:
        yield Finding("fail", "signing key", why)
    else:
        yield Finding("ok", "signing key", f"{record.key}: only the service user may read it")


def _log(record: Record, service_uid: int, trusted: Trusted) -> Iterator[Finding]:
    folder = os.path.dirname(record.log)
    problems = []
    for path in (record.log, folder):
        try:
            owner = os.lstat(path).st_uid
        except OSError as error:
            problems.append(f"{path}: {error.strerror}")
            continue
        if owner != service_uid:
            problems.append(f"{path} belongs to uid {owner}, not the service user (uid {service_uid})")
    problems += writable_by_others(record.log, trusted)
    yield from _listed("audit log", list(dict.fromkeys(problems)), record.log)
    lsattr = shutil.which("lsattr")
    if lsattr is None:
        yield Finding("warn", "audit log", "no lsattr here: cannot tell whether the log is append-only")
        return
    done = subprocess.run([lsattr, "-d", record.log], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        yield Finding("warn", "audit log", f"cannot read its attributes: {done.stderr.strip()}")
    elif "a" not in done.stdout.split()[0]:
        yield Finding("fail", "audit log", f"{record.log} is not append-only (chattr +a {record.log})")
    else:
        yield Finding("ok", "audit log", f"{record.log} is append-only")


def _gateway(
    record: Record, service: pwd.struct_passwd, agent: pwd.struct_passwd | None
) -> Iterator[Finding]:
    """The socket, its folder, who listens there, and the gateway's own answer."""
    from dsh_policy.policy.hooks.gateway import system_gateway

    trusted_owner = Trusted(frozenset({service.pw_uid}), frozenset({0, service.pw_gid}))
    folder = os.path.dirname(record.socket)
    for why in writable_by_others(folder, Trusted.of(service.pw_uid, service.pw_gid)):
        yield Finding("fail", "socket folder", why)
    try:
        info = os.lstat(record.socket)
    except OSError as error:
        yield Finding(
            "fail",
            "gateway",
            f"{record.socket}: {error.strerror} (start it: {hardened.manual_start(record)})",
        )
        return
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid not in trusted_owner.uids:
        yield Finding(
            "fail", "socket", f"{record.socket} is not a socket of {record.service_user} (uid {info.st_uid})"
        )
        return
    if agent is not None and not _may_connect(info, agent):
        yield Finding(
            "fail",
            "socket",
            f"{agent.pw_name} may not connect to {record.socket} (mode {stat.S_IMODE(info.st_mode):04o})",
        )
    connected = system_gateway.connect(record.socket, service.pw_uid, _deadline())
    if isinstance(connected, str):
        yield Finding("fail", "gateway", connected)
        return
    from dsh_policy.policy.hooks.gateway import wire

    try:
        credentials = wire.peer_credentials(connected)
    finally:
        connected.close()
    pid = credentials[0] if credentials is not None else 0
    uids = _process_uids(pid)
    if uids and set(uids) != {service.pw_uid}:
        yield Finding("fail", "gateway", f"pid {pid} runs with uids {uids}, not only {record.service_user}'s")
        return
    status = system_gateway.query(record.socket, "status")
    if isinstance(status, str):
        yield Finding("fail", "gateway", status)
        return
    yield Finding(
        "ok",
        "gateway",
        f"pid {pid} runs as {record.service_user}, policy {status.get('policy_digest', '?')}, "
        f"{status.get('decisions', 0)} decisions",
    )


def _may_connect(info: os.stat_result, agent: pwd.struct_passwd) -> bool:
    groups = {agent.pw_gid, *os.getgrouplist(agent.pw_name, agent.pw_gid)}
    if info.st_uid == agent.pw_uid:
        return bool(info.st_mode & 0o200)
    if info.st_gid in groups:
        return bool(info.st_mode & 0o020)
    return bool(info.st_mode & 0o002)


def _process_uids(pid: int) -> list[int]:
    """Real, effective, saved and filesystem uids of ``pid`` (empty where /proc cannot say)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("Uid:"):
                    return [int(word) for word in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _deadline() -> float:
    import time

    return time.monotonic() + 5.0
