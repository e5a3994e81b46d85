"""The code part of the cache key: the package's bytes are hashed only when the code files' stat
fingerprint changed, and the recorded digest is trusted only as far as an entry is."""

from __future__ import annotations

import os
from pathlib import Path

import dsh_policy
import pytest
from dsh_policy.policy.policy_cache import key
from dsh_policy.policy.policy_cache.folder import (
    CACHE_DIR_VARIABLE,
    SWITCH_VARIABLE,
    code_record,
    code_record_path,
)

ROOT = os.path.dirname(os.path.abspath(dsh_policy.__file__))


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(folder))
    monkeypatch.delenv(SWITCH_VARIABLE, raising=False)
    monkeypatch.setattr(key, "_CODE", [])  # a fresh process's state: nothing computed yet
    return folder


def _hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the full content hashes ``code_digest`` makes from now on (each call a new process)."""
    made: list[str] = []
    real = key._content_digest

    def counted(root: str, files: list[tuple[str, os.stat_result]]) -> str:
        made.append(root)
        return real(root, files)

    monkeypatch.setattr(key, "_content_digest", counted)
    return made


def _new_process(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(key, "_CODE", [])
    return key.code_digest()


def test_the_bytes_are_hashed_once_then_read_from_the_record(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _hashes(monkeypatch)
    first = _new_process(monkeypatch)
    assert len(made) == 1
    record = Path(code_record_path(str(cache_dir), ROOT))
    assert record.stat().st_mode & 0o077 == 0
    assert _new_process(monkeypatch) == first
    assert len(made) == 1  # the fingerprint matched: no hashing
    record.unlink()  # hashed again, to the same digest
    assert _new_process(monkeypatch) == first
    assert len(made) == 2


def test_a_changed_file_is_hashed_again(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _hashes(monkeypatch)
    files = key._code_files(ROOT)
    _new_process(monkeypatch)
    path, info = files[0]
    changed = os.stat_result((*info[:7], info.st_mtime + 1, *info[8:]))
    changed_files = [(path, changed), *files[1:]]
    monkeypatch.setattr(key, "_code_files", lambda root: changed_files)
    _new_process(monkeypatch)
    assert len(made) == 2
    assert key.code_stamp(changed_files) != key.code_stamp(files)


def test_a_record_for_another_fingerprint_is_not_used(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _new_process(monkeypatch)
    made = _hashes(monkeypatch)
    record = Path(code_record_path(str(cache_dir), ROOT))
    record.write_bytes(code_record("0" * 64, "1" * 64))
    assert _new_process(monkeypatch) == first
    assert len(made) == 1


@pytest.mark.parametrize("mode", [0o644, 0o660, 0o606])
def test_a_record_others_could_write_is_not_used(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    first = _new_process(monkeypatch)
    record = Path(code_record_path(str(cache_dir), ROOT))
    stamp = key.code_stamp(key._code_files(ROOT))
    record.write_bytes(code_record(stamp, "2" * 64))  # a forged digest for the current fingerprint
    record.chmod(mode)
    forged = _new_process(monkeypatch)
    assert (forged == first) == bool(mode & 0o022)
    record.chmod(0o600)
    cache_dir.chmod(0o755)  # a folder others can enter: nothing in it is read
    assert _new_process(monkeypatch) == first
