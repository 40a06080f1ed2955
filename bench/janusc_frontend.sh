#!/usr/bin/env bash
# janusc on the full-size MobileNetV2-1.0 (224x224, random weights, QDQ int8): the front end (reading the ONNX file,
# import, passes) with the reference run, then janusc compile and the compiled package run on the simulator; wall
# times per phase (--timings) and peak memory (GNU time).
#   bash bench/janusc_frontend.sh [BUILD_DIR]      (default build/gcc-release; needs /usr/bin/python3 with onnx)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${root}/build/gcc-release}"
out="${root}/build/bench-models"
mkdir -p "${out}"
/usr/bin/python3 "${root}/scripts/make_onnx_models.py" --full "${out}" >/dev/null
/usr/bin/python3 -c "import numpy as np; np.save('${out}/input.npy', \
np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32))"
ls -l "${out}/mobilenet_v2_224.onnx" | awk '{print "model bytes: " $5}'
for run in 1 2 3; do
  /usr/bin/time -f "run ${run}: wall %e s, peak RSS %M KB" "${build}/janusc" run "${out}/mobilenet_v2_224.onnx" \
      -i input="${out}/input.npy" -o "${out}/out" --engine ref --timings 2>&1 >/dev/null | sed 's/^/  /'
done
# The compiler (read, import, passes, lowering, package, write) and the compiled package on the simulator
# (package read, input conversion, simulation with the race detector, output conversion, write).
for run in 1 2 3; do
  /usr/bin/time -f "compile ${run}: wall %e s, peak RSS %M KB" "${build}/janusc" compile \
      "${out}/mobilenet_v2_224.onnx" -o "${out}/mobilenet_v2_224.jpk" --timings 2>&1 >/dev/null | sed 's/^/  /'
done
ls -l "${out}/mobilenet_v2_224.jpk" | awk '{print "package bytes: " $5}'
for run in 1 2 3; do
  /usr/bin/time -f "simulate ${run}: wall %e s, peak RSS %M KB" "${build}/janusc" run "${out}/mobilenet_v2_224.jpk" \
      -i input="${out}/input.npy" -o "${out}/out-npu" --timings 2>&1 >/dev/null | sed 's/^/  /'
done
cmp "${out}/out/logits.npy" "${out}/out-npu/logits.npy" && echo "npu logits == reference logits (bytes)"
"${build}/janusc" inspect "${out}/mobilenet_v2_224.jpk" | tail -n 1
