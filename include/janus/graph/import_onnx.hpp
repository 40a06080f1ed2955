#pragma once
// ONNX model -> graph IR, with the quantization matched first (seed A11).
//
// Contract: `import_onnx(model, input)` returns a verified Graph (graph/ir.hpp) or an Error naming `input`, the ONNX
// node ("node 'conv1' (Conv)") and a rule. The steps, in this order:
//   1. Quantization matching, before any rewrite. A float tensor is *covered* by a quantization when it is the
//      output of a DequantizeLinear (its parameters), when its only consumer is a QuantizeLinear (that one's
//      parameters), or when its only consumer is a Relu or Clip whose output is covered (the activation keeps the
//      parameters of its output). A float op whose float inputs and output are all covered becomes the quantized op
//      on the integer tensors; Q(DQ(q)) with equal parameters is q itself, with other parameters a Requantize. The
//      float32 constant parameters of a normalization (BatchNormalization's scale, B, mean and var; the scale and
//      bias of InstanceNormalization and LayerNormalization) need no coverage: the quantized kernels read them as
//      floats, so a quantized X and output make the op quantized.
//      QOperator nodes (QLinearConv, QLinearMatMul) carry their parameters on the node: they are attached to the
//      tensors they read and write (a tensor read under two different quantizations is refused). ConvInteger and
//      MatMulInteger carry only zero points: they become their operands' quantization with scale 1 (the ops read
//      the zero points alone; a tensor that already has a quantization must have the same zero points), and the
//      output is int32 without quantization.
//   2. Every other float op runs in float32 on the host (Target::host) and is reported so, never dropped; its
//      quantized inputs are dequantized by a host DequantizeLinear, made once per tensor.
//   3. uint8 becomes int8 exactly inside the graph: uint8 constants are shifted by -128 with their zero points, a
//      uint8 graph input passes through Requantize{int8}, a uint8 graph output through Requantize{uint8}; graph
//      inputs and outputs keep their declared ONNX dtypes and shapes.
//   4. Constant operands that the registry takes as attributes (Clip bounds, Reshape shape, Slice starts/ends/axes/
//      steps, Pad pads and value, Expand shape, Squeeze/Unsqueeze/ReduceSum axes, Resize scales/sizes, quantization
//      scales and zero points) must be constants (initializers or Constant nodes) and become attributes.
//   5. Identity nodes disappear (a graph output keeps its ONNX name).
//   6. Three kinds of node are imported as their ONNX function body, a sequence of registry ops (docs/conformance.md
//      "Nodes imported as their ONNX function body"): LayerNormalization with its Mean / InvStdDev outputs,
//      BatchNormalization with training_mode 1, and Min / Max with other than two inputs. A MaxPool with its Indices
//      output becomes MaxPool and MaxPoolIndices (ops/pool.hpp).
// Types are inferred by `infer` (graph/ir.hpp InferFn, ops::infer_by_name by default): an ai.onnx op type that is
// no registry op but that a compiler's own `infer` knows (answers other than known-op) is imported as an op of that
// name, as a registry op is by step 1 and 2 (its schema version is the compiler's business).
// Rules: onnx-opset (an opset above 17, or a node whose op's schema at the model's opset Janus does not implement:
// check_schema), onnx-domain, onnx-op (neither in the registry nor known to `infer`),
// onnx-undefined (a name read before it is defined), onnx-constant-input, onnx-quant (parameters that are not
// constants or a tensor read under two quantizations), onnx-graph-io, plus every error of the op's own `infer`.
// A valid model that Janus does not implement is refused with an *unsupported* error, "MODEL:node 'n' (Op):
// unsupported: Op <attribute or type>; why [rule]" (core/error.hpp; docs/conformance.md "Unsupported or malformed");
// a model that breaks a rule of ONNX with a malformed one ("...: error: ..."). An op's own refusal keeps its kind.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/ir.hpp>
#include <janus/onnx/model.hpp>
#include <janus/onnx/schema_versions.hpp>
#include <janus/ops/registry.hpp>

namespace janus::graph {

/// The opsets whose schemas Janus implements for every op it imports. A model may import an older opset (down to 1):
/// each node then uses the schema its op had at that opset, which must be one of these or an older one Janus reads
/// the same way (import_detail::older_schemas).
inline constexpr std::int64_t min_opset = 13, max_opset = 17;
static_assert(max_opset <= onnx::schema_table_max_opset, "onnx/schema_versions.hpp must know every opset read");

/// ONNX op types the importer takes that are no op of the registry: it rewrites them into registry ops.
inline constexpr std::array<std::string_view, 4> importer_only_ops{"QLinearConv", "QLinearMatMul", "Identity",
                                                                   "Constant"};
/// Registry ops that are no ONNX op type: the importer creates them, and an ONNX node of that name is refused.
inline constexpr std::array<std::string_view, 2> internal_ops{"Requantize", "MaxPoolIndices"};

inline bool is_internal_op(std::string_view op) {
    return std::find(internal_ops.begin(), internal_ops.end(), op) != internal_ops.end();
}

/// How the importer takes ONNX op type `op` (default domain), or "" when it refuses it (janusc support).
inline std::string_view onnx_import_form(std::string_view op) {
    if (is_internal_op(op)) return {};
    if (op == "QuantizeLinear" || op == "DequantizeLinear")
        return "QDQ: the quantization of the tensors it reads or writes";
    if (op == "QLinearConv" || op == "QLinearMatMul") return "QOperator: Conv / MatMul with the node's parameters";
    if (op == "ConvInteger" || op == "MatMulInteger") return "int32 output; zero points as a scale-1 quantization";
    if (op == "Identity") return "removed";
    if (op == "Constant") return "a constant";
    for (auto n : ops::op_names) {
        if (n != op) continue;
        switch (ops::plain_types_of(op)) {
            case ops::PlainInts::none: return "op: int8 inside QDQ, else float32";
            case ops::PlainInts::bytes: return "op: int8 inside QDQ, else float32 or plain int8/uint8";
            case ops::PlainInts::all: return "op: int8 inside QDQ, else float32 or a plain integer (int8 to int64)";
            case ops::PlainInts::all_float16:
                return "op: int8 inside QDQ, else float32, float16 or a plain integer (int8 to int64)";
        }
    }
    return {};
}

namespace import_detail {

/// Constant inputs the registry takes as attributes: op, input index, attribute name.
struct ConstInput {
    std::string_view op;
    std::size_t index;
    std::string_view attr;
};
inline constexpr ConstInput const_inputs[] = {
    {"Clip", 1, "min"},       {"Clip", 2, "max"},       {"Reshape", 1, "shape"}, {"Slice", 1, "starts"},
    {"Slice", 2, "ends"},     {"Slice", 3, "axes"},     {"Slice", 4, "steps"},   {"Pad", 1, "pads"},
    {"Pad", 2, "value"},      {"Pad", 3, "axes"},       {"Expand", 1, "shape"},  {"Squeeze", 1, "axes"},
    {"Unsqueeze", 1, "axes"}, {"ReduceSum", 1, "axes"}, {"Resize", 1, "roi"},    {"Resize", 2, "scales"},
    {"Resize", 3, "sizes"},
};
inline const ConstInput* const_input(std::string_view op, std::size_t index) {
    for (const ConstInput& c : const_inputs)
        if (c.op == op && c.index == index) return &c;
    return nullptr;
}

/// Older ONNX schemas Janus reads as the one opsets 13..17 select: for the ops and attributes Janus takes, each
/// differs from it only in its type lists, or by lacking an attribute or input whose default is the old behaviour, or
/// by taking as an attribute what later became a constant input (docs/conformance.md, "Opsets", gives each reason).
struct OlderSchema {
    std::string_view op;
    std::int16_t since;
};
// clang-format off
inline constexpr OlderSchema older_schemas[] = {
    // type lists only
    {"Abs", 6}, {"Neg", 6}, {"Relu", 6}, {"Sigmoid", 6}, {"Tanh", 6}, {"Exp", 6}, {"Sign", 9}, {"Erf", 9},
    {"Sqrt", 6}, {"Reciprocal", 6},
    {"LeakyRelu", 6}, {"Clip", 11}, {"Clip", 12}, {"ReduceMean", 11}, {"ReduceMax", 11}, {"ReduceMax", 12},
    {"ReduceMin", 11}, {"ReduceMin", 12}, {"MatMul", 9}, {"Gemm", 11}, {"Flatten", 9}, {"Flatten", 11},
    {"Transpose", 1}, {"Expand", 8}, {"Pad", 11}, {"Concat", 11}, {"Identity", 1}, {"Identity", 13},
    {"Constant", 9}, {"Constant", 11}, {"Constant", 12},
    // multidirectional broadcasting, the later type lists
    {"Add", 7}, {"Sub", 7}, {"Mul", 7}, {"Min", 8}, {"Min", 12}, {"Max", 8}, {"Max", 12},
    // lacking a later attribute or input whose default is the old behaviour
    {"ArgMax", 11}, {"ArgMax", 12}, {"ArgMin", 11}, {"ArgMin", 12}, {"Reshape", 5}, {"Slice", 10}, {"Slice", 11},
    {"QuantizeLinear", 10}, {"DequantizeLinear", 10},
    // inputs that the later schema made optional (Resize-11's roi and scales)
    {"Resize", 11},
    // an attribute where the later schema has a constant input (the registry's attribute of the same name)
    {"ReduceSum", 11}, {"Squeeze", 11}, {"Unsqueeze", 11},
};
// clang-format on

/// Whether Janus implements the schema of `op` that a model importing `opset` uses: no error when it does; a
/// malformed one (the op does not exist at that opset) or an unsupported one (an older schema Janus does not read).
/// The errors name `input` and `position`.
inline Status check_schema(std::string_view op, std::int64_t opset, const std::string& input,
                           const std::string& position) {
    const std::int64_t s = onnx::schema_of(op, opset);
    if (s == 0) {  // an op ONNX does not define at this opset (or a Janus op ONNX 1.12 lacks, such as Gelu)
        if (opset >= min_opset && opset <= max_opset && onnx::schema_of(op, max_opset) == 0) return ok_status();
        return make_error(input, position, "onnx-opset",
                          "ONNX defines no operator '" + std::string(op) + "' at opset " + std::to_string(opset));
    }
    for (std::int64_t v = min_opset; v <= max_opset; ++v)
        if (onnx::schema_of(op, v) == s) return ok_status();
    for (const OlderSchema& o : older_schemas)
        if (o.op == op && o.since == s) return ok_status();
    return make_unsupported(input, position, "onnx-opset",
                            std::string(op) + " of opset " + std::to_string(opset) + " (schema " + std::string(op) +
                                "-" + std::to_string(s) + ")",
                            "Janus implements " + std::string(op) + "-" +
                                std::to_string(onnx::schema_of(op, max_opset)) +
                                " and the older schemas it reads the same way");
}

inline bool is_activation(std::string_view op) { return op == "Relu" || op == "Clip"; }

inline bool known_op(std::string_view op) { return !onnx_import_form(op).empty(); }

/// The type of graph input `v`: a tensor of a dtype Janus supports with a static shape, else unsupported.
inline Result<ops::TensorType> graph_input_type(const onnx::ValueInfo& v, std::string_view input) {
    const std::string at = "graph input '" + v.name + "'";
    if (v.elem_type == 0)  // a sequence, map, optional or sparse tensor, or a type left out
        return make_unsupported(std::string(input), at, "onnx-graph-io", at + " of a non-tensor type",
                                "Janus compiles graphs of tensors (" + dtype_list() + ") with known shapes");
    const auto d = dtype_from_onnx_code(v.elem_type);
    if (!d)
        return make_unsupported(std::string(input), at, "onnx-graph-io",
                                at + " type " + onnx::elem_type_name(v.elem_type), "Janus supports " + dtype_list());
    if (!v.has_shape)
        return make_unsupported(std::string(input), at, "onnx-graph-io", at + " without a shape",
                                "Janus compiles static shapes only");
    std::vector<std::int64_t> dims;
    for (const auto& dim : v.shape) {
        if (!dim.value)
            return make_unsupported(std::string(input), at, "onnx-graph-io",
                                    at + " dimension '" + dim.param + "' (symbolic)",
                                    "Janus compiles static shapes only");
        dims.push_back(*dim.value);
    }
    // The shape and size policy (core/size.hpp, checked_size), also for a Model built in code.
    if (const auto size = checked_size(dims, static_cast<std::int64_t>(dtype_size(*d)), at, "onnx-dims"); !size.ok())
        return make_error(std::string(input), at, "onnx-dims", size.error().position + ": " + size.error().detail);
    Shape s;
    for (const std::int64_t x : dims) s.push_back(x);
    return ops::TensorType{*d, s, std::nullopt};
}

class Importer {
public:
    Importer(const onnx::Model& m, std::string_view input, InferFn infer) : m_(m), input_(input), infer_(infer) {}

