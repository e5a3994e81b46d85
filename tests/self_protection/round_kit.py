"""What the per-round class tests share (``test_round5_classes.py``, ``test_round6_classes.py``):
a round's YAML of spellings of our own, its ids, and one entry decided against the per-user layout
of ``measure_rates.py`` (the ``layout`` fixture), after the data files its entries name are laid
out in the project. DATA ONLY: entries are decided, never run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from dsh_policy.policy.hooks.protocol.vocabulary import ToolInputError, canonicalize
from measure_rates import _fill

HERE = Path(__file__).parent


class Round:
    """One round's file: ``tamper`` and ``benign`` entries, and ``files`` they copy, link or name."""

    def __init__(self, name: str) -> None:
        self.name = name.removesuffix("_classes.yaml")
        self.data: dict[str, Any] = yaml.load((HERE / name).read_text(), Loader=yaml.CSafeLoader)

    def entries(self, section: str) -> list[dict[str, Any]]:
        return list(self.data[section])

    def ids(self, section: str) -> list[str]:
        return [f"{entry['class']}:{entry['name']}" for entry in self.data[section]]

    def check(self, layout: tuple[Any, dict[str, str]], entry: dict[str, Any], cwd: str | None = None) -> Any:
        """The refusal self-protection gives ``entry`` (None: allowed), in ``cwd`` or the project."""
        protection, names = layout
        for relative, text in self.data.get("files", {}).items():  # data files, never run
            path = Path(names["project"]) / relative
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_fill(text, names))
        call = canonicalize("claude-code", entry["tool"], _fill(entry["input"], names))
        assert not isinstance(call, ToolInputError), call
        return protection.check(call.name, call.args, cwd or names["project"])

    def classes(self) -> tuple[set[str], set[str]]:
        """(the classes of the attempts, the classes of the look-alikes)."""
        return {e["class"] for e in self.data["tamper"]}, {e["class"] for e in self.data["benign"]}
