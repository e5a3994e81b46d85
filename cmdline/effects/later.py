"""Files that make something run later: what a write to a path would schedule, and what in the
written text makes that dangerous.

A guard that knows only shell spellings misses the same persistence written with a file tool
(``write_file .github/workflows/x.yml``), and a guard that asks for every such file drowns the
user in approvals for ordinary CI edits. So the reader answers two questions, both lexical:

- :func:`later_class`: which *kind* of file runs later (``shell-rc``, ``git-hook``, ``ci-workflow``,
  ...), or ``""``. The class, not the spelling of the writer, is what the rules judge.
- :func:`later_risks`: for a class whose files are also edited every day (CI, package manifests,
  editor settings, direnv, package-manager config), which *signals* in the new text turn an
  ordinary edit into a technique: a download run by a shell, data sent out, a lifecycle script
  that runs on install, a registry or TLS switch, a task run on folder open.

The tables are the module's data; a class is named after what runs the file, so a new file of a
known runner is one line here and no rule changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from dsh_policy.cmdline.effects.agent_configs import only_reference_servers, unknown_remote_servers
from dsh_policy.cmdline.effects.build_tools import (
    BUILD_FILES,
    GO_SOURCE,
    TOOL_CONFIGS,
    config_code,
    env_loads_code,
    generate_lines,
    loads_local_code,
)
from dsh_policy.cmdline.effects.compromised_actions import compromised_action_refs
from dsh_policy.cmdline.effects.git_rewrites import config_rewrites
from dsh_policy.cmdline.effects.infra_files import INFRA_SIGNAL_NAMES, infra_signals
from dsh_policy.cmdline.effects.instructions import instructs_exfil, instructs_unattended, instructs_wipe
from dsh_policy.cmdline.effects.packages import manifest_hits
from dsh_policy.cmdline.effects.sources import dependency_file_index_swap
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["ALWAYS", "later_class", "later_risks"]

# a loop variable standing for each home (``for d in /home/*; do ... >> $d/.ssh/authorized_keys``)
# names a home as well as $HOME or ${HOME} does
_HOME = r"(?:~[A-Za-z0-9._-]*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|/+root|/+home/+[^/]+|/+Users/+[^/]+)"

_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    # case-insensitive: macOS and Windows resolve .Cursor/MCP.json to .cursor/mcp.json (the
    # Cursor path-case CVE of 2025), and a class must not depend on the spelling's case
    (name, lazy_compile(pattern, re.IGNORECASE))
    for name, pattern in (
        # run by a login or interactive shell, the desktop session or the user's service manager
        (
            "shell-rc",
            _HOME + r"/+\.(?:bashrc|bash_aliases|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile"
            r"|zshenv|zlogin|zlogout"
            r"|kshrc|cshrc|tcshrc|login|xprofile|xinitrc|xsession|xsessionrc|inputrc)$"
            r"|" + _HOME + r"/+\.config/+(?:fish/+(?:config\.fish|conf\.d/)|environment\.d/)"
            r"|^/+etc/+(?:profile|profile\.d/|bash\.bashrc|bashrc|zsh/|zshrc|zprofile|environment$|csh\.)",
        ),
        (
            "autostart",
            _HOME
            + r"/+\.config/+autostart/|^/+etc/+xdg/+autostart/|"
            + _HOME
            + r"/+\.(?:config/+)?(?:kde|plasma-workspace)/+(?:Autostart|env|shutdown)/",
        ),
        ("systemd", _HOME + r"/+\.(?:config|local/+share)/+systemd/|^/+(?:etc|usr/+lib|lib|run)/+systemd/"),
        ("cron", r"^/+etc/+(?:cron[^/]*|anacrontab)(?:/|$)|^/+var/+spool/+(?:cron|at)(?:/|$)"),
        (
            "system-init",
            r"^/+etc/+(?:init\.d|init|rc\.local|rc[0-9S]\.d|update-motd\.d|udev/+rules\.d"
            r"|ld\.so\.preload|ld\.so\.conf(?:\.d)?|modules-load\.d|modprobe\.d)(?:/|$)",
        ),
        (
            "launchd",
            r"(?:^|/)Library/+(?:LaunchAgents|LaunchDaemons|StartupItems)/|^/+private/+var/+at/"
            r"|^/+etc/+(?:periodic|launchd\.conf)"
            r"|(?:^|/)Library/+Preferences/+com\.apple\.loginwindow\.plist$|(?:^"
            r"|/)Library/+Application Support/+com\.apple\.backgroundtaskmanagementagent/",
        ),
        (
            "ssh-trust",
            _HOME + r"/+\.ssh/+(?:authorized_keys2?|rc|environment|config)$|^/+etc/+ssh/+(?:sshd_config"
            r"|ssh_config|sshrc)(?:\.d/.*)?$|^/+etc/+(?:sudoers(?:\.d/.*)?|doas\.conf)$",
        ),
        ("git-hook", r"(?:^|/)\.git/+hooks/"),
        (
            "project-hook",
            r"(?:^|/)\.(?:husky|githooks)/+[^/_][^/]*$|(?:^|/)lefthook(?:-local)?\.ya?ml$|(?:^"
            r"|/)\.pre-commit-config\.ya?ml$"
            # the executables the project's own scripts resolve first (`npm test` runs
            # node_modules/.bin/jest, `make` runs .venv/bin/pytest): a script written there runs later
            r"|(?:^|/)node_modules/+\.bin/+[^/]+$|(?:^|/)\.?venv/+(?:bin|Scripts)/+[^/]+$"
            # the package manager a project pins (yarnPath) and its plugins: run by every yarn command
            r"|(?:^|/)\.yarn/+(?:releases|plugins)/+",
        ),
        (
            "git-config",
            r"(?:^|/)\.git/+config$|"
            + _HOME
            + r"/+\.gitconfig$|"
            + _HOME
            + r"/+\.config/+git/+config$|^/+etc/+gitconfig$|(?:^|/)\.gitattributes$|(?:^|/)\.gitmodules$",
        ),
        # a .pth file runs only from a site directory (or one computed at run time, as in
        # "$(python3 -m site --user-site)/x.pth"); elsewhere .pth is also PyTorch's weights file
        (
            "python-startup",
            r"(?:site-?packages|dist-packages|/lib/+python[0-9.]*/|\$\(|\$\{|`)[^\n]*\.pth$"
            r"|(?:^|/)(?:sitecustomize|usercustomize)\.py$|" + _HOME + r"/+\.pythonrc(?:\.py)?$",
        ),
        (
            "ci-workflow",
            r"(?:^|/)\.github/+(?:workflows|actions)/.*\.ya?ml$|(?:^|/)action\.ya?ml$|(?:^"
            r"|/)\.gitlab-ci\.ya?ml$|(?:^|/)\.gitlab/+ci/"
            r"|(?:^|/)\.circleci/+config\.ya?ml$|(?:^|/)azure-pipelines\.ya?ml$|(?:^|/)Jenkinsfile$|(?:^"
            r"|/)\.buildkite/"
            r"|(?:^|/)\.travis\.ya?ml$|(?:^|/)bitbucket-pipelines\.ya?ml$|(?:^|/)\.drone\.ya?ml$|(?:^"
            r"|/)\.woodpecker(?:/|\.ya?ml$)|(?:^|/)cloudbuild\.ya?ml$"
            r"|(?:^|/)buildspec[\w.-]*\.ya?ml$|(?:^|/)\.?appveyor\.ya?ml$|(?:^|/)\.tekton/|(?:^|/)codemagic\.ya?ml$"
            r"|(?:^|/)\.semaphore/+[^/]+\.ya?ml$|(?:^|/)\.harness/|(?:^|/)bitrise\.ya?ml$",
        ),
        (
            "editor-task",
            r"(?:^|/)\.vscode/+(?:tasks|launch)\.json$|(?:^|/)\.idea/+(?:workspace|tasks)\.xml$|(?:^"
            r"|/)\.idea/+runConfigurations/|(?:^|/)\.devcontainer(?:/|\.json$)",
        ),
        (
            "editor-settings",
            r"(?:^|/)\.vscode/+settings\.json$|(?:^|/)\.code-workspace$|\.code-workspace$|(?:^"
            r"|/)Code/+User/+settings\.json$|(?:^|/)\.(?:vimrc|exrc|nvimrc)$|(?:^"
            r"|/)\.config/+nvim/+init\.(?:vim|lua)$|(?:^|/)\.emacs(?:\.d/+init\.el)?$",
        ),
        (
            "agent-config",
            r"(?:^|/)\.mcp\.json$|(?:^|/)\.(?:cursor|vscode|gemini|roo|kiro|windsurf|codeium"
            r"|amazonq)/+(?:mcp|settings|cli(?:-config)?)\.json$|claude_desktop_config\.json$"
            r"|(?:^|/)\.claude(?:\.json$|/+(?:settings(?:\.local)?\.json|hooks/|commands/|agents/))|(?:^"
            r"|/)\.codex[\w.-]*/+(?:config\.toml|hooks\.json)$|(?:^|/)\.continue/+config\.(?:json|ya?ml)$"
            r"|(?:^|/)\.aider\.conf\.ya?ml$|(?:^|/)cline_mcp_settings\.json$|(?:^|/)mcp_config\.json$"
            r"|(?:^|/)\.kiro/+settings/+mcp\.json$|(?:^|/)\.aws/+amazonq/+(?:mcp|agents/+[^/]+)\.json$"
            # Amp's settings: the project's .agents/settings.json and the user's (its allow-list,
            # permissions and MCP servers)
            r"|(?:^|/)\.agents/+settings\.json$|(?:^|/)\.config/+amp/+settings\.json$",
        ),
        # instructions an AI agent loads into its context at every session (rules files, memory
        # files, copilot instructions): written text the agent obeys later
        (
            "agent-instructions",
            r"(?:^|/)\.cursor/+rules/|(?:^|/)\.(?:cursorrules|windsurfrules|clinerules)(?:/|$)"
            r"|(?:^|/)\.github/+(?:copilot-instructions\.md$|instructions/|prompts/)"
            r"|(?:^|/)(?:AGENTS|CLAUDE|GEMINI|CONVENTIONS)(?:\.local)?\.md$|(?:^|/)\.(?:roo|kiro|continue|amazonq|windsurf)/+(?:rules|steering)[^/]*/"
            r"|(?:^|/)\.junie/+guidelines\.md$|(?:^|/)\.aiassistant/+rules/"
            # an agent's memory store, as the tool views name a memory tool's write (tool_views.AGENT_MEMORY)
            r"|^agent-memory\.md$",
        ),
        (
            "package-manifest",
            r"(?:^|/)package\.json$|(?:^|/)setup\.py$|(?:^|/)composer\.json$|(?:^|/)build\.rs$|(?:^"
            r"|/)[^/]+\.gemspec$|(?:^|/)Rakefile$|(?:^|/)binding\.gyp$",
        ),
        (
            "package-config",
            r"(?:^|/)\.(?:npmrc|yarnrc(?:\.yml)?|pnpmrc|bunfig\.toml|pypirc|condarc|gemrc|netrc)$|(?:^"
            r"|/)bunfig\.toml$|(?:^|/)pip\.(?:conf|ini)$|(?:^|/)uv\.toml$|(?:^|/)\.cargo/+config(?:\.toml)?$"
            r"|(?:^|/)\.bundle/+config$|(?:^|/)\.m2/+settings\.xml$|(?:^"
            r"|/)\.gradle/+(?:gradle\.properties|init\.d/)|(?:^|/)\.config/+go/+env$|(?:^|/)go\.work$"
            r"|(?:^|/)\.mvn/+(?:jvm|maven)\.config$|(?:^|/)gradle\.properties$"
            r"|(?:^|/)\.docker/+config\.json$|(?:^|/)nuget\.config$"
            # the wrapper scripts download the build tool itself from this URL at the next build
            r"|(?:^|/)(?:gradle|maven)-wrapper\.properties$",
        ),
        ("direnv", r"(?:^|/)\.envrc$|(?:^|/)\.env\.sh$|(?:^|/)\.config/+direnv/"),
        # loaded by a test runner on its next run without being named (pytest's conftest.py, jest,
        # vitest, playwright and cypress setup and config files, mocha's rc)
        (
            "test-hook",
            r"(?:^|/)conftest\.py$|(?:^|/)(?:jest|vitest|playwright|cypress)\.(?:setup|config|global-?setup)"
            r"[\w.-]*\.[cm]?[jt]s$|(?:^|/)setupTests\.[jt]sx?$|(?:^|/)\.mocharc\.(?:c?js|json|ya?ml)$",
        ),
        # run by the project's own task runner on the next build or test (make, just, task, tox,
        # nox, mise; Xcode's run-script build phases and scheme pre/post actions): an edit is judged
        # by what its recipes fetch, run and send
        (
            "build-file",
            r"(?:^|/)(?:GNU)?[Mm]akefile$|\.mk$|(?:^|/)\.?[Jj]ustfile$|(?:^|/)Taskfile(?:\.dist)?\.ya?ml$"
            r"|(?:^|/)tox\.ini$|(?:^|/)noxfile\.py$|(?:^|/)\.?mise(?:\.[\w-]+)?\.toml$|(?:^|/)\.mise/+config\.toml$"
            r"|\.xcodeproj/+project\.pbxproj$|\.xcscheme$|" + BUILD_FILES,
        ),
        # loaded by a linter, formatter, bundler, docs builder or release tool at its next run
        # (cmdline.effects.build_tools): code itself, or settings naming code to run
        ("tool-config", TOOL_CONFIGS),
        # run by the image build (docker build, podman, buildah, kaniko): official installers pipe
        # an https download into a shell, so only a download without transport integrity is judged
        ("container-build", r"(?:^|/)(?:Docker|Container)file(?:\.[\w.-]+)?$|\.(?:docker|container)file$"),
        # what an install step installs later: a pinned dependency is code the next install runs
        (
            "dependency-list",
            r"(?:^|/)(?:requirements[\w.-]*\.(?:txt|in|lock)|constraints\.txt|pyproject\.toml|Gemfile|Cargo\.toml"
            r"|go\.mod)$|(?:^|/)requirements/+[\w.-]+\.(?:txt|in)$",
        ),
        # where the next install fetches each pinned package from: judged by the installs it implies
        (
            "lockfile",
            r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock"
            r"|Cargo\.lock|Gemfile\.lock)$",
        ),
        # an environment file the project's tools load (dotenv libraries, compose, agent CLIs)
        ("dotenv", r"(?:^|/)\.env(?:\.[\w-]+)?$"),
        # Go source runs later only through //go:generate directives and mage targets
        ("go-source", GO_SOURCE),
        # a shell or PowerShell script: written to be run (by the agent, a user or a scheduler)
        ("script", r"\.(?:sh|bash|zsh|ksh|command|ps1)$"),
        # program code a build, a test or a config names (a build backend, a mypy plugin, a docs
        # hook, a preinstall script, a notebook's cells): judged by what its own process calls run or send
        ("source-code", r"\.(?:py|pyw|ipynb|[cm]?js|[cm]?ts|rb|pl|pm|php|groovy|kts|lua)$"),
        # applied later by kubectl, helm, docker compose, terraform/tofu or CloudFormation: judged by
        # what the text grants (cmdline.effects.infra_files), whatever the file is called
        ("infrastructure", r"\.(?:ya?ml|json|tf|tf\.json|tfvars|hcl|template|bicep)$"),
        # a backend's security rules, deployed by `firebase deploy` (firestore.rules, storage.rules)
        ("infrastructure", r"(?:^|/)[\w.-]*\.rules$"),
        # a data store's or a relay client's own config, read when it next starts: judged by the same
        # signals (a store opened to the network without auth, a relay publishing a local port)
        (
            "infrastructure",
            r"(?:^|/)(?:redis|valkey|keydb|sentinel|mongod|pg_hba|postgresql|my|mysqld|elasticsearch|opensearch"
            r"|frpc|frps|rathole|gost)[\w.-]*\.(?:conf|cnf|ini|toml)$",
        ),
    )
)
"""Every class with the pattern of the normalized paths it holds, most specific first (the first
match wins: a ``~/.config/systemd`` unit is ``systemd``, not ``editor-settings``)."""

ALWAYS = frozenset(
    {"shell-rc", "autostart", "systemd", "cron", "system-init", "launchd", "ssh-trust", "git-hook"}
)
"""Classes where any write is the technique itself: nothing ordinary writes a user's rc files,
scheduler or hooks from a coding task. The other classes are judged by :func:`later_risks`."""

_S = r"[\s\"'`;|&(]"
_SIGNALS: dict[str, re.Pattern[str]] = {
    # a download handed to an interpreter, or decoded text run (the fetcher-then-pipe forms are read
    # line by line in _LINE_PAIRS)
    "fetch-exec": lazy_compile(r"\beval\s*[\"'(]?\$\(|\b(?:bash|sh)\s+<\(\s*(?:curl|wget)"),
    # data leaving: an upload, a post, a raw socket, secrets or the whole environment sent (the
    # fetcher-then-flag forms are read line by line in _LINE_PAIRS)
    "sends": lazy_compile(
        r"" + _S + r"(?:nc|ncat|netcat|socat|telnet)\s+[\w.-]+\s+[0-9]+|/dev/tcp/|toJSON\(\s*secrets\s*\)"
        r"|\benv\s*\|\s*(?:base64|curl|nc)|printenv\s*\|"
    ),
    # secrets referenced where the file's runner would hand them to its commands
    "secrets": lazy_compile(
        r"\$\{\{\s*secrets\.|\$(?:\{)?(?:AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GITHUB_TOKEN|GH_TOKEN"
        r"|NPM_TOKEN|PYPI_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN)\b"
    ),
    # a workflow that runs untrusted code with the base repository's secrets (pull_request_target is
    # read by _untrusted_trigger: only when it fetches the pull request's code, or in a fragment)
    "untrusted-trigger": lazy_compile(
        r"\bworkflow_run\b[^\n]*\n(?:[^\n]*\n){0,6}[^\n]*head_(?:sha|branch)"
        # a value an outsider writes (an issue, comment, discussion or commit message, a branch name)
        # spliced into the workflow's text, where a `run:` step executes it (script injection)
        r"|github\.event\.(?:issue|comment|pull_request|review|review_comment|discussion|discussion_comment)"
        r"\.(?:title|body|head\.ref|head\.label)"
        r"|github\.event\.(?:head_commit|commits\[[^\]]*\])\.(?:message|author\.(?:name|email))"
        r"|github\.event\.pages\[[^\]]*\]\.page_name"
    ),
    # npm/composer lifecycle scripts that run on install
    "install-script": lazy_compile(
        r"[\"'](?:preinstall|install|postinstall|preuninstall|postuninstall|prepublish|post-install-cmd"
        r"|pre-install-cmd|post-update-cmd|post-autoload-dump)[\"']\s*:"
    ),
    # a dependency fetched from a bare address or over plain http instead of the registry (the
    # tarball's install scripts run at the next install, and nothing pins what it serves)
    "remote-dependency": lazy_compile(
        r"[\"'][\w@./-]+[\"']\s*:\s*[\"'](?:git\+)?(?:https?://(?:\d{1,3}\.){3}\d{1,3}[:/]|http://)[^\"']*[\"']"
    ),
    # code run from a setup.py / build script when the package is built or installed
    "build-exec": lazy_compile(
        r"\b(?:os\.system|subprocess\.|urllib\.request|urlopen|requests\.(?:get|post)|socket\.socket"
        r"|exec\(|eval\(|std::process::Command|Command::new|__import__)"
    ),
    # the package registry or index swapped
    "registry": lazy_compile(
        r"(?im)^[ \t]*(?:@[\w-]+:)?registry\s*=|\b(?:index-url|extra-index-url|find-links|index_url"
        r"|extra_index_url)\s*[=:]|npmRegistryServer|\bGOPROXY\s*=|\bGONOSUMDB|\bGOPRIVATE\s*="
        r"|\[source\.[^\]]+\]|replace-with|\bmirror\.|<mirror>|\bsource\s*=\s*[\"']https?://"
        r"|distributionUrl\s*=\s*https?\\?://(?!services\.gradle\.org/|repo1?\.maven\.apache\.org/)"
        # a NuGet.config package source other than nuget.org
        r"|<add\s+key\s*=\s*[\"'][^\"']*[\"']\s+value\s*=\s*[\"']https?://(?!api\.nuget\.org/)"
    ),
    # TLS verification off
    "tls-off": lazy_compile(
        r"(?i)strict-ssl(?:\s*[=:]\s*|\s+)false|enableStrictSsl\s*:\s*false|ssl_?verify\s*[=:]\s*(?:false|0|no)"
        r"|sslVerify\s*=\s*false|trusted-host|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*[\"']?0"
        r"|GIT_SSL_NO_VERIFY|PYTHONHTTPSVERIFY\s*=\s*[\"']?0|GOINSECURE|GOFLAGS\s*=.*-insecure"
        r"|check-revoke\s*=\s*false|\binsecure\s*=\s*true|ca-?file\s*=\s*/dev/null"
        # archive checks and plain HTTP: yarn's checksumBehavior and HTTP allow-list, a registry
        # named over http:// (not on this machine), RubyGems' VERIFY_NONE, composer's switches,
        # NuGet's insecure sources and unsigned packages accepted
        r"|checksumBehavior[\"']?\s*:\s*[\"']?(?:ignore|update|reset)|unsafeHttpWhitelist"
        r"|(?:registry|npmRegistryServer)[\"']?\s*[=:]\s*[\"']?http://(?!localhost|127\.0\.0\.1|\[::1\])"
        r"|ssl_verify_mode[\"']?\s*[=:]\s*0\b|[\"']disable-tls[\"']\s*:\s*true|[\"']secure-http[\"']\s*:\s*false"
        r"|allowInsecureConnections\s*=\s*[\"']true|signatureValidationMode[\"']\s+value\s*=\s*[\"']accept"
    ),
    # a package manager's config naming the program it runs for every build, install or test
    # (cargo's rustc-wrapper/runner/linker, npm's script-shell and node-options --require, yarnPath,
    # bun's preload, go's -toolexec) pointed at a scratch or cache folder, a shell's -c or a
    # download; the everyday values (sccache, clang, a cross linker, .yarn/releases) name a tool
    "odd-tool": lazy_compile(
        r"(?im)^[ \t]*script-shell\s*[=:]\s*(?!(?:(?:/usr)?/bin/+)?(?:ba|z|da|k|fi)?sh\s*$"
        r"|(?:cmd|pwsh|powershell)(?:\.exe)?\s*$)\S"
        r"|^[ \t]*(?:rustc-wrapper|rustc-workspace-wrapper|rustc|rustdoc|runner|linker|script-shell"
        r"|node-options|yarnPath|preload|GOFLAGS)\s*[=:][^\n]*(?:/tmp/|/var/tmp/|/dev/shm/|/\.cache/"
        r"|\b(?:ba|z|da|k)?sh\s+-c\b|\bcurl\b|\bwget\b|https?://|-toolexec)"
        # a JVM agent loaded into every Maven or Gradle build (.mvn/jvm.config, org.gradle.jvmargs)
        # from outside the project: a scratch or cache folder, the home, an absolute path
        r"|-(?:javaagent|agentpath|agentlib)[:=]\s*(?:/(?!\S*\$\{)|~|\$HOME|[A-Za-z]:\\)"
        # bundler told to run another Gemfile (Ruby code) than the project's
        r"|^[ \t]*BUNDLE_GEMFILE[ \t]*:"
    ),
    # an editor task that runs when the folder is opened, or a dev container command run on the host
    # (initializeCommand); the container's own lifecycle commands run inside it and are judged by
    # what they run (fetch-exec, sends)
    "folder-open": lazy_compile(r"[\"']runOn[\"']\s*:\s*[\"']folderOpen[\"']|initializeCommand"),
    # editor or git settings that name a program the tool will run
    "runs-program": lazy_compile(
        r"(?im)terminal\.integrated\.(?:profiles|shell|automationProfile)|(?:executable|interpreter"
        r"|server)Path[\"']?\s*:|[\"'](?:git(?=[.\"'])|php\.validate|go\.alternateTools"
        r"|python\.defaultInterpreterPath)[\w.]*[\"']\s*:"
        r"|\b(?:fsmonitor|hooksPath|sshCommand|askPass|pager|editor|gpg\.program|credential\.helper"
        r"|helper|textconv|clean|smudge|process|uploadpack|receivepack)\s*=|^[ \t]*\[(?:filter|diff)\s"
        r"|\bfilter=(?!lfs\b)|\balias\.[\w-]+\s*=\s*!|^[ \t]*[\w-]+\s*=\s*!"
        # any extension's program setting (eslint.runtime, *.binaryPath, *.commandLine) pointed at a
        # scratch folder, where nothing the editor should run is installed
        r"|[\"'][\w.-]*(?:[Rr]untime|[Pp]ath|[Ee]xecutable|[Bb]inary|[Cc]ommand(?:Line)?)[\"']\s*:\s*[\"']"
        r"(?:/tmp/|/var/tmp/|/dev/shm/|~/\.cache/)"
        # ... or a setting naming a program (a runtime, an executable, a binary, a language server's
        # path) at a file in a hidden folder or a hidden file, where no tool installs itself
        # (`/work/.bin/ls`, `.vscode/php`, `node_modules/.bin/.x`): the IDEsaster chain writes the
        # program, then the setting; the tool managers' folders (.venv, .cargo, .nvm, .local,
        # node_modules/.bin, ...) are where real tools live
        r"|[\"'][\w.-]*(?:[Rr]untime(?:Executable)?|[Ee]xecutable(?:Path)?|[Bb]inary(?:Path)?|[Ss]erver\.[Pp]ath"
        r"|[Cc]ommand(?:Path)?)[\"']\s*:\s*[\"'][^\"'\n]*?(?<![\w.-])\.(?!(?:venv|yarn|cargo|rustup|local|nvm"
        r"|pyenv|rbenv|bun|deno|dotnet|sdkman|asdf|volta|ghcup|elan|opam|nix-profile)[/\"']"
        r"|(?:vscode|vscode-insiders|vscode-oss|cursor|windsurf)/extensions/|vscode-server/)"
        r"(?:(?<=node_modules/\.)(?!bin/[^.\"'])|(?<!node_modules/\.))[\w-][^/\"'\n]*[/\"']"
        # the integrated terminal's environment given variables that load code or run a program
        r"|terminal\.integrated\.env[\w.]*[\"']?\s*:\s*\{[^}]{0,400}?[\"'](?:(?:BASH_ENV|ENV|LD_PRELOAD"
        r"|LD_AUDIT|DYLD_INSERT_LIBRARIES|PROMPT_COMMAND|PYTHONSTARTUP|PERL5OPT|RUBYOPT|JAVA_TOOL_OPTIONS"
        r"|GIT_SSH_COMMAND|GIT_PAGER|PAGER|EDITOR)[\"']"
        r"|NODE_OPTIONS[\"']\s*:\s*[\"'][^\"'\n]*(?:--require|--import|-r\s))"
        # a value holding a command substitution that fetches or starts a shell (a git config value a
        # client interpolates through a shell, Claude Code CVE-2025-59041)
        r"|\$\([^)\n]*\b(?:curl|wget|sh|bash|nc|python[0-9.]*)\b"
    ),
    # an MCP server started from the editor's own settings (VS Code's "mcp": {"servers": ...} block,
    # GitHub's editFile reconfiguring a server launch): unlike .vscode/mcp.json the settings file
    # is no runner format read here, so its command asks
    "mcp-server": lazy_compile(
        r"(?s)[\"']mcp[\"']\s*:\s*\{.{0,400}?[\"']servers[\"']\s*:.{0,2000}?[\"'](?:command|cmd)[\"']\s*:"
    ),
    # an MCP or agent config that starts a command or hooks the agent
    "starts-command": lazy_compile(
        r"[\"'](?:command|cmd)[\"']\s*:|\bcommand\s*=|[\"']hooks[\"']\s*:|[\"'](?:PreToolUse|PostToolUse"
        r"|UserPromptSubmit|SessionStart|Stop)[\"']|[\"']apiKeyHelper[\"']|[\"']permissions[\"']\s*:"
        r"|dangerously|bypassPermissions"
    ),
    # an agent's or editor's approvals switched off in its settings (the file form of `--yolo`)
    "approvals-off": lazy_compile(
        r"(?i)(?<!\w)(?:autoAccept|yolo(?:Mode)?|autoApprove|alwaysAllow|skipPermissions|dangerouslySkipPermissions"
        r"|auto_approve|autoApproveAll|trust|trustAllTools|allowAllTools)[\"']?\s*[:=]\s*(?:true|\[\s*[\"']\*)"
        # an auto-approve map whose key matches every command (`"chat.tools.terminal.autoApprove":
        # {"/.*/": true}`): the switch spelled as a pattern
        r"|autoApprove[\"']?\s*:\s*\{[^}]{0,300}?[\"'](?:/\^?\.[*+]\$?/[a-z]*|\*|\.[*+]|\^?\.\*\$?)[\"']\s*:\s*true"
        r"|[\"']?(?:approvalMode|approval_policy|approval-mode|defaultMode|permission_mode|sandbox_mode)[\"']?\s*[:=]\s*"
        r"[\"']?(?:yolo|never|bypassPermissions|danger-full-access|full-auto)\b"
        # an agent's command allow-list given everything, a shell, an interpreter or a fetcher (Amp's
        # amp.commands.allowlist, Copilot's terminal allowList, Gemini's tools.allowed): every
        # command then runs without a question
        r"|[\"']?[\w.-]*(?:allow-?list|allowList|allowed(?:[_-]?(?:commands|tools))?|allowedTools)[\"']?\s*[:=]\s*"
        r"[\[{][^\]}]{0,600}?[\"'](?:\*|\.\*|(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby|curl|wget|nc|eval|env"
        r"|run_shell_command|execute_bash|Bash|Shell|Bash\(\*\)|Shell\(\*\))[\"']"
        # the editor's own guards: tasks allowed to start by themselves, workspace trust off
        r"|task\.allowAutomaticTasks[\"']?\s*:\s*[\"']on[\"']|security\.workspace\.trust\.enabled[\"']?\s*:\s*false"
    ),
    # text hidden from the person reviewing an agent's instruction file but read by the agent: an
    # HTML comment carrying a command or asking for secrecy, invisible or bidirectional characters,
    # instructions to ignore earlier ones or to keep the user uninformed, a URL built from a command
    "hidden-instructions": lazy_compile(
        r"(?i)[\u200b-\u200d\u2060\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
        r"|ignore\s+(?:all\s+|any\s+)?(?:previous|prior|above|earlier)\s+instructions"
        r"|(?:do\s+not|don'?t|never)\s+(?:mention|tell|inform|notify|alert)\s+(?:this\s+|it\s+|that\s+|about\s+)?"
        r"(?:to\s+)?(?:the\s+)?(?:user|human|developer|reviewer)"
        # secrecy about the agent's own output: kept out of its explanations and summaries
        r"|(?:do\s+not|don'?t|never)\s+(?:mention|disclose|reveal|report|explain|show)\s+(?:this|it|that|these)"
        r"(?:\s+\w+){0,2}\s+(?:in|to|within)\s+(?:your\s+|the\s+|any\s+)?(?:explanations?|summar(?:y|ies)"
        r"|responses?|answers?|replies|output|chat|messages?|commit\s+messages?|pull\s+requests?)\b"
        # secrecy about the instruction itself ("never mention this rule")
        r"|(?:do\s+not|don'?t|never)\s+(?:mention|disclose|reveal)\s+(?:this|these)\s+(?:rules?|instructions?|steps?|lines?)\b"
        r"|https?://[^\s\"'<>`]{0,500}\$\("
    ),
    # a job that destroys what the project published (a package, a release, the repository)
    "unpublish": lazy_compile(
        r"(?i)\b(?:npm|pnpm|yarn)\s+unpublish\b|\bgh\s+(?:repo|release)\s+delete\b"
        r"|\bgh\s+api\s+(?:-X|--method)[ =]?DELETE\b|\bcargo\s+yank\b|\bgem\s+yank\b"
    ),
    # a workflow granting its token every permission (zizmor excessive-permissions)
    "excessive-permissions": lazy_compile(r"(?m)^[ \t]*permissions[ \t]*:[ \t]*write-all\b"),
    # a job given the host: its root folder mounted, or its process namespace (a privileged
    # container alone is common in CI for emulators and stays allowed)
    "host-access": lazy_compile(
        r"(?im)(?:-v|--volume)[\"']?[=\s,]+[\"']?/:/|source=/,|--pid[=\s]+host\b"
        r"|^[ \t]*path[ \t]*:[ \t]*[\"']?/[\"']?[ \t]*$"
    ),
    # the checkout's credentials uploaded with the workspace (zizmor artipacked)
    "artipacked": lazy_compile(
        r"(?sm)persist-credentials[ \t]*:[ \t]*true.{0,600}?upload-artifact.{0,400}?"
        r"path[ \t]*:[ \t]*\.?/?[ \t]*\n"
        r"|\A(?=[\s\S]*?include-hidden-files[ \t]*:[ \t]*true)"
        r"(?=[\s\S]*?^[ \t]*path[ \t]*:[ \t]*\.?/?[ \t]*$)"
    ),
    # a secret re-encoded on its way to the job log, so the runner's masking no longer recognises it
    # (the tj-actions and Shai-Hulud workflows printed secrets base64-encoded twice)
    "unmasks-secrets": lazy_compile(
        r"\$\{\{\s*(?:secrets\.[\w-]+|toJSON\(\s*secrets\s*\))\s*\}\}[^\n]{0,200}?\|\s*(?:base64|base32|xxd|od\b|hexdump|rev\b"
        r"|sed\s+[\"']?s/\./|tr\s|gzip|openssl\s+(?:enc|base64))"
    ),
    # a job that opens an interactive shell on the runner to whoever has the link (tmate/upterm
    # debug actions): the runner's secrets and token are in that shell
    "remote-session": lazy_compile(
        r"(?im)^[ \t]*(?:-[ \t]*)?uses[ \t]*:[ \t]*[\"']?(?:mxschmitt/action-tmate|lhotari/action-upterm"
        r"|owenthereal/action-upterm|csexton/debugger-action|P3TERX/ssh2actions|shaowenchen/debugger-action)@"
    ),
    # another process's environment or memory read (the runner's: tj-actions' memory dump of
    # Runner.Worker, CVE-2025-30066), whichever way the process is named
    "process-secrets": lazy_compile(
        r"/proc/+(?:\$\(|\$\{?\w|[0-9]+|\*|`)[^\s/]*\)?/+(?:environ|mem|maps)\b|\bRunner\.Worker\b[^\n]{0,200}(?:/proc|memdump|gcore)"
        r"|(?:/proc|memdump|gcore)[^\n]{0,200}\bRunner\.Worker\b"
    ),
    # a pyproject that builds with a backend from the project's own tree (run at every build)
    "in-tree-backend": lazy_compile(r"(?m)^[ \t]*backend-path[ \t]*="),
    # a recursive delete of the home folder or the root, however the path is quoted or globbed
    "wipes-home": lazy_compile(
        r"(?m)\brm\s+(?:-[\w-]+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[\w-]+\s+)*(?:--\s+)?"
        r"[\"']?(?:~|\$HOME|\$\{HOME\}|/)[\"']?/?\*?[\"']?(?:\s|$|;|&)"
    ),
    # a Python .pth line that imports (run at every interpreter start-up)
    "startup-import": lazy_compile(r"(?m)^[ \t]*import[\s\t]"),
    # anything that runs a command at all (for direnv: beyond export/layout/use/dotenv lines)
    "runs-command": lazy_compile(
        r"(?m)^(?!\s*(?:#|$|export\s|unset\s|layout\s|use\s|dotenv|source_env|source_up|watch_file"
        r"|PATH_add|path_add|[A-Za-z_][A-Za-z0-9_]*=))\S"
    ),
}

_SECRET_SOURCE = lazy_compile(
    r"(?i)(?:~|\$HOME|\$\{HOME\}|\$env:(?:HOME|USERPROFILE)|%USERPROFILE%|expanduser\(['\"]~)[/\\]+"
    r"\.(?:ssh|aws|gnupg|kube|docker|config[/\\]+gh)\b"
    r"|\bid_(?:rsa|ed25519|ecdsa)\b|\.(?:git-credentials|netrc|pgpass)\b|/etc/+shadow\b"
    # the whole environment read (a secret used as one request's credential is everyday code)
    r"|\b(?:dict|repr|str|json\.dumps)\(\s*os\.environ\b|\bos\.environ\.(?:items|copy|keys|values)\(\)"
    r"|\*\*os\.environ\b|\bJSON\.stringify\(\s*process\.env\b|\.\.\.process\.env\b"
    r"|\bObject\.(?:entries|keys|values|assign)\([^)\n]*process\.env\b|\bENV\.(?:to_h|to_hash|inspect)\b"
    r"|(?:^|[\s|;&('\"])(?:env|printenv)\s*\||\b(?:Get-ChildItem|gci|dir|ls)\s+env:"
    # a checkout's git config (the job token with persist-credentials), a secret variable piped on
    r"|\.git/+config\b|\$\{?[A-Z_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY)[A-Z_]*\}?[\"']?\s*\|"
)
_SEND = lazy_compile(  # the fetcher-then-flag forms are _LINE_PAIRS["exfil-send"], read line by line
    r"(?i)\b(?:nc|ncat|socat)\s+[\w.-]+\s+\d+|/dev/tcp/|urlopen\([^)\n]*\bdata\s*="
    r"|\b(?:requests|httpx|session)\.(?:post|put)\(|\bRequest\([^)\n]*\bdata\s*="
    r"|\.request\(\s*['\"](?:POST|PUT)|method\s*[:=]\s*['\"](?:POST|PUT)"
    r"|\bsocket\.(?:socket|create_connection)\(|Net::HTTP\.post|\bfetch\([^)\n]*\bbody\s*:"
    r"|-Method\s+['\"]?(?:Post|Put)|-InFile\b"
)


def _exfil(text: str) -> bool:
    """Signal ``exfil``: secrets read and sent out by one file, a send (a shell upload or post,
    or code posting data or opening a socket) beside a secret source (key and cloud credential
    folders, the environment, the shadow file). Either alone is everyday code."""
    sends = _SEND.search(text) is not None or _line_pair(text, "exfil-send")
    return sends and _SECRET_SOURCE.search(text) is not None


_LINE_PAIRS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # a download (or decoded text) handed to a shell or an interpreter later on the same line
    "fetch-exec": (
        lazy_compile(r"(?:curl|wget|fetch|iwr|Invoke-WebRequest)\b|base64\s+(?:-d|--decode)"),
        lazy_compile(
            r"\|\s*(?:sudo\s+)?(?:/(?:usr/+)?(?:local/+)?bin/+)?(?:(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby)\b"
        ),
    ),
    # a fetcher given a body, a form or an upload later on the same line
    "sends": (
        lazy_compile(r"(?:curl|wget|http|Invoke-RestMethod)\b"),
        lazy_compile(
            # curl's short data, form and upload options also when clustered after its switches (-sd, -sSLF)
            r"\s-[sSkLfvi]*[dFT]\b|\s--data|\s--form|--upload-file|--post-data|--post-file|-X\s*(?:POST|PUT)"
        ),
    ),
    # a download over plain http (no transport integrity: anyone on the path chooses the code) or
    # from a bare IP address (no name a registry or a certificate vouches for), handed to a shell
    # or an interpreter later on the same line
    "plain-fetch-exec": (
        lazy_compile(
            r"\b(?:curl|wget)\b[^|\n]{0,500}?(?:\bhttp://|\bhttps://[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![\w.]))"
        ),
        lazy_compile(r"\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node)\b"),
    ),
    # code handing a shell a download to run: a process call and a fetch piped into a shell or an
    # interpreter on one line (os.system, subprocess, execSync, Ruby's system or backticks)
    "code-fetch-exec": (
        lazy_compile(
            r"\b(?:os\.(?:system|popen)|subprocess\.\w+|exec(?:Sync|File(?:Sync)?)?|spawn(?:Sync)?|system"
            r"|IO\.popen|Runtime\.getRuntime\(\)\.exec|ProcessBuilder|Command(?:::new)?)\s*\("
        ),
        lazy_compile(
            r"(?:curl|wget)\b[^\n]{0,400}?\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby)\b"
        ),
    ),
    # the shell half of ``exfil`` (:func:`_exfil`): a fetcher posting, uploading or given a body
    "exfil-send": (
        lazy_compile(r"(?i)(?:curl|wget)\b|Invoke-RestMethod"),
        lazy_compile(
            r"(?i)[\s\"',\[](?:-d|--data[\w-]*|-F|--form|-T|--upload-file|--post-\w+)\b"
            r"|-X\s*['\"]?(?:POST|PUT)|-Body"
        ),
    ),
}
"""Signals that pair a head and a tail on one line (up to 2,000 characters apart), read line by
line from the head's first occurrence so the work stays linear in the text (one regular expression
with an unbounded gap between them backtracks quadratically on a long line)."""


def _line_pair(text: str, signal: str) -> bool:
    head, tail = _LINE_PAIRS[signal]
    for line in text.splitlines():
        first = head.search(line)
        if first is not None and tail.search(line, first.end(), first.end() + 2000):
            return True
    return False


_HIDDEN_COMMENT = lazy_compile(
    r"(?i)\b(?:curl|wget|ncat|netcat|base64|eval)\b|\bnc\s+-|\b(?:ba)?sh\s+-c\b|Invoke-WebRequest|\|\s*(?:ba)?sh\b"
    r"|do\s+not\s+(?:mention|tell|show|reveal|inform|ask)|don'?t\s+(?:mention|tell|show|reveal|ask)"
    r"|without\s+(?:telling|asking|informing|mentioning)|silently|secretly|ignore\s+(?:all\s+|any\s+)?(?:previous|prior|above)"
)
"""What an HTML comment (invisible in rendered Markdown) must not carry in an agent's instructions."""


