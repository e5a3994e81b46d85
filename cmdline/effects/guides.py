"""Effects of the Linux hardening guides' controls undone through the tools that own them (found by
the blind probe tests/corpus/probe26, read as classes from the CIS Benchmarks, the DISA STIGs,
ComplianceAsCode's rules, the KSPP's recommended settings, kernel-hardening-checker and ANSSI's
GNU/Linux guide, each control reversed):

- ``defense-off`` for the **kernel command line weakened by a boot tool** rather than a file
  write: ``grubby --args``/``--remove-args``, ``kernelstub -a``/``-d``, ``rpm-ostree kargs
  --append``/``--delete``/``--replace``, ``grub2-editenv - set kernelopts=``: CPU mitigations off
  (``mitigations=off``, ``nopti``, ``nospectre_v2``, ``l1tf=off``...), the LSMs off (``selinux=0``,
  ``enforcing=0``, ``apparmor=0``, ``security=``), auditing off (``audit=0``), lockdown and module
  signatures off, KASLR and the allocator hardening off, the IOMMU off; or the hardening options
  (``audit=1``, ``lockdown=...``, ``module.sig_enforce=1``, ``init_on_free=1``...) removed;
- ``defense-off`` for **SELinux weakened below the enforcing switch**: a domain made permissive
  (``semanage permissive -a``), a shipped policy module disabled (``semodule -d``), a hardening
  boolean turned the wrong way (``setsebool -P deny_ptrace off``, ``secure_mode_insmod off``, any
  ``*_execmem``/``*_execstack``/``*_execheap``/``*_execmod on``), a file labelled to run
  unconfined (``chcon -t unconfined_exec_t``, ``semanage fcontext -a -t unconfined_exec_t``);
- ``defense-off`` for **PAM protections removed by the distribution's own tools**: ``authselect``
  selecting or enabling ``with-nullok`` or disabling ``with-faillock``/``with-pwhistory``,
  ``pam-auth-update --disable``/``--remove`` of faillock, pwquality, pwhistory, tally, cracklib,
  the older ``authconfig --enablenullok``/``--disablefaillock``/``--passalgo=md5``;
- ``account`` for a **system account given a way in**: a login shell for ``www-data``,
  ``nobody``, ``daemon``... (``usermod -s /bin/bash``, ``chsh -s``), such an account or root
  unlocked (``usermod -U``) or its expiry removed (``usermod -e ''``/``-e -1``);
- ``defense-off`` for **firewalls opened by rule rather than switched off**: a firewalld zone's
  target set to ACCEPT, an interface or source moved into the ``trusted`` zone, a rich rule that
  accepts everything from everywhere, an nft rule in the input or forward chain with nothing to
  match but ``accept``; ``cloud-exposure`` for a ufw deny/reject/limit rule deleted;
- ``defense-off`` for **time synchronisation stopped** (``timedatectl set-ntp false``), an SSH
  server started with its protections overridden on the command line (``sshd -o
  PermitRootLogin=yes``, ``PermitEmptyPasswords=yes``, ``StrictModes=no``), a shared scratch
  folder made world-writable without its sticky bit (``chmod 0777 /tmp``), and other users given
  write access to system files through ACLs (``setfacl -m o::rwx /etc/...``);
- ``cloud-exposure`` for **legacy cleartext servers installed** (telnetd, rsh-server, tftpd, NIS,
  talkd) and hardening masks lifted from network services (``systemctl unmask rpcbind``,
  ``avahi-daemon``, ``telnet.socket``); ``privilege`` for the root debug shell on tty9 enabled
  (``systemctl enable debug-shell``).

The secure direction of each (``grubby --args=audit=1``, ``semanage permissive -d``,
``setsebool -P deny_ptrace on``, ``authselect enable-feature with-faillock``, ``usermod -s
/usr/sbin/nologin``, ``timedatectl set-ntp true``, ``chmod 1777 /tmp``) stays ordinary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "guide_command_acts"]

# ----------------------------------------------------------------- the kernel command line
_WEAK_BOOT_ARG = lazy_compile(
    r"(?i)^(?:mitigations=off|selinux=0|enforcing=0|apparmor=0|security=(?:none)?|audit=0|lockdown=none"
    r"|module\.sig_enforce=0|nokaslr|nopti|pti=off|kpti=0|nosmep|nosmap|nospectre_v[12]|nospectre_bhb"
    r"|nospec_store_bypass_disable|nobp=0|noibrs|noibpb|(?:spectre_v2|spectre_v2_user|spectre_bhi"
    r"|spec_store_bypass_disable|l1tf|mds|tsx_async_abort|mmio_stale_data|retbleed|srbds"
    r"|gather_data_sampling|spec_rstack_overflow|reg_file_data_sampling|spectre_v1|kvm\.nx_huge_pages"
    r"|randomize_kstack_offset)=(?:off|0)|vsyscall=emulate|debugfs=on|ima_appraise=(?:off|fix)"
    r"|(?:intel_|amd_)?iommu=off|init_on_(?:alloc|free)=0|slab_nomerge=0|page_alloc\.shuffle=0"
    r"|ipe\.enforce=0|lsm=(?!.*(?:selinux|apparmor|smack|tomoyo)).*)$"
)
"""Arguments that switch a protection off (``vsyscall=emulate``/``debugfs=on`` re-open what the
KSPP closes; ``ima_appraise=off|fix`` stops appraisal; an ``lsm=`` list without a major LSM)."""
_HARDENING_BOOT_ARG = lazy_compile(
    r"(?i)^(?:audit=1|lockdown=\w+|module\.sig_enforce=1|slab_nomerge|init_on_(?:alloc|free)=1"
    r"|page_alloc\.shuffle=1|pti=on|randomize_kstack_offset=(?:on|1)|apparmor=1|selinux=1|enforcing=1"
    r"|security=(?:apparmor|selinux)|(?:intel_|amd_)?iommu=(?:on|force)|mitigations=auto(?:,nosmt)?"
    r"|vsyscall=none|debugfs=off|ima_appraise=enforce|lsm=.+|efi=disable_early_pci_dma)$"
)
"""Arguments whose removal undoes a hardening guide's boot setting."""


