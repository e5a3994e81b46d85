#!/usr/bin/env bash
# The real-client suite (opt-in; not part of the default test command): installs every supported
# coding client from npm at a pinned version into a cache folder, drives each one offline against
# a scripted model on 127.0.0.1 in a throwaway folder under /tmp, and prints one summary line per
# client, all on the last line joined by "; ".
#
#   bash tools/realclient/run.sh                        # everything (installs on first use)
#   ONLY=gemini-cli,opencode bash tools/realclient/run.sh
#   RUNS=5 bash tools/realclient/run.sh                 # latency runs per condition (default 3)
#   VENV=.venv bash tools/realclient/run.sh             # use an existing venv with dsh-policy
#
# Cache: ${DSH_REALCLIENT_CACHE:-$HOME/.cache/dsh-realclient} (npm/<package>@<version>, venv).
# Work:  /tmp/dsh-realclient/work (results.json, summary.txt, logs/).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${DSH_REALCLIENT_CACHE:-$HOME/.cache/dsh-realclient}"
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"
command -v npm >/dev/null || { echo "npm is needed (apt-get install nodejs npm)" >&2; exit 2; }
if [ -z "${VENV:-}" ]; then
  VENV="$CACHE/venv"
  # A regular (not editable) install of this checkout: what a user gets from a fresh clone.
  rm -rf "$VENV" && "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q "$REPO[fast]"
fi
exec "$PY" "$HERE/suite.py" --cache "$CACHE" --venv "$(cd "$VENV" && pwd)" --runs "${RUNS:-3}" --only "${ONLY:-}"
