#pragma once
// A lowered graph as a package (.jpk), and a package run on the simulator (janusc compile, janusc run MODEL.jpk).
//
// Contract:
//   - compile_package(g, lowered) returns the package of docs/package.md: the program's words, its constants, the
//     region sizes, the I/O descriptors, the scratch values as buffers and the debug map (each NPU node's
//     instructions, named by its ONNX node(s)). It has one of two forms:
//       boundary form, when every host node is a conversion at the program's boundary:
//         input:  QuantizeLinear of a float32 graph input, or Requantize of a uint8 graph input to int8;
//         output: DequantizeLinear to a float32 graph output, or Requantize of int8 to a uint8 graph output.
//       The descriptors are the model's inputs and outputs: the boundary dtype (the model's), the storage (int8),
//       the NPU's strides (NHWC, padded channels: seed B4) and the storage quantization.
//       host form, otherwise (a float tail, a host node in front of the program or between its segments, integer
//       ops the NPU cannot store, no NPU node at all): the descriptors are the program's own int8 inputs and
//       outputs, the host section holds the host nodes as graph IR text (host_package says how the text's graph is
//       laid out), and the segments section says where each segment after the first starts.
//     In the host form, a program output that is a view (a Flatten / Reshape with no code of its own) is handed
//     over as the value it views, and the reshape runs on the host. A program value the package still cannot
//     describe (outside its region, no strided layout) is refused (package-layout).
//   - host_plan(p) parses and checks a host section (its rules are listed there); run_package(p, inputs, kernel,
//     simulate) runs the host prologue, each segment after the host nodes before it, then the host epilogue.
//     run_program runs the program alone: one tensor per descriptor, converted with the registry's own kernels
//     (QuantizeLinear, Requantize: the ones the reference engine runs), placed by its strides, every segment run in
//     turn, the outputs converted back (DequantizeLinear, Requantize; int32 outputs without quantization, the sums of
//     ConvInteger and MatMulInteger, are read as they are). ProgramRun is the machine both use. A fault
//     or a race is an error (npu-fault, npu-race).
// Both are deterministic: the same graph gives the same package bytes (seed D8).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/package/package.hpp>

