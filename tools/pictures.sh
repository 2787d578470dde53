#!/usr/bin/env bash
# Renders the README's pictures (docs/images/NAME.png) with the console of this build, at
# 1280x800, headless: the demo's pictures with `ratescope --demo`, the others on a private
# redis-server that this script starts on a free loopback port, fills with ratescope-cli and
# redis-cli, and always stops. No other server is ever touched.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    cat <<'EOF'
Usage: bash tools/pictures.sh [--build DIR] [--out DIR] [--list] [NAME...]

Renders the README's pictures with the console's own flags (--window-size 1280x800,
--screenshot-after, --open-key, --tab, --lookup, --edit-policy, --burst, --boundary-test,
--reset), headless (QT_QPA_PLATFORM=offscreen), into docs/images/NAME.png. Without NAME,
all of them; with names, those only (e.g. `bash tools/pictures.sh reset burst`).

  --build DIR   the build to use (default build/: build/app/gui/ratescope and
                build/app/cli/ratescope-cli, which must exist)
  --out DIR     write the pictures here instead of docs/images/
  --list        list the names, each with what its picture shows, and exit
  -h, --help    show this help

Pictures of the demo run `ratescope --demo` (its own sandbox server and traffic). The others
share one private redis-server (a temporary directory, 127.0.0.1 on a free port, no
persistence), emptied before each picture and stopped when the script ends, however it ends.
The console's settings are kept in a temporary directory too, so nothing saved by an earlier
session changes a picture. Live pictures differ from run to run (the demo's traffic, times,
ports); the state each one shows is set up the same way each time.
EOF
}

# name|what it shows (also the order they are rendered in)
PICTURES=(
    "monitor|Monitor tab: six pinned limiters of every algorithm over a minute (demo)"
    "keyview-sliding-log|key view of a sliding log, demo:api:umbrella (demo)"
    "keyview-sliding-buckets|key view of sliding buckets, demo:feed:initech (demo)"
    "keyview-sliding-counter|key view of a sliding counter, demo:search:globex (demo)"
    "keyview-gcra|key view of a GCRA limiter, demo:webhook:umbrella (demo)"
    "keyview-token-bucket|key view of a token bucket, demo:upload:mallory (demo)"
    "keyview-spring-gateway|key view of a Spring Cloud Gateway token bucket (demo)"
    "policies|the api policy in the Policies tab's editor (demo)"
    "whatif|What if: the api policy's traffic replayed against 20 per 10 s (demo)"
    "hot|Hot tab: the busiest limiters (demo)"
    "lookup|Lookup tab: every limiter of acme (demo)"
    "keyview-big-log|a sliding log of some 75,000 entries drawn from bucket counts"
    "keyview-shards|a sharded limiter rl:{tenant42} over 8 shards"
    "burst|Burst tab after 20,000 requests over 8 connections against 1,000 per minute"
    "burst-boundary|Burst tab after the boundary test (fixed window against sliding log)"
    "reset|the reset dialog over the window: 37 keys of api:trial:* previewed"
    "audit|Audit tab: a trail of policy, override, reset and burst entries"
)

build=build
out=docs/images
list=false
names=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --list) list=true ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    -*) echo "pictures.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) names+=("$1") ;;
    esac
    shift
done

if $list; then
    for p in "${PICTURES[@]}"; do printf '%-24s %s\n' "${p%%|*}" "${p#*|}"; done
    exit 0
fi
known=" "
for p in "${PICTURES[@]}"; do known+="${p%%|*} "; done
for n in "${names[@]}"; do
    [[ $known == *" $n "* ]] || { echo "pictures.sh: no picture named '$n' (see --list)" >&2; exit 2; }
