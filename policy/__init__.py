"""Rule packs (YAML + CEL) compiled into harness decisions, and the ``dsh-policy`` command."""
