"""Fixtures for the approval tests (helpers live in approval_kit)."""

from approval_kit import deployment

__all__ = ["deployment"]