namespace janus::graph {

namespace compile_detail {

inline std::string node_text(const Graph& g, std::size_t k) {
    return "node " + std::to_string(k) + " (" + g.nodes[k].op + " " + g.nodes[k].origin + ")";
}

/// The strides of a placement over its logical shape, or nullopt when it has none (a column-mapped view).
inline std::optional<std::vector<std::int64_t>> strides_of(const Placement& p) {
    if (p.form == Placement::Form::image)
        return std::vector<std::int64_t>{p.h * p.w * p.pitch, p.elem, p.w * p.pitch, p.pitch};
    if (p.form == Placement::Form::stack) return std::vector<std::int64_t>{p.h * p.pitch, p.pitch, p.elem};
    if (!p.columns.empty()) return std::nullopt;
    return std::vector<std::int64_t>{p.pitch, p.elem};
}

inline package::Quantization quantization_of(const numeric::QuantParams& q) {
    package::Quantization r;
    r.scales = q.scales;
    r.zero_points.assign(q.zero_points.begin(), q.zero_points.end());
    r.axis = q.axis ? static_cast<std::int32_t>(*q.axis) : 0;
    return r;
}

/// The logical shape and storage quantization of a descriptor the runner can place: int8 storage, per-tensor.
inline Result<std::pair<Shape, numeric::QuantParams>> runnable(const package::IoDesc& d, const std::string& what) {
    if (d.shape.size() > static_cast<std::size_t>(max_rank))
        return make_error(what, "", "package-rank",
                          "rank " + std::to_string(d.shape.size()) + " is above " + std::to_string(max_rank));
    // per-axis quantization needs no conversion when the boundary is the int8 storage itself (MatMulInteger's A with
    // a zero point per row)
    const bool per_axis_ok = d.dtype == d.storage && d.quant.scales.size() > 1;
    if (d.storage != DType::i8 || (d.quant.scales.size() != 1 && !per_axis_ok))
        return make_error(what, "", "package-storage",
                          "the runner places int8 storage with per-tensor quantization (or per-axis without a "
                          "conversion) only, not " +
                              std::string(dtype_name(d.storage)) + " with " + std::to_string(d.quant.scales.size()) +
                              " quantization entries for a " + std::string(dtype_name(d.dtype)) + " boundary");
    Shape shape;
    for (const std::int64_t x : d.shape) shape.push_back(x);
    if (per_axis_ok) {
        JANUS_TRY(auto q, numeric::make_quant_per_axis(d.storage, d.quant.scales, d.quant.zero_points, d.quant.axis,
                                                       shape, what));
        return std::pair<Shape, numeric::QuantParams>{shape, q};
    }
    JANUS_TRY(auto q, numeric::make_quant(d.storage, d.quant.scales[0], d.quant.zero_points[0]));
    return std::pair<Shape, numeric::QuantParams>{shape, q};
}

/// The descriptor of graph input/output `v` (boundary dtype) whose NPU value is `inner`.
inline Result<package::IoDesc> io_desc(const Graph& g, const LoweredGraph& L, ValueId v, ValueId inner,
                                       const std::string& what) {
    const Value& outer = g.value(v);
    const Value& in = g.value(inner);
    const Placement& p = *L.placement[static_cast<std::size_t>(inner)];
    const auto strides = strides_of(p);
    if (!strides)
        return make_error(what, outer.name, "package-layout",
                          "the NPU holds " + in.name +
                              " as a view with no strided layout of its own (a flattened "
                              "image); the package cannot describe it");
    package::IoDesc d;
    d.name = outer.name;
    d.dtype = outer.type.dtype;
    d.storage = in.type.dtype;
    for (int k = 0; k < in.type.shape.size(); ++k) d.shape.push_back(in.type.shape[k]);
    d.strides = *strides;
    if (in.type.quant) d.quant = quantization_of(*in.type.quant);  // none: int32 sums (ConvInteger, MatMulInteger)
    d.offset = p.offset;
    d.size = static_cast<std::uint64_t>(emit::round16(p.bytes()));
    return d;
}

/// The boundary form: every host node converts one graph input into the program or one program output into a graph
/// output, and every program value the model sees has a strided layout in its region; the I/O descriptors are the
/// model's. Nothing when the graph does not have that form (the host form then holds it).
inline std::optional<package::Package> boundary_package(const Graph& g, const LoweredGraph& L) {
    const std::string what = "graph " + g.name;
    if (L.segments.size() != 1) return std::nullopt;  // host nodes between segments: the host form holds them
    std::vector<bool> converted(g.nodes.size(), false);
    package::Package p;

    // inputs: a segment input itself, or one boundary conversion into one
    for (ValueId gi : g.inputs) {
        ValueId inner = no_value;
        if (L.placement[static_cast<std::size_t>(gi)] && L.placement[static_cast<std::size_t>(gi)]->region == 2)
            inner = gi;
        for (std::size_t k : L.host_before) {
            const Node& n = g.nodes[k];
            if (n.inputs.empty() || n.inputs[0] != gi) continue;
            const ValueId o = n.outputs[0];
            const bool quantize = n.op == "QuantizeLinear" && g.value(gi).type.dtype == DType::f32;
            const bool shift = n.op == "Requantize" && g.value(gi).type.dtype == DType::u8;
            if (!(quantize || shift) || inner != no_value || !L.placement[static_cast<std::size_t>(o)] ||
                L.placement[static_cast<std::size_t>(o)]->region != 2)
                return std::nullopt;
            inner = o;
            converted[k] = true;
        }
        if (inner == no_value) return std::nullopt;
        auto d = io_desc(g, L, gi, inner, what);
        if (!d) return std::nullopt;
        p.inputs.push_back(std::move(*d));
    }
    // outputs: a segment output itself, or one boundary conversion of one
    for (ValueId go : g.outputs) {
        ValueId inner = no_value;
        for (std::size_t k : L.host_after)
            if (g.nodes[k].outputs[0] == go) {
                const Node& n = g.nodes[k];
                const ValueId x = n.inputs.empty() ? no_value : n.inputs[0];
                const bool dequantize = n.op == "DequantizeLinear" && g.value(go).type.dtype == DType::f32;
                const bool shift = n.op == "Requantize" && g.value(go).type.dtype == DType::u8;
                if (!(dequantize || shift) || x == no_value || !L.placement[static_cast<std::size_t>(x)])
                    return std::nullopt;
                inner = x;
                converted[k] = true;
            }
        if (inner == no_value && L.placement[static_cast<std::size_t>(go)]) inner = go;
        if (inner == no_value) return std::nullopt;
        if (L.placement[static_cast<std::size_t>(inner)]->region != 3) return std::nullopt;
        auto d = io_desc(g, L, go, inner, what);
        if (!d) return std::nullopt;
        p.outputs.push_back(std::move(*d));
    }
    for (const auto* list : {&L.host_before, &L.host_after})
        for (std::size_t k : *list)
            if (!converted[k]) return std::nullopt;
    return p;
}

/// The host form: the program's own inputs and outputs as int8 descriptors, the host nodes as graph IR text (the
/// host section) and, when host nodes run between segments, where each segment starts (the segments section). The
/// text's graph takes the model's inputs, then the program's outputs (in p.outputs order, under their names); its
/// nodes are the host nodes in graph order: the first `prologue` before segment 0, then each segment's
/// SegmentStart::nodes_before, the rest after the last segment. The host graph is verified with `infer`.
inline Result<package::Package> host_package(const Graph& g, const LoweredGraph& L, InferFn infer) {
    const std::string what = "graph " + g.name;
    package::Package p;
    Graph h;
    h.name = g.name;
    std::vector<ValueId> map(g.values.size(), no_value);
    const auto copy = [&](ValueId v, ValueKind kind) {
        ValueId& m = map[static_cast<std::size_t>(v)];
        if (m == no_value) {
            m = h.add_value(g.value(v).name, g.value(v).type, kind);
            if (kind == ValueKind::constant) h.value(m).data = g.value(v).data;
        }
        return m;
    };
    for (ValueId v : g.inputs) h.inputs.push_back(copy(v, ValueKind::input));
    // A program output that is a view (a Flatten / Reshape that emitted no code) is not handed over: its input is
    // (the lowering keeps it in the output region), and the reshape runs on the host after the view's segment.
    const std::size_t n_segments = std::max<std::size_t>(L.segments.size(), 1);
    std::vector<std::vector<std::size_t>> views(n_segments);  // per segment: its view nodes the host reads
    std::vector<std::size_t> first_output(n_segments, 0);     // per segment: its first index in p.outputs
    for (std::size_t s = 0; s < L.segments.size(); ++s) {
        const LoweredSegment& sg = L.segments[s];
        for (std::size_t i = sg.first_node; i < sg.end_node; ++i) {
            const LoweredNode& n = L.npu[i];
            const ValueId o = g.nodes[n.node].outputs[0];
            if (n.code_end == n.code_begin && std::count(L.segment_outputs.begin(), L.segment_outputs.end(), o))
                views[s].push_back(n.node);
        }
    }
    const auto is_view = [&](ValueId v) {
        for (const auto& list : views)
            for (std::size_t k : list)
                if (g.nodes[k].outputs[0] == v) return true;
        return false;
    };
    for (std::size_t i = 0; i < L.segment_outputs.size(); ++i) {
        const ValueId v = L.segment_outputs[i];
        for (std::size_t s = 1; s < L.segments.size(); ++s)
            if (i < L.segments[s].first_output && !is_view(v)) ++first_output[s];
        if (is_view(v)) continue;
        if (L.placement[static_cast<std::size_t>(v)]->region != package::region_output)
            return make_error(
                what, g.value(v).name, "package-layout",
                "the NPU holds " + g.value(v).name + " outside the output region (a view of another buffer)");
        h.inputs.push_back(copy(v, ValueKind::input));
        JANUS_TRY(auto d, io_desc(g, L, v, v, what));
        p.outputs.push_back(std::move(d));
    }
    for (ValueId v : L.segment_inputs) {
        JANUS_TRY(auto d, io_desc(g, L, v, v, what));
        p.inputs.push_back(std::move(d));
    }
    // The host nodes in run order: before segment 0, then before each later segment (the previous one's views
    // first), then after the last one.
    std::vector<std::vector<std::size_t>> phases{L.host_before};
    for (std::size_t s = 1; s < L.segments.size(); ++s) {
        phases.push_back(views[s - 1]);
        phases.back().insert(phases.back().end(), L.segments[s].host_before.begin(), L.segments[s].host_before.end());
    }
    phases.push_back(views.back());
    phases.back().insert(phases.back().end(), L.host_after.begin(), L.host_after.end());
    std::vector<std::size_t> nodes_before;  // per phase boundary: the host nodes that run before segment s
    for (const auto& list : phases) {
        for (std::size_t k : list) {
            Node n = g.nodes[k];
            n.target = Target::host;  // in the package, every node of the host graph runs on the host
            for (ValueId& x : n.inputs) {
                if (x == no_value) continue;
                if (g.value(x).kind == ValueKind::constant) {
                    x = copy(x, ValueKind::constant);
                } else if (map[static_cast<std::size_t>(x)] == no_value) {
                    return make_error(what, node_text(g, k), "package-host-op",
                                      "reads " + g.value(x).name + ", which only the NPU program holds");
                } else {
                    x = map[static_cast<std::size_t>(x)];
                }
            }
            for (ValueId& o : n.outputs) o = copy(o, ValueKind::node);
            h.nodes.push_back(std::move(n));
        }
        nodes_before.push_back(h.nodes.size());
    }
    for (ValueId v : g.outputs) {
        if (g.value(v).kind == ValueKind::constant) copy(v, ValueKind::constant);  // a model that outputs a constant
        if (map[static_cast<std::size_t>(v)] == no_value)
            return make_error(what, g.value(v).name, "package-host-op",
                              "the graph output is computed neither on the host nor by the program");
        h.outputs.push_back(map[static_cast<std::size_t>(v)]);
    }
    JANUS_CHECK(verify(h, {}, {}, infer));
    p.host = package::HostSection{static_cast<std::uint32_t>(nodes_before[0]), print(h)};
    for (std::size_t s = 1; s < L.segments.size(); ++s)
        p.segments.push_back({L.segments[s].entry, static_cast<std::uint32_t>(nodes_before[s]),
                              static_cast<std::uint32_t>(L.segments[s].first_input),
                              static_cast<std::uint32_t>(first_output[s])});
    return p;
}

}  // namespace compile_detail

/// The placement of a lowered graph as the package records it (section 8).
inline package::PlacementRecord placement_record(const Graph& g, const LoweredGraph& L) {
    package::PlacementRecord r;
    r.nodes = static_cast<std::uint32_t>(g.nodes.size());
    for (const HostPlacement& h : L.host_placements)
        r.host.push_back({static_cast<std::uint32_t>(h.node), g.nodes[h.node].origin, g.nodes[h.node].op, h.rule,
                          h.why, h.quantized});
    return r;
}

/// "placement: N of T nodes on the NPU" and one line per host node with its rule (package::placement_text): what
/// `janusc compile`, `run --engine npu` and `verify` print, and the goldens of tests/graph/placement/ pin.
inline std::string placement_text(const Graph& g, const LoweredGraph& L) {
    return package::placement_text(placement_record(g, L));
}

/// `infer` types the host section's nodes (a compiler with ops of its own passes its InferFn, graph/ir.hpp).
inline Result<package::Package> compile_package(const Graph& g, const LoweredGraph& L,
                                                InferFn infer = &ops::infer_by_name) {
    using namespace compile_detail;
    auto boundary = L.npu.empty() ? std::nullopt : boundary_package(g, L);
    if (!boundary) {
        JANUS_TRY(boundary, host_package(g, L, infer));
    }
    package::Package p = std::move(*boundary);
    for (const vnpu::Instr& in : L.program.code) {
        JANUS_TRY(const vnpu::Word w, vnpu::encode(in));
        p.code.push_back(w);
    }
    p.weights = L.program.weights;
    p.scratch_bytes = static_cast<std::uint64_t>(emit::round16(L.scratch_peak));
    p.input_bytes = static_cast<std::uint64_t>(L.input_bytes);
    p.output_bytes = static_cast<std::uint64_t>(L.output_bytes);
    if (!p.weights.empty()) p.buffers.push_back({"constants", package::BufferKind::constant, 0, p.weights.size()});
    for (const LoweredNode& n : L.npu) {
        const ValueId o = g.nodes[n.node].outputs[0];
        const Placement& pl = *L.placement[static_cast<std::size_t>(o)];
        if (!n.fused && pl.region == 1 && (pl.columns.empty() || pl.form == Placement::Form::image) &&
            !(g.nodes[n.node].op == "Flatten" || g.nodes[n.node].op == "Reshape"))
            p.buffers.push_back({g.value(o).name, package::BufferKind::scratch, pl.offset,
                                 static_cast<std::uint64_t>(emit::round16(pl.bytes()))});
        if (n.code_end > n.code_begin)
            p.debug.push_back({static_cast<std::uint32_t>(n.code_begin), static_cast<std::uint32_t>(n.code_end),
                               g.nodes[n.node].origin, g.nodes[n.node].op});
    }
    p.placement = placement_record(g, L);
    p.rounding = L.rounding;
    return p;
}

/// The DRAM a run of `p` allocates beyond what its file holds: the scratch, input and output regions (the weights
/// region is the file's own bytes). A caller checks it against its memory budget (core/limits.hpp charge_memory)
/// before it runs a package from outside: a 452-byte package may ask for 3 x 4 GiB.
inline std::uint64_t package_run_bytes(const package::Package& p) {
    return p.scratch_bytes + p.input_bytes + p.output_bytes;
}

/// The context the host kernels of package `p` run with: the caller's (simd), with the package's own rounding
/// (package::effective_rounding; the program's requantizations were compiled with it).
inline ops::OpContext package_context(const package::Package& p, ops::OpContext ctx) {
    ctx.rounding = package::effective_rounding(p);
    return ctx;
}

/// A package's program on one machine, segment by segment: the regions sized from the package (scratch, input and
/// output filled with 0x5A), each input converted with the registry's own kernels (QuantizeLinear, Requantize: the
/// ones the reference engine runs) and placed by its strides, each output read back by its strides and converted
/// (DequantizeLinear, Requantize). Segment s runs from its entry pc; the memories keep their bytes between segments.
class ProgramRun {
public:
    /// Decode the program and set up the machine. `name` names the program in fault messages.
    static Result<ProgramRun> start(const package::Package& p, KernelFn kernel, SimulateFn simulate,
                                    const ops::OpContext& ctx = {}, std::string name = "package") {
        ProgramRun r(p, kernel, simulate, ctx);
        r.name_ = std::move(name);
        for (std::size_t k = 0; k < p.code.size(); ++k) {
            JANUS_TRY(auto in, vnpu::decode(p.code[k], "instruction " + std::to_string(k)));
            r.code_.push_back(in);
        }
        r.m_.dram[0] = p.weights;
        r.m_.dram[1].assign(static_cast<std::size_t>(p.scratch_bytes), 0x5A);
        r.m_.dram[2].assign(static_cast<std::size_t>(p.input_bytes), 0x5A);
        r.m_.dram[3].assign(static_cast<std::size_t>(p.output_bytes), 0x5A);
        return r;
    }