    Result<Graph> run() {
        g_.name = m_.graph.name;
        const std::int64_t opset = m_.opset("");
        if (opset < 1 || opset > max_opset)
            return make_unsupported(
                std::string(input_), "opset_import", "onnx-opset", "ai.onnx opset " + std::to_string(opset),
                "Janus reads opsets 1 .. " + std::to_string(max_opset) + " (an op's schema from before opset " +
                    std::to_string(min_opset) + " only where Janus reads it the same way)");
        if (m_.graph.outputs.empty())  // onnx.proto: "outputs of the graph"; the checker requires at least one
            return make_error(std::string(input_), "graph", "onnx-graph-outputs",
                              "the graph declares no outputs; an ONNX graph has at least one");
        for (const auto& t : m_.graph.initializers) consts_[t.name] = &t;
        for (const auto& n : m_.graph.nodes)
            if (n.op_type == "Constant" && n.domain.empty()) {
                JANUS_CHECK(constant_node(n));
            }
        collect_owned();
        for (const auto& v : m_.graph.outputs) graph_outputs_.insert(v.name);
        JANUS_CHECK(check_defined());
        match_quantization();
        // graph inputs, in declaration order (created now so they keep their order even if read late)
        for (const auto& v : m_.graph.inputs)
            if (!consts_.count(v.name)) {
                JANUS_CHECK(graph_input(v));
            }
        for (const auto& n : m_.graph.nodes) {
            if (n.op_type == "Constant" && n.domain.empty()) continue;
            JANUS_CHECK(node(n));
        }
        for (const auto& v : m_.graph.outputs) JANUS_CHECK(graph_output(v));
        JANUS_CHECK(verify(g_, {}, {}, infer_));
        return std::move(g_);
    }

private:
    // ---- errors --------------------------------------------------------------------------------------------
    Error err(const onnx::Node& n, std::string rule, std::string detail) const {
        return make_error(std::string(input_), where(n), std::move(rule), std::move(detail));
    }
    /// A valid node Janus does not implement: `what` is the attribute or type it lacks (after the op type).
    Error unsupported(const onnx::Node& n, std::string rule, const std::string& what, std::string why) const {
        return make_unsupported(std::string(input_), where(n), std::move(rule),
                                echo(n.op_type) + (what.empty() ? "" : " ") + what, std::move(why));
    }
    static std::string where(const onnx::Node& n) { return "node '" + echo(n.name) + "' (" + echo(n.op_type) + ")"; }

    // ---- constants ------------------------------------------------------------------------------------------
    Status constant_node(const onnx::Node& n) {
        JANUS_CHECK(check_schema(n));
        if (n.outputs.size() != 1) return err(n, "onnx-op", "a Constant node has one output");
        const auto* a = n.attributes.empty() ? nullptr : &n.attributes[0];
        if (!a || n.attributes.size() != 1) return err(n, "onnx-op", "a Constant node has exactly one attribute");
        onnx::Tensor t;
        t.name = n.outputs[0];
        const auto put = [&](DType d, std::vector<std::int64_t> dims, const void* p, std::size_t bytes) {
            t.dtype = d;
            t.dims = std::move(dims);
            t.data.resize(bytes);
            if (bytes) std::memcpy(t.data.data(), p, bytes);
        };
        if (a->name == "value" && a->t) {
            t = *a->t;
            t.name = n.outputs[0];
        } else if (a->name == "value_float") {
            put(DType::f32, {}, &a->f, 4);
        } else if (a->name == "value_int") {
            put(DType::i64, {}, &a->i, 8);
        } else if (a->name == "value_floats") {
            put(DType::f32, {static_cast<std::int64_t>(a->floats.size())}, a->floats.data(), 4 * a->floats.size());
        } else if (a->name == "value_ints") {
            put(DType::i64, {static_cast<std::int64_t>(a->ints.size())}, a->ints.data(), 8 * a->ints.size());
        } else {
            return unsupported(n, "onnx-op", "attribute '" + a->name + "'",
                               "Janus reads value, value_float(s) and value_int(s)");
        }
        owned_.push_back(std::move(t));
        return ok_status();
    }
    void collect_owned() {
        for (const auto& t : owned_) consts_[t.name] = &t;
    }

    const onnx::Tensor* constant(const std::string& name) const {
        const auto it = consts_.find(name);
        return it == consts_.end() ? nullptr : it->second;
    }