done
if [ ${#names[@]} -eq 0 ]; then
    for p in "${PICTURES[@]}"; do names+=("${p%%|*}"); done
fi

console=$build/app/gui/ratescope
cli_bin=$build/app/cli/ratescope-cli
for b in "$console" "$cli_bin"; do
    [ -x "$b" ] || { echo "pictures.sh: $b is missing: build first (see README)" >&2; exit 2; }
done
for t in redis-server redis-cli; do
    command -v "$t" >/dev/null || { echo "pictures.sh: $t is needed (apt install redis-server)" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ratescope-pictures.XXXXXX")
port=""
server_pid=""
stop_server() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}
cleanup() {
    local pids
    pids=$(jobs -p)
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
    stop_server
    rm -rf "$work"
}
# Ctrl-C or a TERM: the picture under way is ended (its console and commands), then cleanup.
child=""
on_signal() {
    if [ -n "$child" ]; then
        pkill -TERM -P "$child" 2>/dev/null || true
        kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    exit 130
}
trap cleanup EXIT
trap on_signal INT TERM

# The console and the CLI see only this script's settings (profiles, splitter, keychain).
export XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache
export QT_QPA_PLATFORM=offscreen
unset RATESCOPE_URL

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# One private server for the pictures that are not the demo's (started when first needed).
start_server() {
    [ -n "$server_pid" ] && return
    local attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        mkdir -p "$work/redis"
        redis-server --bind 127.0.0.1 --port "$port" --dir "$work/redis" --save '' --appendonly no \
            --protected-mode yes --logfile "$work/redis/log" --daemonize no &
        server_pid=$!
        for _ in $(seq 50); do
            if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
                URL=redis://127.0.0.1:$port/0
                return
            fi
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        stop_server # the port was taken meanwhile, or the server did not come up: another port
    done
    echo "pictures.sh: could not start redis-server (see $work/redis/log)" >&2
    cat "$work/redis/log" >&2 || true
    exit 1
}

rcli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
cli() { "$cli_bin" --url "$URL" "$@"; }
fresh() { rcli flushall >/dev/null; }

# shoot NAME [console options...]: renders the window at 1280x800 into $out/NAME.png.
shoot() {
    local name=$1
    shift
    echo "== $name"
    # (Qt's notes about the missing runtime directory are noise here.)
    if ! "$console" --window-size 1280x800 "$@" --screenshot "$out/$name.png" 2>"$work/$name.err" >"$work/$name.out"; then
        cat "$work/$name.out" "$work/$name.err" >&2
        echo "pictures.sh: $name: the console did not render it in full" >&2
        return 1
    fi
    grep -v -e XDG_RUNTIME_DIR -e propagateSizeHints "$work/$name.err" >&2 || true
    sed -n 's/^Screenshot: /   /p' "$work/$name.out"
}

# ---- the demo's pictures --------------------------------------------------------------------

picture_monitor() {
    shoot monitor --demo --pin demo:api:umbrella --pin demo:search:initech --pin demo:login:mallory \
        --pin demo:upload:acme --pin demo:webhook:globex --pin demo:feed:hooli --tab monitor --screenshot-after 60s
}
picture_keyview-sliding-log() { shoot keyview-sliding-log --demo --open-key demo:api:umbrella --screenshot-after 12s; }
picture_keyview-sliding-buckets() { shoot keyview-sliding-buckets --demo --open-key demo:feed:initech --screenshot-after 12s; }
picture_keyview-sliding-counter() { shoot keyview-sliding-counter --demo --open-key demo:search:globex --screenshot-after 12s; }
picture_keyview-gcra() { shoot keyview-gcra --demo --open-key demo:webhook:umbrella --screenshot-after 12s; }
picture_keyview-token-bucket() { shoot keyview-token-bucket --demo --open-key demo:upload:mallory --screenshot-after 12s; }
picture_keyview-spring-gateway() {
    shoot keyview-spring-gateway --demo --open-key 'request_rate_limiter.{mallory}.tokens' --screenshot-after 12s
}
picture_policies() { shoot policies --demo --edit-policy api --screenshot-after 12s; }
picture_whatif() { shoot whatif --demo --tab whatif; }
picture_hot() { shoot hot --demo --tab hot --screenshot-after 12s; }
picture_lookup() { shoot lookup --demo --lookup acme --screenshot-after 12s; }

# ---- pictures on the private server ---------------------------------------------------------

# A few services' limiters beside the ones a picture is about, so the keys panel looks like a
# server's: an api log per customer, login windows, upload buckets.
background_keys() {
    cli policy set api --match 'api:*' --algo sliding-log --limit 100 --window 1m \
        --description 'Public API: 100 requests per minute per client' >/dev/null
    cli policy set login --match 'login:*' --algo fixed-window --limit 10 --window 1m >/dev/null
    cli policy set upload --match 'upload:*' --algo token-bucket --limit 20 --window 10s >/dev/null
    local who n
    for who in acme globex initech umbrella; do
        n=$((RANDOM % 60 + 10))
        cli burst "api:$who" --algo sliding-log --limit 100 --window 1m --requests "$n" >/dev/null
        cli check "login:$who" --cost $((RANDOM % 9 + 1)) >/dev/null
        cli check "upload:$who" --cost $((RANDOM % 15 + 1)) >/dev/null
    done
    rcli del ratescope:audit >/dev/null # the setting up is not the trail a picture shows
}

picture_keyview-big-log() {
    fresh
    cli policy set big --match 'big:*' --algo sliding-log --limit 150000 --window 10s \
        --description 'Batch ingest: 150,000 per 10 s' >/dev/null
    # A steady 5,000 requests/s for longer than the window, joined for 3 s by 8,000/s more:
    # some 75,000 entries in the window, drawn from the server's bucket counts (past 10,000).
    "$cli_bin" --url "$URL" burst big:ingest --algo sliding-log --limit 150000 --window 10s --rate 5000 \
        --duration 60s --connections 2 --pipeline 20 >/dev/null &
    local steady=$! # the CLI's own pid (not a subshell's), so that it can be ended
    sleep 13
    cli burst big:ingest --algo sliding-log --limit 150000 --window 10s --rate 8000 --duration 3s \
        --connections 2 --pipeline 20 >/dev/null
    shoot keyview-big-log --url "$URL" --open-key big:ingest --screenshot-after 1s
    kill -TERM "$steady" 2>/dev/null || true
    wait "$steady" || true
}

picture_keyview-shards() {
    fresh
    cli policy set rl --match 'rl:*' --algo sliding-log --limit 800 --window 1h --shards 8 \
        --description 'Tenant API: 800 per hour, over 8 shards' >/dev/null
    # 700 requests spread over the 8 shards by the hash of their ids (burst --shards).
    cli burst 'rl:{tenant42}' --algo sliding-log --limit 800 --window 1h --shards 8 --requests 700 >/dev/null
    shoot keyview-shards --url "$URL" --open-key 'rl:{tenant42}' --screenshot-after 1s
}

picture_burst() {
    fresh
    background_keys
    cli policy set test --match 'test:*' --algo sliding-log --limit 1000 --window 1m \
        --description 'Load tests' >/dev/null
    shoot burst --url "$URL" --burst 'test:api --requests 20000 --connections 8 --pipeline 16' --screenshot-after 1s
}

picture_burst-boundary() {
    fresh
    background_keys
    shoot burst-boundary --url "$URL" --boundary-test --screenshot-after 1s
}

picture_reset() {
    fresh
    background_keys
    cli policy set trial --match 'api:trial:*' --algo sliding-log --limit 100 --window 1h \
        --description 'Trial accounts: 100 per hour' >/dev/null
    local i
    for i in $(seq 0 36); do
        cli check "api:trial:c$i" --cost $((i % 7 + 1)) >/dev/null
    done
    shoot reset --url "$URL" --reset 'api:trial:*' --screenshot-after 1s
}

picture_audit() {
    fresh
    background_keys
    local i
    for i in $(seq 0 11); do cli check "api:trial:c$i" >/dev/null; done
    cli --operator 'Carol (SRE)' --reason 'INC-2041: partner retries' policy set api --match 'api:*' \
        --algo sliding-log --limit 60 --window 1m --description 'Public API: 60 requests per minute per client' >/dev/null
    cli --operator 'Dana (support)' --reason 'TICKET-3107: acme batch import tonight' \
        override set api:acme --limit 200 --for 8h >/dev/null
    cli --operator eve --reason 'capacity check before release 4.2' policy set test --match 'test:*' \
        --algo sliding-log --limit 1000 --window 1m >/dev/null
    cli --operator eve --reason 'capacity check before release 4.2' burst test:api --algo sliding-log --limit 1000 \
        --window 1m --requests 5000 --connections 2 --pipeline 16 >/dev/null
    cli --operator 'Dana (support)' --reason 'TICKET-3115: globex locked out after a password change' \
        reset login:globex --yes >/dev/null
    cli --operator bob --reason 'trial accounts renewed' reset --match 'api:trial:*' --yes >/dev/null
    cli --operator 'Carol (SRE)' --reason 'INC-2041 resolved: back to 100 per minute' policy set api --match 'api:*' \
        --algo sliding-log --limit 100 --window 1m --description 'Public API: 100 requests per minute per client' >/dev/null
    shoot audit --url "$URL" --tab audit --screenshot-after 1s
}

needs_server=false
for n in "${names[@]}"; do
    [[ $(printf '%s\n' "${PICTURES[@]}" | grep "^$n|") == *"(demo)" ]] || needs_server=true
done
if $needs_server; then
    start_server
    echo "Private redis-server: pid $server_pid at $URL"
fi
failed=()
for n in "${names[@]}"; do
    # Each picture in a subshell that stops at its first failure (and ends what it started),
    # waited for so that a signal reaches the trap at once.
    (
        set -e
        trap 'p=$(jobs -p); [ -z "$p" ] || kill -TERM $p 2>/dev/null; wait' EXIT
        trap 'exit 143' TERM
        "picture_$n"
    ) &
    child=$!
    rc=0
    wait "$child" || rc=$?
    child=
    [ $rc -eq 0 ] || failed+=("$n")
done
stop_server
if [ ${#failed[@]} -gt 0 ]; then
    echo "pictures.sh: not rendered in full: ${failed[*]}" >&2
    exit 1
fi
echo "Rendered ${#names[@]} picture(s) into $out"
