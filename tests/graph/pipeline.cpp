// The lowering pipeline (graph/lower.hpp): partition, fusion, memory planning and emission are separate passes with
// typed results. Each pass is checked on its own here (partition_pass, fusion_pass, the MemoryPlanner driven by hand
// as emission drives it), then through lower_graph, whose result keeps the passes' results and prints them as `;`
// lines after the IR (--dump-ir=after:partition|fusion|memory|lower) that still parse as IR. Every fixture's pass
// results are goldens (tests/graph/pipeline/, rewritten with JANUS_UPDATE_GOLDEN=1).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <janus/graph/import_onnx.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/text_file.hpp"

namespace pipeline_test {

using namespace janus;
using graph::lower_detail::MemoryPlanner;
using graph::lower_detail::Refusal;
using graph::no_value;
using graph::ValueId;

graph::Graph parsed(const std::string& text) { return janus_test::parsed(text, "pipeline.ir"); }
using janus_test::lowered;

std::vector<std::size_t> nodes_where(const std::vector<bool>& v) {
    std::vector<std::size_t> r;
    for (std::size_t k = 0; k < v.size(); ++k)
        if (v[k]) r.push_back(k);
    return r;
}

ValueId value(const graph::Graph& g, std::string_view name) {
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].name == name) return static_cast<ValueId>(i);
    FAIL("no value " << name);
    return no_value;
}

// node 0 Relu (NPU) | node 1 Neg @host, reads %a | node 2 Neg @host, reads only the graph input (hoisted) |
// node 3 Add (NPU, a second segment) | node 4 DequantizeLinear (host, the epilogue)
const std::string two_segments =
    "graph part {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
    "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)\n"
    "  %h: int8[1,16,4,4] q(int8 s=0.1 zp=-3) = Neg(%a) @host\n"
    "  %z: int8[1,16,4,4] q(int8 s=0.1 zp=-3) = Neg(%x) @host\n"
    "  %c: int8[1,16,4,4] q(int8 s=0.2 zp=0) = Add(%h, %z)\n"
    "  %f: float32[1,16,4,4] = DequantizeLinear(%c)\n"
    "  output %f\n}\n";

TEST_CASE("partition: NPU nodes, hoisted host nodes, segments and the values crossing to the host") {
    const graph::Graph g = parsed(two_segments);
    const graph::Partition p = graph::lower_detail::partition_pass(g, std::vector<bool>(g.nodes.size(), false));
    CHECK(nodes_where(p.on_npu) == std::vector<std::size_t>{0, 3});
    // rule: a host node between NPU nodes that reads nothing the NPU computes runs in the prologue
    CHECK(nodes_where(p.hoisted) == std::vector<std::size_t>{2});
    CHECK(p.host_before == std::vector<std::size_t>{2});
    CHECK(p.host_after == std::vector<std::size_t>{4});
    REQUIRE(p.segments.size() == 2);
    CHECK(p.segments[0].host_before == std::vector<std::size_t>{2});  // repeats host_before
    CHECK(p.segments[1].host_before == std::vector<std::size_t>{1});
    CHECK(p.seg_at == std::vector<std::int64_t>{0, -1, -1, 1, -1});
    // rule: a value crosses to the host when a host node reads it or it is a graph output
    std::vector<std::string> crossing;
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (p.read_by_host[i] && p.produced_on_npu[i]) crossing.push_back(g.values[i].name);
    CHECK(crossing == std::vector<std::string>{"a", "c"});

    // rule: a node the lowering refused (host[k]) is a host node like the others; here no segment follows node 0
    std::vector<bool> host(g.nodes.size(), false);
    host[3] = true;
    const graph::Partition q = graph::lower_detail::partition_pass(g, host);
    CHECK(nodes_where(q.on_npu) == std::vector<std::size_t>{0});
    CHECK(nodes_where(q.hoisted).empty());
    CHECK(q.host_after == std::vector<std::size_t>{1, 2, 3, 4});
    CHECK(q.segments.size() == 1);
}

