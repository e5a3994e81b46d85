"""Run the CEL specification's conformance cases against our engines, as the gateway uses them.

Each case is compiled with ``engine.compile`` and evaluated with a plain-Python activation, so
the numbers describe what a rule pack gets, helpers and load-time checks included. Outcomes:

- ``pass``: the value equals the expected one (same kind: an ``int`` result never passes for a
  ``double``), or an error was expected and the expression failed to compile or evaluate;
- ``fail``: anything else;
- ``skip``: the case cannot be expressed through the gateway's interface (a ``uint`` or ``type``
  binding, which plain Python cannot carry; a dotted variable name or a ``container``, which the
  gateway never uses).

Regenerate the checked-in expectations (one ``results-<engine>.json`` per engine, and
``TABLE.md``) after a deliberate engine change::

    .venv/bin/python tools/cel_conformance.py --write tests/cel/conformance
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError

Outcome = Literal["pass", "fail", "skip"]


@dataclass(frozen=True, slots=True)
class ConformanceCase:
    """One line of a ``<file>.jsonl``; ``key`` is ``file:line`` (names repeat, lines do not)."""

    key: str
    file: str
    name: str
    expr: str
    bindings: Mapping[str, Any]
    expect: Mapping[str, Any]
    skip_reason: str | None


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one engine did with one case."""

    key: str
    file: str
    outcome: Outcome
    detail: str = ""


def load_cases(directory: Path) -> list[ConformanceCase]:
    """Every case of every ``*.jsonl`` file in ``directory``, in file and line order."""
    cases: list[ConformanceCase] = []
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            raw = json.loads(line)
            cases.append(
                ConformanceCase(
                    key=f"{path.stem}:{number}",
                    file=path.stem,
                    name=f"{raw.get('section', '')}/{raw.get('name', '')}",
                    expr=raw["expr"],
                    bindings=raw.get("bindings") or {},
                    expect=raw["expect"],
                    skip_reason=_skip_reason(raw),
                )
            )
    return cases


def _skip_reason(raw: Mapping[str, Any]) -> str | None:
    if raw.get("container"):
        return "container: the gateway never sets one"
    if any("." in name for name in raw.get("bindings") or {}):
        return "dotted variable name: gateway activations bind plain names"
    for value in (raw.get("bindings") or {}).values():
        kinds = _kinds(value)
        if "uint" in kinds:
            return "uint binding: plain-Python activations have no unsigned integers"
        if "type" in kinds:
            return "type binding: plain-Python activations carry no CEL types"
    return None


def _kinds(value: Mapping[str, Any]) -> set[str]:
    (kind, inner), *_ = value.items()
    found = {kind}
    if kind == "list":
        for item in inner:
            found |= _kinds(item)
    elif kind == "map":
        for key, item in inner:
            found |= _kinds(key) | _kinds(item)
    return found


# -- typed values -------------------------------------------------------------------------------


def _parse_timestamp(text: str) -> datetime.datetime:
    """RFC 3339 with up to nanoseconds, truncated to Python's microseconds."""
    head, _, fraction_and_zone = text.partition(".")
    if fraction_and_zone:
        digits = "".join(ch for ch in fraction_and_zone if ch.isdigit())
        zone = fraction_and_zone[len(digits) :]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _parse_duration(text: str) -> datetime.timedelta:
    seconds = Decimal(text.removesuffix("s"))
    return datetime.timedelta(microseconds=int(seconds * 1_000_000))


def to_plain(value: Mapping[str, Any]) -> Any:
    """A typed conformance value as the plain Python an activation carries."""
    (kind, inner), *_ = value.items()
    if kind in ("int", "uint"):
        return int(inner)
    if kind == "double":
        return float(inner)
    if kind == "string":
        return inner
    if kind == "bytes":
        return base64.b64decode(inner)
    if kind == "bool":
        return bool(inner)
    if kind == "null":
        return None
    if kind == "list":
        return [to_plain(item) for item in inner]
    if kind == "map":
        return {to_plain(k): to_plain(v) for k, v in inner}
    if kind == "timestamp":
        return _parse_timestamp(inner)
    if kind == "duration":
        return _parse_duration(inner)
    raise ValueError(f"unsupported conformance value kind {kind!r}")


