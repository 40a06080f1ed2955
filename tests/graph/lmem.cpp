// LMEM between kernels (graph/lower.hpp MemoryPlanner::keep_in_lmem, emit/stream.hpp): a value that one streaming
// (elementwise) kernel writes and only streaming kernels read stays in LMEM, with no DRAM buffer, no store and no
// load. Checked here: which values memory planning keeps there and why it keeps the others in DRAM (a reader that
// does not stream, a kernel in between that does not, the host, the budgets), the dumps, and that the program is
// bit-identical to the reference engine with and without the values in LMEM, with no fault and no race, while it
// moves fewer bytes. (That the kernel barrier is what orders a value's writer before its reader in LMEM is shown at
// the emitter, tests/emit/elementwise.cpp: without the barrier, a graph's kernels fault whether or not values stay in
// LMEM, as docs/janusc.md "Kernel barrier" explains.)
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/compiled_sim.hpp"

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own namespace.
namespace lmem_test {

using namespace janus;

graph::ValueId value(const graph::Graph& g, std::string_view name) {
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].name == name) return static_cast<graph::ValueId>(i);
    FAIL("no value " << name);
    return graph::no_value;
}

graph::LoweredGraph lower(const graph::Graph& g, bool keep_intermediates, bool lmem) {
    graph::LowerOptions o{keep_intermediates};
    o.lmem_between_kernels = lmem;
    auto l = graph::lower_graph(g, o);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    return std::move(*l);
}

bool in_lmem(const graph::Graph& g, const graph::LoweredGraph& l, std::string_view name) {
    const auto& p = l.placement[static_cast<std::size_t>(value(g, name))];
    REQUIRE(p);
    CHECK(l.memory.in_lmem[static_cast<std::size_t>(value(g, name))] == p->in_lmem());
    return p->in_lmem();
}

bool logged(const graph::LoweredGraph& l, const std::string& line) {
    for (const std::string& s : l.memory.lmem_log)
        if (s == line) return true;
    FAIL_CHECK("no lmem line: " << line);
    return false;
}

std::vector<std::byte> bytes_of(const Tensor& t) { return *t.storage; }

// node 0 Add -> node 1 Sigmoid -> node 2 Mul (reads both) -> node 3 GlobalAveragePool and node 4 Relu (an output)
const std::string chain =
    "graph lm {\n  input %x: int8[1,16,8,8] q(int8 s=0.1 zp=3)\n  input %y: int8[1,16,8,8] q(int8 s=0.05 zp=-2)\n"
    "  %s: int8[1,16,8,8] q(int8 s=0.12 zp=1) = Add(%x, %y)\n"
    "  %t: int8[1,16,8,8] q(int8 s=0.00390625 zp=-128) = Sigmoid(%s)\n"
    "  %u: int8[1,16,8,8] q(int8 s=0.004 zp=-7) = Mul(%t, %s)\n"
    "  %p: int8[1,16,1,1] q(int8 s=0.004 zp=-7) = GlobalAveragePool(%u)\n"
    "  %r: int8[1,16,8,8] q(int8 s=0.004 zp=-7) = Relu(%u)\n"
    "  output %p\n  output %r\n}\n";

// node 1, a kernel that does not stream, runs between %s's producer and its reader
const std::string between =
    "graph bt {\n  input %x: int8[1,16,8,8] q(int8 s=0.1 zp=3)\n  input %y: int8[1,16,8,8] q(int8 s=0.05 zp=-2)\n"
    "  %s: int8[1,16,8,8] q(int8 s=0.12 zp=1) = Add(%x, %y)\n"
    "  %g: int8[1,16,1,1] q(int8 s=0.1 zp=3) = GlobalAveragePool(%x)\n"
    "  %t: int8[1,16,8,8] q(int8 s=0.12 zp=1) = Sub(%s, %y)\n"
    "  output %g\n  output %t\n}\n";

// activations fused into streaming producers (fusion_pass, Fuses::table), and the values their kernels write kept
// in LMEM: node 1 Relu is the Add's table on each tile, node 3 Neg is the Mul's, node 5 Relu is composed with node 4
// Sigmoid's table; %r (written by the Add's kernel) and %a (by the Mul's) stay in LMEM
const std::string fused =
    "graph fz {\n  input %x: int8[1,16,8,8] q(int8 s=0.1 zp=3)\n  input %y: int8[1,16,8,8] q(int8 s=0.05 zp=-2)\n"
    "  %s: int8[1,16,8,8] q(int8 s=0.12 zp=1) = Add(%x, %y)\n"
    "  %r: int8[1,16,8,8] q(int8 s=0.06 zp=-128) = Relu(%s)\n"
    "  %u: int8[1,16,8,8] q(int8 s=0.004 zp=-7) = Mul(%r, %x)\n"
    "  %a: int8[1,16,8,8] q(int8 s=0.004 zp=7) = Neg(%u)\n"
    "  %b: int8[1,16,8,8] q(int8 s=0.00390625 zp=-128) = Sigmoid(%a)\n"
    "  %c: int8[1,16,8,8] q(int8 s=0.00390625 zp=-128) = Relu(%b)\n"
    "  output %c\n}\n";

