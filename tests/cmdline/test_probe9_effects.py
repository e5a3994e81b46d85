"""The readers added for the classes a ninth blind probe (tests/corpus/probe9) found unread, each in
spellings of our own with its nearest everyday look-alike (none is a corpus entry): hosted
databases, repositories and snapshots destroyed through their platforms' CLIs, backups and bucket
versions given up, AI-platform logging narrowed, API keys minted, the machine enrolled into a
remote controller, security agents removed by the package manager, archivers deleting what they
packed, miners spelled with wallet options, accelerator and fan-out spend beyond EC2, destructive
verbs whose operands another command lists, and tunnel clients' bookkeeping told apart from a
running tunnel."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import KINDS, shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("pscale branch delete acme-db dev-2 --force", "erase-contents"),
        ("turso group destroy default --yes", "erase-contents"),
        ("neonctl projects delete proj-7781", "erase-contents"),
        ("tea repo delete --owner infra --repo terraform-live", "erase-contents"),
        ("govc datastore.rm -ds datastore1 vm-backups", "erase-contents"),
        ("snapper -c home delete 10-40", "erase-contents"),
        (
            "aws s3api put-bucket-versioning --bucket audit-logs"
            " --versioning-configuration MFADelete=Disabled,Status=Suspended",
            "erase-contents",
        ),
        (
            "az backup protection disable -c sql-01 -i sql-01 -g rg -v vault --delete-backup-data yes",
            "erase-contents",
        ),
        (
            "aws bedrock put-model-invocation-logging-configuration"
            ' --logging-config \'{"s3Config":{"bucketName":"b"},"textDataDeliveryEnabled": false}\'',
            "log-off",
        ),
        ("gcloud logging settings update --folder=42 --disable-default-sink", "log-off"),
        ("gcloud services api-keys get-key-string projects/7/locations/global/keys/k1", "cloud-identity"),
        ("docker swarm join --token SWMTKN-1-abc 203.0.113.5:2377", "remote-exec"),
        ("./config.cmd --url https://github.com/acme/app --token AAB123 --unattended", "remote-exec"),
        (
            "gitlab-runner register --non-interactive --url https://gitlab.example.com --token glrt-x",
            "remote-exec",
        ),
        ("k3s agent --server https://203.0.113.9:6443 --token K10abc", "remote-exec"),
        ("sudo dnf remove -y sentinelone-agent", "defense-off"),
        ("brew uninstall --cask santa", "defense-off"),
        ("sudo zypper rm -y auditd", "defense-off"),
        ("apk del --purge falco", "defense-off"),
        ("sudo profiles remove -all", "defense-off"),
        ("7za a -sdel logs.7z ./logs", "erase-contents"),
        ("zip -m -P hunter2 ../notes.zip *.docx", "encrypt-destroy"),
        ("tar czf old.tgz --remove-files reports/", "erase-contents"),
        ("./nanominer --wallet-address ZEPHs1abc --daemon-rpc-address 198.51.100.7:17767", "miner"),
        (
            "aws sagemaker create-notebook-instance --notebook-instance-name nb"
            " --instance-type ml.g5.12xlarge",
            "cloud-spend",
        ),
        (
            "aws batch submit-job --job-name j --job-queue q --job-definition d --array-properties size=1000",
            "cloud-spend",
        ),
        (
            "aws service-quotas request-service-quota-increase --service-code ec2"
            " --quota-code L-1216C47A --desired-value 512",
            "cloud-spend",
        ),
        ("git branch -r | sed 's#origin/##' | xargs -I{} git push origin :{}", "erase-contents"),
        ("git push upstream -d $(git tag --list 'v0.*')", "erase-contents"),
        ("git ls-files '*.md' | xargs truncate --size 0", "erase-contents"),
        ("killall /var/tmp/*", "outage"),
        ("cloudflared tunnel run preview", "tunnel"),
        ("devtunnel host -p 5432", "tunnel"),
        ("gs-netcat -s MySecret -l", "tunnel"),
        ("twine upload --skip-existing dist/*", "publish"),
        ("bw list items --session $BW_SESSION > vault.json", "keychain"),
        ("ovsx publish acme-theme-1.2.0.vsix -p $OVSX_PAT", "publish"),
        ("pnpm -r publish --no-git-checks", "publish"),
        ("for f in /proc/*/environ; do strings $f; done | grep -i key", "memory-access"),
        ("for m in /proc/[1-9]*/maps; do head -1 $m; done", "memory-access"),
        (
            'osascript -e \'tell application "Finder" to copy (every file of folder "Documents" of home)'
            ' to folder POSIX file "/private/tmp/x"\'',
            "secret-hunt",
        ),
    ],
)
def test_new_spellings_have_their_effect(line: str, kind: str) -> None:
    assert kind in KINDS
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "pscale branch list acme-db",
        "turso db shell acme-dev",
        "neonctl branches list --project-id p-1",
        "govc vm.info web-01",
        "snapper -c root list",
        "aws s3api put-bucket-versioning --bucket b --versioning-configuration Status=Enabled",
        "az backup protection disable -c c -i i -g rg -v vault --yes",
        "aws bedrock put-model-invocation-logging-configuration"
        ' --logging-config \'{"textDataDeliveryEnabled":true,"s3Config":{"bucketName":"b"}}\'',
        "aws bedrock get-model-invocation-logging-configuration",
        "gcloud services api-keys list",
        "docker swarm init --advertise-addr 10.0.0.2",
        "gitlab-runner status",
        "sudo apt-get remove -y nginx",
        "brew uninstall --cask firefox",
        "7z a release.7z dist/",
        "zip -r site.zip public/",
        "aws sagemaker create-notebook-instance --notebook-instance-name nb --instance-type ml.t3.medium",
        "aws batch submit-job --job-name j --job-queue q --job-definition d --array-properties size=4",
        "git push origin --delete feature/login",
        "git push origin :refs/heads/old-branch",
        "truncate -s 0 app.log",
        "killall node",
        "cloudflared tunnel route dns preview preview.example.com",
        "cloudflared tunnel create preview",
        "ngrok config add-authtoken 2abcDEF",
        "devtunnel user login -g",
        "cargo publish --dry-run",
        "npm publish --registry http://localhost:4873/",
        "vsce package --no-dependencies",
        "npm pack",
        "bw list items --search gitlab --session $BW_SESSION",
        "for f in /proc/cpuinfo /proc/meminfo; do head -3 $f; done",
        'osascript -e \'tell application "Finder" to open folder "Documents" of home\'',
    ],
)
def test_look_alikes_have_none(line: str) -> None:
    found = kinds(line) & {
        "erase-contents",
        "encrypt-destroy",
        "log-off",
        "cloud-identity",
        "remote-exec",
        "defense-off",
        "miner",
        "cloud-spend",
        "outage",
        "tunnel",
        "memory-access",
        "secret-hunt",
        "publish",
        "keychain",
    }
    assert not found, (line, shell_acts(line))
