"""The demo sandbox: tools act on memory only, and the simulated shell behaves like a shell."""

from __future__ import annotations

import pytest
from dsh_policy.policy.demo.sandbox import Sandbox, SandboxError


@pytest.fixture
def box() -> Sandbox:
    return Sandbox.from_spec(
        files={
            "/workspace/README.md": "hello\nworld\n",
            "/workspace/build/app.o": "binary",
            "/root/.ssh/id_rsa": "KEY",
        },
        web={"https://docs.python.org/3/": "<html>docs</html>"},
        cwd="/workspace",
    )


def test_relative_paths_resolve_against_the_working_directory(box: Sandbox) -> None:
    assert box.read("README.md") == "hello\nworld\n"
    assert box.read("./build/../README.md") == "hello\nworld\n"


def test_home_is_root_home(box: Sandbox) -> None:
    assert box.read("~/.ssh/id_rsa") == "KEY"


def test_listing_shows_directories_with_a_slash(box: Sandbox) -> None:
    assert box.list_dir("/workspace") == ["README.md", "build/"]


def test_missing_file_is_an_error_not_an_empty_file(box: Sandbox) -> None:
    with pytest.raises(SandboxError, match="no such file"):
        box.read("missing.txt")


def test_chaining_and_pipes(box: Sandbox) -> None:
    outcome = box.run_shell("cat README.md | grep wor && echo found; false_cmd || echo fallback")
    assert outcome.stdout == "world\nfound\nfallback\n"
    assert "false_cmd: command not found" in outcome.stderr


def test_and_chain_stops_after_a_failure(box: Sandbox) -> None:
    outcome = box.run_shell("cat nope && echo unreachable")
    assert outcome.exit_code == 1
    assert "unreachable" not in outcome.stdout


def test_recursive_rm_needs_the_flag(box: Sandbox) -> None:
    assert box.run_shell("rm build").exit_code == 1
    assert box.run_shell("rm -rf build").exit_code == 0
    assert box.list_dir(".") == ["README.md"]


def test_rm_of_root_only_empties_the_sandbox(box: Sandbox) -> None:
    box.run_shell("sudo /bin/rm -rf /")
    assert box.files == {}


def test_unknown_commands_are_reported_not_pretended(box: Sandbox) -> None:
    outcome = box.run_shell("terraform destroy")
    assert outcome.exit_code == 127


def test_unbalanced_quotes_are_a_syntax_error(box: Sandbox) -> None:
    assert box.run_shell('echo "oops').exit_code == 2


def test_curl_reads_the_simulated_web_only(box: Sandbox) -> None:
    assert box.run_shell("curl -s https://docs.python.org/3/").stdout == "<html>docs</html>"
    assert "no network" in box.run_shell("curl https://evil.example/x").stderr
