"""An approval admits exactly the call it was given for, once, in time, from a key allowed for
the rule; grants are scoped, time-boxed and revocable; the queue survives a restart."""

from __future__ import annotations

from typing import Any

from approval_kit import Deployment, binding, make_deployment
from dsh_policy.policy.approvals import Admitted, ApprovalQueue, QueueError, Refused, Waiting
from dsh_policy.policy.approvals.signing import DECISION_FIELDS, DECISION_TAG, sign


def ask(queue: ApprovalQueue, call: Any = None) -> Any:
    call = call if call is not None else binding()
    return queue.consult(call, message="pushing needs approval", shown_args=dict(call.args))


def approved_request(deployment: Deployment, approver: str = "alice", **kwargs: Any) -> str:
    queue = deployment.queue()
    opened = ask(queue)
    assert isinstance(opened, Waiting) and opened.created
    decided = queue.decide(opened.request, approver, deployment.keys[approver], "approve", **kwargs)
    assert not isinstance(decided, QueueError), decided
    return opened.request


def test_an_approved_call_runs_once_and_names_its_approver(deployment: Deployment) -> None:
    request = approved_request(deployment)
    first = ask(deployment.queue())
    assert first == Admitted("approval", request, ("alice",))
    again = ask(deployment.queue())
    assert isinstance(again, Waiting) and again.created and again.request != request


def test_an_approval_does_not_approve_the_same_tool_with_other_arguments(deployment: Deployment) -> None:
    approved_request(deployment)
    other = ask(deployment.queue(), binding("git push --force origin main"))
    assert isinstance(other, Waiting) and other.created
    other_session = ask(deployment.queue(), binding(session="s2"))
    assert isinstance(other_session, Waiting) and other_session.created


def test_an_approval_expires(deployment: Deployment) -> None:
    request = approved_request(deployment, valid_seconds=60)
    deployment.clock.now += 61
    late = ask(deployment.queue())
    assert isinstance(late, Waiting) and late.request != request
    assert deployment.queue().snapshot()["requests"][request]["status"] == "expired"


def test_a_policy_change_voids_the_approval(deployment: Deployment) -> None:
    request = approved_request(deployment)
    changed = ask(deployment.queue(), binding(policy="sha256:policy-b"))
    assert isinstance(changed, Waiting) and changed.created
    stored = deployment.queue().snapshot()["requests"][request]
    assert stored["status"] == "void" and "policy" in stored["why"]
    # and the old policy's call is not admitted by it afterwards either
    assert isinstance(ask(deployment.queue()), Waiting)


def test_an_approver_not_allowed_for_the_rule_cannot_approve(deployment: Deployment) -> None:
    queue = deployment.queue()
    opened = ask(queue)
    assert isinstance(opened, Waiting)
    refused = queue.decide(opened.request, "bob", deployment.keys["bob"], "approve")
    assert isinstance(refused, QueueError) and "may not approve" in str(refused)
    # A decision written into the queue by hand, signed by bob's own listed key, counts for nothing.
    forge_decision(deployment, opened.request, "bob", deployment.keys["bob"])
    assert isinstance(ask(deployment.queue()), Waiting)


def test_a_key_that_is_not_listed_cannot_approve(deployment: Deployment) -> None:
    queue = deployment.queue()
    opened = ask(queue)
    assert isinstance(opened, Waiting)
    refused = queue.decide(opened.request, "alice", deployment.keys["mallory"], "approve")
    assert isinstance(refused, QueueError) and "not alice's listed key" in str(refused)
    forge_decision(deployment, opened.request, "alice", deployment.keys["mallory"])
    assert isinstance(ask(deployment.queue()), Waiting)


def forge_decision(deployment: Deployment, request_id: str, name: str, key: Any) -> None:
    """Write a decision straight into the queue file, as anyone who can write the folder could."""
    approver = deployment.queue().approvers.get(name)  # type: ignore[union-attr]
    assert approver is not None
    with deployment.queue().store.transaction() as document:
        request = document["requests"][request_id]
        statement = {
            "request": request_id,
            "binding": request["digest"],
            "verdict": "approve",
            "approver": name,
            "key_id": approver.key_id,
            "issued": int(deployment.clock.now),
            "expires": int(deployment.clock.now) + 600,
        }
        statement["signature"] = sign(key, DECISION_TAG, statement, DECISION_FIELDS)
        request["decisions"].append(statement)
        request["status"] = "approved"