// node 0 MatMul -> node 1 Relu (same quantization: a clamp); node 2 MatMul -> node 3 Sigmoid (a table);
// node 4 MatMul read by a Relu (node 5) and the host (a graph output); node 6 MatMul read by two Relus (7, 8)
std::string fusion_graph() {
    std::string w = "0x";
    for (int i = 0; i < 16 * 16; ++i) w += (i % 3 == 0) ? "05" : (i % 3 == 1) ? "fd" : "01";
    const std::string q = " q(int8 s=0.1 zp=2)";
    return "graph fuse {\n  input %x: int8[4,16]" + q + "\n  const %w: int8[16,16] q(int8 s=0.01 zp=0) = " + w +
           "\n  %m0: int8[4,16]" + q + " = MatMul(%x, %w)\n  %r0: int8[4,16]" + q + " = Relu(%m0)\n" +
           "  %m1: int8[4,16]" + q + " = MatMul(%r0, %w)\n" +
           "  %s1: int8[4,16] q(int8 s=0.00390625 zp=-128) = Sigmoid(%m1)\n" +
           "  %m2: int8[4,16]" + q + " = MatMul(%s1, %w)\n  %r2: int8[4,16]" + q + " = Relu(%m2)\n" +
           "  %m3: int8[4,16]" + q + " = MatMul(%r2, %w)\n  %r3: int8[4,16]" + q + " = Relu(%m3)\n" +
           "  %t3: int8[4,16]" + q + " = Relu(%m3)\n  %y: int8[4,16]" + q + " = Add(%r3, %t3)\n" +
           "  output %y\n  output %m2\n}\n";
}

TEST_CASE("fusion: the activation each producer's kernel computes, and why the others stay kernels") {
    const graph::Graph g = parsed(fusion_graph());
    const graph::Partition p = graph::lower_detail::partition_pass(g, std::vector<bool>(g.nodes.size(), false));
    const auto matmul = [](std::string_view op) {
        return op == "MatMul" ? graph::Fuses::clamp_or_table : graph::Fuses::no;
    };
    const graph::FusionPlan f = graph::lower_detail::fusion_pass(g, p, matmul, numeric::Rounding::round_double);
    // rule: a unary op that is the only reader of a fusing producer's output is computed by its kernel
    REQUIRE(f.producer[0]);
    CHECK(f.producer[0]->act == 1);
    CHECK(!f.producer[0]->lut);  // Relu on the same quantization: a clamp of the codes to [zp, 127]
    CHECK(f.producer[0]->clamp.lo == 2);
    CHECK(f.producer[0]->clamp.hi == 127);
    REQUIRE(f.producer[2]);
    CHECK(f.producer[2]->act == 3);
    CHECK(f.producer[2]->lut);  // Sigmoid: its table
    CHECK(!f.producer[4]);      // the host reads %m2
    CHECK(!f.producer[6]);      // %m3 has two readers
    std::vector<std::int64_t> into(g.nodes.size(), -1);
    into[1] = 0, into[3] = 2;
    CHECK(f.fused_into == into);
    const auto logged = [&](const std::string& s) {
        return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.find(s) != l.npos; });
    };
    CHECK(logged("fuse   node 5 (Relu) after node 4 (MatMul): kept as a kernel, the host reads m2"));
    CHECK(logged("fuse   node 7 (Relu) after node 6 (MatMul): kept as a kernel, m3 has 2 readers"));
    // rule: only a producer whose lowering fuses an activation (OpLowering::fuses) takes one
    const graph::FusionPlan none = graph::lower_detail::fusion_pass(
        g, p, [](std::string_view) { return graph::Fuses::no; }, numeric::Rounding::round_double);
    CHECK(std::none_of(none.producer.begin(), none.producer.end(), [](const auto& x) { return x.has_value(); }));

    // lower_graph keeps the plan of the built-in registry: MatMul fuses
    const graph::LoweredGraph l = lowered(g);
    CHECK(l.fusion.fused_into == f.fused_into);
    CHECK(l.fusion.log == f.log);
}

// node 0 Relu %a | node 1 Flatten %v = view of %a | node 2 Neg %b | node 3 Relu %r reads the view |
// node 4 Neg %d | node 5 Add (graph output)
const std::string chain =
    "graph mem {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
    "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)\n"
    "  %v: int8[1,256] q(int8 s=0.1 zp=3) = Flatten(%a) {axis=1}\n"
    "  %b: int8[1,16,4,4] q(int8 s=0.1 zp=-3) = Neg(%x)\n"
    "  %r: int8[1,256] q(int8 s=0.1 zp=3) = Relu(%v)\n"
    "  %d: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Neg(%b)\n"
    "  %y: int8[1,16,4,4] q(int8 s=0.2 zp=0) = Add(%d, %b)\n"
    "  output %y\n  output %r\n}\n";

