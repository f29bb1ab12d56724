#!/usr/bin/env bash
# Runs every pt2lab test suite, after installing what they need (idempotent).
# Prints each suite's time. Exit status is non-zero if any suite fails.
#   scripts/test.sh            all suites
#   PT2LAB_SUITES="native asan" scripts/test.sh   a subset
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

bash scripts/deps.sh || { echo "dependency installation failed"; exit 1; }
export NODE_PATH=/usr/share/nodejs
JOBS=$(nproc 2>/dev/null || echo 2)

SUITES=${PT2LAB_SUITES:-"format native asan wasm crossbuild assets fuzz browser"}
declare -a RESULTS=()
FAILED=0

# Making the torch roots is mostly downloading and unpacking: start it now, beside
# the compiling suites; the assets suite waits for it.
# (Each suite runs in a subshell, which cannot `wait` for this job: it leaves its exit
# status in $ROOTS_LOG.rc.)
ROOTS_LOG=$ROOT/build/torch_roots.log
ROOTS_STARTED=
rm -f "$ROOTS_LOG.rc"
if [[ " $SUITES " == *" assets "* ]] && bash scripts/torch_env.sh can >/dev/null 2>&1; then
    mkdir -p build
    (bash scripts/torch_env.sh ensure all >"$ROOTS_LOG" 2>&1; echo $? >"$ROOTS_LOG.rc") &
    ROOTS_STARTED=1
fi

run_suite() { # name, command...
    local name=$1; shift
    printf '\n=== %s ===\n' "$name"
    local start end rc
    start=$(date +%s.%N)
    ( "$@" )
    rc=$?
    end=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then RESULTS+=("$(printf '%-10s ok      %7ss' "$name" "$secs")");
    else RESULTS+=("$(printf '%-10s FAILED  %7ss' "$name" "$secs")"); FAILED=1; fi
}

suite_format() {
    local files
    files=$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h')
    # shellcheck disable=SC2086
    clang-format --dry-run -Werror $files
}
suite_native() {
    cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" &&
        ctest --preset native -j"$JOBS"
}
suite_asan() {
    cmake --preset asan >/dev/null && cmake --build --preset asan -j"$JOBS" &&
        ctest --preset asan -j"$JOBS"
}
suite_wasm() {
    cmake --preset wasm >/dev/null && cmake --build --preset wasm -j"$JOBS" &&
        ctest --preset wasm -j"$JOBS"
}
suite_crossbuild() {
    # The reference kernels give bit-identical results natively and in WebAssembly.
    local a=build/native/exec_digest.txt b=build/wasm/exec_digest.txt
    [ -f "$a" ] && [ -f "$b" ] || { echo "digests missing: run the native and wasm suites first"; return 1; }
    echo "native: $(cat "$a")"
    echo "wasm:   $(cat "$b")"
    cmp -s "$a" "$b"
}
# The fuzz harnesses' build (clang, the whole core again) runs beside the assets
# suite, which is mostly one Python process on one core; suite_fuzz waits for it.
FUZZ_BUILD_LOG=$ROOT/build/fuzz_build.log
FUZZ_BUILD_STARTED=
rm -f "$FUZZ_BUILD_LOG.rc"
start_fuzz_build() {
    [[ " $SUITES " == *" fuzz "* ]] || return 0
    mkdir -p build
    (bash scripts/fuzz.sh --build-only >"$FUZZ_BUILD_LOG" 2>&1; echo $? >"$FUZZ_BUILD_LOG.rc") &
    FUZZ_BUILD_STARTED=1
}