    static std::vector<float> floats_of(const onnx::Tensor& t) {
        std::vector<float> r;
        visit_dtype(t.dtype, [&](auto ty) {
            using T = typename decltype(ty)::type;
            for (T v : t.values<T>()) r.push_back(static_cast<float>(v));
        });
        return r;
    }
    static std::vector<std::int64_t> ints_of(const onnx::Tensor& t) {
        std::vector<std::int64_t> r;
        visit_dtype(t.dtype, [&](auto ty) {
            using T = typename decltype(ty)::type;
            for (T v : t.values<T>()) r.push_back(static_cast<std::int64_t>(v));
        });
        return r;
    }

    static Shape shape_of(const std::vector<std::int64_t>& dims) {
        Shape s;
        for (auto d : dims) s.push_back(d);
        return s;
    }

    /// Quantization parameters from a (scale, zero point) constant pair of node `n` (inputs i, i+1).
    Result<numeric::QuantParams> qparams(const onnx::Node& n, std::size_t scale_at, std::size_t zp_at,
                                         const Shape& shape, std::int64_t axis, DType dflt) const {
        const auto* s = scale_at < n.inputs.size() ? constant(n.inputs[scale_at]) : nullptr;
        const auto* z = zp_at < n.inputs.size() && !n.inputs[zp_at].empty() ? constant(n.inputs[zp_at]) : nullptr;
        if (!s || s->dtype != DType::f32)
            return unsupported(n, "onnx-quant", "input " + std::to_string(scale_at) + " (scale) not a float32 constant",
                               "Janus compiles fixed quantization parameters");
        if (zp_at < n.inputs.size() && !n.inputs[zp_at].empty() && !z)
            return unsupported(n, "onnx-quant", "input " + std::to_string(zp_at) + " (zero point) not a constant",
                               "Janus compiles fixed quantization parameters");
        // ONNX: a scale (and its zero point) is a scalar for per-tensor quantization, or 1-D for per-axis
        for (const auto* c : {s, z})
            if (c && c->dims.size() > 1)
                return err(n, "onnx-quant-rank",
                           "input " + std::to_string(c == s ? scale_at : zp_at) + " (" +
                               (c == s ? "scale" : "zero point") + ") has rank " + std::to_string(c->dims.size()) +
                               "; a quantization parameter is a scalar or a 1-D tensor");
        const DType d = z ? z->dtype : dflt;
        if (d != DType::i8 && d != DType::u8 && d != DType::i32)
            return unsupported(n, "onnx-quant", "zero point type " + std::string(dtype_name(d)),
                               "Janus quantizes to int8, uint8 or int32");
        const auto scales = floats_of(*s);
        std::vector<std::int32_t> zps;
        if (z) {
            for (auto v : ints_of(*z)) zps.push_back(static_cast<std::int32_t>(v));
        } else {
            zps.assign(scales.size(), 0);
        }
        const std::string what = "node '" + n.name + "' (" + n.op_type + ")";
        if (scales.size() == 1 && s->dims.size() <= 1) {
            auto q = numeric::make_quant(d, scales[0], zps.empty() ? 0 : zps[0], what);
            if (!q.ok())
                return make_error(std::string(input_), q.error().position.empty() ? what : q.error().position,
                                  q.error().rule, what + ": " + q.error().detail);
            return q;
        }
        const std::int64_t ax = axis < 0 ? axis + shape.size() : axis;
        auto q = numeric::make_quant_per_axis(d, scales, zps, static_cast<int>(ax), shape, what);
        if (!q.ok()) return q.error().within(std::string(input_), what);
        return q;
    }

    // ---- definedness ----------------------------------------------------------------------------------------
    Status check_defined() {
        std::set<std::string, std::less<>> defined;
        for (const auto& [k, v] : consts_) defined.insert(k);
        for (const auto& t : owned_) defined.insert(t.name);
        for (const auto& v : m_.graph.inputs) defined.insert(v.name);
        for (const auto& n : m_.graph.nodes) {
            if (!n.domain.empty() && n.domain != "ai.onnx")
                return unsupported(n, "onnx-domain", "of domain '" + n.domain + "'", "Janus imports ai.onnx ops only");
            for (const auto& i : n.inputs)
                if (!i.empty() && !defined.count(i))
                    return err(n, "onnx-undefined", "input '" + i + "' is not defined before this node");
            for (const auto& o : n.outputs) {
                if (n.op_type == "Constant") continue;
                if (!defined.insert(o).second) return err(n, "onnx-undefined", "output '" + o + "' is defined twice");
            }
        }
        for (const auto& v : m_.graph.outputs)
            if (!defined.count(v.name))
                return make_error(std::string(input_), "graph output '" + v.name + "'", "onnx-undefined",
                                  "no node produces this graph output");
        return ok_status();
    }

    // ---- step 1: quantization matching ----------------------------------------------------------------------
    const onnx::Node* only_consumer(const std::string& name) const {
        if (graph_outputs_.count(name)) return nullptr;
        if (readers_.empty())  // every tensor's readers, counted once (a scan per tensor was O(N^2))
            for (const auto& n : m_.graph.nodes)
                for (const auto& i : n.inputs) {
                    auto& [count, first] = readers_[i];
                    if (count++ == 0) first = &n;
                }
        const auto it = readers_.find(name);
        return it != readers_.end() && it->second.first == 1 ? it->second.second : nullptr;
    }

    void match_quantization() {
        // DQ outputs and Q inputs are covered with their node's parameters; activations pass coverage back.
        for (auto it = m_.graph.nodes.rbegin(); it != m_.graph.nodes.rend(); ++it) {
            const onnx::Node& n = *it;
            if (n.outputs.size() != 1) continue;
            const std::string& out = n.outputs[0];
            const onnx::Node* c = only_consumer(out);
            if (!c) continue;
            if (c->op_type == "QuantizeLinear")
                covered_[out] = c;
            else if (is_activation(c->op_type) && covered_.count(c->outputs[0]))
                covered_[out] = covered_[c->outputs[0]];
        }
    }

    /// The quantization covering float tensor `name` (its Q node's parameters), if any.
    Result<std::optional<numeric::QuantParams>> cover_of(const std::string& name, const Shape& shape) const {
        const auto it = covered_.find(name);
        if (it == covered_.end()) return std::optional<numeric::QuantParams>();
        const onnx::Node& q = *it->second;
        const auto* ax = q.attribute("axis");
        JANUS_TRY(auto p, qparams(q, 1, 2, shape, ax ? ax->i : 1, DType::u8));
        return std::optional<numeric::QuantParams>(p.to_int8());
    }

    // ---- IR values for ONNX names ---------------------------------------------------------------------------
    struct Rep {
        ValueId v = no_value;         ///< the IR value: quantized (int8 / int32 with parameters) or plain
        bool dequantized = false;     ///< the ONNX tensor is the float reading of the quantized `v` (a DQ output)
        ValueId as_float = no_value;  ///< a host DequantizeLinear of a quantized v, made on demand
    };

    /// `base`, or `base.1`, ...: a name no value of g_ has (Graph::fresh_name, from the importer's own index of the
    /// names: Graph::find scans every value, which made the import of an N-node graph O(N^2)).
    std::string fresh(const std::string& base) const {
        std::string n = base;
        for (int k = 1; names_.count(n); ++k) n = base + "." + std::to_string(k);
        return n;
    }
    ValueId add_value(std::string name, ops::TensorType type, ValueKind kind) {
        names_.insert(name);
        return g_.add_value(std::move(name), std::move(type), kind);
    }
    ValueId add_constant(std::string name, Tensor data) {
        names_.insert(name);
        return g_.add_constant(std::move(name), std::move(data));
    }
    void rename(ValueId v, std::string name) {
        names_.erase(g_.value(v).name);
        names_.insert(name);
        g_.value(v).name = std::move(name);
    }

    ValueId emit(const std::string& op, std::vector<ValueId> in, ops::AttrMap attrs, ops::TensorType out,
                 const std::string& out_name, const std::string& origin, Target t = Target::any) {
        const ValueId o = add_value(fresh(out_name), std::move(out), ValueKind::node);
        g_.nodes.push_back(Node{op, std::move(attrs), std::move(in), {o}, origin, t});
        return o;
    }

