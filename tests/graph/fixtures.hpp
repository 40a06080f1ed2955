#pragma once
// The ONNX fixtures (tests/onnx/fixtures, scripts/make_onnx_models.py) as the graph tests use them: every fixture's
// name, and one fixture read, imported and optimized by the default pass pipeline. Paths are relative to tests/ (the
// tests' working directory).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <janus/graph/import_onnx.hpp>
#include <janus/graph/passes.hpp>
#include <janus/onnx/model.hpp>

#include "kernels.hpp"

namespace janus_test {

/// Every fixture, by file stem.
inline const std::vector<std::string>& fixture_stems() {
    static const std::vector<std::string> stems = {
        "integer_ops",      "mobilenet_v2_tiny", "qdq_conv_bn",           "qdq_conv_relu",
        "qdq_conv_relu_shared", "qdq_float_middle", "qdq_float_tail",      "qdq_softmax_head",
        "qdq_uint8_add_sigmoid", "qdq_unet_tiny",  "qop_conv_matmul"};
    return stems;
}

/// Fixture `stem` read, imported and run through the default pipeline with `ctx` (the registry's kernels, the
/// default rounding, unless given).
inline janus::graph::Graph optimized_fixture(const std::string& stem,
                                             janus::graph::PassContext ctx = {janus_tools::kernel_by_name}) {
    const std::string path = "onnx/fixtures/" + stem + ".onnx";
    const auto m = janus::onnx::read_model_file(path);
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message()));
    auto g = janus::graph::import_onnx(*m, path);
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    janus::graph::PassLog log;
    const auto st = janus::graph::run_passes(*g, janus::graph::default_pipeline, log, ctx);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    return std::move(*g);
}

}  // namespace janus_test