def test_a_denial_refuses_the_waiting_call_naming_the_approver(deployment: Deployment) -> None:
    queue = deployment.queue()
    opened = ask(queue)
    assert isinstance(opened, Waiting)
    queue.decide(opened.request, "alice", deployment.keys["alice"], "deny", reason="not today")
    refused = ask(deployment.queue())
    assert refused == Refused(opened.request, "alice", "not today")


def test_four_eyes_needs_two_distinct_approvers(tmp_path: Any) -> None:
    deployment = make_deployment(tmp_path, quorum=2)
    call = binding(rules=("net/fetch",))
    opened = ask(deployment.queue(), call)
    assert isinstance(opened, Waiting)
    deployment.queue().decide(opened.request, "alice", deployment.keys["alice"], "approve")
    assert isinstance(ask(deployment.queue(), call), Waiting)
    deployment.queue().decide(opened.request, "bob", deployment.keys["bob"], "approve")
    assert ask(deployment.queue(), call) == Admitted("approval", opened.request, ("alice", "bob"))


def test_a_restart_keeps_pending_requests_and_grants(deployment: Deployment) -> None:
    opened = ask(deployment.queue())
    assert isinstance(opened, Waiting)
    grant = deployment.queue().grant(
        "alice", deployment.keys["alice"], rules=("vcs/*",), seconds=600, session="s9"
    )
    assert not isinstance(grant, QueueError)
    restarted = deployment.queue()  # new objects over the same folder
    snapshot = restarted.snapshot()
    assert snapshot["requests"][opened.request]["status"] == "pending"
    assert snapshot["grants"][grant["id"]]["status"] == "active"
    assert ask(restarted) == Waiting(opened.request, created=False)
    assert ask(restarted, binding(session="s9")) == Admitted("grant", grant["id"], ("alice",))


def test_a_grant_holds_only_in_scope_until_it_ends_or_is_revoked(deployment: Deployment) -> None:
    queue = deployment.queue()
    grant = queue.grant(
        "alice",
        deployment.keys["alice"],
        rules=("vcs/*",),
        seconds=600,
        session="s1",
        match=r"git push origin \w+",
    )
    assert not isinstance(grant, QueueError)
    assert isinstance(ask(queue), Admitted)
    assert isinstance(ask(queue), Admitted)  # a grant is not single-use
    assert isinstance(ask(queue, binding("git push --force origin main")), Waiting)  # outside the pattern
    assert isinstance(ask(queue, binding(session="s2")), Waiting)  # another session
    assert isinstance(ask(queue, binding(rules=("net/fetch",))), Waiting)  # another rule
    deployment.clock.now += 601
    assert isinstance(ask(queue, binding("git push origin other")), Waiting)
    deployment.clock.now -= 601
    assert not isinstance(queue.revoke(grant["id"], "alice"), QueueError)
    assert isinstance(ask(queue, binding("git push origin third")), Waiting)


def test_a_grant_beyond_the_approvers_rules_is_refused(deployment: Deployment) -> None:
    refused = deployment.queue().grant("bob", deployment.keys["bob"], rules=("vcs/*",), seconds=60)
    assert isinstance(refused, QueueError) and "may not grant" in str(refused)


def test_every_event_is_journaled_for_the_audit_log(deployment: Deployment) -> None:
    approved_request(deployment)
    ask(deployment.queue())
    recorded: list[tuple[str, dict[str, Any]]] = []
    assert deployment.queue().drain_journal(lambda kind, fields: recorded.append((kind, fields))) == 3
    kinds = [kind for kind, _ in recorded]
    assert kinds == ["approval_requested", "approval_decided", "approval_used"]
    assert recorded[1][1]["approver"] == "alice" and recorded[1][1]["signature"]
    assert deployment.queue().snapshot()["journal"] == []
