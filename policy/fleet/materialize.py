"""The last good bundle on disk, laid out so the gateway's ordinary reload path can follow it.

``STATE/revisions/NNNNNNNNNN/`` holds one accepted bundle's packs (written in a scratch folder,
compiled there, then renamed into place: never half-written, never changed afterwards).
``STATE/deployment.yaml`` is a deployment file naming the packs of the revision in force; it is
replaced in one ``rename``. A gateway served with ``--config STATE/deployment.yaml`` watches it
(:class:`~dsh_policy.policy.runtime.reload.ReloadingPolicy`): the rename makes it read the new
revision's packs, which were complete before the rename, so it never compiles a mixture; the
deployment's weakening check, audit records and compile-off-the-decision-path all apply as for
an edit. ``STATE/active.json`` says which revision that is, for the next start and for status.
With the bus down the gateway simply keeps deciding with these files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.fleet.bundle import Bundle, Refusal
from dsh_policy.policy.loading import LoadFailure, build_policy

DEPLOYMENT = "deployment.yaml"
ACTIVE = "active.json"


@dataclass(frozen=True, slots=True)
class Active:
    """The revision in force on this host (from ``active.json``)."""

    revision: int
    policy_digest: str
    key_id: str | None


@dataclass(frozen=True, slots=True)
class AuditSection:
    """What the materialized deployment file says about the local audit log (from ``serve``)."""

    path: str
    checkpoint_key: str | None = None
    fsync: str = "batch"
    fail_closed: bool = True


def read_active(state: Path) -> Active | None:
    try:
        document = json.loads((state / ACTIVE).read_text(encoding="utf-8"))
        return Active(int(document["revision"]), str(document["policy_digest"]), document.get("key_id"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def revision_folder(state: Path, revision: int) -> Path:
    return state / "revisions" / f"{revision:010d}"


def install(state: Path, bundle: Bundle, audit: AuditSection | None) -> Active | Refusal:
    """Compile ``bundle`` in a scratch folder; only if it compiles to its stated digest, put it
    in place and point the deployment file at it. A refusal leaves the state as it was."""
    revisions = state / "revisions"
    revisions.mkdir(parents=True, exist_ok=True)
    final = revision_folder(state, bundle.revision)
    scratch = Path(tempfile.mkdtemp(prefix=".incoming-", dir=revisions))
    try:
        paths = []
        for name, text in bundle.packs:
            (scratch / name).write_text(text, encoding="utf-8")
            paths.append(str(final / name))
        (scratch / "bundle.json").write_bytes(bundle.to_bytes())
        built = build_policy(
            [scratch / name for name, _ in bundle.packs], params=bundle.params, engine=bundle.engine
        )
        if isinstance(built, LoadFailure):
            errors = "; ".join(str(error) for error in built.errors[:5])
            return Refusal(
                "DOES_NOT_COMPILE", f"the bundle's packs do not compile: {errors}", bundle.revision
            )
        if built.digest != bundle.policy_digest:
            return Refusal(
                "DIGEST_MISMATCH",
                f"the packs compile to {built.digest}, the bundle states {bundle.policy_digest}",
                bundle.revision,
            )
        if final.exists():  # an earlier attempt at this revision that never became active
            shutil.rmtree(final)
        os.rename(scratch, final)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    _write_atomically(state / DEPLOYMENT, deployment_text(bundle, paths, audit).encode())
    signer = bundle.signature["key_id"] if bundle.signature else None
    active = Active(bundle.revision, bundle.policy_digest, signer)
    _write_atomically(
        state / ACTIVE,
        json.dumps(
            {"revision": active.revision, "policy_digest": active.policy_digest, "key_id": signer}
        ).encode(),
    )
    _prune(state, keep=bundle.revision)
    return active


def deployment_text(bundle: Bundle, packs: list[str], audit: AuditSection | None) -> str:
    """The deployment file (JSON, which every YAML reader reads) for ``bundle``'s packs."""
    spec: dict[str, Any] = {
        "packs": packs,
        "params": dict(bundle.params),
        "engine": bundle.engine,
        "reload": {"refuse_weakening": bundle.refuse_weakening},
    }
    if audit is not None:
        section: dict[str, Any] = {"path": audit.path, "fsync": audit.fsync, "fail_closed": audit.fail_closed}
        if audit.checkpoint_key:
            section["checkpoint_key"] = audit.checkpoint_key
        spec["audit"] = section
    document = {
        "apiVersion": "dsh-policy/v1",
        "kind": "Gateway",
        "metadata": {"name": f"fleet-revision-{bundle.revision}"},
        "spec": spec,
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _prune(state: Path, keep: int, kept: int = 3) -> None:
    """Keep the revision in force and the two before it (a reload may still be reading one)."""
    folders = sorted(p for p in (state / "revisions").iterdir() if p.is_dir() and p.name.isdigit())
    for folder in folders[:-kept]:
        if int(folder.name) != keep:
            with contextlib.suppress(OSError):
                shutil.rmtree(folder)