    std::size_t segments() const { return p_->segments.size() + 1; }
    /// Segment s's program inputs and outputs: [first, end) of p.inputs / p.outputs.
    std::pair<std::size_t, std::size_t> inputs_of(std::size_t s) const {
        return {s == 0 ? 0 : p_->segments[s - 1].first_input,
                s + 1 < segments() ? p_->segments[s].first_input : p_->inputs.size()};
    }
    std::pair<std::size_t, std::size_t> outputs_of(std::size_t s) const {
        return {s == 0 ? 0 : p_->segments[s - 1].first_output,
                s + 1 < segments() ? p_->segments[s].first_output : p_->outputs.size()};
    }

    /// Convert and place input i (of its descriptor's boundary dtype and shape). Rules: input-type and the
    /// descriptor's (package-rank, package-storage).
    Status place(std::size_t i, const Tensor& t) {
        using namespace compile_detail;
        const package::IoDesc& d = p_->inputs[i];
        const std::string what = "input " + d.name;
        JANUS_TRY(const auto sq, runnable(d, what));
        const auto& [shape, q] = sq;
        if (t.dtype != d.dtype || !(t.shape() == shape))
            return make_error(what, "", "input-type",
                              "expected " + std::string(dtype_name(d.dtype)) + shape.str() + ", got " +
                                  std::string(dtype_name(t.dtype)) + t.shape().str());
        Tensor x = t;
        if (d.dtype == DType::f32) {
            const ops::AttrMap a{{"scale", q.scales},
                                 {"zero_point", std::vector<std::int64_t>(q.zero_points.begin(), q.zero_points.end())},
                                 {"dtype", std::string(dtype_name(d.storage))}};
            JANUS_TRY(x, kernel_("QuantizeLinear", std::span<const Tensor>(&t, 1), a,
                                 ops::TensorType{d.storage, shape, q}, ctx_));
        } else if (d.dtype != d.storage) {  // uint8 -> int8: the same real values
            x.quant = boundary_quant(q, d.dtype);
            JANUS_TRY(x, kernel_("Requantize", std::span<const Tensor>(&x, 1),
                                 ops::AttrMap{{"dtype", std::string(dtype_name(d.storage))}},
                                 ops::TensorType{d.storage, shape, q}, ctx_));
        }
        const auto v = x.to_vector<std::int8_t>();
        for (std::size_t e = 0; e < v.size(); ++e)
            m_.dram[2][byte_of(d, static_cast<std::int64_t>(e))] = static_cast<std::uint8_t>(v[e]);
        return ok_status();
    }

