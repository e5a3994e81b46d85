"""Every command the README shows works as shown, from a fresh copy of the repository, twice.

The README is the first thing a new user runs; it drifted once (a command table the parser did not
accept, figures a second run did not reproduce, a hook example that denied everything). This test
reads the README itself (and the command table of ``docs/cli.md``): it writes the files the tour
asks for (each YAML block named by the text before it), runs every ``.venv/bin/dsh-policy`` and
``sed`` line of its ``sh`` blocks in order in a temporary copy of the repository (the tracked and
unignored files, as a clone would have them), and checks what the README says about each: the exit
code from the line's comment (``exit N``), the continuation comments (``#   text``, ``...`` for elided
parts) in its output, and the quick start's sample output line by line. Then it runs the same
commands again in the same copy, as a user who follows the README a second time would (``again: exit
N`` gives a different code for a second run). The installed venv is reused (``.venv`` is a link to
it), not reinstalled. The first pass runs real processes (the console script, pipes, exit statuses);
the second calls the same ``main`` in this process, which checks the same promises at a fraction of
the start-up cost.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```$", re.M | re.S)
_FILE_NAME = re.compile(r"`([\w.-]+\.ya?ml)`")
#: Where the quick start and the tour end (what follows points into docs/).
_TOUR_END = "## Where to read next"
#: The command reference, with the table of every subcommand.
CLI_PAGE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


@dataclass(slots=True)
class Step:
    """One README command line and what the README promises about it."""

    command: str
    codes: tuple[int, int]  # first run, second run
    expect: list[str] = field(default_factory=list)


def _blocks() -> list[tuple[str, str, str, int]]:
    """(language, body, the text before the block, where it starts) in README order."""
    found, last = [], 0
    for match in _BLOCK.finditer(README):
        found.append((match["lang"], match["body"], README[last : match.start()], match.start()))
        last = match.end()
    return found


def _steps() -> list[Step]:
    """The commands of the quick start and the tour (its hook example included), in README order;
    the sections after the tour only point at docs/, whose commands name the reader's own files."""
    steps: list[Step] = []
    reference = README.index(_TOUR_END)
    for lang, body, _, start in _blocks():
        if lang != "sh" or not (start < reference or "examples/hooks/pre-tool-use.json" in body):
            continue
        for raw in body.splitlines():
            line = raw.strip()
            if line.startswith("#"):
                if steps and raw.startswith("#  "):
                    steps[-1].expect.append(line.lstrip("#").strip())
                continue
            command, _, comment = line.partition("  #")
            command = command.split("&&")[-1].strip() if "dsh-policy run" in command else command.strip()
            if not (command.startswith(".venv/bin/dsh-policy") or command.startswith("sed -i")):
                continue  # installs, the test suite, benchmarks and tools are other tests' business
            first = re.search(r"exit (\d)", comment)
            again = re.search(r"again: exit (\d)", comment)
            code = int(first[1]) if first else 0
            steps.append(Step(command, (code, int(again[1]) if again else code)))
    return steps


def _written_files() -> dict[str, str]:
    """The YAML blocks of the quick start and tour, by the file name the text before them gives."""
    tour = README[README.index("## Quick start") : README.index(_TOUR_END)]
    files: dict[str, str] = {}
    for match in _BLOCK.finditer(tour):
        if match["lang"] != "yaml":
            continue
        before = tour[: match.start()].rstrip().rsplit("\n\n", 1)[-1]
        names = _FILE_NAME.findall(before)
        assert names, f"a YAML block in the tour names no file: {match['body'][:60]!r}"
        files[names[-1]] = match["body"]
    return files


def _sample_output() -> list[str]:
    """The quick start's sample demo output, without its ``...`` elisions."""
    for lang, body, before, _ in _blocks():
        if lang == "" and "The demo prints" in before.rstrip().rsplit("\n\n", 1)[-1]:
            return [line.rstrip() for line in body.splitlines() if line.strip() != "..."]
    raise AssertionError("the README lost its sample demo output")


