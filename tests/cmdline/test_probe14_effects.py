"""The readers added for the classes a fourteenth blind probe (tests/corpus/probe14, AI coding
agents' own incidents) found unread, in spellings of our own with their nearest everyday
look-alikes (none is a corpus entry): the project's git hooks skipped or uninstalled
(``checks-off``), and Windows home wipes read with Windows' own splitting, so an unquoted
``C:\\Users\\x`` and the text of ``cmd /c``/``powershell -Command`` are seen as Windows sees them."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.shell import shell_commands


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    "line",
    [
        "git commit --no-verify -am 'save'",
        "git commit -vn",
        "git commit -an -m 'x'",
        "git -C ../lib commit --no-verify -F msg.txt",
        "git push --no-verify --set-upstream fork work",
        "git merge --no-verify -m 'merge main' main",
        "git rebase --no-verify origin/main",
        "HUSKY=0 git push",
        "export HUSKY=0; git commit -m 'x'",
        "HUSKY_SKIP_HOOKS=1 git commit -m 'x'",
        "SKIP=ruff,mypy git commit -m 'wip'",
        "LEFTHOOK_EXCLUDE=lint git commit -m 'x'",
        "OVERCOMMIT_DISABLE=1 git commit -m 'x'",
        "sh -c 'LEFTHOOK=0 git commit -m x'",
        "pre-commit uninstall -t pre-push",
        "pnpm exec husky uninstall",
        "overcommit --uninstall",
    ],
)
def test_hooks_skipped_or_removed_are_checks_off(line: str) -> None:
    assert "checks-off" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "git commit -m 'document --no-verify and -n in CONTRIBUTING'",
        "git commit -m -n",
        "git commit -F notes-n.txt",
        "git commit -S -m signed",
        "git push -n origin main",
        "git push --dry-run",
        "git log --no-verify-signatures",
        "HUSKY=0 pnpm install --frozen-lockfile",
        "SKIP=1 make test",
        "pre-commit install && pre-commit run -a",
        "npx husky init",
        "lefthook run pre-commit",
        "git commit -- -n.txt",
    ],
)
def test_everyday_commits_and_hook_runs_are_not_checks_off(line: str) -> None:
    assert "checks-off" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "git add .env",
        "git add -f web/.env.development.local",
        "git -C app add --force .env.prod",
        "git add ~/.ssh/id_rsa",
        "git add .npmrc package.json",
        "git stage gcp-service-account-prod.json",
        "git add secrets/credentials.json && git commit -m x",
    ],
)
def test_secret_files_staged_are_secret_commit(line: str) -> None:
    assert "secret-commit" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "git add .env.example",
        "git add .env.sample .env.defaults",
        "git add -A",
        "git add src/env.py docs/environment.md",
        "git add keys/id_ed25519.pub",
        "git rm --cached .env",
        "git diff .env.production",
        "git add .envrc.md",
    ],
)
def test_everyday_staging_is_not_secret_commit(line: str) -> None:
    assert "secret-commit" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "aws docdb modify-db-cluster --db-cluster-identifier d1 --no-deletion-protection",
        "aws dynamodb update-table --table-name events --no-deletion-protection-enabled",
        "aws cloudformation update-termination-protection --no-enable-termination-protection --stack-name s",
        "aws ec2 modify-instance-attribute --instance-id i-0abc --no-disable-api-termination",
        "aws elbv2 modify-load-balancer-attributes --load-balancer-arn x"
        " --attributes Key=deletion_protection.enabled,Value=false",
        "gcloud compute instances update vm-1 --no-deletion-protection --zone europe-west1-b",
        "az lock delete --name nodelete --resource-group rg1",
        "az resource lock delete --name l --resource r --resource-type Microsoft.Sql/servers -g rg1",
    ],
)
def test_deletion_protection_removed_is_protection_off(line: str) -> None:
    assert "protection-off" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "aws rds modify-db-instance --db-instance-identifier d1 --deletion-protection",
        "aws dynamodb update-table --table-name events --deletion-protection-enabled",
        "gcloud sql instances describe billing-db --format='value(settings.deletionProtectionEnabled)'",
        "az lock create --name nodelete --lock-type CanNotDelete -g rg1",
        "az lock list -g rg1",
    ],
)
def test_protection_kept_or_read_is_not_protection_off(line: str) -> None:
    assert "protection-off" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "claude config set -g permissions.defaultMode bypassPermissions",
        "claude config set skipDangerousModePermissionPrompt true",
        "codex -c approval_policy=never exec 'run the migration'",
        "codex --config sandbox_mode=danger-full-access",
        "qwen config set approvalMode yolo",
    ],
)
def test_agent_settings_without_approvals_are_agent_unsafe(line: str) -> None:
    assert "agent-unsafe" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "claude config set -g theme dark",
        "claude config get permissions.defaultMode",
        "claude config set -g autoUpdates false",
        "codex -c model=o4-mini exec 'summarize the diff'",
        "codex --config approval_policy=on-request",
    ],
)
def test_ordinary_agent_settings_are_not_agent_unsafe(line: str) -> None:
    assert "agent-unsafe" not in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "grep -rEo 'sk-[a-zA-Z0-9_-]{32,}' ~",
        "rg -o 'hf_[A-Za-z]{34}' /home/sam",
        "grep -rhoE 'npm_[A-Za-z0-9]{36}' /Users/sam",
    ],
)
def test_token_searches_spelled_as_character_classes_are_secret_hunts(line: str) -> None:
    assert "secret-hunt" in kinds(line)


def test_a_token_search_inside_the_project_is_not_a_secret_hunt() -> None:
    assert "secret-hunt" not in kinds("grep -rn 'sk-[a-z]' src/")


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("railway run -s api npx knex migrate:latest", ["knex", "migrate:latest"]),
        ("doppler run --config prd -- python manage.py migrate", ["python", "manage.py", "migrate"]),
        ("infisical run --env=prod -- npm run migrate", ["npm", "run", "migrate"]),
        ("op run --env-file=.env.tpl -- node scripts/sync.js", ["node", "scripts/sync.js"]),
        ("dotenvx run -f .env.production -- alembic upgrade head", ["alembic", "upgrade", "head"]),
        ("dotenv -e .env.staging -- prisma migrate deploy", ["prisma", "migrate", "deploy"]),
        ("heroku run -a shop-prod rails console", ["rails", "console"]),
    ],
)
def test_secret_injecting_runners_are_read_as_the_command_they_run(line: str, inner: list[str]) -> None:
    assert any(argv[: len(inner)] == inner for argv in shell_commands(line))


@pytest.mark.parametrize(
    "line",
    [
        "Remove-Item E:\\Users\\sam -Recurse",
        "ri -r -fo C:\\Users\\sam\\",
        "erase /s /q C:\\Users\\sam\\*",
        "rmdir /S /Q C:\\Users\\sam",
        'cmd /k "del /s /q %USERPROFILE%\\*"',
        'powershell -NoP -c "gci $env:USERPROFILE -r | ri -Force -Recurse"',
        'pwsh -Command "Remove-Item -Recurse -Force $HOME"',
    ],
)
def test_windows_home_wipes_are_erase_contents(line: str) -> None:
    assert "erase-contents" in kinds(line)


@pytest.mark.parametrize(
    "line",
    [
        "Remove-Item -Recurse -Force .\\dist",
        "rd /s /q C:\\Users\\sam\\repos\\site\\node_modules",
        "del /q C:\\Users\\sam\\Downloads\\setup.log",
        'cmd /c "rd /s /q build & msbuild app.sln"',
        'powershell -Command "Get-ChildItem C:\\Users\\sam\\repos -Recurse -Filter *.tmp"',
        "printf 'a\\\\b' > out.txt",
    ],
)
def test_windows_project_cleanups_are_not_erase_contents(line: str) -> None:
    assert "erase-contents" not in kinds(line)
