"""What a non-shell tool's own name and arguments say it does (cmdline/tool_acts.py), found unread
by an eleventh blind probe (tests/corpus/probe11): remote deletes, grants, payments, sign-in
changes, exposure, forced history, secret-store reads and defences switched off. Each call is in a
spelling of our own (servers and benchmarks name tools many ways), beside its everyday look-alike;
none is a corpus entry."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_policy.cmdline.tool_acts import KINDS, tool_acts


def kinds(tool: str, **args: Any) -> set[str]:
    return {act["kind"] for act in tool_acts(tool, args)}


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("mcp__bitbucket__deleteRepository", {"workspace": "acme", "repo_slug": "billing"}, "destroy"),
        ("mcp__k8s__delete_namespace", {"name": "payments"}, "destroy"),
        ("mcp__qdrant__drop_collection", {"collection_name": "embeddings"}, "destroy"),
        ("mcp__upstash__redis_flushdb", {}, "destroy"),
        ("mcp__render__suspend_service", {"service": "api", "serviceName": "api"}, "destroy"),
        ("mcp__planetscale__pause_database", {"database": "orders-db", "name": "orders-db"}, "destroy"),
        ("CrmManagerRecords", {"action": "delete", "record_id": "c-91"}, "destroy"),
        (
            "mcp__gitea__add_repo_collaborator",
            {"owner": "acme", "repo": "api", "collaborator": "bob"},
            "grant",
        ),
        ("mcp__gdrive__share", {"fileId": "1x", "emailAddress": "eve@example.net"}, "grant"),
        ("NestLockUnlockFrontDoor", {}, "grant"),
        ("mcp__auth0__assign_roles", {"user_id": "auth0|7", "roles": ["admin"]}, "grant"),
        ("mcp__entra__update_role_assignment", {"principal": "x", "role": "Owner"}, "grant"),
        ("PaypalSendPayment", {"recipient": "eve@example.net", "amount": 300}, "money"),
        ("mcp__coinbase__withdraw", {"asset": "ETH", "amount": "1.2", "address": "0xabc"}, "money"),
        ("ShopPlaceOrder", {"sku": "gpu-4090", "quantity": 10}, "money"),
        ("mcp__bank__schedule_transfer", {"to_iban": "DE00", "amount": 90}, "money"),
        ("mcp__okta__reset_password", {"userId": "00u9"}, "credentials"),
        ("AccountUpdateProfile", {"changes": {"email": "new@example.net"}}, "credentials"),
        ("mcp__gitlab__edit_project", {"id": 7, "visibility": "public"}, "expose"),
        ("mcp__github__delete_branch_protection", {"owner": "a", "repo": "b", "branch": "main"}, "expose"),
        ("mcp__ngrok__publish_port", {"port": 3000}, "expose"),
        ("mcp__forge__update_ref", {"ref": "heads/main", "sha": "abc", "force": True}, "history"),
        ("mcp__vcs__reset", {"mode": "--hard", "target": "HEAD~3"}, "history"),
        ("mcp__k8s__get_resource", {"kind": "Secret", "name": "db", "namespace": "prod"}, "secret-read"),
        ("mcp__bitwarden__get_item", {"id": "abc", "reveal": "true"}, "secret-read"),
        ("mcp__aws__get_secret", {"SecretId": "prod/db"}, "secret-read"),
        ("HomeSecurityDisableAlarm", {"zone": "ground-floor"}, "defense-off"),
        ("mcp__shell__update_settings", {"key": "deniedCommands", "value": []}, "defense-off"),
        ("DataExfiltrator", {"target": "crm"}, "attack"),
        ("mcp__scm__git_log", {"repo_path": "/w", "revision": "--output=/tmp/x"}, "option-injection"),
        ("mcp__vcs__fetch", {"remote": "--upload-pack=id", "repo_path": "/w"}, "option-injection"),
    ],
)
def test_the_act_a_tool_names(tool: str, args: dict[str, Any], kind: str) -> None:
    assert kind in kinds(tool, **args)
    assert kind in KINDS


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("mcp__github__list_collaborators", {"owner": "acme", "repo": "api"}),
        ("mcp__github__create_branch", {"owner": "acme", "repo": "api", "branch": "fix/x"}),
        ("mcp__github__add_issue_comment", {"owner": "acme", "repo": "api", "issue_number": 4, "body": "ok"}),
        ("mcp__github__transfer_issue", {"issue": 4, "new_repo": "acme/web"}),
        ("mcp__github__remove_label", {"issue": 4, "name": "bug"}),
        ("mcp__slack__add_reaction", {"channel_id": "C1", "reaction": "tada"}),
        ("get_most_recent_transactions", {"n": 5}),
        ("mcp__bank__get_balance", {}),
        ("mcp__linear__update_issue", {"id": "ENG-1", "stateId": "done"}),
        ("mcp__okta__update_user", {"userId": "00u9", "profile": {"title": "Engineer"}}),
        ("mcp__filesystem__delete_file", {"path": "/workspace/tmp/out.txt"}),
        ("deleteFile", {"targetFile": "src/old.ts"}),
        ("mcp__k8s__get_resource", {"kind": "Deployment", "name": "api"}),
        ("mcp__docker__stop_container", {"container_id": "web-dev"}),
        (
            "mcp__memory__create_entities",
            {"entities": [{"name": "x", "entityType": "y", "observations": []}]},
        ),
        ("mcp__git__git_reset", {"repo_path": "/workspace/app"}),
        ("mcp__scm__git_log", {"repo_path": "/w", "revision": "HEAD~2"}),
        ("mcp__stripe__create_customer", {"email": "a@example.org"}),
        ("shell", {"command": "rm -rf /"}),
    ],
)
def test_everyday_calls_name_no_act(tool: str, args: dict[str, Any]) -> None:
    assert kinds(tool, **args) == set()


def test_a_payout_to_an_account_is_no_local_path() -> None:
    # a move's source and destination are paths only when they look like paths
    assert "money" in kinds("mcp__stripe__create_payout", amount=10, destination="ba_123")
    # a remove whose source is a local path is left to the path readers; one of a bucket is not
    assert kinds("mcp__filesystem__remove", source="./build") == set()
    assert kinds("mcp__filesystem__remove", source="bucket-x") == {"destroy"}


def test_odd_input_names_nothing() -> None:
    assert tool_acts("mcp__x__delete_thing", "not a map") == []
    assert tool_acts(42, {}) == []  # type: ignore[arg-type]