    /// Infer the output type of `op`; quantized outputs get `q` (with a Requantize when the op fixes another).
    Result<ValueId> emit_inferred(const onnx::Node& n, const std::string& op, std::vector<ValueId> in,
                                  ops::AttrMap attrs, const std::optional<numeric::QuantParams>& q,
                                  const std::string& out_name, Target t) {
        std::vector<ops::TensorType> types;
        for (ValueId v : in) types.push_back(g_.value(v).type);
        auto ty = infer_(op, types, attrs);
        if (!ty.ok()) return ty.error().within(std::string(input_), "node '" + n.name + "' (" + n.op_type + ")");
        ops::TensorType out = *ty;
        if (!q || !is_quantized_storage(out.dtype))
            return emit(op, std::move(in), std::move(attrs), out, out_name, n.name, t);
        if (out.quant && *out.quant != *q) {  // the op fixes its output parameters: requantize to the covering ones
            const ValueId mid = emit(op, std::move(in), std::move(attrs), out, out_name + ".pre", n.name, t);
            ops::TensorType rq{q->dtype, out.shape, *q};
            return emit("Requantize", {mid}, {{"dtype", std::string(dtype_name(q->dtype))}}, rq, out_name, n.name, t);
        }
        out.dtype = q->dtype;
        out.quant = *q;
        return emit(op, std::move(in), std::move(attrs), out, out_name, n.name, t);
    }

    Status graph_input(const onnx::ValueInfo& v) {
        JANUS_TRY(const ops::TensorType t, graph_input_type(v, input_));
        const ValueId id = add_value(v.name, t, ValueKind::input);
        g_.inputs.push_back(id);
        reps_[v.name] = Rep{id};
        return ok_status();
    }

    /// Attach quantization `q` (as declared, possibly uint8) to the integer tensor `name`; returns its int8 value.
    Result<ValueId> quantized(const onnx::Node& n, const std::string& name, const numeric::QuantParams& q) {
        auto it = reps_.find(name);
        if (it == reps_.end()) {
            if (const auto* c = constant(name)) {
                if (c->dtype != q.dtype)
                    return err(n, "onnx-quant",
                               "constant '" + name + "' is " + std::string(dtype_name(c->dtype)) +
                                   " but its zero point is " + std::string(dtype_name(q.dtype)));
                Tensor t = Tensor::zeros(c->dtype == DType::u8 ? DType::i8 : c->dtype, shape_of(c->dims), q.to_int8());
                auto* out = reinterpret_cast<std::uint8_t*>(t.storage->data());
                for (std::size_t i = 0; i < c->data.size(); ++i)
                    out[i] = c->dtype == DType::u8 ? static_cast<std::uint8_t>(c->data[i] - 128) : c->data[i];
                const ValueId v = add_constant(fresh(name), std::move(t));
                reps_[name] = Rep{v};
                return v;
            }
            return err(n, "onnx-undefined", "'" + name + "' is not defined");
        }
        Rep& r = it->second;
        if (r.dequantized)
            return err(n, "onnx-quant", "'" + name + "' is a float tensor; a quantized one was expected");
        Value& val = g_.value(r.v);
        if (val.type.dtype != q.dtype && !(val.type.dtype == DType::i8 && q.dtype == DType::u8 && val.type.quant))
            return err(n, "onnx-quant",
                       "'" + name + "' is " + std::string(dtype_name(val.type.dtype)) + " but its zero point is " +
                           std::string(dtype_name(q.dtype)));
        if (!val.type.quant) {
            if (val.kind != ValueKind::input)
                return unsupported(n, "onnx-quant", "of '" + name + "', integers computed without a quantization",
                                   "Janus dequantizes graph inputs, constants and the outputs of quantized ops");
            val.type.quant = q;
            if (q.dtype == DType::u8) {  // step 3: a uint8 graph input becomes int8 at once
                const ValueId i8 = emit("Requantize", {r.v}, {{"dtype", std::string("int8")}},
                                        ops::TensorType{DType::i8, val.type.shape, q.to_int8()}, name + ".int8",
                                        "graph input " + name);
                r.v = i8;
            }
            return r.v;
        }
        if (*g_.value(r.v).type.quant != q.to_int8() && *g_.value(r.v).type.quant != q)
            return unsupported(n, "onnx-quant", "reading '" + name + "' with quantization (" + q.to_int8().str() + ")",
                               "it was written with (" + g_.value(r.v).type.quant->str() +
                                   "); Janus keeps one quantization per tensor");
        return r.v;
    }

    /// The float32 reading of `name` (a host DequantizeLinear of a quantized tensor, made once).
    Result<ValueId> as_float(const onnx::Node& n, const std::string& name) {
        auto it = reps_.find(name);
        if (it == reps_.end()) {
            const auto* c = constant(name);
            if (!c) return err(n, "onnx-undefined", "'" + name + "' is not defined");
            Tensor t = Tensor::zeros(c->dtype, shape_of(c->dims));
            if (!c->data.empty()) std::memcpy(t.storage->data(), c->data.data(), c->data.size());
            const ValueId v = add_constant(fresh(name), std::move(t));
            reps_[name] = Rep{v};
            return v;
        }
        Rep& r = it->second;
        if (!r.dequantized && !g_.value(r.v).type.quant) return r.v;
        if (r.as_float == no_value) {
            const auto& t = g_.value(r.v).type;
            r.as_float = emit("DequantizeLinear", {r.v}, {}, ops::TensorType{DType::f32, t.shape, std::nullopt},
                              !names_.count(name) ? name : name + ".float", n.name, Target::host);
        }
        return r.as_float;
    }

    // ---- nodes ----------------------------------------------------------------------------------------------
    /// The node's schema at the model's opset is one Janus implements (rule onnx-opset).
    Status check_schema(const onnx::Node& n) const {
        if (!known_op(n.op_type)) return ok_status();  // refused below as onnx-op
        return import_detail::check_schema(n.op_type, m_.opset(""), std::string(input_), where(n));
    }

    /// An op of the compiler's own: no registry op, no op of Janus's IR, and `infer_` knows it (graph/ir.hpp InferFn:
    /// an op it does not know is a known-op error, whatever the inputs).
    bool compiler_op(std::string_view op) const {
        if (is_internal_op(op) || known_op(op)) return false;
        const auto r = infer_(op, {}, {});
        return r.ok() || r.error().rule != "known-op";
    }

    /// A node the importer reads itself (not through an op's inference) has its schema's counts: `min_in` to
    /// `max_in` inputs, the first one named, and one named output (rule onnx-op). onnx_run found a
    /// DequantizeLinear without outputs read past the end of its list (stop 37).
    Status check_arity(const onnx::Node& n, std::size_t min_in, std::size_t max_in) const {
        if (n.inputs.size() >= min_in && n.inputs.size() <= max_in && !n.inputs[0].empty() && n.outputs.size() == 1 &&
            !n.outputs[0].empty())
            return ok_status();
        return err(n, "onnx-op",
                   n.op_type + " has " + std::to_string(min_in) +
                       (min_in == max_in ? "" : " to " + std::to_string(max_in)) +
                       " inputs, the first one named, and one named output; this node has " +
                       std::to_string(n.inputs.size()) + (n.inputs.size() == 1 ? " input and " : " inputs and ") +
                       std::to_string(n.outputs.size()) + (n.outputs.size() == 1 ? " output" : " outputs"));
    }

    Status node(const onnx::Node& n) {
        const std::string& op = n.op_type;
        JANUS_CHECK(check_schema(n));
        if (op == "Identity") {
            JANUS_CHECK(check_arity(n, 1, 1));
            if (!reps_.count(n.inputs[0])) JANUS_CHECK(as_float(n, n.inputs[0]));
            reps_[n.outputs[0]] = reps_[n.inputs[0]];
            return ok_status();
        }
        if (op == "DequantizeLinear" || op == "QuantizeLinear") {  // x, scale, [zero point]
            JANUS_CHECK(check_arity(n, 2, 3));
            return op == "QuantizeLinear" ? quantize(n) : dequantize(n);
        }
        if (op == "QLinearConv" || op == "QLinearMatMul") {  // 8 operands and their parameters, [QLinearConv's B]
            JANUS_CHECK(check_arity(n, 8, op == "QLinearConv" ? 9 : 8));
            return qlinear(n);
        }
        if (op == "ConvInteger" || op == "MatMulInteger") {  // A, B, [zero points]
            JANUS_CHECK(check_arity(n, 2, 4));
            return integer(n);
        }
        if (!known_op(op) && !compiler_op(op))
            return unsupported(n, "onnx-op", "",
                               is_internal_op(op) ? "an op of Janus's own IR, not an ONNX op type"
                                                  : "Janus has no such operator (docs/SUPPORTED_OPS.md lists its ops)");
        if (op == "LayerNormalization" && n.outputs.size() > 1) return layer_norm_function(n);
        if (op == "BatchNormalization") {
            const auto* tm = n.attribute("training_mode");
            if (tm && tm->type == onnx::AttrType::i && tm->i == 1) return batch_norm_training(n);
        }
        if ((op == "Min" || op == "Max") && n.inputs.size() != 2) return variadic(n);
        if (op == "MaxPool" && n.outputs.size() == 2) return max_pool_with_indices(n);
        if (n.outputs.size() != 1)
            return unsupported(n, "onnx-op", "with " + std::to_string(n.outputs.size()) + " outputs",
                               "Janus imports " + op + " with one output");
        return regular(n);
    }

