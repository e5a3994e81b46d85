"""CI actions referenced from repositories whose tags were repointed in a published compromise.

An action referenced by tag (``uses: owner/repo@v35``) runs whatever commit the tag names when the
workflow runs, so a compromise that moved the tags reaches every workflow that names one; a full
commit sha is immutable and does not. The repositories are *data*
(``compromised_actions.json``: each with its public advisory id, date and the first release after
the clean-up), in the same spirit as the malicious-package snapshot.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from dsh_policy.cmdline.effects.packages import version_key
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["compromised_action_refs"]

DATA = Path(__file__).with_name("compromised_actions.json")

_USES = lazy_compile(
    r"(?im)^[ \t-]*[\"']?uses[\"']?\s*:\s*[\"']?([\w.-]+/[\w.-]+)(?:/[^@\s\"']*)?@([^\s\"'#]+)"
)
_SHA = lazy_compile(r"^[0-9a-f]{40}$")


@lru_cache(maxsize=1)
def _actions() -> dict[str, dict[str, Any]]:
    with DATA.open(encoding="utf-8") as handle:
        data: dict[str, dict[str, Any]] = json.load(handle)["actions"]
    return {name.lower(): entry for name, entry in data.items()}


def _through_repointed_tags(ref: str, fixed: str) -> bool:
    if _SHA.match(ref):
        return False
    version = ref[1:] if ref[:1] in ("v", "V") else ref
    if not fixed or not re.match(r"^\d", version):
        return True  # every tag was affected, or a branch name that follows whatever is pushed
    # a major tag (v46) moves with its newest release, so it compares by the parts it names
    key = version_key(version)
    return key < version_key(fixed)[: len(key)]


def compromised_action_refs(text: str) -> list[str]:
    """``owner/repo@ref (advisory id)`` for each ``uses:`` in ``text`` that names a compromised
    repository by a tag the compromise repointed."""
    found: list[str] = []
    actions = _actions()
    for match in _USES.finditer(text[:200_000]):
        repo, ref = match.group(1).lower(), match.group(2)
        entry = actions.get(repo)
        if entry is not None and _through_repointed_tags(ref, entry.get("fixed", "")):
            found.append(f"{repo}@{ref} ({entry['id']})")
    return found
