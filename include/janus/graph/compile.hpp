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
//       host form, otherwise (a float tail, a host node in front of the program, integer ops the NPU cannot store,
//       no NPU node at all): the descriptors are the program's own int8 inputs and outputs, and the host section
//       holds the host nodes as graph IR text (host_package says how the text's graph is laid out).
//     In the host form, a program output that is a view (a Flatten / Reshape with no code of its own) is handed
//     over as the value it views, and the reshape runs on the host. A program value the package still cannot
//     describe (outside its region, no strided layout) is refused (package-layout).
//   - host_plan(p) parses and checks a host section (its rules are listed there); run_package(p, inputs, kernel,
//     simulate) runs the host prologue, the program, then the host epilogue. run_program runs the program alone:
//     one tensor per descriptor, converted with the registry's own kernels (QuantizeLinear, Requantize: the ones the
//     reference engine runs), placed by its strides, the program run once, the outputs converted back
//     (DequantizeLinear, Requantize). A fault or a race is an error (npu-fault, npu-race).
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

/// The boundary form: every host node converts one graph input into the program or one program output into a graph
/// output, and every program value the model sees has a strided layout in its region; the I/O descriptors are the
/// model's. Nothing when the graph does not have that form (the host form then holds it).
inline std::optional<package::Package> boundary_package(const Graph& g, const LoweredGraph& L) {
    const std::string what = "graph " + g.name;
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

/// The host form: the program's own inputs and outputs as int8 descriptors, and the host nodes as graph IR text (the
/// host section). The text's graph takes the model's inputs, then the program's outputs (in p.outputs order, under
/// their names); its nodes are the host nodes in graph order, the first `prologue` of them before the program.
inline Result<package::Package> host_package(const Graph& g, const LoweredGraph& L) {
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
    // (the lowering keeps it in the output region), and the reshape runs first on the host.
    std::vector<std::size_t> views;
    for (const LoweredNode& n : L.npu) {
        const ValueId o = g.nodes[n.node].outputs[0];
        if (n.code_end == n.code_begin && std::count(L.segment_outputs.begin(), L.segment_outputs.end(), o))
            views.push_back(n.node);
    }
    for (ValueId v : L.segment_outputs) {
        if (std::any_of(views.begin(), views.end(), [&](std::size_t k) { return g.nodes[k].outputs[0] == v; }))
            continue;
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
    std::vector<std::size_t> after = views;
    after.insert(after.end(), L.host_after.begin(), L.host_after.end());
    for (const auto* list : std::array<const std::vector<std::size_t>*, 2>{&L.host_before, &after})
        for (std::size_t k : *list) {
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
    for (ValueId v : g.outputs) {
        if (map[static_cast<std::size_t>(v)] == no_value)
            return make_error(what, g.value(v).name, "package-host-op",
                              "the graph output is computed neither on the host nor by the program");
        h.outputs.push_back(map[static_cast<std::size_t>(v)]);
    }
    JANUS_CHECK(verify(h));
    p.host = package::HostSection{static_cast<std::uint32_t>(L.host_before.size()), print(h)};
    return p;
}

}  // namespace compile_detail

inline Result<package::Package> compile_package(const Graph& g, const LoweredGraph& L) {
    using namespace compile_detail;
    auto boundary = L.npu.empty() ? std::nullopt : boundary_package(g, L);
    if (!boundary) {
        JANUS_TRY(boundary, host_package(g, L));
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
    return p;
}

/// Run the program of package `p` on the simulator; `inputs` in p.inputs order, of their boundary dtype and shape
/// (the host section, if any, is not run: see run_package).
inline Result<std::vector<Tensor>> run_program(const package::Package& p, std::span<const Tensor> inputs,
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

/// A package's host section, parsed and tied to the program's inputs and outputs.
struct HostPlan {
    Graph graph;
    std::size_t prologue = 0;              ///< nodes [0, prologue) run before the program, the rest after it
    std::vector<ValueId> model_inputs;     ///< the graph inputs the caller gives, in order
    std::vector<ValueId> program_inputs;   ///< per p.inputs: the value packed into the input region
    std::vector<ValueId> program_outputs;  ///< per p.outputs: the graph input that receives the program's output
};

/// Parse and check p.host (which must be present). Errors name `input` + " host section": the parser's with line
/// and column, and
///   host-prologue        the prologue count exceeds the graph's nodes
///   host-program-output  the graph's last inputs are not the program's outputs (names, order, int8 types)
///   host-program-input   a program input is not a model input or a prologue node's output of the same int8 type
///   host-order           a prologue node reads a program output (it is computed after the prologue)
inline Result<HostPlan> host_plan(const package::Package& p, const std::string& input = "package") {
    using namespace compile_detail;
    const std::string where = input + " host section";
    JANUS_ASSERT(p.host.has_value());
    JANUS_TRY(Graph g, parse(p.host->graph, where));
    HostPlan h;
    h.prologue = p.host->prologue;
    if (h.prologue > g.nodes.size())
        return make_error(where, "prologue", "host-prologue",
                          "the prologue has " + std::to_string(h.prologue) + " nodes, but the graph has " +
                              std::to_string(g.nodes.size()));
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
    std::vector<bool> before(g.values.size(), false);  // known before the program runs
    for (ValueId v : h.model_inputs) before[static_cast<std::size_t>(v)] = true;
    for (std::size_t i = 0; i < g.values.size(); ++i) before[i] = before[i] || g.values[i].kind == ValueKind::constant;
    for (std::size_t k = 0; k < h.prologue; ++k) {
        for (ValueId x : g.nodes[k].inputs)
            if (x != no_value && !before[static_cast<std::size_t>(x)])
                return make_error(where, "node " + std::to_string(k) + " (" + g.nodes[k].op + ")", "host-order",
                                  "runs before the program but reads " + g.value(x).name + ", a program output");
        for (ValueId o : g.nodes[k].outputs) before[static_cast<std::size_t>(o)] = true;
    }
    for (const package::IoDesc& d : p.inputs) {
        const ValueId v = g.find(d.name);
        if (v == no_value || !before[static_cast<std::size_t>(v)] || g.value(v).kind == ValueKind::constant ||
            !same_type(g.value(v), d))
            return make_error(where, "value " + d.name, "host-program-input",
                              "program input '" + d.name +
                                  "' must be a model input or a prologue node's output, int8 of the same shape and "
                                  "quantization");
        h.program_inputs.push_back(v);
    }
    h.graph = std::move(g);
    return h;
}

/// Run package `p`: its host prologue on the reference kernels (`kernel`), the program on the simulator, then its
/// host epilogue. `inputs` are the model's: in p.inputs order for a package without a host section, in the host
/// graph's model_inputs order with one. One output per model output.
/// run_package with the host section already planned (host_plan(p) == h): the section is parsed once.
inline Result<std::vector<Tensor>> run_package(const package::Package& p, const HostPlan& h,
                                               std::span<const Tensor> inputs, KernelFn kernel, SimulateFn simulate,
                                               vnpu::sim::Report* report = nullptr, const ops::OpContext& ctx = {}) {
    const Graph& g = h.graph;
    JANUS_TRY(Env env, bind_inputs(g, inputs, h.model_inputs));
    for (std::size_t k = 0; k < h.prologue; ++k) JANUS_CHECK(run_node(g, k, env, kernel, {}, ctx));
    std::vector<Tensor> to_program;
    for (ValueId v : h.program_inputs) to_program.push_back(*env[static_cast<std::size_t>(v)]);
    JANUS_TRY(std::vector<Tensor> from_program, run_program(p, to_program, kernel, simulate, report, ctx));
    for (std::size_t i = 0; i < from_program.size(); ++i)
        env[static_cast<std::size_t>(h.program_outputs[i])] = std::move(from_program[i]);
    for (std::size_t k = h.prologue; k < g.nodes.size(); ++k) JANUS_CHECK(run_node(g, k, env, kernel, {}, ctx));
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
