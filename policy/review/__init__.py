"""Reviewing a policy change before it ships: replay recorded decisions, diff two policies."""
