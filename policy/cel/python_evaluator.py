"""The python engine's evaluator: cel-python's interpreter, budgeted and short-circuiting.

:class:`BudgetedEvaluator` subclasses cel-python's ``Evaluator`` (the overrides are pinned by
``tests/cel/test_cel_upstream_canary.py``): it counts every node it visits against a step and
time budget, stops ``&&``/``||``/``exists``/``all`` at the deciding value, and skips cel-python's
per-call runtime casts on the hot methods. :func:`recording_evaluator` makes one that also reports
each branching call's outcome, for ``check --coverage``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import celpy.celtypes as ct
import lark
from celpy.evaluation import Activation, CELEvalError, Evaluator, NameContainer
from dsh_policy.policy.cel.python_tree import CONSTANT, NOT_CONSTANT


class StepBudgetExceededError(BaseException):
    """Raised inside cel-python's interpreter when the step budget runs out. A BaseException so
    cel-python's own ``except Exception`` handlers cannot turn it into a value and carry on."""


class StepCounter:
    __slots__ = ("deadline", "limit", "steps")

    def __init__(self, limit: int, seconds: float) -> None:
        self.limit = limit
        self.steps = 0
        self.deadline = time.monotonic() + seconds


_RELATIONS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_", "relation_gt": "_>_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
}  # fmt: skip
_UNARIES = {"unary_not": "!_", "unary_neg": "-_"}
_CELPY_MACROS = frozenset({"map", "filter", "all", "exists", "exists_one", "reduce", "min"})
_EMPTY_MACROS = frozenset({"map", "filter", "exists_one"})
"""The other comprehension macros this evaluator runs itself, to answer an empty range at once."""
_EMPTY_CHECKED = frozenset({ct.ListType, ct.MapType, list, tuple, dict})
"""Ranges whose emptiness is their length: a comprehension over an empty one evaluates no body."""


def _macro_parts(child: lark.Tree) -> tuple[str | None, lark.Tree]:
    """The loop variable and body of ``list.macro(var, body)``; None when not that shape."""
    arguments = child.children[2]
    if not isinstance(arguments, lark.Tree) or len(arguments.children) != 2:
        return None, child
    variable, body = arguments.children
    idents = list(variable.find_data("ident")) if isinstance(variable, lark.Tree) else []
    if len(idents) != 1 or not isinstance(body, lark.Tree):
        return None, child
    return str(idents[0].children[0]), body


