"""A kept expression, compiled to closures on its first use rather than when its entry is read.

Reading a kept policy back used to compile every stored tree before the policy was returned
(about a third of a cached load of the shipped packs: rebuilding ~20,000 tree nodes and walking
them), although a decision runs only the rules of its tool. A :class:`KeptExpression` holds the
stored tree (plain JSON lists) and what the decider asks of a program before running it (its
source, reads, references and whether it calls a gateway helper, all kept by the build that
compiled it); the first :meth:`~KeptExpression.evaluate` or :meth:`~KeptExpression.condition`
compiles it, and from then on ``evaluate`` is the compiled program's own bound method, so later
evaluations pay nothing for the deferral.

The entry was verified before use (a private folder and file, the key it was looked up by, the
SHA-256 of its body) and its build compiled every one of these trees with the same code (the
code is part of the key), so a tree that does not compile is never expected. Were one found,
:class:`KeptTreeUnusable` is raised out of the evaluation, whatever the rule's ``on_error``: the
decider fails that call closed (deny, reject or block, logged as an internal error), on every
call that reaches the rule, and the policy is never used with the rule missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from dsh_policy.cmdline.deadline import one_time_setup
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError, Reads
from dsh_policy.policy.cel.tree_shape import StoredToken, StoredTree

if TYPE_CHECKING:
    from dsh_policy.policy.cel.closure_engine import ClosureCelEngine, ClosureCompiledExpression

__all__ = ["KeptExpression", "KeptTreeUnusable", "stored_tree"]


class KeptTreeUnusable(RuntimeError):
    """A kept tree did not compile: an internal error, which the decider fails closed."""


def stored_tree(value: Any, tokens: dict[str, StoredToken]) -> Any:
    """A stored tree (``[data, child...]``, a token as ``TYPE:value``) back as
    :class:`StoredTree` nodes; equal tokens are one shared :class:`StoredToken` (``tokens``, per
    entry: tokens are immutable)."""
    if type(value) is str:
        token = tokens.get(value)
        if token is None:
            kind, _, text = value.partition(":")
            token = tokens[value] = StoredToken(kind, text)
        return token
    return StoredTree(value[0], [stored_tree(child, tokens) for child in value[1:]])


_ENGINE: list[ClosureCelEngine] = []
_COMPILING = threading.Lock()


def _engine() -> ClosureCelEngine:
    """The closure engine kept expressions compile on (imported with the first one compiled, so
    a policy is ready before the closure compiler and the helpers it binds are imported)."""
    if not _ENGINE:
        from dsh_policy.policy.cel.closure_engine import ClosureCelEngine

        _ENGINE.append(ClosureCelEngine())
    return _ENGINE[0]


class KeptExpression:
    """A closure-compiled expression read back from the cache, compiled on first use."""

    __slots__ = (
        "_program",
        "_tokens",
        "_tree",
        "calls_helpers",
        "evaluate",
        "reads",
        "references",
        "source",
    )

    converts_activation = False
    """Reads activation values as they are, as every closure program does."""

    evaluate: Callable[[Mapping[str, Any]], Any | CelEvalError]

    def __init__(
        self,
        source: str,
        tree: Any,
        reads: Reads,
        references: frozenset[str],
        calls_helpers: bool,
        tokens: dict[str, StoredToken],
    ) -> None:
        self.source = source
        self.reads = reads
        self.references = references
        self.calls_helpers = calls_helpers
        self._tree = tree
        self._tokens = tokens
        self._program: ClosureCompiledExpression | None = None
        self.evaluate = self._compile_then_evaluate

    def compiled(self) -> ClosureCompiledExpression:
        """The compiled program (compiled now, the first time); :class:`KeptTreeUnusable` when
        the kept tree does not compile."""
        program = self._program
        if program is not None:
            return program
        with _COMPILING:  # one thread compiles; another that waited finds the program made
            program = self._program
            if program is not None:
                return program
            with one_time_setup():  # once per process: outside the stage's budget
                built = _engine().compile_analyzed(
                    self.source, stored_tree(self._tree, self._tokens), self.reads, patterns_checked=True
                )
            if isinstance(built, CelCompileIssue):
                raise KeptTreeUnusable(
                    f"a kept expression no longer compiles ({built.message}): {self.source[:80]!r}; "
                    "remove the compiled-policy cache folder's entries to rebuild from the packs"
                )
            self._program = built
            self.evaluate = built.evaluate
            self._tree = None
            return built

    def _compile_then_evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        return self.compiled().evaluate(activation)

    def condition(self) -> Callable[[Mapping[str, Any]], Any]:
        """The compiled program's :meth:`~.ClosureCompiledExpression.condition`."""
        return self.compiled().condition()

    def take_parse_tree(self) -> None:
        """No cel-python tree: a kept expression has only its stand-in tree, for the compiler."""
        return None

    def __repr__(self) -> str:
        state = "compiled" if self._program is not None else "not compiled yet"
        return f"KeptExpression({self.source[:40]!r}, {state})"
