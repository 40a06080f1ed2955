// Host nodes between NPU nodes (graph/lower.hpp "Partition"): each maximal run of NPU nodes is a segment of the
// program ending with halt; the host runs its nodes between segments over the same machine. The graphs here have
// three segments: a value that one segment leaves in scratch is read by the next, a host node's int8 output goes
// back in through the input region, and a float Softmax runs between two segments. Every run is bit-identical to
// the reference engine, directly (run_npu, verify_engines) and through the package (segments section, run_package).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/package/package.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace segments_test {

using namespace janus;

// seg 0: Relu, Neg | host: Neg @host | seg 1: Add(host's %h, seg 0's %a from scratch) |
// host: DequantizeLinear, Softmax, QuantizeLinear | seg 2: Add(%q, %c from the output region)
constexpr const char* three_segments =
    "graph seg {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
    "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)\n"
    "  %b: int8[1,16,4,4] q(int8 s=0.05 zp=-2) = Neg(%a)\n"
    "  %h: int8[1,16,4,4] q(int8 s=0.05 zp=-2) = Neg(%b) @host\n"
    "  %c: int8[1,16,4,4] q(int8 s=0.1 zp=-20) = Add(%h, %a)\n"
    "  %f: float32[1,16,4,4] = DequantizeLinear(%c)\n"
    "  %s: float32[1,16,4,4] = Softmax(%f) {axis=1}\n"
    "  %q: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = QuantizeLinear(%s) {dtype=\"int8\", scale=[0.00390625f], "
    "zero_point=[-128]}\n"
    "  %d: int8[1,16,4,4] q(int8 s=0.1 zp=-10) = Add(%q, %c)\n"
    "  output %d\n}\n";

graph::Graph parsed(const char* text) { return janus_test::parsed(text, "seg.ir"); }
using janus_test::lowered;

std::vector<std::byte> bytes(const Tensor& t) { return *t.clone().storage; }

/// Seeded inputs on both engines: the lowered program's output is the reference's, byte for byte, with no race.
/// Returns the inputs and the reference outputs for the caller's further checks.
std::pair<std::vector<Tensor>, std::vector<Tensor>> npu_matches_reference(const graph::Graph& g,
                                                                          const graph::LoweredGraph& l, unsigned seed) {
    auto in = graph::seeded_inputs(g, seed);
    const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
    REQUIRE(ref.ok());
    const auto npu = graph::run_npu(g, l, in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE_MESSAGE(npu.ok(), (npu.ok() ? std::string() : npu.error().message()));
    CHECK(bytes(npu->outputs[0]) == bytes((*ref)[0]));
    CHECK(npu->report.races.empty());
    return {std::move(in), *ref};
}

TEST_CASE("host nodes between NPU nodes split the program into segments, each ending with halt") {
    const graph::Graph g = parsed(three_segments);
    const auto l = lowered(g, false);
    REQUIRE(l.segments.size() == 3);
    CHECK(l.host_before.empty());
    CHECK(l.host_after.empty());
    CHECK(l.segments[0].entry == 0);
    CHECK(l.segments[1].host_before == std::vector<std::size_t>{2});
    CHECK(l.segments[2].host_before == std::vector<std::size_t>{4, 5, 6});
    CHECK(l.host_nodes() == 4);
    for (std::size_t s = 1; s < 3; ++s) {
        CAPTURE(s);
        REQUIRE(l.segments[s].entry > 0);
        CHECK(l.program.code[l.segments[s].entry - 1].info->sem == vnpu::Sem::halt);
        CHECK(l.segments[s].first_node == l.segments[s - 1].end_node);
    }
    CHECK(l.segments[2].end_node == l.npu.size());
    // inputs: x before segment 0, h before segment 1, q before segment 2; outputs: b (read by the host), then c
    REQUIRE(l.segment_inputs.size() == 3);
    CHECK(g.value(l.segment_inputs[1]).name == "h");
    CHECK(l.segments[1].first_input == 1);
    CHECK(l.segments[2].first_input == 2);
    CHECK(l.segments[1].first_output == 1);
    CHECK(l.segments[2].first_output == 2);
    // %a crosses from segment 0 to segment 1 in scratch, untouched by the host
    CHECK(l.placement[static_cast<std::size_t>(g.find("a"))]->region == 1);
    CHECK(l.placement[static_cast<std::size_t>(g.find("c"))]->region == 3);
    std::string log;
    for (const auto& line : l.log) log += line + "\n";
    CHECK(log.find("segment 1: from pc " + std::to_string(l.segments[1].entry) + ", after the host ran node 2 (Neg)") !=
          std::string::npos);
    CHECK(graph::layout_text(g, l).find("; NPU segments: 3") != std::string::npos);
}

TEST_CASE("a program of three segments runs bit-identical to the reference engine, values and outputs") {
    const graph::Graph g = parsed(three_segments);
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const auto l = lowered(g, keep);
        for (unsigned seed : {1u, 2u, 3u}) {
            CAPTURE(seed);
            const auto [in, ref] = npu_matches_reference(g, l, seed);
            if (!keep) continue;
            const auto v = graph::verify_engines(g, l, in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message()));
            CHECK(v->first_divergence() == v->values.size());
            CHECK(v->values.size() == g.nodes.size());
        }
    }
}

