"""The rule packs shipped with dsh-policy, as package data (``<name>.yaml`` + ``<name>.cases.yaml``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped_pack(name: str) -> Path:
    """Path of the shipped pack ``name`` (e.g. ``baseline``); raises FileNotFoundError if absent."""
    path = Path(str(resources.files(__name__).joinpath(f"{name}.yaml")))
    if not path.is_file():
        raise FileNotFoundError(f"no shipped rule pack named {name!r}")
    return path
