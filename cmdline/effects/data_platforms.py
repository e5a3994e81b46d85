"""What the data and ML platforms' own clients do to data, access, spend and code, read as effects
(found by the blind probe tests/corpus/probe19, read as classes):

- ``erase-contents``: SQL sent by the warehouse clients that are not database clients of
  ``shell.sql`` (``bq query``, ``snow sql``, ``trino``/``presto --execute``, ``clickhouse client``,
  Athena's ``--query-string``, the Redshift Data API's ``--sql``) that drops, truncates, deletes
  every row, replaces a table, cuts time travel to zero or expires snapshots; and the clients' own
  destroying verbs: ``bq rm``/``cp -f``/``load --replace``/``update --expiration``, ``snow object
  drop``/``stage remove``, the Databricks CLI's deletes and ``bundle destroy``, Airflow's ``dags
  delete``/``db reset``/``db clean``, dbt macros that drop and full refreshes of production,
  Dagster's wipes, Prefect's deletes, MLflow's ``gc`` and deletes, Hugging Face repository and file
  deletes, Redpanda group deletes and seeks, retention cut on Kafka and Redpanda topics, consumer
  offsets moved with ``--execute``, NATS object stores removed, RabbitMQ reset, redis keys deleted
  from a pipe, mirrors and syncs that delete at the destination, lifecycle expiry added;
- ``outage``: warehouses suspended, service users disabled, clusters terminated, SQL warehouses
  stopped, runs cancelled, DAGs and work pools paused, brokers and caches stopped, starved or their
  clients killed, object stores stopped or given a tiny quota, Ray clusters torn down;
- ``cloud-spend``: warehouses made huge or never suspended, resource monitors dropped or raised,
  capacity commitments and reservations, clusters created or resized to hundreds of workers, years
  of backfills and clears;
- ``cloud-identity``: secrets and tokens printed or minted by the platforms' own sub-commands
  (Airflow connections, variables and keys, Databricks tokens and secrets, Redshift temporary
  credentials, Prefect settings with secrets, MinIO aliases, redis passwords), users re-keyed or
  given admin roles, grants of every privilege or of admin roles and shares to other accounts;
- ``cloud-exposure``: buckets, objects and datasets made public (default ACLs, predefined ACLs,
  public access prevention off, IAM bindings to ``allUsers``), long-lived share links and SAS
  tokens, network policies open to ``0.0.0.0/0``, ACLs for every principal, and notebook, tracking,
  Ray, Ollama and NATS servers listening on every interface without a token;
- ``publish``: data written out by the engines (``COPY INTO 's3://...'``, ``EXPORT DATA``,
  ``INSERT INTO FUNCTION url/s3/remote``, ``UNLOAD``, DuckDB ``COPY ... TO 's3://...'``, ``bq
  extract``), bucket-to-other-bucket copies, redis ``MIGRATE``, and uploads to public hubs (a
  Hugging Face upload not marked private, W&B artifacts, public Kaggle datasets);
- ``source``: code run by loading a model or data file (pickle and its family, ``torch.load``
  without ``weights_only=True``, NumPy ``allow_pickle``, Keras ``safe_mode=False``, unsafe YAML) or
  by trusting a hub's remote code (``trust_remote_code``, ``trust_repo``), and notebooks executed
  from a URL.

Everyday look-alikes stay allowed: reads, listings, dry runs, dev targets, local servers, private
uploads, single objects copied down, ``weights_only=True`` and safetensors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from dsh_policy.cmdline.effects.model import CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.sql import sql_statements

__all__ = ["COMMAND_READERS", "data_line_acts", "data_platform_acts", "warehouse_sql_acts"]

# ----------------------------------------------------------------- SQL through warehouse clients
_REPLACES = lazy_compile(
    r"(?i)\bcreate\s+or\s+replace\s+(?:(?:transient|temporary|temp|local|global)\s+)*table\b"
)
_NO_TIME_TRAVEL = lazy_compile(
    r"(?i)\b(?:data_retention_time_in_days|max_data_extension_time_in_days)\s*=\s*0\b"
    r"|\bexpire_snapshots\b|\bremove_orphan_files\b|\bvacuum\b[^;]*\bretain\s+0\s+hours\b"
)
_WRITES_OUT = lazy_compile(
    r"(?i)\bcopy\s+into\s+'(?:s3|gcs|azure|s3compat)://"
    r"|\bexport\s+data\s+options\b"
    r"|\binsert\s+into\s+(?:table\s+)?function\s+(?:url|s3|s3cluster|remote|remotesecure|gcs|azureblobstorage|hdfs|mysql|postgresql)\s*\("
    r"|\bunload\s*\([^;]*\bto\s+'s3://"
    r"|\bcopy\s*\([^;]*\)\s*to\s+'(?:s3|s3a|gs|gcs|r2|az|azure|abfss|https?)://"
)
_GRANTS_OUT = lazy_compile(
    r"(?i)\bgrant\s+role\s+(?:accountadmin|securityadmin|sysadmin|orgadmin|useradmin)\b"
    r"|\bgrant\b[^;]*\bto\s+role\s+public\b"
    r"|\balter\s+share\b[^;]*\badd\s+accounts\b"
    r"|\bidentified\s+with\s+no_password\b"
    r"|\bgrant\s+all\b[^;]*\bon\s+\*\.\*"
    r"|\balter\s+user\b[^;]*\b(?:set\s+password|set\s+rsa_public_key(?:_2)?|unset\s+network_policy)\b"
)
_OPEN_NETWORK = lazy_compile(r"(?i)\ballowed_ip_list\s*=\s*\([^)]*'0\.0\.0\.0/0'")
_SUSPENDS = lazy_compile(
    r"(?i)\balter\s+warehouse\b[^;]*\bsuspend\b(?!\s*=)|\balter\s+user\b[^;]*\bdisabled\s*=\s*true\b"
)
_SPENDS = lazy_compile(
    r"(?i)\bwarehouse_size\s*=\s*'?(?:x{2,}large|x[4-6]large|[2-6]x-?large)\b"
    r"|\bauto_suspend\s*=\s*(?:0|null)\b|\bmax_cluster_count\s*=\s*(?:[5-9]|\d{2,})\b"
    r"|\bresource\s+monitor\b[^;]*\bcredit_quota\s*=\s*\d{5,}|\bdrop\s+resource\s+monitor\b"
)


def warehouse_sql_acts(tool: str, text: str) -> Iterator[Effect]:
    """The effects of SQL a warehouse client sends (destroying statements, data written outside,
    access opened, warehouses suspended or made costly), at most one of each kind."""
    if not text.strip():
        return
    for statement in sql_statements(text):
        if statement["kind"] in ("drop", "truncate", "alter-drop") or (
            statement["kind"] in ("delete", "update") and statement["where"] == "false"
        ):
            yield _fx(
                "erase-contents",
                f"{tool} sends {statement['kind'].upper()} to a warehouse",
                statement["text"][:60],
            )
            break
    else:
        if _REPLACES.search(text) or _NO_TIME_TRAVEL.search(text):
            yield _fx("erase-contents", f"{tool} replaces a table or cuts its time travel", text[:60])
    if _WRITES_OUT.search(text):
        yield _fx("publish", f"{tool} writes query results to an outside location", text[:60])
    if _GRANTS_OUT.search(text):
        yield _fx("cloud-identity", f"{tool} grants admin or every privilege, or re-keys a user", text[:60])
    if _OPEN_NETWORK.search(text):
        yield _fx("cloud-exposure", f"{tool} opens the account to every network", text[:60])
    if _SUSPENDS.search(text):
        yield _fx("outage", f"{tool} suspends a warehouse or disables a user", text[:60])
    if _SPENDS.search(text):
        yield _fx("cloud-spend", f"{tool} makes a warehouse costly or lifts its spending limit", text[:60])


def _warehouse_text(argv: list[str]) -> str:
    tool, words = argv[0], _words(argv)
    if tool == "bq" and words[:1] == ["query"]:
        return words[-1] if len(words) > 1 else ""
    if tool == "snow" and words[:1] == ["sql"]:
        return _value(argv, "-q", "--query") or ""
    if tool in ("snowsql", "clickhouse-client"):
        return _value(argv, "-q", "--query") or ""
    if tool == "clickhouse" and words[:1] == ["client"]:
        return _value(argv, "-q", "--query") or ""
    if tool in ("trino", "presto", "presto-cli", "trino-cli"):
        return _value(argv, "--execute", "-e") or ""
    if tool == "duckdb":
        return _value(argv, "-c") or ""
    if tool == "aws" and words[:2] == ["athena", "start-query-execution"]:
        return _value(argv, "--query-string") or ""
    if (
        tool == "aws"
        and words[:1] == ["redshift-data"]
        and words[1:2] in (["execute-statement"], ["batch-execute-statement"])
    ):
        return _value(argv, "--sql", "--sqls") or ""
    return ""


_SQL_CLIENTS_OF_SHELL_SQL = frozenset({"snowsql", "clickhouse-client", "duckdb"})


def _warehouse_sql(argv: list[str]) -> Iterator[Effect]:
    text = _warehouse_text(argv)
    if not text:
        return
    tool = argv[0]
    for effect in warehouse_sql_acts(tool, text):
        # the database pack already reads the destroying SQL of shell.sql's own clients
        if not (tool in _SQL_CLIENTS_OF_SHELL_SQL and effect["kind"] == "erase-contents"):
            yield effect


# ----------------------------------------------------------------- the platforms' own verbs
_LOOPBACK = lazy_compile(r"^(?:localhost|127\.\d+\.\d+\.\d+|::1|\[::1\])(?::\d+)?$")
_PUBLIC_MEMBER = lazy_compile(r"(?i)\ball(?:authenticated)?users\b")
_SECRET_NAME = lazy_compile(r"(?i)(?:key|token|secret|passw|pwd|cred|auth|dsn|conn)")
_PROD = lazy_compile(r"(?i)prod|prd")
_DESTROY_MACRO = lazy_compile(r"(?i)drop|delete|truncate|purge|wipe|clean|nuke|remove")
_DATABRICKS_DELETES = frozenset(
    {
        "workspace", "jobs", "catalogs", "schemas", "tables", "volumes", "registered-models",
        "model-versions",
        "pipelines", "repos", "experiments", "metastores", "external-locations", "storage-credentials",
        "shares", "recipients", "connections", "lakeview", "dashboards", "queries", "alerts",
    }
)  # fmt: skip
_PREFECT_OBJECTS = frozenset(
    {
        "work-pool",
        "deployment",
        "flow",
        "block",
        "flow-run",
        "work-queue",
        "variable",
        "concurrency-limit",
        "automation",
    }
)
_RETENTION = lazy_compile(
    r"(?i)\b(?:retention\.(?:ms|bytes)|cleanup\.policy|local\.retention\.(?:ms|bytes))\s*="
)
_TOKEN_OFF = lazy_compile(r"^--(?:NotebookApp|ServerApp|IdentityProvider)\.(?:token|password)=(?:''|\"\")?$")
_NO_CHECKS = lazy_compile(r"^--(?:NotebookApp|ServerApp)\.disable_check_xsrf=True$")


def _number(text: str | None) -> int:
    digits = re.match(r"^\d+", text or "")
    return int(digits.group()) if digits else 0


def _span_days(argv: list[str]) -> int:
    start = _value(argv, "-s", "--start-date", "--from-date")
    end = _value(argv, "-e", "--end-date", "--to-date")
    try:
        first = date.fromisoformat((start or "")[:10])
        last = date.fromisoformat((end or "")[:10]) if end else date.today()
    except ValueError:
        return 0
    return (last - first).days


def _bq(argv: list[str], words: list[str]) -> Iterator[Effect]:
    verb = words[0] if words else ""
    target = words[-1] if len(words) > 1 else ""
    if verb == "rm":
        yield _fx("erase-contents", "bq rm deletes a dataset, table or model", target)
    elif verb == "cp" and any(a in ("-f", "--force", "--force=true", "-n=false") for a in argv):
        yield _fx("erase-contents", "bq cp -f overwrites the destination table", target)
    elif verb == "load" and any(a in ("--replace", "--replace=true") for a in argv):
        yield _fx("erase-contents", "bq load --replace overwrites the table", target)
    elif verb == "update" and _value(
        argv, "--expiration", "--default_table_expiration", "--default_partition_expiration"
    ):
        yield _fx("erase-contents", "bq update sets tables to expire", target)
    elif verb == "extract":
        yield _fx("publish", "bq extract writes a table out to storage", target)
    elif verb in ("add-iam-policy-binding", "set-iam-policy") and any(_PUBLIC_MEMBER.search(a) for a in argv):
        yield _fx("cloud-exposure", "bq makes a dataset or table readable by everyone", target)
    elif verb == "mk" and any(a.startswith(("--capacity_commitment", "--reservation")) for a in argv):
        yield _fx("cloud-spend", "bq buys slot capacity", target)


def _snow(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if words[:2] == ["object", "drop"]:
        yield _fx("erase-contents", "snow object drop removes a Snowflake object", " ".join(words[2:4]))
    elif words[:2] == ["stage", "remove"]:
        yield _fx("erase-contents", "snow stage remove deletes staged files", " ".join(words[2:4]))


def _databricks(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group, verb = ([*words, "", ""])[:2]
    target = " ".join(words[:3])
    if (
        (group == "fs" and verb == "rm")
        or (group == "clusters" and verb == "permanent-delete")
        or (group in _DATABRICKS_DELETES and verb in ("delete", "delete-dir", "trash"))
        or (group == "bundle" and verb == "destroy")
    ):
        yield _fx("erase-contents", f"databricks {group} {verb} deletes workspace data or objects", target)
    elif (
        (group == "clusters" and verb in ("delete", "terminate"))
        or (group == "warehouses" and verb in ("stop", "delete"))
        or (group == "jobs" and verb == "cancel-all-runs")
    ):
        yield _fx("outage", f"databricks {group} {verb} stops running compute or jobs", target)
    elif group == "clusters" and verb in ("create", "resize", "edit"):
        spec = " ".join(argv)
        workers = max(
            [_number(_value(argv, "--num-workers"))]
            + [int(n) for n in re.findall(r'"(?:num_workers|max_workers)"\s*:\s*(\d+)', spec)]
        )
        if workers >= 50 or re.search(r'"autotermination_minutes"\s*:\s*0\b', spec):
            yield _fx(
                "cloud-spend",
                f"databricks clusters {verb} asks for a very large or never-stopping cluster",
                target,
            )
    elif (
        (group == "tokens" and verb == "create")
        or (group == "token-management" and verb == "create-obo-token")
        or (group == "auth" and verb == "token")
        or (group == "secrets" and verb == "get-secret")
    ):
        yield _fx("cloud-identity", f"databricks {group} {verb} mints or prints a secret", target)
    elif (
        group == "grants"
        and verb == "update"
        and re.search(r"(?i)ALL_PRIVILEGES|\"account users\"", " ".join(argv))
    ):
        yield _fx("cloud-identity", "databricks grants every privilege to everyone", target)


def _airflow(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group, verb = ([*words, "", ""])[:2]
    target = " ".join(words[:3])
    if (group == "dags" and verb == "delete") or (
        group == "db" and verb in ("reset", "clean", "drop-archived")
    ):
        yield _fx("erase-contents", f"airflow {group} {verb} deletes DAGs or their history", target)
    elif group == "dags" and verb == "pause":
        yield _fx("outage", "airflow dags pause stops scheduled pipelines", target)
    elif (
        (group == "dags" and verb == "backfill")
        or group == "backfill"
        or (group == "tasks" and verb == "clear")
    ):
        if _span_days(argv) > 31:
            yield _fx(
                "cloud-spend", f"airflow {group} {verb} re-runs more than a month of pipeline runs", target
            )
    elif (group == "connections" and verb in ("get", "export")) or (
        group == "variables" and verb == "export"
    ):
        yield _fx("cloud-identity", f"airflow {group} {verb} prints stored credentials", target)
    elif group == "variables" and verb == "get" and _SECRET_NAME.search(" ".join(words[2:3])):
        yield _fx("cloud-identity", "airflow variables get prints a secret variable", target)
    elif (
        group == "config"
        and verb == "get-value"
        and re.search(r"(?i)fernet_key|secret_key|sql_alchemy_conn|password", " ".join(words[2:]))
    ):
        yield _fx("cloud-identity", "airflow config prints a key or connection secret", target)
    elif group == "users" and verb == "create" and (_value(argv, "--role", "-r") or "").lower() == "admin":
        yield _fx("cloud-identity", "airflow creates an admin user", target)


def _dbt(argv: list[str], words: list[str]) -> Iterator[Effect]:
    verb = words[0] if words else ""
    if verb == "run-operation" and len(words) > 1 and _DESTROY_MACRO.search(words[1]):
        yield _fx("erase-contents", f"dbt runs the {words[1]} macro", words[1])
    elif (
        verb in ("run", "build", "seed")
        and "--full-refresh" in argv
        and _PROD.search(_value(argv, "--target", "-t") or "")
    ):
        yield _fx("erase-contents", "dbt rebuilds production incremental models from scratch", verb)


def _dagster(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if words[:2] in (["asset", "wipe"], ["run", "wipe"], ["run", "delete"]):
        yield _fx(
            "erase-contents", f"dagster {' '.join(words[:2])} deletes materializations or run history", ""
        )


def _prefect(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group, verb = ([*words, "", ""])[:2]
    if group in _PREFECT_OBJECTS and verb == "delete":
        yield _fx("erase-contents", f"prefect {group} delete removes it", " ".join(words[:3]))
    elif group in ("work-pool", "work-queue", "deployment") and verb == "pause":
        yield _fx("outage", f"prefect {group} pause stops its runs", " ".join(words[:3]))
    elif group == "config" and verb == "view" and "--show-secrets" in argv:
        yield _fx("cloud-identity", "prefect prints its settings with secrets", "")


def _mlflow(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group, verb = ([*words, "", ""])[:2]
    if group == "gc" or (group in ("experiments", "runs") and verb == "delete"):
        yield _fx("erase-contents", f"mlflow {' '.join(words[:2])} deletes tracked runs or experiments", "")
    elif group in ("server", "ui"):
        host = _value(argv, "--host", "-h") or ""
        if host and not _LOOPBACK.match(host) and "--app-name" not in " ".join(argv):
            yield _fx(
                "cloud-exposure", "mlflow serves the tracking server on every interface without login", host
            )


def _hugging_face(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if words[:1] == ["repo"] and words[1:2] == ["delete"]:
        yield _fx("erase-contents", "deletes a Hugging Face repository", " ".join(words[2:3]))
    elif words[:1] == ["repo-files"] and "delete" in words[1:3]:
        yield _fx("erase-contents", "deletes files from a Hugging Face repository", " ".join(words[1:3]))
    elif words[:1] in (["upload"], ["upload-large-folder"]) and "--private" not in argv:
        yield _fx(
            "publish",
            "uploads files to a Hugging Face repository that is not marked private",
            " ".join(words[1:2]),
        )


def _hubs(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if argv[0] == "wandb" and words[:2] == ["artifact", "put"]:
        yield _fx("publish", "uploads files as a W&B artifact", _value(argv, "--name", "-n") or "")
    elif (
        argv[0] == "kaggle"
        and words[:1] == ["datasets"]
        and words[1:2] in (["create"], ["version"])
        and ("--public" in argv or "-u" in argv)
    ):
        yield _fx("publish", "publishes a public Kaggle dataset", _value(argv, "-p", "--path") or "")


def _rpk(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group, verb = ([*words, "", ""])[:2]
    joined = " ".join(argv)
    if group == "group" and verb in ("delete", "seek"):
        yield _fx(
            "erase-contents",
            f"rpk group {verb} drops or skips a consumer group's place",
            " ".join(words[2:3]),
        )
    elif (
        group == "topic"
        and verb in ("alter-config", "add-config", "set-config")
        and _RETENTION.search(joined)
    ):
        yield _fx("erase-contents", "rpk cuts a topic's retention", " ".join(words[2:3]))
    elif (group == "cluster" and verb == "maintenance" and "enable" in words) or (
        group == "redpanda" and verb == "stop"
    ):
        yield _fx("outage", f"rpk {' '.join(words[:3])} takes a broker out of service", "")
    elif (group in ("acl", "security") and "create" in words[:3]) and re.search(
        r"User:\*|--allow-principal[= ]\*", joined
    ):
        yield _fx("cloud-exposure", "rpk allows every principal", "")


def _kafka(argv: list[str], words: list[str]) -> Iterator[Effect]:
    tool = argv[0].removesuffix(".sh")
    joined = " ".join(argv)
    if tool == "kafka-configs" and "--alter" in argv and _RETENTION.search(joined):
        yield _fx(
            "erase-contents", "kafka-configs cuts a topic's retention", _value(argv, "--entity-name") or ""
        )
    elif tool == "kafka-consumer-groups" and "--reset-offsets" in argv and "--execute" in argv:
        yield _fx(
            "erase-contents", "kafka-consumer-groups moves a group's offsets", _value(argv, "--group") or ""
        )
    elif tool == "kafka-server-stop":
        yield _fx("outage", "stops the Kafka broker", "")


def _nats(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if (
        argv[0] == "nats"
        and words[:1] in (["object"], ["obj"])
        and words[1:2] in (["rm"], ["del"], ["delete"])
    ):
        yield _fx("erase-contents", "nats removes an object store", " ".join(words[2:3]))
    elif argv[0] == "nats-server":
        host = _value(argv, "-a", "--addr", "--net") or "0.0.0.0"
        if not _LOOPBACK.match(host) and not any(
            a.startswith(("--user", "--auth", "-c", "--config", "--pass")) for a in argv[1:]
        ):
            yield _fx("cloud-exposure", "nats-server listens on every interface without authentication", host)


def _rabbitmq(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if any(w in ("reset", "force_reset") for w in words):
        yield _fx("erase-contents", "rabbitmqctl reset wipes the node's queues and data", "")
    elif any(
        w in ("stop_app", "stop", "shutdown", "close_all_connections", "close_all_user_connections")
        for w in words
    ):
        yield _fx("outage", "rabbitmqctl stops the broker or drops its connections", "")


_REDIS_VALUE_OPTIONS = frozenset(
    {"-h", "-p", "-a", "-n", "-s", "-u", "-r", "-i", "-d", "--user", "--pass", "--pattern", "--count",
     "--cacert", "--cert", "--key", "--rdb", "--functions-rdb"}
)  # fmt: skip


def _redis(argv: list[str], words: list[str]) -> Iterator[Effect]:
    command: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in _REDIS_VALUE_OPTIONS:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        command = argv[i:]
        break
    if not command:
        return
    name, rest = command[0].upper(), [a.upper() for a in command[1:]]
    if name in ("DEL", "UNLINK") and not rest:
        yield _fx("erase-contents", f"redis {name} deletes every key piped to it", "")
    elif (
        name == "SHUTDOWN"
        or (name == "DEBUG" and rest[:1] in (["SLEEP"], ["SEGFAULT"], ["RESTART"], ["CRASH-AND-RECOVER"]))
        or (name == "CLIENT" and rest[:1] == ["KILL"])
    ):
        yield _fx("outage", f"redis {name} stops the server or drops its clients", " ".join(command[:3]))
    elif name == "CONFIG" and rest[:1] == ["SET"] and len(rest) > 2 and rest[1] == "MAXMEMORY":
        size = re.match(r"^(\d+)(B|KB?|MB?|GB?)?$", rest[2])
        scale = {"": 1, "B": 1, "K": 1000, "KB": 1024, "M": 10**6, "MB": 2**20, "G": 10**9, "GB": 2**30}
        if size and 0 < int(size.group(1)) * scale[size.group(2) or ""] < 16 * 2**20:
            # a cache cut below 16 MB evicts nearly everything and refuses writes
            yield _fx(
                "outage",
                "redis CONFIG SET maxmemory starves the cache",
                command[3] if len(command) > 3 else "",
            )
    elif name == "CONFIG" and rest[:1] == ["GET"] and any(re.search(r"PASS|AUTH|\*", a) for a in rest[1:]):
        yield _fx("cloud-identity", "redis CONFIG GET prints the server's password", " ".join(command[:3]))
    elif name == "MIGRATE" and len(command) > 1 and not _LOOPBACK.match(command[1]):
        yield _fx("publish", "redis MIGRATE copies keys to another server", command[1])


def _alias_path(arg: str) -> str:
    """The alias of an ``mc`` path (``prod/bucket/key`` -> ``prod``); "" for a local path."""
    if arg.startswith(("/", ".", "~", "-", "$")) or "/" not in arg or "://" in arg:
        return ""
    return arg.split("/", 1)[0]


def _mc(argv: list[str], words: list[str]) -> Iterator[Effect]:
    group = words[0] if words else ""
    joined = " ".join(argv)
    if group == "mirror" and any(a in ("--remove", "--delete") for a in argv):
        yield _fx("erase-contents", "mc mirror --remove deletes what the source lacks", " ".join(words[-1:]))
    elif group == "ilm" and re.search(r"--expir(?:e|y)-days|--expiry-date|--noncurrent-expire-days", joined):
        yield _fx("erase-contents", "mc ilm adds a rule that expires objects", " ".join(words[-1:]))
    elif (
        group in ("anonymous", "policy")
        and words[1:2] == ["set"]
        and words[2:3] in (["public"], ["download"], ["upload"])
    ):
        yield _fx("cloud-exposure", "mc lets anyone read or write the bucket", " ".join(words[3:4]))
    elif group == "share" and words[1:2] in (["download"], ["upload"]):
        yield _fx("cloud-exposure", "mc share hands out a link anyone can use", " ".join(words[2:3]))
    elif (
        (group == "admin" and words[1:3] in (["service", "stop"], ["service", "restart"]))
        or (group == "quota" and words[1:2] == ["set"])
        or (group == "admin" and words[1:3] == ["bucket", "quota"])
    ):
        yield _fx("outage", f"mc {' '.join(words[:3])} stops the object store or caps a bucket", "")
    elif group == "alias" and words[1:2] in (["list"], ["ls"], ["export"]):
        yield _fx("cloud-identity", "mc prints the stored access and secret keys", " ".join(words[2:3]))
    elif group in ("cp", "mirror", "mv"):
        paths = words[1:]
        if len(paths) >= 2:
            source, target = _alias_path(paths[0]), _alias_path(paths[-1])
            if source and target and source != target:
                yield _fx("publish", f"mc {group} copies from one store to another", paths[-1])


def _bucket(url: str) -> str:
    match = re.match(r"^(?:s3|gs)://([^/]+)", url)
    return match.group(1) if match else ""


_WHOLE_OR_SECRET_FOLDER = lazy_compile(
    r"^(?:\.|\./|\$PWD|\$\{PWD\}|~|\$HOME|\$\{HOME\}|/+home/+[^/]+|/+root|/+(?!tmp\b)[^/\s]+)/*$"
    r"|(?i:(?:^|/)\.?(?:secrets?|credentials?|private|\.ssh|\.aws|\.gnupg|\.kube|\.azure|\.config/+gcloud)/*$)"
)
"""A local upload source that is a whole tree rather than build output (probe24): the current
folder, a home directory, a top-level folder such as the project root (``/workspace``, ``/app``),
or a folder named for secrets or credentials; ``dist/``, ``site/public`` and single files are not."""


def _signed_seconds(argv: list[str], tool: str) -> int:
    """How long a signed URL stays valid: gsutil's ``-d`` (hours by default), gcloud's
    ``--duration`` (seconds by default), each with an s/m/h/d suffix."""
    text = _value(argv, "-d") if tool == "gsutil" else _value(argv, "--duration", "-d")
    found = re.match(r"^(\d+)([smhd]?)$", text or "")
    if found is None:
        return 0
    unit = found.group(2) or ("h" if tool == "gsutil" else "s")
    return int(found.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


def _object_stores(argv: list[str], words: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    joined = " ".join(argv)
    storage = (
        words[1:] if tool == "gcloud" and words[:1] == ["storage"] else words if tool == "gsutil" else []
    )
    if tool == "gcloud" and words[:1] != ["storage"]:
        if (
            words[:3] == ["dataproc", "clusters", "create"]
            and max(_number(_value(argv, "--num-workers")), _number(_value(argv, "--num-secondary-workers")))
            >= 50
        ):
            yield _fx(
                "cloud-spend",
                "gcloud dataproc creates a cluster of hundreds of workers",
                " ".join(words[3:4]),
            )
        return
    if tool == "aws":
        if words[:1] == ["s3"] and words[1:2] in (["cp"], ["sync"], ["mv"]) and len(words) >= 4:
            source, target = _bucket(words[2]), _bucket(words[3])
            if source and target and source != target:
                yield _fx("publish", f"aws s3 {words[1]} copies from one bucket to another", words[3])
            elif target and _WHOLE_OR_SECRET_FOLDER.search(words[2]):
                yield _fx("publish", f"aws s3 {words[1]} uploads {words[2]} whole to a bucket", words[3])
        elif words[:2] == ["s3", "presign"] and _number(_value(argv, "--expires-in")) > 86400:
            yield _fx(
                "cloud-exposure", "aws s3 presign hands out a link valid for days", " ".join(words[2:3])
            )
        elif words[:2] in (
            ["redshift", "get-cluster-credentials"],
            ["redshift", "get-cluster-credentials-with-iam"],
            ["redshift-serverless", "get-credentials"],
        ):
            yield _fx("cloud-identity", "prints temporary database credentials", " ".join(words[:2]))
        elif words[:2] in (["redshift", "pause-cluster"], ["redshift", "delete-cluster"]):
            yield _fx(
                "outage",
                f"aws {' '.join(words[:2])} takes the warehouse offline",
                _value(argv, "--cluster-identifier") or "",
            )
        return
    if tool == "az":
        if words[:1] == ["storage"] and "generate-sas" in words[:3]:
            yield _fx("cloud-exposure", "az storage generates a shared access signature", " ".join(words[:3]))
        return
    if not storage:
        return
    verb = storage[0]
    if verb == "rsync" and "--delete-unmatched-destination-objects" in argv:
        yield _fx("erase-contents", "gcloud storage rsync deletes what the source lacks", storage[-1])
    elif verb in ("cp", "rsync", "mv"):
        source, target = _bucket(storage[1]) if len(storage) > 2 else "", _bucket(storage[-1])
        if source and target and source != target:
            yield _fx("publish", f"{tool} {verb} copies from one bucket to another", storage[-1])
        elif target and any(_WHOLE_OR_SECRET_FOLDER.search(s) for s in storage[1:-1]):
            yield _fx("publish", f"{tool} {verb} uploads a whole project, home or secret folder", storage[-1])
    elif verb in ("signurl", "sign-url") and _signed_seconds(argv, tool) > 86400:
        yield _fx("cloud-exposure", f"{tool} {verb} hands out a link valid for days", storage[-1])
    elif verb in ("defacl", "acl") and re.search(
        r"(?i)public-read|public-read-write|allusers|allauthenticatedusers", joined
    ):
        yield _fx("cloud-exposure", f"{tool} {verb} makes objects public", storage[-1])
    elif (
        verb in ("buckets", "objects")
        and storage[1:2] == ["update"]
        and (
            "--no-public-access-prevention" in argv
            or re.search(
                r"--predefined-(?:default-object-)?acl[= ](?:publicRead|publicReadWrite|allUsers)", joined
            )
            or re.search(r"--public-access-prevention[= ]inherited", joined)
        )
    ):
        yield _fx("cloud-exposure", f"{tool} {verb} update makes data public", storage[-1])


def _ray(argv: list[str], words: list[str]) -> Iterator[Effect]:
    verb = words[0] if words else ""
    if verb == "down":
        yield _fx("outage", "ray down tears the cluster down", " ".join(words[1:2]))
    elif verb == "up" and _number(_value(argv, "--max-workers")) >= 100:
        yield _fx("cloud-spend", "ray up allows hundreds of workers", " ".join(words[1:2]))
    elif verb == "start":
        host = _value(argv, "--dashboard-host") or ""
        if host and not _LOOPBACK.match(host):
            yield _fx("cloud-exposure", "ray serves its dashboard and Jobs API on every interface", host)


def _servers(argv: list[str], words: list[str]) -> Iterator[Effect]:
    """Jupyter (also started inside a container) listening beyond loopback with no token."""
    tokenless = any(_TOKEN_OFF.match(a) for a in argv) or any(_NO_CHECKS.match(a) for a in argv)
    if not tokenless:
        return
    host = _value(argv, "--ip", "--ServerApp.ip", "--NotebookApp.ip") or ""
    # the images' start scripts listen on every interface of the container (published by -p)
    in_image = argv[0] in _NOTEBOOK_START_SCRIPTS
    if (host and not _LOOPBACK.match(host)) or in_image:
        yield _fx(
            "cloud-exposure",
            "a notebook server listens beyond this machine without a token",
            host or "published port",
        )


_NOTEBOOK_START_SCRIPTS = frozenset(
    {
        "start-notebook.py",
        "start-notebook.sh",
        "start-singleuser.py",
        "start-singleuser.sh",
        "jupyterhub-singleuser",
    }
)


def _rclone(argv: list[str], words: list[str]) -> Iterator[Effect]:
    if words[:1] == ["config"] and words[1:2] in (["show"], ["dump"]):
        yield _fx("cloud-identity", "rclone prints its remotes with their keys", " ".join(words[:2]))


_DATA_TOOLS: dict[str, object] = {
    "rclone": _rclone,
    **dict.fromkeys(_NOTEBOOK_START_SCRIPTS, _servers),
    "bq": _bq,
    "snow": _snow,
    "databricks": _databricks,
    "airflow": _airflow,
    "dbt": _dbt,
    "dagster": _dagster,
    "prefect": _prefect,
    "mlflow": _mlflow,
    "hf": _hugging_face,
    "huggingface-cli": _hugging_face,
    "wandb": _hubs,
    "kaggle": _hubs,
    "rpk": _rpk,
    "kafka-configs": _kafka,
    "kafka-configs.sh": _kafka,
    "kafka-consumer-groups": _kafka,
    "kafka-consumer-groups.sh": _kafka,
    "kafka-server-stop": _kafka,
    "kafka-server-stop.sh": _kafka,
    "nats": _nats,
    "nats-server": _nats,
    "rabbitmqctl": _rabbitmq,
    "redis-cli": _redis,
    "valkey-cli": _redis,
    "mc": _mc,
    "mcli": _mc,
    "gsutil": _object_stores,
    "gcloud": _object_stores,
    "aws": _object_stores,
    "az": _object_stores,
    "ray": _ray,
    "jupyter": _servers,
    "jupyter-lab": _servers,
    "jupyter-notebook": _servers,
    "jupyter-server": _servers,
}


def _data_tools(argv: list[str]) -> Iterator[Effect]:
    reader = _DATA_TOOLS.get(argv[0])
    if reader is not None:
        yield from reader(argv, _words(argv))  # type: ignore[operator]


# ----------------------------------------------------------------- code run by loading files
_UNSAFE_LOAD = lazy_compile(
    r"\b(?:pickle|cPickle|_pickle|dill|cloudpickle|joblib)\.loads?\s*\("
    r"|\bread_pickle\s*\("
    r"|\ballow_pickle\s*=\s*True\b"
    r"|\btrust_remote_code\s*=\s*True\b"
    r"|\btrust_repo\s*=\s*True\b"
    r"|\bsafe_mode\s*=\s*False\b"
    r"|\bweights_only\s*=\s*False\b"
    r"|\byaml\.unsafe_load(?:_all)?\s*\(|\bLoader\s*=\s*(?:yaml\.)?(?:Unsafe)?Loader\b"
)
_REPO_PUBLIC = lazy_compile(r"\bupdate_repo_(?:settings|visibility)\s*\([^;]*\bprivate\s*=\s*False\b")
_SECRET_ENV_PRINTED = lazy_compile(
    r"\bprint\s*\(\s*os\.(?:environ(?:\.get\s*\(|\s*\[)|getenv\s*\()\s*[\"']\w*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)\w*[\"']"
)
_TORCH_LOAD = lazy_compile(r"\btorch\.load\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_PYTHON = lazy_compile(r"^(?:python|pypy)[0-9.]*$")


def unsafe_load_code(code: str) -> str:
    """The first way ``code`` runs whatever a loaded model or data file holds ("" for none)."""
    match = _UNSAFE_LOAD.search(code)
    if match is not None:
        return match.group().rstrip("( ")
    for call in _TORCH_LOAD.finditer(code):
        if not re.search(r"\bweights_only\s*=\s*True\b", call.group(1)):
            return "torch.load"
    return ""


def _python_loads(argv: list[str]) -> Iterator[Effect]:
    code = _value(argv, "-c") or ""
    if not code:
        yield from _remote_code_flags(argv)  # python -m vllm... --trust-remote-code
        return
    how = unsafe_load_code(code)
    if how:
        yield _fx(
            "source", f"python runs {how}, which executes whatever the loaded file holds", f"load:{how}"
        )
    if _REPO_PUBLIC.search(code):
        yield _fx("cloud-exposure", "python makes a Hugging Face repository public", "private=False")
    if _SECRET_ENV_PRINTED.search(code):
        yield _fx("cloud-identity", "python prints a secret from the environment", "os.environ")


def _remote_code_flags(argv: list[str]) -> Iterator[Effect]:
    joined = " ".join(argv)
    if "--trust-remote-code" in argv or re.search(r"\btrust_remote_code=True\b", joined):
        model = _value(argv, "--model", "--model_args") or " ".join(_words(argv)[1:2])
        yield _fx("source", f"{argv[0]} runs the model repository's own code", f"model:{model}")
    elif argv[0] == "papermill" and re.match(r"^https?://", " ".join(_words(argv)[:1])):
        yield _fx("source", "papermill executes a notebook fetched from a URL", _words(argv)[0])


def _is_python(program: str) -> bool:
    return bool(_PYTHON.match(program))


_REMOTE_CODE_PROGRAMS = frozenset(
    {"vllm", "lm_eval", "lm-eval", "papermill", "accelerate", "torchrun", "text-generation-launcher"}
)


def _remote_code(argv: list[str]) -> Iterator[Effect]:
    if _is_python(argv[0]):
        yield from _python_loads(argv)
    else:
        yield from _remote_code_flags(argv)


COMMAND_READERS: tuple[CommandReader, ...] = (
    (
        frozenset(
            {"bq", "snow", "snowsql", "clickhouse-client", "clickhouse", "trino", "presto", "presto-cli",
             "trino-cli", "duckdb", "aws"}
        ),
        _warehouse_sql,
    ),
    (frozenset(_DATA_TOOLS), _data_tools),
    (lambda program: program in _REMOTE_CODE_PROGRAMS or _is_python(program), _remote_code),
)  # fmt: skip
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them)."""


_OLLAMA_OPEN = lazy_compile(
    r"(?:^|[\s;&|(])(?:export\s+)?OLLAMA_HOST=[\"']?(?:https?://)?(?:0\.0\.0\.0|\*|\[?::\]?)(?::\d+)?[\"']?(?:\s|$)"
)


def data_line_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """Line-level: the Ollama server started with ``OLLAMA_HOST`` on every interface (its API has
    no authentication)."""
    if (
        "OLLAMA_HOST" in line
        and any(c[:2] == ["ollama", "serve"] for c in commands)
        and _OLLAMA_OPEN.search(line)
    ):
        yield _fx("cloud-exposure", "ollama serves its unauthenticated API on every interface", "OLLAMA_HOST")


def data_platform_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a base name)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]