TEST_CASE("the package of a three-segment program: a segments section, read back and run bit-identical") {
    const graph::Graph g = parsed(three_segments);
    const auto l = lowered(g, false);
    const auto pkg = graph::compile_package(g, l);
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    REQUIRE(pkg->host.has_value());
    CHECK(pkg->host->prologue == 0);
    REQUIRE(pkg->segments.size() == 2);
    CHECK(pkg->segments[0].entry == l.segments[1].entry);
    CHECK(pkg->segments[0].nodes_before == 1);
    CHECK(pkg->segments[1].nodes_before == 4);
    CHECK(pkg->segments[1].first_input == 2);
    CHECK(pkg->segments[1].first_output == 2);
    const auto file = package::write_package(*pkg, "seg");
    REQUIRE(file.ok());
    CHECK(*file == *package::write_package(*pkg, "seg"));  // deterministic (seed D8)
    const auto read = package::read_package(*file, "seg.jpk");
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? std::string() : read.error().message()));
    CHECK(*read == *pkg);
    const auto text = package::inspect(*file, "seg.jpk");
    REQUIRE(text.ok());
    CHECK(text->find("segments (3; each ends with halt") != std::string::npos);
    const auto h = graph::host_plan(*read, "seg.jpk");
    REQUIRE_MESSAGE(h.ok(), (h.ok() ? std::string() : h.error().message()));
    CHECK(h->nodes_before == std::vector<std::size_t>{0, 1, 4});
    for (unsigned seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const auto in = graph::seeded_inputs(g, seed);
        const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        vnpu::sim::Report report;
        const auto out = graph::run_package(*read, *h, in, janus_tools::kernel_by_name, janus_test::simulate, &report);
        REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
        CHECK(bytes((*out)[0]) == bytes((*ref)[0]));
        CHECK(report.units[0].instructions > 0);
        CHECK(report.cycles > 0);
    }
    // the timing of every segment, charged to the debug entries in program order
    std::vector<std::uint64_t> finished;
    const auto timed = graph::time_program(*read, janus_test::simulate, finished);
    REQUIRE(timed.ok());
    const auto cycles = graph::node_cycles(read->debug, finished);
    std::uint64_t sum = 0;
    for (const std::uint64_t c : cycles) sum += c;
    CHECK(sum <= timed->cycles);
    CHECK(sum * 10 >= timed->cycles * 9);  // the halts and the host's pauses are not charged, little else is
}

