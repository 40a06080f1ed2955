#!/usr/bin/env bash
# janusc's front end on the full-size MobileNetV2-1.0 (224x224, random weights, QDQ int8): reading the ONNX file,
# import, passes and the reference run, with wall times per phase and peak memory (GNU time).
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