    // ---- expansions: ONNX nodes imported as a sequence of registry ops ------------------------------------------
    // Each step is an ONNX node of the same name (the origin and the errors name the model's node) that goes through
    // node() like any other; intermediate tensors get names no model tensor has.

    /// `base`, or `base.1`, `base.2`, ...: a tensor name that no model tensor, constant or earlier step uses.
    std::string fresh_tensor(const std::string& base) {
        if (model_names_.empty()) {
            for (const auto& v : m_.graph.inputs) model_names_.insert(v.name);
            for (const auto& v : m_.graph.outputs) model_names_.insert(v.name);
            for (const auto& t : m_.graph.initializers) model_names_.insert(t.name);
            for (const auto& x : m_.graph.nodes) model_names_.insert(x.outputs.begin(), x.outputs.end());
        }
        std::string s = base;
        for (int k = 1; model_names_.count(s) || consts_.count(s) || reps_.count(s) || names_.count(s); ++k)
            s = base + "." + std::to_string(k);
        model_names_.insert(s);
        return s;
    }

    /// A constant tensor of an expansion (epsilon, momentum, a Reshape's shape); returns its name.
    template <class T>
    std::string add_constant_tensor(const std::string& base, std::vector<std::int64_t> dims, const std::vector<T>& v) {
        onnx::Tensor t;
        t.name = fresh_tensor(base);
        t.dtype = dtype_v<T>;
        t.dims = std::move(dims);
        t.data.resize(v.size() * sizeof(T));
        if (!v.empty()) std::memcpy(t.data.data(), v.data(), t.data.size());
        owned_.push_back(std::move(t));
        consts_[owned_.back().name] = &owned_.back();
        return owned_.back().name;
    }

    static onnx::Attribute ints_attribute(std::string name, std::vector<std::int64_t> v) {
        onnx::Attribute a;
        a.name = std::move(name);
        a.type = onnx::AttrType::ints;
        a.ints = std::move(v);
        return a;
    }
    static onnx::Attribute int_attribute(std::string name, std::int64_t v) {
        onnx::Attribute a;
        a.name = std::move(name);
        a.type = onnx::AttrType::i;
        a.i = v;
        return a;
    }

    /// Import one step of `n`'s expansion: `op(in...)` into tensor `out` (a fresh name from `n`'s first output when
    /// empty). Returns the output's name.
    Result<std::string> step(const onnx::Node& n, std::string op, std::vector<std::string> in, std::string out,
                             std::vector<onnx::Attribute> attrs = {}) {
        if (out.empty()) out = fresh_tensor(n.outputs[0] + "/" + op);
        onnx::Node s;
        s.name = n.name;
        s.op_type = std::move(op);
        s.inputs = std::move(in);
        s.outputs = {out};
        s.attributes = std::move(attrs);
        s.position = n.position;
        JANUS_CHECK(node(s));
        return out;
    }

    /// The shape of tensor `name` as imported so far (a value or a constant).
    Result<Shape> shape_of_name(const onnx::Node& n, const std::string& name) const {
        if (const auto* c = constant(name)) return shape_of(c->dims);
        const auto it = reps_.find(name);
        if (it == reps_.end()) return err(n, "onnx-undefined", "input '" + name + "' has no value");
        return g_.value(it->second.v).type.shape;
    }

    /// The attributes of an expanded node: each must be one of `known` with the given kind.
    Status check_expanded_attrs(const onnx::Node& n,
                                std::initializer_list<std::pair<std::string_view, onnx::AttrType>> known) const {
        for (const auto& a : n.attributes) {
            bool ok = false;
            for (const auto& [name, type] : known) ok = ok || (a.name == name && a.type == type);
            if (!ok) return err(n, "onnx-op", "attribute '" + a.name + "' is not one " + n.op_type + " takes here");
        }
        return ok_status();
    }

    /// Min / Max with one input (the input itself) or three and more (a chain of the binary op, left to right:
    /// min and max are associative and their NaN rule propagates a NaN from any operand).
    Status variadic(const onnx::Node& n) {
        if (n.inputs.empty() || n.outputs.size() != 1)
            return err(n, "input-count", n.op_type + " takes one or more inputs and has one output");
        for (const auto& i : n.inputs)
            if (i.empty()) return err(n, "input-count", n.op_type + " has no optional inputs");
        if (n.inputs.size() == 1) {
            onnx::Node id = n;
            id.op_type = "Identity";
            return node(id);
        }
        std::string acc = n.inputs[0];
        for (std::size_t k = 1; k < n.inputs.size(); ++k) {
            JANUS_TRY(acc, step(n, n.op_type, {acc, n.inputs[k]}, k + 1 == n.inputs.size() ? n.outputs[0] : ""));
        }
        return ok_status();
    }

    /// MaxPool with its Indices output: MaxPool (Y) and MaxPoolIndices (Indices, an op of Janus's IR, ops/pool.hpp) of
    /// the same input and attributes.
    Status max_pool_with_indices(const onnx::Node& n) {
        if (n.outputs[0].empty()) return err(n, "onnx-op", "MaxPool's output Y is required");
        onnx::Node y = n;
        y.outputs = {n.outputs[0]};
        JANUS_CHECK(node(y));
        if (n.outputs[1].empty()) return ok_status();
        onnx::Node i = n;
        i.op_type = "MaxPoolIndices";
        i.outputs = {n.outputs[1]};
        return regular(i);
    }

    /// LayerNormalization with its Mean / InvStdDev outputs: ONNX's function body of LayerNormalization-17
    /// (stash_type 1), in float32: Mean = ReduceMean(X), D = X - Mean, InvStdDev = Reciprocal(Sqrt(ReduceMean(D * D)
    /// + epsilon)), Y = D * InvStdDev * Scale (+ B), reducing over the axes from `axis` on with keepdims=1.
    Status layer_norm_function(const onnx::Node& n) {
        JANUS_CHECK(check_expanded_attrs(
            n, {{"axis", onnx::AttrType::i}, {"epsilon", onnx::AttrType::f}, {"stash_type", onnx::AttrType::i}}));
        const auto* st = n.attribute("stash_type");
        if (st && st->i != 1)
            return unsupported(n, "attribute-range", "stash_type " + std::to_string(st->i),
                               "Janus computes the statistics in float32, stash_type 1");
        if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.inputs[0].empty() || n.inputs[1].empty() ||
            n.outputs.size() > 3)
            return err(n, "input-count", "LayerNormalization takes X, Scale and an optional B, and has 1 to 3 outputs");
        JANUS_TRY(const Shape xs, shape_of_name(n, n.inputs[0]));
        const int r = xs.size();
        const auto* ax = n.attribute("axis");
        const std::int64_t a = ax ? ax->i : -1, axis = a < 0 ? a + r : a;
        if (axis < 0 || axis >= r)
            return err(n, "axis-in-range", "axis " + std::to_string(a) + " for a rank-" + std::to_string(r) + " X");
        std::vector<std::int64_t> axes;
        for (std::int64_t k = axis; k < r; ++k) axes.push_back(k);
        const auto* ep = n.attribute("epsilon");
        const std::string eps = add_constant_tensor<float>(n.outputs[0] + "/epsilon", {}, {ep ? ep->f : 1e-5f});
        const auto out = [&](std::size_t k) { return k < n.outputs.size() ? n.outputs[k] : std::string(); };
        const auto reduce = [&] { return std::vector<onnx::Attribute>{ints_attribute("axes", axes)}; };
        const std::string& x = n.inputs[0];
        JANUS_TRY(const std::string mean, step(n, "ReduceMean", {x}, out(1), reduce()));
        JANUS_TRY(const std::string d, step(n, "Sub", {x, mean}, ""));
        JANUS_TRY(const std::string dd, step(n, "Mul", {d, d}, ""));
        JANUS_TRY(const std::string var, step(n, "ReduceMean", {dd}, "", reduce()));
        JANUS_TRY(const std::string ve, step(n, "Add", {var, eps}, ""));
        JANUS_TRY(const std::string sd, step(n, "Sqrt", {ve}, ""));
        JANUS_TRY(const std::string inv, step(n, "Reciprocal", {sd}, out(2)));
        JANUS_TRY(const std::string nrm, step(n, "Mul", {d, inv}, ""));
        const bool bias = n.inputs.size() == 3 && !n.inputs[2].empty();
        JANUS_TRY(const std::string y, step(n, "Mul", {nrm, n.inputs[1]}, bias ? "" : out(0)));
        if (bias) JANUS_CHECK(step(n, "Add", {y, n.inputs[2]}, out(0)));
        return ok_status();
    }

