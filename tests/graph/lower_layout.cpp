// Layout assignment for data movement, reductions and Resize (graph/lower.hpp lower_array_op, seed B3): the op's
// attributes are renumbered from logical (NCHW) to physical (NHWC) axes and the emitter runs on the physical
// arrays. Every graph that lowers runs on the simulator with every value bit-identical to the reference engine (no
// race); an op whose physical form the vnpu cannot move is refused with the emitter's or the lowering's rule.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>

#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace lower_layout_test {

using namespace janus;

constexpr std::string_view q = "q(int8 s=0.05 zp=-3)";

/// A graph reading %x of type `in` through one node `node` (its output %y of type `out`, same quantization).
graph::Graph one_node(const std::string& in, const std::string& out, const std::string& node) {
    const std::string text = "graph t {\n  input %x: int8" + in + " " + std::string(q) + "\n  %y: int8" + out + " " +
                             std::string(q) + " = " + node + "\n  output %y\n}\n";
    auto g = graph::parse(text, "test");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    return std::move(*g);
}

/// Lowered with its intermediates kept, run on seeds 1..3: every value identical, no race; the log line of node 0.
std::string lowers_exactly(const graph::Graph& g) {
    const auto l = graph::lower_graph(g, graph::LowerOptions{true});
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    REQUIRE(l->npu.size() == g.nodes.size());
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const auto v = graph::verify_engines(g, *l, graph::seeded_inputs(g, seed), janus_tools::kernel_by_name,
                                             janus_test::simulate);
        REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message()));
        CHECK(v->first_divergence() == v->values.size());
        CHECK(v->report.races.empty());
        CHECK(!v->report.fault);
    }
    for (const auto& line : l->log)
        if (line.rfind("node   node 0 ", 0) == 0) return line;
    return {};
}

