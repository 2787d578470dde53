#!/usr/bin/env bash
# Fuzzes the parsers of outside input in core/ with libFuzzer: builds the targets of tests/fuzz
# (RATESCOPE_FUZZ: clang, the core compiled with AddressSanitizer + UndefinedBehaviorSanitizer)
# in build-fuzz/, then runs each target in turn on a copy of its seeds (tests/fuzz/corpus/<name>/).
#
#   bash tools/fuzz.sh [SECONDS]          every target for SECONDS (default 60) each
#   bash tools/fuzz.sh --only glob,url 300  only those targets
#   bash tools/fuzz.sh --merge [SECONDS]  afterwards, add to tests/fuzz/corpus/ the inputs that
#                                         found new coverage (minimised by libFuzzer's -merge)
#   bash tools/fuzz.sh --help             this text
#
# Targets: glob (syntax check and matching, which must stay O(pattern x key): an input running
# past the per-input timeout is a finding), url (connection URLs, host:port), duration (durations,
# strict integers, text and namespace checks), csvtrace (CSV traces and burst timelines), member
# (sliding-log members, scores and score bounds), recognition (classify() of a key from sample
# replies), readers (every other library's format: match, read, usage, state), resp (the RESP
# parser, replies, the command encoder). Each states its own properties in its header comment.
#
# Prints, per target, the runs executed, the coverage (edges) at start and end and the inputs that
# found new coverage; for a crash, a timeout (FUZZ_TIMEOUT seconds per input, default 10), an
# out-of-memory (FUZZ_RSS_MB, default 2048), a sanitizer report or a broken property: what it was
# and the reproducer, kept in build-fuzz/findings/<target>/ (run it again with
# `build-fuzz/tests/fuzz/fuzz_<target> FILE`). Exits 1 when any target found something. The repo's
# seeds are never changed without --merge. JOBS (default 2) is the build's parallelism; the build
# compiles through ccache like the others (tools/ccache-env.sh) and leaves out the console, the
# CLI, the tests, the benchmarks and the man pages.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
seconds=60
merge=0
only=""
while [ $# -gt 0 ]; do
  case $1 in
    --merge) merge=1 ;;
    --only) only=${2:?--only needs target names}; shift ;;
    -h|--help) usage; exit 0 ;;
    ''|*[!0-9]*) echo "fuzz.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    *) seconds=$1 ;;
  esac
  shift
done
[ "$seconds" -ge 1 ] || { echo "fuzz.sh: SECONDS must be at least 1" >&2; exit 2; }

bash tools/install-deps.sh --tests
source tools/ccache-env.sh

build=build-fuzz
# -O1: libFuzzer's usual trade of speed against stack traces; Debug keeps Q_ASSERT on.
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
      -DRATESCOPE_FUZZ=ON -DRATESCOPE_BUILD_TESTS=OFF -DRATESCOPE_BUILD_GUI=OFF -DRATESCOPE_BUILD_BENCH=OFF \
      -DRATESCOPE_BUILD_MANPAGES=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_targets

targets=$(sed -n 's/^set(RATESCOPE_FUZZ_TARGETS \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt)
if [ -n "$only" ]; then
  for name in ${only//,/ }; do
    [[ " $targets " == *" $name "* ]] || { echo "fuzz.sh: no target $name (targets: $targets)" >&2; exit 2; }
  done
  targets=${only//,/ }
fi

# Leaks: Qt's one-time allocations are not ours to chase (as in tools/test.sh's sanitizer run).
export ASAN_OPTIONS=detect_leaks=0
export UBSAN_OPTIONS=print_stacktrace=1
found=0
summary=()
for name in $targets; do
  work="$build/corpus/$name" findings="$build/findings/$name" log="$build/findings/$name.log"
  rm -rf "$work" "$findings"
  mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$name"/* "$work"/
  echo "== fuzz_$name: ${seconds}s"
  status=0
  "$build/tests/fuzz/fuzz_$name" "$work" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" \
      -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/" \
      >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov0=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$log" | head -1)
  cov1=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
  line=$(printf '%-12s %10s runs  coverage %5s -> %-5s edges  %4s new inputs' "$name" "${runs:-?}" "${cov0:-?}" "${cov1:-?}" "${added:-?}")
  reproducers=$(find "$findings" -type f | sort)
  if [ $status -ne 0 ] || [ -n "$reproducers" ]; then
    found=1
    what=$(grep -m1 -E '^(==[0-9]+== ?ERROR|SUMMARY|FUZZ PROPERTY FAILED|.*runtime error)' "$log" || echo "exit status $status")
    line+="  FOUND: $what"
    for r in $reproducers; do line+=$'\n'"             reproducer: $r"; done
    line+=$'\n'"             log: $log"
    grep -m8 -E 'ERROR|runtime error|FUZZ PROPERTY|#[0-9]+ 0x' "$log" | sed 's/^/    /' || true
  fi
  summary+=("$line")
  if [ $merge -eq 1 ] && [ $status -eq 0 ]; then
    "$build/tests/fuzz/fuzz_$name" -merge=1 tests/fuzz/corpus/"$name" "$work" >>"$log" 2>&1
    echo "   merged into tests/fuzz/corpus/$name: $(ls tests/fuzz/corpus/"$name" | wc -l) inputs"
  fi
done

echo
echo "Fuzzing summary (${seconds}s per target, ASan + UBSan):"
printf '%s\n' "${summary[@]}"
if [ $found -ne 0 ]; then
  echo "fuzz.sh: findings above; each reproducer runs again with build-fuzz/tests/fuzz/fuzz_<target> FILE" >&2
  exit 1
fi
echo "No crash, hang, sanitizer report or broken property."
