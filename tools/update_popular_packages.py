"""Rebuild the shipped list of most-used package names: ``dsh-policy data refresh-popular`` from a checkout
(the logic lives in :mod:`dsh_policy.cmdline.effects.popular_refresh`, which documents the sources)."""

from __future__ import annotations

from dsh_policy.cmdline.effects.popular_refresh import *  # noqa: F403
from dsh_policy.cmdline.effects.popular_refresh import main

if __name__ == "__main__":
    raise SystemExit(main())