def _hidden_instructions(text: str) -> bool:
    """Text the agent reads but the reviewer does not see: an HTML comment carrying a command or
    asking for secrecy (each comment read once, so the work stays linear in the text), invisible or
    bidirectional characters, and the visible forms of the same (see ``_SIGNALS``)."""
    if _SIGNALS["hidden-instructions"].search(text):
        return True
    pos = text.find("<!--")
    while pos >= 0:
        end = text.find("-->", pos + 4, pos + 4004)
        body = text[pos + 4 : end if end >= 0 else pos + 2004]
        if _HIDDEN_COMMENT.search(body):
            return True
        pos = text.find("<!--", (end + 3) if end >= 0 else pos + 2004)
    return False


_HANDED_OVER = lazy_compile(r"[ \t]*(?:-[ \t]*)?(?!run\b|script\b)[\w.-]+[ \t]*:[ \t]*[\"']?\$\{\{")
"""A line that hands an outsider's value to an environment variable or an action input (``TITLE:
${{ github.event.issue.title }}``): GitHub's recommended way to keep it out of a script's text."""
_PR_TARGET = lazy_compile(r"\bpull_request_target\b")
_PR_CODE = lazy_compile(
    r"pull_request\.head\.|github\.head_ref|\bhead_ref\b|refs/pull/|\bpull/\$\{\{|merge_commit_sha"
    r"|gh\s+pr\s+checkout|github\.event\.number|pull_request\.number"
)
_SAFE_INTERPRETER = lazy_compile(
    r"[\"'][\w.]*(?:interpreterPath|InterpreterPath|pythonPath)[\"']\s*:\s*[\"'](?:\$\{workspaceFolder\}/|\./)?"
    r"\.?v?env/+(?:bin|Scripts)/+python[0-9.]*(?:\.exe)?[\"']"
)
"""A Python interpreter setting that names the project's own virtual environment."""


