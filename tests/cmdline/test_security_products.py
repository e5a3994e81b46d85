"""The table of security products and the five readers that match its names (package removals,
uninstallers run from an install folder, daemons killed, cluster agents scheduled nowhere, control
programs told to stop).

The expected names below are every name the readers' own lists held before they shared the table:
a view that loses one, or a reader that stops consulting its view, fails here."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.defences import DEFENCE_HANDLERS
from dsh_policy.cmdline.effects.escape import escape_command_acts, uninstalled_agents
from dsh_policy.cmdline.effects.hardening import hardening_command_acts
from dsh_policy.cmdline.effects.host import killed_daemons
from dsh_policy.cmdline.effects.platforms import platform_acts
from dsh_policy.cmdline.effects.security_products import (
    CLUSTER_AGENTS,
    CONTROL_PROGRAMS,
    DAEMON_NAMES,
    INSTALL_FOLDERS,
    PACKAGE_NAMES,
    PRODUCTS,
)

PACKAGES = [
    "falcon-sensor", "mdatp", "sentinelagent", "sentinelone", "sentinelone-agent", "cbagentd",
    "carbonblack-sensor", "cb-psc-sensor", "elastic-agent", "elastic-endpoint", "wazuh-agent", "ossec-hids",
    "ossec-hids-agent", "osquery", "auditd", "audit", "aide", "tripwire", "clamav", "clamav-daemon",
    "sophos-spl", "sophos-av", "savdid", "cylance-protect", "taniumclient", "xagt", "amazon-ssm-agent",
    "google-guest-agent", "google-osconfig-agent", "walinuxagent", "aegis", "aliyun-assist", "qcloud-agent",
    "yunjing", "apparmor", "selinux-policy", "selinux-policy-targeted", "fail2ban", "crowdsec",
    "crowdsec-firewall-bouncer", "santa", "jamf", "jamf-pro", "rkhunter", "chkrootkit", "lynis", "rsyslog",
    "syslog-ng", "auditbeat", "filebeat", "falco", "tetragon"
]  # fmt: skip
FOLDERS = [
    "CrowdStrike", "Falcon.app", "sentinelone", "sophos-spl", "carbonblack", "mdatp", "Defender",
    "elastic/endpoint", "elastic-endpoint", "elastic/agent", "Elastic-Agent", "wazuh", "ossec", "osquery",
    "Cylance", "TrendMicro", "eset", "Kaspersky", "bitdefender", "Symantec", "McAfee", "Trellix", "tanium",
    "JAMF", "huntress", "rapid7", "qualys", "tenable", "Cortex", "Traps", "FireEye", "xagt", "aegis",
    "aliyun", "qcloud", "yunjing", "stargate", "barad", "cloudmonitor", "hostguard", "bcm-agent"
]  # fmt: skip
DAEMONS = [
    "auditd", "auditbeat", "falcon-sensor", "falcond", "falcon", "osqueryd", "wazuh-agent", "wazuh-agentd",
    "ossec", "ossecd", "sysmon", "clamd", "freshclam", "rsyslogd", "syslog-ng", "systemd-journald",
    "filebeat", "elastic-agent", "elastic-endpoint", "sentinelone", "sentineld", "SentinelAgent",
    "cbagentd", "cbdaemon", "mdatp", "wdavdaemon", "santa", "santad", "jamf", "jamfAgent", "ESets",
    "ESetsDaemon", "sophos", "sophosav", "aide", "tripwire", "fail2ban-server", "apparmor",
    "setroubleshootd", "falco", "tetragon", "kubearmor", "tracee", "dragent", "sysdig-agent",
    "datadog-agent", "security-agent", "system-probe", "crowdsec", "csfalconservice", "msmpeng", "mssense",
    "senseir", "nissrv", "securityhealthservice", "repmgr", "cylancesvc", "xagt", "sysmon64"
]  # fmt: skip
AGENTS = [
    "tetragon", "falco", "kubearmor", "tracee", "sysdig-agent", "crowdstrike", "falcon-node-sensor",
    "datadog-agent", "wazuh", "aqua-enforcer", "twistlock-defender", "prisma-cloud", "neuvector-enforcer",
    "kyverno", "gatekeeper-controller", "sentinelone-agent"
]  # fmt: skip
CONTROLS = [
    "falconctl", "sentinelctl", "mdatp", "elastic-agent", "elastic-endpoint", "wazuh-control",
    "ossec-control", "santactl", "osqueryctl", "xagt", "cbagentd", "savdctl", "sophos-spl", "taniumclient",
    "cylancesvc", "sentinelone", "jamf", "wdavdaemon", "falcon-kernel-check", "wdctl", "fail2ban-client",
    "mokutil"
]  # fmt: skip


@pytest.mark.parametrize("name", PACKAGES)
def test_every_security_package_is_known_and_its_removal_read(name: str) -> None:
    assert PACKAGE_NAMES.match(name) and PACKAGE_NAMES.match(name.upper() + ":amd64")
    assert [e["kind"] for e in platform_acts(["apt-get", "purge", "-y", name])] == ["defense-off"]


@pytest.mark.parametrize("name", FOLDERS)
def test_every_install_folder_is_known_and_its_uninstaller_read(name: str) -> None:
    assert INSTALL_FOLDERS.search(f"/opt/{name}/bin")
    line = f"sudo '/opt/{name}/bin/uninstall.sh'"
    assert [e["kind"] for e in uninstalled_agents(line, [["uninstall.sh"]])] == ["defense-off"]


@pytest.mark.parametrize("name", DAEMONS)
def test_every_daemon_is_known_and_a_kill_that_looks_it_up_read(name: str) -> None:
    assert DAEMON_NAMES.match(name)
    found = killed_daemons([["pgrep", "-f", f"^{name}$|other"], ["kill", "-9"]])
    assert [e["kind"] for e in found] == ["defense-off"]


@pytest.mark.parametrize("name", AGENTS)
def test_every_cluster_agent_is_known_and_its_unscheduling_read(name: str) -> None:
    assert CLUSTER_AGENTS.search(name.upper())
    argv = ["kubectl", "-n", "security", "scale", f"daemonset/{name}", "--replicas=0"]
    assert [e["kind"] for e in hardening_command_acts(argv)] == ["defense-off"]


@pytest.mark.parametrize("name", CONTROLS)
def test_every_control_program_is_known_to_both_readers(name: str) -> None:
    """escape's reader (its own stop verbs) and defences' (its own disabling words) read the same
    programs: one list, where escape's copy had five names defences' lacked."""
    assert name in CONTROL_PROGRAMS
    assert "defense-off" in [e["kind"] for e in escape_command_acts([name, "uninstall"])]
    assert [e["kind"] for e in DEFENCE_HANDLERS[name]([name, "deregister"])] == ["defense-off"]


def test_the_expected_lists_cover_the_table() -> None:
    """Every name in the table has an expected name above, so the tests above reach all of it."""
    shapes = {
        "packages": PACKAGES,
        "folders": [*(f.lower() for f in FOLDERS), "trend micro"],  # a folder with a space: below
        "daemons": DAEMONS,
        "agents": AGENTS,
        "controls": CONTROLS,
    }
    for shape, expected in shapes.items():
        for product in PRODUCTS:
            for name in getattr(product, shape):
                base = name.removesuffix("*")
                searched = shape in ("folders", "agents")
                family = name.endswith("*")
                assert any(
                    e == base or (family and e.startswith(base)) or (searched and base in e.lower())
                    for e in expected
                ), f"{product.name}: {shape} {name} has no expected name here"


@pytest.mark.parametrize(
    ("view", "name"),
    [
        (PACKAGE_NAMES, "libaudit-common"),  # whole names only
        (PACKAGE_NAMES, "falcon"),  # the daemon's name, not a package
        (DAEMON_NAMES, "Falcond"),  # process names are exact
        (DAEMON_NAMES, "sophos-av"),  # a process family continues with word characters only
        (DAEMON_NAMES, "sshd"),
        (INSTALL_FOLDERS, "/usr/local/lib/python3/site-packages"),
        (CLUSTER_AGENTS, "ingress-nginx-controller"),
    ],
)
def test_a_name_outside_the_table_is_not_matched(view: object, name: str) -> None:
    assert not view.search(name)  # type: ignore[attr-defined]


def test_family_names_follow_each_shape() -> None:
    assert PACKAGE_NAMES.match("sophos-spl.x86_64") and PACKAGE_NAMES.match("jamf=10.1")
    assert DAEMON_NAMES.match("ossec_remoted") and not DAEMON_NAMES.match("ossec.remoted")
    assert INSTALL_FOLDERS.search("/Library/Application Support/Trend Micro/")
