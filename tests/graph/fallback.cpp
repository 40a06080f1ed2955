// Host fallback (graph/lower.hpp "Host fallback, loudly"): a node the lowering refuses runs on the host inside the
// same program, the NPU segments resume after it, and the whole graph stays bit-identical to the reference engine.
// Every host node carries its reason; --strict (strict_placement) refuses the quantized ones; the package records
// the placement. The placement of every fixture is a golden that may only improve (tests/graph/placement/).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/package/package.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace fallback_test {

namespace fs = std::filesystem;
using namespace janus;

using janus_test::lowered;
using janus_test::parsed;

std::vector<std::byte> bytes_of(const Tensor& t) { return *t.clone().storage; }

/// Both engines on seeded inputs: every output byte-identical.
void same_outputs(const graph::Graph& g, const graph::LoweredGraph& l) {
    for (unsigned seed : {1u, 2u}) {
        const auto in = graph::seeded_inputs(g, seed);
        const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        const auto npu = graph::run_npu(g, l, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(npu.ok(), (npu.ok() ? std::string() : npu.error().message()));
        REQUIRE(npu->outputs.size() == ref->size());
        for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(npu->outputs[i]) == bytes_of((*ref)[i]));
    }
}

/// The host placement of node k (fails the test when node k runs on the NPU).
graph::HostPlacement host_of(const graph::LoweredGraph& l, std::size_t k) {
    for (const auto& h : l.host_placements)
        if (h.node == k) return h;
    FAIL("node " << k << " is not on the host");
    return {};
}

const std::string relu_softmax_relu =
    "graph g {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=0)\n"
    "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=0) = Relu(%x)\n"
    "  %b: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = Softmax(%a) {axis=1}\n"
    "  %c: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = Sigmoid(%b)\n  output %c\n}\n";