def _untrusted_trigger(text: str) -> bool:
    """pull_request_target runs with the base repository's secrets; it is a technique when the
    workflow fetches the pull request's code (head ref or sha, refs/pull, gh pr checkout), or when
    the text is a fragment (an edit) whose other steps are not shown. A complete workflow that
    only labels or comments (actions/labeler) is the trigger's intended use."""
    for found in _SIGNALS["untrusted-trigger"].finditer(text):
        start = text.rfind("\n", 0, found.start()) + 1
        if not _HANDED_OVER.match(text, start):
            return True
    if not _PR_TARGET.search(text):
        return False
    has_jobs = re.search(r"(?m)^jobs\s*:", text) is not None
    complete = has_jobs and re.search(r"(?m)^[ \t]*(?:steps|uses)\s*:", text) is not None
    return not complete or bool(_PR_CODE.search(text))


_REGISTRY_LINE = lazy_compile(
    r"(?im)^[ \t]*(?:@[\w-]+:)?(?:registry|npmRegistryServer)[ \t]*[=:][ \t]*[\"']?(https?://[^\s\"'/]+)"
)
_OFFICIAL_REGISTRY = lazy_compile(
    r"(?i)^https?://(?:registry\.npmjs\.org|registry\.yarnpkg\.com|npm\.pkg\.github\.com"
    r"|(?:[\w-]+\.)?pkgs\.dev\.azure\.com|gitlab\.com)(?::443)?$"
)


