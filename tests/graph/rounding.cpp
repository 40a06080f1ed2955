// Rounding as a choice (docs/numerics.md "Rounding as a choice"): the rounding of every requantization is a value
// that the passes, each op's plan, the host kernels, the emitted program and the package carry. Rule enforced here:
// under each of the three modes both engines compute the same bytes on every fixture (no kernel, emitter or pass
// keeps a rounding of its own), the modes really differ (a mode that were ignored anywhere would make one engine
// follow and the other not, or make the modes agree), and a package runs its host nodes with the rounding it was
// compiled with.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/package/package.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace rounding_test {

using namespace janus;
using numeric::Rounding;

constexpr Rounding modes[] = {Rounding::round_double, Rounding::round_single, Rounding::round_half_even};

/// A fixture imported and optimized with the passes running their kernels in `mode`.
graph::Graph fixture(const std::string& stem, Rounding mode) {
    graph::PassContext ctx{janus_tools::kernel_by_name};
    ctx.rounding = mode;
    return janus_test::optimized_fixture(stem, ctx);
}

graph::LoweredGraph lowered(const graph::Graph& g, Rounding mode, bool keep = false) {
    graph::LowerOptions opt;
    opt.keep_intermediates = keep;
    opt.rounding = mode;
    auto l = graph::lower_graph(g, opt);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    return std::move(*l);
}

std::vector<std::byte> bytes_of(const Tensor& t) { return *t.clone().storage; }

std::vector<std::vector<std::byte>> reference(const graph::Graph& g, std::span<const Tensor> in, Rounding mode) {
    const auto r = graph::run_reference(g, in, janus_tools::kernel_by_name, {}, ops::OpContext{true, mode});
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
    std::vector<std::vector<std::byte>> out;
    for (const Tensor& t : *r) out.push_back(bytes_of(t));
    return out;
}

TEST_CASE("rounding: under each mode both engines agree on every value of every fixture, and the modes differ") {
    std::set<std::string> differing;  // fixtures whose outputs depend on the mode
    for (const std::string& stem : janus_test::fixture_stems()) {
        CAPTURE(stem);
        std::vector<std::vector<std::vector<std::byte>>> per_mode;
        for (const Rounding mode : modes) {
            CAPTURE(numeric::rounding_name(mode));
            const graph::Graph g = fixture(stem, mode);
            const graph::LoweredGraph l = lowered(g, mode, true);
            CHECK(l.rounding == mode);
            const auto in = graph::seeded_inputs(g, 7);
            // every value, NPU and host nodes alike (verify_engines runs the reference in the lowering's mode)
            const auto v = graph::verify_engines(g, l, in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message()));
            CHECK(v->first_divergence() == v->values.size());
            CHECK(v->report.races.empty());
            // the outputs of the plain NPU lowering equal the reference engine's in this mode
            const auto npu = graph::run_npu(g, lowered(g, mode), in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(npu.ok(), (npu.ok() ? std::string() : npu.error().message()));
            const auto ref = reference(g, in, mode);
            REQUIRE(npu->outputs.size() == ref.size());
            for (std::size_t i = 0; i < ref.size(); ++i) CHECK(bytes_of(npu->outputs[i]) == ref[i]);
            per_mode.push_back(ref);
        }
        if (per_mode[0] != per_mode[1] || per_mode[0] != per_mode[2]) differing.insert(stem);
    }
    // The choice reaches the numbers: on these inputs four fixtures' outputs change with the mode (the modes differ
    // on a few percent of requantized elements, and the small fixtures' outputs absorb most such differences). A mode
    // ignored by some kernel or pass would shrink this set, or break the agreement above.
    CHECK(differing == std::set<std::string>{"mobilenet_v2_tiny", "qdq_conv_bn", "qdq_conv_relu_shared",
                                             "qdq_float_middle"});
}

TEST_CASE("rounding: mobilenet_v2_tiny's NPU output changes with the mode, each time to the reference's own") {
    // One graph (passes in the default mode), lowered in each mode: the program follows the option alone.
    const graph::Graph g = fixture("mobilenet_v2_tiny", Rounding::round_double);
    const auto in = graph::seeded_inputs(g, 3);
    std::vector<std::vector<std::byte>> outs;
    for (const Rounding mode : modes) {
        const auto npu = graph::run_npu(g, lowered(g, mode), in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE(npu.ok());
        outs.push_back(bytes_of(npu->outputs[0]));
        CHECK(outs.back() == reference(g, in, mode)[0]);
    }
    CHECK(outs[0] != outs[1]);
    CHECK(outs[0] != outs[2]);
}

TEST_CASE("rounding: the package records its rounding and runs its host nodes with it, whatever the caller says") {
    // qdq_softmax_head: its int8 Softmax (an rq in its last step) runs on the host, between NPU nodes' results.
    {  // the modes give different outputs here, so a package that ignored its record would be caught below
        const graph::Graph g = fixture("qdq_softmax_head", Rounding::round_double);
        const auto in = graph::seeded_inputs(g, 5);
        CHECK(reference(g, in, Rounding::round_double) != reference(g, in, Rounding::round_half_even));
    }
    for (const Rounding mode : modes) {
        CAPTURE(numeric::rounding_name(mode));
        const graph::Graph g = fixture("qdq_softmax_head", mode);
        const graph::LoweredGraph l = lowered(g, mode);
        REQUIRE_FALSE(l.host_placements.empty());
        const auto p = graph::compile_package(g, l);
        REQUIRE(p.ok());
        CHECK(p->rounding == mode);
        const auto bytes = package::write_package(*p);
        REQUIRE(bytes.ok());
        const auto back = package::read_package(*bytes, "rounding.jpk");
        REQUIRE(back.ok());
        CHECK(back->rounding == mode);
        CHECK(package::effective_rounding(*back) == mode);
        const auto text = package::inspect(*bytes, "rounding.jpk");
        REQUIRE(text.ok());
        CHECK(text->find("rounding: " + std::string(numeric::rounding_name(mode)) + "\n") != std::string::npos);
        const auto in = graph::seeded_inputs(g, 5);
        for (const Rounding caller : modes) {  // the caller's context rounding is not the package's to choose
            const auto run = graph::run_package(*back, in, janus_tools::kernel_by_name, janus_test::simulate, nullptr,
                                                ops::OpContext{true, caller});
            REQUIRE_MESSAGE(run.ok(), (run.ok() ? std::string() : run.error().message()));
            CHECK(bytes_of((*run)[0]) == reference(g, in, mode)[0]);
        }
    }
}

}  // namespace rounding_test
