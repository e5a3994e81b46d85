"""Every round's spellings of our own (``round5_classes.yaml``, ``round6_classes.yaml``): each
attempt refused by self-protection, each look-alike allowed, and every class with look-alikes.
The mechanisms each round added are tested on their own in ``test_roundN_classes.py``.
DATA ONLY: the entries are decided, never run.
"""

from __future__ import annotations

from typing import Any

import pytest
from round_kit import Round

ROUNDS = (Round("round5_classes.yaml"), Round("round6_classes.yaml"), Round("round7_classes.yaml"))


def _params(section: str) -> list[Any]:
    return [
        pytest.param(round_, entry, id=f"{round_.name}:{entry_id}")
        for round_ in ROUNDS
        for entry, entry_id in zip(round_.entries(section), round_.ids(section), strict=True)
    ]


@pytest.mark.parametrize(("round_", "entry"), _params("tamper"))
def test_each_spelling_is_refused(
    layout: tuple[Any, dict[str, str]], round_: Round, entry: dict[str, Any]
) -> None:
    refusal = round_.check(layout, entry)
    assert refusal is not None, f"{entry['name']}: let through"
    assert refusal.rule.startswith("self-protection/")


@pytest.mark.parametrize(("round_", "entry"), _params("benign"))
def test_each_look_alike_is_allowed(
    layout: tuple[Any, dict[str, str]], round_: Round, entry: dict[str, Any]
) -> None:
    assert round_.check(layout, entry) is None


@pytest.mark.parametrize("round_", ROUNDS, ids=lambda r: r.name)
def test_every_class_has_spellings_and_look_alikes(round_: Round) -> None:
    tamper, benign = round_.classes()
    assert tamper <= benign  # every class has look-alikes that must stay allowed