    /// Run segment s (its inputs placed); its report is added to report(). `finished`: Options::finished of this
    /// segment's run (the cycles count from its own start). Rules: npu-fault, npu-race.
    Status run(std::size_t s, std::vector<std::uint64_t>* finished = nullptr) {
        vnpu::sim::Options so;
        so.name = name_;
        so.entry = s == 0 ? 0 : p_->segments[s - 1].entry;
        so.finished = finished;
        const vnpu::sim::Report r = simulate_(code_, m_, so);
        vnpu::sim::accumulate(report_, r);
        const std::string what = name_ + (segments() > 1 ? " segment " + std::to_string(s) : std::string());
        if (r.fault)
            return make_error(what, "", vnpu::sim::is_limit_fault(*r.fault) ? r.fault->rule : "npu-fault",
                              "the program faulted: " + r.fault->message());
        if (!r.races.empty())
            return make_error(what, "", "npu-race",
                              "the race detector found " + std::to_string(r.races.size()) + " unsynchronized accesses");
        return ok_status();
    }

    /// Read and convert output i (to its descriptor's boundary dtype).
    Result<Tensor> read(std::size_t i) {
        using namespace compile_detail;
        const package::IoDesc& d = p_->outputs[i];
        const std::string what = "output " + d.name;
        if (d.storage == DType::i32 && d.dtype == DType::i32 && d.quant.scales.empty() &&
            d.shape.size() <= static_cast<std::size_t>(max_rank)) {  // ConvInteger / MatMulInteger sums, little endian
            Shape shape;
            for (const std::int64_t x : d.shape) shape.push_back(x);
            std::vector<std::int32_t> v(static_cast<std::size_t>(element_count(shape)));
            for (std::size_t e = 0; e < v.size(); ++e) {
                const std::size_t at = byte_of(d, static_cast<std::int64_t>(e));
                std::uint32_t u = 0;
                for (std::size_t k = 0; k < 4; ++k) u |= static_cast<std::uint32_t>(m_.dram[3][at + k]) << (8 * k);
                v[e] = static_cast<std::int32_t>(u);
            }
            return Tensor::from<std::int32_t>(shape, v);
        }
        JANUS_TRY(const auto sq, runnable(d, what));
        const auto& [shape, q] = sq;
        std::vector<std::int8_t> v(static_cast<std::size_t>(element_count(shape)));
        for (std::size_t e = 0; e < v.size(); ++e)
            v[e] = static_cast<std::int8_t>(m_.dram[3][byte_of(d, static_cast<std::int64_t>(e))]);
        Tensor y = Tensor::from<std::int8_t>(shape, v, q);
        if (d.dtype == DType::f32) {
            JANUS_TRY(y, kernel_("DequantizeLinear", std::span<const Tensor>(&y, 1), ops::AttrMap{},
                                 ops::TensorType{DType::f32, shape, std::nullopt}, ctx_));
        } else if (d.dtype != d.storage) {
            JANUS_TRY(y, kernel_("Requantize", std::span<const Tensor>(&y, 1),
                                 ops::AttrMap{{"dtype", std::string(dtype_name(d.dtype))}},
                                 ops::TensorType{d.dtype, shape, boundary_quant(q, d.dtype)}, ctx_));
        }
        return y;
    }

