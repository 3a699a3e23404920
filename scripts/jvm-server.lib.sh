# What scripts/cassandra.sh and scripts/pravega.sh share: a JVM server this project obtains with Maven
# and starts on 127.0.0.1 in the background, one start or stop at a time. Sourced, not run. The script
# that sources it sets, before calling anything here:
#   SERVER       the server's name in messages ("cassandra", "pravega"); errors start with "$SERVER.sh:"
#   HOME_DIR     its folder (the lock lives there), LOG_DIR, PID_FILE
#   START_TIMEOUT_S
# and defines `ready` (true once the server serves) and `startup_error` (one line on why it exited).

die() {
  echo "$SERVER.sh: $*" >&2
  exit 1
}

java_bin() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"; else command -v java || true; fi
}

# The java to run (Java 11 or 17), or a failure naming `product` (e.g. "Cassandra 5.0") and what was found.
check_java() {
  local product="$1" java version
  java="$(java_bin)"
  [[ -n "$java" ]] || die "no java found (set JAVA_HOME or put Java 17 on PATH)"
  # Read whole, then cut (a `| head -1` under pipefail can die of SIGPIPE).
  version="$("$java" -version 2>&1)"
  version="$(sed -nE '1s/.*version "([0-9]+).*/\1/p' <<<"$version")"
  [[ "$version" == "11" || "$version" == "17" ]] || die "$product runs on Java 11 or 17; $java is Java $version (set JAVA_HOME)"
  echo "$java"
}

# The pid of the server this script started, if it is alive.
running_pid() {
  [[ -s "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

port_in_use() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# One start or stop at a time (a second caller waits for the first).
lock() {
  mkdir -p "$HOME_DIR"
  exec 9>"$HOME_DIR/lock"
  flock 9
}

# Waits until `ready` while `pid` lives, within the start timeout counted from `started` ($SECONDS);
# otherwise stops it and fails with `not_ready` (what did not answer, and where the logs are).
wait_until_ready() {
  local pid="$1" started="$2" not_ready="$3"
  until ready; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      die "${SERVER^} exited while starting: $(startup_error)"
    fi
    if ((SECONDS - started > START_TIMEOUT_S)); then
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$PID_FILE"
      die "$not_ready within ${START_TIMEOUT_S}s; ${SERVER^} stopped (logs: $LOG_DIR)"
    fi
    sleep 0.5
  done
}

# Stops the server this script started: SIGTERM, then SIGKILL after `grace_s` seconds.
stop_server() {
  local grace_s="$1"
  lock
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    echo "$SERVER: not running"
    return 0
  fi
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited >= grace_s * 10)); then
      kill -9 "$pid" 2>/dev/null || true
      echo "$SERVER: did not stop within ${grace_s}s after SIGTERM; killed (pid $pid)" >&2
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "$PID_FILE"
  echo "$SERVER: stopped (pid $pid)"
}
