"""What counts as this machine's loopback address: the one place every listener and probe of ours
asks, so the gateway's HTTP front, the MCP proxy's ``--listen`` and the doctor's probes agree.

Only IP addresses are judged; a name (``localhost``) is the caller's to map, since whether a name
is accepted differs by caller and a name is never resolved here. Standard library only.
"""

from __future__ import annotations

import ipaddress


def is_loopback_ip(host: str) -> bool | None:
    """Whether ``host`` (an IPv4 or IPv6 address, without brackets) is a loopback address; None when
    it is not an IP address at all."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return None
