#!/usr/bin/env bash
# Pravega's standalone server (io.pravega.local.LocalPravegaEmulator, 0.13) for kvt's benchmark, on 127.0.0.1.
#
#   scripts/pravega.sh start             obtain Pravega (first time), start it, wait until its controller serves
#   scripts/pravega.sh stop              stop the Pravega this script started (SIGTERM, then SIGKILL after 30 s)
#   scripts/pravega.sh status            "running …" (exit 0), "starting …" (exit 1) or "not running" (exit 3)
#   scripts/pravega.sh driver-classpath  build the benchmark's driver (bench/peers/pravega) if needed, print its classpath
#
# Pravega comes from Maven Central with Maven: bench/peers/pravega/pom.xml resolves pravega-standalone (profile
# `standalone`, ~350 jars, ~230 MB) and pravega-client (the driver's) into a Maven repository under the project's
# own .pravega/ (gitignored), so later runs reuse them; that pom pins the versions Pravega's Gradle build runs
# with and says why. The standalone keeps everything in memory (no BookKeeper, no disk): what it acknowledged is
# not durable, and a restart starts empty. One segment container; ZooKeeper, controller and segment store run in
# one JVM. Its segment store and ZooKeeper bind 127.0.0.1; its controller's gRPC server listens
# on every address (Pravega 0.13 has no setting for that address); the controller's REST server stays off.
#
# Environment: KVT_PRAVEGA_HOME (.pravega), KVT_PRAVEGA_ZK_PORT (12181), KVT_PRAVEGA_CONTROLLER_PORT (19090),
# KVT_PRAVEGA_SEGMENTSTORE_PORT (16000), KVT_PRAVEGA_HEAP (the most heap, 4G: the standalone keeps every table in
# it, and a full benchmark run's writes ran a 1G heap out of memory; it starts at 512M), KVT_PRAVEGA_CACHE_MB (the segment
# store's cache, 768: the emulator's own 128 MiB filled during a full benchmark run of 2026-11-27 11:06, and the in-memory
# standalone fails its container on a full cache (CacheFullException) and answers nothing after; direct memory is the
# cache and 256 MiB for the network buffers), KVT_PRAVEGA_START_TIMEOUT_S (120), JAVA_HOME (else java on PATH; Java 11 or 17).
# Any failure prints one line starting with "pravega.sh:" on stderr and exits 1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="$ROOT/bench/peers/pravega"
HOME_DIR="${KVT_PRAVEGA_HOME:-$ROOT/.pravega}"
ZK_PORT="${KVT_PRAVEGA_ZK_PORT:-12181}"
CONTROLLER_PORT="${KVT_PRAVEGA_CONTROLLER_PORT:-19090}"
SEGMENTSTORE_PORT="${KVT_PRAVEGA_SEGMENTSTORE_PORT:-16000}"
HEAP="${KVT_PRAVEGA_HEAP:-4G}"
CACHE_MB="${KVT_PRAVEGA_CACHE_MB:-768}"
[[ "$CACHE_MB" =~ ^[1-9][0-9]*$ ]] || { echo "pravega.sh: KVT_PRAVEGA_CACHE_MB is \"$CACHE_MB\"; it must be a positive whole number of MiB" >&2; exit 1; }
START_TIMEOUT_S="${KVT_PRAVEGA_START_TIMEOUT_S:-120}"

M2_DIR="$HOME_DIR/m2"
SERVER_CLASSPATH="$HOME_DIR/server-classpath.txt"
DRIVER_DIR="$HOME_DIR/driver"
DRIVER_CLASSPATH="$HOME_DIR/driver-classpath.txt"
CONF_DIR="$HOME_DIR/conf"
LOG_DIR="$HOME_DIR/logs"
PID_FILE="$HOME_DIR/pravega.pid"
READY_LINE="Pravega Sandbox is running locally now"

SERVER=pravega
# die, java_bin, check_java, running_pid, port_in_use, lock, wait_until_ready, stop_server.
source "$ROOT/scripts/jvm-server.lib.sh"

need_maven() {
  command -v mvn >/dev/null || die "Maven (mvn) is needed to obtain Pravega from Maven Central; install it (apt-get install maven)"
}

# Resolves the standalone server and its runtime dependencies into $M2_DIR (once) and writes their classpath.
fetch_server() {
  [[ -s "$SERVER_CLASSPATH" ]] && return 0
  need_maven
  mkdir -p "$HOME_DIR"
  echo "pravega.sh: obtaining Pravega's standalone server from Maven Central (first run only, ~230 MB)…" >&2
  local log="$HOME_DIR/maven-server.log"
  if ! mvn -B -q -f "$MODULE/pom.xml" -P standalone -Dmaven.repo.local="$M2_DIR" \
    dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$SERVER_CLASSPATH.tmp" >"$log" 2>&1; then
    rm -f "$SERVER_CLASSPATH.tmp"
    die "Maven could not obtain io.pravega:pravega-standalone: $(grep -m1 -E 'ERROR' "$log" || tail -1 "$log") (full log: $log)"
  fi
  mv "$SERVER_CLASSPATH.tmp" "$SERVER_CLASSPATH"
}

