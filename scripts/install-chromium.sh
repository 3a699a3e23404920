#!/usr/bin/env bash
# Installs Debian's Chromium, which the status page's browser test drives headless through
# playwright-core (test/integration/ops-status-page.test.ts; playwright's own browser download is not
# used). Idempotent: does nothing but print the version when /usr/bin/chromium is already there.
set -euo pipefail

# The first line of `chromium --version` (read whole: `| head -n 1` under pipefail can die of SIGPIPE).
version() {
  local v
  v="$(/usr/bin/chromium --version 2>/dev/null)"
  echo "${v%%$'\n'*}"
}

if [ -x /usr/bin/chromium ]; then
  version
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-chromium: need root (or sudo) to apt-get install chromium" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core

version