TEST_CASE("a segments section that does not fit its program or host graph is refused, with the rule") {
    const graph::Graph g = parsed(three_segments);
    const auto pkg = graph::compile_package(g, lowered(g, false));
    REQUIRE(pkg.ok());
    const auto plan_refused = [&](auto&& change, const std::string& rule, const std::string& part) {
        package::Package p = *pkg;
        change(p);
        const auto h = graph::host_plan(p, "seg.jpk");
        REQUIRE(!h.ok());
        CHECK(h.error().rule == rule);
        CHECK_MESSAGE(h.error().message().find(part) != std::string::npos, h.error().message());
        const auto run =
            graph::run_package(p, graph::seeded_inputs(g, 1), janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE(!run.ok());
        CHECK(run.error().rule == rule);
    };
    // an entry inside segment 0: the instruction before it is not halt
    plan_refused([](package::Package& p) { --p.segments[0].entry; }, "segment-halt", "segment 1");
    // the Dequantize of %c moved before segment 1, which computes %c
    plan_refused([](package::Package& p) { p.segments[0].nodes_before = 2; }, "host-order", "before segment 1");
    // %h is placed before segment 0, but the host computes it after segment 0
    plan_refused([](package::Package& p) { p.segments[0].first_input = 2; }, "host-program-input", "'h' of segment 0");
    plan_refused([](package::Package& p) { p.segments[1].nodes_before = 100; }, "host-prologue", "segment 2");

    // the format's own rules: writing checks them as reading does
    const auto write_refused = [&](auto&& change, const std::string& rule) {
        package::Package p = *pkg;
        change(p);
        const auto w = package::write_package(p, "seg");
        REQUIRE(!w.ok());
        CHECK_MESSAGE(w.error().rule == rule, w.error().message());
    };
    write_refused([](package::Package& p) { p.segments[1].entry = p.segments[0].entry; }, "segments-entry");
    write_refused([](package::Package& p) { p.segments[1].entry = static_cast<std::uint32_t>(p.code.size()); },
                  "segments-entry");
    write_refused([](package::Package& p) { p.segments[1].nodes_before = 0; }, "segments-order");
    write_refused([](package::Package& p) { p.segments[1].first_input = 0; }, "segments-io");
    write_refused([](package::Package& p) { p.segments[1].first_output = 99; }, "segments-io");
    write_refused([](package::Package& p) { p.host.reset(); }, "segments-host");
}

TEST_CASE("a host node that reads nothing the NPU computes runs in the prologue and does not split the program") {
    // in node order the float Sigmoid and its QuantizeLinear come between the two NPU nodes, but they read only the
    // model input %f: one segment, both nodes before it
    const graph::Graph g = parsed(
        "graph hoist {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n  input %f: float32[1,16,4,4]\n"
        "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)\n"
        "  %s: float32[1,16,4,4] = Sigmoid(%f)\n"
        "  %q: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = QuantizeLinear(%s) {dtype=\"int8\", "
        "scale=[0.00390625f], zero_point=[-128]}\n"
        "  %c: int8[1,16,4,4] q(int8 s=0.1 zp=-10) = Add(%a, %q)\n"
        "  output %c\n}\n");
    const auto l = lowered(g, false);
    REQUIRE(l.segments.size() == 1);
    CHECK(l.host_before == std::vector<std::size_t>{1, 2});
    std::string log;
    for (const auto& line : l.log) log += line + "\n";
    CHECK(log.find("host   node 1 (Sigmoid): reads nothing the NPU computes, runs before it") != std::string::npos);
    const auto pkg = graph::compile_package(g, l);
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    CHECK(pkg->segments.empty());
    REQUIRE(pkg->host.has_value());
    CHECK(pkg->host->prologue == 2);
    for (unsigned seed : {1u, 2u}) {
        const auto [in, ref] = npu_matches_reference(g, l, seed);
        const auto out = graph::run_package(*pkg, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
        CHECK(bytes((*out)[0]) == bytes(ref[0]));
    }
}

}  // namespace segments_test
