#!/usr/bin/env bash
# Load check with wrk: builds the server in release, starts it on loopback with a fresh journal, measures
# creates (POST /todos: validate, append to the journal, commit) and reads (GET /todos/{id}: a synchronous
# read of the store's state), prints requests per second, then stops the server with SIGTERM (graceful
# shutdown) and checks that the journal holds every to-do the server has.
#
# Settings (environment): DURATION (default 10s), CONNECTIONS (64), THREADS (2), PORT (8089).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-2}
port=${PORT:-8089}

if ! command -v wrk > /dev/null; then
  echo "== Installing wrk (Debian package)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq wrk > /dev/null
fi

echo "== Building todo-server (release)"
swift build -c release --product todo-server
binary="$(swift build -c release --show-bin-path)/todo-server"

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2> /dev/null; then kill "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

TODO_PORT=$port TODO_JOURNAL="$work/todos.jsonl" LOG_LEVEL=warning "$binary" &
server_pid=$!

# Wait (at most 10 s) until the server accepts connections.
for _ in $(seq 1 100); do
  if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then break; fi
  if ! kill -0 "$server_pid" 2> /dev/null; then echo "todo-server exited early" >&2; exit 1; fi
  sleep 0.1
done

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
  wrk -t"$threads" -c"$connections" -d"$duration" "$@" "$url" | tee "$work/$name.txt"
  if grep -q "Non-2xx" "$work/$name.txt"; then
    echo "$name: some responses were errors" >&2
    exit 1
  fi
}

run creates "http://127.0.0.1:$port/todos" -s "$work/create.lua"

# A to-do to read back (the creates above made many).
id=$(http POST /todos '{"title": "read"}' | sed -n 's/.*"id":"\([0-9A-F-]*\)".*/\1/p')
run reads "http://127.0.0.1:$port/todos/$id"

todos_in_state=$(http GET /todos | grep -o '"id":' | wc -l)
echo
echo "== Stopping the server (SIGTERM: graceful shutdown)"
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=""
journal_lines=$(wc -l < "$work/todos.jsonl")

echo
echo "== Summary"
printf 'creates (POST /todos):      %s requests/s\n' "$(awk '/Requests\/sec/ {print $2}' "$work/creates.txt")"
printf 'reads (GET /todos/{id}):    %s requests/s\n' "$(awk '/Requests\/sec/ {print $2}' "$work/reads.txt")"
printf 'to-dos in the state:        %s\n' "$todos_in_state"
printf 'journal lines after stop:   %s\n' "$journal_lines"
if [ "$todos_in_state" -ne "$journal_lines" ]; then
  echo "The journal and the state disagree" >&2
  exit 1
fi