def _official_registries_only(text: str) -> bool:
    """A package-manager config whose only registry settings name the ecosystem's own registry or
    the forges' package registries (a scope pointed at GitHub Packages, the documented set-up for
    an organization's private packages): no swap. Any other setting still counts."""
    hosts = [found.group(1) for found in _REGISTRY_LINE.finditer(text)]
    if not hosts or not all(_OFFICIAL_REGISTRY.match(h) for h in hosts):
        return False
    rest = _REGISTRY_LINE.sub("", text)
    return _SIGNALS["registry"].search(rest) is None


_TEXT_READERS: dict[str, Callable[[str], object]] = {
    "compromised-action": compromised_action_refs,
    "url-rewrite": config_rewrites,
    # an MCP server the agent reaches over the network that is neither on this machine nor a
    # vendor's own endpoint: a new server whose tool descriptions and results the agent will trust,
    # as `claude mcp add --transport http` registers one
    "remote-server": unknown_remote_servers,
    "index-swap": dependency_file_index_swap,
    "untrusted-trigger": _untrusted_trigger,
    "hidden-instructions": _hidden_instructions,
    "exfil": _exfil,
    "instructs-exfil": instructs_exfil,
    "instructs-wipe": instructs_wipe,
    "instructs-unattended": instructs_unattended,
    "config-code": config_code,
    "loads-local-code": loads_local_code,
    "env-code": env_loads_code,
}
"""Signals read by a function of the text alone (a true result, or a non-empty one, is the signal)."""


