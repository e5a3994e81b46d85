"""How a policy meets a harness: the gateway plugins, audit records, hot reload and deploy()."""