    /// BatchNormalization with training_mode=1 (opsets 14, 15): normalizes with the batch's statistics and returns
    /// the updated running statistics, as ONNX's reference: with axes all but 1 and keepdims=1,
    ///   M = ReduceMean(X), D = X - M, V = ReduceMean(D * D) (the biased variance),
    ///   Y = D * Reciprocal(Sqrt(V + epsilon)) * scale + B            (scale, B reshaped to [C, 1, ...]),
    ///   running_mean = input_mean * momentum + M * (1 - momentum), running_var likewise with V.
    Status batch_norm_training(const onnx::Node& n) {
        JANUS_CHECK(check_expanded_attrs(
            n,
            {{"epsilon", onnx::AttrType::f}, {"momentum", onnx::AttrType::f}, {"training_mode", onnx::AttrType::i}}));
        if (n.inputs.size() != 5 || n.outputs.empty() || n.outputs.size() > 3 || n.outputs[0].empty())
            return err(n, "input-count", "BatchNormalization takes X, scale, B, input_mean and input_var");
        for (const auto& i : n.inputs)
            if (i.empty()) return err(n, "input-count", "BatchNormalization has no optional inputs");
        JANUS_TRY(const Shape xs, shape_of_name(n, n.inputs[0]));
        const int r = xs.size();
        if (r < 2) return err(n, "input-rank", "X must be [N, C, ...] (rank >= 2)");
        const std::int64_t C = xs[1];
        std::vector<std::int64_t> axes{0}, chan_shape{C};
        for (std::int64_t k = 2; k < r; ++k) axes.push_back(k), chan_shape.push_back(1);
        const auto* ep = n.attribute("epsilon");
        const auto* mo = n.attribute("momentum");
        const float momentum = mo ? mo->f : 0.9f;
        const std::string base = n.outputs[0];
        const std::string eps = add_constant_tensor<float>(base + "/epsilon", {}, {ep ? ep->f : 1e-5f});
        const std::string to_chan =
            add_constant_tensor<std::int64_t>(base + "/chan_shape", {static_cast<std::int64_t>(r - 1)}, chan_shape);
        const auto reduce = [&] { return std::vector<onnx::Attribute>{ints_attribute("axes", axes)}; };
        const std::string& x = n.inputs[0];
        JANUS_TRY(const std::string m, step(n, "ReduceMean", {x}, "", reduce()));
        JANUS_TRY(const std::string d, step(n, "Sub", {x, m}, ""));
        JANUS_TRY(const std::string dd, step(n, "Mul", {d, d}, ""));
        JANUS_TRY(const std::string v, step(n, "ReduceMean", {dd}, "", reduce()));
        JANUS_TRY(const std::string ve, step(n, "Add", {v, eps}, ""));
        JANUS_TRY(const std::string sd, step(n, "Sqrt", {ve}, ""));
        JANUS_TRY(const std::string inv, step(n, "Reciprocal", {sd}, ""));
        JANUS_TRY(const std::string nrm, step(n, "Mul", {d, inv}, ""));
        JANUS_TRY(const std::string sc, step(n, "Reshape", {n.inputs[1], to_chan}, ""));
        JANUS_TRY(const std::string bs, step(n, "Reshape", {n.inputs[2], to_chan}, ""));
        JANUS_TRY(const std::string y, step(n, "Mul", {nrm, sc}, ""));
        JANUS_CHECK(step(n, "Add", {y, bs}, n.outputs[0]));
        if (n.outputs.size() < 2) return ok_status();
        const std::string mom = add_constant_tensor<float>(base + "/momentum", {}, {momentum});
        const std::string rest = add_constant_tensor<float>(base + "/one_minus_momentum", {}, {1.0f - momentum});
        const std::string flat = add_constant_tensor<std::int64_t>(base + "/c", {1}, {C});
        for (std::size_t k = 1; k < n.outputs.size(); ++k) {
            if (n.outputs[k].empty()) continue;
            JANUS_TRY(const std::string batch, step(n, "Reshape", {k == 1 ? m : v, flat}, ""));
            JANUS_TRY(const std::string old, step(n, "Mul", {n.inputs[k + 2], mom}, ""));
            JANUS_TRY(const std::string now, step(n, "Mul", {batch, rest}, ""));
            JANUS_CHECK(step(n, "Add", {old, now}, n.outputs[k]));
        }
        return ok_status();
    }

    Status dequantize(const onnx::Node& n) {
        const auto* ax = n.attribute("axis");
        Shape shape;
        if (const auto* c = constant(n.inputs[0]))
            shape = shape_of(c->dims);
        else if (reps_.count(n.inputs[0]))
            shape = g_.value(reps_[n.inputs[0]].v).type.shape;
        JANUS_TRY(auto q, qparams(n, 1, 2, shape, ax ? ax->i : 1, DType::u8));
        JANUS_TRY(const ValueId v, quantized(n, n.inputs[0], q));
        reps_[n.outputs[0]] = Rep{v, true};
        return ok_status();
    }

    Status quantize(const onnx::Node& n) {
        const std::string& x = n.inputs[0];
        auto it = reps_.find(x);
        const auto* ax = n.attribute("axis");
        Shape shape;
        if (it != reps_.end()) shape = g_.value(it->second.v).type.shape;
        JANUS_TRY(auto q, qparams(n, 1, 2, shape, ax ? ax->i : 1, DType::u8));
        const numeric::QuantParams q8 = q.to_int8();
        if (it != reps_.end() && g_.value(it->second.v).type.quant) {
            // Q(DQ(v)) or Q(covered op output): v itself when the parameters agree, else a Requantize
            const ValueId v = it->second.v;
            if (g_.value(v).type.quant == q8) {
                reps_[n.outputs[0]] = Rep{v};
                return ok_status();
            }
            reps_[n.outputs[0]] =
                Rep{emit("Requantize", {v}, {{"dtype", std::string("int8")}},
                         ops::TensorType{DType::i8, g_.value(v).type.shape, q8}, n.outputs[0], n.name)};
            return ok_status();
        }
        JANUS_TRY(const ValueId f, as_float(n, x));
        ops::AttrMap a{{"scale", q8.scales},
                       {"zero_point", std::vector<std::int64_t>(q8.zero_points.begin(), q8.zero_points.end())},
                       {"dtype", std::string("int8")}};
        if (q8.axis) a["axis"] = std::int64_t{*q8.axis};
        JANUS_TRY(const ValueId v,
                  emit_inferred(n, "QuantizeLinear", {f}, std::move(a), q8, n.outputs[0], Target::host));
        reps_[n.outputs[0]] = Rep{v};
        return ok_status();
    }

    Status qlinear(const onnx::Node& n) {
        const bool conv = n.op_type == "QLinearConv";
        JANUS_TRY(const Shape sx, shape_of_name(n, n.inputs[0]));
        JANUS_TRY(const Shape sw, shape_of_name(n, n.inputs[3]));
        JANUS_TRY(auto qx, qparams(n, 1, 2, sx, 1, DType::u8));
        JANUS_TRY(auto qw, qparams(n, 4, 5, sw, conv ? 0 : 1, DType::u8));
        JANUS_TRY(const ValueId x, quantized(n, n.inputs[0], qx));
        JANUS_TRY(const ValueId w, quantized(n, n.inputs[3], qw));
        std::vector<ValueId> in{x, w};
        if (conv && n.inputs.size() > 8 && !n.inputs[8].empty()) {
            const auto* b = constant(n.inputs[8]);
            if (!b || b->dtype != DType::i32)
                return unsupported(n, "onnx-constant-input", "bias not an int32 constant",
                                   "Janus compiles a fixed bias");
            std::vector<float> s;
            const auto qwi = qw.to_int8();
            for (std::size_t c = 0; c < static_cast<std::size_t>(b->elements()); ++c)
                s.push_back(qx.scale() * qwi.scale(qwi.per_tensor() ? 0 : c));
            JANUS_TRY(auto qb, numeric::make_quant_per_axis(DType::i32, s, std::vector<std::int32_t>(s.size(), 0), 0,
                                                            shape_of(b->dims), "node '" + n.name + "' bias"));
            JANUS_TRY(const ValueId bv, quantized(n, n.inputs[8], qb));
            in.push_back(bv);
        }
        JANUS_TRY(auto qy, qparams(n, 6, 7, Shape{}, 1, DType::u8));
        ops::AttrMap attrs = attrs_of(n);
        JANUS_TRY(const ValueId y, emit_inferred(n, conv ? "Conv" : "MatMul", std::move(in), std::move(attrs),
                                                 qy.to_int8(), n.outputs[0], Target::any));
        reps_[n.outputs[0]] = Rep{y};
        return ok_status();
    }

