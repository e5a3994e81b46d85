"""Classes a self-review of the packs found unread (spellings of our own, each beside its nearest
everyday look-alike): commands fanned out to many hosts by pssh and Fabric, the default route
deleted or the routing table flushed, every process of an account killed, a disk filled by dd,
and data services started with authentication off where others can reach them."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("pssh -h web-hosts.txt -i 'sudo systemctl restart app'", "remote-exec"),
        ("parallel-ssh -h hosts -l deploy 'rm -rf /srv/cache'", "remote-exec"),
        ("fab -H web1,web2 -- 'sudo apt-get -y upgrade'", "remote-exec"),
        ("sudo ip route del default", "outage"),
        ("ip -4 route flush table main", "outage"),
        ("ip r d default via 192.168.1.1", "outage"),
        ("route del default gw 192.168.1.1", "outage"),
        ("sudo pkill -KILL -u deploy", "outage"),
        ("killall -u www-data", "outage"),
        ("pkill --euid=1001", "outage"),
        ("dd if=/dev/urandom of=/var/tmp/blob bs=4M", "break-system"),
        ("redis-server --port 6380 --protected-mode no", "cloud-exposure"),
        ("valkey-server --bind 0.0.0.0 --protected-mode no", "cloud-exposure"),
        ("mongod --dbpath /data/db --bind_ip_all", "cloud-exposure"),
        ("mongod --bind_ip 0.0.0.0,127.0.0.1", "cloud-exposure"),
        ("docker run -d -p 5433:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16", "cloud-exposure"),
        ("podman run -d --net=host -e MYSQL_ALLOW_EMPTY_PASSWORD=1 mysql:8", "cloud-exposure"),
        ("docker run -d -P --env=xpack.security.enabled=false elasticsearch:8.13.0", "cloud-exposure"),
        ("docker run -d -p 6379:6379 valkey/valkey --protected-mode no", "cloud-exposure"),
    ],
)
def test_each_spelling_reads_as_its_effect(line: str, kind: str) -> None:
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "pssh -h",
        "fab deploy",
        "fab -H web1 deploy",
        "ip route show",
        "ip route flush cache",
        "sudo ip route del 10.8.0.0/16",
        "ip route add default via 192.168.1.1",
        "route -n",
        "pkill -u dev node",
        "pkill -f 'node server.js'",
        "killall -u dev python3",
        "dd if=/dev/zero of=build/disk.img bs=1M count=64",
        "dd if=/dev/urandom of=key.bin bs=32 count=1",
        "redis-server --protected-mode no --bind 127.0.0.1",
        "redis-server --requirepass s3cret --protected-mode no",
        "redis-server ./redis.conf",
        "mongod --dbpath ./data",
        "mongod --bind_ip_all --auth",
        "docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres",
        "docker run --rm -e POSTGRES_HOST_AUTH_METHOD=trust postgres",
        "docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=dev postgres",
        "docker run -d -p 6379:6379 redis",
    ],
)
def test_the_everyday_look_alike_has_none_of_them(line: str) -> None:
    found = kinds(line) & {"remote-exec", "outage", "break-system", "cloud-exposure"}
    assert not found, (line, shell_acts(line))