// 48 KiB values: %a and %b fit together (96 KiB), %c with both would hold 144 KiB; %big is 72 KiB alone
const std::string budget =
    "graph bg {\n  input %x: int8[1,16,48,64] q(int8 s=0.1 zp=3)\n  input %z: int8[1,16,48,96] q(int8 s=0.1 zp=3)\n"
    "  %a: int8[1,16,48,64] q(int8 s=0.1 zp=3) = Relu(%x)\n"
    "  %b: int8[1,16,48,64] q(int8 s=0.1 zp=-3) = Neg(%x)\n"
    "  %c: int8[1,16,48,64] q(int8 s=0.00390625 zp=-128) = Sigmoid(%x)\n"
    "  %d: int8[1,16,48,64] q(int8 s=0.2 zp=0) = Add(%a, %b)\n"
    "  %e: int8[1,16,48,64] q(int8 s=0.2 zp=0) = Add(%d, %c)\n"
    "  %big: int8[1,16,48,96] q(int8 s=0.1 zp=3) = Relu(%z)\n"
    "  %f: int8[1,16,48,96] q(int8 s=0.1 zp=-3) = Add(%big, %z)\n"
    "  output %e\n  output %f\n}\n";

TEST_CASE("memory planning keeps an elementwise chain's values in LMEM, and says why it keeps the others in DRAM") {
    const graph::Graph g = janus_test::parsed(chain, "chain.ir");
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const graph::LoweredGraph l = lower(g, keep, true);
        // rule: written by a streaming kernel, read only by streaming kernels, nothing else in between
        CHECK(in_lmem(g, l, "s"));
        CHECK(in_lmem(g, l, "t"));
        CHECK(logged(l, "lmem   %s of node 0 (Add): kept in LMEM to node 2 (Mul), 1024 B"));
        CHECK(logged(l, "lmem   %t of node 1 (Sigmoid): kept in LMEM to node 2 (Mul), 1024 B"));
        // rule: a reader whose kernel does not stream keeps the value in DRAM
        CHECK_FALSE(in_lmem(g, l, "u"));
        CHECK(logged(l, "lmem   %u of node 2 (Mul): in DRAM, node 3 (GlobalAveragePool) reads it and does not stream "
                        "it as it is"));
        // rule: a value the host reads (a graph output) is no candidate: it is in the output region
        CHECK(l.placement[static_cast<std::size_t>(value(g, "r"))]->region == 3);
        // the dumps: the memory plan says where the value is and until when, the layout says LMEM
        const std::string mem = *graph::lowering_dump(g, l, "memory");
        CHECK(mem.find(";   %s: LMEM @") != std::string::npos);
        CHECK(mem.find(", no DRAM: in LMEM until node 2 (Mul)\n") != std::string::npos);
        CHECK(mem.find(";   lmem   %u of node 2 (Mul): in DRAM") != std::string::npos);
        const auto again = graph::parse(graph::print(g, false) + mem + *graph::lowering_dump(g, l, "lower"), "d.ir");
        CHECK_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message()));
    }
    // rule: off (LowerOptions::lmem_between_kernels), every value is in DRAM
    const graph::LoweredGraph off = lower(g, false, false);
    CHECK_FALSE(in_lmem(g, off, "s"));
    CHECK(off.memory.lmem_log.empty());

    const graph::Graph b = janus_test::parsed(between, "between.ir");
    const graph::LoweredGraph lb = lower(b, false, true);
    // rule: every NPU kernel from the producer to the last reader must stream (it shares the LMEM the value holds)
    CHECK_FALSE(in_lmem(b, lb, "s"));
    CHECK(logged(lb, "lmem   %s of node 0 (Add): in DRAM, node 1 (GlobalAveragePool) runs before its last reader "
                     "and does not stream"));

    const graph::Graph c = janus_test::parsed(budget, "budget.ir");
    const graph::LoweredGraph lc = lower(c, false, true);
    CHECK(in_lmem(c, lc, "a"));
    CHECK(in_lmem(c, lc, "b"));
    // rule: at most lmem_keep_total bytes kept over a value's life, lmem_keep_value bytes for one value
    CHECK_FALSE(in_lmem(c, lc, "c"));
    CHECK(logged(lc, "lmem   %c of node 2 (Sigmoid): in DRAM, with the values kept over its life, 147456 B, above "
                     "131072 B"));
    CHECK_FALSE(in_lmem(c, lc, "big"));
    CHECK(logged(lc, "lmem   %big of node 5 (Relu): in DRAM, 73728 B, above the 65536 B one value may keep"));

    const graph::Graph f = janus_test::parsed(fused, "fused.ir");
    const graph::LoweredGraph lf = lower(f, false, true);
    std::vector<std::int64_t> into(f.nodes.size(), -1);
    into[1] = 0, into[3] = 2, into[5] = 4;
    CHECK(lf.fusion.fused_into == into);
    const auto fuse_logged = [&](const std::string& line) {
        return std::find(lf.fusion.log.begin(), lf.fusion.log.end(), line) != lf.fusion.log.end();
    };
    CHECK(fuse_logged("fuse   node 1 (Relu) after node 0 (Add): fused as a lut.apply on each output tile before the "
                      "store"));
    CHECK(fuse_logged("fuse   node 5 (Relu) after node 4 (Sigmoid): fused, its table composed with the producer's "
                      "(one lut.apply)"));
    // rule: the value a kernel writes for its fused activation is kept in LMEM like its own
    CHECK(in_lmem(f, lf, "r"));
    CHECK(in_lmem(f, lf, "a"));
    CHECK(logged(lf, "lmem   %r of node 0 (Add): kept in LMEM to node 2 (Mul), 1024 B"));
    CHECK(logged(lf, "lmem   %a of node 2 (Mul): kept in LMEM to node 4 (Sigmoid), 1024 B"));
    std::size_t code = 0;  // three kernels for six nodes
    for (const auto& n : lf.npu) code += n.code_end > n.code_begin ? 1 : 0;
    CHECK(code == 3);
}

