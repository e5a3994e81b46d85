"""A tool whose server wraps a program is judged as the command line it runs (policy/decide/
cli_views.py), and a search tool as the grep it is: found unread by an eleventh blind probe
(tests/corpus/probe11). Calls in spellings of our own, none a corpus entry."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_policy.policy.decide.cli_views import cli_lines, manifest_text, repository_views
from dsh_policy.policy.decide.tool_views import views
from shipped_kit import decision


@pytest.mark.parametrize(
    ("tool", "args", "line"),
    [
        ("mcp__cloud__call_aws", {"cli_command": "aws s3 ls"}, None),  # read by tool_views' command keys
        ("mcp__gcp__gcloud", {"args": ["compute", "instances", "list"]}, "gcloud compute instances list"),
        ("run_az", {"argv": ["az", "group", "list"]}, "az group list"),
        (
            "use_aws",
            {"service_name": "s3api", "operation_name": "list-buckets", "region": "eu-west-1"},
            "aws s3api list-buckets --region eu-west-1",
        ),
        ("mcp__git__git_log", {"repo_path": "/workspace/r", "max_count": 3}, "git -C /workspace/r log -n 3"),
        ("mcp__git__git_init", {"repo_path": "/workspace/new"}, "git init /workspace/new"),
        (
            "mcp__git__git_push",
            {"repo_path": "/w", "remote": "origin", "branch": "dev", "force": True},
            "git -C /w push --force origin dev",
        ),
        (
            "mcp__containers__docker_create_container",
            {"image": "redis:7", "volumes": ["/data:/data"]},
            "docker run -v /data:/data redis:7",
        ),
        ("terminate_process", {"pid": 4242}, "kill -9 4242"),
        ("run_python", {"code": "print(1)"}, "python3 -c 'print(1)'"),
        (
            "mcp__sandbox__execute",
            {"code": "console.log(1)", "language": "javascript"},
            "node -e 'console.log(1)'",
        ),
        ("mcp__sandbox__execute", {"code": "echo 1;", "language": "php"}, "php -r 'echo 1;'"),  # -c: php.ini
        ("Grep", {"pattern": "TODO", "path": "src"}, "grep -rnE -- TODO src"),
        ("search_files", {"path": "src", "regex": "fetch\\("}, "grep -rnE -- 'fetch\\(' src"),
    ],
)
def test_the_line_a_call_stands_for(tool: str, args: dict[str, Any], line: str | None) -> None:
    assert cli_lines(tool, args) == ([line] if line else [])


def test_a_name_search_is_the_find_it_runs() -> None:
    """A search by file name is ``find ROOT -name NAME`` (probe13): the folder argument, else an
    absolute pattern's fixed folders, else the workspace; the name is the pattern's last part."""
    assert cli_lines("Glob", {"pattern": "**/*.ts"}) == ["find . -name '*.ts'"]
    assert cli_lines("mcp__filesystem__search_files", {"path": "/w", "pattern": "*.pem"}) == [
        "find /w -name '*.pem'"
    ]
    assert cli_lines("glob", {"pattern": "/srv/app/**/secrets.yml"}) == ["find /srv/app -name secrets.yml"]
    assert cli_lines("find_by_name", {"SearchDirectory": "/opt", "Pattern": "*.kdbx"}) == [
        "find /opt -name '*.kdbx'"
    ]
    assert cli_lines("Glob", {"pattern": "**"}) == []


def test_an_absolute_include_pattern_is_a_content_search_root() -> None:
    assert cli_lines("grep_search", {"query": "password", "includePattern": "/srv/**/*.conf"}) == [
        "grep -rnE -- password /srv"
    ]
    assert cli_lines("grep_search", {"query": "TODO", "includePattern": "src/**"}) == ["grep -rnE -- TODO ."]


def test_windsurf_spells_its_content_search_in_capitals() -> None:
    assert cli_lines(
        "grep_search", {"Query": "client_secret", "SearchPath": "/home/u", "MatchPerLine": True}
    ) == ["grep -rnE -- client_secret /home/u"]
    assert cli_lines("grep_search", {"Query": "useState", "SearchPath": "src"}) == [
        "grep -rnE -- useState src"
    ]


def test_plain_tools_stand_for_no_line() -> None:
    assert cli_lines("mcp__github__get_issue", {"owner": "a", "repo": "b", "issue_number": 1}) == []
    assert cli_lines("mcp__docs__evaluate", {"code": "1+1"}) == []  # no word says it runs code


def test_a_git_tool_reads_its_folder_and_init_writes_one() -> None:
    assert repository_views("mcp__git__git_status", {"repo_path": "/r"}) == [("read_file", {"path": "/r"})]
    assert repository_views("mcp__git__git_init", {"repo_path": "/r/"}) == [
        ("apply_patch", {"patch": "", "paths": ["/r/.git/config"]})
    ]
    assert repository_views("mcp__github__get_me", {}) == []


def test_a_manifest_argument_is_an_infrastructure_file() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    assert manifest_text({"manifest": text}) == text
    assert manifest_text({"resource": "pods"}) is None
    found = views("mcp__k8s__apply", {"manifest": text})
    assert (
        found is not None
        and ("write_file", {"path": "kubernetes-manifest.yaml", "content": text}) in found.calls
    )


def test_a_read_only_sub_command_outweighs_an_editor_name() -> None:
    found = views("str_replace_editor", {"command": "view", "path": "/srv/app/main.py"})
    assert found is not None and found.calls == (("read_file", {"path": "/srv/app/main.py"}),)


@pytest.mark.parametrize("verb", [{"mode": "read"}, {"type": "view"}, {"action": "list"}])
def test_a_read_looking_argument_never_outweighs_a_name_that_deletes(verb: dict[str, str]) -> None:
    """A tool named to delete is judged by its name whatever a read-looking argument says; the
    read-only sub-command wins only over a name that may merely write (an editor)."""
    found = views("mcp__fs__delete_directory", {"path": "/home/u/project", **verb})
    assert found is not None and [c[0] for c in found.calls] != ["read_file"]
    assert decision("mcp__fs__delete_directory", path="/home/u/project", **verb) != "allow"


def test_list_urls_and_attachments_are_read() -> None:
    found = views("fetch_webpage", {"urls": ["https://a.example/x", "https://b.example/y"], "query": "q"})
    assert found is not None
    assert [c for c in found.calls if c[0] == "web_fetch"] == [
        ("web_fetch", {"url": "https://a.example/x"}),
        ("web_fetch", {"url": "https://b.example/y"}),
    ]
    found = views("mail_send", {"to": "a@example.org", "body": "hi", "attachments": ["/w/report.pdf"]})
    assert found is not None and ("read_file", {"path": "/w/report.pdf"}) in found.calls


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("mcp__cloud__call_aws", {"cli_command": "aws iam create-access-key --user-name deploy"}, "ask"),
        ("mcp__cloud__call_aws", {"cli_command": "aws s3 ls s3://team-bucket/"}, "allow"),
        ("mcp__git__git_diff", {"repo_path": "/workspace/r", "target": "--output=/home/u/.profile"}, "deny"),
        ("mcp__git__git_diff", {"repo_path": "/workspace/r", "target": "main"}, "allow"),
        ("mcp__git__git_status", {"repo_path": "/home/u/.gnupg"}, "deny"),
        (
            "mcp__git__git_create_branch",
            {"repo_path": "/workspace/r", "branch_name": "x", "base_branch": "main"},
            "allow",
        ),
        ("Grep", {"pattern": "-----BEGIN OPENSSH PRIVATE KEY", "path": "/home/u"}, "deny"),
        ("Grep", {"pattern": "def main", "path": "/workspace/src"}, "allow"),
        # name searches over the home folder or the machine for key, state and browser files
        ("Glob", {"pattern": "**/*.kdbx", "path": "/home/u"}, "deny"),
        ("Glob", {"pattern": "**/prod.tfstate", "path": "/home/u"}, "deny"),
        ("mcp__files__search_files", {"path": "/", "pattern": "id_ecdsa"}, "deny"),
        ("glob", {"pattern": "/home/u/.config/**/logins.json"}, "deny"),
        ("Glob", {"pattern": "**/*.tsx", "path": "/workspace/src"}, "allow"),
        ("Glob", {"pattern": "**/*.md"}, "allow"),
        # a search by name reads the names of ROOT/NAME: public keys are a listing, private ones not
        ("Glob", {"pattern": "*.pub", "path": "/home/u/.ssh"}, "allow"),
        ("Glob", {"pattern": "id_ed*", "path": "/home/u/.ssh"}, "deny"),
        ("mcp__fs__search_files", {"path": "/home/u/.aws", "pattern": "*"}, "deny"),
        # content searches for the scanners' token prefixes, however the home is spelled
        ("Grep", {"pattern": "shpat_[a-f0-9]{32}", "path": "/home/u"}, "deny"),
        ("Grep", {"pattern": "xox[pe]-", "path": "/Users/u/.config"}, "deny"),
        ("grep_search", {"query": "client_secret", "includePattern": "/home/u/**"}, "deny"),
        ("grep_search", {"query": "useState", "includePattern": "src/**"}, "allow"),
        (
            "mcp__sandbox__run_code",
            {"code": "import socket; socket.create_connection(('203.0.113.9', 9001))"},
            "ask",
        ),
        ("mcp__sandbox__run_code", {"code": "print(sum(range(10)))"}, "allow"),
    ],
)
def test_whole_decisions(tool: str, args: dict[str, Any], expected: str) -> None:
    assert decision(tool, **args) == expected