    /// ConvInteger / MatMulInteger: the zero points (inputs 2 and 3, constants) become the operands' quantization,
    /// with scale 1, which the ops read (the scales never enter); the output is int32 without quantization.
    Status integer(const onnx::Node& n) {
        const bool conv = n.op_type == "ConvInteger";
        // zero point axes: ConvInteger's w_zero_point per output channel (axis 0); MatMulInteger's a_zero_point per
        // row (axis rank - 2 of A), b_zero_point per column (axis rank - 1 of B). x_zero_point is one value.
        JANUS_TRY(const ValueId a, integer_operand(n, 0, 2, conv ? 0 : -2, !conv));
        JANUS_TRY(const ValueId b, integer_operand(n, 1, 3, conv ? 0 : -1, true));
        JANUS_TRY(const ValueId y,
                  emit_inferred(n, n.op_type, {a, b}, attrs_of(n), std::nullopt, n.outputs[0], Target::any));
        reps_[n.outputs[0]] = Rep{y};
        return ok_status();
    }

    /// Input `data_at` of an integer op read with the zero point of input `zp_at` (0 when omitted), as its int8
    /// value. A tensor that already carries a quantization must have the same zero points (its scale is irrelevant).
    Result<ValueId> integer_operand(const onnx::Node& n, std::size_t data_at, std::size_t zp_at, std::int64_t axis,
                                    bool per_axis) {
        const std::string& name = n.inputs[data_at];
        const std::string which = "input " + std::to_string(data_at) + " ('" + name + "')";
        DType d = DType::f32;
        Shape shape;
        const auto it = reps_.find(name);
        if (const auto* c = constant(name); c && it == reps_.end()) {
            d = c->dtype;
            shape = shape_of(c->dims);
        } else if (it != reps_.end() && !it->second.dequantized) {
            d = g_.value(it->second.v).type.dtype;
            shape = g_.value(it->second.v).type.shape;
        }
        if (d != DType::i8 && d != DType::u8)
            return err(n, "onnx-quant",
                       which + " must be an int8 or uint8 tensor, not " +
                           (it != reps_.end() && it->second.dequantized ? std::string("a float tensor")
                                                                        : std::string(dtype_name(d))));
        const bool has_zp = zp_at < n.inputs.size() && !n.inputs[zp_at].empty();
        const onnx::Tensor* z = has_zp ? constant(n.inputs[zp_at]) : nullptr;
        if (has_zp && !z)
            return unsupported(n, "onnx-quant", "input " + std::to_string(zp_at) + " (zero point) not a constant",
                               "Janus compiles fixed zero points");
        if (z && z->dims.size() > 1)
            return err(n, "onnx-quant-rank",
                       "input " + std::to_string(zp_at) + " (zero point) has rank " + std::to_string(z->dims.size()) +
                           "; a zero point is a scalar or a 1-D tensor");
        const bool carries = it != reps_.end() && g_.value(it->second.v).type.quant;
        if (carries && !has_zp)  // its int8 storage hides the ONNX dtype that the default zero point 0 refers to
            return unsupported(n, "onnx-quant", which + " quantized without an explicit zero point",
                               "its int8 storage hides which ONNX type the default zero point 0 refers to");
        if (z && z->dtype != d && !(carries && z->dtype == DType::u8))
            return err(n, "onnx-quant",
                       "the zero point of " + which + " is " + std::string(dtype_name(z->dtype)) +
                           "; it must have the tensor's type " + std::string(dtype_name(d)));
        std::vector<std::int32_t> zps{0};
        if (z) {
            zps.clear();
            for (auto v : ints_of(*z)) zps.push_back(static_cast<std::int32_t>(v));
        }
        const std::string what = "node '" + n.name + "' (" + n.op_type + ") zero point of " + which;
        const DType zd = z ? z->dtype : d;
        const bool one = zps.size() == 1 && (!z || z->dims.size() <= 1);
        if (!one && (!per_axis || shape.size() < 2))
            return err(n, "onnx-quant", what + ": " + std::to_string(zps.size()) + " values where one is expected");
        const std::int64_t ax = axis < 0 ? axis + shape.size() : axis;
        const auto q = one ? numeric::make_quant(zd, 1.0f, zps[0], what)
                           : numeric::make_quant_per_axis(zd, std::vector<float>(zps.size(), 1.0f), zps,
                                                          static_cast<int>(ax), shape, what);
        if (!q.ok()) return q.error().within(std::string(input_), what);
        if (!carries) return quantized(n, name, *q);
        const auto& have = *g_.value(it->second.v).type.quant;
        const auto want = q->to_int8();
        if (have.zero_points != want.zero_points || have.axis != want.axis)
            return unsupported(n, "onnx-quant", which + " read with zero point(s) " + want.str(),
                               "it carries " + have.str() + "; Janus keeps one quantization per tensor");
        return it->second.v;
    }

    static ops::AttrMap attrs_of(const onnx::Node& n) {
        ops::AttrMap a;
        for (const auto& x : n.attributes) {
            switch (x.type) {
                case onnx::AttrType::f:
                    a[x.name] = x.f;
                    break;
                case onnx::AttrType::i:
                    a[x.name] = x.i;
                    break;
                case onnx::AttrType::s:
                    a[x.name] = x.s;
                    break;
                case onnx::AttrType::ints:
                    a[x.name] = x.ints;
                    break;
                case onnx::AttrType::floats:
                    a[x.name] = x.floats;
                    break;
                default:
                    break;  // refused by the op's schema as an unknown attribute below
            }
        }
        return a;
    }

