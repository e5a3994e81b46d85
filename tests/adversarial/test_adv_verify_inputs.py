"""Whatever is handed to ``dsh-policy verify`` - damaged bytes, rehashed records with hostile field
types, junk, huge lines, a directory - the answer is a report and exit 0, 1 or 2, never a traceback.
(Single-byte tamper detection itself is proven in tests/audit.)"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from adv_kit import fuzz_settings, hostile_json
from adv_mutations import text_mutation, tree_mutation
from dsh_policy.audit.cli import verify_main
from dsh_policy.audit.keys import KeyPairFiles, write_key_pair
from dsh_policy.audit.record_hash import record_hash
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriter
from hypothesis import assume, given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> KeyPairFiles:
    return write_key_pair(tmp_path_factory.mktemp("keys") / "audit")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, keys: KeyPairFiles) -> Path:
    """A signed, rotated, checkpointed log with an exported anchor: every file kind verify reads."""
    directory = tmp_path_factory.mktemp("pristine")
    with AuditWriter.open(
        directory / "audit.jsonl", fsync="off", rotate_bytes=4096, checkpoint_every=5,
        signing_key=keys.private_path,
    ) as writer:
        for index in range(24):
            writer.append(
                "tool_result",
                {"call": {"name": "shell", "args": {"command": f"ls {index}"}},
                 "decision": {"pre_execute": {"decision": "allow", "rules": []}}, "turn": index},
            )
    for stray in directory.glob("*.lock"):
        stray.unlink()
    assert len(list(directory.glob("audit.jsonl.*"))) >= 3  # segments and the anchor
    return directory


def run_verify(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = verify_main(list(argv))
    return code, out.getvalue()


def verify_json(log: Path, keys: KeyPairFiles) -> tuple[int, dict[str, Any]]:
    code, out = run_verify(str(log), "--key", str(keys.public_path), "--format", "json")
    assert code in (0, 1, 2)
    report: dict[str, Any] = json.loads(out) if out.strip() else {}
    return code, report


def fresh_copy(pristine: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pristine, target)
    return target / "audit.jsonl"


@fuzz_settings(60)
@given(data=st.data())
def test_damaged_bytes_in_any_segment_give_a_report_and_an_exit_status(
    data: st.DataObject, pristine: Path, keys: KeyPairFiles, tmp_path_factory: pytest.TempPathFactory
) -> None:
    log = fresh_copy(pristine, tmp_path_factory.getbasetemp() / "damaged")
    files = sorted(log.parent.iterdir())
    victim = files[data.draw(st.integers(0, len(files) - 1), label="file")]
    victim.write_bytes(data.draw(text_mutation(victim.read_bytes())))
    code, report = verify_json(log, keys)
    assert report, "json output promised"
    assert (code == 0) is bool(report.get("intact")) or code == 2


def _reseal_from(lines: list[dict[str, Any]], start: int) -> list[bytes]:
    """Re-hash and re-chain every record from ``start`` on, as a forger with no key would."""
    out: list[bytes] = []
    previous: Any = lines[start - 1]["hash"] if start else None
    for index, record in enumerate(lines):
        if index < start:
            out.append(orjson.dumps(record, option=orjson.OPT_SORT_KEYS))
            continue
        body = {key: value for key, value in record.items() if key != "hash"}
        if index > start and previous is not None:
            body["prev"] = previous
        encoded = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
        previous = record_hash(encoded)
        out.append(orjson.dumps({**body, "hash": previous}, option=orjson.OPT_SORT_KEYS))
    return out


@fuzz_settings(60)
@given(data=st.data())
def test_rehashed_records_with_hostile_field_types_give_a_report(
    data: st.DataObject, pristine: Path, keys: KeyPairFiles, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Hash and chain are recomputed after the edit, so the verifier's deeper reading (sequence,
    segment links, checkpoint statements, Merkle frontiers) meets the hostile values."""
    log = fresh_copy(pristine, tmp_path_factory.getbasetemp() / "rehashed")
    segments = sorted(p for p in log.parent.iterdir() if not p.name.endswith(".anchor"))
    victim = segments[data.draw(st.integers(0, len(segments) - 1), label="segment")]
    records = [orjson.loads(line) for line in victim.read_bytes().splitlines()]
    at = data.draw(st.integers(0, len(records) - 1), label="record")
    mutated = data.draw(tree_mutation({k: v for k, v in records[at].items() if k != "hash"}))
    assume(isinstance(mutated, dict))
    mutated["hash"] = records[at]["hash"]
    records[at] = mutated
    try:
        lines = _reseal_from(records, at)
    except (TypeError, orjson.JSONEncodeError):
        assume(False)  # not JSON (a NaN): the byte-level test covers unparseable lines
        raise
    victim.write_bytes(b"\n".join(lines) + b"\n")
    code, report = verify_json(log, keys)
    assert report
    report_api = verify_log([log], public_key=keys.public_path)
    assert report_api.intact is (code == 0) or code == 2


