"""The words of an identifier a tool call is named or steered by (``delete_repository``,
``BankManagerTransferFunds``, ``namespaces_delete``, ``operation: delete-stack``).

One splitter for the readers that judge a call by its name: the tool-act reader
(``cmdline/tool_acts.py``) and the policy's tool views (``policy/decide/tool_views.py``,
``cli_views.py``). Names repeat from call to call, so the split is cached.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["identifier_words", "own_name"]

_WORD: Final = lazy_compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@lru_cache(maxsize=4096)
def identifier_words(text: str) -> frozenset[str]:
    """The lower-case words of ``text``, split at case changes, digits and every other character."""
    return frozenset(word.lower() for word in _WORD.findall(text))


def own_name(tool: str) -> str:
    """A tool's own name: an MCP tool's last part (``mcp__server__tool``), where the server's name
    says nothing of what the tool does."""
    return tool.rsplit("__", 1)[-1]
