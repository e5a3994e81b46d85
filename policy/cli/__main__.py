"""``python -m dsh_policy.policy.cli``: the ``dsh-policy`` command without the console script."""

from dsh_policy.policy.cli import main

raise SystemExit(main())
