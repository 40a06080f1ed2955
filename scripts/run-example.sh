#!/usr/bin/env bash
# The main job: install what is needed, build the examples (Release), and run the bundled example networks.
# (Once the janusc driver exists, this compiles and runs the bundled example model.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
bash scripts/bootstrap.sh
cmake --preset gcc-release >/dev/null
cmake --build --preset gcc-release --target janus_example_quickstart janus_example_tiny_cnn \
    janus_example_npu_elementwise janus_example_npu_convnet
./build/gcc-release/janus_example_quickstart
echo
./build/gcc-release/janus_example_tiny_cnn
echo
./build/gcc-release/janus_example_npu_elementwise
echo
./build/gcc-release/janus_example_npu_convnet
