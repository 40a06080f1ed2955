#!/usr/bin/env bash
# janusc's time grows linearly (or n log n) with the node count (issue 26): compiling a 40,000-node Relu chain takes
# at most about 5x the time of a 10,000-node one (quadratic work would take 16x). Ratios, not absolute times, so the
# check holds on a slow or busy machine; bench/RESULTS.md records the absolute times. Three chains
# (scripts/make_chain_model.py): float Relus (the host section), QDQ Relus (the NPU lowering) and QDQ identity
# Reshapes (remove-identity rewires each reader).
#   chain_growth.sh JANUSC SOURCE_DIR       (needs /usr/bin/python3 with onnx: scripts/make_chain_model.py)
set -u
J=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
now() { date +%s.%N; }
# seconds COMMAND...: the wall time of the faster of two runs (a busy machine slows single runs); "failed" when the
# command does not exit 0 (this runs in a subshell: the caller counts the failure)
seconds() {
    local t0 t1 best=""
    for _ in 1 2; do
        t0=$(now)
        if ! "$@" >"$T/out" 2>"$T/err"; then
            echo "FAIL: $*" >&2
            sed 's/^/  stderr: /' "$T/err" | head -5 >&2
            echo failed
            return
        fi
        t1=$(now)
        best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { t = b - a; if (m != "" && m < t) t = m; printf "%.3f", t }')
    done
    echo "$best"
}
for kind in float qdq reshape; do
    for n in 10000 40000; do
        /usr/bin/python3 "$SRC/scripts/make_chain_model.py" "$n" "$T/$kind$n.onnx" --kind "$kind" || exit 1
    done
    # compile: read, import, passes, lowering, package (a float chain: all N nodes in the host section, which the
    # compiler parses back), write
    t10=$(seconds "$J" compile "$T/${kind}10000.onnx" -o "$T/${kind}10000.jpk")
    t40=$(seconds "$J" compile "$T/${kind}40000.onnx" -o "$T/${kind}40000.jpk")
    # the package read back: inspect parses the host section (float) or decodes the program (qdq)
    i10=$(seconds "$J" inspect "$T/${kind}10000.jpk")
    i40=$(seconds "$J" inspect "$T/${kind}40000.jpk")
    for what in compile inspect; do
        if [ $what = compile ]; then a=$t10 b=$t40; else a=$i10 b=$i40; fi
        if [ "$a" = failed ] || [ "$b" = failed ]; then
            fails=$((fails + 1))
            continue
        fi
        awk -v w="$what" -v k="$kind" -v a="$a" -v b="$b" \
            'BEGIN { printf "%s %s chain: 10000 nodes %.2f s, 40000 nodes %.2f s, ratio %.2f\n", w, k, a, b, b / (a + 1e-6) }'
        # at most about 5x (0.3 s of slack for the fixed costs of tiny times)
        if awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > 5 * a + 0.3) }'; then
            echo "FAIL: $what of a $kind chain grows faster than linearly: $b s for 40000 nodes, $a s for 10000" >&2
            fails=$((fails + 1))
        fi
    done
done
[ "$fails" = 0 ] && echo "chain growth: all within 5x" || echo "chain growth: $fails failures"
[ "$fails" = 0 ]