def _split_args(values: list[str]) -> list[str]:
    return [a.strip("\"'") for v in values for a in v.split()]


def _all_values(argv: list[str], *names: str) -> list[str]:
    found: list[str] = []
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                found.append(argv[i + 1])
            elif name.startswith("--") and arg.startswith(name + "="):
                found.append(arg[len(name) + 1 :])
    return found


def _boot_args(added: list[str], removed: list[str], tool: str) -> Iterator[Effect]:
    weak = next((a for a in _split_args(added) if _WEAK_BOOT_ARG.match(a)), None)
    gone = next((a for a in _split_args(removed) if _HARDENING_BOOT_ARG.match(a)), None)
    if weak:
        yield _fx("defense-off", f"{tool} switches a kernel protection off at boot ({weak})", weak)
    elif gone:
        yield _fx("defense-off", f"{tool} removes a hardening option from the kernel command line", gone)


def _grubby(argv: list[str]) -> Iterator[Effect]:
    yield from _boot_args(_all_values(argv, "--args"), _all_values(argv, "--remove-args"), "grubby")


def _kernelstub(argv: list[str]) -> Iterator[Effect]:
    added = _all_values(argv, "-a", "--add-options")
    removed = _all_values(argv, "-d", "--delete-options")
    yield from _boot_args(added, removed, "kernelstub")


def _rpm_ostree(argv: list[str]) -> Iterator[Effect]:
    if _words(argv)[:1] == ["kargs"]:
        added = _all_values(argv, "--append", "--append-if-missing", "--replace")
        removed = _all_values(argv, "--delete", "--delete-if-present")
        yield from _boot_args(added, removed, "rpm-ostree kargs")


def _grub_editenv(argv: list[str]) -> Iterator[Effect]:
    settings = [a.partition("=")[2] for a in argv[1:] if a.startswith(("kernelopts=", "GRUB_CMDLINE"))]
    if "set" in argv and settings:
        yield from _boot_args(settings, [], argv[0])


