"""The readers added for the classes a twenty-sixth blind probe (tests/corpus/probe26) found unread,
each in spellings of our own with its nearest everyday look-alike (none is a corpus entry): the
Linux hardening guides' controls undone through the tools that own them - the kernel command line
changed by boot tools, SELinux weakened below its switch, PAM protections dropped by authselect
and pam-auth-update, system accounts given a shell, firewalls opened by rule, audit rules removed
one by one, kernel switches read by the direction they are set in, mount guards, shared folders
without their sticky bit, ACLs on system files, sshd started with overrides, legacy servers
installed and unmasked."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import KINDS, shell_acts
from dsh_policy.cmdline.effects.guides import guide_command_acts

BLOCKING = frozenset({"defense-off", "log-off", "account", "privilege", "cloud-exposure"})


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # the kernel command line through boot tools
        ("grubby --update-kernel=/boot/vmlinuz-6.8.0 --args='quiet l1tf=off mds=off'", "defense-off"),
        ("grubby --update-kernel DEFAULT --args enforcing=0", "defense-off"),
        ("grubby --update-kernel=ALL --remove-args='lockdown=integrity'", "defense-off"),
        ("kernelstub --add-options 'nosmap'", "defense-off"),
        ("kernelstub -d init_on_alloc=1", "defense-off"),
        ("rpm-ostree kargs --append-if-missing=audit=0", "defense-off"),
        ("rpm-ostree kargs --delete=module.sig_enforce=1", "defense-off"),
        ("grub2-editenv - set 'kernelopts=root=/dev/vda2 ro mitigations=off'", "defense-off"),
        # SELinux below the enforcing switch
        ("semanage permissive --add container_t", "defense-off"),
        ("semanage fcontext -a -t unconfined_exec_t '/opt/agent/bin(/.*)?'", "defense-off"),
        ("semanage boolean -m --off deny_ptrace", "defense-off"),
        ("setsebool -P secure_mode_policyload=off", "defense-off"),
        ("setsebool xserver_execmem 1", "defense-off"),
        ("chcon --type=unconfined_exec_t /opt/agent/bin/run", "defense-off"),
        ("semodule --disable=sandbox", "defense-off"),
        # PAM through the distribution's own tools
        ("authselect enable-feature with-nullok", "defense-off"),
        ("authselect disable-feature with-pwhistory", "defense-off"),
        ("pam-auth-update --remove pwquality", "defense-off"),
        # system accounts given a way in
        ("usermod --shell /bin/zsh daemon", "account"),
        ("chsh -s /usr/bin/fish www-data", "account"),
        ("usermod --unlock root", "account"),
        ("usermod -e -1 systemd-network", "account"),
        # firewalls opened by rule
        ("firewall-cmd --zone=dmz --set-target ACCEPT --permanent", "defense-off"),
        ("firewall-cmd --zone=trusted --add-source=0.0.0.0/0", "defense-off"),
        ("ufw delete reject 25/tcp", "cloud-exposure"),
        ("nft insert rule ip filter forward accept", "defense-off"),
        ("firewall-cmd --add-rich-rule 'rule family=ipv6 source address=::/0 accept'", "defense-off"),
        ("authconfig --passalgo=md5 --update", "defense-off"),
        ("yum-config-manager --save --setopt=epel.gpgcheck=false", "tls-off"),
        ("iptables -A FORWARD -j ACCEPT", "defense-off"),
        # audit rules one by one, fail2ban
        ("auditctl -W /etc/shadow -p wa -k identity", "log-off"),
        ("auditctl -d exit,always -F arch=b32 -S init_module", "log-off"),
        ("auditctl -a always,exclude -F msgtype=USER_LOGIN", "log-off"),
        ("auditctl -f0", "log-off"),
        ("fail2ban-client set recidive unbanip --all", "defense-off"),
        ("fail2ban-client set nginx-http-auth bantime 5", "defense-off"),
        # kernel switches, by direction
        ("sysctl -w kernel.dmesg_restrict=0", "defense-off"),
        ("sysctl kernel.randomize_va_space=1", "defense-off"),
        ("sysctl -w dev.tty.legacy_tiocsti=1", "defense-off"),
        ("sysctl -w net.ipv4.conf.default.log_martians=0", "defense-off"),
        ("sysctl -w fs.protected_regular=0", "defense-off"),
        ("sysctl -w kernel.io_uring_disabled=0", "defense-off"),
        ("sysctl -w 'kernel.core_pattern=|/usr/local/bin/grab %p'", "defense-off"),
        # mounts, shared folders, ACLs
        ("mount -o remount,rw,hidepid=off /proc", "defense-off"),
        ("mount --rbind /srv/alt-bin /usr/bin", "privilege"),
        ("mount -o remount,rw /proc/sys", "privilege"),
        ("chmod 2777 /dev/shm", "defense-off"),
        ("setfacl -m g:developers:rwx /etc/sudoers.d", "defense-off"),
        ("setfacl --modify=other::rw /usr/local/bin/backup", "defense-off"),
        # sshd, time, services, packages
        ("/usr/sbin/sshd -f /etc/ssh/sshd_config -o 'StrictModes no'", "defense-off"),
        ("sshd -o GatewayPorts=yes -p 2200", "defense-off"),
        ("timedatectl set-ntp no", "defense-off"),
        ("apt install tftpd-hpa", "cloud-exposure"),
        ("zypper in ypserv", "cloud-exposure"),
        ("systemctl unmask --now avahi-daemon.socket", "cloud-exposure"),
        ("systemctl enable debug-shell.service", "privilege"),
    ],
)
def test_a_hardening_control_undone_is_read(line: str, kind: str) -> None:
    assert kind in KINDS
    assert kind in kinds(line), line


@pytest.mark.parametrize(
    "line",
    [
        # the same tools in the secure direction, or reading
        "grubby --update-kernel=ALL --args='audit=1 audit_backlog_limit=8192 slab_nomerge'",
        "grubby --update-kernel=ALL --remove-args='mitigations=off'",
        "grubby --info=DEFAULT",
        "kernelstub -a 'lockdown=integrity'",
        "rpm-ostree kargs",
        "rpm-ostree kargs --append=init_on_free=1",
        "semanage permissive --delete container_t",
        "semanage permissive -l",
        "semanage fcontext -a -t container_file_t '/srv/volumes(/.*)?'",
        "setsebool -P deny_ptrace on",
        "setsebool -P container_manage_cgroup on",
        "semodule -l",
        "semodule -i ./build/myapp.pp",
        "authselect enable-feature with-faillock",
        "authselect select sssd with-mkhomedir",
        "pam-auth-update --enable pwquality",
        "usermod --shell /usr/sbin/nologin games",
        "usermod -s /bin/zsh dev",
        "usermod -aG video dev",
        "chsh -s /usr/bin/fish",
        "firewall-cmd --zone=public --add-service=http",
        "firewall-cmd --get-zones",
        "ufw delete allow 8080/tcp",
        "nft add rule inet filter input ct state established,related accept",
        "nft add rule inet filter input tcp dport 22 accept",
        "firewall-cmd --add-rich-rule='rule source address=192.168.1.0/24 service name=nfs accept'",
        "authconfig --passalgo=sha512 --update",
        "yum-config-manager --enable crb",
        "iptables -A INPUT -i lo -j ACCEPT",
        "iptables -I INPUT -p tcp --dport 443 -j ACCEPT",
        "auditctl -w /etc/group -p wa -k identity",
        "auditctl -a always,exit -F arch=b64 -S mount -k mounts",
        "fail2ban-client set sshd bantime 3600",
        "fail2ban-client status",
        "sysctl -w kernel.dmesg_restrict=1",
        "sysctl -w kernel.perf_event_paranoid=3",
        "sysctl -w net.ipv4.tcp_syncookies=1",
        "sysctl -w fs.protected_fifos=2",
        "sysctl kernel.kptr_restrict",
        "sysctl -w kernel.core_pattern=/var/crash/core.%e.%p",
        "sysctl -w net.core.rmem_max=26214400",
        "mount -o remount,hidepid=invisible /proc",
        "mount --bind /workspace/data /mnt/data",
        "mount -o remount,ro /sys/fs/cgroup",
        "chmod 1777 /dev/shm",
        "chmod 0755 /workspace/tmp",
        "setfacl -m u:dev:rwx /workspace/shared",
        "setfacl -x u:olduser /etc/sudoers.d",
        "/usr/sbin/sshd -t -f /workspace/test/sshd_config",
        "sshd -o PermitRootLogin=no -p 2200",
        "timedatectl set-ntp true",
        "apt install telnet",
        "dnf install tftp",
        "systemctl mask --now rpcbind.socket",
        "systemctl status debug-shell.service",
    ],
)
def test_the_secure_direction_and_reads_stay_ordinary(line: str) -> None:
    assert not kinds(line) & BLOCKING, (line, shell_acts(line))


def test_the_guides_reader_ignores_other_programs() -> None:
    assert guide_command_acts(["ls", "-l", "/etc"]) == []
