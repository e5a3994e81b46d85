"""The fleet plane: signed policy out, status and evidence back, over NATS JetStream.

Optional (``pip install 'dsh-policy[fleet]'``): a single host without ``--fleet`` works exactly
as without this package. docs/fleet.md describes the deployment; each module says its one job:

- :mod:`.bus` -- every subject, bucket and stream name, and how to connect;
- :mod:`.bundle` -- building, signing and accepting a policy bundle (no bus);
- :mod:`.materialize` -- the accepted bundle on disk, where the gateway's reload path follows it;
- :mod:`.shipper` -- the audit log's lines to the evidence stream, resumable from a cursor;
- :mod:`.agent` -- the gateway's loop: bundles in, evidence and status out;
- :mod:`.collect`, :mod:`.evidence`, :mod:`.fleet_verify`, :mod:`.shares` -- ``verify --fleet``;
- :mod:`.status` -- ``fleet status``; :mod:`.commands` -- ``bundle`` and ``fleet`` commands;
- :mod:`.local_server` -- a real nats-server on loopback for tests, benchmarks and a trial.
"""
