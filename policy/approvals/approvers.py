"""Who may approve what: the deployment's approvers file.

```yaml
apiVersion: dsh-policy/v1
kind: Approvers
quorum: 1                      # distinct approvals a request needs (2: four eyes)
approvers:
  - name: alice
    public_key: keys/alice.pub # written by `dsh-policy keygen --approver alice`
    rules: ["*"]               # rule ids (fnmatch patterns) alice may approve and grant
  - name: bob
    public_key: keys/bob.pub
    rules: ["baseline/network-*"]
```

The file holds only public keys: it says whose signature counts, and the private halves stay
with the people. It is read when the queue is consulted, so an edit takes effect on the next call;
it belongs where the agent cannot write (the deployment protects it from the agent's tools).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from dsh_policy.audit.keys import KeyFileError, key_id, load_public_key
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.source.yaml_source import read_yaml_file
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class _ApproverEntry(_Model):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.@-]+$")
    public_key: str = Field(min_length=1)
    rules: tuple[str, ...] = Field(min_length=1)


class _ApproversDocument(_Model):
    api_version: Literal["dsh-policy/v1"] = Field(alias="apiVersion")
    kind: Literal["Approvers"]
    quorum: int = Field(default=1, ge=1, le=9)
    approvers: tuple[_ApproverEntry, ...] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Approver:
    """One person's verification key and the rules they may approve."""

    name: str
    public_key: Ed25519PublicKey
    key_id: str
    rules: tuple[str, ...]

    def may_approve(self, rules: Iterable[str]) -> bool:
        """Whether every one of ``rules`` matches one of this approver's patterns (a request
        asked by two rules needs an approver for both)."""
        wanted = tuple(rules)
        return bool(wanted) and all(
            any(fnmatch.fnmatchcase(rule, pattern) for pattern in self.rules) for rule in wanted
        )


@dataclass(frozen=True, slots=True)
class Approvers:
    """The approvers file as loaded: people by name, and how many must agree."""

    path: str
    quorum: int
    people: Mapping[str, Approver]

    def get(self, name: str) -> Approver | None:
        """The approver called ``name``, if listed."""
        return self.people.get(name)


def load_approvers(path: str | Path) -> Approvers | list[PolicyError]:
    """Read and validate an approvers file; errors name the file, line and field."""
    file = str(path)
    document = read_yaml_file(path)
    if isinstance(document, list):
        return document
    try:
        model = _ApproversDocument.model_validate(document.value)
    except ValidationError as error:
        problems: list[PolicyError] = []
        for issue in error.errors():
            where = tuple(issue["loc"])
            line, col = document.source.key_position(where) if where else (1, 1)
            field = ".".join(str(part) for part in where) or "(document)"
            problems.append(PolicyError(file, line, col, f"{field}: {issue['msg']}"))
        return problems
    base = Path(file).parent
    people: dict[str, Approver] = {}
    errors: list[PolicyError] = []
    for index, entry in enumerate(model.approvers):
        line, col = document.source.key_position(("approvers", index, "public_key"))
        if entry.name in people:
            errors.append(
                PolicyError(file, line, col, f"approvers.{index}.name: {entry.name!r} listed twice")
            )
            continue
        key_path = Path(entry.public_key).expanduser()
        try:
            public = load_public_key(key_path if key_path.is_absolute() else base / key_path)
        except KeyFileError as error:
            errors.append(PolicyError(file, line, col, f"approvers.{index}.public_key: {error}"))
            continue
        people[entry.name] = Approver(entry.name, public, key_id(public), entry.rules)
    if errors:
        return errors
    if model.quorum > len(people):
        line, col = document.source.key_position(("quorum",))
        return [
            PolicyError(file, line, col, f"quorum: {model.quorum} approvers needed, {len(people)} listed")
        ]
    return Approvers(file, model.quorum, people)
