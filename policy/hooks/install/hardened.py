"""The hardened deployment's layout, and the record ``init --system`` leaves for ``doctor --hardened``.

Where everything lives (docs/hardened.md): the deployment, its packs and the public key under
``/etc/dsh-policy`` (root, read-only to everyone else); the signing key under
``/var/lib/dsh-policy/keys`` (the service user's, mode 0700/0600); the audit log under
``/var/log/dsh-policy`` (the service user's, readable, append-only where ``chattr`` works); the
socket in ``/run/dsh-policy`` (the service user's folder, 0755: others may connect, not replace);
the systemd unit; and each client's managed settings (root's). ``$DSH_POLICY_SYSTEM_ROOT`` moves
all of it under another folder (tests, staging); the clients themselves read only the real paths.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from dsh_policy.policy.hooks.claude_code import managed as claude_managed
from dsh_policy.policy.hooks.codex import managed as codex_managed

ROOT_VARIABLE = "DSH_POLICY_SYSTEM_ROOT"
SERVICE_USER = "dsh-policy"
UNIT_NAME = "dsh-policy-gateway.service"
CLIENTS = ("claude-code", "codex")


def system_root() -> str:
    """The folder the system paths live under: ``/``, or ``$DSH_POLICY_SYSTEM_ROOT``."""
    return os.path.abspath(os.environ.get(ROOT_VARIABLE) or "/")


def _under(root: str, path: str) -> str:
    return path if root == "/" else os.path.join(root, path.lstrip("/"))


@dataclass(frozen=True, slots=True)
class Layout:
    """Every path of a hardened deployment, under ``root``."""

    root: str

    @property
    def etc(self) -> str:
        return _under(self.root, "/etc/dsh-policy")

    @property
    def deployment(self) -> str:
        return os.path.join(self.etc, "gateway.yaml")

    @property
    def packs(self) -> str:
        return os.path.join(self.etc, "packs")

    @property
    def public_key(self) -> str:
        return os.path.join(self.etc, "audit.pub")

    @property
    def record(self) -> str:
        return os.path.join(self.etc, "hardened.json")

    @property
    def keys(self) -> str:
        return _under(self.root, "/var/lib/dsh-policy/keys")

    @property
    def key(self) -> str:
        return os.path.join(self.keys, "audit.key")

    @property
    def logs(self) -> str:
        return _under(self.root, "/var/log/dsh-policy")

    @property
    def log(self) -> str:
        return os.path.join(self.logs, "hooks.jsonl")

    @property
    def run(self) -> str:
        return _under(self.root, "/run/dsh-policy")

    @property
    def socket(self) -> str:
        return os.path.join(self.run, "gateway.sock")

    @property
    def unit(self) -> str:
        return _under(self.root, f"/etc/systemd/system/{UNIT_NAME}")

    def client_settings(self, client: str) -> str:
        """Where the client reads managed hooks (its real path unless the root is moved)."""
        if client == "claude-code":
            real = claude_managed.LINUX_MANAGED_SETTINGS
            return claude_managed.managed_settings_path() if self.root == "/" else _under(self.root, real)
        real = codex_managed.CODEX_REQUIREMENTS
        return codex_managed.requirements_path() if self.root == "/" else _under(self.root, real)


@dataclass(slots=True)
class Record:
    """What ``init --system`` installed, kept in ``/etc/dsh-policy/hardened.json`` (root's)."""

    service_user: str
    program: str  # the dsh-policy command the hooks and the unit run
    python: str  # its interpreter
    package: str  # the dsh_policy package folder it runs
    prefix: str  # its environment (sys.prefix)
    socket: str
    deployment: str
    key: str
    public_key: str
    log: str
    unit: str
    clients: dict[str, str] = field(default_factory=dict)  # client -> its managed settings file

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"


def read_record(path: str) -> Record | str:
    """The record at ``path``, or why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        return Record(**document)
    except FileNotFoundError:
        return f"{path}: missing (run `dsh-policy init <client> --system` as root)"
    except (OSError, ValueError, TypeError) as error:
        return f"{path}: {error}"


def hook_extra(record: Record) -> str:
    """What a hardened hook command adds after ``--config``: the gateway it must talk to."""
    import shlex

    return f"--gateway-socket {shlex.quote(record.socket)} --gateway-user {shlex.quote(record.service_user)}"


def unit_text(record: Record, layout: Layout) -> str:
    """The systemd unit that runs the gateway as the service user."""
    runtime = (
        "RuntimeDirectory=dsh-policy\nRuntimeDirectoryMode=0755\nRuntimeDirectoryPreserve=yes\n"
        if layout.run == "/run/dsh-policy"
        else ""
    )
    return (
        "# Written by `dsh-policy init --system`; see docs/hardened.md.\n"
        "[Unit]\nDescription=dsh-policy gateway (hardened mode)\nAfter=local-fs.target\n\n"
        "[Service]\nType=simple\n"
        f"User={record.service_user}\n"
        f"{runtime}"
        f"ExecStart={record.program} serve --config {record.deployment} --socket {record.socket}\n"
        "Restart=always\nRestartSec=1\nNoNewPrivileges=yes\nUMask=0022\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )


def manual_start(record: Record) -> str:
    """The command that starts the gateway by hand where there is no systemd."""
    return (
        f"runuser -u {record.service_user} -- {record.program} serve --config {record.deployment} "
        f"--socket {record.socket}"
    )