TEST_CASE("a node the lowering refuses runs on the host between two NPU segments, bit-identical to the reference") {
    const graph::Graph g = parsed(relu_softmax_relu);
    const graph::LoweredGraph l = lowered(g);
    REQUIRE(l.npu.size() == 2);
    CHECK(l.npu[0].node == 0);
    CHECK(l.npu[1].node == 2);
    REQUIRE(l.host_placements.size() == 1);
    const auto h = host_of(l, 1);
    CHECK(h.rule == "lower-op");
    CHECK(h.quantized);
    CHECK(h.why.find("Softmax") != std::string::npos);
    CHECK(l.segments.size() == 2);  // the NPU resumes after the host node
    REQUIRE(!l.log.empty());
    CHECK(l.log.front().rfind("host   node 1 (Softmax)", 0) == 0);
    same_outputs(g, l);
    // the same with every intermediate kept (janusc verify)
    const graph::LoweredGraph kept = lowered(g, true);
    const auto in = graph::seeded_inputs(g, 3);
    const auto v = graph::verify_engines(g, kept, in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE(v.ok());
    CHECK(v->first_divergence() == v->values.size());
}

TEST_CASE("a refused node is rolled back without a trace: the program equals the one with the node marked @host") {
    const graph::Graph refused = parsed(relu_softmax_relu);
    std::string marked_text = relu_softmax_relu;
    const std::string softmax = "Softmax(%a) {axis=1}";
    marked_text.replace(marked_text.find(softmax), softmax.size(), softmax + " @host");
    const graph::Graph marked = parsed(marked_text);
    const graph::LoweredGraph a = lowered(refused), b = lowered(marked);
    CHECK(a.program.code == b.program.code);
    CHECK(a.program.weights == b.program.weights);
    CHECK(a.placement == b.placement);
    CHECK(a.segments.size() == b.segments.size());
    // only the reason differs: a refusal of a quantized node, or the IR's own mark
    CHECK(host_of(a, 1).rule == "lower-op");
    CHECK(host_of(b, 1).rule == "place-marked");
    CHECK_FALSE(host_of(b, 1).quantized);
}

TEST_CASE("an emitter's own refusal (the real LMEM budget) falls back too, and one attempt finds independent refusals") {
    // node 1: a MaxPool too wide for LMEM (lower-pool-budget); node 3: an image batch of 2 (lower-layout)
    const graph::Graph g = parsed(
        "graph g {\n  input %x: int8[1,16,1,20000] q(int8 s=0.1 zp=0)\n"
        "  input %z: int8[2,16,2,2] q(int8 s=0.1 zp=0)\n"
        "  %a: int8[1,16,1,20000] q(int8 s=0.1 zp=0) = Relu(%x)\n"
        "  %b: int8[1,16,1,10000] q(int8 s=0.1 zp=0) = MaxPool(%a) {kernel_shape=[1,2], strides=[1,2]}\n"
        "  %c: int8[1,16,1,10000] q(int8 s=0.1 zp=0) = Relu(%b)\n"
        "  %d: int8[2,16,2,2] q(int8 s=0.1 zp=0) = Relu(%z)\n  output %c\n  output %d\n}\n");
    const graph::LoweredGraph l = lowered(g);
    CHECK(host_of(l, 1).rule == "lower-pool-budget");
    CHECK(host_of(l, 3).rule == "lower-layout");
    CHECK(host_of(l, 1).quantized);
    CHECK(l.npu.size() == 2);
    same_outputs(g, l);
}

TEST_CASE("a chain of refused nodes is found in one attempt, not one attempt per node") {
    // 40 int8 Softmax nodes in a row between two Relu: every Softmax is refused in the first attempt (a refused
    // node's output keeps a placement, so its reader is tried too), and the second attempt lowers the rest
    std::string text = "graph g {\n  input %x: int8[1,16,2,2] q(int8 s=0.1 zp=0)\n"
                       "  %v0: int8[1,16,2,2] q(int8 s=0.00390625 zp=-128) = Relu(%x)\n";
    for (int i = 1; i <= 40; ++i)
        text += "  %v" + std::to_string(i) + ": int8[1,16,2,2] q(int8 s=0.00390625 zp=-128) = Softmax(%v" +
                std::to_string(i - 1) + ") {axis=1}\n";
    text += "  %y: int8[1,16,2,2] q(int8 s=0.00390625 zp=-128) = Relu(%v40)\n  output %y\n}\n";
    const graph::Graph g = parsed(text);
    const graph::LoweredGraph l = lowered(g);
    CHECK(l.attempts == 2);
    CHECK(l.host_placements.size() == 40);
    CHECK(l.npu.size() == 2);
    same_outputs(g, l);
    // --strict names the first 16 and counts the rest (an error message does not grow with the graph)
    const auto s = graph::strict_placement(g, l, "chain.onnx");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message().find("40 quantized nodes would run on the host") != std::string::npos);
    CHECK(s.error().message().find("node 16 (Softmax)") != std::string::npos);
    CHECK(s.error().message().find("node 17 (Softmax)") == std::string::npos);
    CHECK(s.error().message().find("; and 24 more [strict-placement]") != std::string::npos);
    // a chain of nodes whose values have no NPU form (rank 5): refused in one attempt too
    const graph::Graph r5 = parsed(
        "graph g {\n  input %x: int8[1,2,2,2,16] q(int8 s=0.1 zp=0)\n"
        "  %a: int8[1,2,2,2,16] q(int8 s=0.1 zp=0) = Relu(%x)\n"
        "  %b: int8[1,2,2,2,16] q(int8 s=0.1 zp=0) = Relu(%a)\n"
        "  %c: int8[1,2,2,2,16] q(int8 s=0.1 zp=0) = Relu(%b)\n  output %c\n}\n");
    const graph::LoweredGraph l5 = lowered(r5);
    CHECK(l5.attempts == 2);
    CHECK(l5.npu.empty());
    for (const auto& h : l5.host_placements) CHECK(h.rule == "lower-layout");
}