@fuzz_settings(40)
@given(lines=st.lists(hostile_json, min_size=1, max_size=6))
def test_random_json_lines_give_a_report(lines: list[Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    log = tmp_path_factory.getbasetemp() / "random-json.jsonl"
    encoded = [json.dumps(line).encode("utf-8", "surrogatepass") for line in lines]
    log.write_bytes(b"\n".join(encoded) + b"\n")
    code, out = run_verify(str(log), "--format", "json")
    assert code in (1, 2)
    assert json.loads(out)


def _deep_line(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"\n\n\n", b"\x00" * 100, bytes(range(256)) * 4, b"null\n", b"{}\n", b"[]\n",
     b'{"seq": "0", "hash": 7}\n', _deep_line(100_000) + b"\n", b'"' + b"a" * (8 << 20) + b'"\n',
     b"\xff\xfe" + "{}".encode("utf-16-le") + b"\n", b'{"a":1,"a":2}\n'],
    ids=["empty", "newline", "newlines", "nul", "binary", "null", "object", "array", "wrong-types",
         "deep-100000", "8MiB-line", "utf16", "dup-keys"],
)
def test_junk_logs_are_reported_not_crashed(content: bytes, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_bytes(content)
    code, out = run_verify(str(log), "--format", "json")
    assert code in (0, 1, 2)
    report = json.loads(out)
    assert code == 0 or not report["intact"]
    if content.strip() and b"\n" in content:
        # (Junk with no newline at all is a torn tail: a warning by contract, AUDIT.md.)
        assert code != 0, "a complete line of junk is never an intact log"
    text_code, text = run_verify(str(log))
    assert text_code == code and text.strip()


def test_unreadable_inputs_exit_2(tmp_path: Path, pristine: Path, keys: KeyPairFiles) -> None:
    log = fresh_copy(pristine, tmp_path / "copy")
    junk_key = tmp_path / "junk.pub"
    junk_key.write_bytes(b"-----BEGIN PUBLIC KEY-----\n\xff\n")
    cases = [
        [str(tmp_path / "missing.jsonl")],
        [str(tmp_path)],  # a directory
        [str(log), "--key", str(tmp_path / "missing.pub")],
        [str(log), "--key", str(junk_key)],
        [str(log), "--key", str(tmp_path)],
        [str(log), "--anchor", str(tmp_path / "missing.anchor")],
        [str(log), "--format", "yaml"],
        [],
    ]
    for argv in cases:
        code, _ = run_verify(*argv)
        assert code == 2, argv
    assert run_verify(str(log), "--key", str(keys.public_path))[0] == 0


def test_a_junk_anchor_is_a_finding_not_a_crash(tmp_path: Path, pristine: Path, keys: KeyPairFiles) -> None:
    log = fresh_copy(pristine, tmp_path / "copy")
    for junk in (b"", b"{}", b"\xff" * 10, b'{"kind":"checkpoint","checkpoint":[]}\n'):
        anchor = log.parent / "audit.jsonl.anchor"
        anchor.write_bytes(junk)
        code, report = verify_json(log, keys)
        assert code in (1, 2) and report
