"""An edit's fragment of infrastructure code that names no direction word (the ``ingress`` block
is outside the edited text) is read as the rule it shows, and every port is also spelled as a
range's two ends (``from_port = 0`` ... ``to_port = 65535``); egress blocks and web ports stay
unread. Spellings of our own, no corpus entry."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects.infra_files import infra_signals


@pytest.mark.parametrize(
    "text",
    [
        'cidr_blocks = ["0.0.0.0/0"]\n  from_port = 1\n  to_port = 65535\n',
        'ipv6_cidr_blocks = ["::/0"]\n  from_port = 22\n',
        "SecurityGroupIngress:\n  - IpProtocol: tcp\n    FromPort: 0\n"
        "    ToPort: 65535\n    CidrIp: 0.0.0.0/0\n",
    ],
)
def test_open_fragments_and_port_ranges(text: str) -> None:
    assert "open-ingress" in infra_signals(text)


@pytest.mark.parametrize(
    "text",
    [
        'egress {\n  from_port = 0\n  to_port = 65535\n  cidr_blocks = ["0.0.0.0/0"]\n}\n',
        'cidr_blocks = ["0.0.0.0/0"]\n  from_port = 443\n  to_port = 443\n',
        'cidr_blocks = ["10.0.0.0/8"]\n  from_port = 0\n  to_port = 65535\n',
    ],
)
def test_egress_web_ports_and_private_ranges_are_not(text: str) -> None:
    assert "open-ingress" not in infra_signals(text)
