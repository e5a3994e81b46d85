"""The fast CEL engine, on cel-expr-python (Google's C++ CEL runtime), with the same helpers.

What this engine adds to the runtime, and why:

- the helpers of :mod:`~dsh_policy.policy.cel.functions` are declared as typed host functions
  under their CEL names (``path.normalize``: the C++ checker resolves qualified function names
  itself), with exactly the overloads of ``functions.CEL_SIGNATURES`` (which the load-time type
  checker reads too). Parameters are concrete types because the runtime never dispatches a
  ``dyn`` parameter; ``secrets.scan`` has one overload per kind of value;
- ``matches`` cannot be redeclared in this runtime and its built-in recompiles a constant pattern
  on every evaluation, so a call to ``matches`` is renamed, at its token, to ``matchRE`` (same
  length, so error columns stay right), a host function backed by the cached RE2 of
  ``functions.compile_re2``. Both are RE2, so results are the same;
- variables: the checker needs every identifier declared, so the expression's references are
  declared ``dyn`` (taken from cel-python's parse tree, which also gives the load-time checks both
  engines share; when only the C++ grammar accepts an expression, from the checker's
  "undeclared reference" errors). A ``datetime``/``timedelta`` activation value is only accepted
  for a variable declared ``timestamp``/``duration``, so a program is also compiled, once and
  cached, for each such combination seen at evaluation;
- the runtime's own comprehension budget (10,000 iterations per evaluation in cel-expr-python
  0.1.3, not configurable) bounds evaluation; exceeding it is an evaluation error. Host functions
  are the only slow steps, so they also refuse to start once the evaluation has run for
  :data:`DEFAULT_TIME_BUDGET` seconds.

Extensions enabled: strings, math, encoders, optional, bindings (the python engine has none, so
rules using them load only on this engine).
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.cel import functions as fn
from dsh_policy.policy.cel.celpy_ast import analyze, line_column_to_offset, parse_lean
from dsh_policy.policy.cel.engine import (
    MAX_EXPRESSION_CHARS,
    CelCompileIssue,
    CelEvalError,
    EventActivation,
    Reads,
)
from dsh_policy.policy.cel.native_source import Edit, apply_edits, folded_literal_runs, original_offset
from dsh_policy.policy.cel.types import CelType, parse_signature

ITERATION_BUDGET = 10_000
"""cel-expr-python's fixed comprehension budget per evaluation (documented, not enforced here)."""

DEFAULT_TIME_BUDGET = 2.0
"""Seconds after which host functions of a running evaluation fail instead of working."""

EXPECTED_TIMESTAMPS = frozenset({"now"})
"""Variables the gateway always binds to a timestamp (POLICY.md section 3): an expression reading
one also gets its timestamp-typed program at compile time, so deciding never compiles. Other
timestamp variables still work; their program is compiled on first use, once."""

CACHED_MATCHES = "matchRE"
"""The host function a ``matches`` call is renamed to; as long as ``matches``."""

_T = cel.Type
_INT64 = (-(2**63), 2**63)
_UINT64_END = 2**64
_ERROR_POSITION = lazy_compile(r"<input>:(\d+):(\d+): (.*)")
_UNDECLARED = lazy_compile(r"undeclared reference to '([^']+)'")
_STATUS_PREFIX = lazy_compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = lazy_compile(r" \[[A-Z_]+\]$")


# -- host functions -----------------------------------------------------------------------------

_last_host_error = threading.local()


