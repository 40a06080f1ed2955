#pragma once
// A lowered graph as a package (.jpk), and a package run on the simulator (janusc compile, janusc run MODEL.jpk).
//
// Contract:
//   - compile_package(g, lowered) returns the package of docs/package.md: the program's words, its constants, the
//     region sizes, one I/O descriptor per graph input and output, the scratch values as buffers and the debug map
//     (each NPU node's instructions, named by its ONNX node(s)). A package holds the NPU program and the
//     conversions at its boundary, nothing else: every host node of the graph must be one of them (rule
//     package-host-op otherwise):
//       input:  QuantizeLinear of a float32 graph input, or Requantize of a uint8 graph input to int8;
//       output: DequantizeLinear to a float32 graph output, or Requantize of int8 to a uint8 graph output.
//     The descriptor states the boundary dtype (the model's), the storage (int8), the NPU's strides (NHWC, padded
//     channels: seed B4) and the storage quantization. An output the NPU holds in no strided layout of its own (a
//     flattened image that is a view) is refused (package-layout).
//   - run_package(p, inputs, kernel, simulate) takes one tensor per package input (in p.inputs order, of the
//     boundary dtype and shape), converts each with the registry's own kernel (QuantizeLinear, Requantize: the ones
//     the reference engine runs), places it by its strides, runs the program once, and converts the outputs back
//     (DequantizeLinear, Requantize). A fault or a race is an error (npu-fault, npu-race).
// Both are deterministic: the same graph gives the same package bytes (seed D8).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

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
        return std::vector<std::int64_t>{p.h * p.w * p.pitch, 1, p.w * p.pitch, p.pitch};
    if (!p.columns.empty()) return std::nullopt;
    return std::vector<std::int64_t>{p.pitch, 1};
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
    if (d.storage != DType::i8 || d.quant.scales.size() != 1)
        return make_error(what, "", "package-storage",
                          "the runner places int8 storage with per-tensor quantization only, not " +
                              std::string(dtype_name(d.storage)) + " with " + std::to_string(d.quant.scales.size()) +
                              " quantization entries");
    Shape shape;
    for (const std::int64_t x : d.shape) shape.push_back(x);
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
    d.quant = quantization_of(*in.type.quant);
    d.offset = p.offset;
    d.size = static_cast<std::uint64_t>(emit::round16(p.bytes()));
    return d;
}

}  // namespace compile_detail

inline Result<package::Package> compile_package(const Graph& g, const LoweredGraph& L) {
    using namespace compile_detail;
    const std::string what = "graph " + g.name;
    if (L.npu.empty())
        return make_error(what, "", "package-empty", "no node runs on the NPU: there is no program to package");
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
                return make_error(what, node_text(g, k), "package-host-op",
                                  "runs on the host; a package holds the NPU program and, at its boundary, one "
                                  "QuantizeLinear or uint8 -> int8 conversion per input only");
            inner = o;
            converted[k] = true;
        }
        if (inner == no_value)
            return make_error(what, g.value(gi).name, "package-host-op",
                              "this graph input does not reach the NPU program through one boundary conversion");
        JANUS_TRY(auto d, io_desc(g, L, gi, inner, what));
        p.inputs.push_back(std::move(d));
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
                    return make_error(what, node_text(g, k), "package-host-op",
                                      "runs on the host; a package holds the NPU program and, at its boundary, one "
                                      "DequantizeLinear or int8 -> uint8 conversion per output only");
                inner = x;
                converted[k] = true;
            }
        if (inner == no_value && L.placement[static_cast<std::size_t>(go)]) inner = go;
        if (inner == no_value)
            return make_error(what, g.value(go).name, "package-host-op",
                              "this graph output is not computed by the NPU program");
        if (L.placement[static_cast<std::size_t>(inner)]->region != 3)
            return make_error(
                what, g.value(go).name, "package-layout",
                "the NPU holds " + g.value(inner).name + " outside the output region (a view of another buffer)");
        JANUS_TRY(auto d, io_desc(g, L, go, inner, what));
        p.outputs.push_back(std::move(d));
    }
    for (const auto* list : {&L.host_before, &L.host_after})
        for (std::size_t k : *list)
            if (!converted[k])
                return make_error(what, node_text(g, k), "package-host-op",
                                  "runs on the host; a package holds the NPU program and the conversions at its "
                                  "boundary only (run the model with janusc run MODEL.onnx)");

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
        if (pl.region == 1 && (pl.columns.empty() || pl.form == Placement::Form::image) &&
            !(g.nodes[n.node].op == "Flatten" || g.nodes[n.node].op == "Reshape"))
            p.buffers.push_back({g.value(o).name, package::BufferKind::scratch, pl.offset,
                                 static_cast<std::uint64_t>(emit::round16(pl.bytes()))});
        if (n.code_end > n.code_begin)
            p.debug.push_back({static_cast<std::uint32_t>(n.code_begin), static_cast<std::uint32_t>(n.code_end),
                               g.nodes[n.node].origin, g.nodes[n.node].op});
    }
    return p;
}

