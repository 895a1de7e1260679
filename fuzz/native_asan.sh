#!/bin/sh
# The sanitizer campaign of fuzz_native.py (docs/native.md, "Sanitizer fuzzing").
#   fuzz/native_asan.sh [RUNS]      # default 10,000,000 executions, restarted after a finding
#   TARGET=events fuzz/native_asan.sh 1000000   # fuzz_events.py (the C event path) instead
#   TARGET=fastfeed fuzz/native_asan.sh 1000000 # fuzz_fastfeed.py (the C feed and ready path)
# Builds the AddressSanitizer + UndefinedBehaviorSanitizer extension into build/asan (the
# normal in-place build is untouched), then runs the target against it with the sanitizer
# runtime preloaded. Findings go to fuzz/corpus-findings/, logs to fuzz/corpus-logs/.
# BUILD=build/asan-events (say) builds elsewhere, so that two campaigns can run at once.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
RUNS=${1:-10000000}
TARGET=${TARGET:-native}
BUILD=${BUILD:-build/asan}
CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
LDFLAGS="-fsanitize=address,undefined" \
    "$PYTHON" setup.py -q build_ext --force --build-lib "$BUILD" --build-temp "$BUILD-temp"
mkdir -p "fuzz/corpus-$TARGET" fuzz/corpus-findings fuzz/corpus-logs
SEEDS=fuzz/corpus-seeds/$TARGET
if [ "$TARGET" = native ]; then
    "$PYTHON" fuzz/native_seeds.py
elif [ "$TARGET" = fastfeed ]; then  # fuzz_assembler.py's records: seeds.py makes them
    "$PYTHON" fuzz/seeds.py
    SEEDS=fuzz/corpus-seeds/assembler
else
    "$PYTHON" "fuzz/fuzz_$TARGET.py" --seeds "$SEEDS"
fi
done_runs=0
attempt=0
while [ "$done_runs" -lt "$RUNS" ] && [ "$attempt" -lt 20 ]; do
    log=fuzz/corpus-logs/$TARGET-asan-$attempt.log
    status=0
    env PYTHONMALLOC=malloc \
        LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
        ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=64:abort_on_error=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        TOOLSTITCH_NATIVE_SO="$PWD/$BUILD/toolstitch/_native.abi3.so" \
        "$PYTHON" "fuzz/fuzz_$TARGET.py" "fuzz/corpus-$TARGET" "$SEEDS" \
        -keep_seed=1 -runs=$((RUNS - done_runs)) -max_len=256 -timeout=20 -rss_limit_mb=3072 \
        -artifact_prefix=fuzz/corpus-findings/ -print_final_stats=1 >"$log" 2>&1 || status=$?
    ran=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    done_runs=$((done_runs + ${ran:-0}))
    echo "attempt $attempt: exit $status, $ran executions, $done_runs in all"
    attempt=$((attempt + 1))
    [ "$status" -eq 0 ] && break
done