class BudgetedEvaluator(Evaluator):
    """cel-python's interpreter, counting every parse-tree node it visits, and short-circuiting.

    cel-python evaluates both sides of ``&&``/``||`` and every element of ``exists``/``all``.
    CEL's logic is commutative with errors, but a ``false`` operand decides ``&&`` (and ``true``
    decides ``||``, ``exists``; ``false`` decides ``all``) whatever the rest is, so stopping there
    gives the same value with less work; errors met before the deciding value are dropped, as
    the spec says."""

    def __init__(self, ast: lark.Tree, activation: Activation, counter: StepCounter) -> None:
        super().__init__(ast, activation)
        self._counter = counter

    def _visit_tree(self, tree: lark.Tree) -> Any:
        counter = self._counter
        counter.steps += 1
        if counter.steps > counter.limit or time.monotonic() > counter.deadline:
            raise StepBudgetExceededError
        # lark's dispatch, minus its check for ``v_args`` visit wrappers (cel-python has none).
        return getattr(self, tree.data)(tree)

    def visit_children(self, tree: lark.Tree) -> list[Any]:
        """lark's, without cel-python's nesting counter (used only by its trace logging)."""
        return [self._visit_tree(child) if isinstance(child, lark.Tree) else child for child in tree.children]

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return type(self)(ast, self.activation, self._counter)

    # Comprehension bodies: cel-python deep-copies the whole activation (every name) and builds
    # an evaluator for each element; a nested activation that holds only the loop variable and
    # chains to the current one resolves the same names (the nearest binding wins) without it.

    def _element_evaluator(self, identifier: str, body: lark.Tree) -> tuple[Any, BudgetedEvaluator]:
        """One nested activation and evaluator for a whole comprehension: elements are
        evaluated one after another, so each only rebinds the loop variable."""
        nested = self.activation.nested_activation(vars={identifier: None})
        return nested.identifiers[identifier], type(self)(body, nested, self._counter)

    def build_macro_eval(self, child: lark.Tree) -> Callable[[Any], Any]:
        identifier, body = _macro_parts(child)
        if identifier is None:
            return super().build_macro_eval(child)
        binding, evaluator = self._element_evaluator(identifier, body)

        def element(value: Any) -> Any:
            binding.value = value
            return evaluator.evaluate()

        return element

    def build_ss_macro_eval(self, child: lark.Tree) -> Callable[[Any], Any]:
        identifier, body = _macro_parts(child)
        if identifier is None:
            return super().build_ss_macro_eval(child)
        binding, evaluator = self._element_evaluator(identifier, body)

        def element(value: Any) -> Any:
            binding.value = value
            try:
                return evaluator.evaluate()
            except CELEvalError as error:
                return error

        return element

    def primary(self, tree: lark.Tree) -> Any:
        """The common kinds of ``primary`` (a precomputed literal, an identifier, a function call
        or ``has()``) as cel-python evaluates them, without its per-call ``cast`` subscripts;
        every other kind goes to cel-python."""
        if len(tree.children) == 1:
            child = tree.children[0]
            kind = child.data
            if kind == "literal":
                value = child.__dict__.get(CONSTANT, NOT_CONSTANT)
                if value is not NOT_CONSTANT:
                    return value
            elif kind == "ident":
                name_token: Any = child.children[0]
                try:
                    return self.ident_value(name_token.value)
                except KeyError as exc:
                    message = f"undeclared reference to '{name_token}' (in activation '{self.activation}')"
                    return CELEvalError(message, exc.__class__, exc.args, tree=tree)
            elif kind == "ident_arg" and len(child.children) == 2:
                function_token: Any = child.children[0]
                arguments: Any = child.children[1]
                if function_token.value == "has":
                    return self.macro_has_eval(arguments)
                if function_token.value != "dyn":
                    return self.function_eval(function_token, self.visit_children(arguments))
        return super().primary(tree)

    def literal(self, tree: lark.Tree) -> Any:
        """A literal's value, computed once at load time (see :func:`precompute_literals`)."""
        value = tree.__dict__.get(CONSTANT, NOT_CONSTANT)
        return super().literal(tree) if value is NOT_CONSTANT else value

    # ``relation`` and ``unary`` as cel-python writes them, minus a runtime
    # ``cast(Tuple[List[Result], Result], ...)`` per evaluation that hashes a large Union.

    def relation(self, tree: lark.Tree) -> Any:
        if len(tree.children) != 2:
            return super().relation(tree)
        operator_tree = tree.children[0]
        function = self.activation.resolve_function(_RELATIONS[operator_tree.data])
        values: list[Any] = self.visit_children(tree)  # [[left], right]
        left, right = values[0][0], values[1]
        try:
            return function(left, right)
        except TypeError as exc:
            message = (
                f"found no matching overload for {operator_tree.data!r} "
                f"applied to '({type(left)}, {type(right)})'"
            )
            error = CELEvalError(message, exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error

    def unary(self, tree: lark.Tree) -> Any:
        if len(tree.children) != 2:
            return super().unary(tree)
        operator_tree = tree.children[0]
        function = self.activation.resolve_function(_UNARIES[operator_tree.data])
        values: list[Any] = self.visit_children(tree)  # [[], operand]
        operand = values[1]
        try:
            return function(operand)
        except TypeError as exc:
            message = f"found no matching overload for {operator_tree.data!r} applied to '({type(operand)})'"
            error = CELEvalError(message, exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error

    def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
        """cel-python's global function call, minus its runtime ``cast(List[Result], ...)``."""
        try:
            function = self.activation.resolve_function(name_token.value)
        except KeyError as exc:
            message = f"undeclared reference to '{name_token}' (in activation '{self.activation}')"
            error = CELEvalError(message, exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error
        if isinstance(exprlist, CELEvalError):
            return exprlist
        try:
            arguments = list(exprlist or [])
            for argument in arguments:
                if isinstance(argument, CELEvalError):
                    return argument
            return function(*arguments)
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error
        except (TypeError, AttributeError) as exc:
            error = CELEvalError("no such overload", exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error

    def member_dot(self, tree: lark.Tree) -> Any:
        """``m.f`` on a map (what rules read: ``args.path``) as cel-python evaluates it, without
        its chain of type checks; names, messages and packages go through cel-python's method."""
        member_tree: Any = tree.children[0]
        name_token: Any = tree.children[1]
        member = self.visit(member_tree)
        if type(member) is not ct.MapType:
            return self._member_dot_other(tree, member, name_token)
        try:
            return member[name_token.value]
        except KeyError:
            return CELEvalError(f"no such member in mapping: {name_token.value!r}", KeyError, None, tree=tree)

    def _member_dot_other(self, tree: lark.Tree, member: Any, name_token: Any) -> Any:
        """cel-python's ``member_dot`` for an already evaluated ``member`` that is not a plain map."""
        name = name_token.value
        if isinstance(member, CELEvalError):
            return member
        if isinstance(member, NameContainer):
            if name in member:
                return member[name].value
            return CELEvalError(f"No {name!r} in bindings {sorted(member.keys())}", KeyError, None, tree=tree)
        if isinstance(member, ct.MessageType):
            return member.get(name)
        if isinstance(member, ct.MapType):
            try:
                return member[name]
            except KeyError:
                return CELEvalError(f"no such member in mapping: {name!r}", KeyError, None, tree=tree)
        message = f"{member!r} with type: '{type(member)}' does not support field selection"
        return CELEvalError(message, TypeError, None, tree=tree)

    def method_eval(self, target: Any, method_ident: Any, exprlist: Any = None) -> Any:
        """cel-python's method call (``target.method(args)``), minus its runtime casts."""
        try:
            function = self.activation.resolve_function(method_ident.value)
        except KeyError as exc:
            message = f"undeclared reference to {method_ident.value!r} (in activation '{self.activation}')"
            error = CELEvalError(message, exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error
        if isinstance(target, CELEvalError):
            return target
        if isinstance(exprlist, CELEvalError):
            return exprlist
        try:
            return function(target, *(exprlist or []))
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error
        except (TypeError, AttributeError) as exc:
            error = CELEvalError("no such overload", exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error

    def exprlist(self, tree: lark.Tree) -> Any:
        """Arguments or list items: the first error, else a list (cel-python's, minus a cast)."""
        values: list[Any] = self.visit_children(tree)
        for value in values:
            if isinstance(value, CELEvalError):
                return value
        return ct.ListType(values)

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        """cel-python's name resolution without its runtime ``cast(Union[...])``, which costs a
        typing-cache lookup (hashing a large Union) on every identifier read. Outside a package
        (always, here) ``resolve_name`` returns the nearest container's binding of a simple
        name, so that is looked up directly; a dotted or packaged name takes the full route."""
        activation = self.activation
        if not activation.package and "." not in name:
            container: NameContainer | None = activation.identifiers
            while container is not None:
                if name in container:
                    return dict.__getitem__(container, name).value
                container = container.parent
            return activation.functions[name]
        try:
            return activation.identifiers.resolve_name(activation.package, name).value
        except KeyError:
            return activation.functions[name]

    def conditionaland(self, tree: lark.Tree) -> Any:
        return self._logical(tree, "_&&_", deciding=False)

    def conditionalor(self, tree: lark.Tree) -> Any:
        return self._logical(tree, "_||_", deciding=True)

    def _logical(self, tree: lark.Tree, operator_name: str, deciding: bool) -> Any:
        if len(tree.children) != 2:
            return self.visit_children(tree)[0]
        left = self.visit(tree.children[0])
        if isinstance(left, ct.BoolType) and bool(left) is deciding:
            return left
        right = self.visit(tree.children[1])
        try:
            return self.activation.resolve_function(operator_name)(left, right)
        except TypeError as exc:
            return CELEvalError(f"no such overload for {operator_name}", exc.__class__, ())

    def member_dot_arg(self, tree: lark.Tree) -> Any:
        method = tree.children[1]
        if str(method) not in ("exists", "all"):
            if str(method) in _EMPTY_MACROS:
                return self._macro(tree, str(method))
            if str(method) in _CELPY_MACROS:
                return super().member_dot_arg(tree)
            # A method call, as cel-python makes it minus a runtime cast(Tuple[...]) subscript.
            values: list[Any] = self.visit_children(tree)
            return self.method_eval(*values)
        deciding = str(method) == "exists"
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        if type(items) in _EMPTY_CHECKED and not items:
            # Nothing to iterate: the result without building the comprehension's activation
            # and evaluator (most effects lists read from a command are empty).
            return ct.BoolType(not deciding)
        predicate = self.build_ss_macro_eval(tree)
        first_error: Any = None
        for item in items:
            value = predicate(item)
            if isinstance(value, ct.BoolType):
                if bool(value) is deciding:
                    return ct.BoolType(deciding)
            elif first_error is None:
                first_error = (
                    value
                    if isinstance(value, CELEvalError)
                    else CELEvalError(f"no such overload: {method}() predicate gave {type(value).__name__}")
                )
        return first_error if first_error is not None else ct.BoolType(not deciding)

    def _macro(self, tree: lark.Tree, method: str) -> Any:
        """``map``, ``filter`` and ``exists_one`` as cel-python evaluates them, answering an empty
        range (an empty list or map) without building the comprehension's evaluator."""
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        if type(items) in _EMPTY_CHECKED and not items:
            return ct.BoolType(False) if method == "exists_one" else ct.ListType()
        element = self.build_macro_eval(tree)
        if method == "map":
            return ct.ListType(map(element, items))
        if method == "filter":
            return ct.ListType(filter(element, items))
        return ct.BoolType(sum(1 for value in items if bool(element(value))) == 1)


#: Called with the name token of a ``matches`` call or an ``exists``/``all``/``exists_one``
#: comprehension and the value it gave, each time one is evaluated (``check --coverage``).
BranchRecorder = Callable[[lark.Token, Any], None]
_RECORDED = frozenset({"matches", "exists", "all", "exists_one"})


def recording_evaluator(record: BranchRecorder) -> type[BudgetedEvaluator]:
    """An evaluator that reports what each branching call gave; only coverage runs use one, so
    the gateway's evaluator pays nothing for it."""

    class RecordingEvaluator(BudgetedEvaluator):
        def member_dot_arg(self, tree: lark.Tree) -> Any:
            value = super().member_dot_arg(tree)
            name = tree.children[1]
            if isinstance(name, lark.Token) and name in _RECORDED:
                record(name, value)
            return value

        def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
            value = super().function_eval(name_token, exprlist)
            if name_token == "matches":
                record(name_token, value)
            return value

    return RecordingEvaluator
