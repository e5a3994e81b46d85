"""The verified compiled-policy cache: a policy built once is read back, not built again.

:func:`lookup` reads the packs' bytes, derives the key (:mod:`.key`), and returns the kept policy
when the folder and entry pass :mod:`.folder`'s checks and the entry rebuilds (:mod:`.codec`);
otherwise the caller builds from the packs as before and hands the result to :func:`keep`. Only
successful builds are kept: a pack with an error is read, validated and reported with its file,
line and field every time, and a failed build never leaves an entry.

A lookup costs reading the packs and the package's code (hashing about 2 MB, once per process),
reading one JSON file and compiling each stored tree to closures; a hit skips YAML, the schema,
parsing every expression, the type checker and the inline examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_policy.policy.policy_cache.folder import cache_enabled, read_entry, write_entry
from dsh_policy.policy.policy_cache.key import policy_key

__all__ = ["Lookup", "keep", "lookup"]


@dataclass(frozen=True, slots=True)
class Lookup:
    """One load's key and what was kept under it (None: build, then :func:`keep`)."""

    key: str | None
    policy: Any = None
    paths: tuple[str, ...] = ()
    contents: tuple[bytes, ...] = ()


def lookup(
    paths: Sequence[str],
    *,
    params: Mapping[str, Any],
    param_origins: Mapping[str, Any],
    engine: Any,
    shadow: bool,
) -> Lookup:
    """The kept policy for this load, or the key to keep a fresh build under (None: not kept,
    e.g. an engine object of the caller's, a pack that cannot be read, the cache switched off)."""
    if not isinstance(engine, str) or engine not in ("auto", "closure") or not cache_enabled():
        return Lookup(None)
    contents = _read_all(paths)
    if contents is None:
        return Lookup(None)
    from dsh_policy.policy.cel import available_engines

    key = policy_key(
        paths,
        contents,
        params=params,
        param_origins=param_origins,
        engine=engine,
        native=engine == "auto" and "native" in available_engines(),
        shadow=shadow,
    )
    if key is None:
        return Lookup(None)
    found = read_entry(key)
    if found is not None:
        try:
            from dsh_policy.policy.policy_cache.codec import decode

            return Lookup(key, decode(found), tuple(paths), contents)
        except Exception:
            pass
    return Lookup(key, None, tuple(paths), contents)


def keep(found: Lookup, policy: Any, trees: dict[str, Any]) -> bool:
    """Keep a fresh build under ``found.key``, unless a pack changed while it was built (its
    bytes then no longer match the key) or the policy cannot be kept (see :func:`.codec.encode`)."""
    if found.key is None or _read_all(found.paths) != found.contents:
        return False
    from dsh_policy.policy.policy_cache.codec import encode

    try:
        body = encode(policy, trees)
    except Exception:  # a value JSON cannot carry: the policy is simply not kept
        return False
    return body is not None and write_entry(found.key, body)


def _read_all(paths: Sequence[str]) -> tuple[bytes, ...] | None:
    contents: list[bytes] = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                contents.append(handle.read())
        except OSError:
            return None
    return tuple(contents)
