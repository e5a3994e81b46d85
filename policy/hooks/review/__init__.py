"""Keeping secrets out of what a harness shows the model: refusing or rewriting calls that would
print one (:mod:`.secret_reads`, :mod:`.secret_greps`) and reviewing streamed output chunk by
chunk (:mod:`.output_filter`, :mod:`.output_review`).

Empty on purpose: the ``redact-output`` filter imports this package for every rewritten call."""