TEST_CASE("values in LMEM: both engines bit-identical, no fault, no race, fewer DMA bytes than with all in DRAM") {
    for (const std::string& text : {chain, between, budget, fused}) {
        const graph::Graph g = janus_test::parsed(text, "lmem.ir");
        CAPTURE(g.name);
        const graph::LoweredGraph on = lower(g, false, true), off = lower(g, false, false);
        for (unsigned seed : {1u, 2u, 3u}) {
            CAPTURE(seed);
            const auto in = graph::seeded_inputs(g, seed);
            const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
            REQUIRE(ref.ok());
            std::uint64_t dma[2] = {0, 0};
            for (const bool lmem : {true, false}) {
                // run_npu faults on a fault (npu-fault) or a race (npu-race) of the simulator
                const auto r =
                    graph::run_npu(g, lmem ? on : off, in, janus_tools::kernel_by_name, janus_test::simulate);
                REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
                REQUIRE(r->outputs.size() == ref->size());
                for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(r->outputs[i]) == bytes_of((*ref)[i]));
                dma[lmem ? 0 : 1] = r->report.dma_bytes;
            }
            if (g.name == "bt")
                CHECK(dma[0] == dma[1]);  // nothing is kept
            else
                CHECK(dma[0] < dma[1]);
        }
        // verify (every intermediate kept): the values in LMEM are listed as not compared, every other is identical
        const graph::LoweredGraph kept = lower(g, true, true);
        const auto v = graph::verify_engines(g, kept, graph::seeded_inputs(g, 4), janus_tools::kernel_by_name,
                                             janus_test::simulate);
        REQUIRE(v.ok());
        CHECK(v->first_divergence() == v->values.size());
        std::vector<bool> fused_producer(g.nodes.size(), false);  // it shares its activation's placement
        for (const auto& n : kept.npu) fused_producer[n.node] = n.fused;
        std::size_t listed = 0, lmem_values = 0;
        for (const auto& d : v->values) {
            listed += d.in_lmem && !d.materialized;
            const auto& p = kept.placement[static_cast<std::size_t>(d.value)];
            lmem_values += p && p->in_lmem() && !fused_producer[d.node];
        }
        CHECK(listed == lmem_values);
        CHECK(listed == (g.name == "lm" || g.name == "bg" || g.name == "fz" ? 2u : 0u));
    }
}

}  // namespace lmem_test
