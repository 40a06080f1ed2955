#pragma once
// What the graph tests share: a graph from IR text, a lowering, and the ONNX fixtures (tests/onnx/fixtures,
// scripts/make_onnx_models.py): every fixture's name, and one fixture read, imported and optimized by the default
// pass pipeline. Paths are relative to tests/ (the tests' working directory).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <janus/graph/import_onnx.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/onnx/model.hpp>

#include "kernels.hpp"

namespace janus_test {

/// The graph of IR `text` (the test fails when it does not parse); `name` names it in messages.
inline janus::graph::Graph parsed(const std::string& text, const std::string& name = "t.ir") {
    auto g = janus::graph::parse(text, name);
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    return std::move(*g);
}

/// `g` lowered with host fallback (the test fails when the lowering fails as a whole).
inline janus::graph::LoweredGraph lowered(const janus::graph::Graph& g, bool keep_intermediates = false) {
    auto l = janus::graph::lower_graph(g, janus::graph::LowerOptions{keep_intermediates});
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    return std::move(*l);
}

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
