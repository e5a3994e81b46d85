"""Rebuild the shipped known-malicious package snapshot: ``dsh-policy data refresh-malicious`` from a checkout
(the logic lives in :mod:`dsh_policy.cmdline.effects.malicious_refresh`, which documents the sources)."""

from __future__ import annotations

from dsh_policy.cmdline.effects.malicious_refresh import *  # noqa: F403
from dsh_policy.cmdline.effects.malicious_refresh import main

if __name__ == "__main__":
    raise SystemExit(main())
