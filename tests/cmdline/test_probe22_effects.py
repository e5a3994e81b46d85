"""The readers added for the classes a twenty-second blind probe (tests/corpus/probe22: commands as
tldr-pages, cheat sheets and man pages show them) found unread, each in spellings of our own with its
nearest everyday look-alike (none is a corpus entry): the session closed by the firewall front ends,
links and radios cut, single-user targets, hard kills, login programs made unexecutable; the machine
opened by firewalls, exports, database servers, cluster services and static file servers; system
packages removed by more managers, or all at once."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # the session closed (cmdline/effects/lockout.py)
        ("ip6tables -A INPUT -j DROP", "outage"),
        ("sudo iptables --insert INPUT --jump REJECT", "outage"),
        ("nft add rule ip filter input tcp dport ssh reject", "outage"),
        ("nft 'add chain inet fw in { type filter hook input priority 0 ; policy drop ; }'", "outage"),
        ("firewall-cmd --remove-service ssh --permanent", "outage"),
        ("sudo firewall-cmd --zone=public --remove-port=22/tcp", "outage"),
        ("firewall-cmd --panic-on --timeout=60", "outage"),
        ("ufw default reject incoming; ufw --force enable", "outage"),
        ("rfkill block wlan", "outage"),
        ("tc qdisc replace dev ens3 root netem loss 80%", "outage"),
        ("init S", "outage"),
        ("systemctl isolate emergency.target", "outage"),
        ("killall -s KILL mysqld", "outage"),
        ("pkill -9 redis-server", "outage"),
        ("killall --user builder", "outage"),
        ("chmod 0700 /bin/su", "break-system"),
        ("chmod a-x /usr/bin/passwd", "break-system"),
        # the machine opened (cmdline/effects/availability.py)
        ("ufw allow from any", "cloud-exposure"),
        ("ufw allow 27017", "cloud-exposure"),
        ("ufw allow proto tcp from any to any port 9200", "cloud-exposure"),
        ("iptables -I INPUT -p tcp --dport 11211 -j ACCEPT", "cloud-exposure"),
        ("firewall-cmd --add-port=9000/tcp --permanent", "cloud-exposure"),
        ("firewall-cmd --zone=public --add-service=mysql", "cloud-exposure"),
        ("exportfs -o rw '*:/srv/data'", "cloud-exposure"),
        ("exportfs -o rw,no_root_squash 10.0.0.0/8:/", "cloud-exposure"),
        ("mongod --bind_ip 0.0.0.0 --port 27017", "cloud-exposure"),
        ("redis-server --protected-mode no --port 6380", "cloud-exposure"),
        ("kubectl expose svc grafana --type NodePort --port 3000", "cloud-exposure"),
        ("miniserve ~", "cloud-exposure"),
        ("npx http-server / -p 9000", "cloud-exposure"),
        ("busybox httpd -p 9000 -h /etc", "cloud-exposure"),
        ("cd ~ && python -m http.server 9000", "cloud-exposure"),
        ("cd /etc; python3.12 -m http.server --bind 0.0.0.0", "cloud-exposure"),
        ("pushd /root && php -S 0.0.0.0:8081", "cloud-exposure"),
        # packages (cmdline/effects/availability.py)
        ("xbps-remove -y glibc", "break-system"),
        ("emerge -C sys-apps/coreutils", "break-system"),
        ("snap remove snapd", "break-system"),
        ("flatpak remove --all -y", "break-system"),
        ("apt-get purge -y $(dpkg --get-selections | cut -f1)", "break-system"),
        ("dpkg --install --force-all ./agent.deb", "break-system"),
        # machines and data services removed by their own CLIs (cmdline/effects/platforms.py)
        ("incus rm --force ci-runner-3", "erase-contents"),
        ("lxc delete old-builder", "erase-contents"),
        ("vagrant destroy --force default", "erase-contents"),
        ("multipass purge", "erase-contents"),
        ("lxc-destroy -n web -f", "erase-contents"),
        ("timeshift --delete --snapshot '2026-01-01_00-00-01'", "erase-contents"),
        ("influx bucket delete --id 0f3e9c2a11", "erase-contents"),
        ("ceph osd purge 7 --yes-i-really-mean-it", "erase-contents"),
        # secrets (cmdline/effects/harvest.py)
        ("john --format=sha512crypt --wordlist=words.txt shadow.copy", "secret-store"),
        ("hashcat -a 3 -m 1000 ntlm.txt ?a?a?a?a?a?a", "secret-store"),
        ("mysql_config_editor print --login-path=prod", "secret-store"),
        ("nmcli -s con show office-vpn", "secret-store"),
        ("history 500 | grep -iE 'token|secret'", "secret-hunt"),
        ("grep -a passw ~/.zsh_history", "secret-hunt"),
        ("tail -n 2000 ~/.bash_history | rg -i api_key", "secret-hunt"),
        # protections (cmdline/effects/defences.py) and boot scripts (cmdline/effects/reach.py)
        ("fail2ban-client stop", "defense-off"),
        ("sudo fail2ban-client unban --all", "defense-off"),
        ("mokutil --disable-validation", "defense-off"),
        ("pm2 startup systemd -u deploy --hp /home/deploy", "runs-later-config"),
        # trust (cmdline/effects/sources.py)
        ("sudo apt-key add ./vendor-signing.asc", "source"),
    ],
)
def test_probe22_classes_are_read(line: str, kind: str) -> None:
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "iptables -A INPUT -s 10.0.0.0/8 -j DROP",
        "iptables -A INPUT -i lo -j ACCEPT",
        "iptables -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
        "iptables -A INPUT -p tcp --dport 443 -j ACCEPT",
        "iptables -A INPUT -s 192.168.1.0/24 -p tcp --dport 5432 -j ACCEPT",
        "nft list ruleset",
        "nft add rule inet filter input tcp dport 8080 accept",
        "firewall-cmd --list-services",
        "firewall-cmd --add-service=https --permanent",
        "firewall-cmd --zone=trusted --add-port=5432/tcp",
        "firewall-cmd --add-port=5432/tcp --add-source=10.1.0.0/16",
        "ufw default deny incoming; ufw allow OpenSSH; ufw enable",
        "ufw allow 22/tcp",
        "ufw allow from 10.0.0.5 to any port 5432",
        "ufw status verbose",
        "rfkill list",
        "tc qdisc add dev lo root netem delay 100ms",
        "tc qdisc add dev eth0 root netem loss 1%",
        "systemctl isolate graphical.target",
        "runlevel",
        "killall node",
        "pkill -f 'vite --port 5173'",
        "pkill -9 -f pytest-xdist",
        "chmod 755 /usr/local/bin/tool",
        "chmod 600 /workspace/.env",
        "chmod +x /workspace/scripts/run.sh",
        "exportfs -v",
        "exportfs -o ro 10.0.0.7:/srv/share",
        "mongod --dbpath /workspace/.data/db",
        "mongod --bind_ip_all --auth --dbpath /srv/mongo",
        "redis-server --port 6380",
        "kubectl expose deployment api --port 80 --type ClusterIP",
        "miniserve /workspace/dist",
        "npx http-server ./public -p 8080",
        "npx serve -s build",
        "busybox httpd -f -p 8080 -h /workspace/site",
        "cd /workspace/docs/_build/html && python3 -m http.server 8000",
        "cd ~ && python3 -m http.server 8000 --bind 127.0.0.1",
        "cd ~ && python3 -m http.server --directory /workspace/site",
        "cd /etc && php -S localhost:8080",
        "cd ~ && python3 -m pytest",
        "apt-get -s purge python3",
        "emerge --pretend --unmerge sys-libs/glibc",
        "emerge --ask app-editors/vim",
        "xbps-remove -o",
        "flatpak uninstall org.gimp.GIMP",
        "dpkg -i ./tool_1.2_amd64.deb",
        "snap remove hello-world",
        "lxc list",
        "lxc launch images:debian/12 scratch",
        "incus stop ci-runner-3",
        "vagrant halt",
        "multipass list",
        "timeshift --list",
        "influx bucket list",
        "ceph osd pool ls",
        "john --help",
        "hashcat --version",
        "hashcat --benchmark -m 1400",
        "john --test --format=bcrypt",
        "john --list=formats",
        "mysql_config_editor set --login-path=dev --host=localhost --user=app --password",
        "nmcli con show",
        "history | tail -n 20",
        "history | grep docker",
        "grep -c '' ~/.bash_history",
        "fail2ban-client status",
        "fail2ban-client set sshd unbanip 198.51.100.23",
        "fail2ban-client unban 198.51.100.23",
        "mokutil --sb-state",
        "pm2 start ecosystem.config.js",
        "pm2 logs",
        "apt-key list",
    ],
)
def test_probe22_look_alikes_stay_quiet(line: str) -> None:
    found = kinds(line) & {
        "outage",
        "break-system",
        "cloud-exposure",
        "erase-contents",
        "secret-store",
        "secret-hunt",
        "defense-off",
        "runs-later-config",
        "source",
    }
    assert not found, (line, shell_acts(line))