# Compiles the driver into $DRIVER_DIR when a source or the pom is newer than its classes, and writes its classpath.
build_driver() {
  local stamp="$DRIVER_DIR/classes/kvt/bench/pravega/PravegaDriver.class"
  if [[ -s "$DRIVER_CLASSPATH" && -f "$stamp" ]] && [[ -z "$(find "$MODULE/pom.xml" "$MODULE/src" -newer "$stamp" -type f -print -quit)" ]]; then
    return 0
  fi
  need_maven
  mkdir -p "$HOME_DIR"
  local log="$HOME_DIR/maven-driver.log"
  if ! mvn -B -q -f "$MODULE/pom.xml" -Dmaven.repo.local="$M2_DIR" -Dkvt.build.dir="$DRIVER_DIR" \
    compile dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$DRIVER_CLASSPATH.tmp" >"$log" 2>&1; then
    rm -f "$DRIVER_CLASSPATH.tmp"
    die "Maven could not build the Pravega driver (bench/peers/pravega): $(grep -m1 -E 'ERROR' "$log" || tail -1 "$log") (full log: $log)"
  fi
  mv "$DRIVER_CLASSPATH.tmp" "$DRIVER_CLASSPATH"
  touch "$stamp"
}

write_config() {
  mkdir -p "$CONF_DIR" "$LOG_DIR"
  # singlenode.*: LocalPravegaEmulator's own settings; pravegaservice.*: its segment store's, which the
  # emulator reads from the same file after its defaults (so these win over its 0.0.0.0).
  cat >"$CONF_DIR/standalone.properties" <<EOF
singlenode.zk.port=$ZK_PORT
singlenode.controller.rpc.port=$CONTROLLER_PORT
singlenode.segmentStore.port=$SEGMENTSTORE_PORT
singlenode.controller.rest.enable=false
singlenode.security.auth.enable=false
singlenode.security.tls.enable=false
singlenode.metrics.enable=false
singlenode.admin.gateway.enable=false
pravegaservice.service.listener.host.nameOrIp=127.0.0.1
pravegaservice.service.published.host.nameOrIp=127.0.0.1
pravegaservice.rest.listener.enable=false
pravegaservice.cache.size.max=$((CACHE_MB * 1024 * 1024))
EOF
  cat >"$CONF_DIR/logback.xml" <<EOF
<!-- Written by scripts/pravega.sh: warnings to logs/standalone.log, and the emulator's own start lines. -->
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$LOG_DIR/standalone.log</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n</pattern></encoder>
  </appender>
  <logger name="io.pravega.local" level="INFO"/>
  <root level="WARN"><appender-ref ref="FILE"/></root>
</configuration>
EOF
}

# Ready: the emulator logged that it runs (controller, segment store and its container are up) and the
# controller's port accepts connections.
ready() {
  grep -q "$READY_LINE" "$LOG_DIR/standalone.log" 2>/dev/null && port_in_use "$CONTROLLER_PORT"
}

startup_error() {
  echo "$(grep -m1 -E 'ERROR|Exception|Error:' "$LOG_DIR/stdout.log" "$LOG_DIR/standalone.log" 2>/dev/null || tail -1 "$LOG_DIR/stdout.log") (logs: $LOG_DIR)"
}

start() {
  lock
  local pid
  if pid="$(running_pid)"; then
    wait_until_ready "$pid" "$SECONDS" "Pravega's controller did not serve on 127.0.0.1:$CONTROLLER_PORT"
    echo "pravega: already running (pid $pid), controller on tcp://127.0.0.1:$CONTROLLER_PORT"
    return 0
  fi
  for port in "$ZK_PORT" "$CONTROLLER_PORT" "$SEGMENTSTORE_PORT"; do
    port_in_use "$port" && die "port $port on 127.0.0.1 is taken by another process (set KVT_PRAVEGA_ZK_PORT / _CONTROLLER_PORT / _SEGMENTSTORE_PORT)"
  done
  local java
  java="$(check_java "Pravega 0.13")"
  fetch_server
  write_config
  rm -f "$LOG_DIR/standalone.log"
  local started=$SECONDS
  # setsid: the server outlives this script and is not hit by a Ctrl-C meant for the caller.
  # 9>&-: the server must not inherit the lock, or it would hold it for as long as it runs.
  # -Djava.io.tmpdir: the emulator's ZooKeeper writes its snapshots there.
  mkdir -p "$HOME_DIR/tmp"
  (cd "$HOME_DIR" && exec setsid nohup "$java" -Xms512m -Xmx"$HEAP" -XX:MaxDirectMemorySize=$((CACHE_MB + 256))m -XX:+UseG1GC \
    -Djava.net.preferIPv4Stack=true -Djava.io.tmpdir="$HOME_DIR/tmp" \
    -Dsinglenode.configurationFile="$CONF_DIR/standalone.properties" -Dlogback.configurationFile="$CONF_DIR/logback.xml" \
    -cp "$(cat "$SERVER_CLASSPATH")" io.pravega.local.LocalPravegaEmulator >"$LOG_DIR/stdout.log" 2>&1 </dev/null 9>&-) &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_until_ready "$pid" "$started" "Pravega's controller did not serve on 127.0.0.1:$CONTROLLER_PORT"
  echo "pravega: running (pid $pid), controller on tcp://127.0.0.1:$CONTROLLER_PORT, in memory (not durable), answered after $((SECONDS - started))s"
}

stop() { stop_server 30; }

status() {
  local pid
  if pid="$(running_pid)"; then
    if ready; then
      echo "pravega: running (pid $pid), controller on tcp://127.0.0.1:$CONTROLLER_PORT"
      return 0
    fi
    echo "pravega: starting (pid $pid), controller not serving yet"
    return 1
  fi
  echo "pravega: not running"
  return 3
}

driver_classpath() {
  build_driver
  echo "$DRIVER_DIR/classes:$(cat "$DRIVER_CLASSPATH")"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  driver-classpath) driver_classpath ;;
  *)
    echo "usage: scripts/pravega.sh start|stop|status|driver-classpath" >&2
    exit 2
    ;;
esac