def matches_expected(expected: Mapping[str, Any], actual: Any) -> bool:
    """Whether a plain result equals a typed expected value, kind included (int and uint are one
    kind in plain Python)."""
    (kind, inner), *_ = expected.items()
    if kind in ("int", "uint"):
        return isinstance(actual, int) and not isinstance(actual, bool) and actual == int(inner)
    if kind == "double":
        if not isinstance(actual, float):
            return False
        wanted = float(inner)
        return math.isnan(actual) if math.isnan(wanted) else actual == wanted
    if kind == "string":
        return isinstance(actual, str) and actual == inner
    if kind == "bytes":
        return isinstance(actual, bytes) and actual == base64.b64decode(inner)
    if kind == "bool":
        return isinstance(actual, bool) and actual is bool(inner)
    if kind == "null":
        return actual is None
    if kind == "list":
        return (
            isinstance(actual, list)
            and len(actual) == len(inner)
            and all(matches_expected(e, a) for e, a in zip(inner, actual, strict=True))
        )
    if kind == "map":
        if not isinstance(actual, dict) or len(actual) != len(inner):
            return False
        return all(
            any(matches_expected(k, ak) and matches_expected(v, av) for ak, av in actual.items())
            for k, v in inner
        )
    if kind == "type":
        return isinstance(actual, str) and actual == inner
    if kind == "timestamp":
        return isinstance(actual, datetime.datetime) and actual == _parse_timestamp(inner)
    if kind == "duration":
        return isinstance(actual, datetime.timedelta) and actual == _parse_duration(inner)
    return False


# -- running ------------------------------------------------------------------------------------


def run_case(engine: CelEngine, case: ConformanceCase) -> CaseResult:
    """Compile and evaluate one case on ``engine``."""
    if case.skip_reason is not None:
        return CaseResult(case.key, case.file, "skip", case.skip_reason)
    wants_error = "error" in case.expect
    program = engine.compile(case.expr)
    if isinstance(program, CelCompileIssue):
        outcome: Outcome = "pass" if wants_error else "fail"
        return CaseResult(case.key, case.file, outcome, f"compile: {program.message}")
    activation = {name: to_plain(value) for name, value in case.bindings.items()}
    result = program.evaluate(activation)
    if isinstance(result, CelEvalError):
        return CaseResult(case.key, case.file, "pass" if wants_error else "fail", f"error: {result.message}")
    if wants_error:
        return CaseResult(case.key, case.file, "fail", f"value {result!r}, expected an error")
    if matches_expected(case.expect["value"], result):
        return CaseResult(case.key, case.file, "pass")
    return CaseResult(case.key, case.file, "fail", f"value {result!r}, expected {case.expect['value']!r}")


def run_engine(engine: CelEngine, cases: Sequence[ConformanceCase]) -> list[CaseResult]:
    """Every case on ``engine``; an exception escaping the engine is recorded as a failure (the
    engines promise errors as values, so that is a bug worth seeing in the table)."""
    results: list[CaseResult] = []
    for case in cases:
        try:
            results.append(run_case(engine, case))
        except Exception as exc:
            results.append(CaseResult(case.key, case.file, "fail", f"raised {type(exc).__name__}: {exc}"))
    return results


def expectation_path(directory: Path, engine_name: str) -> Path:
    """Where the keys expected to pass on ``engine_name`` are checked in."""
    return directory / f"results-{engine_name}.json"


def _table(per_engine: Mapping[str, tuple[list[CaseResult], float]]) -> str:
    files = sorted({r.file for results, _ in per_engine.values() for r in results})
    engines = list(per_engine)
    lines = [
        "# CEL conformance by engine",
        "",
        "Generated by `python tools/cel_conformance.py --write tests/cel/conformance`;",
        "do not edit by hand. Cases: the cel-spec simple tests (see README.md). pass/fail/skip per",
        "file; skip = not expressible through the gateway's plain-Python interface.",
        "",
        "| file | " + " | ".join(f"{e} pass | {e} fail | {e} skip" for e in engines) + " |",
        "|---|" + "---|" * (3 * len(engines)),
    ]
    for file in files:
        cells = []
        for engine in engines:
            results = [r for r in per_engine[engine][0] if r.file == file]
            cells += [str(sum(r.outcome == o for r in results)) for o in ("pass", "fail", "skip")]
        lines.append(f"| {file} | " + " | ".join(cells) + " |")
    totals = []
    for engine in engines:
        results = per_engine[engine][0]
        totals += [f"**{sum(r.outcome == o for r in results)}**" for o in ("pass", "fail", "skip")]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    lines += ["", "Run time (load, compile and evaluate every case, one process, shared machine):", ""]
    lines += [f"- {engine}: {seconds:.1f} s" for engine, (_, seconds) in per_engine.items()]
    lines += ["", KNOWN_DEVIATIONS.strip(), ""]
    return "\n".join(lines)


