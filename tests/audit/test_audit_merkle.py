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


def test_small_input_sha256_is_one_of_two_equal_implementations() -> None:
    """The tree's SHA-256 is picked by speed on this host; whichever it is, digests are the same."""
    import importlib

    from dsh_policy.audit import merkle

    candidates = [hashlib.sha256]
    for module in ("_sha2", "_sha256"):
        try:
            candidates.append(importlib.import_module(module).sha256)
            break
        except (ImportError, AttributeError):
            continue
    assert merkle.small_sha256 in candidates
    for data in (b"", b"\x00" + bytes(32), b"\x01" + bytes(range(64)), bytes(200)):
        assert {candidate(data).digest() for candidate in candidates} == {hashlib.sha256(data).digest()}


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=70), st.lists(st.integers(min_value=1, max_value=40), max_size=6))
def test_verifier_extends_the_tree_like_the_frontier(start: int, runs: list[int]) -> None:
    """The verifier's level-at-a-time extension (from any frontier alignment) gives the RFC 6962 root."""
    from types import SimpleNamespace

    from dsh_policy.audit.verify.fast_path_v2 import FastPathV2

    hashes = _hashes(start + sum(runs))
    frontier = MerkleFrontier()
    frontier.extend(hashes[:start])
    lines = FastPathV2(SimpleNamespace(frontier=frontier), None, None, None)  # type: ignore[arg-type]
    at = start
    for run in runs:
        lines.extend_tree(hashes[at : at + run])
        at += run
        assert frontier.size == at
        assert frontier.root() == merkle_root(hashes[:at])
        by_one = MerkleFrontier()
        by_one.extend(hashes[:at])
        assert frontier.roots == by_one.roots
    # Format 3: the record hashes are the leaves, as MerkleFrontier.append_leaf takes them.
    given_leaves, by_one = MerkleFrontier(), MerkleFrontier()
    lines = FastPathV2(SimpleNamespace(frontier=given_leaves), None, None, None)  # type: ignore[arg-type]
    lines.extend_tree(hashes[:start], leaves=True)
    for run in runs:
        lines.extend_tree(hashes[start : start + run], leaves=True)
        start += run
    for leaf in hashes[:start]:
        by_one.append_leaf(leaf)
    assert given_leaves.size == by_one.size and given_leaves.root() == by_one.root()
    assert by_one.root() == merkle_root([]) if not start else by_one.root() != merkle_root(hashes[:start])
