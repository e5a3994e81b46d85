"""One module per ``dsh-policy`` subcommand, each with ``main(argv) -> int``."""