/// Node k's output laid out as its shape's form.
graph::Placement form_of(const graph::Graph& g, std::size_t k) {
    auto f = graph::lower_detail::shape_form(g.value(g.nodes[k].outputs[0]), "test");
    REQUIRE(f.ok());
    return *f;
}

TEST_CASE("memory planning: lifetimes, first-fit reuse after the last reader, views sharing their root's buffer") {
    const graph::Graph g = parsed(chain);
    const graph::Partition p = graph::lower_detail::partition_pass(g, std::vector<bool>(g.nodes.size(), false));
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        std::vector<std::string> log;
        MemoryPlanner m(g, p, keep, log);
        // rule: every value's lifetime ends at its last NPU reader, known before emission
        const ValueId x = value(g, "x"), a = value(g, "a"), v = value(g, "v"), b = value(g, "b"), r = value(g, "r"),
                      d = value(g, "d");
        CHECK(m.plan().last_read[static_cast<std::size_t>(a)] == 1);
        CHECK(m.plan().last_read[static_cast<std::size_t>(v)] == 3);
        CHECK(m.plan().last_read[static_cast<std::size_t>(b)] == 5);
        CHECK(m.plan().last_read[static_cast<std::size_t>(r)] == -1);
        std::vector<Refusal> refused;
        m.place_inputs("graph mem", refused);
        CHECK(refused.empty());
        REQUIRE(m.placement(x));
        CHECK(m.placement(x)->region == 2);
        CHECK(m.plan().segment_inputs == std::vector<ValueId>{x});

        // emission order: each output placed before its node's inputs are released
        const graph::Placement pa = m.place_output(a, form_of(g, 0));
        m.release_dead(0);
        graph::Placement pv = pa;  // node 1: a view of %a
        pv.form = graph::Placement::Form::matrix, pv.h = 1, pv.c = 256;
        m.view(v, a, pv);
        m.release_dead(1);  // %a's last direct reader, but the view is read by node 3
        CHECK(m.plan().root[static_cast<std::size_t>(v)] == a);
        CHECK(m.plan().buffer_last[static_cast<std::size_t>(a)] == 3);  // rule: a view extends its root's life
        const graph::Placement pb = m.place_output(b, form_of(g, 2));
        CHECK(pb.region == 1);
        CHECK(pb.offset != pa.offset);  // %a lives on through its view
        m.release_dead(2);
        const graph::Placement pr = m.place_output(r, form_of(g, 3));
        CHECK(pr.region == 3);  // the host reads %r (a graph output): the output region
        m.release_dead(3);      // frees %a's buffer (through the view)
        const graph::Placement pd = m.place_output(d, form_of(g, 4));
        // rule: a freed scratch buffer is reused first-fit; under keep_intermediates nothing is freed
        if (keep)
            CHECK(pd.offset > pb.offset);
        else
            CHECK(pd.offset == pa.offset);
        m.release_dead(4);
        const graph::MemoryPlan plan = m.take();
        CHECK(plan.scratch.peak() == (keep ? 768 : 512));
        CHECK(plan.segment_outputs == std::vector<ValueId>{r});
    }
}

TEST_CASE("memory planning: the host reading a view keeps its root; a fused producer shares its activation's buffer") {
    const graph::Graph g = parsed(chain);
    std::vector<bool> host(g.nodes.size(), false);
    host[3] = true;  // the host reads the view %v
    const graph::Partition p = graph::lower_detail::partition_pass(g, host);
    std::vector<std::string> log;
    MemoryPlanner m(g, p, false, log);
    std::vector<Refusal> refused;
    m.place_inputs("graph mem", refused);
    const ValueId a = value(g, "a"), v = value(g, "v"), b = value(g, "b"), d = value(g, "d");
    // rule: a Flatten the host reads puts the input it views in the output region too (partition)
    const graph::Placement pa = m.place_output(a, form_of(g, 0));
    CHECK(pa.region == 3);
    m.view(v, a, pa);
    CHECK(m.plan().keep_buffer[static_cast<std::size_t>(a)]);
    CHECK(m.plan().segment_outputs == std::vector<ValueId>{a, v});
    // place_fused: %b written into %d's bytes, as a producer computing its activation does
    const graph::Placement pd = m.place_fused(b, d, form_of(g, 4));
    CHECK(m.plan().root[static_cast<std::size_t>(b)] == d);
    CHECK(m.placement(b) == m.placement(d));
    CHECK(pd.region == 1);
}

