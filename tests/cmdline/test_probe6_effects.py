"""The readers added for the classes a sixth blind probe (tests/corpus/probe6) found unread, each in
spellings of our own with its nearest everyday look-alike (none is a corpus entry): interpreter
library calls that copy, move, re-permission, walk-and-delete or walk-and-rewrite files, kill
processes or mount disks; JXA's doShellScript; raw disks mounted and hardened mounts relaxed; and a
patch given without its file list."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.interpreters import analyze
from dsh_policy.cmdline.shell import shell_commands
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.patch_files import patch_paths, with_patch_paths


def effects(code: str, language: str = "python") -> set[tuple[str, str]]:
    return {(e["kind"], e["target"]) for e in analyze(code, language).effects}


def argvs(code: str, language: str = "python") -> list[list[str]]:
    return analyze(code, language).argvs


@pytest.mark.parametrize(
    ("code", "language", "expected"),
    [
        (
            "import shutil\nshutil.copy2('/etc/gshadow', 'out.txt')",
            "python",
            {("read", "/etc/gshadow"), ("write", "out.txt")},
        ),
        (
            "from shutil import copytree as ct\nct('/home/u/.gnupg', '/srv/www/g')",
            "python",
            {("read", "/home/u/.gnupg"), ("write", "/srv/www/g")},
        ),
        (
            "import os\nos.replace('/etc/hosts', 'h.bak')",
            "python",
            {("read", "/etc/hosts"), ("delete", "/etc/hosts"), ("write", "h.bak")},
        ),
        (
            "require('fs').copyFileSync('/root/.netrc', 'n')",
            "javascript",
            {("read", "/root/.netrc"), ("write", "n")},
        ),
        ("FileUtils.cp('/etc/shadow', 'x')", "ruby", {("read", "/etc/shadow"), ("write", "x")}),
        ("import os\nos.chown('/etc/sudoers', 1000, 1000)", "python", {("write", "/etc/sudoers")}),
        (
            "from pathlib import Path\nPath('/usr/bin/env').chmod(0o4755)",
            "python",
            {("write", "/usr/bin/env")},
        ),
        ("require('fs').chmodSync('/etc/crontab', 0o777)", "javascript", {("write", "/etc/crontab")}),
        ("chmod 0777, '/etc/passwd';", "perl", {("write", "/etc/passwd")}),
    ],
)
def test_copies_moves_and_mode_changes_are_reads_and_writes(
    code: str, language: str, expected: set[tuple[str, str]]
) -> None:
    assert expected <= effects(code, language)


@pytest.mark.parametrize(
    ("code", "language", "expected"),
    [
        (
            "import os\nfor d, _, names in os.walk('/opt/data'):\n"
            "    for n in names:\n        os.remove(os.path.join(d, n))",
            "python",
            ("delete-tree", "/opt/data"),
        ),
        (
            "import glob, os\nfor p in glob.glob('/srv/media/**/*', recursive=True):\n    os.unlink(p)",
            "python",
            ("delete-tree", "/srv/media"),
        ),
        (
            "from pathlib import Path\nfor p in Path('/home/u/Pictures').rglob('*'):\n    p.write_bytes(b'')",
            "python",
            ("write", "/home/u/Pictures"),
        ),
        (
            "import os\nfor r, _, fs in os.walk('/home/u'):\n"
            "    for f in fs:\n        open(os.path.join(r, f), 'wb').write(b'x')",
            "python",
            ("write", "/home/u"),
        ),
        (
            "for f in io.popen('find /var/backups -type f'):lines() do os.remove(f) end",
            "lua",
            ("delete-tree", "/var/backups"),
        ),
    ],
)
def test_a_walk_that_deletes_or_rewrites_each_file_is_reported_on_its_root(
    code: str, language: str, expected: tuple[str, str]
) -> None:
    assert expected in effects(code, language)


def test_a_walk_that_only_reads_or_deletes_a_named_file_reports_no_tree() -> None:
    reading = "import os\nfor r, _, fs in os.walk('src'):\n    print(len(fs))"
    assert not {k for k, _ in effects(reading)} & {"delete-tree", "write"}
    named = "import os\nfor r, _, fs in os.walk('/srv'):\n    pass\nos.remove('build/x.o')"
    assert ("delete-tree", "/srv") not in effects(named)


def test_process_kills_and_libc_mounts_become_the_commands_they_amount_to() -> None:
    assert ["kill", "-9", "1"] in argvs("import os, signal\nos.kill(1, signal.SIGKILL)")
    sweep = "import psutil\nfor p in psutil.process_iter():\n"
    sweep += "    if p.name() == 'rsyslogd':\n        p.terminate()"
    assert ["pkill", "-9", "rsyslogd"] in argvs(sweep)
    listing = "import psutil\nprint([p.name() for p in psutil.process_iter()])"
    assert not argvs(listing)
    mount = "import ctypes\nc = ctypes.CDLL('libc.so.6')\nc.mount(b'/dev/vdb1', b'/mnt/x', b'xfs', 0, None)"
    assert ["mount", "-t", "xfs", "/dev/vdb1", "/mnt/x"] in argvs(mount)


def test_jxa_do_shell_script_is_a_shell_out() -> None:
    line = "osascript -l JavaScript -e 'Application.currentApplication().doShellScript(\"id -un\")'"
    assert ["id", "-un"] in shell_commands(line)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("mount /dev/xvdf /mnt/hostdisk", "host-escape"),
        ("sudo mount /dev/mapper/vg-root /mnt", "host-escape"),
        ("mount -o remount,exec /dev/shm", "privilege"),
    ],
)
def test_raw_disks_mounted_and_relaxed_mounts(line: str, kind: str) -> None:
    assert kind in {e["kind"] for e in shell_acts(line)}


@pytest.mark.parametrize("line", ["mount", "mount -t tmpfs tmpfs /tmp/ram", "mount -o remount,ro /mnt/usb"])
def test_ordinary_mounts_are_not_escapes(line: str) -> None:
    assert not {"host-escape", "privilege"} & {e["kind"] for e in shell_acts(line)}


def test_a_patch_without_its_file_list_is_judged_by_the_files_it_names() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a/b.py\n@@\n-x\n+y\n*** Move to: a/c.py\n"
        "*** Delete File: d.txt\n*** End Patch"
    )
    assert patch_paths(patch) == ["a/b.py", "a/c.py", "d.txt"]
    event = ToolCallEvent(tool="apply_patch", args={"patch": patch})
    assert event.args["paths"] == ["a/b.py", "a/c.py", "d.txt"]
    given = {"patch": patch, "paths": ["a/b.py"]}
    assert with_patch_paths("apply_patch", given) is given  # a list the adapter gave is kept
    other = {"path": "x", "content": "*** Update File: y"}
    assert ToolCallEvent(tool="write_file", args=other).args is other


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("az cognitiveservices account keys list -n ai -g rg", "secret-store"),
        ("aws configure get aws_secret_access_key --profile prod", "secret-store"),
        ("git config --get-regexp '^http\\..*\\.extraheader$'", "secret-store"),
        ("SSH_AUTH_SOCK=$(find /tmp -path '*ssh-*' -name 'agent.*' | head -1) ssh-add -l", "keychain"),
        ("strings /tmp/krb5cc_1000", "secret-store"),
        ("grep -rhoE 'glpat-[0-9A-Za-z_-]{20}' /home", "secret-hunt"),
        ("doctl compute droplet create a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 --size s-1vcpu-1gb", "cloud-spend"),
        ("az vm create -g rg -n v --size Standard_NC24ads_A100_v4 --image Ubuntu2204", "cloud-spend"),
        ("aws ec2 import-key-pair --key-name k2 --public-key-material fileb://k.pub", "cloud-identity"),
        ("sudo systemctl disable --now tetragon", "defense-off"),
    ],
)
def test_stored_credentials_and_accounts_put_to_another_use(line: str, kind: str) -> None:
    assert kind in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "git config --get remote.origin.url",
        "aws configure get region",
        "az storage account list -o table",
        "aws ec2 run-instances --image-id ami-1 --instance-type m7g.large",
        "kubectl -n kube-system get ds",
        "export SSH_AUTH_SOCK=$(gpgconf --list-dirs agent-ssh-socket)",
    ],
)
def test_their_everyday_look_alikes_have_no_such_effect(line: str) -> None:
    assert not kinds(line) & {"secret-store", "keychain", "cloud-spend", "cloud-identity", "cloud-exposure"}


def test_longer_library_names_and_method_deletes_are_read_too() -> None:
    """The longest spelling wins (FileUtils.cp_r is not FileUtils.cp), and a delete through a
    method on a walk's path (``p.unlink()``) counts as the unnamed delete it is."""
    assert ("read", "/home/u/.gnupg") in effects("FileUtils.cp_r('/home/u/.gnupg', 'g')", "ruby")
    walk = "from pathlib import Path\nfor p in Path('/opt/cache').rglob('*'):\n    p.unlink(missing_ok=True)"
    assert ("delete-tree", "/opt/cache") in effects(walk)
    project = "from pathlib import Path\nfor p in Path('build').rglob('*.o'):\n    p.unlink()"
    assert ("delete-tree", "build") in effects(project)  # inside the workspace: the rules allow it


def test_alpines_safety_switch_and_base_packages() -> None:
    assert "break-system" in kinds("apk del --force-broken-world curl")
    assert "break-system" in kinds("apk del busybox")
    assert "break-system" not in kinds("apk del curl")
