#pragma once
// The packages the tests of tests/package/ share: `minimal()` (a halt, nothing else) and `sample()`, a small model
// that uses every part of the format: a program assembled from text, a weights image with every constant kind, the
// scratch region with persistent state and overlapping scratch, inputs and outputs with per-tensor and per-axis
// quantization, a padded NHWC layout behind an NCHW shape, every boundary conversion, a debug map and an extra
// (optional) section. Both are fixed: the goldens under tests/package/golden/ are their bytes.
#include <cstdint>
#include <string>
#include <vector>

#include <janus/package/package.hpp>
#include <janus/vnpu/asm.hpp>
#include <janus/vnpu/params.hpp>

namespace janus::package::testing {

inline Package minimal() {
    Package p;
    p.code = vnpu::assemble_words("halt\n", "minimal").value();
    return p;
}

inline const char* sample_program() {
    return "li r1, 0x100\n"
           "li r2, 0x80000\n"
           "li r3, 256\n"
           "li r4, 0x200\n"
           "dma.load r1, input, r0, 64 signal(e0)\n"
           "dma.load r4, weights, r3, 64 signal(e1)\n"
           "mac.cfg 4, 16, 16, 16\n"
           "mac.mm r2, r1, r4, -3 wait(e0)\n"
           "sync 0x0002, 0x0000\n"
           "vec.rq r1, r2, r4, 16, 4\n"
           "lut.apply r1, r1, 0, 64 signal(e2)\n"
           "dma.store output, r0, r1, 64 wait(e2)\n"
           "halt\n";
}

inline Package sample() {
    Package p;
    p.code = vnpu::assemble_words(sample_program(), "sample").value();
    p.weights.resize(448);
    for (std::size_t i = 0; i < p.weights.size(); ++i) p.weights[i] = static_cast<std::uint8_t>((i * 37 + 11) & 0xFF);
    p.buffers = {
        {"act.lut", BufferKind::lut, 0, 256},
        {"conv1.w", BufferKind::weights, 256, 64},
        {"conv1.b", BufferKind::bias, 320, 16},
        {"conv1.rq", BufferKind::rq_table, 336, static_cast<std::uint64_t>(vnpu::rq_table_bytes(2))},  // 2 channels
        {"add.ew", BufferKind::ew_table, 384, vnpu::ew_layout.size},
        {"pad.value", BufferKind::constant, 432, 16},
        {"rnn.h", BufferKind::state, 0, 64},       {"t0", BufferKind::scratch, 64, 128},
        {"t1", BufferKind::scratch, 128, 128},
    };
    p.scratch_bytes = 256;
    p.input_bytes = 272;
    p.output_bytes = 96;
    // NCHW [1, 3, 4, 4] float32 at the boundary, stored int8 NHWC with channels padded to 16
    p.inputs.push_back(
        {"image", DType::f32, DType::i8, {1, 3, 4, 4}, {256, 1, 64, 16}, {{0.0078125f}, {-3}, 0}, 0, 256});
    p.inputs.push_back({"mask", DType::u8, DType::u8, {5}, {1}, {}, 256, 16});
    p.outputs.push_back({"logits", DType::f32, DType::i8, {1, 10}, {16, 1}, {{0.25f}, {0}, 0}, 0, 16});
    p.outputs.push_back({"features",
                         DType::i8,
                         DType::i8,
                         {1, 2, 2, 3},
                         {64, 32, 16, 1},
                         {{0.5f, 0.25f, 0.125f}, {0, 1, -1}, 3},
                         16,
                         64});
    p.outputs.push_back({"argmax", DType::i64, DType::i32, {1}, {4}, {}, 80, 16});
    p.debug = {{4, 6, "", "Setup"}, {6, 10, "conv1", "Conv"}, {10, 11, "act", "Sigmoid"}, {11, 12, "out", "Identity"}};
    p.extra.push_back({4096, {'s', 'a', 'm', 'p', 'l', 'e', ' ', 'n', 'o', 't', 'e', 's'}});
    return p;
}

}  // namespace janus::package::testing