def _fresh_copy(target: Path) -> None:
    """The files a clone has: tracked plus new unignored ones (no venv, no old logs)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(Path(sys.prefix))


def _execute(command: str, repo: Path, env: dict[str, str], *, in_process: bool) -> tuple[int, str, str]:
    """Run one README line: (exit code, stdout, stderr)."""
    if not in_process or not command.startswith(".venv/bin/dsh-policy"):
        done = subprocess.run(
            ["/bin/sh", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=120
        )
        return done.returncode, done.stdout, done.stderr
    from dsh_policy.policy.cli import main

    argv = shlex.split(command)[1:]
    stdin = b""
    if "<" in argv:
        at = argv.index("<")
        stdin = (repo / argv[at + 1]).read_bytes()
        del argv[at : at + 2]
    out, err = io.StringIO(), io.StringIO()
    cwd, saved_stdin = Path.cwd(), sys.stdin
    os.chdir(repo)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(cwd)
        sys.stdin = saved_stdin
    return code, out.getvalue(), err.getvalue()


def _normal(text: str) -> str:
    return " ".join(text.split())


def _shows(output: str, expected: str) -> bool:
    """``expected`` (``...`` elides) appears within one line of ``output``, spacing aside."""
    fragments = [_normal(part) for part in expected.split("...") if part.strip()]
    for line in output.splitlines():
        line, at = _normal(line), 0
        for fragment in fragments:
            at = line.find(fragment, at)
            if at < 0:
                break
            at += len(fragment)
        else:
            return True
    return False


def _in_order(output: str, lines: list[str]) -> list[str]:
    """The sample lines missing from ``output`` (each must follow the one before it)."""
    actual = [line.rstrip() for line in output.splitlines()]
    missing, at = [], 0
    for line in lines:
        try:
            at = actual.index(line, at) + 1
        except ValueError:
            missing.append(line)
    return missing


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout"
)
def test_every_readme_command_works_as_shown_on_a_fresh_copy_and_a_second_run(tmp_path: Path) -> None:
    steps = _steps()
    commands = " ".join(step.command for step in steps)
    for promised in ("dsh-policy run", "check", "explain", "verify", "log", "keygen", "hook", "sed -i"):
        assert promised in commands, f"the README no longer shows {promised!r}"
    repo = tmp_path / "clone"
    repo.mkdir()
    _fresh_copy(repo)
    for name, text in _written_files().items():
        (repo / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    sample = _sample_output()
    for run in (0, 1):
        for step in steps:
            code, stdout, stderr = _execute(step.command, repo, env, in_process=run == 1)
            output = stdout + stderr
            where = f"run {run + 1}: {step.command}\n{output}"
            assert code == step.codes[run], where
            for expected in step.expect:
                assert _shows(output, expected), f"README promises {expected!r}; {where}"
            assert "Traceback" not in output, where
            if (
                "sessions/demo.yaml --config examples/gateway.yaml" in step.command
                and "--audit" not in step.command
            ):
                assert not _in_order(stdout, sample), f"sample output drifted: {_in_order(stdout, sample)}"
                if run == 1:
                    moved = "the previous one is now demo-audit.jsonl.previous/demo-audit.jsonl.previous-"
                    assert moved in stdout


def test_the_typo_the_readme_quotes_is_reported_as_quoted(tmp_path: Path) -> None:
    quoted = re.search(r"`(my-rules\.yaml:(\d+):(\d+): [^`]*'wehn'[^`]*)`", README)
    assert quoted, "the README's typo example moved"
    line, col = int(quoted[2]), int(quoted[3])
    rules = _written_files()["my-rules.yaml"].splitlines()
    assert rules[line - 1][col - 1 : col + 3] == "when", "the quoted position is not a `when` key"
    rules[line - 1] = rules[line - 1][: col - 1] + "wehn" + rules[line - 1][col + 3 :]
    (tmp_path / "my-rules.yaml").write_text("\n".join(rules) + "\n", encoding="utf-8")
    from dsh_policy.policy.cli.check import main

    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        captured = io.StringIO()
        with contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
            code = main(["my-rules.yaml"])
    finally:
        os.chdir(cwd)
    assert code == 2
    assert quoted[1] in captured.getvalue()


def test_the_command_table_lists_every_subcommand() -> None:
    from dsh_policy.policy.cli import SUBCOMMANDS

    table = CLI_PAGE[CLI_PAGE.index("## Subcommands") : CLI_PAGE.index("## Options every command shares")]
    for name in SUBCOMMANDS:
        assert f"| `{name}" in table, f"{name} is missing from the command table of docs/cli.md"
