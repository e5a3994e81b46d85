"""The compact Merkle frontier agrees with the RFC 6962 recursive definition."""

from __future__ import annotations

import hashlib

import pytest
from dsh_policy.audit.merkle import MerkleFrontier, empty_root, leaf_hash, merkle_root, node_hash
from hypothesis import given, settings
from hypothesis import strategies as st


def _hashes(count: int) -> list[bytes]:
    return [hashlib.sha256(str(i).encode()).digest() for i in range(count)]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=300))
def test_frontier_root_equals_rfc6962_root_for_every_size(count: int) -> None:
    frontier = MerkleFrontier()
    frontier.extend(_hashes(count))
    assert frontier.size == count
    assert frontier.root() == merkle_root(_hashes(count))


def test_rfc6962_prefixes_separate_leaves_from_nodes() -> None:
    a, b = _hashes(2)
    assert leaf_hash(a) == hashlib.sha256(b"\x00" + a).digest()
    assert merkle_root([a, b]) == hashlib.sha256(b"\x01" + leaf_hash(a) + leaf_hash(b)).digest()
    assert node_hash(leaf_hash(a), leaf_hash(b)) == merkle_root([a, b])
    assert MerkleFrontier().root() == empty_root() == hashlib.sha256(b"").digest()


def test_restored_frontier_continues_like_the_original() -> None:
    original = MerkleFrontier()
    original.extend(_hashes(13))
    restored = MerkleFrontier.restore(13, original.roots)
    for frontier in (original, restored):
        frontier.extend(_hashes(20)[13:])
    assert restored.root() == original.root() == merkle_root(_hashes(20))


def test_a_frontier_that_cannot_fit_its_size_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        MerkleFrontier.restore(3, _hashes(1))
