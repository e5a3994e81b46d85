"""Deprecated path, kept for one release: the README of 0.1 imported from here.

Import from :mod:`dsh_policy.policy` (the curated API) or :mod:`dsh_policy.policy.runtime.auditing`.
"""

from dsh_policy.policy.runtime.auditing import *  # noqa: F403
from dsh_policy.policy.runtime.auditing import __all__  # noqa: F401
