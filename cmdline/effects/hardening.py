"""Effects on the controls host-hardening rule sets watch (found by the blind probe
tests/corpus/probe7, read as classes from auditd's keys, Tetragon's and Tracee's kernel policies,
the CIS items reversed and the ESXi ransomware reports):

- hypervisors: moved to :mod:`hypervisor` (with probe10's classes);
- kernel code loaded without a module: another kernel booted over the running one (``kexec``),
  BPF programs loaded or attached to a network device (``bpftool prog load``, ``tc ... bpf obj``,
  ``ip link set ... xdp obj``) (``privilege``);
- traffic rerouted by the host itself: NAT rules that redirect or masquerade, forwarding and ICMP
  redirects switched on through ``sysctl`` (``tunnel``), inbound firewall holes for outside
  sources (``cloud-exposure``);
- a cluster's API or a service published on every interface (``kubectl proxy|port-forward
  --address 0.0.0.0``), workloads patched to take the host (``kubectl patch`` with host
  namespaces or privileged), Tiller driven directly (``cloud-exposure``, ``remote-exec``);
- a command run on every node a configuration-management search finds (``knife ssh``), load
  generators left running without an end (``outage``), a package installed with its signature
  checks forced off (``dpkg --force-all``, ``tls-off``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.effects.security_products import CLUSTER_AGENTS
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "hardening_command_acts"]


def _kexec(argv: list[str]) -> Iterator[Effect]:
    if any(
        a in ("-l", "--load", "-e", "--exec", "-s", "--kexec-file-syscall", "-p", "--load-panic")
        for a in argv
    ):
        yield _fx("privilege", "boots another kernel over the running one", " ".join(argv[1:]))


def _bpftool(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:2] in (["prog", "load"], ["prog", "loadall"], ["prog", "attach"], ["net", "attach"]):
        yield _fx("privilege", "loads a BPF program into the kernel", " ".join(words[:3]))


def _tc(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    adds = words[:1] == ["filter"] and words[1:2] in (["add"], ["replace"], ["change"])
    if adds and "bpf" in words and ("obj" in words or "object-file" in words):
        yield _fx("privilege", "attaches a BPF program to network traffic", " ".join(words))


def _ip(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:2] == ["link", "set"] and any(w.startswith("xdp") for w in words) and "obj" in words:
        yield _fx("privilege", "attaches an XDP program to a network device", " ".join(words))


_NAT_TARGETS = frozenset({"DNAT", "SNAT", "REDIRECT", "MASQUERADE", "TPROXY"})
_RULE_MATCHES = frozenset({"-p", "-s", "-d", "-i", "-o", "-m", "!"})
_CHAIN_OPTIONS = frozenset({"--append", "--insert", "--jump", "--table", "--wait"})
_PRIVATE_SOURCE = lazy_compile(
    r"^(?:127\.|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.|::1|fe80:|fc|fd|localhost)"
)


def _iptables(argv: list[str]) -> Iterator[Effect]:
    adds = any(a in ("-A", "--append", "-I", "--insert") for a in argv)
    target = _value(argv, "-j", "--jump") or ""
    if adds and target.upper() in _NAT_TARGETS:
        yield _fx("tunnel", f"{argv[0]} rewrites where traffic goes ({target})", " ".join(argv[1:]))
    elif adds and target.upper() == "ACCEPT" and any(a in ("INPUT", "FORWARD") for a in argv):
        source = _value(argv, "-s", "--source", "--src") or ""
        if source and not _PRIVATE_SOURCE.match(source):
            yield _fx("cloud-exposure", f"{argv[0]} opens the host firewall to an outside source", source)
        elif not any(
            a in _RULE_MATCHES or (a.startswith("--") and a not in _CHAIN_OPTIONS) for a in argv[1:]
        ):
            # probe26: `-I INPUT 1 -j ACCEPT` with nothing to match accepts every packet first
            yield _fx("defense-off", f"{argv[0]} accepts all traffic ahead of the firewall's rules", "ACCEPT")


_ROUTING_SWITCHES = lazy_compile(
    r"^net\.ipv[46]\.(?:ip_forward|conf\.[\w*]+\.(?:forwarding|accept_redirects|accept_source_route"
    r"|send_redirects|secure_redirects|proxy_arp))=\s*1$|^net\.ipv[46]\.conf\.[\w*]+\.rp_filter=\s*0$"
)


def _sysctl(argv: list[str]) -> Iterator[Effect]:
    for arg in argv[1:]:
        if _ROUTING_SWITCHES.match(arg.replace("/", ".")):
            yield _fx("tunnel", f"turns the machine into a router or lets others reroute it ({arg})", arg)
            return


_EVERY_INTERFACE = lazy_compile(r"^(?:0\.0\.0\.0|::|\[::\]|\*)$")
_HOST_PATCH = lazy_compile(r'(?i)"?(?:hostPID|hostNetwork|hostIPC|privileged)"?\s*:\s*true|"?hostPath"?\s*:')


def _kubectl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    verb = next((w for w in words if w in ("proxy", "port-forward", "patch", "set")), "")
    address = _value(argv, "--address") or ""
    if verb in ("proxy", "port-forward") and any(
        _EVERY_INTERFACE.match(a.strip()) for a in address.split(",")
    ):
        what = "the cluster's API" if verb == "proxy" else "a cluster service"
        yield _fx("cloud-exposure", f"kubectl {verb} publishes {what} on every interface", address)
    elif verb == "patch":
        body = _value(argv, "-p", "--patch") or ""
        if _HOST_PATCH.search(body):
            yield _fx("cloud-exposure", "kubectl patch gives a workload the host", body[:80])


_POSTURE_OFF = lazy_compile(r"(?i)^kubearmor-[\w-]*posture=(?:audit|allow)$")


def _kube_defences(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    verb = next((w for w in words if w in ("patch", "scale", "annotate", "label")), "")
    if verb in ("annotate", "label") and any(_POSTURE_OFF.match(w) for w in words):
        yield _fx("defense-off", "switches KubeArmor from blocking to audit", " ".join(words[-2:]))
    elif verb in ("patch", "scale") and any(
        w in ("daemonset", "ds", "deployment", "deploy") or w.startswith(("daemonset/", "ds/", "deployment/"))
        for w in words
    ):
        named = " ".join(words[words.index(verb) + 1 :][:3])
        body = (_value(argv, "-p", "--patch") or "") + " " + (_value(argv, "--replicas") or "")
        if CLUSTER_AGENTS.search(named) and (
            re.search(r"nodeSelector|nodeAffinity|\"replicas\"\s*:\s*0", body) or body.strip() == "0"
        ):
            yield _fx("defense-off", "schedules a security agent nowhere", named)


def _launchctl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] == ["setenv"] and words[1:2] and re.match(r"^(?:DYLD_|LD_)\w+$", words[1]):
        yield _fx("persistence", "sets a loader variable for every program the user starts", words[1])
    elif words[:1] == ["config"] and words[1:2] in (["user"], ["system"]) and words[2:3] == ["path"]:
        yield _fx(
            "persistence", "changes the search path of every program launchd starts", " ".join(words[3:4])
        )


_SYSTEM_PROGRAMS = lazy_compile(
    r"^/+(?:usr/+)?(?:local/+)?(?:s?bin|libexec)/+[^/]+$|^/+etc/+(?:passwd|shadow|sudoers)$"
)

_SYSTEM_FOLDERS = lazy_compile(
    r"^/+(?:etc|bin|sbin|lib|lib64|boot|usr(?:/+(?:local/+)?(?:s?bin|lib|lib64))?)/*$"
)
_KERNEL_INTERFACES = lazy_compile(r"^/+(?:sys|proc)(?:/|$)")


def _mount(argv: list[str]) -> Iterator[Effect]:
    options = _value(argv, "-o", "--options") or ""
    targets = [a for a in argv[1:] if a.startswith("/") and a != options]
    bind = "--bind" in argv or "--rbind" in argv or re.search(r"(?:^|,)r?bind(?:,|$)", options)
    if bind and len(targets) >= 2 and _SYSTEM_PROGRAMS.match(targets[-1]):
        # execution hijacked (see hijack.py): every caller of the program runs the other file
        yield _fx("privilege", "replaces a system program by mounting another file over it", targets[-1])
    if (
        "remount" in options
        and re.search(r"(?:^|,)(?:exec|suid|dev)(?:,|$)", options)
        and any(re.match(r"^/+(?:tmp|var/+tmp|dev/+shm)/*$", t) for t in targets)
    ):
        yield _fx(
            "defense-off", "lets a world-writable folder run programs again (noexec removed)", targets[-1]
        )
    # probe26: the same class for the other mount-time guards
    if re.search(r"(?:^|,)hidepid=(?:0|off)(?:,|$)", options):
        shown = targets[-1] if targets else ""
        yield _fx("defense-off", "shows every user's processes to everyone again (hidepid=0)", shown)
    elif bind and len(targets) >= 2 and _SYSTEM_FOLDERS.match(targets[-1]):
        yield _fx("privilege", "mounts another folder over a system folder", targets[-1])
    elif (
        "remount" in options
        and re.search(r"(?:^|,)rw(?:,|$)", options)
        and any(_KERNEL_INTERFACES.match(t) for t in targets)
    ):
        yield _fx("privilege", "makes the kernel's own interfaces writable (/sys, /proc)", targets[-1])


_ACCOUNT_METHODS = lazy_compile(
    r"freedesktop\.Accounts(?:\.User)?[\s.]+(?:CreateUser|SetPassword|SetAccountType)\b"
)


def _dbus(argv: list[str]) -> Iterator[Effect]:
    if _ACCOUNT_METHODS.search(" ".join(argv[1:])):
        yield _fx("account", "creates or changes an account through the accounts daemon", "")


def _dscl(argv: list[str]) -> Iterator[Effect]:
    if "-authonly" in argv:
        yield _fx(
            "secret-hunt", "checks a password against the directory (a stealer validating what it took)", ""
        )


def _capture_to_file(argv: list[str]) -> Iterator[Effect]:
    interface = _value(argv, "-i", "--interface") or ""
    if _value(argv, "-w") and interface and not re.match(r"^lo\d*$", interface):
        yield _fx("input-capture", f"{argv[0]} records the machine's network traffic to a file", interface)


def _remote_desktop(argv: list[str]) -> Iterator[Effect]:
    shares = [a for a in argv[1:] if re.match(r"(?i)^(?:/drive:|\+drives|\+home-drive|/home-drive|disk:)", a)]
    if argv[0] == "rdesktop":
        shares = [
            v for i, a in enumerate(argv[:-1]) if a == "-r" for v in [argv[i + 1]] if v.startswith("disk:")
        ]
    if shares:
        yield _fx("tunnel", f"{argv[0]} shares local folders with a remote desktop", shares[0])


def _relays(argv: list[str]) -> Iterator[Effect]:
    if argv[0] in ("stunnel", "stunnel4") and _value(argv, "-r"):
        yield _fx("tunnel", "stunnel relays a local port to another host", _value(argv, "-r") or "")
    elif argv[0] in ("atftpd", "in.tftpd", "tftpd") and argv[-1:] and re.match(r"^/+$", argv[-1]):
        yield _fx("tunnel", f"{argv[0]} serves the root folder to the network", argv[-1])


def _dpkg(argv: list[str]) -> Iterator[Effect]:
    forced = [a for a in argv[1:] if re.match(r"^--force-(?:all|bad-verify)$", a)]
    if forced and any(a in ("-i", "--install", "--unpack") for a in argv):
        yield _fx("tls-off", "installs a package with its signature checks forced off", forced[0])


def _helm(argv: list[str]) -> Iterator[Effect]:
    host = _value(argv, "--host") or ""
    if re.search(r"tiller|:44134\b", host):
        yield _fx("remote-exec", "helm drives Tiller directly (cluster-admin without credentials)", host)


def _knife(argv: list[str]) -> Iterator[Effect]:
    if _words(argv)[:1] == ["ssh"]:
        yield _fx(
            "remote-exec", "knife runs a command on every node a Chef search finds", " ".join(argv[2:4])
        )


def _stress(argv: list[str]) -> Iterator[Effect]:
    timeout = _value(argv, "-t", "--timeout")
    if timeout is None or re.match(r"^0+[smhdy]?$", timeout):
        yield _fx("outage", f"{argv[0]} exhausts the machine's resources with no end", " ".join(argv[1:5]))


_READERS: dict[str, Callable[[list[str]], Iterator[Effect]]] = {
    "kexec": _kexec,
    "bpftool": _bpftool,
    "tc": _tc,
    "ip": _ip,
    "iptables": _iptables,
    "ip6tables": _iptables,
    "iptables-legacy": _iptables,
    "iptables-nft": _iptables,
    "sysctl": _sysctl,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "launchctl": _launchctl,
    "dpkg": _dpkg,
    "mount": _mount,
    "dbus-send": _dbus,
    "gdbus": _dbus,
    "busctl": _dbus,
    "dscl": _dscl,
    "tcpdump": _capture_to_file,
    "tshark": _capture_to_file,
    "dumpcap": _capture_to_file,
    "xfreerdp": _remote_desktop,
    "wlfreerdp": _remote_desktop,
    "rdesktop": _remote_desktop,
    "stunnel": _relays,
    "stunnel4": _relays,
    "atftpd": _relays,
    "in.tftpd": _relays,
    "helm": _helm,
    "knife": _knife,
    "stress-ng": _stress,
    "stress": _stress,
}


def hardening_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    reader = _READERS.get(argv[0])
    found = list(reader(argv)) if reader is not None else []
    if argv[0] in ("kubectl", "oc"):
        found.extend(_kube_defences(argv))
    return found


COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset(_READERS) | {"kubectl", "oc"}, hardening_command_acts),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
