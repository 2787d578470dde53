#!/usr/bin/env bash
# A soak under failover: a Redis Sentinel group (one master, two replicas, three sentinels,
# all on 127.0.0.1, on free ports, in a temporary folder) under a busy console and the CLI's
# load, with failovers and one crash of the master along the way; then checks that no limiter
# admitted more than its limit in any window, and reports.
#
#   bash tools/soak.sh [MINUTES]         run for MINUTES (1 to 1440, default 10), then report
#   bash tools/soak.sh --keep [MINUTES]  keep the working folder afterwards (it is kept anyway
#                                        when a check fails): logs, decision records, the report
#   bash tools/soak.sh --help            this text
#
# During the run:
#   - the console (build/app/gui/ratescope, offscreen) on the sentinels' URL, with the 24 load
#     keys pinned to the Monitor (read every 100 ms) and the Hot tab shown, passing again
#     every second; its --event-log records each loss of the connection and its return;
#   - `ratescope-cli watch` on one key of each algorithm every 250 ms (--json; restarted when
#     it exits);
#   - six streams of back-to-back `ratescope-cli burst`s (fixed window, sliding counter,
#     sliding log, sliding buckets, token bucket, GCRA; each 4 shards, twice its limit's
#     rate), each recording every request with --decisions;
#   - SENTINEL FAILOVER at intervals scaled to the run (every 15 s in a 1-minute run, every
#     45 s from 3 minutes on), and once, midway, the master killed (SIGKILL) and started again
#     after the sentinels promoted a replica.
# Then tools/soak-check.py reads what was recorded and reports: the console's RSS over time
# (start, peak, end), errors by source (console, watch, burst), every reconnection and how
# long it took, the failovers, requests sent and admitted, and over-admissions per key and
# window. Asynchronous replication may lose the last writes at a failover, so a limiter may
# admit more than its limit within a few seconds of one: those are counted and reported apart;
# any other over-admission fails the run.
#
# Exit status: 0 every check held; 1 a check failed (or the run could not be carried out); 2
# bad arguments or a missing tool or binary; 130 interrupted. Every process it starts is
# stopped on any exit, and the whole run is bounded by MINUTES plus four minutes.
# RATESCOPE_BUILD names another build folder than build/ (its app/gui/ratescope and
# app/cli/ratescope-cli are used).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
refuse() {
  echo "soak.sh: $1" >&2
  echo "Try: bash tools/soak.sh --help" >&2
  exit 2
}

