"""What commands do to a hypervisor and the virtual machines on it (VMware ESXi's ``esxcli`` and its
local twin ``localcli``, ``vim-cmd``, ``vmkfstools``; vSphere's ``govc``), read by class from the
ESXi ransomware advisories (probe7, probe10): a locker needs the machines stopped, their snapshots
gone, the host's own protections lowered, a way back in, and its traces hidden.

- machines or the host stopped: a machine killed, powered off, reset or removed from the inventory,
  the host shut down, its management network or a datastore taken away (``outage``); snapshots,
  machines and virtual disks removed (``erase-contents``); a program the host did not install run
  over the datastores under ``/vmfs/volumes`` (``erase-contents``: what an encryptor does);
- protections lowered: only-installed-binaries and secure-boot requirements off, the acceptance
  level lowered, the firewall off, the shell's warning and time-outs and the lock-out after failed
  logins switched off, the remote shell turned on (``defense-off``); unsigned bundles forced in
  (``persistence``); a service's firewall rule opened to every address (``cloud-exposure``);
- a way back in: local accounts added, given the Admin role or a new password (``account``);
- traces hidden: syslog sent elsewhere, its folder moved, audit records off (``log-off``).

The same for libvirt (``virsh``: destroy/shutdown, undefine with its storage, volumes, pools and
snapshots deleted) and Proxmox (``qm``/``pct`` destroy, delsnapshot, stop), and in-place edits
(``sed -i``, ``perl -i``) of files on the datastores, which is how ESXiArgs pointed every ``.vmx``
at disks that were no longer there.

Listing (``vm process list``, ``getallvms``, ``... get``, ``kernel list``) has no effect; a
snapshot made or a machine powered on is ordinary upkeep. ``govc host.esxcli`` runs an esxcli
command on a host and is read as one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "datastore_locker_acts", "hypervisor_command_acts"]

_FALSE = lazy_compile(r"(?i)^(?:false|f|0|no|off)$")
_TRUE = lazy_compile(r"(?i)^(?:true|t|1|yes|on)$")

#: ``system settings advanced set -o OPTION`` -> (the value that weakens it, kind, what it does).
_ADVANCED: tuple[tuple[re.Pattern[str], Callable[[str], bool], str, str], ...] = (
    (
        lazy_compile(r"(?i)^/?UserVars/SuppressShellWarning$"),
        lambda v: v not in ("", "0"),
        "defense-off",
        "hides the warning that the hypervisor's shell is on",
    ),
    (
        lazy_compile(r"(?i)^/?UserVars/ESXiShell(?:Interactive)?TimeOut$"),
        lambda v: v == "0",
        "defense-off",
        "keeps the hypervisor's shell open forever",
    ),
    (
        lazy_compile(r"(?i)^/?Security/AccountLock(?:Failures|Time)$"),
        lambda v: v == "0",
        "defense-off",
        "turns off the lock-out after failed logins to the hypervisor",
    ),
    (
        # the kernel boot option, whatever group path names it (/VMkernel/Boot/, /User/, ...)
        lazy_compile(r"(?i)^(?:/?[\w.]+/)*execInstalledOnly$"),
        lambda v: bool(_FALSE.match(v)),
        "defense-off",
        "lets the hypervisor run binaries it did not install",
    ),
    (
        lazy_compile(r"(?i)^/?Syslog/global/log(?:Host|Dir)$"),
        lambda v: True,
        "log-off",
        "changes where the hypervisor's logs go",
    ),
)
_REQUIREMENTS = ("--require-exec-installed-only", "--require-secure-boot", "-e", "-s")


def _esxcli(argv: list[str]) -> Iterator[Effect]:
    words = " ".join(_words(argv))
    line = " ".join(argv[1:])
    if words.startswith("vm process kill"):
        yield _fx("outage", "kills a running virtual machine", line)
    elif words.startswith("system settings kernel set") and re.search(r"(?i)execInstalledOnly", line):
        if _FALSE.match(_value(argv, "-v", "--value") or ""):
            yield _fx("defense-off", "lets the hypervisor run binaries it did not install", line)
    elif words.startswith("system settings encryption set"):
        if any(_FALSE.match(_value(argv, name) or "") for name in _REQUIREMENTS):
            yield _fx("defense-off", "drops the hypervisor's secure-boot or installed-only requirement", line)
    elif words.startswith("system settings advanced set"):
        option = _value(argv, "-o", "--option") or ""
        value = (_value(argv, "-i", "--int-value", "-s", "--string-value") or "").strip()
        for pattern, weakens, kind, what in _ADVANCED:
            if pattern.match(option) and weakens(value):
                yield _fx(kind, what, option)
    elif words.startswith("network firewall ruleset set"):
        if _TRUE.match(_value(argv, "-a", "--allowed-all") or ""):
            ruleset = _value(argv, "-r", "--ruleset-id") or ""
            yield _fx("cloud-exposure", "opens a hypervisor service's firewall to every address", ruleset)
    elif words.startswith("network firewall"):
        enabled = _value(argv, "-e", "--enabled")
        if (enabled is not None and _FALSE.match(enabled)) or "unload" in words.split():
            yield _fx("defense-off", "turns off the hypervisor's firewall", line)
    elif words.startswith("network ip interface remove") or (
        words.startswith("network ip interface set") and _FALSE.match(_value(argv, "-e", "--enabled") or "")
    ):
        yield _fx("outage", "takes a network interface away from the hypervisor", line)
    elif re.match(r"storage (?:filesystem unmount|vmfs extent remove|nfs(?:41)? remove)", words):
        yield _fx("outage", "takes a datastore away from the hypervisor", line)
    elif words.startswith("system shutdown") and re.search(r"\b(?:poweroff|reboot)\b", words):
        yield _fx("outage", "shuts the hypervisor down", line)
    elif words.startswith("system syslog config set") and _value(argv, "--loghost", "--logdir") is not None:
        yield _fx("log-off", "changes where the hypervisor's logs go", line)
    elif words.startswith("system auditrecords") and "disable" in words.split():
        yield _fx("log-off", "turns off the hypervisor's audit records", line)
    elif words.startswith("system account add") or (
        words.startswith("system account set") and _value(argv, "-p", "--password") is not None
    ):
        yield _fx("account", "adds or changes a hypervisor account", _value(argv, "-i", "--id") or "")
    elif words.startswith("system permission set") and re.match(
        r"(?i)^admin", _value(argv, "-r", "--role") or ""
    ):
        yield _fx("account", "gives an account the hypervisor's Admin role", _value(argv, "-i", "--id") or "")
    elif words.startswith("software acceptance set") and not re.search(
        r"(?i)VMwareCertified|VMwareAccepted", _value(argv, "--level") or ""
    ):
        yield _fx("defense-off", "lowers the hypervisor's software acceptance level", line)
    elif re.match(r"software (?:vib|component) (?:install|update|apply)", words) and any(
        a in ("-f", "--force", "--no-sig-check") for a in argv
    ):
        yield _fx("persistence", "installs an unsigned or forced bundle into the hypervisor", line)


def _vim_cmd(argv: list[str]) -> Iterator[Effect]:
    verb = next((a for a in argv[1:] if "/" in a), "")
    if re.match(r"^vmsvc/+(?:snapshot\.remove(?:all)?|destroy|unregister)$", verb):
        yield _fx("erase-contents", "removes a virtual machine or its snapshots", verb)
    elif re.match(r"^vmsvc/+power\.(?:off|shutdown|suspend|reset|reboot)$", verb):
        yield _fx("outage", "powers off a virtual machine", verb)
    elif re.match(r"^hostsvc/+(?:enable|start)_(?:ssh|esx_shell)$", verb):
        yield _fx("defense-off", "turns on the hypervisor's remote shell", verb)
    elif re.match(r"^hostsvc/+firewall_disable$", verb):
        yield _fx("defense-off", "turns off the hypervisor's firewall", verb)


def _vmkfstools(argv: list[str]) -> Iterator[Effect]:
    if any(a in ("-U", "--deletevirtualdisk") for a in argv):
        yield _fx("erase-contents", "deletes a virtual disk", argv[-1])


_GOVC_OFF = frozenset({"-off", "-s", "-suspend", "-reset", "-r"})
_GOVC_SWITCHES = frozenset({"-k", "-debug", "-json", "-xml", "-dump", "-verbose", "-trace", "-hints"})


def _govc(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    verb = words[0] if words else ""
    if verb == "vm.power" and any(a.split("=")[0] in _GOVC_OFF and not a.endswith("=false") for a in argv):
        yield _fx("outage", "govc powers off virtual machines", " ".join(argv[1:4]))
    elif verb in ("host.shutdown", "host.reboot"):
        yield _fx("outage", "govc shuts a hypervisor down", verb)
    elif verb == "host.esxcli":
        rest = argv[argv.index("host.esxcli") + 1 :]
        while rest and rest[0].startswith("-"):  # govc's own flags come first: -host NAME, -k, -u=URL
            rest = rest[1:] if "=" in rest[0] or rest[0] in _GOVC_SWITCHES else rest[2:]
        yield from _esxcli(["esxcli", *rest])


_VIRSH_DESTROYING = frozenset(
    {"vol-delete", "vol-wipe", "pool-delete", "snapshot-delete", "checkpoint-delete", "managedsave-remove"}
)
_VIRSH_STOPPING = frozenset({"destroy", "shutdown", "reset", "suspend", "pool-destroy", "net-destroy"})


def _virsh(argv: list[str]) -> Iterator[Effect]:
    """libvirt's client: the KVM/QEMU twin of ``vim-cmd`` - machines stopped, removed with their
    storage, volumes and snapshots deleted."""
    words = _words(argv)
    verb = next((w for w in words if not w.startswith("qemu")), "")
    if verb == "undefine" and any(
        a.startswith(("--remove-all-storage", "--storage", "--wipe-storage", "--snapshots-metadata"))
        for a in argv
    ):
        yield _fx(
            "erase-contents", "removes a virtual machine with its disks or snapshots", " ".join(words[:2])
        )
    elif verb in _VIRSH_DESTROYING:
        yield _fx(
            "erase-contents",
            f"virsh {verb} deletes virtual machine storage or snapshots",
            " ".join(words[:2]),
        )
    elif verb in _VIRSH_STOPPING:
        yield _fx("outage", f"virsh {verb} stops a virtual machine, pool or network", " ".join(words[:2]))


def _proxmox(argv: list[str]) -> Iterator[Effect]:
    """Proxmox's ``qm`` (machines) and ``pct`` (containers): destroyed with ``--purge``/disks,
    snapshots deleted, stopped."""
    words = _words(argv)
    verb = words[0] if words else ""
    if verb in ("destroy", "delsnapshot"):
        yield _fx(
            "erase-contents",
            f"{argv[0]} {verb} removes a virtual machine or its snapshot",
            " ".join(words[:2]),
        )
    elif verb in ("stop", "shutdown", "reset", "suspend"):
        yield _fx("outage", f"{argv[0]} {verb} stops a virtual machine", " ".join(words[:2]))


_READERS: dict[str, Callable[[list[str]], Iterator[Effect]]] = {
    "esxcli": _esxcli,
    "localcli": _esxcli,
    "vim-cmd": _vim_cmd,
    "vmkfstools": _vmkfstools,
    "govc": _govc,
    "virsh": _virsh,
    "qm": _proxmox,
    "pct": _proxmox,
}

_DATASTORES = lazy_compile(r"/vmfs/+volumes\b")
_DROPPED = lazy_compile(r"(?:^|[\s;&|(`])(?:\./|/tmp/|/var/tmp/|/dev/shm/|/scratch/)[\w.-]+")


def _edits_in_place(argv: list[str]) -> bool:
    return (
        argv[0] == "sed"
        and any(a.startswith(("-i", "--in-place")) or re.match(r"^-[a-zA-Z]*i", a) for a in argv)
    ) or (argv[0] == "perl" and any(re.match(r"^-[a-zA-Z]*i", a) for a in argv))


def hypervisor_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    reader = _READERS.get(argv[0])
    return list(reader(argv)) if reader is not None else []


def datastore_locker_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """A line that names the hypervisor's datastores and runs a program from a scratch folder or the
    current one (``./encrypt /vmfs/volumes``, a loop over ``esxcli storage filesystem list`` feeding
    ``/tmp/x``): nothing the host installed reads every machine's disks that way; lockers do."""
    if "/vmfs/" not in line or not _DATASTORES.search(line):
        return
    if any(_edits_in_place(c) for c in commands):
        # ESXiArgs: every .vmx on the datastores rewritten to point at disks that are not there
        yield _fx("erase-contents", "rewrites files on the hypervisor's datastores in place", "/vmfs/volumes")
        return
    programs = {c[0] for c in commands if c}
    for found in _DROPPED.finditer(line):
        path = found.group(0).strip(" ;&|(`")
        if path.rsplit("/", 1)[-1] in programs:
            yield _fx(
                "erase-contents",
                "runs a program the hypervisor did not install over its virtual machines' datastores",
                path,
            )
            return


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset(_READERS), hypervisor_command_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
