"""Every folder a resident gateway may keep its socket, lock and token in, given an environment.

Two parts read it: the gateway's own files (:mod:`dsh_policy.policy.hooks.gateway.runtime_paths`
picks one of these folders) and self-protection, which guards all of them (whoever can write there
can stand in for the gateway). It lives here, below both, so that self-protection does not import
``hooks``.

Standard library only, and only ``os``: the fast hook client imports it on every event.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing would cost every hook event
if TYPE_CHECKING:
    from collections.abc import Mapping

RUNTIME_DIR_VARIABLE = "DSH_POLICY_RUNTIME_DIR"


def runtime_dir_candidates(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every folder the gateway's runtime folder may be in this environment, whether or not it
    exists: the override, the one under ``$XDG_RUNTIME_DIR``, and the one under ``$TMPDIR``."""
    env = os.environ if environ is None else environ
    found = [env[RUNTIME_DIR_VARIABLE]] if env.get(RUNTIME_DIR_VARIABLE) else []
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg:
        found.append(xdg_folder(xdg))
    found.append(tmp_folder(env))
    return tuple(dict.fromkeys(found))


def xdg_folder(xdg: str) -> str:
    """The gateway folder under ``$XDG_RUNTIME_DIR``."""
    return os.path.join(xdg, "dsh-policy")


def tmp_folder(environ: Mapping[str, str]) -> str:
    """The gateway folder under ``$TMPDIR`` (``/tmp`` by default), one per user."""
    return os.path.join(environ.get("TMPDIR") or "/tmp", f"dsh-policy-{os.geteuid()}")
