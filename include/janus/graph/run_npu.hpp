#pragma once
// The NPU engine: a lowered graph (graph/lower.hpp) run on the vnpu simulator, with its host nodes around it.
//
// Contract: `run_npu(g, lowered, inputs, kernel, simulate)` takes the inputs as run_reference does (one contiguous
// tensor per graph input, in `g.inputs` order) and returns one tensor per graph output. The host prologue runs on
// the reference kernels; then, for each segment of the program, the host nodes before it run (reference kernels),
// the values crossing into it are packed into the input region (NCHW -> NHWC, the padding lanes filled with 0x5A
// so that a kernel reading them as data shows), the simulator runs it from its entry pc over the same machine, and
// its outputs are unpacked with the graph's own types (int8 codes, or the little-endian int32 sums of ConvInteger and
// MatMulInteger); the host epilogue runs last. The report adds up the
// segments' runs (vnpu::sim::accumulate). A fault or a race is an error (rule npu-fault, npu-race): the compiler
// produced a wrong program. `observe` sees every value the host computes and, when the lowering kept its
// intermediates, every value the NPU computes, in node order. `simulate` is vnpu::sim::run, passed in so that only
// one translation unit of a program instantiates the simulator.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/graph/execute.hpp>
#include <janus/graph/lower.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace janus::graph {

using SimulateFn = vnpu::sim::Report (*)(std::span<const vnpu::Instr> program, vnpu::sim::Machine& machine,
                                         vnpu::sim::Options options);

struct NpuRun {
    std::vector<Tensor> outputs;
    vnpu::sim::Report report;
};

inline void pack_value(const Tensor& t, const Placement& p, std::vector<std::uint8_t>& region) {
    const auto v = t.to_vector<std::int8_t>();
    for (std::size_t i = 0; i < v.size(); ++i)
        region[p.offset + static_cast<std::size_t>(p.byte_of(static_cast<std::int64_t>(i)))] =
            static_cast<std::uint8_t>(v[i]);
}

