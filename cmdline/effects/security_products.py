"""Security and logging products, one record each, and the views the readers match names against.

A reader that sees a defence switched off meets a product under one of five names: the package a
package manager removes (``falcon-sensor``), the folder its uninstaller runs from
(``/opt/CrowdStrike``), the process a kill looks up (``falcond``), the in-cluster workload a
``kubectl patch`` schedules nowhere (``falcon-node-sensor``) or the control program that unloads
it (``falconctl``). Each reader used to hold its own list; this table holds them per product, so a
product added for one shape sits next to the names it is still missing in the others.

A name ending in ``*`` stands for every name it starts (``sophos*``), as each shape spells names:
any non-space characters for a package, word characters for a process. Folders and cluster
workloads are searched for the name anywhere (``/opt/sophos-spl/bin``), regardless of case;
package names are whole and case-insensitive, process names whole and exact, control programs
exact base names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = [
    "CLUSTER_AGENTS",
    "CONTROL_PROGRAMS",
    "DAEMON_NAMES",
    "INSTALL_FOLDERS",
    "PACKAGE_NAMES",
    "PRODUCTS",
    "SecurityProduct",
]


@dataclass(frozen=True, slots=True)
class SecurityProduct:
    """One product's names in each shape a reader meets it (empty where none is known)."""

    name: str
    packages: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    daemons: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    controls: tuple[str, ...] = ()


