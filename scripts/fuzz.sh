#!/usr/bin/env bash
# Builds pt2lab's libFuzzer harnesses (fuzz/: clang-14, ASan + UBSan) and runs
# each for SECONDS, side by side, niced. Idempotent: corpora persist in
# build/fuzz/corpus/<harness> and grow run after run; seeds come from
# assets/graphs, assets/fx and tests/corpus every time.
#   scripts/fuzz.sh                 30 s per harness (what scripts/test.sh runs)
#   scripts/fuzz.sh 3600            an hour each
#   scripts/fuzz.sh 600 drop zip    some harnesses only (zip, export_json, drop)
#   PT2LAB_FUZZ_SEED=1 ...          libFuzzer's -seed (scripts/test.sh fixes it; default random)
#   scripts/fuzz.sh --build-only    configure and build only (scripts/test.sh does it
#                                   beside the single-threaded assets suite)
# Prints executions, coverage and corpus size per harness. A crash, leak,
# sanitizer report or timeout is saved in build/fuzz/crashes/<harness>/ and
# makes the script fail: add the input to tools/make_corpus.py as a bad file
# with the message it must give, then fix the code.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_ONLY=
if [ "${1:-}" = "--build-only" ]; then BUILD_ONLY=1; shift; fi
SECONDS_EACH=${1:-30}
shift || true
HARNESSES=${*:-"zip export_json drop"}
OUT=$ROOT/build/fuzz
JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf '[fuzz] %s\n' "$*"; }

command -v clang++-14 >/dev/null || { say "clang++-14 missing (scripts/deps.sh installs it)"; exit 1; }
cmake -S fuzz -B "$OUT" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
    { say "configure failed"; exit 1; }
nice cmake --build "$OUT" -j"$JOBS" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; say "build failed"; exit 1; }
[ -n "$BUILD_ONLY" ] && { say "built"; exit 0; }

# Seed folders, one per harness (rebuilt every run; the corpora they feed are kept).
SEEDS=$OUT/seeds
seed_zip() {
    cp assets/graphs/*.pt2 tests/corpus/bad/*.pt2 tests/corpus/good/*.pt2 "$1/"
}
seed_drop() {
    cp assets/graphs/*.pt2 assets/fx/*.json tests/corpus/bad/* tests/corpus/good/* "$1/"
}
seed_export_json() {
    cp tests/corpus/bad/*.json tests/corpus/good/*.json "$1/"
    # The model.json of every archive that has one.
    python3 - "$1" assets/graphs/*.pt2 tests/corpus/good/*.pt2 <<'PY'
import os, sys, zipfile
out = sys.argv[1]
for path in sys.argv[2:]:
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            if n.endswith(".json") and ("models/" in n or "serialized_exported_program" in n):
                with open(os.path.join(out, os.path.basename(path) + "." + n.replace("/", "_")), "wb") as f:
                    f.write(z.read(n))
PY
}
for h in $HARNESSES; do
    case "$h" in zip|export_json|drop) ;; *) say "unknown harness $h (zip, export_json, drop)"; exit 2 ;; esac
    rm -rf "${SEEDS:?}/$h" && mkdir -p "$SEEDS/$h" && "seed_$h" "$SEEDS/$h"
done

declare -A MAXLEN=([zip]=1048576 [export_json]=262144 [drop]=262144)
SEED_OPT=()
[ -n "${PT2LAB_FUZZ_SEED:-}" ] && SEED_OPT=(-seed="$PT2LAB_FUZZ_SEED")
# The harnesses run side by side (each is one process, one core), each for
# SECONDS_EACH of wall time; then each one's line, in order.
run_harness() { # harness: runs it, leaves its summary line in $OUT/$h.line and its status in $OUT/$h.rc
    local h=$1 corpus=$OUT/corpus/$1 crashes=$OUT/crashes/$1 log=$OUT/$1.log
    mkdir -p "$corpus" "$crashes"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        nice "$OUT/fuzz_$h" "$corpus" "$SEEDS/$h" -max_total_time="$SECONDS_EACH" -timeout=20 \
        -rss_limit_mb=2560 -max_len="${MAXLEN[$h]}" -print_final_stats=1 \
        "${SEED_OPT[@]}" -artifact_prefix="$crashes/" >"$log" 2>&1
    local rc=$? execs cov ft units line found slow
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    units=$(find "$corpus" -type f | wc -l)
    line=$(printf '%-12s %9s execs  cov %6s  ft %7s  corpus %6s  %ss' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$units" "$SECONDS_EACH")
    # crash-, leak-, timeout-, oom- files are findings; slow-unit- files (over 10 s
    # once, e.g. on a busy machine) are only listed.
    found=$(find "$crashes" -type f ! -name 'slow-unit-*' | wc -l)
    slow=$(find "$crashes" -type f -name 'slow-unit-*' | wc -l)
    [ "$slow" -ne 0 ] && line="$line  ($slow slow units kept in $crashes)"
    if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
        line="$line  FOUND: $(find "$crashes" -type f ! -name 'slow-unit-*' | head -3 | tr '\n' ' ')"
        line="$line"$'\n'"$(grep -m3 -E 'ERROR|runtime error|SUMMARY|timeout' "$log" | sed 's/^/    /')"
        rc=1
    fi
    printf '%s\n' "$line" >"$OUT/$h.line"
    echo $rc >"$OUT/$h.rc"
}
for h in $HARNESSES; do
    rm -f "$OUT/$h.line" "$OUT/$h.rc"
    say "$h: ${SECONDS_EACH}s (log: $OUT/$h.log)"
    run_harness "$h" &
done
wait
FAILED=0
printf '\n'
for h in $HARNESSES; do
    cat "$OUT/$h.line" 2>/dev/null || echo "$h: no result"
    [ "$(cat "$OUT/$h.rc" 2>/dev/null)" = 0 ] || FAILED=1
done
exit $FAILED
