"""The resident gateway of a deployment and the fast hook client that talks to it.

The client side (:mod:`.client`, :mod:`.wire`, :mod:`.safe_answers`, :mod:`.runtime_paths`) is
standard library only and runs on every hook event (and :mod:`.output_filter`, on every Bash call
whose output is redacted); the gateway side (:mod:`.server`,
:mod:`.http_front`, :mod:`.service`) decides, records (:mod:`.audit`, :mod:`.policy_state`) and
answers. A hook that decides in process uses the same functions the gateway's :mod:`.service`
does, so a decision does not depend on which path made it.

Empty on purpose: the fast client imports this package on every hook event, so this file must
import nothing."""
