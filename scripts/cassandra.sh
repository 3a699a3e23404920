#!/usr/bin/env bash
# A real, single-node Apache Cassandra for kvt's archive tier tests and benchmark, on 127.0.0.1.
#
#   scripts/cassandra.sh start      obtain Cassandra (first time), write its config, start it, wait until CQL answers
#   scripts/cassandra.sh stop       stop the Cassandra this script started (SIGTERM, then SIGKILL after 60 s)
#   scripts/cassandra.sh status     "running …" (exit 0), "starting …" (exit 1) or "not running" (exit 3)
#   scripts/cassandra.sh nodetool … run nodetool against it (JMX on 127.0.0.1), e.g. `nodetool flush ks table`
#
# Cassandra comes from Maven Central with Maven: org.apache.cassandra:cassandra-all and its runtime
# dependencies (~100 jars, ~70 MB), resolved by scripts/cassandra/pom.xml into a Maven repository under
# the project's own .cassandra/ (gitignored), so later runs reuse them. The daemon runs with the JVM flags
# of Cassandra's jvm17-server.options (scripts/cassandra/jvm17-server.options), the jamm agent, a logback
# config, a triggers dir, a 1 GiB heap, a GC log (logs/gc.log: pauses and safepoints, as Cassandra's own scripts
# keep one) and a short ring delay so that it answers in seconds.
#
# Environment: KVT_CASSANDRA_HOME (.cassandra), KVT_CASSANDRA_VERSION (5.0.9), KVT_CASSANDRA_PORT (CQL, 9042),
# KVT_CASSANDRA_STORAGE_PORT (7000), KVT_CASSANDRA_JMX_PORT (7199), KVT_CASSANDRA_HEAP (1G),
# KVT_CASSANDRA_START_TIMEOUT_S (180), JAVA_HOME (else java on PATH; Java 11 or 17), KVT_CASSANDRA_M2 (the Maven
# repository, $KVT_CASSANDRA_HOME/m2: a second instance, such as the benchmark's, can share the first one's),
# KVT_CASSANDRA_COMMITLOG_SYNC (periodic: Cassandra's default, the tests'; batch or group: a write is acknowledged
# only once its commit log is synced, what `npm run bench` runs), KVT_CASSANDRA_COMMITLOG_GROUP_WINDOW_MS (group: 2),
# KVT_CASSANDRA_PAXOS_VARIANT (v1, Cassandra 5.0's default; v2: the lightweight transactions of two round trips
# that 5.0 recommends for new clusters, what `npm run bench` runs).
# Any failure prints one line starting with "cassandra.sh:" on stderr and exits 1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPLATES="$ROOT/scripts/cassandra"
HOME_DIR="${KVT_CASSANDRA_HOME:-$ROOT/.cassandra}"
VERSION="${KVT_CASSANDRA_VERSION:-5.0.9}"
CQL_PORT="${KVT_CASSANDRA_PORT:-9042}"
STORAGE_PORT="${KVT_CASSANDRA_STORAGE_PORT:-7000}"
JMX_PORT="${KVT_CASSANDRA_JMX_PORT:-7199}"
HEAP="${KVT_CASSANDRA_HEAP:-1G}"
START_TIMEOUT_S="${KVT_CASSANDRA_START_TIMEOUT_S:-180}"
M2_DIR="${KVT_CASSANDRA_M2:-$HOME_DIR/m2}"
COMMITLOG_SYNC="${KVT_CASSANDRA_COMMITLOG_SYNC:-periodic}"
GROUP_WINDOW_MS="${KVT_CASSANDRA_COMMITLOG_GROUP_WINDOW_MS:-2}"
PAXOS_VARIANT="${KVT_CASSANDRA_PAXOS_VARIANT:-v1}"

CLASSPATH_FILE="$HOME_DIR/classpath-$VERSION.txt"
CONF_DIR="$HOME_DIR/conf"
DATA_DIR="$HOME_DIR/data"
LOG_DIR="$HOME_DIR/logs"
TRIGGERS_DIR="$HOME_DIR/triggers"
PID_FILE="$HOME_DIR/cassandra.pid"

SERVER=cassandra
# die, java_bin, check_java, running_pid, port_in_use, lock, wait_until_ready, stop_server.
source "$ROOT/scripts/jvm-server.lib.sh"