TEST_CASE("lower_graph keeps the passes' results; each dump is `;` lines after the IR that still parse as IR") {
    const graph::Graph g = parsed(two_segments);
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const graph::LoweredGraph l = lowered(g, keep);
        CHECK(l.partition.segments.size() == l.segments.size());
        CHECK(l.partition.host_before == l.host_before);
        CHECK(l.memory.placement == l.placement);
        CHECK(l.memory.segment_inputs == l.segment_inputs);
        CHECK(l.memory.segment_outputs == l.segment_outputs);
        CHECK(l.memory.scratch.peak() == l.scratch_peak);
        for (const std::string_view pass : graph::lowering_passes) {
            CAPTURE(pass);
            const auto text = graph::lowering_dump(g, l, pass);
            REQUIRE(text);
            CHECK(text->rfind("; ", 0) == 0);
            const auto again = graph::parse(graph::print(g, false) + *text, "dump.ir");
            CHECK_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message()));
        }
        CHECK(!graph::lowering_dump(g, l, "emission"));
        const std::string part = *graph::lowering_dump(g, l, "partition");
        CHECK(part.rfind("; partition: 2 of 5 nodes on the NPU, 2 segments\n;   segment 0: node 0\n"
                         ";   segment 1: node 3\n",
                         0) == 0);
        CHECK(part.find(";   host node 2 (Neg): the prologue (hoisted: it reads nothing the NPU computes) "
                        "[place-marked]\n") != std::string::npos);
        CHECK(part.find(";   host node 4 (DequantizeLinear): the epilogue [place-type]\n") != std::string::npos);
        CHECK(part.find(";   the host reads: %a %c\n") != std::string::npos);
        const std::string mem = *graph::lowering_dump(g, l, "memory");
        CHECK(mem.find(";   %a: output @0 +256 B, kept to the end\n") != std::string::npos);
    }
    // rule: with no node on the NPU every pass still has a result, and every dump prints it
    const graph::Graph host_only = parsed("graph h {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
                                          "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x) @host\n"
                                          "  output %a\n}\n");
    const graph::LoweredGraph none = lowered(host_only);
    CHECK(*graph::lowering_dump(host_only, none, "partition") ==
          "; partition: 0 of 1 nodes on the NPU, 0 segments\n;   host node 0 (Relu): the prologue [place-marked]\n");
    CHECK(*graph::lowering_dump(host_only, none, "fusion") ==
          "; fusion: 0 activations computed by the producer's kernel\n");
    CHECK(*graph::lowering_dump(host_only, none, "memory") ==
          "; memory: input 0 B, output 0 B, scratch peak 0 B (first-fit), constants 0 B\n");
}

TEST_CASE("pipeline goldens: every fixture's partition, fusion, memory plan and layout") {
    // A change in any pass's decisions on a fixture shows here as a diff of its dump (the programs' bytes are
    // checked elsewhere: tests/graph/lower.cpp, tests/janusc/cli_test.sh).
    for (const std::string& stem : janus_test::fixture_stems()) {
        CAPTURE(stem);
        const graph::Graph g = janus_test::optimized_fixture(stem);
        const graph::LoweredGraph l = lowered(g);
        std::string text;
        for (const std::string_view pass : graph::lowering_passes)
            text += "; after " + std::string(pass) + "\n" + *graph::lowering_dump(g, l, pass);
        // rule: the IR followed by the dumps still parses as IR (with its constants' data: the parser needs it)
        const auto again = graph::parse(graph::print(g) + text, stem + ".ir");
        CHECK_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message()));
        const std::filesystem::path golden = std::filesystem::path("graph/pipeline") / (stem + ".txt");
        if (janus_test::update_golden_requested()) {
            std::filesystem::create_directories(golden.parent_path());
            std::ofstream(golden, std::ios::binary) << text;
            continue;
        }
        REQUIRE_MESSAGE(std::filesystem::exists(golden),
                        golden.string() << " is missing; JANUS_UPDATE_GOLDEN=1 writes it");
        CHECK(text == janus_test::read_text(golden));
    }
}

}  // namespace pipeline_test
