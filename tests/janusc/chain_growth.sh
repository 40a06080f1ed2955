#!/usr/bin/env bash
# janusc's time grows linearly (or n log n) with the node count (issue 26): compiling a 40,000-node Relu chain takes
# at most about 5x the time of a 10,000-node one (quadratic work would take 16x). Ratios, not absolute times, so the
# check holds on a slow or busy machine (CPU time; a ratio over the limit is measured once more); bench/RESULTS.md
# records wall times. Three chains (scripts/make_chain_model.py): float Relus (the host section), QDQ Relus (the NPU
# lowering) and QDQ identity Reshapes (remove-identity rewires each reader).
#   chain_growth.sh JANUSC SOURCE_DIR       (needs /usr/bin/python3 with onnx: scripts/make_chain_model.py)
set -u
J=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
# seconds COMMAND...: the CPU time (user + system) of one run: CPU time rather than wall time, so other jobs on the
# machine (ctest -j, other builds) slow it less; "failed" when the command does not exit 0 (this runs in a subshell:
# the caller counts the failure)
seconds() {
    local TIMEFORMAT='%3U %3S'
    if ! { time "$@" >"$T/out" 2>"$T/err"; } 2>"$T/time"; then
        echo "FAIL: $*" >&2
        sed 's/^/  stderr: /' "$T/err" | head -5 >&2
        echo failed
        return
    fi
    awk '{ printf "%.3f", $1 + $2 }' "$T/time"
}
# at most about 5x: 5.5x + 0.3 s (linear work measures 3.9x to 4.9x here, up to 5.9x for a 0.2 s run beside two
# compiles on the same 2 cores: caches and page faults grow a little faster than the node count; quadratic work
# gives 16x)
too_slow() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b > 5.5 * a + 0.3) }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a < b ? a : b }'; }
# check WHAT KIND COMMAND-ARGS...: time COMMAND on the 10,000- and the 40,000-node file (the token {N} in the
# arguments becomes 10000 or 40000; braces, because mktemp's random directory name may hold a plain N); a ratio
# above the limit is measured once more (the faster run of each counts) before it fails, so a moment of load on a
# busy machine does not fail the test
check() {
    local what=$1 kind=$2 a b
    shift 2
    a=$(seconds "${@//\{N\}/10000}")
    b=$(seconds "${@//\{N\}/40000}")
    if [ "$a" = failed ] || [ "$b" = failed ]; then
        fails=$((fails + 1))
        return
    fi
    if too_slow "$a" "$b"; then
        a=$(min "$a" "$(seconds "${@//\{N\}/10000}")")
        b=$(min "$b" "$(seconds "${@//\{N\}/40000}")")
    fi
    awk -v w="$what" -v k="$kind" -v a="$a" -v b="$b" \
        'BEGIN { printf "%s %s chain: 10000 nodes %.2f s, 40000 nodes %.2f s (CPU), ratio %.2f\n",
                 w, k, a, b, b / (a + 1e-6) }'
    if too_slow "$a" "$b"; then
        echo "FAIL: $what of a $kind chain grows faster than linearly: $b s for 40000 nodes, $a s for 10000" >&2
        fails=$((fails + 1))
    fi
}
for kind in float qdq reshape; do
    for n in 10000 40000; do
        /usr/bin/python3 "$SRC/scripts/make_chain_model.py" "$n" "$T/$kind$n.onnx" --kind "$kind" || exit 1
    done
    # compile: read, import, passes, lowering, package (a float chain: all N nodes in the host section, which the
    # compiler parses back), write
    check compile $kind "$J" compile "$T/${kind}{N}.onnx" -o "$T/${kind}{N}.jpk"
    # the package read back: inspect parses the host section (float) or decodes the program (qdq)
    check inspect $kind "$J" inspect "$T/${kind}{N}.jpk"
    # verify: both engines with every intermediate value kept (the lowering's scratch arena holds them all)
    [ $kind = qdq ] && check verify $kind "$J" verify "$T/${kind}{N}.onnx"
done
[ "$fails" = 0 ] && echo "chain growth: all within about 5x" || echo "chain growth: $fails failures"
[ "$fails" = 0 ]