def _has_signal(signal: str, path: str, kind: str, sample: str) -> bool:
    reader = _TEXT_READERS.get(signal)
    if reader is not None:
        return bool(reader(sample))
    if signal == "known-malicious":
        return bool(manifest_hits(path, sample))
    if signal == "registry" and _official_registries_only(sample):
        return False
    if signal == "starts-command" and only_reference_servers(sample):
        return False
    if signal == "generate-exec":
        lines = generate_lines(sample)
        found = ("fetch-exec", "sends", "exfil")
        return bool(lines) and any(_has_signal(name, path, kind, lines) for name in found)
    if signal in _LINE_PAIRS and _line_pair(sample, signal):
        return True
    if signal not in _SIGNALS:
        return False
    if signal == "runs-program" and kind == "editor-settings":
        sample = _SAFE_INTERPRETER.sub("", sample)
    return bool(_SIGNALS[signal].search(sample))


_JUDGED_BY: dict[str, tuple[str, ...]] = {
    # a rewrite of a host's URLs to another host is a source swap (asked), not a program (denied)
    "git-config": ("runs-program", "url-rewrite"),
    "python-startup": ("startup-import", "build-exec"),
    "ci-workflow": (
        "fetch-exec",
        "sends",
        "untrusted-trigger",
        "tls-off",
        "compromised-action",
        "wipes-home",
        "excessive-permissions",
        "host-access",
        "artipacked",
        "unpublish",
        "remote-session",
        "process-secrets",
        "unmasks-secrets",
    ),
    "project-hook": ("fetch-exec", "sends", "wipes-home"),
    # a dev container given the host's root folder is the host (.devcontainer is an editor task)
    "editor-task": ("folder-open", "fetch-exec", "sends", "host-access", "runs-program"),
    # a .code-workspace file carries tasks too (its "tasks" block runs on folder open like tasks.json)
    "editor-settings": ("runs-program", "fetch-exec", "approvals-off", "folder-open", "mcp-server"),
    "agent-config": ("starts-command", "remote-server", "fetch-exec", "sends", "approvals-off"),
    "agent-instructions": (
        "hidden-instructions",
        "fetch-exec",
        "sends",
        "instructs-exfil",
        "instructs-wipe",
        "instructs-unattended",
    ),
    "package-manifest": (
        "install-script",
        "build-exec",
        "fetch-exec",
        "sends",
        "known-malicious",
        "remote-dependency",
    ),
    "dependency-list": ("known-malicious", "index-swap", "tls-off", "fetch-exec", "sends", "in-tree-backend"),
    "package-config": ("registry", "tls-off", "odd-tool"),
    "direnv": ("runs-command", "fetch-exec", "sends"),
    "test-hook": ("fetch-exec", "exfil"),
    "build-file": ("fetch-exec", "sends", "exfil", "wipes-home", "process-secrets"),
    "tool-config": ("fetch-exec", "sends", "exfil", "wipes-home", "config-code", "loads-local-code"),
    "go-source": ("generate-exec",),
    "source-code": ("code-fetch-exec", "exfil"),
    # an environment file or an image build that turns certificate checks off does so for every
    # tool the project runs (NODE_TLS_REJECT_UNAUTHORIZED=0 in .env, pip --trusted-host in a RUN)
    "dotenv": ("env-code", "tls-off"),
    "container-build": ("plain-fetch-exec", "exfil", "tls-off"),
    "script": ("exfil", "wipes-home"),
    "infrastructure": INFRA_SIGNAL_NAMES,
}
"""The signals that make a write of each judged class a technique. Secrets in a workflow are
everyday (deploy steps use them); secrets *sent* are not, and that is ``sends``."""