    Status regular(const onnx::Node& n) {
        const std::string& op = n.op_type;
        ops::AttrMap attrs = attrs_of(n);
        for (const auto& x : n.attributes)
            if (x.type != onnx::AttrType::f && x.type != onnx::AttrType::i && x.type != onnx::AttrType::s &&
                x.type != onnx::AttrType::ints && x.type != onnx::AttrType::floats)
                return unsupported(n, "onnx-op", "attribute '" + x.name + "' of kind " + onnx::attr_type_name(x.type),
                                   "Janus reads float, int, string, ints and floats attributes");
        // Which inputs are tensors, which are constant attributes.
        std::vector<std::string> tensors;
        std::vector<bool> param;  // a float32 constant parameter of a normalization: read as floats when quantized
        const bool norm = op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization";
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            const auto* ci = const_input(op, i);
            if (!ci) {
                if (n.inputs[i].empty())
                    return unsupported(n, "onnx-op", "input " + std::to_string(i) + " omitted",
                                       "Janus needs every tensor input of " + op);
                tensors.push_back(n.inputs[i]);
                const onnx::Tensor* c = norm && i > 0 ? constant(n.inputs[i]) : nullptr;
                const auto r = reps_.find(n.inputs[i]);  // a constant already read as floats by another node
                param.push_back(c && c->dtype == DType::f32 &&
                                (r == reps_.end() || (!r->second.dequantized && !g_.value(r->second.v).type.quant)));
                continue;
            }
            if (n.inputs[i].empty()) continue;
            const onnx::Tensor* c = constant(n.inputs[i]);
            if (!c && reps_.count(n.inputs[i]) && reps_[n.inputs[i]].dequantized) {
                // a dequantized constant (QDQ Clip bounds): its real values
                return unsupported(
                    n, "onnx-constant-input",
                    "input " + std::to_string(i) + " (" + std::string(ci->attr) + ") a dequantized tensor",
                    "Janus needs a float or integer constant");
            }
            if (!c)
                return unsupported(n, "onnx-constant-input",
                                   "input " + std::to_string(i) + " (" + std::string(ci->attr) + ") not a constant",
                                   "Janus compiles for known shapes and parameters");
            if (ci->attr == "roi") {  // only tf_crop_and_resize reads it: floats, starts then ends
                if (auto f = floats_of(*c); !f.empty()) attrs["roi"] = std::move(f);
                continue;
            }
            if (c->dtype == DType::f32) {
                const auto f = floats_of(*c);
                if ((ci->attr == "min" || ci->attr == "max" || ci->attr == "value") && f.size() == 1)
                    attrs[std::string(ci->attr)] = f[0];
                else
                    attrs[std::string(ci->attr)] = f;
            } else if (ci->attr == "value") {
                return unsupported(n, "onnx-constant-input", "integer constant_value",
                                   "Janus imports a float32 pad value only");
            } else if (const auto v = ints_of(*c); (ci->attr == "min" || ci->attr == "max") && v.size() == 1) {
                attrs[std::string(ci->attr) + "_int"] = v[0];  // Clip of plain integers: bounds in the input's type
            } else {
                attrs[std::string(ci->attr)] = v;
            }
        }
        // Quantized when every tensor input is a dequantized (or quantized-constant weight) reading and the output
        // is covered.
        JANUS_TRY(const auto out_cover, cover_of(n.outputs[0], Shape{}));
        // One look at every tensor input:
        //   quant          every input has a quantized reading (and the output is covered);
        //   raw_int        some input is an integer tensor read as integers (QOperator graphs: Flatten, MaxPool,
        //                  Reshape between QLinear nodes): only ops that keep the values, and with them the
        //                  quantization, may read it;
        //   all_quantized  every input is a dequantized reading: a value-preserving op (movement, MaxPool, ...)
        //                  whose output no quantization covers runs on the integers, and its output is read as
        //                  dequantized (dequantize commutes with it).
        bool quant = out_cover.has_value(), raw_int = false, all_quantized = !tensors.empty();
        for (std::size_t k = 0; k < tensors.size(); ++k) {
            if (param[k]) {  // no quantization needed; but not a value-preserving op on dequantized readings either
                all_quantized = false;
                continue;
            }
            const auto& t = tensors[k];
            const auto it = reps_.find(t);
            const bool has_quant = it != reps_.end() && g_.value(it->second.v).type.quant.has_value();
            quant = quant && has_quant;
            raw_int = raw_int || (has_quant && !it->second.dequantized);
            all_quantized = all_quantized && it != reps_.end() && it->second.dequantized;
        }
        if (!quant && all_quantized) {
            std::vector<ops::TensorType> types;
            for (const auto& t : tensors) types.push_back(g_.value(reps_[t].v).type);
            auto ty = infer_(op, types, attrs);
            if (ty.ok() && ty->quant) {
                std::vector<ValueId> in;
                for (const auto& t : tensors) in.push_back(reps_[t].v);
                const ValueId y = emit(op, std::move(in), std::move(attrs), *ty, n.outputs[0], n.name);
                reps_[n.outputs[0]] = Rep{y, true};
                return ok_status();
            }
        }
        if (raw_int && !quant) {
            std::vector<ValueId> in;
            for (const auto& t : tensors) {
                if (!reps_.count(t))
                    return unsupported(n, "onnx-quant", "constant '" + t + "' mixed into quantized integer data",
                                       "Janus reads it as a float tensor");
                in.push_back(reps_[t].v);
            }
            JANUS_TRY(const ValueId y,
                      emit_inferred(n, op, std::move(in), std::move(attrs), std::nullopt, n.outputs[0], Target::any));
            if (!g_.value(y).type.quant)
                return unsupported(n, "onnx-quant", "on the integers of a quantized tensor",
                                   "Janus reads quantized tensors only through ops that keep their values (or a "
                                   "DequantizeLinear)");
            reps_[n.outputs[0]] = Rep{y};
            return ok_status();
        }
        std::vector<ValueId> in;
        for (std::size_t k = 0; k < tensors.size(); ++k) {
            const auto& t = tensors[k];
            if (quant && !param[k]) {
                in.push_back(reps_[t].v);
            } else {
                JANUS_TRY(const ValueId v, as_float(n, t));
                in.push_back(v);
            }
        }
        if (!quant) {
            // Float ops, and ops on plain (non-quantized) integers, run on the host: the NPU computes on quantized
            // int8 only.
            bool all_float = true, plain_int = false;
            for (ValueId v : in) {
                const auto& t = g_.value(v).type;
                all_float = all_float && t.dtype == DType::f32;
                plain_int = plain_int || (t.dtype != DType::f32 && !t.quant);
            }
            JANUS_TRY(const ValueId y, emit_inferred(n, op, std::move(in), std::move(attrs), std::nullopt, n.outputs[0],
                                                     all_float || plain_int ? Target::host : Target::any));
            reps_[n.outputs[0]] = Rep{y};
            return ok_status();
        }
        JANUS_TRY(const ValueId y,
                  emit_inferred(n, op, std::move(in), std::move(attrs), out_cover, n.outputs[0], Target::any));
        reps_[n.outputs[0]] = Rep{y};
        return ok_status();
    }

    Status graph_output(const onnx::ValueInfo& v) {
        const auto d = dtype_from_onnx_code(v.elem_type);
        if (!d)
            return make_unsupported(std::string(input_), "graph output '" + v.name + "'", "onnx-graph-io",
                                    "graph output '" + v.name + "' type " + onnx::elem_type_name(v.elem_type),
                                    "Janus supports " + dtype_list());
        onnx::Node origin;
        origin.name = "graph output " + v.name;
        if (!reps_.count(v.name)) JANUS_CHECK(as_float(origin, v.name));  // an initializer or a Constant node's output
        Rep& r = reps_[v.name];
        ValueId out = r.v;
        if (*d == DType::f32 && r.dequantized) {
            JANUS_TRY(out, as_float(origin, v.name));
        } else if (*d == DType::u8 && g_.value(out).type.dtype == DType::i8 && g_.value(out).type.quant) {
            if (g_.value(out).name == v.name) rename(out, fresh(v.name + ".int8"));  // the boundary keeps it
            auto q = *g_.value(out).type.quant;
            q.dtype = DType::u8;
            for (auto& z : q.zero_points) z += 128;
            out = emit("Requantize", {out}, {{"dtype", std::string("uint8")}},
                       ops::TensorType{DType::u8, g_.value(out).type.shape, q}, v.name, "graph output " + v.name);
        }
        if (g_.value(out).type.dtype != *d)
            return make_error(std::string(input_), "graph output '" + v.name + "'", "onnx-graph-io",
                              "declared " + onnx::elem_type_name(v.elem_type) + " but computed " +
                                  std::string(dtype_name(g_.value(out).type.dtype)));
        // the output keeps its ONNX name (the value it aliases is renamed, unless that name is taken); a graph input
        // or a constant (Identity of an input, a Constant node as the output) is copied by a Reshape to its own shape
        if (g_.value(out).name != v.name && g_.value(out).kind != ValueKind::node) {
            const auto sp = g_.value(out).type.shape.span();
            const std::vector<std::int64_t> dims(sp.begin(), sp.end());
            out = emit("Reshape", {out}, {{"shape", dims}}, g_.value(out).type, v.name, origin.name);
        }
        if (g_.value(out).name != v.name && !names_.count(v.name) && g_.value(out).kind == ValueKind::node)
            rename(out, v.name);
        g_.outputs.push_back(out);
        return ok_status();
    }

    const onnx::Model& m_;
    std::string_view input_;
    InferFn infer_;
    Graph g_;
    std::deque<onnx::Tensor> owned_;  // Constant nodes' and expansions' tensors (consts_ points into it: a deque keeps
                                      // its elements in place as it grows)
    std::set<std::string, std::less<>> model_names_;  // every tensor name of the model (fresh_tensor avoids them)
    std::map<std::string, const onnx::Tensor*, std::less<>> consts_;
    std::set<std::string, std::less<>> graph_outputs_;
    std::unordered_set<std::string> names_;  ///< the names of g_'s values (fresh, add_value, rename)
    mutable std::unordered_map<std::string, std::pair<std::size_t, const onnx::Node*>>
        readers_;  ///< per ONNX tensor: how many node inputs read it, and the first reader (only_consumer)
    std::map<std::string, const onnx::Node*, std::less<>> covered_;
    std::map<std::string, Rep, std::less<>> reps_;
};

}  // namespace import_detail

/// Is input `index` of ONNX op `op` one the importer reads as a constant: an operand the registry takes as an
/// attribute (step 4), a quantization parameter (QDQ, QOperator and the integer ops' zero points) or QLinearConv's
/// bias? `janusc conform` binds a graph input found there to the test's value (docs/conformance.md).
inline bool constant_operand(std::string_view op, std::size_t index) {
    if (import_detail::const_input(op, index)) return true;
    if (op == "QuantizeLinear" || op == "DequantizeLinear") return index == 1 || index == 2;
    if (op == "QLinearConv" || op == "QLinearMatMul")
        return index == 1 || index == 2 || (index >= 4 && index <= 7) || (op == "QLinearConv" && index == 8);
    if (op == "ConvInteger" || op == "MatMulInteger") return index == 2 || index == 3;
    return false;
}

/// Is input `index` of ONNX op `op` its weight operand, which the NPU lowering needs as a constant (it lays the
/// weights out at compile time) while the reference engine also runs it as a tensor?
inline bool weight_operand(std::string_view op, std::size_t index) {
    if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "MatMul" || op == "Gemm" ||
        op == "MatMulInteger")
        return index == 1;
    return (op == "QLinearConv" || op == "QLinearMatMul") && index == 3;
}

/// Import a decoded ONNX model (see the header comment), typing its nodes with `infer`. `input` names the model in
/// errors.
inline Result<Graph> import_onnx(const onnx::Model& m, std::string_view input, InferFn infer = &ops::infer_by_name) {
    return import_detail::Importer(m, input, infer).run();
}

}  // namespace janus::graph