# True when a CQL server answers an OPTIONS request (native protocol v4) with SUPPORTED on 127.0.0.1:$CQL_PORT.
cql_answers() {
  local reply
  reply="$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$CQL_PORT && printf '\x04\x00\x00\x00\x05\x00\x00\x00\x00' >&3 && head -c 5 <&3 | od -An -tx1" 2>/dev/null || true)"
  [[ "$(echo $reply)" == "84 00 00 00 06" ]]
}

ready() { cql_answers; }

startup_error() {
  echo "$(grep -m1 -E 'ERROR|Exception|Error:' "$LOG_DIR/stdout.log" || tail -1 "$LOG_DIR/stdout.log") (log: $LOG_DIR/stdout.log)"
}

# Resolves cassandra-all and its runtime dependencies into $HOME_DIR/m2 (once) and writes their classpath.
fetch() {
  [[ -s "$CLASSPATH_FILE" ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is needed to obtain Cassandra from Maven Central; install it (apt-get install maven)"
  mkdir -p "$HOME_DIR"
  echo "cassandra.sh: obtaining Apache Cassandra $VERSION from Maven Central (first run only)…" >&2
  local log="$HOME_DIR/maven.log"
  if ! mvn -B -q -f "$TEMPLATES/pom.xml" -Dcassandra.version="$VERSION" -Dmaven.repo.local="$M2_DIR" \
    dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$CLASSPATH_FILE.tmp" >"$log" 2>&1; then
    rm -f "$CLASSPATH_FILE.tmp"
    die "Maven could not obtain org.apache.cassandra:cassandra-all:$VERSION: $(grep -m1 -E 'ERROR' "$log" || tail -1 "$log") (full log: $log)"
  fi
  mv "$CLASSPATH_FILE.tmp" "$CLASSPATH_FILE"
}

write_config() {
  mkdir -p "$CONF_DIR" "$DATA_DIR" "$LOG_DIR" "$TRIGGERS_DIR"
  sed -e "s|@STORAGE_PORT@|$STORAGE_PORT|g" -e "s|@CQL_PORT@|$CQL_PORT|g" -e "s|@DATA_DIR@|$DATA_DIR|g" \
    "$TEMPLATES/cassandra.yaml.template" >"$CONF_DIR/cassandra.yaml"
  # The template's commit log is Cassandra's default (periodic, synced every 10 s); batch and group sync it
  # before a write is acknowledged.
  case "$COMMITLOG_SYNC" in
    periodic) ;;
    batch) sed -i -e 's/^commitlog_sync: periodic$/commitlog_sync: batch/' -e '/^commitlog_sync_period:/d' "$CONF_DIR/cassandra.yaml" ;;
    group)
      [[ "$GROUP_WINDOW_MS" =~ ^[0-9]+$ ]] || die "KVT_CASSANDRA_COMMITLOG_GROUP_WINDOW_MS must be a whole number of milliseconds, not '$GROUP_WINDOW_MS'"
      sed -i -e 's/^commitlog_sync: periodic$/commitlog_sync: group/' \
        -e "s/^commitlog_sync_period:.*/commitlog_sync_group_window: ${GROUP_WINDOW_MS}ms/" "$CONF_DIR/cassandra.yaml"
      ;;
    *) die "KVT_CASSANDRA_COMMITLOG_SYNC must be periodic, batch or group, not '$COMMITLOG_SYNC'" ;;
  esac
  case "$PAXOS_VARIANT" in
    v1) ;;
    v2) echo "paxos_variant: v2" >>"$CONF_DIR/cassandra.yaml" ;;
    *) die "KVT_CASSANDRA_PAXOS_VARIANT must be v1 or v2, not '$PAXOS_VARIANT'" ;;
  esac
  cp "$TEMPLATES/logback.xml" "$CONF_DIR/logback.xml"
}

