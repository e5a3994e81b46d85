"""Describing failures without failing: the normalization boundary's own tools.

Everything the pipeline and the loop say about a failure goes through here, because the failure
may be hostile: an exception whose ``__str__`` or ``__repr__`` raises (or returns a non-string), a
``BaseException`` subclass, a value whose ``__class__`` lies to ``isinstance``. Each helper is
total: it returns a plain ``str`` (or a plain bool) whatever it is handed, and never raises.

Which exceptions are failures: every ``BaseException`` except the async backend's cancellation
(and ``GeneratorExit``, which closes a coroutine frame); those two must propagate so anyio's
cancel scopes keep working. ``KeyboardInterrupt`` and ``SystemExit`` raised by plugin, tool or
model code are failures like any other: a plugin cannot stop the host by raising them. (Ctrl-C
reaches an anyio program on asyncio as cancellation of the main task, which does propagate.)
"""

from __future__ import annotations

from typing import Any

import anyio

_TYPE_NAME = type.__dict__["__name__"]


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` must propagate: the backend's cancellation, or a coroutine being closed."""
    if isinstance(exc, GeneratorExit):
        return True
    try:
        cancelled = anyio.get_cancelled_exc_class()
    except Exception:  # no async backend running (a sync caller): nothing to cancel
        return False
    return isinstance(exc, cancelled)


def type_name(value: Any) -> str:
    """The name of ``value``'s real type (metaclass tricks cannot make this raise)."""
    try:
        name = _TYPE_NAME.__get__(type(value), type)
    except Exception:  # pragma: no cover - type's own getset descriptor does not fail
        return "object"
    return name if type(name) is str else "object"


def exact_str(value: Any) -> str | None:
    """``value`` as an exact ``str`` when it really is a string (subclasses copied), else None.

    ``isinstance(value, str)`` can be fooled by a ``__class__`` property; the real type cannot.
    """
    kind = type(value)
    if kind is str:
        return value
    if issubclass(kind, str):
        return str.__str__(value)  # the base implementation: an exact copy, no override runs
    return None


def safe_text(value: Any) -> str:
    """A printable, plain ``str`` for any value: ``str(value)``, else ``repr``, else a placeholder."""
    text = exact_str(value)
    if text is not None:
        return text
    for render in (str, repr):
        try:
            rendered = render(value)
        except BaseException as exc:  # a hostile __str__ may raise anything
            if is_cancellation(exc):
                raise
            continue
        text = exact_str(rendered)
        if text is not None:
            return text
    return f"<unprintable {type_name(value)}>"


def describe(exc: BaseException) -> str:
    """An exception's message (``str(exc)``), its type name when that is empty, never raising."""
    text = safe_text(exc)
    return text or type_name(exc)


def log_failure(logger: Any, event: str, **fields: Any) -> None:
    """Log through structlog and swallow whatever the logger or its renderers raise.

    Fields should already be plain (see :func:`describe`); ``exc_info`` is passed on because
    tracebacks render hostile exceptions safely, but a renderer that does not must not turn a
    contained failure into an escaped one.
    """
    try:
        logger.error(event, **fields)
    except BaseException as exc:
        if is_cancellation(exc):
            raise
        try:
            fields.pop("exc_info", None)
            logger.error(event, **fields)
        except BaseException as again:
            if is_cancellation(again):
                raise