_P = SecurityProduct
PRODUCTS: Final[tuple[SecurityProduct, ...]] = (
    # endpoint detection and response
    _P("CrowdStrike Falcon", packages=("falcon-sensor",), folders=("crowdstrike", "falcon"),
       daemons=("falcon-sensor", "falcond", "falcon", "csfalconservice"), agents=("crowdstrike", "falcon"),
       controls=("falconctl", "falcon-kernel-check")),
    _P("SentinelOne", packages=("sentinelagent", "sentinelone*"), folders=("sentinel",),
       daemons=("sentinel*", "SentinelAgent"), agents=("sentinel",), controls=("sentinelctl", "sentinelone")),
    _P("Microsoft Defender for Endpoint", packages=("mdatp",), folders=("mdatp", "defender"),
       daemons=("mdatp", "wdavdaemon", "msmpeng", "mssense", "senseir", "nissrv", "securityhealthservice"),
       controls=("mdatp", "wdavdaemon")),
    _P("Carbon Black", packages=("cbagentd", "carbonblack*", "cb-psc-sensor"), folders=("carbonblack",),
       daemons=("cbagentd", "cbdaemon", "repmgr"), controls=("cbagentd",)),
    _P("Elastic Agent and Endpoint", packages=("elastic-agent", "elastic-endpoint"),
       folders=("elastic/endpoint", "elastic-endpoint", "elastic/agent", "elastic-agent"),
       daemons=("elastic-agent", "elastic-endpoint"), controls=("elastic-agent", "elastic-endpoint")),
    _P("Sophos", packages=("sophos*", "savdid"), folders=("sophos",), daemons=("sophos*",),
       controls=("savdctl", "sophos-spl", "wdctl")),  # wdctl: /opt/sophos-spl/bin's watchdog control
    _P("Cylance", packages=("cylance*",), folders=("cylance",), daemons=("cylancesvc",),
       controls=("cylancesvc",)),
    _P("Tanium", packages=("taniumclient",), folders=("tanium",), controls=("taniumclient",)),
    _P("FireEye/Trellix HX", packages=("xagt",), folders=("fireeye", "xagt"), daemons=("xagt",),
       controls=("xagt",)),
    _P("McAfee/Trellix", folders=("mcafee", "trellix")),
    _P("Palo Alto Cortex XDR", folders=("cortex", "traps")),
    _P("Trend Micro", folders=("trendmicro", "trend micro")),
    _P("ESET", folders=("eset",), daemons=("ESets*",)),
    _P("Kaspersky", folders=("kaspersky",)),
    _P("Bitdefender", folders=("bitdefender",)),
    _P("Symantec", folders=("symantec",)),
    _P("Huntress", folders=("huntress",)),
    _P("Rapid7", folders=("rapid7",)),
    _P("Qualys", folders=("qualys",)),
    _P("Tenable", folders=("tenable",)),
    _P("Jamf", packages=("jamf*",), folders=("jamf",), daemons=("jamf*",), controls=("jamf",)),
    _P("Santa", packages=("santa",), daemons=("santa", "santad"), controls=("santactl",)),
    # host intrusion detection, integrity and malware scanning
    _P("Wazuh", packages=("wazuh-agent",), folders=("wazuh",), daemons=("wazuh-agent", "wazuh-agentd"),
       agents=("wazuh",), controls=("wazuh-control",)),
    _P("OSSEC", packages=("ossec-hids*",), folders=("ossec",), daemons=("ossec*",),
       controls=("ossec-control",)),
    _P("osquery", packages=("osquery",), folders=("osquery",), daemons=("osqueryd",),
       controls=("osqueryctl",)),
    _P("Linux audit", packages=("auditd", "audit"), daemons=("auditd",)),
    _P("Sysmon", daemons=("sysmon", "sysmon64")),
    _P("AIDE", packages=("aide",), daemons=("aide",)),
    _P("Tripwire", packages=("tripwire",), daemons=("tripwire",)),
    _P("ClamAV", packages=("clamav*",), daemons=("clamd", "freshclam")),
    _P("rkhunter", packages=("rkhunter",)),
    _P("chkrootkit", packages=("chkrootkit",)),
    _P("Lynis", packages=("lynis",)),
    _P("fail2ban", packages=("fail2ban",), daemons=("fail2ban-server",), controls=("fail2ban-client",)),
    _P("CrowdSec", packages=("crowdsec*",), daemons=("crowdsec",)),
    # boot integrity: shim's Machine Owner Key tool switches signature validation off (probe22)
    _P("Secure Boot (shim)", controls=("mokutil",)),
    # mandatory access control
    _P("AppArmor", packages=("apparmor",), daemons=("apparmor",)),
    _P("SELinux", packages=("selinux-policy*",), daemons=("setroubleshootd",)),
    # logging and shipping
    _P("rsyslog", packages=("rsyslog",), daemons=("rsyslogd",)),
    _P("syslog-ng", packages=("syslog-ng",), daemons=("syslog-ng",)),
    _P("systemd-journald", daemons=("systemd-journald",)),
    _P("Elastic Beats", packages=("auditbeat", "filebeat"), daemons=("auditbeat", "filebeat")),
    # cloud providers' guest and security agents
    _P("Amazon SSM Agent", packages=("amazon-ssm-agent",)),
    _P("Google guest agents", packages=("google-guest-agent", "google-osconfig-agent")),
    _P("Azure Linux Agent", packages=("walinuxagent",)),
    _P("Alibaba Cloud Security Center and CloudMonitor", packages=("aegis", "aliyun*"),
       folders=("aegis", "aliyun", "cloudmonitor")),
    _P("Tencent Cloud host security and monitoring", packages=("qcloud*", "yunjing"),
       folders=("qcloud", "yunjing", "stargate", "barad")),
    _P("Huawei Cloud host security", folders=("hostguard",)),
    _P("Baidu Cloud monitoring", folders=("bcm-agent",)),
    # runtime security and admission control in clusters
    # (their daemons too: each also runs as a host service outside a cluster)
    _P("Falco", packages=("falco",), daemons=("falco*",), agents=("falco",)),
    _P("Tetragon", packages=("tetragon",), daemons=("tetragon",), agents=("tetragon",)),
    _P("KubeArmor", daemons=("kubearmor",), agents=("kubearmor",)),
    _P("Tracee", daemons=("tracee",), agents=("tracee",)),
    _P("Sysdig", daemons=("dragent", "sysdig-agent"), agents=("sysdig",)),
    _P("Datadog", daemons=("datadog-agent", "security-agent", "system-probe"), agents=("datadog",)),
    _P("Aqua", agents=("aqua",)),
    _P("Prisma Cloud (Twistlock)", agents=("twistlock", "prisma")),
    _P("NeuVector", agents=("neuvector",)),
    _P("Kyverno", agents=("kyverno",)),
    _P("OPA Gatekeeper", agents=("gatekeeper",)),
)  # fmt: skip


def _alternatives(names: list[str], family: str) -> str:
    """``names`` as regex alternatives: each literal, a trailing ``*`` replaced by ``family``."""
    return "|".join(re.escape(n.removesuffix("*")) + (family if n.endswith("*") else "") for n in names)


PACKAGE_NAMES = lazy_compile(
    r"(?i)^(?:" + _alternatives([n for p in PRODUCTS for n in p.packages], r"\S*") + r")(?:[:=].*)?$"
)
"""A package manager's operand naming a product's package (a ``:arch`` or ``=version`` may follow)."""
INSTALL_FOLDERS = lazy_compile(r"(?i)" + _alternatives([n for p in PRODUCTS for n in p.folders], ""))
"""Searched in a path's folders: one of them is a product's install folder."""
DAEMON_NAMES = lazy_compile(r"^(?:" + _alternatives([n for p in PRODUCTS for n in p.daemons], r"\w*") + r")$")
"""A whole process name of a product's daemon."""
CLUSTER_AGENTS = lazy_compile(r"(?i)" + _alternatives([n for p in PRODUCTS for n in p.agents], ""))
"""Searched in a cluster workload's name: it runs a product's agent."""
CONTROL_PROGRAMS: Final[frozenset[str]] = frozenset(n for p in PRODUCTS for n in p.controls)
"""Base names of products' own control programs."""