/// Lowered with scratch reuse (no intermediates kept): the first output is the reference engine's, byte for byte.
void reused_scratch_matches(const graph::Graph& g, std::initializer_list<std::uint64_t> seeds) {
    const auto l = graph::lower_graph(g);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    for (const std::uint64_t seed : seeds) {
        CAPTURE(seed);
        const auto in = graph::seeded_inputs(g, seed);
        const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
        const auto npu = graph::run_npu(g, *l, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE(ref.ok());
        REQUIRE(npu.ok());
        CHECK(*npu->outputs[0].storage == *(*ref)[0].storage);
    }
}

/// The rule of the lowering's refusal of node 0, which then runs on the host.
std::string refusal(const graph::Graph& g) {
    const auto l = graph::lower_graph(g);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    REQUIRE(!l->host_placements.empty());
    const auto& h = l->host_placements.front();
    CHECK(h.node == 0);
    CHECK(h.quantized);
    return h.rule;
}

TEST_CASE("movement ops on images: NCHW attributes become NHWC ones, bit-identical on the simulator") {
    SUBCASE("Transpose H <-> W keeps the channels innermost") {
        const auto line = lowers_exactly(one_node("[1,16,4,6]", "[1,16,6,4]", "Transpose(%x) {perm=[0,1,3,2]}"));
        CHECK(line.find("lower_transpose") != std::string::npos);
    }
    SUBCASE("Slice of rows, and of a 16-channel block") {
        lowers_exactly(one_node("[1,16,5,4]", "[1,16,2,4]", "Slice(%x) {starts=[1], ends=[5], axes=[2], steps=[2]}"));
        lowers_exactly(one_node("[1,48,2,3]", "[1,16,2,3]", "Slice(%x) {starts=[16], ends=[32], axes=[-3]}"));
    }
    SUBCASE("Pad of H and W (the NCHW pads reordered)") {
        lowers_exactly(one_node("[1,16,3,4]", "[1,16,5,7]", "Pad(%x) {pads=[0,0,1,2,0,0,1,1], value=0.5f}"));
    }
    SUBCASE("Expand of a row along H") {
        lowers_exactly(one_node("[1,16,1,4]", "[1,16,3,4]", "Expand(%x) {shape=[1,1,3,1]}"));
    }
    SUBCASE("Concat of two 16-channel images along C") {
        auto g = graph::parse(
            "graph t {\n  input %a: int8[1,16,2,3] q(int8 s=0.05 zp=-3)\n  input %b: int8[1,16,2,3] q(int8 s=0.05 "
            "zp=-3)\n  %y: int8[1,32,2,3] q(int8 s=0.05 zp=-3) = Concat(%a, %b) {axis=1}\n  output %y\n}\n",
            "t");
        REQUIRE(g.ok());
        CHECK(lowers_exactly(*g).find("lower_concat") != std::string::npos);
    }
    SUBCASE("Resize nearest 2x") {
        lowers_exactly(one_node("[1,8,3,3]", "[1,8,6,6]", "Resize(%x) {mode=\"nearest\", scales=[1f,1f,2f,2f]}"));
    }
    SUBCASE("a matrix reshape") { lowers_exactly(one_node("[4,32]", "[8,16]", "Reshape(%x) {shape=[8,16]}")); }
}

TEST_CASE("reductions on images: physical axes, keepdims 0 and 1, the channels innermost") {
    lowers_exactly(one_node("[1,8,4,4]", "[1,8,1,1]", "ReduceMax(%x) {axes=[2,3], keepdims=1}"));
    lowers_exactly(one_node("[1,8,4,4]", "[1,8,1,1]", "ReduceMin(%x) {axes=[-1,-2]}"));
    lowers_exactly(one_node("[1,8,4,4]", "[1,8]", "ReduceMax(%x) {axes=[2,3], keepdims=0}"));
    // ReduceSum / ReduceMean requantize: an output quantization of its own
    auto g = graph::parse(
        "graph t {\n  input %x: int8[1,8,4,4] q(int8 s=0.05 zp=-3)\n"
        "  %y: int8[1,8,1,1] q(int8 s=0.2 zp=1) = ReduceSum(%x) {axes=[2,3]}\n"
        "  %m: int8[1,8] q(int8 s=0.04 zp=0) = ReduceMean(%x) {axes=[2,3], keepdims=0}\n"
        "  %c: int8[1,1,4,4] q(int8 s=0.3 zp=0) = ReduceSum(%x) {axes=[1]}\n"
        "  output %y\n  output %m\n  output %c\n}\n",
        "t");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    CHECK(lowers_exactly(*g).find("lower_ReduceSum over physical axes 1 2") != std::string::npos);
}

TEST_CASE("what the vnpu cannot move is refused with the rule, never moved to the host silently") {
    // a channel slice that starts inside a 16-B granule: the DMA cannot shift bytes within a row
    CHECK(refusal(one_node("[1,16,2,2]", "[1,4,2,2]", "Slice(%x) {starts=[4], ends=[8], axes=[1]}")) ==
          "lower-slice-inner");
    // swapping C and H moves the innermost (channel) axis
    CHECK(refusal(one_node("[1,16,4,4]", "[1,4,16,4]", "Transpose(%x) {perm=[0,2,1,3]}")) == "lower-transpose-inner");
    // a max over the channels combines lanes of one granule
    CHECK(refusal(one_node("[1,16,2,2]", "[1,1,2,2]", "ReduceMax(%x) {axes=[1]}")) == "lower-reduce-inner-minmax");
    // a matrix reshape that splits 16-byte rows into 8-byte ones
    CHECK(refusal(one_node("[4,16]", "[8,8]", "Reshape(%x) {shape=[8,8]}")) == "lower-reshape-inner");
    // a reshape between images is not the flatten view
    CHECK(refusal(one_node("[1,16,2,2]", "[1,4,4,4]", "Reshape(%x) {shape=[1,4,4,4]}")) == "lower-layout");
    // keepdims=0 over H alone leaves a rank-3 value
    CHECK(refusal(one_node("[1,16,2,2]", "[1,16,2]", "ReduceMax(%x) {axes=[2], keepdims=0}")) == "lower-layout");
    // an image -> matrix transpose
    CHECK(refusal(one_node("[1,16,1,1]", "[16,1]", "Reshape(%x) {shape=[16,1]}")) == "lower-layout");
}

TEST_CASE("a chain: Conv, Pad, MaxPool, Concat with the Conv, GlobalAveragePool, ReduceMean on one program") {
    auto g = graph::parse(
        "graph chain {\n  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)\n"
        "  const %w: int8[16,16,1,1] q(int8 s=0.02 zp=0) = 0x" +
            std::string(512, '3') +
            "\n  %c: int8[1,16,4,4] q(int8 s=0.1 zp=0) = Conv(%x, %w) {kernel_shape=[1,1]}\n"
            "  %p: int8[1,16,6,6] q(int8 s=0.1 zp=0) = Pad(%c) {pads=[0,0,1,1,0,0,1,1]}\n"
            "  %m: int8[1,16,3,3] q(int8 s=0.1 zp=0) = MaxPool(%p) {kernel_shape=[2,2], strides=[2,2]}\n"
            "  %s: int8[1,16,2,2] q(int8 s=0.1 zp=0) = Slice(%c) {starts=[0,0], ends=[4,4], axes=[2,3], steps=[2,2]}\n"
            "  %t: int8[1,16,3,3] q(int8 s=0.1 zp=0) = Resize(%s) {mode=\"nearest\", sizes=[1,16,3,3]}\n"
            "  %k: int8[1,32,3,3] q(int8 s=0.1 zp=0) = Concat(%m, %t) {axis=1}\n"
            "  %r: int8[1,32] q(int8 s=0.08 zp=-5) = ReduceMean(%k) {axes=[2,3], keepdims=0}\n"
            "  output %r\n}\n",
        "chain");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    lowers_exactly(*g);
    reused_scratch_matches(*g, {7u});
}

TEST_CASE("ConvTranspose: its zero-stuffed input in scratch for one kernel, bit-identical with scratch reuse") {
    std::string w1 = "0x", w2 = "0x";
    for (int i = 0; i < 16 * 8 * 3 * 3; ++i) w1 += "0123456789abcdef"[i % 16], w1 += "7f3e"[i % 4];
    for (int i = 0; i < 8 * 8 * 2 * 2; ++i) w2 += "f0c1"[i % 4], w2 += "0123456789abcdef"[(i * 7) % 16];
    auto g = graph::parse(
        "graph up {\n  input %x: int8[1,16,3,3] q(int8 s=0.05 zp=-3)\n"
        "  const %w1: int8[16,8,3,3] q(int8 s=0.01 zp=0) = " +
            w1 + "\n  const %w2: int8[8,8,2,2] q(int8 s=0.02 zp=0) = " + w2 +
            "\n  %a: int8[1,8,6,6] q(int8 s=0.2 zp=1) = ConvTranspose(%x, %w1) "
            "{kernel_shape=[3,3], pads=[1,1,0,0], strides=[2,2]}\n"
            "  %r: int8[1,8,6,6] q(int8 s=0.2 zp=1) = Relu(%a)\n"
            "  %b: int8[1,8,12,12] q(int8 s=0.3 zp=-2) = ConvTranspose(%r, %w2) "
            "{kernel_shape=[2,2], strides=[2,2]}\n  output %b\n}\n",
        "up");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    CHECK(lowers_exactly(*g).find("lower_conv_transpose (stuffed input: scratch @") != std::string::npos);
    reused_scratch_matches(*g, {5u, 6u});
}

TEST_CASE("int8 constant operands: laid out like activations in the weights region, bit-identical") {
    // a Concat with a constant block of rows, an Add of a constant [1, C, 1, 1] (broadcast over the pixels) and a
    // Mul by a constant of the output's own shape; the constants' bytes are the program's constants
    std::string k = "0x", c = "0x", m = "0x";
    for (int i = 0; i < 16 * 2 * 4; ++i) k += "0123456789abcdef"[(i * 5) % 16], k += "7f3e"[i % 4];
    for (int i = 0; i < 16; ++i) c += "1f"[i % 2], c += "0123456789abcdef"[(i * 3) % 16];
    for (int i = 0; i < 16 * 6 * 4; ++i) m += "0123456789abcdef"[(i * 7) % 16], m += "c1"[i % 2];
    auto g = graph::parse(
        "graph consts {\n  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)\n"
        "  const %k: int8[1,16,2,4] q(int8 s=0.05 zp=-3) = " +
            k +
            "\n"
            "  %y: int8[1,16,6,4] q(int8 s=0.05 zp=-3) = Concat(%x, %k) {axis=2}\n"
            "  const %c: int8[1,16,1,1] q(int8 s=0.1 zp=2) = " +
            c +
            "\n"
            "  %z: int8[1,16,6,4] q(int8 s=0.1 zp=0) = Add(%y, %c)\n"
            "  const %m: int8[1,16,6,4] q(int8 s=0.02 zp=1) = " +
            m +
            "\n"
            "  %w: int8[1,16,6,4] q(int8 s=0.15 zp=-4) = Mul(%m, %z)\n"
            "  output %w\n}\n",
        "consts");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    CHECK(lowers_exactly(*g).find("lower_concat") != std::string::npos);
    reused_scratch_matches(*g, {8u, 9u});
    const auto l = graph::lower_graph(*g);
    REQUIRE(l.ok());
    std::size_t consts = 0;
    for (const auto& line : l->log)
        consts += line.rfind("const  ", 0) == 0 && line.find("weights @") != std::string::npos;
    CHECK(consts == 3);
    CHECK(l->placement[static_cast<std::size_t>(g->find("c"))]->pitch == 16);
}

}  // namespace lower_layout_test
