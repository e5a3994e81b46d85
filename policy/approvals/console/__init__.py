"""The approvals web console (docs/approvals.md): loopback only, session sign-in, CSRF tokens."""
