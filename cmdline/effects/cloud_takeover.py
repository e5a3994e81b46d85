"""Cloud control-plane steps of the offensive toolkits (Pacu's modules, CloudGoat's scenarios,
ROADtools; found by the blind probe tests/corpus/probe7, read as classes):

- ``cloud-identity``: a password reset on someone else's identity or a managed resource (a
  database's master user, a VM's admin, a directory user, a Cloud SQL user), key material or
  secrets printed by the control plane (Lightsail's default key pair, an instance's user data,
  Beanstalk option settings), SSH keys pushed through instance or project
  metadata and OS Login turned off, and identity-attack toolkits run (pacu modules, roadrecon,
  roadtx device and token work); access keys listed by the control plane are read by
  ``stored_credentials``;
- ``remote-exec``: shell documents bound to a fleet by an SSM association, a command run inside a
  container task (ECS ``run-task`` with a command override, ``execute-command``);
- ``publish``: an outside address subscribed to a notification topic (every message is copied
  to it);
- ``erase-contents``: a lifecycle rule expiring every object of a bucket within a day (the
  data-bucket form of cloud_more's log-bucket rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "cloud_takeover_acts"]

_SHELL_DOCUMENTS = lazy_compile(r"(?i)^AWS-Run(?:Shell|PowerShell)Script$|^AWS-RunRemoteScript$")
_QUICK_EXPIRY = lazy_compile(r'"Expiration"\s*:\s*\{\s*"Days"\s*:\s*[01]\b')


def _aws(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    service, op = [*words, "", ""][:2]
    if (
        service == "rds"
        and op.startswith("modify-db-")
        and _value(argv, "--master-user-password") is not None
    ):
        yield _fx(
            "cloud-identity",
            "resets a database's master password",
            _value(argv, "--db-instance-identifier", "--db-cluster-identifier") or "",
        )
    elif (service, op) in (("cognito-idp", "admin-set-user-password"), ("ds", "reset-user-password")):
        yield _fx("cloud-identity", f"resets a user's password ({service} {op})", "")
    elif (service, op) == ("lightsail", "download-default-key-pair"):
        yield _fx("cloud-identity", "prints Lightsail's default private key", "")
    elif (service, op) == ("ec2", "describe-instance-attribute") and (
        _value(argv, "--attribute") or ""
    ) == "userData":
        yield _fx("cloud-identity", "prints an instance's user data (boot scripts hold secrets)", "")
    elif (service, op) == ("elasticbeanstalk", "describe-configuration-settings"):
        yield _fx("cloud-identity", "prints an environment's option settings (its secrets)", "")
    elif (
        service == "ssm"
        and op in ("create-association", "update-association")
        and _SHELL_DOCUMENTS.match(_value(argv, "--name", "--document-name") or "")
    ):
        yield _fx(
            "remote-exec", "binds a shell document to a fleet of instances", _value(argv, "--targets") or ""
        )
    elif service == "ecs" and (
        op == "execute-command" or (op == "run-task" and '"command"' in (_value(argv, "--overrides") or ""))
    ):
        yield _fx(
            "remote-exec",
            f"runs a command inside a container task (ecs {op})",
            _value(argv, "--cluster") or "",
        )
    elif (service, op) == ("sns", "subscribe") and (_value(argv, "--protocol") or "") in (
        "email",
        "email-json",
        "http",
        "https",
        "sms",
    ):
        yield _fx(
            "publish",
            "copies a topic's messages to an outside address",
            _value(argv, "--notification-endpoint") or "",
        )
    elif (
        service == "s3api"
        and op in ("put-bucket-lifecycle-configuration", "put-bucket-lifecycle")
        and _QUICK_EXPIRY.search(_value(argv, "--lifecycle-configuration") or "")
    ):
        yield _fx(
            "erase-contents", "expires every object of a bucket within a day", _value(argv, "--bucket") or ""
        )


def _az(argv: list[str]) -> Iterator[Effect]:
    words = " ".join(_words(argv)[:6])
    if words.startswith("vm user update") and (
        _value(argv, "-p", "--password") is not None or _value(argv, "--ssh-key-value") is not None
    ):
        yield _fx(
            "cloud-identity",
            "resets a virtual machine's administrator",
            _value(argv, "-u", "--username") or "",
        )
    elif words.startswith("ad user update") and _value(argv, "--password") is not None:
        yield _fx("cloud-identity", "resets a directory user's password", _value(argv, "--id") or "")


def _gcloud(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    joined = " ".join(words[:3])
    if joined.startswith("sql users set-password"):
        yield _fx("cloud-identity", "resets a Cloud SQL user's password", " ".join(words[3:4]))
    elif re.match(r"compute (?:instances|project-info) add-metadata", joined):
        metadata = " ".join(filter(None, (_value(argv, "--metadata"), _value(argv, "--metadata-from-file"))))
        if re.search(r"(?i)ssh-keys|sshKeys|enable-oslogin=false|block-project-ssh-keys=false", metadata):
            yield _fx(
                "cloud-identity", "pushes SSH keys or turns off OS Login through metadata", metadata[:80]
            )


_TOOLKITS = lazy_compile(r"^(?:pacu|roadrecon|roadtx|aadinternals|graphrunner|teamfiltration|trevorspray)$")


def _toolkit(argv: list[str]) -> Iterator[Effect]:
    rest = argv[1:]
    if rest and not any(a in ("-h", "--help", "--version") for a in rest):
        yield _fx("cloud-identity", f"runs an identity-attack toolkit ({argv[0]})", " ".join(rest[:3]))


def cloud_takeover_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    tool = argv[0]
    if tool == "aws":
        return list(_aws(argv))
    if tool == "az":
        return list(_az(argv))
    if tool == "gcloud":
        return list(_gcloud(argv))
    if _TOOLKITS.match(tool):
        return list(_toolkit(argv))
    return []


COMMAND_READERS: tuple[CommandReader, ...] = (
    (
        lambda program: program in ("aws", "az", "gcloud") or _TOOLKITS.match(program) is not None,
        cloud_takeover_acts,
    ),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
