#!/usr/bin/env bash
# Load check with wrk, on loopback, for both engines in one sitting: builds the server in release, then for
# SQLite (a fresh file) and for PostgreSQL (DATABASE_URL if set, else a throwaway cluster started with the
# repository's .ci/postgres) it starts one instance, measures creates (POST /todos: a database transaction,
# then the store applies the change) and reads (GET /todos/{id}: a synchronous read of the store's state),
# stops the server with SIGTERM (graceful shutdown), starts it again on the same database and checks that it
# restores every to-do it had.
#
# Settings (environment): DURATION (default 10s), CONNECTIONS (64), THREADS (2), PORT (8089),
# ENGINES ("sqlite postgres").
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-2}
port=${PORT:-8089}
engines=${ENGINES:-sqlite postgres}

../../.ci/debian-packages wrk

echo "== Building todo-server (release)"
swift build -c release --product todo-server
binary="$(swift build -c release --show-bin-path)/todo-server"

work=$(mktemp -d)
server_pid=""
postgres_dir=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2> /dev/null; then kill "$server_pid"; fi
  if [ -n "$postgres_dir" ]; then ../../.ci/postgres stop "$postgres_dir"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_server: starts the server with the current engine's settings and waits (at most 30 s) until it
# accepts connections.
start_server() {
  "$binary" &
  server_pid=$!
  for _ in $(seq 1 300); do
    if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then return; fi
    if ! kill -0 "$server_pid" 2> /dev/null; then
      echo "todo-server exited early" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "todo-server did not start listening" >&2
  exit 1
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid"
  server_pid=""
}

# http METHOD PATH [BODY]: one request over a fresh connection (bash's /dev/tcp, no curl needed); prints
# the response.
http() {
  local body=${3:-}
  exec 3<> "/dev/tcp/127.0.0.1/$port"
  printf '%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$1" "$2" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}

cat > "$work/create.lua" << 'LUA'
wrk.method = "POST"
wrk.body = '{"title": "load test"}'
wrk.headers["Content-Type"] = "application/json"
LUA

run() {
  local name=$1 url=$2
  shift 2
  echo
  echo "== $name: wrk -t$threads -c$connections -d$duration $*"
  wrk -t"$threads" -c"$connections" -d"$duration" --latency "$@" "$url" | tee "$work/$name.txt"
  if grep -q "Non-2xx" "$work/$name.txt"; then
    echo "$name: some responses were errors" >&2
    exit 1
  fi
}

summary=()
for engine in $engines; do
  export TODO_PORT=$port LOG_LEVEL=warning
  case $engine in
    sqlite)
      unset DATABASE_URL
      export TODO_DATABASE="$work/todos.sqlite"
      ;;
    postgres)
      unset TODO_DATABASE
      if [ -z "${DATABASE_URL:-}" ]; then
        eval "$(../../.ci/postgres start)"
        postgres_dir=$TODO_TEST_POSTGRES_DIR
        psql -q "$TODO_TEST_POSTGRES_URL" -c "CREATE DATABASE todo_load"
        export DATABASE_URL="${TODO_TEST_POSTGRES_URL%/*}/todo_load"
      fi
      ;;
    *)
      echo "Unknown engine '$engine' (sqlite, postgres)" >&2
      exit 2
      ;;
  esac

  echo
  echo "==== $engine"
  start_server
  run "$engine-creates" "http://127.0.0.1:$port/todos" -s "$work/create.lua"
  # A to-do to read back (the creates above made many).
  id=$(http POST /todos '{"title": "read"}' | sed -n 's/.*"id":"\([0-9A-F-]*\)".*/\1/p')
  run "$engine-reads" "http://127.0.0.1:$port/todos/$id"
  served=$(http GET /todos | grep -o '"id":' | wc -l)
  echo "== Stopping the server (SIGTERM: graceful shutdown), then starting it again on the same database"
  stop_server
  start_server
  restored=$(http GET /todos | grep -o '"id":' | wc -l)
  stop_server
  if [ "$served" -ne "$restored" ]; then
    echo "$engine: the server had $served to-dos, the restarted one $restored" >&2
    exit 1
  fi
  summary+=("$(printf '%-9s creates %9s req/s (mean %s, p99 %s)   reads %9s req/s (mean %s, p99 %s)   to-dos %s = restored %s' \
    "$engine" \
    "$(awk '/Requests\/sec/ {print $2}' "$work/$engine-creates.txt")" \
    "$(awk '/^ +Latency/ {print $2; exit}' "$work/$engine-creates.txt")" \
    "$(awk '/^ +99%/ {print $2}' "$work/$engine-creates.txt")" \
    "$(awk '/Requests\/sec/ {print $2}' "$work/$engine-reads.txt")" \
    "$(awk '/^ +Latency/ {print $2; exit}' "$work/$engine-reads.txt")" \
    "$(awk '/^ +99%/ {print $2}' "$work/$engine-reads.txt")" \
    "$served" "$restored")")
done

echo
echo "== Summary ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${summary[@]}"