jvm_options() {
  local cp="$1" jamm
  jamm="$(tr ':' '\n' <"$CLASSPATH_FILE" | grep -m1 '/jamm-[0-9.]*\.jar$' || true)"
  [[ -n "$jamm" ]] || die "no jamm jar among Cassandra's dependencies ($CLASSPATH_FILE)"
  # One argument a line: `--add-exports X` is two arguments of java.
  grep -v '^\s*\(#\|$\)' "$TEMPLATES/jvm17-server.options" | sed -E 's/^(--add-[a-z]+) +/\1\n/'
  cat <<EOF
-Xms$HEAP
-Xmx$HEAP
-Xss256k
-XX:+HeapDumpOnOutOfMemoryError
-XX:HeapDumpPath=$LOG_DIR
-Xlog:gc=info,safepoint=info:file=$LOG_DIR/gc.log:time,uptime,level,tags:filecount=4,filesize=10M
-Djava.net.preferIPv4Stack=true
-javaagent:$jamm
-Dcassandra.config=file://$CONF_DIR/cassandra.yaml
-Dlogback.configurationFile=$CONF_DIR/logback.xml
-Dcassandra.logdir=$LOG_DIR
-Dcassandra.storagedir=$DATA_DIR
-Dcassandra.triggers_dir=$TRIGGERS_DIR
-Dcassandra.jmx.local.port=$JMX_PORT
-Dcassandra.ring_delay_ms=100
-Dcassandra.skip_wait_for_gossip_to_settle=0
-cp
$cp
EOF
}

start() {
  lock
  local pid
  if pid="$(running_pid)"; then
    wait_until_ready "$pid" "$SECONDS" "CQL did not answer on 127.0.0.1:$CQL_PORT"
    echo "cassandra: already running (pid $pid), CQL on 127.0.0.1:$CQL_PORT"
    return 0
  fi
  if cql_answers; then
    echo "cassandra: CQL already answers on 127.0.0.1:$CQL_PORT (a Cassandra this script did not start)"
    return 0
  fi
  for port in "$CQL_PORT" "$STORAGE_PORT" "$JMX_PORT"; do
    port_in_use "$port" && die "port $port on 127.0.0.1 is taken by another process (set KVT_CASSANDRA_PORT / _STORAGE_PORT / _JMX_PORT)"
  done
  local java
  java="$(check_java "Cassandra 5.0")"
  fetch
  write_config
  local options=()
  mapfile -t options < <(jvm_options "$(cat "$CLASSPATH_FILE")")
  local started=$SECONDS
  # setsid: the daemon outlives this script and is not hit by a Ctrl-C meant for the caller.
  # 9>&-: the daemon must not inherit the lock, or it would hold it for as long as it runs.
  setsid nohup "$java" "${options[@]}" org.apache.cassandra.service.CassandraDaemon >"$LOG_DIR/stdout.log" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_until_ready "$pid" "$started" "CQL did not answer on 127.0.0.1:$CQL_PORT"
  echo "cassandra: running (pid $pid), CQL on 127.0.0.1:$CQL_PORT, commitlog_sync $COMMITLOG_SYNC, answered after $((SECONDS - started))s"
}

stop() { stop_server 60; }

status() {
  local pid
  if pid="$(running_pid)"; then
    if cql_answers; then
      echo "cassandra: running (pid $pid), CQL on 127.0.0.1:$CQL_PORT"
      return 0
    fi
    echo "cassandra: starting (pid $pid), CQL not answering yet"
    return 1
  fi
  if cql_answers; then
    echo "cassandra: running (not started by this script), CQL on 127.0.0.1:$CQL_PORT"
    return 0
  fi
  echo "cassandra: not running"
  return 3
}

nodetool() {
  [[ -s "$CLASSPATH_FILE" ]] || die "Cassandra has not been obtained yet (run: scripts/cassandra.sh start)"
  local java
  java="$(check_java "Cassandra 5.0")"
  # The tools need the daemon's module flags too (the --add-exports/--add-opens lines).
  local jpms=()
  mapfile -t jpms < <(grep -E '^--add-' "$TEMPLATES/jvm17-server.options" | sed -E 's/^(--add-[a-z]+) +/\1\n/')
  "$java" -Xmx256m "${jpms[@]}" -Dlogback.configurationFile="$TEMPLATES/logback-tools.xml" -cp "$(cat "$CLASSPATH_FILE")" \
    org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$JMX_PORT" "$@"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  nodetool)
    shift
    nodetool "$@"
    ;;
  *)
    echo "usage: scripts/cassandra.sh start|stop|status|nodetool ARGS…" >&2
    exit 2
    ;;
esac