inline Tensor unpack_value(const std::vector<std::uint8_t>& region, const Placement& p, const ops::TensorType& type) {
    if (type.dtype == DType::i32) {  // ConvInteger / MatMulInteger sums: 4 bytes per element, little endian
        std::vector<std::int32_t> v(static_cast<std::size_t>(element_count(type.shape)));
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::size_t at = p.offset + static_cast<std::size_t>(p.byte_of(static_cast<std::int64_t>(i)));
            std::uint32_t u = 0;
            for (std::size_t k = 0; k < 4; ++k) u |= static_cast<std::uint32_t>(region[at + k]) << (8 * k);
            v[i] = static_cast<std::int32_t>(u);
        }
        return Tensor::from<std::int32_t>(type.shape, v);
    }
    std::vector<std::int8_t> v(static_cast<std::size_t>(element_count(type.shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<std::int8_t>(
            region[p.offset + static_cast<std::size_t>(p.byte_of(static_cast<std::int64_t>(i)))]);
    return Tensor::from<std::int8_t>(type.shape, v, *type.quant);
}

inline Result<NpuRun> run_npu(const Graph& g, const LoweredGraph& L, std::span<const Tensor> inputs, KernelFn kernel,
                              SimulateFn simulate, const Observer& observe = {}, ops::OpContext ctx = {}) {
    const std::string what = "graph " + g.name;
    ctx.rounding = L.rounding;  // the host nodes round as the program was compiled to (LowerOptions::rounding)
    JANUS_TRY(Env env, bind_inputs(g, inputs));
    for (std::size_t k : L.host_before) JANUS_CHECK(run_node(g, k, env, kernel, observe, ctx));

    NpuRun result;
    if (!L.npu.empty()) {
        vnpu::sim::Machine m;
        m.dram[0] = L.program.weights;
        m.dram[1].assign(static_cast<std::size_t>(L.scratch_peak), 0x5A);
        m.dram[2].assign(static_cast<std::size_t>(L.input_bytes), 0x5A);
        m.dram[3].assign(static_cast<std::size_t>(L.output_bytes), 0x5A);
        for (std::size_t s = 0; s < L.segments.size(); ++s) {
            const LoweredSegment& sg = L.segments[s];
            if (s > 0)
                for (std::size_t k : sg.host_before) JANUS_CHECK(run_node(g, k, env, kernel, observe, ctx));
            const std::size_t inputs_end =
                s + 1 < L.segments.size() ? L.segments[s + 1].first_input : L.segment_inputs.size();
            for (std::size_t i = sg.first_input; i < inputs_end; ++i) {
                const ValueId x = L.segment_inputs[i];
                pack_value(*env[static_cast<std::size_t>(x)], *L.placement[static_cast<std::size_t>(x)], m.dram[2]);
            }
            vnpu::sim::Options so;
            so.name = g.name;
            so.entry = sg.entry;
            const vnpu::sim::Report r = simulate(L.program.code, m, so);
            vnpu::sim::accumulate(result.report, r);
            if (r.fault) {
                const Error& f = *r.fault;
                std::string where;  // the debug map names the node whose instructions faulted
                if (f.position.rfind("pc ", 0) == 0) {
                    const std::size_t pc = std::stoul(f.position.substr(3));
                    for (const LoweredNode& ln : L.npu)
                        if (pc >= ln.code_begin && pc < ln.code_end)
                            where = " in node " + std::to_string(ln.node) + " (" + g.nodes[ln.node].op + " " +
                                    g.nodes[ln.node].origin + ")";
                }
                return make_error(what, "", vnpu::sim::is_limit_fault(f) ? f.rule : "npu-fault",
                                  "the program faulted" + where + ": " + f.message());
            }
            if (!r.races.empty())
                return make_error(what, "", "npu-race",
                                  "the race detector found " + std::to_string(r.races.size()) +
                                      " unsynchronized accesses: the lowering's sync is wrong");
            for (std::size_t i = sg.first_node; i < sg.end_node; ++i) {
                const LoweredNode& ln = L.npu[i];
                if (ln.fused) continue;  // not materialized: its bytes are the fused activation's output
                const ValueId o = g.nodes[ln.node].outputs[0];
                const Placement& p = *L.placement[static_cast<std::size_t>(o)];
                if (p.in_lmem()) continue;  // kept in LMEM between two kernels: no DRAM holds it
                if (!L.intermediates_kept &&
                    std::find(L.segment_outputs.begin(), L.segment_outputs.end(), o) == L.segment_outputs.end())
                    continue;
                Tensor t = unpack_value(m.dram[static_cast<std::size_t>(p.region)], p, g.value(o).type);
                if (observe) observe(ln.node, o, t);
                env[static_cast<std::size_t>(o)] = std::move(t);
            }
        }
    }
    for (std::size_t k : L.host_after) JANUS_CHECK(run_node(g, k, env, kernel, observe, ctx));
    for (ValueId v : g.outputs) {
        if (!env[static_cast<std::size_t>(v)])
            return make_error(what, g.value(v).name, "npu-output", "the graph output was not computed");
        result.outputs.push_back(*env[static_cast<std::size_t>(v)]);
    }
    return result;
}

/// One value compared across the engines (or, when not materialized, listed without a comparison).
struct ValueDiff {
    std::size_t node = 0;
    ValueId value = no_value;
    std::int64_t elements = 0, differing = 0;
    std::int64_t first = -1;     ///< the first differing element (row-major), -1: identical
    std::int64_t max_steps = 0;  ///< int8/uint8: the largest difference in codes
    bool materialized = true;    ///< false: no DRAM holds this value on the NPU: a producer fused with its
                                 ///< activation, or a value kept in LMEM between two kernels (in_lmem)
    bool in_lmem = false;
};

struct Verification {
    std::vector<ValueDiff> values;  ///< one per node, in node order
    vnpu::sim::Report report;
    /// The index in `values` of the first value that differs, or values.size().
    std::size_t first_divergence() const {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (values[i].differing) return i;
        return values.size();
    }
};

/// Run both engines on `inputs` and compare every node's value element by element (janusc verify), both with the
/// lowering's rounding. `lowered` must keep its intermediates (LowerOptions::keep_intermediates), so that every NPU
/// value can be read back.
inline Result<Verification> verify_engines(const Graph& g, const LoweredGraph& lowered, std::span<const Tensor> inputs,
                                           KernelFn kernel, SimulateFn simulate) {
    if (!lowered.intermediates_kept)
        return make_error("graph " + g.name, "", "verify-intermediates",
                          "verify needs a lowering that keeps its intermediates (LowerOptions::keep_intermediates)");
    std::vector<std::optional<Tensor>> ref(g.values.size());
    const auto host = run_reference(
        g, inputs, kernel, [&](std::size_t, ValueId v, const Tensor& t) { ref[static_cast<std::size_t>(v)] = t.clone(); },
        ops::OpContext{true, lowered.rounding});
    if (!host.ok()) return host.error();
    Verification ver;
    JANUS_TRY(NpuRun npu, run_npu(g, lowered, inputs, kernel, simulate, [&](std::size_t k, ValueId v, const Tensor& t) {
                  const Tensor a = ref[static_cast<std::size_t>(v)]->clone(), b = t.clone();
                  ValueDiff d{k, v, a.elements(), 0, -1, 0};
                  const std::size_t width = dtype_size(a.dtype);
                  const auto& x = *a.storage;
                  const auto& y = *b.storage;
                  for (std::int64_t i = 0; i < d.elements; ++i) {
                      const auto at = static_cast<std::size_t>(i) * width;
                      if (std::memcmp(&x[at], &y[at], width) == 0) continue;
                      if (d.first < 0) d.first = i;
                      ++d.differing;
                      if (a.dtype == DType::i8 || a.dtype == DType::u8) {
                          const auto code = [&](std::byte v) {
                              const int u = std::to_integer<int>(v);
                              return a.dtype == DType::i8 && u > 127 ? u - 256 : u;
                          };
                          d.max_steps = std::max<std::int64_t>(d.max_steps, std::abs(code(x[at]) - code(y[at])));
                      }
                  }
                  ver.values.push_back(d);
              }));
    ver.report = std::move(npu.report);
    for (const LoweredNode& ln : lowered.npu) {
        const ValueId o = g.nodes[ln.node].outputs[0];
        const bool lmem = !ln.fused && lowered.placement[static_cast<std::size_t>(o)]->in_lmem();
        if (ln.fused || lmem)
            ver.values.push_back({ln.node, o, element_count(g.value(o).type.shape), 0, -1, 0, false, lmem});
    }
    std::stable_sort(ver.values.begin(), ver.values.end(),
                     [](const ValueDiff& a, const ValueDiff& b) { return a.node < b.node; });
    return ver;
}

}  // namespace janus::graph