/// Run package `p` on the simulator; `inputs` in p.inputs order, of their boundary dtype and shape.
inline Result<std::vector<Tensor>> run_package(const package::Package& p, std::span<const Tensor> inputs,
                                               KernelFn kernel, SimulateFn simulate,
                                               vnpu::sim::Report* report = nullptr, const ops::OpContext& ctx = {}) {
    using namespace compile_detail;
    if (inputs.size() != p.inputs.size())
        return make_error(
            "package", "inputs", "input-count",
            "the package takes " + std::to_string(p.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
    vnpu::sim::Machine m;
    m.dram[0] = p.weights;
    m.dram[1].assign(static_cast<std::size_t>(p.scratch_bytes), 0x5A);
    m.dram[2].assign(static_cast<std::size_t>(p.input_bytes), 0x5A);
    m.dram[3].assign(static_cast<std::size_t>(p.output_bytes), 0x5A);
    const auto byte_of = [](const package::IoDesc& d, std::int64_t i) {
        std::int64_t at = 0;
        for (std::size_t k = d.shape.size(); k-- > 0;) {
            at += (i % d.shape[k]) * d.strides[k];
            i /= d.shape[k];
        }
        return static_cast<std::size_t>(d.offset) + static_cast<std::size_t>(at);
    };
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const package::IoDesc& d = p.inputs[i];
        const std::string what = "input " + d.name;
        JANUS_TRY(const auto sq, runnable(d, what));
        const auto& [shape, q] = sq;
        if (inputs[i].dtype != d.dtype || !(inputs[i].shape() == shape))
            return make_error(what, "", "input-type",
                              "expected " + std::string(dtype_name(d.dtype)) + shape.str() + ", got " +
                                  std::string(dtype_name(inputs[i].dtype)) + inputs[i].shape().str());
        Tensor x = inputs[i];
        if (d.dtype == DType::f32) {
            const ops::AttrMap a{{"scale", q.scales},
                                 {"zero_point", std::vector<std::int64_t>(q.zero_points.begin(), q.zero_points.end())},
                                 {"dtype", std::string(dtype_name(d.storage))}};
            JANUS_TRY(x, kernel("QuantizeLinear", std::span<const Tensor>(&inputs[i], 1), a,
                                ops::TensorType{d.storage, shape, q}, ctx));
        } else if (d.dtype != d.storage) {  // uint8 -> int8: the same real values
            auto qb = q;
            qb.dtype = d.dtype;
            for (auto& z : qb.zero_points) z += d.dtype == DType::u8 ? 128 : -128;
            x.quant = qb;
            JANUS_TRY(x, kernel("Requantize", std::span<const Tensor>(&x, 1),
                                ops::AttrMap{{"dtype", std::string(dtype_name(d.storage))}},
                                ops::TensorType{d.storage, shape, q}, ctx));
        }
        const auto v = x.to_vector<std::int8_t>();
        for (std::size_t e = 0; e < v.size(); ++e)
            m.dram[2][byte_of(d, static_cast<std::int64_t>(e))] = static_cast<std::uint8_t>(v[e]);
    }
    std::vector<vnpu::Instr> code;
    for (std::size_t k = 0; k < p.code.size(); ++k) {
        JANUS_TRY(auto in, vnpu::decode(p.code[k], "instruction " + std::to_string(k)));
        code.push_back(in);
    }
    vnpu::sim::Options so;
    so.name = "package";
    const vnpu::sim::Report r = simulate(code, m, so);
    if (report) *report = r;
    if (r.fault) return make_error("package", "", "npu-fault", "the program faulted: " + r.fault->message());
    if (!r.races.empty())
        return make_error("package", "", "npu-race",
                          "the race detector found " + std::to_string(r.races.size()) + " unsynchronized accesses");
    std::vector<Tensor> out;
    for (const package::IoDesc& d : p.outputs) {
        const std::string what = "output " + d.name;
        JANUS_TRY(const auto sq, runnable(d, what));
        const auto& [shape, q] = sq;
        std::vector<std::int8_t> v(static_cast<std::size_t>(element_count(shape)));
        for (std::size_t e = 0; e < v.size(); ++e)
            v[e] = static_cast<std::int8_t>(m.dram[3][byte_of(d, static_cast<std::int64_t>(e))]);
        Tensor y = Tensor::from<std::int8_t>(shape, v, q);
        if (d.dtype == DType::f32) {
            JANUS_TRY(y, kernel("DequantizeLinear", std::span<const Tensor>(&y, 1), ops::AttrMap{},
                                ops::TensorType{DType::f32, shape, std::nullopt}, ctx));
        } else if (d.dtype != d.storage) {
            auto qb = q;
            qb.dtype = d.dtype;
            for (auto& z : qb.zero_points) z += d.dtype == DType::u8 ? 128 : -128;
            JANUS_TRY(y, kernel("Requantize", std::span<const Tensor>(&y, 1),
                                ops::AttrMap{{"dtype", std::string(dtype_name(d.dtype))}},
                                ops::TensorType{d.dtype, shape, qb}, ctx));
        }
        out.push_back(std::move(y));
    }
    return out;
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