def _plain_argument(value: Any) -> Any:
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dict):
        return {_plain_argument(k): _plain_argument(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_argument(item) for item in value]
    return value


def _host(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run a helper on plain values; remember why it failed, since the runtime reports any
    exception from a host function only as "no matching overload"."""

    def call(*args: Any) -> Any:
        deadline = getattr(_last_host_error, "deadline", None)
        if deadline is not None and time.monotonic() > deadline:
            _last_host_error.message = "evaluation exceeded its time budget"
            raise TimeoutError(_last_host_error.message)
        try:
            if all(type(a) is str for a in args):  # the usual case: no copy needed
                return function(*args)
            return function(*[_plain_argument(a) for a in args])
        except Exception as exc:
            _last_host_error.message = str(exc) or type(exc).__name__
            raise

    call.__name__ = function.__name__
    return call


def _overload(
    name: str, suffix: str, result: Any, params: list[Any], impl: Callable[..., Any], member: bool = False
) -> Any:
    return cel.Overload(
        f"dsh_{name.replace('.', '_')}_{suffix}", result, params, is_member=member, impl=_host(impl)
    )


_RUNTIME_TYPES: Mapping[str, Any] = {
    "int": _T.INT, "uint": _T.UINT, "double": _T.DOUBLE, "bool": _T.BOOL, "string": _T.STRING,
    "bytes": _T.BYTES, "null_type": _T.NULL, "timestamp": _T.TIMESTAMP, "duration": _T.DURATION,
    "type": _T.TYPE,
}  # fmt: skip


def _runtime_type(t: CelType) -> Any:
    """A declared type as the runtime's (type parameters and ``dyn`` are ``dyn``)."""
    if t.kind == "list":
        return _T.List(_runtime_type(t.args[0]))
    if t.kind == "map":
        return _T.Map(_runtime_type(t.args[0]), _runtime_type(t.args[1]))
    return _RUNTIME_TYPES.get(t.kind, _T.DYN)


def _function_declarations() -> list[Any]:
    """Every helper of :data:`~dsh_policy.policy.cel.functions.CEL_SIGNATURES` with exactly its
    declared overloads (``matches`` under :data:`CACHED_MATCHES`)."""
    declarations = []
    for name, signatures in fn.CEL_SIGNATURES.items():
        declared = CACHED_MATCHES if name == "matches" else name
        overloads = []
        for text in signatures:
            overload = parse_signature(name, text)
            suffix = "_".join(("member",) * overload.member + tuple(p.kind for p in overload.params))
            params = [_runtime_type(p) for p in overload.params]
            result = _runtime_type(overload.result)
            impl = fn.CEL_FUNCTIONS[name]
            overloads.append(_overload(declared, suffix, result, params, impl, member=overload.member))
        declarations.append(cel.FunctionDecl(declared, overloads))
    return declarations


# -- values -------------------------------------------------------------------------------------


_SCALARS = frozenset({str, bool, float, bytes, type(None)})


def to_native(value: Any) -> Any:
    """A plain-Python value as the runtime accepts it: ``Mapping`` -> dict, tuple -> list,
    integers beyond uint64 -> double. Timestamps are accepted only at the top level (see module
    doc); nested ones raise ``TypeError``. Hot path: exact-type checks first."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        return value if _INT64[0] <= value < _UINT64_END else float(value)
    if kind is dict or isinstance(value, Mapping):
        return {key if type(key) is str else to_native(key): to_native(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [to_native(item) for item in value]
    if isinstance(value, bool | str | float | bytes):  # subclasses of the scalars
        return value
    if isinstance(value, int):
        return to_native(int(value))
    if isinstance(value, datetime.datetime | datetime.timedelta):
        raise TypeError("the native engine accepts timestamps and durations only as top-level variables")
    raise TypeError(f"cannot pass a {type(value).__name__} to CEL")


def from_native(value: Any) -> Any:
    """A runtime plain value as the plain Python both engines return."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dict):
        return {from_native(k): from_native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_native(item) for item in value]
    if isinstance(value, cel.Type):
        return _type_name(value)
    return value


_TYPE_NAMES = {
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "NULL": "null_type",
}


def _type_name(value: Any) -> str:
    """The CEL name of a type value, as the python engine reports it (``int``, ``list``, ...)."""
    name = str(value.name())
    return _TYPE_NAMES.get(name, name.split("<")[0].lower())


def _clean_message(text: str) -> str:
    """``INVALID_ARGUMENT: divide by zero [INVALID_ARGUMENT]`` -> ``divide by zero``."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip()))
    return text.replace(CACHED_MATCHES, "matches")


# -- compilation --------------------------------------------------------------------------------

_NO_TYPED_VARIABLES: frozenset[tuple[str, str]] = frozenset()


def _extensions() -> list[Any]:
    return [
        ext_strings.ExtStrings(),
        ext_math.ExtMath(),
        ext_encoders.ExtEncoders(),
        ext_optional.ExtOptional(),
        ext_bindings.ExtBindings(),
    ]


_KIND_TYPES: Mapping[str, Any] = {"dyn": _T.DYN, "timestamp": _T.TIMESTAMP, "duration": _T.DURATION}


class _Environments:
    """One runtime environment per set of declared variables, built on first use."""

    def __init__(self) -> None:
        self._functions = _function_declarations()
        self._cache: dict[frozenset[tuple[str, str]], Any] = {}
        self._lock = threading.Lock()

    def get(self, variables: Iterable[tuple[str, str]]) -> Any:
        key = frozenset(variables)
        env = self._cache.get(key)
        if env is None:
            with self._lock:
                env = self._cache.get(key)
                if env is None:
                    env = cel.NewEnv(
                        variables={name: _KIND_TYPES[kind] for name, kind in key},
                        functions=self._functions,
                        extensions=_extensions(),
                    )
                    self._cache[key] = env
        return env


def _compile_error(source: str, exc: Exception, folds: Sequence[Edit] = ()) -> CelCompileIssue:
    """The runtime's error as an issue; its position, in ``source`` (what the runtime compiled),
    mapped back through ``folds`` to the expression as written."""
    text = str(exc)
    found = _ERROR_POSITION.search(text)
    if found is None:
        return CelCompileIssue(_clean_message(text.splitlines()[0] if text else type(exc).__name__))
    line, column, message = int(found.group(1)), int(found.group(2)), found.group(3)
    offset = line_column_to_offset(source, line, column)
    if folds:
        offset = original_offset(folds, offset)
    return CelCompileIssue(_clean_message(message), offset)


def _rename_matches(source: str, offsets: Iterable[int]) -> str:
    chars = list(source)
    for offset in offsets:
        if source.startswith("matches", offset):
            chars[offset : offset + len("matches")] = CACHED_MATCHES
    return "".join(chars)


_ENGINE_KEY = "native"
_ERROR_TYPE = _T.ERROR


def _convert(
    activation: Mapping[str, Any], names: Iterable[str]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The runtime's data for ``names`` (those present), and which of them are timestamps or
    durations (top-level only: the program must declare them so)."""
    data: dict[str, Any] = {}
    typed: list[tuple[str, str]] = []
    for name in names:
        if name not in activation:
            continue
        value = activation[name]
        if isinstance(value, datetime.datetime):
            typed.append((name, "timestamp"))
            data[name] = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        elif isinstance(value, datetime.timedelta):
            typed.append((name, "duration"))
            data[name] = value
        else:
            data[name] = to_native(value)
    return data, typed


@dataclass(frozen=True, slots=True)
class _SharedActivation:
    """One event's values as a runtime activation, built once for every expression of the event.
    ``native`` is None when some value cannot be converted: each expression then converts only
    what it reads, so a value no rule reads cannot fail the others.

    Timestamps and durations stay out (``typed``): cel-expr-python 0.1.3 converts them reliably
    only when handed as ``eval(data=...)`` to a program declaring them, so the (few) expressions
    reading one take that path."""

    native: Any
    typed: frozenset[str]

    @classmethod
    def build(cls, activation: Mapping[str, Any], environments: _Environments) -> _SharedActivation:
        typed = frozenset(
            name
            for name, value in activation.items()
            if isinstance(value, datetime.datetime | datetime.timedelta)
        )
        try:
            data, _ = _convert(activation, (name for name in activation if name not in typed))
        except (TypeError, ValueError):
            return cls(None, typed)
        return cls(environments.get(()).Activation(data=data), typed)


@dataclass(slots=True)
class NativeCompiledExpression:
    """A checked program (plus lazily built variants for timestamp variables)."""

    source: str
    references: frozenset[str]
    reads: Reads
    _native_source: str = field(repr=False)
    _environments: _Environments = field(repr=False)
    _programs: dict[frozenset[tuple[str, str]], Any] = field(repr=False)
    _time_budget: float = DEFAULT_TIME_BUDGET
    #: cel-python's parse tree of the expression (None for syntax only the C++ grammar has), until
    #: the loader's type checker takes it: this engine never evaluates it, so it is not kept.
    _tree: Any = field(default=None, repr=False)

    def take_parse_tree(self) -> Any:
        """cel-python's parse tree, once, for the loader's type checker; then forgotten."""
        tree, self._tree = self._tree, None
        return tree

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against plain-Python ``activation``; errors come back as values. An
        :class:`EventActivation` is converted once, on its first evaluation, and shared."""
        try:
            if isinstance(activation, EventActivation):
                shared = activation.converted.get(_ENGINE_KEY)
                if shared is None:
                    shared = activation.converted[_ENGINE_KEY] = _SharedActivation.build(
                        activation, self._environments
                    )
                if shared.native is not None and not (shared.typed and shared.typed & self.references):
                    return self._run(self._programs[_NO_TYPED_VARIABLES], shared.native, None)
            data, typed = _convert(activation, self.references)
            program = self._program(frozenset(typed) if typed else _NO_TYPED_VARIABLES)
            if isinstance(program, CelEvalError):
                return program
            return self._run(program, None, data)
        except Exception as exc:  # the runtime raises for budget and conversion failures: a value
            return CelEvalError(_clean_message(str(exc)) or type(exc).__name__)

    def _run(self, program: Any, native_activation: Any, data: dict[str, Any] | None) -> Any | CelEvalError:
        _last_host_error.message = None
        _last_host_error.deadline = time.monotonic() + self._time_budget
        try:
            result = program.eval(native_activation) if data is None else program.eval(data=data)
        finally:
            _last_host_error.deadline = None
        value = result.plain_value()
        # An error's plain value is its message: only a string can be an error.
        if type(value) is str and result.type() == _ERROR_TYPE:
            host_message = getattr(_last_host_error, "message", None)
            return CelEvalError(host_message or _clean_message(value))
        return from_native(value)

    def _program(self, typed: frozenset[tuple[str, str]]) -> Any:
        """The program for these timestamp/duration variables, compiled once; a variant that
        does not type-check (``now + 1`` with ``now`` a timestamp) is remembered as its error."""
        program = self._programs.get(typed)
        if program is None:
            kinds = dict(typed)
            variables = [(name, kinds.get(name, "dyn")) for name in self.references]
            try:
                program = self._environments.get(variables).compile(self._native_source)
            except Exception as exc:
                program = CelEvalError(_compile_error(self.source, exc).message)
            self._programs[typed] = program
        return program


class NativeCelEngine:
    """CEL on cel-expr-python (C++), with the gateway's helpers as host functions.

    ``cache_matches=False`` keeps the runtime's built-in ``matches`` (also RE2, recompiling a
    constant pattern on every evaluation); it exists so the benchmark can show the difference."""

    def __init__(self, cache_matches: bool = True, time_budget: float = DEFAULT_TIME_BUDGET) -> None:
        self._environments = _Environments()
        self._cache_matches = cache_matches
        self._time_budget = time_budget

    @property
    def name(self) -> str:
        """``native``."""
        return "native"

    def compile(self, expression: str) -> NativeCompiledExpression | CelCompileIssue:
        """Check ``expression`` (shared load-time checks, then the C++ type checker)."""
        if len(expression) > MAX_EXPRESSION_CHARS:
            return CelCompileIssue(f"expression longer than {MAX_EXPRESSION_CHARS} characters", 0)
        tree = parse_lean(expression)
        if isinstance(tree, CelCompileIssue):
            return self._compile_without_parse_tree(expression)
        try:
            analysis = analyze(tree, expression, check_functions=False)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        if analysis.issues:
            first = analysis.issues[0]
            return CelCompileIssue(first.message, first.offset)
        offsets = analysis.matches_offsets if self._cache_matches else ()
        folds = folded_literal_runs(tree)
        native_source = apply_edits(_rename_matches(expression, offsets), folds)
        return self._checked(expression, native_source, analysis.references, analysis.reads, tree, folds)

    def _checked(
        self,
        expression: str,
        native_source: str,
        references: frozenset[str],
        reads: Reads | None = None,
        tree: Any = None,
        folds: Sequence[Edit] = (),
    ) -> NativeCompiledExpression | CelCompileIssue:
        env = self._environments.get((name, "dyn") for name in references)
        try:
            program = env.compile(native_source)
        except Exception as exc:
            return replace(_compile_error(native_source, exc, folds), type_check=True)
        programs: dict[frozenset[tuple[str, str]], Any] = {frozenset(): program}
        compiled = NativeCompiledExpression(
            expression,
            references,
            reads if reads is not None else Reads.opaque(references),
            native_source,
            self._environments,
            programs,
            self._time_budget,
            tree,
        )
        timestamps = frozenset((name, "timestamp") for name in references & EXPECTED_TIMESTAMPS)
        if timestamps:
            compiled._program(timestamps)  # planned now, not on the first event
        return compiled

    def _compile_without_parse_tree(self, expression: str) -> NativeCompiledExpression | CelCompileIssue:
        """For syntax only the C++ grammar has (optionals): learn the variables from the checker."""
        references: set[str] = set()
        for _ in range(8):
            env = self._environments.get((name, "dyn") for name in references)
            try:
                env.compile(expression)
            except Exception as exc:
                found = {
                    name.split(".")[0]
                    for name in _UNDECLARED.findall(str(exc))
                    if name.split(".")[0] not in fn.FUNCTION_NAMESPACES
                }
                if not found - references:
                    return _compile_error(expression, exc)
                references |= found
                continue
            return self._checked(expression, expression, frozenset(references))
        return CelCompileIssue("expression references too many undeclared names", None)
