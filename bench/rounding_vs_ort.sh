#!/usr/bin/env bash
# janusc's requantization rounding modes against ONNX Runtime on the full-size MobileNetV2-1.0 (224x224, QDQ int8,
# random weights): seeded images through ORT with --opt disabled (ONNX's float semantics of every QDQ pair) and
# --opt all (ORT's fused integer kernels), and through `janusc run --engine ref --rounding MODE` for every mode;
# one markdown table per mode: the dequantized logits against each ORT mode in output LSB (the output's scale),
# the share of logits that differ, and top-1 agreement. The NPU engine is run for the first mode and must give the
# reference engine's bytes. A janusc without --rounding is measured in its one (default) mode.
#   bash bench/rounding_vs_ort.sh [BUILD_DIR [MODEL.onnx]]   (default build/gcc-release; the model is generated)
#   IMAGES=N (default 8): images 1..N, numpy default_rng(seed) uniform [-1, 1) float32
#   ORT_DIR (default build/ort): ONNX Runtime set up from ../shared/ort (README there); copied and installed here
#   when missing. Needs /usr/bin/python3 with numpy and onnx (python3-onnx), and node.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${root}/build/gcc-release}"
model="${2:-}"
images="${IMAGES:-8}"
ort="${ORT_DIR:-${root}/build/ort}"
out="${root}/build/rounding-vs-ort"
py=/usr/bin/python3
J="${build}/janusc"
die() { echo "rounding_vs_ort.sh: $*" >&2; exit 1; }

[[ -x "${J}" ]] || die "${J} not found: build it (cmake --build ${build} --target janusc)"
[[ "${images}" =~ ^[1-9][0-9]*$ ]] || die "IMAGES must be a positive integer, not '${images}'"
"${py}" -c 'import numpy, onnx' 2>/dev/null || die "${py} needs numpy and onnx (apt-get install python3-onnx)"
command -v node >/dev/null || die "node not found (ONNX Runtime runs under node)"
if [[ ! -d "${ort}/node_modules/onnxruntime-node" ]]; then
  shared="$(cd "${root}/.." && pwd)/shared/ort"
  [[ -f "${shared}/ort_run.js" ]] || die "no ONNX Runtime in ${ort} and no ${shared} to copy it from"
  echo "setting up ONNX Runtime in ${ort} (from ${shared})" >&2
  rm -rf "${ort}" && mkdir -p "$(dirname "${ort}")" && cp -r "${shared}" "${ort}"
  (cd "${ort}" && npm ci --silent) || die "npm ci in ${ort} failed"
fi

# the previous run's inputs and outputs (not the model: MODEL.onnx may be the one generated here before)
rm -rf "${out}/in" "${out}"/ort-* "${out}"/ref-* "${out}"/npu-*
mkdir -p "${out}/in"
if [[ -z "${model}" ]]; then
  "${py}" "${root}/scripts/make_onnx_models.py" --full "${out}" >/dev/null
  model="${out}/mobilenet_v2_224.onnx"
fi
[[ -f "${model}" ]] || die "${model}: no such model"

# the rounding modes this janusc accepts (the flag lands separately; without it, the default mode only)
if "${J}" run --help 2>&1 | grep -q -- '--rounding'; then
  modes=(double single half-even)
else
  modes=(default)
  echo "note: ${J} has no --rounding option; measuring its default rounding only" >&2
fi
rounding() { [[ "$1" == default ]] || printf '%s\n' --rounding "$1"; }

# the single graph input and its shape, from the model
read -r input shape < <("${py}" - "${model}" <<'EOF'
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
init = {t.name for t in m.graph.initializer}
ins = [i for i in m.graph.input if i.name not in init]
if len(ins) != 1:
    sys.exit(f"{sys.argv[1]}: expected one graph input, found {len(ins)}")
dims = [d.dim_value for d in ins[0].type.tensor_type.shape.dim]
if any(d <= 0 for d in dims):
    sys.exit(f"{sys.argv[1]}: input {ins[0].name} has a symbolic or zero dimension: {dims}")
print(ins[0].name, ",".join(map(str, dims)))
EOF
)
[[ -n "${input}" && -n "${shape}" ]] || die "${model}: cannot read its input"
"${py}" - "${out}/in" "${images}" "${shape}" <<'EOF'
import sys, numpy as np
d, n, shape = sys.argv[1], int(sys.argv[2]), tuple(int(s) for s in sys.argv[3].split(","))
for seed in range(1, n + 1):
    np.save(f"{d}/{seed}.npy", np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))
EOF

echo "model ${model} (input ${input} [${shape}]), ${images} images, modes: ${modes[*]}" >&2
for ((s = 1; s <= images; s++)); do
  x="${input}=${out}/in/${s}.npy"
  for opt in disabled all; do
    node "${ort}/ort_run.js" run "${model}" -i "${x}" -o "${out}/ort-${opt}/${s}" --opt "${opt}"
  done
  for mode in "${modes[@]}"; do
    "${J}" run "${model}" -i "${x}" -o "${out}/ref-${mode}/${s}" --engine ref $(rounding "${mode}") >/dev/null
  done
  # the NPU engine in the first mode: the same bytes as the reference engine
  "${J}" run "${model}" -i "${x}" -o "${out}/npu-${modes[0]}/${s}" --engine npu $(rounding "${modes[0]}") >/dev/null
  for f in "${out}/ref-${modes[0]}/${s}"/*.npy; do
    cmp -s "${f}" "${out}/npu-${modes[0]}/${s}/$(basename "${f}")" ||
      die "image ${s}: --engine npu and --engine ref differ in $(basename "${f}") (rounding ${modes[0]})"
  done
  echo "image ${s}/${images} done" >&2
done

# the source tree janusc was built from (the build directory may belong to another checkout than this script's)
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "${build}/CMakeCache.txt" 2>/dev/null)"
tree="$(git -C "${src:-${root}}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "## janusc rounding vs ONNX Runtime $(node "${ort}/ort_run.js" version)"
echo
echo "Model \`$(basename "${model}")\` (sha256 $(sha256sum "${model}" | cut -c1-16)), ${images} images" \
     "(numpy default_rng(1..${images}) uniform [-1, 1)), janusc built from tree ${tree}." \
     "--engine npu (${modes[0]}) == --engine ref on every image (bytes)."
echo
"${py}" "${root}/bench/rounding_stats.py" "${model}" "${out}" "${images}" "${modes[@]}"
