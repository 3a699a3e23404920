#!/usr/bin/env bash
# Installs etcd (Debian's etcd-server + etcd-client) for the benchmarks, once.
# Idempotent: does nothing but print the version when `etcd` is already on PATH.
# The package's own system service is never left running: a policy-rc.d forbids
# service starts during the install, and any etcd the package started anyway is stopped.
set -euo pipefail

# The first line of `etcd --version` (read whole: `| head -n 1` under pipefail dies of SIGPIPE when
# etcd writes its second line after head has exited; CI saw exit 141).
version() {
  local v
  v="$(etcd --version)"
  echo "${v%%$'\n'*}"
}

if command -v etcd >/dev/null 2>&1; then
  version
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-etcd: need root (or sudo) to apt-get install etcd-server etcd-client" >&2
    exit 1
  fi
fi

POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=0
if [ ! -e "$POLICY" ]; then
  # exit 101 = "action forbidden": invoke-rc.d will not start etcd.service.
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod +x "$POLICY"
  CREATED_POLICY=1
fi
cleanup() { if [ "$CREATED_POLICY" = 1 ]; then $SUDO rm -f "$POLICY"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends etcd-server etcd-client

# Belt and braces: stop a system etcd if something started it despite the policy.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  $SUDO systemctl stop etcd || true
  $SUDO systemctl disable etcd >/dev/null 2>&1 || true
fi
for pid in $(pgrep -x etcd 2>/dev/null || true); do
  # Only the package's daemon runs as the etcd user; our benchmark nodes run as us.
  if [ "$(ps -o user= -p "$pid" | tr -d ' ')" = "etcd" ]; then $SUDO kill "$pid" || true; fi
done

version