suite_assets() {
    # Every asset and golden is regenerated with real PyTorch (2.14.1 in a Debian sid root,
    # 2.6.0 in a trixie root for torch.ao's PT2E) and compared with the committed files.
    local why
    if ! why=$(bash scripts/torch_env.sh can); then
        if [ -n "${PT2LAB_REQUIRE_TORCH:-}" ]; then
            echo "FAILED: PT2LAB_REQUIRE_TORCH is set but real PyTorch cannot run here: $why"
            return 1
        fi
        echo "SKIPPED: regenerating the assets and goldens with real PyTorch 2.14.1 / 2.6.0"
        echo "  (make_assets, fx_cases, exec_reference, fx_edit_goldens, export_goldens,"
        echo "  pickle_goldens, pt2e_goldens, pt2e_zoo_goldens, lesson_goldens, zoo_models,"
        echo "  save_roundtrip, python_roundtrip, teacher_export_check):"
        echo "  $why. Checked without torch: tools/make_corpus.py only."
        python3 tools/make_corpus.py --check
        return
    fi
    if [ -n "$ROOTS_STARTED" ]; then
        while [ ! -s "$ROOTS_LOG.rc" ]; do sleep 2; done
        cat "$ROOTS_LOG"
        [ "$(cat "$ROOTS_LOG.rc")" = 0 ] || return 1
    else
        bash scripts/torch_env.sh ensure all || return 1
    fi
    local sid=(bash scripts/torch_env.sh run sid python3)
    "${sid[@]}" tools/make_assets.py --check &&
        "${sid[@]}" tools/fx_cases.py --check &&
        python3 tools/make_corpus.py --check &&
        "${sid[@]}" tools/exec_reference.py --check &&
        "${sid[@]}" tools/fx_edit_goldens.py --check &&
        "${sid[@]}" tools/export_goldens.py --check &&
        "${sid[@]}" tools/pickle_goldens.py --check &&
        "${sid[@]}" tools/gen_builtin_names.py --check &&
        bash scripts/torch_env.sh run trixie python3 tools/pt2e_goldens.py --check &&
        "${sid[@]}" tools/lesson_goldens.py --check &&
        bash scripts/torch_env.sh run trixie python3 tools/lesson_goldens.py --check &&
        "${sid[@]}" tools/zoo_models.py --check &&
        # after the zoo cache: GoogLeNet's torch.ao golden reads its weights from build/zoo
        bash scripts/torch_env.sh run trixie python3 tools/pt2e_zoo_goldens.py --check &&
        suite_zoo &&
        save_roundtrip &&
        python_roundtrip &&
        "${sid[@]}" tools/teacher_export_check.py
}

python_roundtrip() {
    # Copy as Python: after every lesson step, the script of each graph it changed, run by
    # torch 2.14.1 on the lesson's .pt2, prints str(gm.graph), gm.code and str(ep.graph)
    # exactly as pt2lab does (tools/python_roundtrip.py).
    cmake --build --preset native -j"$JOBS" --target pt2lab &&
        python3 tools/python_roundtrip.py write &&
        bash scripts/torch_env.sh run sid python3 tools/python_roundtrip.py check
}

save_roundtrip() {
    # What pt2lab saves, torch reads: every lesson graph and zoo export saved by pt2lab as
    # loaded, decomposed (both levels), prepared (refused) and converted; torch 2.14.1's
    # torch.export.load of each prints the graph and module code pt2lab prints and runs
    # to pt2lab's outputs; torch 2.6 refuses to export a prepared model, as pt2lab refuses.
    cmake --build --preset native -j"$JOBS" --target pt2lab &&
        python3 tools/save_roundtrip.py write --zoo &&
        bash scripts/torch_env.sh run sid python3 tools/save_roundtrip.py check &&
        bash scripts/torch_env.sh run trixie python3 tools/save_roundtrip.py refusal
}

suite_zoo() {
    # The model zoo tests on the cache tools/zoo_models.py just wrote (build/zoo, not in git),
    # torch.ao's PT2E of its CNNs ([pt2e_zoo]) among them: required here, where real torch made it.
    cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab_tests &&
        PT2LAB_REQUIRE_TORCH=1 build/native/tests/pt2lab_tests "[zoo]"
}

suite_fuzz() {
    # Each libFuzzer harness (fuzz/) for a short fixed time from a fixed seed, so that a
    # run here replays what it did on the last machine (as far as that machine got in
    # the time); scripts/fuzz.sh 3600 explores for an hour from a random seed.
    if [ -n "$FUZZ_BUILD_STARTED" ]; then
        while [ ! -s "$FUZZ_BUILD_LOG.rc" ]; do sleep 2; done
        cat "$FUZZ_BUILD_LOG"
        [ "$(cat "$FUZZ_BUILD_LOG.rc")" = 0 ] || return 1
    fi
    PT2LAB_FUZZ_SEED=${PT2LAB_FUZZ_SEED:-1} bash scripts/fuzz.sh "${PT2LAB_FUZZ_SECONDS:-30}"
}

suite_browser() {
    # The page in Debian's Chromium, headless (tests/e2e): dist/ from scratch, the
    # native CLI the expected values come from, playwright-core from package-lock.json.
    cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab &&
        bash scripts/build_web.sh && bash scripts/npm_deps.sh && node tests/e2e/run.js dist
}

for s in $SUITES; do
    [ "$s" = assets ] && start_fuzz_build
    run_suite "$s" "suite_$s"
done

printf '\n=== summary ===\n'
for r in "${RESULTS[@]}"; do echo "$r"; done
exit $FAILED