KNOWN_DEVIATIONS = r"""
## Known deviations and what they mean for policies

Deviations that could flip a decision are worked around in the engine; the rest make an
expression fail at load (a clear error with its position) or concern corners rules do not use.

Worked around (the python engine would otherwise differ from the spec and from native):

- **Mixed-type equality and ordering**: cel-python raises "no such overload" for `1 == 1.0`,
  `1 < 1.5`, `1 in ["a"]` and `[1, "a"].exists(e, e == "b")`. Under `on_error: ignore` that
  error would drop a rule such as `!(args.mode in ["read", "list"])` when an agent sends
  `mode: 1`, so the python engine implements the spec's `==`, `!=`, `in`, `<`, `<=`, `>`, `>=`
  (numbers by value across int/uint/double, other mixed types unequal), numeric map keys,
  IEEE double division (`0.0/0.0` is NaN, cel-python said `inf`) and duration
  `getMilliseconds` (cel-python returned the total).
- **Short-circuit**: cel-python evaluates both sides of `&&`/`||` and every `exists`/`all`
  element; the engine stops at the deciding value (same results, far less work).

Rejected at load (the rule pack does not load; nothing is decided by a half-supported rule):

- **Unknown functions and reserved words as members** (`f_unknown(1) || true`, `a.if()`): the
  spec's unchecked evaluation would absorb the error; both engines refuse the expression.
- **Static type errors, native only**: the native engine type-checks at load, so `true ? "a" : 1`,
  `false && 32` or `1 == 1.0` with literals (`logic`, `comparisons` failures) are load errors;
  the python engine evaluates them. With variables (`x == 1.0`) both follow the spec at runtime.
- **Extension libraries** (strings, math, encoders, optionals, bindings): closure and native; on
  python a rule using them fails to load with "unknown function" or a syntax error at its
  position. Two-variable comprehensions (`macros2`): closure only. The network library and
  `cel.block` are in none.
- **Optional syntax and backquoted field names** (`m.?k`, `l[?0]`, `` m.`foo.txt` ``): syntax
  errors on closure and python, whose parse tree is cel-python's; `engine: auto` compiles such an
  expression with native when it is installed (optional *functions* work on closure).

Differences that remain (no decision in the shipped packs depends on them):

- **String literal escapes on python**: `\?`, `` \` `` and upper-case `\X41` are kept
  verbatim and a newline inside a triple-quoted literal is dropped (`parse` failures). Write
  regular expressions as raw strings (`r'...'`), as the shipped packs do.
- **Timestamps on python** keep microseconds, have no year 0001-9999 range errors and
  `timestamp(int)` is missing (`timestamps`, `conversions` failures). **On closure** they keep
  microseconds too (a nanosecond past year 9999 is not seen); durations have the runtimes'
  int64-nanosecond range.
- **int vs uint**: the plain-Python interface has one integer kind; a uint result is returned
  as an int and uint bindings are not expressible (skipped). Gateway activations hold no uints.
- **Native**: a map literal with duplicate keys of different numeric kinds (`{0: 1, 0u: 2}`) is
  not rejected.

## Evaluation limits

- closure: the 10,000th comprehension iteration of one evaluation fails (as native's), and
  comprehensions stop after 2 s.
- Every engine: expressions up to 16,384 characters; comprehensions nested at most 4 deep; a
  constant `matches` pattern must compile; helpers bound their own work (`shell.commands`:
  256 KiB and 16 nesting levels, `secrets.scan`: 64 levels; RE2 is linear time).
- python: 200,000 evaluation steps and 2 s per evaluation (checked at every step).
- native: the runtime's fixed 10,000 comprehension iterations per evaluation (a `messages.exists`
  over more messages fails closed); helpers refuse to start after 2 s. Work inside one native
  operator on a large value (concatenating long lists or strings) cannot be interrupted; it is
  bounded by the size of the activation and the expression.
"""


def main(argv: list[str] | None = None) -> int:
    """``--write DIR`` regenerates the expectations and TABLE.md; ``--check DIR`` (default) only
    prints the table and reports regressions against them; exit 1 on regression."""
    parser = argparse.ArgumentParser(prog="tools/cel_conformance.py")
    parser.add_argument("directory", nargs="?", type=Path, default=Path("tests/cel/conformance"))
    parser.add_argument("--write", action="store_true", help="rewrite results-<engine>.json and TABLE.md")
    parser.add_argument("--engine", action="append", choices=["closure", "python", "native"])
    args = parser.parse_args(argv)
    directory: Path = args.directory
    cases = load_cases(directory)
    per_engine: dict[str, tuple[list[CaseResult], float]] = {}
    regressed = False
    for name in args.engine or available_engines():
        started = time.perf_counter()
        results = run_engine(make_engine(name), cases)
        per_engine[name] = (results, time.perf_counter() - started)
        passing = sorted((r.key for r in results if r.outcome == "pass"), key=_key_order)
        path = expectation_path(directory, name)
        if args.write:
            path.write_text(json.dumps(passing, indent=0) + "\n", encoding="utf-8")
        elif path.exists():
            expected = set(json.loads(path.read_text(encoding="utf-8")))
            lost = sorted(expected - set(passing), key=_key_order)
            if lost:
                regressed = True
                print(f"{name}: {len(lost)} regressions: {', '.join(lost)}", file=sys.stderr)
    table = _table(per_engine)
    if args.write:
        (directory / "TABLE.md").write_text(table, encoding="utf-8")
    print(table)
    return 1 if regressed else 0


def _key_order(key: str) -> tuple[str, int]:
    file, _, line = key.partition(":")
    return file, int(line)


if __name__ == "__main__":
    raise SystemExit(main())