    const vnpu::sim::Report& report() const { return report_; }
    std::span<const vnpu::Instr> code() const { return code_; }

private:
    ProgramRun(const package::Package& p, KernelFn kernel, SimulateFn simulate, const ops::OpContext& ctx)
        : p_(&p), kernel_(kernel), simulate_(simulate), ctx_(package_context(p, ctx)) {}
    /// The storage quantization `q` (int8) seen in the boundary dtype (uint8 or int8): the same real values, the
    /// zero point 128 higher or lower.
    static numeric::QuantParams boundary_quant(numeric::QuantParams q, DType boundary) {
        q.dtype = boundary;
        for (auto& z : q.zero_points) z += boundary == DType::u8 ? 128 : -128;
        return q;
    }
    static std::size_t byte_of(const package::IoDesc& d, std::int64_t i) {
        std::int64_t at = 0;
        for (std::size_t k = d.shape.size(); k-- > 0;) {
            at += (i % d.shape[k]) * d.strides[k];
            i /= d.shape[k];
        }
        return static_cast<std::size_t>(d.offset) + static_cast<std::size_t>(at);
    }
    const package::Package* p_;
    std::string name_;
    KernelFn kernel_;
    SimulateFn simulate_;
    ops::OpContext ctx_;
    std::vector<vnpu::Instr> code_;
    vnpu::sim::Machine m_;
    vnpu::sim::Report report_;
};

/// Run the program of package `p` on the simulator; `inputs` in p.inputs order, of their boundary dtype and shape
/// (the host section, if any, is not run: see run_package). Every input is placed first, every segment runs in
/// turn, then every output is read.
inline Result<std::vector<Tensor>> run_program(const package::Package& p, std::span<const Tensor> inputs,
                                               KernelFn kernel, SimulateFn simulate,
                                               vnpu::sim::Report* report = nullptr, const ops::OpContext& ctx = {}) {
    if (inputs.size() != p.inputs.size())
        return make_error(
            "package", "inputs", "input-count",
            "the package takes " + std::to_string(p.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
    JANUS_TRY(ProgramRun run, ProgramRun::start(p, kernel, simulate, ctx));
    for (std::size_t i = 0; i < inputs.size(); ++i) JANUS_CHECK(run.place(i, inputs[i]));
    for (std::size_t s = 0; s < run.segments(); ++s) {
        const Status st = run.run(s);
        if (report) *report = run.report();
        JANUS_CHECK(st);
    }
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
        JANUS_TRY(Tensor y, run.read(i));
        out.push_back(std::move(y));
    }
    return out;
}

/// A package's host section, parsed and tied to the program's inputs and outputs.
struct HostPlan {
    Graph graph;
    /// Per segment s: host graph nodes [0, nodes_before[s]) run before it (nodes_before[0]: the host section's
    /// prologue); the nodes from nodes_before.back() on run after the last segment.
    std::vector<std::size_t> nodes_before;
    std::vector<ValueId> model_inputs;     ///< the graph inputs the caller gives, in order
    std::vector<ValueId> program_inputs;   ///< per p.inputs: the value packed into the input region
    std::vector<ValueId> program_outputs;  ///< per p.outputs: the graph input that receives the program's output
};

/// Parse and check p.host (which must be present) and p.segments. The host graph's nodes are typed by `infer` (an
/// InferFn, graph/ir.hpp): a compiler with ops of its own (examples/custom_op) passes its inference, as it does to
/// the parser and the importer. Errors name `input` + " host section": the parser's with line and column, and
///   host-prologue        the prologue count (or a segment's SegmentStart::nodes_before) exceeds the graph's nodes
///   host-program-output  the graph's last inputs are not the program's outputs (names, order, int8 types)
///   host-program-input   a program input is not a model input or the output of a host node that runs before its
///                        segment, of the same int8 type
///   host-order           a host node reads a program output that a later segment computes
///   segment-halt         the instruction before a segment's entry is not halt (the previous segment would run on)
inline Result<HostPlan> host_plan(const package::Package& p, const std::string& input = "package",
                                  InferFn infer = &ops::infer_by_name) {
    using namespace compile_detail;
    const std::string where = input + " host section";
    JANUS_ASSERT(p.host.has_value());
    JANUS_TRY(Graph g, parse(p.host->graph, where, infer));
    HostPlan h;
    h.nodes_before.push_back(p.host->prologue);
    for (const package::SegmentStart& s : p.segments) h.nodes_before.push_back(s.nodes_before);
    for (std::size_t s = 0; s < h.nodes_before.size(); ++s)
        if (h.nodes_before[s] > g.nodes.size())
            return make_error(where, s == 0 ? "prologue" : "segment " + std::to_string(s), "host-prologue",
                              std::to_string(h.nodes_before[s]) + " nodes run before segment " + std::to_string(s) +
                                  ", but the graph has " + std::to_string(g.nodes.size()));
    for (std::size_t s = 0; s < p.segments.size(); ++s) {
        const std::uint32_t e = p.segments[s].entry;
        bool halt = false;
        if (e > 0 && e <= p.code.size()) {
            const auto prev = vnpu::decode(p.code[e - 1], "instruction");
            halt = prev.ok() && prev->info->sem == vnpu::Sem::halt;
        }
        if (!halt)
            return make_error(input + " segments section", "segment " + std::to_string(s + 1), "segment-halt",
                              "the instruction before its entry pc " + std::to_string(e) + " is not halt: segment " +
                                  std::to_string(s) + " would run on into it");
    }
    const auto same_type = [](const Value& v, const package::IoDesc& d) {
        Shape shape;
        for (const std::int64_t x : d.shape) shape.push_back(x);
        return d.dtype == DType::i8 && d.storage == DType::i8 && v.type.dtype == DType::i8 && v.type.shape == shape &&
               v.type.quant && quantization_of(*v.type.quant) == d.quant;
    };
    if (g.inputs.size() < p.outputs.size())
        return make_error(where, "inputs", "host-program-output",
                          "the graph has " + std::to_string(g.inputs.size()) + " inputs, fewer than the program's " +
                              std::to_string(p.outputs.size()) + " outputs");
    const std::size_t m = g.inputs.size() - p.outputs.size();
    h.model_inputs.assign(g.inputs.begin(), g.inputs.begin() + static_cast<std::ptrdiff_t>(m));
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
        const ValueId v = g.inputs[m + i];
        if (g.value(v).name != p.outputs[i].name || !same_type(g.value(v), p.outputs[i]))
            return make_error(where, "input " + g.value(v).name, "host-program-output",
                              "graph input " + std::to_string(m + i) + " must be program output " + std::to_string(i) +
                                  " '" + p.outputs[i].name + "', int8 of the same shape and quantization");
        h.program_outputs.push_back(v);
    }
    std::vector<bool> known(g.values.size(), false);  // computed before the segment about to run
    for (ValueId v : h.model_inputs) known[static_cast<std::size_t>(v)] = true;
    for (std::size_t i = 0; i < g.values.size(); ++i) known[i] = known[i] || g.values[i].kind == ValueKind::constant;
    std::size_t k = 0, next_input = 0, next_output = 0;
    for (std::size_t s = 0; s < h.nodes_before.size(); ++s) {
        for (; k < h.nodes_before[s]; ++k) {
            for (ValueId x : g.nodes[k].inputs)
                if (x != no_value && !known[static_cast<std::size_t>(x)])
                    return make_error(where, "node " + std::to_string(k) + " (" + g.nodes[k].op + ")", "host-order",
                                      "runs before segment " + std::to_string(s) + " but reads " + g.value(x).name +
                                          ", a program output computed later");
            for (ValueId o : g.nodes[k].outputs) known[static_cast<std::size_t>(o)] = true;
        }
        const std::size_t inputs_end = s + 1 < h.nodes_before.size() ? p.segments[s].first_input : p.inputs.size();
        for (; next_input < inputs_end; ++next_input) {
            const package::IoDesc& d = p.inputs[next_input];
            const ValueId v = g.find(d.name);
            if (v == no_value || !known[static_cast<std::size_t>(v)] || g.value(v).kind == ValueKind::constant ||
                !same_type(g.value(v), d))
                return make_error(where, "value " + d.name, "host-program-input",
                                  "program input '" + d.name + "' of segment " + std::to_string(s) +
                                      " must be a model input or the output of a host node that runs before it, "
                                      "int8 of the same shape and quantization");
            h.program_inputs.push_back(v);
        }
        const std::size_t outputs_end = s + 1 < h.nodes_before.size() ? p.segments[s].first_output : p.outputs.size();
        for (; next_output < outputs_end; ++next_output)
            known[static_cast<std::size_t>(h.program_outputs[next_output])] = true;
    }
    h.graph = std::move(g);
    return h;
}

/// Run package `p`: its host prologue on the reference kernels (`kernel`), then each segment of the program on the
/// simulator after the host nodes that run before it, then the host epilogue. `inputs` are the model's: in p.inputs
/// order for a package without a host section, in the host graph's model_inputs order with one. One output per
/// model output.
/// run_package with the host section already planned (host_plan(p) == h): the section is parsed once.
inline Result<std::vector<Tensor>> run_package(const package::Package& p, const HostPlan& h,
                                               std::span<const Tensor> inputs, KernelFn kernel, SimulateFn simulate,
                                               vnpu::sim::Report* report = nullptr, const ops::OpContext& ctx = {}) {
    const Graph& g = h.graph;
    const ops::OpContext host_ctx = package_context(p, ctx);
    JANUS_TRY(Env env, bind_inputs(g, inputs, h.model_inputs));
    JANUS_TRY(ProgramRun run, ProgramRun::start(p, kernel, simulate, ctx));
    std::size_t k = 0;
    for (std::size_t s = 0; s < run.segments(); ++s) {
        for (; k < h.nodes_before[s]; ++k) JANUS_CHECK(run_node(g, k, env, kernel, {}, host_ctx));
        const auto [in_first, in_end] = run.inputs_of(s);
        for (std::size_t i = in_first; i < in_end; ++i)
            JANUS_CHECK(run.place(i, *env[static_cast<std::size_t>(h.program_inputs[i])]));
        const Status st = run.run(s);
        if (report) *report = run.report();
        JANUS_CHECK(st);
        const auto [out_first, out_end] = run.outputs_of(s);
        for (std::size_t i = out_first; i < out_end; ++i) {
            JANUS_TRY(Tensor y, run.read(i));
            env[static_cast<std::size_t>(h.program_outputs[i])] = std::move(y);
        }
    }
    for (; k < g.nodes.size(); ++k) JANUS_CHECK(run_node(g, k, env, kernel, {}, host_ctx));
    std::vector<Tensor> out;
    for (ValueId v : g.outputs) out.push_back(*env[static_cast<std::size_t>(v)]);
    return out;
}

inline Result<std::vector<Tensor>> run_package(const package::Package& p, std::span<const Tensor> inputs,
                                               KernelFn kernel, SimulateFn simulate,
                                               vnpu::sim::Report* report = nullptr, const ops::OpContext& ctx = {}) {
    if (!p.host) return run_program(p, inputs, kernel, simulate, report, ctx);
    JANUS_TRY(const HostPlan h, host_plan(p));
    return run_package(p, h, inputs, kernel, simulate, report, ctx);
}

/// The program's timing on 0x5A-filled memories (janusc inspect; the timing model is data-independent): every
/// segment in turn, `finished` (Options::finished) across the segments, each segment's times offset by the cycles
/// of the ones before it, so that node_cycles charges the whole program.
inline Result<vnpu::sim::Report> time_program(const package::Package& p, SimulateFn simulate,
                                              std::vector<std::uint64_t>& finished,
                                              const std::string& name = "package") {
    JANUS_TRY(ProgramRun run, ProgramRun::start(p, nullptr, simulate, {}, name));
    finished.assign(p.code.size(), 0);
    for (std::size_t s = 0; s < run.segments(); ++s) {
        const std::uint64_t before = run.report().cycles;
        std::vector<std::uint64_t> f;
        (void)run.run(s, &f);  // races stay in the report (inspect prints them); a fault ends the timing
        if (run.report().fault) return *run.report().fault;
        for (std::size_t pc = 0; pc < f.size(); ++pc)
            if (f[pc]) finished[pc] = before + f[pc];
    }
    return run.report();
}

/// The program as assembly text (vnpu::print), with a `; node NAME (OP)` comment line before the instructions of
/// each debug entry: `janusc disasm MODEL.jpk` and `compile --emit-asm`. Comments do not change what it assembles to.
inline std::string annotated_assembly(std::span<const vnpu::Instr> code, std::span<const package::DebugEntry> debug) {
    std::string s;
    std::size_t d = 0;
    for (std::size_t pc = 0; pc < code.size(); ++pc) {
        for (; d < debug.size() && debug[d].first == pc; ++d)
            s += "; node " + (debug[d].node.empty() ? std::string("(unnamed)") : debug[d].node) + " (" +
                 debug[d].op_type + "): instructions " + std::to_string(debug[d].first) + ".." +
                 std::to_string(debug[d].last) + "\n";
        s += vnpu::print(code[pc]) + "\n";
    }
    return s;
}

/// Cycles per debug entry from a run with Options::finished: entry i ends at the last completion among its
/// instructions and is charged from the end of entry i-1 (0 for the first). The kernel barrier between entries
/// serializes them, so the charges add up to the last entry's end; what follows it (halt) is not charged.
inline std::vector<std::uint64_t> node_cycles(std::span<const package::DebugEntry> debug,
                                              std::span<const std::uint64_t> finished) {
    std::vector<std::uint64_t> r;
    std::uint64_t prev = 0;
    for (const auto& e : debug) {
        std::uint64_t end = prev;
        for (std::uint32_t pc = e.first; pc < e.last && pc < finished.size(); ++pc) end = std::max(end, finished[pc]);
        r.push_back(end - prev);
        prev = end;
    }
    return r;
}

}  // namespace janus::graph
