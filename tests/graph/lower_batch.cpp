// Rank-3 values and the batched MatMul (graph/lower.hpp: the stack placement, emit::lower_matmul's
// MatmulOptions::batch). A [B, M, K] value is B matrices of the rank-2 form, batch after batch; a MatMul with a
// rank-3 product lowers as one kernel over the B products, numpy broadcasting over the batch ([B, M, K] x
// [B, K, N], [B, M, K] x [K, N], [M, K] x [B, K, N], a batch of 1 on either side). Every graph that lowers runs on
// the simulator with every value bit-identical to the reference engine (no race), through run_npu and through a
// compiled package; what does not lower is refused with its rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>

#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace lower_batch_test {

using namespace janus;

/// The IR text of int8 constant data: "0x" and two hex digits per code, code i = f(i).
template <class F>
std::string hex_codes(std::int64_t n, F f) {
    static const char* hex = "0123456789abcdef";
    std::string s = "0x";
    for (std::int64_t i = 0; i < n; ++i) {
        const int v = f(i) & 255;
        s += hex[v >> 4];
        s += hex[v & 15];
    }
    return s;
}

graph::Graph parse(const std::string& text) {
    auto g = graph::parse(text, "batch.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    return std::move(*g);
}

std::string log_text(const graph::LoweredGraph& l) {
    std::string s;
    for (const auto& line : l.log) s += line + "\n";
    return s;
}

/// Lowered twice (every intermediate kept, and with scratch reuse), run on seeds 1..3: with the intermediates kept
/// every value is identical to the reference engine's (no race, no fault); with scratch reuse the outputs are, and
/// so are those of the compiled package. Returns the log of the kept lowering.
std::string lowers_exactly(const graph::Graph& g) {
    const auto kept = graph::lower_graph(g, graph::LowerOptions{true});
    REQUIRE_MESSAGE(kept.ok(), (kept.ok() ? std::string() : kept.error().message()));
    const auto reused = graph::lower_graph(g);
    REQUIRE_MESSAGE(reused.ok(), (reused.ok() ? std::string() : reused.error().message()));
    const auto pkg = graph::compile_package(g, *reused);
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const auto in = graph::seeded_inputs(g, seed);
        const auto v = graph::verify_engines(g, *kept, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message()));
        CHECK(v->first_divergence() == v->values.size());
        CHECK(v->report.races.empty());
        CHECK(!v->report.fault);
        const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        const auto npu = graph::run_npu(g, *reused, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(npu.ok(), (npu.ok() ? std::string() : npu.error().message()));
        const auto run = graph::run_package(*pkg, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(run.ok(), (run.ok() ? std::string() : run.error().message()));
        REQUIRE(npu->outputs.size() == ref->size());
        REQUIRE(run->size() == ref->size());
        for (std::size_t i = 0; i < ref->size(); ++i) {
            CHECK(*npu->outputs[i].storage == *(*ref)[i].storage);
            CHECK(*(*run)[i].storage == *(*ref)[i].storage);
        }
    }
    return log_text(*kept);
}

/// A MatMul graph: %x of shape `xs` (through a Relu, so that an elementwise op meets it on the NPU) times the
/// constant %w of shape `ws` (zero point -14: uint8 weights of zero point 114 as int8, like QLinearMatMul's), the
/// product %y of shape `ys`.
graph::Graph matmul_graph(const std::string& xs, const std::string& ws, std::int64_t wn, const std::string& ys) {
    const auto w = hex_codes(wn, [](std::int64_t i) { return static_cast<int>((i * 53 + 7) % 255) - 127; });
    return parse("graph g {\n  input %x: int8" + xs + " q(int8 s=0.05 zp=-4)\n  const %w: int8" + ws +
                 " q(int8 s=0.01 zp=-14) = " + w + "\n  %a: int8" + xs +
                 " q(int8 s=0.05 zp=-4) = Relu(%x)\n  %y: int8" + ys +
                 " q(int8 s=0.6 zp=1) = MatMul(%a, %w)\n  output %y\n}\n");
}

/// The rule of the refusal that puts `node` on the host; the placement text names it.
std::string refusal(const std::string& text, const std::string& node) {
    const graph::Graph g = parse(text);
    const auto l = graph::lower_graph(g);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    const std::string placed = graph::placement_text(g, *l);
    CAPTURE(placed);
    CHECK(placed.find("host " + node + ": ") != std::string::npos);
    for (const auto& h : l->host_placements)
        if (h.quantized) return h.rule;
    return "not refused";
}

TEST_CASE("a rank-3 value is a stack of matrices, batch after batch, rows round16(K) bytes apart") {
    const graph::Graph g = matmul_graph("[3,5,20]", "[3,20,7]", 420, "[3,5,7]");
    const auto l = graph::lower_graph(g, graph::LowerOptions{true});
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    const auto& x = *l->placement[static_cast<std::size_t>(g.find("x"))];
    CHECK(x.form == graph::Placement::Form::stack);
    CHECK(x.batch == 3);
    CHECK(x.h == 5);
    CHECK(x.c == 20);
    CHECK(x.pitch == 32);
    CHECK(x.bytes() == 3 * 5 * 32);
    CHECK(x.byte_of(0) == 0);
    CHECK(x.byte_of(19) == 19);
    CHECK(x.byte_of(20) == 32);                                        // [0, 1, 0]
    CHECK(x.byte_of(5 * 20) == 5 * 32);                                // [1, 0, 0]: right after the first matrix
    CHECK(x.byte_of(2 * 100 + 4 * 20 + 19) == (2 * 5 + 4) * 32 + 19);  // [2, 4, 19]
    CHECK(x.str() == "input @0 +480 B: 3 matrices of 5 rows of 20, 32 B apart");
    const auto& y = *l->placement[static_cast<std::size_t>(g.find("y"))];
    CHECK(y.form == graph::Placement::Form::stack);
    CHECK(y.pitch == 16);
    CHECK(y.bytes() == 3 * 5 * 16);
    // the package describes it by its strides: [B, M, K] -> (M * pitch, pitch, 1)
    const auto pkg = graph::compile_package(g, *l);
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    REQUIRE(pkg->inputs.size() == 1);
    CHECK(pkg->inputs[0].strides == std::vector<std::int64_t>{160, 32, 1});
    REQUIRE(pkg->outputs.size() == 1);
    CHECK(pkg->outputs[0].strides == std::vector<std::int64_t>{80, 16, 1});
}

TEST_CASE("a rank-3 MatMul lowers as one batched kernel and runs bit-identical, every broadcast of the batch") {
    struct Case {
        std::string xs, ws;
        std::int64_t wn;
        std::string ys, line;
    };
    const std::vector<Case> cases{
        {"[3,5,20]", "[3,20,7]", 420, "[3,5,7]", "lower_matmul, a batch of 3 K=20 N=7\n"},
        {"[2,2,4]", "[2,4,3]", 24, "[2,2,3]", "lower_matmul, a batch of 2 K=4 N=3\n"},  // QLinearMatMul 3D's
        {"[4,17,40]", "[40,33]", 1320, "[4,17,33]", "lower_matmul, a batch of 4 K=40 N=33 (B shared)\n"},
        {"[3,6,24]", "[1,24,18]", 432, "[3,6,18]", "lower_matmul, a batch of 3 K=24 N=18 (B shared)\n"},
        {"[6,30]", "[3,30,17]", 1530, "[3,6,17]", "lower_matmul, a batch of 3 K=30 N=17 (A broadcast)\n"},
        {"[1,6,30]", "[4,30,17]", 2040, "[4,6,17]", "lower_matmul, a batch of 4 K=30 N=17 (A broadcast)\n"},
        {"[1,9,12]", "[1,12,20]", 240, "[1,9,20]", "lower_matmul, a batch of 1 K=12 N=20 (A broadcast) (B shared)\n"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.xs);
        CAPTURE(c.ws);
        const std::string log = lowers_exactly(matmul_graph(c.xs, c.ws, c.wn, c.ys));
        CHECK_MESSAGE(log.find("node   node 1 (MatMul): " + c.line) != std::string::npos, log);
        CHECK_MESSAGE(log.find("node   node 0 (Relu): lower_lut") != std::string::npos, log);
    }
}

TEST_CASE("around a batched MatMul: a fused Sigmoid, an Add of two stacks, a Requantize, a Reshape to a matrix") {
    const auto w = hex_codes(2 * 36 * 20, [](std::int64_t i) { return static_cast<int>((i * 37 + 11) % 201) - 100; });
    const graph::Graph g = parse(
        "graph g {\n  input %x: int8[2,9,36] q(int8 s=0.05 zp=-4)\n  input %z: int8[2,9,20] q(int8 s=0.03 zp=2)\n"
        "  const %w: int8[2,36,20] q(int8 s=0.01 zp=0) = " +
        w +
        "\n  %y: int8[2,9,20] q(int8 s=0.3 zp=1) = MatMul(%x, %w)\n"
        "  %s: int8[2,9,20] q(int8 s=0.00390625 zp=-128) = Sigmoid(%y)\n"
        "  %a: int8[2,9,20] q(int8 s=0.02 zp=-10) = Add(%s, %z)\n"
        "  %r: int8[2,9,20] q(int8 s=0.04 zp=5) = Requantize(%a) {dtype=\"int8\"}\n"
        "  %f: int8[18,20] q(int8 s=0.04 zp=5) = Reshape(%r) {shape=[18,20]}\n"
        "  output %f\n  output %a\n}\n");
    const std::string log = lowers_exactly(g);
    CHECK_MESSAGE(log.find("fuse   node 1 (Sigmoid) after node 0 (MatMul): fused as a lut.apply") != std::string::npos,
                  log);
    CHECK_MESSAGE(log.find("node   node 2 (Add): lower_binary") != std::string::npos, log);
    CHECK_MESSAGE(log.find("node   node 4 (Reshape): lower_reshape") != std::string::npos, log);
}

TEST_CASE("data movement and reductions on a stack: the row-major array [B, M, K]") {
    const std::string q = " q(int8 s=0.05 zp=-3)";
    const std::string log = lowers_exactly(parse("graph g {\n  input %x: int8[3,5,32]" + q + "\n  %t: int8[5,3,32]" +
                                                 q + " = Transpose(%x) {perm=[1,0,2]}\n  %s: int8[5,2,32]" + q +
                                                 " = Slice(%t) {starts=[1], ends=[3], axes=[1]}\n  %c: int8[5,5,32]" +
                                                 q + " = Concat(%t, %s) {axis=1}\n  output %c\n}\n"));
    CHECK_MESSAGE(log.find("node   node 0 (Transpose): lower_transpose") != std::string::npos, log);
    // reductions over a stack's outer axes, and over an image's channels into a stack [1, H, W]
    const std::string r = lowers_exactly(
        parse("graph g {\n  input %x: int8[3,5,32]" + q + "\n  input %i: int8[1,16,4,4]" + q + "\n  %m: int8[3,1,32]" +
              q + " = ReduceMax(%x) {axes=[1], keepdims=1}\n  %s: int8[5,32] q(int8 s=0.2 zp=1) = ReduceSum(%x) " +
              "{axes=[0], keepdims=0}\n  %c: int8[1,4,4] q(int8 s=0.3 zp=0) = ReduceSum(%i) {axes=[1], keepdims=0}\n" +
              "  output %m\n  output %s\n  output %c\n}\n"));
    CHECK_MESSAGE(r.find("node   node 0 (ReduceMax): lower_ReduceMax over physical axes 1") != std::string::npos, r);
    // keepdims=0 over a stack's rows: the physical order stays row-major
    lowers_exactly(parse("graph g {\n  input %x: int8[3,5,32]" + q + "\n  %m: int8[3,32]" + q +
                         " = ReduceMin(%x) {axes=[1], keepdims=0}\n  output %m\n}\n"));
}

TEST_CASE("rank-3 MatMuls that do not lower are refused with their rule, never moved to the host") {
    const auto w = hex_codes(3 * 5 * 20, [](std::int64_t i) { return static_cast<int>(i % 200) - 100; });
    // two activations: the right operand is not known at compile time
    CHECK(refusal("graph g {\n  input %x: int8[3,5,20] q(int8 s=0.05 zp=0)\n  input %v: int8[3,20,7] q(int8 s=0.05 "
                  "zp=0)\n  %y: int8[3,5,7] q(int8 s=0.5 zp=0) = MatMul(%x, %v)\n  output %y\n}\n",
                  "node 0 (MatMul)") == "lower-matmul-operands");
    // a batched weight on the left
    CHECK(refusal("graph g {\n  input %x: int8[20,7] q(int8 s=0.05 zp=0)\n  const %w: int8[3,5,20] q(int8 s=0.01 "
                  "zp=0) = " +
                      w + "\n  %y: int8[3,5,7] q(int8 s=0.5 zp=0) = MatMul(%w, %x)\n  output %y\n}\n",
                  "node 0 (MatMul)") == "lower-matmul-batch");
    // a rank-4 batch: no placement
    CHECK(refusal("graph g {\n  input %x: int8[2,3,5,20] q(int8 s=0.05 zp=0)\n  %y: int8[2,3,5,20] q(int8 s=0.05 "
                  "zp=0) = Relu(%x)\n  output %y\n}\n",
                  "node 0 (Relu)") == "lower-layout");
    // per-row scales on a stack: VEC requantizes per column (the emitter's own rule)
    CHECK(refusal("graph g {\n  input %x: int8[2,3,4] q(int8 axis=1 s=[0.05,0.04,0.03] zp=[0,0,0])\n"
                  "  const %w: int8[2,4,3] q(int8 s=0.01 zp=0) = 0x0102030405060708090a0b0c0d0e0f101112131415161718\n"
                  "  %y: int8[2,3,3] q(int8 s=0.5 zp=0) = MatMul(%x, %w)\n  output %y\n}\n",
                  "node 0 (MatMul)") == "lower-matmul-per-row");
    // an elementwise op between a stack and a matrix (a broadcast the NPU does not lower)
    CHECK(refusal("graph g {\n  input %x: int8[3,5,16] q(int8 s=0.05 zp=0)\n  input %z: int8[5,16] q(int8 s=0.05 "
                  "zp=0)\n  %y: int8[3,5,16] q(int8 s=0.1 zp=0) = Add(%x, %z)\n  output %y\n}\n",
                  "node 0 (Add)") == "lower-broadcast");
}

}  // namespace lower_batch_test
