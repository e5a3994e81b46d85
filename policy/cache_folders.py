"""Where the compiled-policy cache may live, given an environment.

Two parts read it: the cache itself (:mod:`dsh_policy.policy.policy_cache.folder`) and
self-protection, which guards every candidate (whoever writes a kept policy there changes what
the gateway decides). It lives here, below both, as :mod:`.gateway_folders` does for the runtime
folder. Standard library only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CACHE_DIR_VARIABLE = "DSH_POLICY_CACHE_DIR"


def cache_folder(environ: Mapping[str, str] | None = None) -> str:
    """The folder compiled policies are kept in: ``$DSH_POLICY_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/dsh-policy/compiled``, else ``~/.cache/dsh-policy/compiled``."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_DIR_VARIABLE):
        return env[CACHE_DIR_VARIABLE]
    return os.path.join(_cache_home(env), "dsh-policy", "compiled")


def cache_folder_candidates(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every folder to guard for the cache in this environment: the override, and the
    ``dsh-policy`` folders under ``$XDG_CACHE_HOME`` and ``~/.cache`` (the whole folder, so a
    new ``compiled`` cannot be put in place of the real one)."""
    env = os.environ if environ is None else environ
    found = [env[CACHE_DIR_VARIABLE]] if env.get(CACHE_DIR_VARIABLE) else []
    found.append(os.path.join(_cache_home(env), "dsh-policy"))
    found.append(os.path.join(os.path.expanduser("~"), ".cache", "dsh-policy"))
    return tuple(dict.fromkeys(found))


def _cache_home(env: Mapping[str, str]) -> str:
    return env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
