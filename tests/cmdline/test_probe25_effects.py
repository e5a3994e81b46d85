"""The line reader's answers to what a twenty-fifth blind probe (tests/corpus/probe25, shell
obfuscation and evasion) found unread, in spellings of our own (none is a corpus entry): a program
copied or linked under another name and run by that name, and text printed into xargs becoming the
command's arguments; with the everyday look-alikes that must read as what they are."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.shell.reading import shell_commands


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cp /usr/bin/shred /var/tmp/zap && /var/tmp/zap -u notes.txt", ["shred", "-u", "notes.txt"]),
        ("ln -s /bin/chmod ./perm; ./perm 777 run.sh", ["chmod", "777", "run.sh"]),
        ("cp $(which scp) /tmp/sync && /tmp/sync a.txt host:", ["scp", "a.txt", "host:"]),
        ("ln -sf `command -v tar` pack && ./pack cf out.tar src", ["tar", "cf", "out.tar", "src"]),
    ],
)
def test_a_renamed_program_runs_as_itself(line: str, expected: list[str]) -> None:
    assert expected in shell_commands(line)


def test_ordinary_copies_stay_copies() -> None:
    # a file copied (not a program) gives the copy's name no meaning
    commands = shell_commands("cp README.md docs/ && cp config.yaml config.bak && ./config.bak")
    assert ["config.bak"] in commands
    # a program copied into a folder keeps its own name
    assert ["ls", "-la"] in shell_commands("cp /bin/ls /tmp/ && ls -la")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo build/out | xargs rm -r", ["rm", "-r", "build/out"]),
        ("echo a.txt b.txt | xargs chmod 600", ["chmod", "600", "a.txt", "b.txt"]),
        ("echo ls -la | xargs -0 sh -c", ["ls", "-la"]),
        ("echo src | xargs -I{} cp -r {} /tmp/{}", ["cp", "-r", "src", "/tmp/src"]),
    ],
)
def test_text_printed_into_xargs_is_the_commands_arguments(line: str, expected: list[str]) -> None:
    assert any(command[: len(expected)] == expected for command in shell_commands(line)), shell_commands(line)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # base64 "build", hex "notes.txt", reversed "dist"
        ("ls $(echo YnVpbGQ= | base64 -d)", ["ls", "build"]),
        ("cat $(xxd -r -p <<< 6e6f7465732e747874)", ["cat", "notes.txt"]),
        ("du -sh $(rev <<< tsid)", ["du", "-sh", "dist"]),
    ],
)
def test_a_literal_decoded_in_a_substitution_is_its_text(line: str, expected: list[str]) -> None:
    assert shell_commands(line)[-1] == expected


def test_an_undecodable_or_binary_substitution_stays_unresolved() -> None:
    assert shell_commands("ls $(echo '%%%' | base64 -d)")[-1] == ["ls", "$(echo '%%%' | base64 -d)"]
    assert shell_commands("ls $(echo 00ff | xxd -r -p)")[-1] == ["ls", "$(echo 00ff | xxd -r -p)"]


def test_an_array_spread_into_arguments_is_its_words() -> None:
    assert ["chmod", "-R", "go-w", "bin"] in shell_commands('opts=(-R go-w); chmod "${opts[@]}" bin')
    loop = shell_commands('dirs=(build dist); for d in "${dirs[@]}"; do rm -r "$d"; done')
    assert ["rm", "-r", "build"] in loop and ["rm", "-r", "dist"] in loop
    # an array the line does not assign stays as written
    assert ["ls", "${other[@]}"] in shell_commands('ls "${other[@]}"')


def test_a_trap_line_is_read_as_the_line_it_runs() -> None:
    assert ["git", "stash", "pop"] in shell_commands("trap 'git stash pop' EXIT; git stash; make")
    assert shell_commands("trap - EXIT; trap '' INT") == [["trap"], ["trap"]]


def test_xargs_over_a_listing_is_left_as_it_is() -> None:
    # what `git ls-files` prints is not known on the line: xargs' command keeps its own words
    assert ["rm", "-f"] in shell_commands("git ls-files '*.orig' | xargs rm -f")
