#!/usr/bin/env bash
# The main job: install what is needed, build the examples (Release), and run the bundled example networks.
# Then janusc imports the bundled quantized MobileNetV2-style model (tests/onnx/fixtures/mobilenet_v2_tiny.onnx),
# lowers it to one vnpu program and runs it on the simulator (--engine npu), then verifies it: both engines on the
# same inputs, every intermediate value compared bit for bit; then compiles it to a .jpk package and runs that.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
bash scripts/bootstrap.sh
cmake --preset gcc-release >/dev/null
cmake --build --preset gcc-release --target janus_example_quickstart janus_example_tiny_cnn \
    janus_example_npu_elementwise janus_example_npu_convnet janusc
./build/gcc-release/janus_example_quickstart
echo
./build/gcc-release/janus_example_tiny_cnn
echo
./build/gcc-release/janus_example_npu_elementwise
echo
./build/gcc-release/janus_example_npu_convnet
echo
fx=tests/onnx/fixtures
./build/gcc-release/janusc run "${fx}/mobilenet_v2_tiny.onnx" -i input="${fx}/mobilenet_v2_tiny.in0.npy" \
    -o build/example-out --engine npu
echo
./build/gcc-release/janusc verify "${fx}/mobilenet_v2_tiny.onnx" -i input="${fx}/mobilenet_v2_tiny.in0.npy"
echo
./build/gcc-release/janusc compile "${fx}/mobilenet_v2_tiny.onnx" -o build/example-out/mobilenet_v2_tiny.jpk
./build/gcc-release/janusc run build/example-out/mobilenet_v2_tiny.jpk -i input="${fx}/mobilenet_v2_tiny.in0.npy" \
    -o build/example-out/from-package
cmp build/example-out/logits.npy build/example-out/from-package/logits.npy
echo "the package's logits are the same bytes as the ONNX model's"