# ----------------------------------------------------------------- SELinux below the switch
_ON = frozenset({"on", "1", "true"})
_OFF = frozenset({"off", "0", "false"})
_GUARD_BOOLEANS = frozenset(
    {"deny_ptrace", "deny_execmem", "secure_mode_insmod", "secure_mode_policyload", "secure_mode",
     "deny_bluetooth", "polyinstantiation_enabled"}
)  # fmt: skip
"""Booleans that protect when on: off weakens."""
_OPENING_BOOLEAN = lazy_compile(
    r"^(?:\w+_exec(?:mem|stack|heap|mod)|allow_exec\w+|mmap_low_allowed|ssh_sysadm_login"
    r"|domain_kernel_load_modules|selinuxuser_direct_dri_enabled|unconfined_login|allow_ptrace"
    r"|domain_can_write_kmsg|use_\w*_home_dirs_as_root)$"
)
"""Booleans that open a door when on."""
_UNCONFINED_TYPE = lazy_compile(r"(?:^|:)(?:unconfined_\w+|\w+_unconfined_t|spc_t|kernel_t|initrc_t)(?::|$)")


def _weak_boolean(name: str, value: str) -> bool:
    value = value.lower()
    return (name in _GUARD_BOOLEANS and value in _OFF) or (
        _OPENING_BOOLEAN.match(name) is not None and value in _ON
    )


def _setsebool(argv: list[str]) -> Iterator[Effect]:
    rest = [a for a in argv[1:] if not a.startswith("-")]
    pairs = [tuple(a.split("=", 1)) for a in rest if "=" in a]
    pairs += [(rest[i], rest[i + 1]) for i in range(len(rest) - 1) if "=" not in rest[i] + rest[i + 1]]
    weak = next((name for name, value in pairs if _weak_boolean(name, value)), None)
    if weak:
        yield _fx("defense-off", f"setsebool turns an SELinux protection off ({weak})", weak)