TEST_CASE("strict placement: every quantized host node is listed; float ops and boundary conversions are not") {
    const graph::Graph g = parsed(relu_softmax_relu);
    const auto s = graph::strict_placement(g, lowered(g), "m.onnx");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().rule == "strict-placement");
    CHECK(s.error().unsupported());
    CAPTURE(s.error().message());
    CHECK(s.error().message().find("1 quantized node would run on the host") != std::string::npos);
    CHECK(s.error().message().find("node 1 (Softmax)") != std::string::npos);
    // a float op marked @host and the conversions around the NPU part: strict accepts them
    const graph::Graph f = parsed(
        "graph f {\n  input %x: float32[1,16,2,2]\n"
        "  %q: int8[1,16,2,2] q(int8 s=0.1 zp=0) = QuantizeLinear(%x) "
        "{dtype=\"int8\", scale=[0.1f], zero_point=[0]}\n"
        "  %r: int8[1,16,2,2] q(int8 s=0.1 zp=0) = Relu(%q)\n"
        "  %d: float32[1,16,2,2] = DequantizeLinear(%r)\n"
        "  %s: float32[1,16,2,2] = Softmax(%d) {axis=1} @host\n  output %s\n}\n");
    const graph::LoweredGraph lf = lowered(f);
    CHECK(graph::strict_placement(f, lf, "f.onnx").ok());
    CHECK(host_of(lf, 0).rule == "place-type");
    CHECK(host_of(lf, 3).rule == "place-type");  // float: the type says it before the mark
    CHECK(graph::placement_text(f, lf).rfind("placement: 1 of 4 nodes on the NPU\n", 0) == 0);
}

TEST_CASE("the placement text and the package's placement record say the same") {
    const graph::Graph g = parsed(relu_softmax_relu);
    const graph::LoweredGraph l = lowered(g);
    const std::string text = graph::placement_text(g, l);
    CHECK(text.rfind("placement: 2 of 3 nodes on the NPU\n  host node 1 (Softmax): ", 0) == 0);
    CHECK(text.find("[lower-op] (quantized)\n") != std::string::npos);
    const auto p = graph::compile_package(g, l);
    REQUIRE(p.ok());
    REQUIRE(p->placement.has_value());
    CHECK(p->placement->nodes == 3);
    REQUIRE(p->placement->host.size() == 1);
    CHECK(p->placement->host[0].rule == "lower-op");
    const auto bytes = package::write_package(*p);
    REQUIRE(bytes.ok());
    const auto back = package::read_package(*bytes, "p.jpk");
    REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().message()));
    REQUIRE(back->placement.has_value());
    CHECK(package::placement_text(*back->placement) == text);
    const auto shown = package::inspect(*bytes, "p.jpk");
    REQUIRE(shown.ok());
    CHECK(shown->find(text) != std::string::npos);
    // the package runs the fallback node on the host: the same bytes as the reference
    const auto h = graph::host_plan(*p, "p.jpk");
    REQUIRE_MESSAGE(h.ok(), (h.ok() ? std::string() : h.error().message()));
    const auto in = graph::seeded_inputs(g, 4);
    const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
    REQUIRE(ref.ok());
    const auto run = graph::run_package(*p, *h, in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE_MESSAGE(run.ok(), (run.ok() ? std::string() : run.error().message()));
    CHECK(bytes_of((*run)[0]) == bytes_of((*ref)[0]));
}

TEST_CASE("placement goldens: every fixture's placement is committed and may only improve") {
    // Rewritten with JANUS_UPDATE_GOLDEN=1; a diff that moves a node from the NPU to the host is a regression.
    for (const std::string& stem : janus_test::fixture_stems()) {
        CAPTURE(stem);
        const std::string path = "onnx/fixtures/" + stem + ".onnx";
        const graph::Graph g = janus_test::optimized_fixture(stem);
        const graph::LoweredGraph l = lowered(g);
        const std::string text = graph::placement_text(g, l);
        // --strict passes wherever the NPU took every quantized node; qdq_softmax_head's int8 Softmax is refused
        CHECK(graph::strict_placement(g, l, path).ok() == (stem != "qdq_softmax_head"));
        const fs::path golden = fs::path("graph/placement") / (stem + ".txt");
        if (const char* u = std::getenv("JANUS_UPDATE_GOLDEN"); u && std::string(u) == "1") {
            fs::create_directories(golden.parent_path());
            std::ofstream(golden, std::ios::binary) << text;
            continue;
        }
        std::ifstream f(golden, std::ios::binary);
        REQUIRE_MESSAGE(f.good(), golden.string() << " is missing; JANUS_UPDATE_GOLDEN=1 writes it");
        std::stringstream want;
        want << f.rdbuf();
        CHECK(text == want.str());
    }
}

}  // namespace fallback_test
