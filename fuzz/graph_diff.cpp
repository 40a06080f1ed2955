// Fuzz target: differential verification of the whole graph path (issue 6): IR text -> the default passes ->
// lower_graph -> run_npu on the simulator, against the reference engine.
//
// Input: IR text (graph/parse.hpp). Seeds: the pass tests (tests/graph/passes/*.ir), the imported fixtures
// (tests/graph/text/*.ir) and small graphs of every op the lowering takes (fuzz/corpus/graph_diff/).
// Graphs with a value above 65536 elements or more than 64 nodes are skipped (executions stay fast).
// Properties (a __builtin_trap() when broken):
//   1. every refusal (parse, reference run, lowering) is a well-formed Error: input, rule and detail non-empty;
//   2. a graph the reference engine runs gets through the default passes (a rewrite a kernel refuses is logged and
//      not taken, never an error), and the passes keep the reference outputs bit for bit, unless
//      batch-norm-to-conv logs codes it changes (by 1 LSB each, which later ops may magnify: its unit tests bound
//      its own output);
//   3. a graph the lowering accepts runs on the simulator without a fault or a race, and every output is
//      bit-identical to the reference engine's on the graph after the passes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <janus/graph/execute.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/ops/dispatch.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "run_support.hpp"

namespace {

using namespace janus;

const janus_fuzz::Properties check{"graph_diff"};

vnpu::sim::Report simulate(std::span<const vnpu::Instr> program, vnpu::sim::Machine& machine,
                           vnpu::sim::Options options) {
    return vnpu::sim::run(program, machine, std::move(options));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto g = graph::parse(text, "fuzz.ir");
    if (!g.ok()) {
        check.well_formed(g.error(), "parse");
        return 0;
    }
    if (g->nodes.size() > 64) return 0;
    for (const auto& v : g->values)
        if (element_count(v.type.shape) > 65536) return 0;
    const graph::KernelFn kernel = &ops::call_by_name;
    const auto in = graph::seeded_inputs(*g, 1);
    const auto before = graph::run_reference(*g, in, kernel);
    if (!before.ok()) {
        check.well_formed(before.error(), "reference");
        return 0;
    }
    graph::PassLog log;
    const Status passed = graph::run_passes(*g, graph::default_pipeline, log, {kernel});
    if (!passed.ok()) std::fprintf(stderr, "graph_diff: passes: %s\n", passed.error().message().c_str());
    check(passed.ok(), "a graph the reference engine runs gets through the default passes");
    const auto after = graph::run_reference(*g, in, kernel);
    check(after.ok(), "the graph after the passes runs on the reference engine");
    bool changes_codes = false;  // batch-norm-to-conv's log: "N of M codes differ from the BatchNorm kernel"
    for (const auto& line : log)
        changes_codes = changes_codes || (line.starts_with("batch-norm-to-conv:") &&
                                          line.find("codes differ from the BatchNorm kernel") != std::string::npos);
    const auto b = janus_fuzz::bytes(*before), a = janus_fuzz::bytes(*after);
    check(a.size() == b.size(), "the passes keep the outputs");
    if (!changes_codes) check(a == b, "the passes keep the reference outputs bit for bit");
    const auto lowered = graph::lower_graph(*g, graph::LowerOptions{false, true});
    if (!lowered.ok()) {
        check.well_formed(lowered.error(), "lower");
        return 0;
    }
    const auto npu = graph::run_npu(*g, *lowered, in, kernel, &simulate);
    if (!npu.ok()) std::fprintf(stderr, "graph_diff: %s\n", npu.error().message().c_str());
    check(npu.ok(), "a lowered graph runs on the simulator without a fault or a race");
    check(janus_fuzz::bytes(npu->outputs) == a, "the NPU engine's outputs equal the reference engine's");
    return 0;
}
