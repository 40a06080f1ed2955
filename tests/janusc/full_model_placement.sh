#!/usr/bin/env bash
# The placement of the full-size MobileNetV2-1.0 (224x224, QDQ int8) is a committed golden that may only improve
# (issue 25: "fallback is not a way out"): no node that lowers today may move to the host. The model is not
# committed (3.8 MB); scripts/make_onnx_models.py --full writes it deterministically (python3-onnx, installed by
# scripts/bootstrap.sh). `janusc compile --strict` must also pass on it: every quantized node runs on the NPU.
#   Usage: full_model_placement.sh JANUSC SOURCE_DIR WORK_DIR
#   Rewrite the golden (after a deliberate change whose commit says why): JANUS_UPDATE_GOLDEN=1 full_model_placement.sh ...
set -u
J=$1
SRC=$2
WORK=$3
GOLDEN=$SRC/tests/graph/placement/mobilenet_v2_224.txt
PY=/usr/bin/python3
MODEL=$WORK/mobilenet_v2_224.onnx
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$WORK" || fail "cannot create $WORK"
rm -f "$MODEL" "$WORK/mobilenet_v2_224.jpk" "$WORK/compile.out" "$WORK/compile.err" "$WORK/placement.txt"
"$PY" -c 'import onnx' 2>/dev/null ||
    fail "$PY cannot import onnx: install python3-onnx (bash scripts/bootstrap.sh installs it)"
"$PY" "$SRC/scripts/make_onnx_models.py" --full "$WORK" >/dev/null || fail "make_onnx_models.py --full $WORK failed"
[ -s "$MODEL" ] || fail "make_onnx_models.py --full did not write $MODEL"

# --strict: a quantized node on the host is an error (exit 2); the placement is printed before that check
"$J" compile "$MODEL" -o "$WORK/mobilenet_v2_224.jpk" --strict >"$WORK/compile.out" 2>"$WORK/compile.err"
rc=$?
# the placement block: "placement: N of T nodes on the NPU", then one "  host node ..." line per host node
awk '/^placement: / { on = 1; n++; print; next } on && /^  host node / { print; next } { on = 0 }
     END { if (n != 1) exit 1 }' "$WORK/compile.out" >"$WORK/placement.txt" ||
    { cat "$WORK/compile.out" "$WORK/compile.err" >&2; fail "janusc compile printed no single placement block"; }

if [ "${JANUS_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$WORK/placement.txt" "$GOLDEN" || fail "cannot write $GOLDEN"
    echo "wrote $GOLDEN"
fi
[ -f "$GOLDEN" ] || fail "$GOLDEN is missing; JANUS_UPDATE_GOLDEN=1 writes it"

status=0
if ! cmp -s "$WORK/placement.txt" "$GOLDEN"; then
    status=1
    echo "FAIL: the placement of the full MobileNetV2 differs from $GOLDEN" >&2
    echo "  golden: $(head -n 1 "$GOLDEN")" >&2
    echo "  now:    $(head -n 1 "$WORK/placement.txt")" >&2
    # compared by op and name (node indices shift when the graph changes): a host line only now is a node that
    # moved to the host (or whose reason changed); a line only in the golden is a node the NPU took over (an
    # improvement: rewrite the golden with JANUS_UPDATE_GOLDEN=1 and say so in the commit)
    key() { sed -n 's/^  host node [0-9]* /host /p' "$1" | sort; }
    key "$WORK/placement.txt" >"$WORK/host.now"
    key "$GOLDEN" >"$WORK/host.golden"
    comm -23 "$WORK/host.now" "$WORK/host.golden" |
        sed 's/^/  on the host now, not in the golden (a regression unless its commit says why): /' >&2
    comm -13 "$WORK/host.now" "$WORK/host.golden" |
        sed 's/^/  in the golden, no longer on the host (an improvement: JANUS_UPDATE_GOLDEN=1 records it): /' >&2
    cmp -s "$WORK/host.now" "$WORK/host.golden" && echo "  the same host nodes; the node count or indices changed" >&2
fi
if [ "$rc" -ne 0 ]; then
    status=1
    echo "FAIL: janusc compile --strict exited $rc (want 0: every quantized node of the full MobileNetV2 on the NPU)" >&2
    sed 's/^/  stderr: /' "$WORK/compile.err" >&2
elif [ ! -s "$WORK/mobilenet_v2_224.jpk" ]; then
    status=1
    echo "FAIL: janusc compile --strict exited 0 but wrote no package" >&2
fi
[ "$status" -eq 0 ] && echo "ok: $(head -n 1 "$GOLDEN"); compile --strict passes"
exit "$status"