minutes=10 keep=0 given=""
for arg in "$@"; do
  case $arg in
  -h | --help)
    usage
    exit 0
    ;;
  --keep) keep=1 ;;
  -*) refuse "unknown option '$arg'" ;;
  *)
    [[ -z $given ]] || refuse "give MINUTES once (got '$given' and '$arg')"
    given=$arg
    [[ $arg =~ ^[0-9]{1,4}$ ]] && ((10#$arg >= 1 && 10#$arg <= 1440)) ||
      refuse "MINUTES must be a whole number from 1 to 1440, not '$arg'"
    minutes=$((10#$arg))
    ;;
  esac
done

build=${RATESCOPE_BUILD:-$root/build}
gui=$build/app/gui/ratescope
cli=$build/app/cli/ratescope-cli
for tool in redis-server redis-cli python3 setsid timeout; do
  command -v "$tool" >/dev/null || refuse "'$tool' is not on PATH (bash tools/install-deps.sh --tests installs what is missing)"
done
for bin in "$gui" "$cli"; do
  [[ -x $bin ]] || refuse "$bin is missing: build first (cmake --build build), or set RATESCOPE_BUILD"
done
have_setpriv=0
command -v setpriv >/dev/null && have_setpriv=1

# ---- the working folder, and stopping everything on every way out ------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/ratescope-soak.XXXXXX")
mkdir -p "$work/logs" "$work/bursts" "$work/decisions" "$work/xdg/config" "$work/xdg/data" "$work/xdg/cache" "$work/xdg/run"
chmod 700 "$work/xdg/run"
groups=() # every process started runs in a session of its own: its whole group is stopped

stop_groups() {
  local pid alive i
  for pid in "${groups[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for ((i = 0; i < 50; i++)); do
    alive=0
    for pid in "${groups[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${groups[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  groups=()
}

finish() {
  local rc=$?
  trap - EXIT INT TERM USR1
  stop_groups
  wait 2>/dev/null || true
  if ((keep || rc != 0)); then
    echo "soak: working folder kept: $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'echo "soak: interrupted" >&2; exit 130' INT
trap 'echo "soak: stopped (SIGTERM)" >&2; exit 143' TERM
trap 'echo "soak: the wall-clock limit was reached; stopping" >&2; exit 1' USR1

# NAME COMMAND...: started in a session (and process group) of its own, stdin from /dev/null,
# output to logs/NAME.out and logs/NAME.err; killed with the script if the script is killed.
spawn() {
  local name=$1
  shift
  if ((have_setpriv)); then
    setsid setpriv --pdeathsig TERM "$@" </dev/null >"$work/logs/$name.out" 2>"$work/logs/$name.err" &
  else
    setsid "$@" </dev/null >"$work/logs/$name.out" 2>"$work/logs/$name.err" &
  fi
  spawned=$!
  groups+=("$spawned")
}

now_us() { echo "${EPOCHREALTIME/./}"; }
say() { printf 'soak %s  %s\n' "$(date +%H:%M:%S)" "$*"; }
fail() {
  say "FAILED: $*" >&2
  exit 1
}
rcli() { timeout --foreground 5 redis-cli -h 127.0.0.1 -p "$1" "${@:2}" 2>&1; }

# The whole run is bounded: minutes, plus setup, draining and the report.
limit_s=$((minutes * 60 + 240))
spawn watchdog bash -c "sleep $limit_s; kill -USR1 $$"

# ---- the sentinel group ----------------------------------------------------------------

mapfile -t ports < <(python3 -c '
import socket
held = []
for _ in range(6):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
print("\n".join(str(s.getsockname()[1]) for s in held))
')
((${#ports[@]} == 6)) || fail "could not find six free loopback ports"
servers=("${ports[@]:0:3}")   # the first starts as the master
sentinels=("${ports[@]:3:3}")
declare -A pid_of

start_server() { # PORT
  local port=$1 dir=$work/redis-$1 i
  spawn "redis-$port" redis-server "$dir/redis.conf"
  pid_of[$port]=$spawned
  for ((i = 0; i < 100; i++)); do
    [[ $(rcli "$port" PING) == PONG ]] && return 0
    sleep 0.1
  done
  fail "redis-server on port $port did not start: $(tail -n 5 "$dir/redis.log" 2>/dev/null)"
}

for port in "${servers[@]}"; do
  dir=$work/redis-$port
  mkdir -p "$dir"
  {
    echo "port $port"
    echo "bind 127.0.0.1"
    echo "protected-mode yes"
    echo "dir $dir"
    echo "logfile $dir/redis.log"
    echo "daemonize no"
    echo 'save ""'
    echo "appendonly no"
    echo "repl-diskless-sync yes"
    echo "repl-diskless-sync-delay 0"
    [[ $port == "${servers[0]}" ]] || echo "replicaof 127.0.0.1 ${servers[0]}"
  } >"$dir/redis.conf"
  start_server "$port"
done
for port in "${sentinels[@]}"; do
  dir=$work/sentinel-$port
  mkdir -p "$dir"
  {
    echo "port $port"
    echo "bind 127.0.0.1"
    echo "dir $dir"
    echo "logfile $dir/sentinel.log"
    echo "daemonize no"
    echo "sentinel monitor mymaster 127.0.0.1 ${servers[0]} 2"
    echo "sentinel down-after-milliseconds mymaster 2000"
    echo "sentinel failover-timeout mymaster 10000"
    echo "sentinel parallel-syncs mymaster 2"
  } >"$dir/sentinel.conf"
  spawn "sentinel-$port" redis-server "$dir/sentinel.conf" --sentinel
done

# Until the replicas are in sync and every sentinel knows both replicas and both other sentinels.
group_ready() {
  local s
  for s in "${sentinels[@]}"; do
    [[ $(rcli "$s" SENTINEL REPLICAS mymaster | grep -c '^flags$') == 2 ]] || return 1
    [[ $(rcli "$s" SENTINEL SENTINELS mymaster | grep -c '^flags$') == 2 ]] || return 1
  done
  [[ $(rcli "$(current_master)" INFO replication | grep -c 'state=online') == 2 ]]
}
current_master() { rcli "${sentinels[0]}" SENTINEL GET-MASTER-ADDR-BY-NAME mymaster | sed -n 2p; }
for ((i = 0; ; i++)); do
  group_ready && break
  ((i < 300)) || fail "the sentinel group did not come together within 30 s"
  sleep 0.1
done
url="redis-sentinel://127.0.0.1:${sentinels[0]},127.0.0.1:${sentinels[1]},127.0.0.1:${sentinels[2]}/mymaster"
say "sentinel group up: master ${servers[0]}, replicas ${servers[1]} ${servers[2]}, sentinels ${sentinels[*]}"

# ---- policies, the load's keys ---------------------------------------------------------

# tag algorithm limit (of the group of 4 shards) window rate sub-buckets
streams=(
  "fw fixed-window 40 1s 80 -"
  "sc sliding-counter 40 1s 80 -"
  "sl sliding-log 40 2s 40 -"
  "sb sliding-buckets 40 2s 40 10"
  "tb token-bucket 40 1s 80 -"
  "gc gcra 40 1s 80 -"
)
shards=4
pins=() watched=()
for s in "${streams[@]}"; do
  read -r tag algo limit window rate buckets <<<"$s"
  extra=()
  [[ $buckets == - ]] || extra=(--sub-buckets "$buckets")
  timeout --foreground 20 "$cli" --url "$url" --operator soak policy set "soak-$tag" --match "soak:$tag:*" --algo "$algo" \
    --limit "$limit" --window "$window" --shards "$shards" "${extra[@]}" >>"$work/logs/setup.out" 2>&1 ||
    fail "could not set the policy soak-$tag: $(tail -n 3 "$work/logs/setup.out")"
  for ((k = 0; k < shards; k++)); do pins+=(--pin "soak:$tag:$k"); done
  watched+=("soak:$tag:0")
done

# ---- the console -----------------------------------------------------------------------

spawn console env QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" \
  XDG_CACHE_HOME="$work/xdg/cache" XDG_RUNTIME_DIR="$work/xdg/run" \
  "$gui" --url "$url" "${pins[@]}" --tab hot --hot-every 1s --monitor-interval 100ms --event-log "$work/console-events.jsonl"
console=$spawned
for ((i = 0; ; i++)); do
  grep -q '"state":"connected"' "$work/console-events.jsonl" 2>/dev/null && break
  kill -0 "$console" 2>/dev/null || fail "the console exited at start: $(tail -n 5 "$work/logs/console.err")"
  ((i < 300)) || fail "the console did not connect within 30 s"
  sleep 0.1
done
say "console up (pid $console), $((${#pins[@]} / 2)) keys pinned"

# ---- the load --------------------------------------------------------------------------

start_us=$(now_us)
end_us=$((start_us + minutes * 60 * 1000000))

# Back-to-back bursts (20 s each, the last one cut to the end), every request recorded.
burst_loop() { # CLI URL WORK END_US TAG ALGO LIMIT WINDOW RATE BUCKETS SHARDS
  local cli=$1 url=$2 work=$3 end_us=$4 tag=$5 algo=$6 limit=$7 window=$8 rate=$9 buckets=${10} shards=${11}
  local n=0 left d rc t0 extra=()
  [[ $buckets == - ]] || extra=(--sub-buckets "$buckets")
  trap 'trap - TERM; kill -TERM -- -$$ 2>/dev/null; exit 143' TERM # its burst goes with it
  while :; do
    left=$(((end_us - ${EPOCHREALTIME/./}) / 1000000))
    ((left >= 1)) || break
    d=$((left < 20 ? left : 20))
    n=$((n + 1))
    t0=${EPOCHREALTIME/./}
    rc=0
    timeout --foreground -k 5 $((d + 40)) "$cli" --url "$url" --json --operator soak burst "soak:$tag" --algo "$algo" --limit "$limit" \
      --window "$window" "${extra[@]}" --duration "${d}s" --rate "$rate" --connections 2 --shards "$shards" \
      --shard-by round-robin --decisions "$work/decisions/$tag-$n.csv" \
      >"$work/bursts/$tag-$n.json" 2>"$work/bursts/$tag-$n.err" &
    wait $! || rc=$?
    printf '{"tag":"%s","n":%d,"start_us":%s,"end_us":%s,"rc":%d}\n' "$tag" "$n" "$t0" "${EPOCHREALTIME/./}" "$rc" \
      >>"$work/bursts.jsonl"
    ((rc == 0)) || sleep 0.3
  done
}

# `watch` until the end, started again whenever it exits.
watch_loop() { # CLI URL WORK END_US KEY...
  local cli=$1 url=$2 work=$3 end_us=$4 left rc t0
  shift 4
  trap 'trap - TERM; kill -TERM -- -$$ 2>/dev/null; exit 143' TERM
  while :; do
    left=$(((end_us - ${EPOCHREALTIME/./}) / 1000000))
    ((left >= 1)) || break
    t0=${EPOCHREALTIME/./}
    rc=0
    timeout --foreground -k 5 $((left + 30)) "$cli" --url "$url" --json watch "$@" --interval 250ms --count $((left * 4)) \
      >>"$work/watch.jsonl" 2>>"$work/watch.err" &
    wait $! || rc=$?
    printf '{"start_us":%s,"end_us":%s,"rc":%d}\n' "$t0" "${EPOCHREALTIME/./}" "$rc" >>"$work/watch-runs.jsonl"
    ((rc == 0)) || sleep 0.3
  done
}

# The console's resident memory every 2 s, until it exits.
rss_loop() { # PID FILE
  local kb
  while [[ -r /proc/$1/status ]]; do
    kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null || true)
    [[ -n $kb ]] && echo "${EPOCHREALTIME/./},$kb" >>"$2"
    sleep 2
  done
}

loops=()
spawn rss bash -c "$(declare -f rss_loop); rss_loop \"\$@\"" _ "$console" "$work/rss.csv"
for s in "${streams[@]}"; do
  read -r tag algo limit window rate buckets <<<"$s"
  spawn "burst-$tag" bash -c "$(declare -f burst_loop); burst_loop \"\$@\"" _ "$cli" "$url" "$work" "$end_us" \
    "$tag" "$algo" "$limit" "$window" "$rate" "$buckets" "$shards"
  loops+=("$spawned")
done
spawn watch bash -c "$(declare -f watch_loop); watch_loop \"\$@\"" _ "$cli" "$url" "$work" "$end_us" "${watched[@]}"
loops+=("$spawned")
say "load running for $minutes min: ${#streams[@]} burst streams, watch on ${#watched[@]} keys"

# ---- failovers and the restart ---------------------------------------------------------

event() { # JSON fields of one event, with its kind
  printf '{%s}\n' "$1" >>"$work/events.jsonl"
}

# The master's port as every sentinel names it, when they agree.
agreed_master() {
  local s m first=""
  for s in "${sentinels[@]}"; do
    m=$(rcli "$s" SENTINEL GET-MASTER-ADDR-BY-NAME mymaster | sed -n 2p)
    [[ -n $m && ($first == "" || $m == "$first") ]] || return 1
    first=$m
  done
  echo "$first"
}
role() { rcli "$1" ROLE | head -n 1; }

failover() { # N
  local old new="" t0 t_ok="" t_promoted="" t_demoted="" tries=0 reply="" i s
  old=$(agreed_master) || old=$(current_master)
  t0=$(now_us)
  # Refused (NOGOODSLAVE) until a sentinel has fresh news of a replica: asked again, bounded.
  for ((i = 0; i < 60; i++)); do
    s=${sentinels[i % 3]}
    tries=$((tries + 1))
    reply=$(rcli "$s" SENTINEL FAILOVER mymaster)
    [[ $reply == OK ]] && break
    sleep 0.5
  done
  if [[ $reply != OK ]]; then
    event "\"kind\":\"failover\",\"n\":$1,\"ok\":false,\"start_us\":$t0,\"from\":$old,\"tries\":$tries,\"why\":\"${reply//\"/}\""
    say "failover $1: refused ($reply)"
    return
  fi
  t_ok=$(now_us)
  # Promoted: every sentinel names the new master, and it says it is one.
  for ((i = 0; i < 300; i++)); do
    new=$(agreed_master) || new=""
    if [[ -n $new && $new != "$old" && $(role "$new") == master ]]; then
      t_promoted=$(now_us)
      break
    fi
    sleep 0.1
  done
  # The old master takes writes until the sentinels make it a replica (their next look at it).
  for ((i = 0; i < 300 && ${#t_promoted}; i++)); do
    if [[ $(role "$old") == slave ]]; then
      t_demoted=$(now_us)
      break
    fi
    sleep 0.1
  done
  # Settled: both replicas copying the new master, before anything else happens.
  for ((i = 0; i < 300 && ${#t_demoted}; i++)); do
    [[ $(rcli "$new" INFO replication | grep -c 'state=online') == 2 ]] && break
    sleep 0.1
  done
  event "\"kind\":\"failover\",\"n\":$1,\"ok\":$([[ -n $t_demoted ]] && echo true || echo false),\"start_us\":$t0,\"accepted_us\":$t_ok,\"promoted_us\":${t_promoted:-0},\"demoted_us\":${t_demoted:-0},\"settled_us\":$(now_us),\"from\":$old,\"to\":${new:-0},\"tries\":$tries"
  if [[ -z $t_demoted ]]; then
    say "failover $1: accepted, not complete within 30 s ($([[ -n $t_promoted ]] && echo "$new promoted, $old still a master" || echo "no replica promoted"))"
  else
    say "failover $1: master $old -> $new, named by every sentinel after $(((t_promoted - t0) / 1000)) ms; $old a replica after $(((t_demoted - t0) / 1000)) ms"
  fi
}

restart_master() { # N: SIGKILL the master, let the sentinels promote a replica, start it again
  local old new="" t0 t_promoted="" t_started t_joined="" i
  old=$(agreed_master) || old=$(current_master)
  t0=$(now_us)
  kill -KILL "${pid_of[$old]}" 2>/dev/null || true
  wait "${pid_of[$old]}" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    new=$(agreed_master) || new=""
    if [[ -n $new && $new != "$old" && $(role "$new") == master ]]; then
      t_promoted=$(now_us)
      break
    fi
    sleep 0.1
  done
  start_server "$old"
  t_started=$(now_us)
  # It comes back as an empty master of its own until the sentinels make it a replica.
  for ((i = 0; i < 300; i++)); do
    if [[ $(role "$old") == slave ]] && rcli "$old" INFO replication | grep -q 'master_link_status:up'; then
      t_joined=$(now_us)
      break
    fi
    sleep 0.1
  done
  event "\"kind\":\"restart\",\"n\":$1,\"ok\":$([[ -n $t_promoted && -n $t_joined ]] && echo true || echo false),\"start_us\":$t0,\"promoted_us\":${t_promoted:-0},\"restarted_us\":$t_started,\"demoted_us\":${t_joined:-0},\"settled_us\":$(now_us),\"from\":$old,\"to\":${new:-0}"
  local promoted="no replica promoted within 30 s" joined="NOT a replica again within 30 s"
  [[ -z $t_promoted ]] || promoted="$new named by every sentinel after $(((t_promoted - t0) / 1000)) ms"
  [[ -z $t_joined ]] || joined="a replica again after $(((t_joined - t0) / 1000)) ms"
  say "restart $1: master $old killed; $promoted; $old started again, $joined"
}

# Every 15 s in a 1-minute run, up to every 45 s in longer ones; the first 12 s in, none in the
# last 15 s, the restart in the middle.
total_s=$((minutes * 60))
spacing=$(((total_s - 30) / 3))
((spacing < 15)) && spacing=15
((spacing > 45)) && spacing=45
offsets=()
for ((t = 12; t <= total_s - 15; t += spacing)); do offsets+=("$t"); done
restart_at=$((${#offsets[@]} / 2))

# The console is watched all along: if it exits, when and how goes into the report, and the
# run goes on (the load and the checks are worth having).
console_rc="" console_gone_us=0
console_watch() {
  if [[ -z $console_rc ]] && ! kill -0 "$console" 2>/dev/null; then
    console_gone_us=$(now_us)
    console_rc=0
    wait "$console" || console_rc=$?
    say "the console exited during the run (status $console_rc): $(tail -n 2 "$work/logs/console.err" | tr '\n' ' ')"
  fi
}
for i in "${!offsets[@]}"; do
  due=$((start_us + offsets[i] * 1000000))
  while (($(now_us) < due)); do
    console_watch
    sleep 0.2
  done
  if ((i == restart_at)); then
    restart_master $((i + 1))
  else
    failover $((i + 1))
  fi
done
while (($(now_us) < end_us)); do
  console_watch
  sleep 0.2
done

# ---- draining, then the console's last word --------------------------------------------

say "load ends; waiting for the last bursts"
for ((i = 0; i < 600; i++)); do
  alive=0
  for pid in "${loops[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  ((alive)) || break
  sleep 0.1
done
((alive == 0)) || say "some load did not end within 60 s of the end: stopped"
sleep 3 # the console's last readings
console_watch
if [[ -z $console_rc ]]; then
  # Its answer to SIGTERM: a clean exit, within 10 s.
  kill -TERM "$console"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$console" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$console" 2>/dev/null; then
    console_rc="still running 10 s after SIGTERM"
    kill -KILL -- "-$console" 2>/dev/null || true
  else
    console_rc=0
    wait "$console" || console_rc=$?
  fi
fi
stop_groups

# ---- the report ------------------------------------------------------------------------

{
  printf '{"minutes":%d,"start_us":%s,"end_us":%s,"shards":%d,"console_exit":"%s","console_gone_us":%s,"url":"%s",' \
    "$minutes" "$start_us" "$end_us" "$shards" "$console_rc" "$console_gone_us" "$url"
  printf '"servers":[%s],"sentinels":[%s],"streams":[' "$(IFS=,; echo "${servers[*]}")" "$(IFS=,; echo "${sentinels[*]}")"
  sep=""
  for s in "${streams[@]}"; do
    read -r tag algo limit window rate buckets <<<"$s"
    printf '%s{"tag":"%s","algo":"%s","limit":%d,"window":"%s","rate":%d,"buckets":"%s"}' \
      "$sep" "$tag" "$algo" "$limit" "$window" "$rate" "$buckets"
    sep=,
  done
  printf ']}\n'
} >"$work/meta.json"
rc=0
timeout --foreground 300 python3 "$root/tools/soak-check.py" "$work" | tee "$work/report.txt" || rc=${PIPESTATUS[0]}
exit "$rc"
