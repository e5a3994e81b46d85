"""AWS resource policies read by effect: a statement granting every principal opens the resource to
anyone, whichever service's verb sets it; a KMS key policy changes who may decrypt (a self-review
batch found ECR, Secrets Manager and KMS policy verbs passing unread)."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> set[str]:
    return {act["kind"] for act in shell_acts(line)}


@pytest.mark.parametrize(
    "line",
    [
        "aws ecr set-repository-policy --repository-name web --policy-text "
        '\'{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "ecr:BatchGetImage"}]}\'',
        "aws secretsmanager put-resource-policy --secret-id api --resource-policy "
        '\'{"Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "secretsmanager:*"}]}\'',
        "aws sns set-topic-attributes --topic-arn arn:aws:sns:eu-west-1:1:t --attribute-name Policy "
        '--attribute-value \'{"Statement": [{"Principal": {"AWS": ["*"]}, "Effect": "Allow"}]}\'',
        "aws glacier set-vault-access-policy --vault-name logs --policy "
        '\'{"Policy": "{\\"Statement\\": [{\\"Principal\\": \\"*\\"}]}"}\'',
    ],
)
def test_a_resource_policy_for_every_principal_is_exposure(line: str) -> None:
    assert "cloud-exposure" in kinds(line), shell_acts(line)


def test_a_key_policy_changes_who_may_decrypt() -> None:
    assert "cloud-identity" in kinds("aws kms put-key-policy --key-id alias/app --policy file://kp.json")


@pytest.mark.parametrize(
    "line",
    [
        "aws ecr set-repository-policy --repository-name web --policy-text "
        '\'{"Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"}}]}\'',
        "aws ecr get-repository-policy --repository-name web",
        "aws sqs set-queue-attributes --queue-url q --attributes VisibilityTimeout=60",
        "aws kms describe-key --key-id alias/app",
        "aws logs put-retention-policy --log-group-name app --retention-in-days 30",
    ],
)
def test_policies_for_named_accounts_and_reads_are_not_exposure(line: str) -> None:
    assert not kinds(line) & {"cloud-exposure", "cloud-identity"}, shell_acts(line)
