"""``verify_log(..., contents=...)``: segments held in memory (a central copy of a shipped log) get
exactly the verdict their files get, intact or damaged, in whole reads or split across chunks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from audit_helpers import WriteLog
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.verify import VerificationReport, verify_log


@pytest.fixture(params=[1, 2, 3], ids=["v1", "v2", "v3"])
def log_format(request: pytest.FixtureRequest) -> int:
    return int(request.param)


def _edit_a_record(segments: list[bytearray]) -> None:
    at = segments[1].find(b'"agent":"main"')
    segments[1][at : at + 14] = b'"agent":"mein"'


def _drop_a_line(segments: list[bytearray]) -> None:
    lines = bytes(segments[1]).splitlines(keepends=True)
    segments[1][:] = b"".join(lines[:3] + lines[4:])


def _cut_the_tail_inside_a_line(segments: list[bytearray]) -> None:
    del segments[-1][len(segments[-1]) // 2 :]


def _drop_a_middle_segment(segments: list[bytearray]) -> None:
    del segments[1]


def _swap_two_lines(segments: list[bytearray]) -> None:
    lines = bytes(segments[0]).splitlines(keepends=True)
    lines[4], lines[5] = lines[5], lines[4]
    segments[0][:] = b"".join(lines)


DAMAGE: dict[str, Callable[[list[bytearray]], None]] = {
    "intact": lambda segments: None,
    "edited": _edit_a_record,
    "line dropped": _drop_a_line,
    "tail cut": _cut_the_tail_inside_a_line,
    "segment dropped": _drop_a_middle_segment,
    "lines swapped": _swap_two_lines,
}


def _named(report: VerificationReport, folder: str) -> str:
    """The report as JSON, its segments named as in memory (``host/NAME``)."""
    return json.dumps(report.to_json(), sort_keys=True).replace(folder, "host")


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("chunk", [None, 97])
def test_segments_in_memory_verify_as_their_files(
    damage: str,
    chunk: int | None,
    write_log: WriteLog,
    key_pair: KeyPairFiles,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dsh_policy.audit.verify.lines as verify_lines

    if chunk is not None:
        monkeypatch.setattr(verify_lines, "_READ_CHUNK", chunk)
    log = write_log(60, signing_key=key_pair.private_path, checkpoint_every=8, rotate_bytes=8192)
    files = discover_segments(log)
    assert len(files) >= 3
    segments = [bytearray(path.read_bytes()) for path in files]
    names = [path.name for path in files]
    DAMAGE[damage](segments)
    if len(segments) < len(names):
        names.pop(1)
    for path in files:
        path.unlink()
    copies = [tmp_path / "copy" / name for name in names]
    copies[0].parent.mkdir()
    for path, data in zip(copies, segments, strict=True):
        path.write_bytes(data)

    on_disk = verify_log(copies, public_key=key_pair.public_path, live=False)
    in_memory = verify_log(
        [Path("host") / name for name in names],
        public_key=key_pair.public_path,
        live=False,
        contents=[bytes(data) for data in segments],
    )
    assert in_memory.intact == (damage == "intact") == on_disk.intact
    assert _named(in_memory, "host") == _named(on_disk, str(copies[0].parent))
    assert in_memory.files == tuple(str(Path("host") / name) for name in names)


def test_contents_must_match_the_paths(key_pair: KeyPairFiles) -> None:
    with pytest.raises(ValueError, match="2 contents for 1 paths"):
        verify_log(["a"], public_key=key_pair.public_path, contents=[b"", b""])
