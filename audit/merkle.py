"""RFC 6962 Merkle tree hashes over record hashes, kept as a compact frontier.

Checkpoints commit to the whole log so far with a Merkle root: leaf ``SHA-256(0x00 || record hash)``,
node ``SHA-256(0x01 || left || right)``. The frontier (the roots of the perfect subtrees, largest
first) is all a writer or verifier needs to extend the tree and compute the root of any size, so
each checkpoint stores it and a reopening writer resumes from it without rereading old segments.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .record_hash import LEAF_FORMATS

_LEAF = b"\x00"
_NODE = b"\x01"


def _small_input_sha256() -> Callable[[bytes], Any]:
    """SHA-256 for the tree's one- and two-block inputs: whichever of OpenSSL's and CPython's own
    implementation is faster on this host, timed once on a node-sized input (same function, same
    digests: tests compare them). Which wins depends on the CPU: without SHA extensions CPython's
    has none of OpenSSL's per-object setup and costs about half as much per leaf and node; with
    them OpenSSL's hashes a two-block node in half the time of CPython's software rounds."""
    candidates = [hashlib.sha256]
    for module in ("_sha2", "_sha256"):  # Python 3.12+, 3.11
        try:
            candidates.append(importlib.import_module(module).sha256)
            break
        except (ImportError, AttributeError):
            continue
    if len(candidates) == 1:
        return hashlib.sha256
    node = bytes(65)
    best = [float("inf")] * len(candidates)
    # Interleaved rounds, best of each: a preemption cannot decide alone. Seven short rounds
    # rather than three long ones (the same hashes): at load 5 on 2 cores three rounds picked the
    # slower one about one import in eight, which costs the verifier a third more per node.
    for _ in range(7):
        for index, candidate in enumerate(candidates):
            started = time.perf_counter()
            for _ in range(27):
                candidate(node).digest()
            best[index] = min(best[index], time.perf_counter() - started)
    return candidates[best.index(min(best))]


#: ``sha256(data)`` with ``.digest()``, for inputs of a block or two (leaves and nodes).
small_sha256: Callable[[bytes], Any] = _small_input_sha256()


def leaf_hash(record_hash: bytes) -> bytes:
    """RFC 6962 leaf hash of one record (its 32-byte chain hash)."""
    return small_sha256(_LEAF + record_hash).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash."""
    return small_sha256(_NODE + left + right).digest()


def empty_root() -> bytes:
    """RFC 6962 root of the empty tree: SHA-256 of nothing."""
    return hashlib.sha256(b"").digest()


@dataclass(slots=True)
class MerkleFrontier:
    """Mutable compact range of a growing tree: ``size`` leaves, one subtree root per set bit."""

    size: int = 0
    roots: list[bytes] = field(default_factory=list)

    @classmethod
    def restore(cls, size: int, roots: Sequence[bytes]) -> MerkleFrontier:
        """Rebuild from a stored frontier; raise ``ValueError`` if it cannot belong to ``size``."""
        if size < 0 or bin(size).count("1") != len(roots) or any(len(r) != 32 for r in roots):
            raise ValueError(f"frontier of {len(roots)} roots does not fit a tree of {size} leaves")
        return cls(size, list(roots))

    def append(self, record_hash: bytes) -> None:
        """Add one record; merge equal-sized subtrees like a binary counter increments."""
        # leaf_hash and node_hash inlined: this runs once per appended or verified record.
        sha256 = small_sha256
        node = sha256(_LEAF + record_hash).digest()
        size = self.size
        roots = self.roots
        while size & 1:
            node = sha256(_NODE + roots.pop() + node).digest()
            size >>= 1
        roots.append(node)
        self.size += 1

    def append_leaf(self, node: bytes) -> None:
        """Add one record by its leaf hash (a format 3 record's hash is its leaf)."""
        sha256 = small_sha256
        size = self.size
        roots = self.roots
        while size & 1:
            node = sha256(_NODE + roots.pop() + node).digest()
            size >>= 1
        roots.append(node)
        self.size += 1

    def append_record(self, version: object, record_hash: bytes) -> None:
        """Add one record of format ``version`` by its raw hash (the leaf itself in format 3)."""
        if version in LEAF_FORMATS:
            self.append_leaf(record_hash)
        else:
            self.append(record_hash)

    def extend(self, record_hashes: Iterable[bytes]) -> None:
        """Add several records in order."""
        for record_hash in record_hashes:
            self.append(record_hash)

    def root(self) -> bytes:
        """RFC 6962 root of the current tree (left subtrees are perfect, so fold right to left)."""
        if not self.roots:
            return empty_root()
        node = self.roots[-1]
        for left in reversed(self.roots[:-1]):
            node = node_hash(left, node)
        return node

    def copy(self) -> MerkleFrontier:
        """An independent snapshot."""
        return MerkleFrontier(self.size, list(self.roots))


def merkle_root(record_hashes: Sequence[bytes]) -> bytes:
    """Reference RFC 6962 MTH by recursive split (tests compare the frontier against it)."""
    if not record_hashes:
        return empty_root()
    if len(record_hashes) == 1:
        return leaf_hash(record_hashes[0])
    split = 1 << ((len(record_hashes) - 1).bit_length() - 1)
    return node_hash(merkle_root(record_hashes[:split]), merkle_root(record_hashes[split:]))
