#!/usr/bin/env bash
# Runs a throwaway single-node etcd on loopback (ephemeral ports, temp data dir, auto-compaction on)
# in the foreground until Ctrl-C, then removes its data. The benchmark does the same from
# bench/peers/etcd-node.ts; this script is for poking at etcd by hand. Fixed ports: KVT_ETCD_CLIENT_PORT,
# KVT_ETCD_PEER_PORT (not ETCD_*, which etcd itself would read as its own settings).
set -euo pipefail
command -v etcd >/dev/null 2>&1 || { echo "etcd not found: run scripts/install-etcd.sh" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CLIENT_PORT="${KVT_ETCD_CLIENT_PORT:-$(free_port)}"
PEER_PORT="${KVT_ETCD_PEER_PORT:-$(free_port)}"
DATA_DIR="$(mktemp -d -t kvt-etcd-XXXXXX)"
trap 'rm -rf "$DATA_DIR"' EXIT

echo "etcd: client 127.0.0.1:${CLIENT_PORT}, data ${DATA_DIR}" >&2
etcd --name bench --data-dir "$DATA_DIR" \
  --listen-client-urls "http://127.0.0.1:${CLIENT_PORT}" --advertise-client-urls "http://127.0.0.1:${CLIENT_PORT}" \
  --listen-peer-urls "http://127.0.0.1:${PEER_PORT}" --initial-advertise-peer-urls "http://127.0.0.1:${PEER_PORT}" \
  --initial-cluster "bench=http://127.0.0.1:${PEER_PORT}" --initial-cluster-state new \
  --auto-compaction-mode revision --auto-compaction-retention 10000 \
  --logger zap --log-outputs stderr --log-level warn