def _semanage(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    adds = any(a in ("-a", "--add", "-m", "--modify") for a in argv)
    kind = _value(argv, "-t", "--type") or ""
    if words[:1] == ["permissive"] and adds:
        yield _fx("defense-off", "semanage makes an SELinux domain permissive", " ".join(words[1:2]))
    elif words[:1] == ["fcontext"] and adds and _UNCONFINED_TYPE.search(kind):
        yield _fx("defense-off", "semanage labels files to run unconfined by SELinux", kind)
    elif words[:1] == ["boolean"] and words[1:2]:
        value = "on" if any(a in ("--on", "-1") for a in argv) else "off" if any(
            a in ("--off", "-0") for a in argv) else ""  # fmt: skip
        if value and _weak_boolean(words[-1], value):
            yield _fx("defense-off", f"semanage turns an SELinux protection off ({words[-1]})", words[-1])


def _chcon(argv: list[str]) -> Iterator[Effect]:
    kind = _value(argv, "-t", "--type") or next((a for a in argv[1:] if _UNCONFINED_TYPE.search(a)), "")
    if _UNCONFINED_TYPE.search(kind):
        yield _fx("defense-off", "chcon labels a file to run unconfined by SELinux", kind)


def _semodule(argv: list[str]) -> Iterator[Effect]:
    disabled = _value(argv, "-d", "--disable")
    if disabled:
        yield _fx("defense-off", "semodule disables an SELinux policy module", disabled)


# ----------------------------------------------------------------- PAM through the distribution's tools
_PAM_GUARDS = lazy_compile(
    r"(?i)(?:faillock|pwquality|pwhistory|tally2?|cracklib|passwdqc|u2f|oath|google-authenticator)"
)


def _authselect(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] in (["select"], ["enable-feature"]) and "with-nullok" in words:
        yield _fx("defense-off", "authselect lets accounts with empty passwords log in", "with-nullok")
    elif words[:1] == ["disable-feature"] and any(
        re.match(r"^with-(?:faillock|pwhistory)$", w) for w in words
    ):
        yield _fx("defense-off", "authselect turns off a login protection", words[-1])


_AUTHCONFIG_WEAK = lazy_compile(
    r"^--(?:enablenullok|disablefaillock|disableshadow|enablemd5|passalgo=(?:md5|descrypt|bigcrypt)"
    r"|passminlen=[0-7])$"
)


def _authconfig(argv: list[str]) -> Iterator[Effect]:
    weak = next((a for a in argv[1:] if _AUTHCONFIG_WEAK.match(a)), None)
    if weak:
        yield _fx("defense-off", "authconfig weakens how logins are checked", weak)


def _pam_auth_update(argv: list[str]) -> Iterator[Effect]:
    removed = _all_values(argv, "--disable", "--remove")
    if any(_PAM_GUARDS.search(r) for r in removed):
        yield _fx("defense-off", "pam-auth-update turns off a login protection", " ".join(removed))


# ----------------------------------------------------------------- system accounts given a way in
_SYSTEM_ACCOUNT = lazy_compile(
    r"^(?:daemon|bin|sys|sync|games|man|lp|mail|news|uucp|proxy|www-data|backup|list|irc|gnats|nobody"
    r"|nfsnobody|messagebus|sshd|syslog|uuidd|tcpdump|tss|dnsmasq|avahi|ftp|apache|nginx|httpd|mysql"
    r"|redis|mongodb|rpc|rpcuser|operator|adm|halt|shutdown|dbus|polkitd|chrony|ntp|systemd-[\w-]+|_\w+)$"
)
_NO_LOGIN = lazy_compile(r"(?:^|/)(?:nologin|false|true)$")


def _account_doors(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    target = argv[-1] if len(argv) > 1 else ""
    system = _SYSTEM_ACCOUNT.match(target) is not None
    shell = _value(argv, "-s", "--shell")
    if shell and system and not _NO_LOGIN.search(shell):
        yield _fx("account", f"{tool} gives a system account a login shell", target)
    elif tool == "usermod" and (system or target == "root"):
        expiry = _value(argv, "-e", "--expiredate")
        if any(a in ("-U", "--unlock") for a in argv) or expiry in ("", "-1"):
            yield _fx("account", "usermod unlocks a system account or removes its expiry", target)


# ----------------------------------------------------------------- firewalls opened by rule
_RICH_NARROWING = lazy_compile(r"\b(?:service|port|forward-port|protocol|icmp-block|icmp-type|destination)\b")
_EVERY_SOURCE = lazy_compile(r"\bsource\s+address=[\"']?(?:0\.0\.0\.0/0|::/0)\b")


def _firewall_cmd(argv: list[str]) -> Iterator[Effect]:
    target = _value(argv, "--set-target") or ""
    zone = _value(argv, "--zone") or ""
    rich = " ".join(_all_values(argv, "--add-rich-rule"))
    if target.upper() == "ACCEPT":
        yield _fx("defense-off", "firewall-cmd makes a zone accept all traffic", zone)
    elif (
        re.search(r"\baccept\b", rich)
        and not _RICH_NARROWING.search(rich)
        and (_EVERY_SOURCE.search(rich) or "source" not in rich)
    ):
        yield _fx("defense-off", "firewall-cmd adds a rule accepting all traffic", rich[:80])
    elif zone == "trusted" and any(
        a.startswith(("--add-interface", "--change-interface", "--add-source", "--change-source"))
        for a in argv
    ):
        yield _fx("defense-off", "firewall-cmd moves traffic into the trusted zone (no filtering)", zone)


_NFT_BARE = frozenset({"counter", "accept", "log"})


def _nft(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    # `nft add|insert rule FAMILY TABLE CHAIN [counter] accept`: nothing to match, every packet
    if words[:2] in (["add", "rule"], ["insert", "rule"]) and len(words) >= 6:
        chain, statement = words[4].lower(), words[5:]
        if chain in ("input", "forward") and "accept" in statement and set(statement) <= _NFT_BARE:
            yield _fx("defense-off", "nft accepts all traffic ahead of the firewall's rules", chain)


def _ufw(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] == ["delete"] and words[1:2] in (["deny"], ["reject"], ["limit"]):
        yield _fx("cloud-exposure", "ufw deletes a rule that blocked traffic", " ".join(words[1:]))


# ----------------------------------------------------------------- time, sshd, shared folders, ACLs
def _timedatectl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] == ["set-ntp"] and words[1:2] and words[1].lower() in ("false", "0", "no", "off"):
        yield _fx("defense-off", "timedatectl stops time synchronisation", "set-ntp")


_WEAK_SSHD_OPTION = lazy_compile(
    r"(?i)^(?:permitrootlogin=yes|permitemptypasswords=yes|strictmodes=no|gatewayports=yes"
    r"|authorizedkeyscommanduser=root|hostbasedauthentication=yes|ignorerhosts=no)$"
)


def _sshd(argv: list[str]) -> Iterator[Effect]:
    options = [v.replace(" ", "=") for v in _all_values(argv, "-o")]
    weak = next((o for o in options if _WEAK_SSHD_OPTION.match(o)), None)
    if weak:
        yield _fx("defense-off", "starts an SSH server with a protection overridden", weak)


_SHARED_SCRATCH = lazy_compile(r"^/+(?:tmp|var/+tmp|dev/+shm)/*$")
_SYSTEM_TREE = lazy_compile(r"^/+(?:etc|usr|boot|bin|sbin|lib|lib64|root|var/+spool/+cron)(?:/|$)")


def _chmod(argv: list[str]) -> Iterator[Effect]:
    operands = [a for a in argv[1:] if not a.startswith("-")]
    mode = operands[0] if operands else ""
    if re.match(r"^[0-7]{3,4}$", mode) and int(mode[-1]) & 2:
        sticky = len(mode) == 4 and int(mode[0]) & 1
        folder = next((t for t in operands[1:] if _SHARED_SCRATCH.match(t)), None)
        if folder and not sticky:
            yield _fx("defense-off", "makes a shared folder world-writable without its sticky bit", folder)


def _setfacl(argv: list[str]) -> Iterator[Effect]:
    entries = _all_values(argv, "-m", "--modify", "--set")
    grants = any(re.search(r"(?:^|,)(?:o|other|u|user|g|group|m|mask):[^:,]*:[r-]?w", e) for e in entries)
    target = next((a for a in argv[1:] if _SYSTEM_TREE.match(a)), None)
    if grants and target:
        yield _fx("defense-off", "setfacl lets other users write system files", target)


# ----------------------------------------------------------------- services and packages
_LEGACY_SERVERS = lazy_compile(
    r"^(?:telnetd|telnetd-ssl|inetutils-telnetd|telnet-server|rsh-server|rsh-redone-server|rsh-server-\w+"
    r"|tftpd|tftpd-hpa|atftpd|tftp-server|nis|ypserv|talkd|inetutils-talkd|rwhod|fingerd|inetutils-inetd)$"
)
_INSTALLERS = frozenset({"apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "apk"})
_HARDENED_OFF_UNITS = lazy_compile(
    r"^(?:rpcbind|avahi-daemon|telnet|rsh|rlogin|rexec|tftp|xinetd|ypbind|ypserv|rpc-statd|nfs-server"
    r"|snmpd|vsftpd|cups|cups-browsed)(?:\.(?:service|socket))?$"
)


def _installs(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] in (["install"], ["add"], ["in"]):
        legacy = next((w for w in words[1:] if _LEGACY_SERVERS.match(w.split("=")[0])), None)
        if legacy:
            yield _fx("cloud-exposure", "installs a cleartext remote-login or file-transfer server", legacy)


def _systemctl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if "unmask" in words:
        unit = next((w for w in words if _HARDENED_OFF_UNITS.match(w)), None)
        if unit:
            yield _fx("cloud-exposure", "lifts a hardening mask from a network service", unit)
    if any(w in ("enable", "start") for w in words) and any(
        re.match(r"^debug-shell(?:\.service)?$", w) for w in words
    ):
        yield _fx("privilege", "starts a root shell on a console (debug-shell)", "debug-shell")


_READERS: dict[str, Callable[[list[str]], Iterator[Effect]]] = {
    "grubby": _grubby,
    "kernelstub": _kernelstub,
    "rpm-ostree": _rpm_ostree,
    "grub2-editenv": _grub_editenv,
    "grub-editenv": _grub_editenv,
    "setsebool": _setsebool,
    "semanage": _semanage,
    "chcon": _chcon,
    "semodule": _semodule,
    "authselect": _authselect,
    "pam-auth-update": _pam_auth_update,
    "authconfig": _authconfig,
    "nft": _nft,
    "usermod": _account_doors,
    "chsh": _account_doors,
    "firewall-cmd": _firewall_cmd,
    "ufw": _ufw,
    "timedatectl": _timedatectl,
    "sshd": _sshd,
    "chmod": _chmod,
    "setfacl": _setfacl,
    "systemctl": _systemctl,
    **dict.fromkeys(_INSTALLERS, _installs),
}


def guide_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    reader = _READERS.get(argv[0])
    return list(reader(argv)) if reader is not None else []


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset(_READERS), guide_command_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
