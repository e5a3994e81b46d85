"""The optional webhook: a new request is POSTed once, as signed JSON, to a receiver the test runs on
loopback; a receiver that fails or is not there never changes the decision."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment, binding
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.approvals.notify import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_holds
from dsh_policy.policy.config import ApprovalSettings, WebhookSettings, load_gateway_config

KEY = b"a-shared-webhook-key-0123456789"


class Receiver:
    """A webhook receiver on loopback that keeps what it was sent and answers ``status``."""

    def __init__(self, status: int = 204) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.received.append((dict(self.headers.items()), body))
                self.send_response(receiver.status)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/dsh"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver()
    yield started
    started.close()


def channel(deployment: Deployment, url: str) -> ApprovalChannel:
    secret = deployment.folder / "webhook.secret"
    secret.write_bytes(KEY + b"\n")
    webhook = WebhookSettings(
        url=url, secret=str(secret), timeout_seconds=2, console="http://127.0.0.1:8765/"
    )
    settings = ApprovalSettings(
        folder=str(deployment.folder / "queue"),
        approvers=str(deployment.approvers_file),
        wait_seconds=0,
        webhook=webhook,
    )
    return ApprovalChannel(settings)


def test_a_new_request_is_announced_once_with_a_signature_that_verifies(
    deployment: Deployment, receiver: Receiver
) -> None:
    queue = channel(deployment, receiver.url)
    first = queue.admit(
        binding(), message="push needs approval", shown_args={"command": "git push"}, record=None
    )
    again = queue.admit(
        binding(), message="push needs approval", shown_args={"command": "git push"}, record=None
    )
    assert not first.allowed and not again.allowed
    assert len(receiver.received) == 1  # the same pending request is not announced twice
    headers, body = receiver.received[0]
    assert signature_holds(KEY, headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])
    assert not signature_holds(b"another key", headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])
    assert not signature_holds(KEY, headers[TIMESTAMP_HEADER], body + b" ", headers[SIGNATURE_HEADER])
    old = str(int(headers[TIMESTAMP_HEADER]) - 3600)
    assert not signature_holds(KEY, old, body, headers[SIGNATURE_HEADER])  # a replay of an old notice
    notice = json.loads(body)
    request = first.approval.removeprefix("pending:")
    assert notice["event"] == "approval_requested" and notice["request"] == request
    assert notice["tool"] == "shell" and notice["args"] == {"command": "git push"}
    assert notice["rules"] == ["vcs/push-needs-approval"] and notice["message"] == "push needs approval"
    assert notice["approve"] == f"dsh-policy approvals approve {request}"
    assert notice["console"] == "http://127.0.0.1:8765/"
    other = queue.admit(binding("git push origin other"), message="m", shown_args={}, record=None)
    assert not other.allowed and len(receiver.received) == 2  # another call: another request


def test_a_failing_or_absent_receiver_changes_no_decision(deployment: Deployment) -> None:
    failing = Receiver(status=500)
    try:
        gate = channel(deployment, failing.url).admit(binding(), message="m", shown_args={}, record=None)
        assert not gate.allowed and gate.approval.startswith("pending:apr-") and len(failing.received) == 1
    finally:
        failing.close()
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    gate = channel(deployment, f"http://127.0.0.1:{closed}/").admit(
        binding("git push origin two"), message="m", shown_args={}, record=None
    )
    assert not gate.allowed and gate.approval.startswith("pending:apr-")


def test_the_webhook_is_read_from_the_deployment_file(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    (tmp_path / "pack.yaml").write_text("")
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [pack.yaml]\n  approvals:\n"
        "    folder: queue\n    webhook: {url: 'https://hooks.example.net/x', secret: keys/webhook.secret}\n"
    )
    loaded = load_gateway_config(config)
    assert not isinstance(loaded, list), loaded
    assert loaded.approvals is not None and loaded.approvals.webhook is not None
    assert loaded.approvals.webhook.secret == str(tmp_path / "keys" / "webhook.secret")
    config.write_text(config.read_text().replace("https://hooks.example.net/x", "ftp://x"))
    errors = load_gateway_config(config)
    assert isinstance(errors, list) and "url" in str(errors[0])