def _normalize(path: str) -> str:
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(part)
    return ("/" if path.startswith("/") else "") + "/".join(parts)


@lru_cache(maxsize=4096)
def later_class(path: str) -> str:
    """The class of file ``path`` is when something runs it later (``shell-rc``, ``cron``,
    ``git-hook``, ``ci-workflow``, ``package-config``, ...), or ``""``. Lexical: never resolves
    links, never touches the disk."""
    if not isinstance(path, str):
        raise TypeError("path.later expects a string")
    if not path or len(path) > 4096:
        return ""
    normal = _normalize(path)
    for name, pattern in _CLASSES:
        if pattern.search(normal):
            return name
    return ""


def later_risks(path: str, text: str) -> list[str]:
    """The signals in ``text`` (a file's new content or an edit's new text) that make writing it
    to ``path`` a technique, for the classes judged by content; ``["always"]`` for a class where
    any write is; ``[]`` for an ordinary file or a harmless edit of a judged one."""
    if not isinstance(path, str) or not isinstance(text, str):
        raise TypeError("path.later_risks expects two strings")
    return list(_later_risks(path, text))


@lru_cache(maxsize=32)
def _later_risks(path: str, text: str) -> tuple[str, ...]:
    """:func:`later_risks`, remembered for the last few (path, text) pairs: several rules of the
    shipped packs ask it of the same written file and text on one event, and the signals are
    regex scans of the whole text. Lexical and deterministic, so a remembered answer is the same
    answer; a scan cut short by the stage's deadline raises and is not remembered."""
    kind = later_class(path)
    if not kind:
        return ()
    if kind in ALWAYS:
        return ("always",)
    sample = text[:200_000]
    if kind == "infrastructure":
        return tuple(infra_signals(sample))
    return tuple(signal for signal in _JUDGED_BY.get(kind, ()) if _has_signal(signal, path, kind, sample))
