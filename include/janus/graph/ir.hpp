#pragma once
// The graph IR of janusc: values with quantized tensor types, nodes naming ops of the registry, and a text form.
//
// Contract:
//   - A `Value` has one producer at most: a graph input, a constant (its data attached) or one node's output. Its
//     `type` is an ops::TensorType: dtype, logical shape and, for quantized tensors, the QuantParams that the
//     importer matched from the model (seed A11: quantization is attached to values BEFORE any rewrite, so every
//     later rewrite carries it with the value it creates, seed A10).
//   - A `Node` names an op of ops::all_ops by its ONNX name; constant operands the registry takes as attributes
//     (Clip bounds, Reshape shape, Quantize scales, ...) are attributes. `origin` names the ONNX node(s) it came
//     from: the debug map of the package and `janusc verify` report it.
//   - Nodes are kept in a topological order; `verify()` checks it, the single-producer rule, that every name is
//     unique, and that every node's output type is what the op's `infer` computes from its inputs (so a rewrite
//     that forgets a quantization parameter is caught where it happens). The inference is an `InferFn`,
//     ops::infer_by_name by default: a compiler with ops of its own passes one that also types them (every entry
//     that verifies takes it: verify, parse, import_onnx, PassContext; examples/custom_op).
//   - An int8/uint8 value without quantization is a plain integer: a graph input, a constant, or the output of an
//     op on plain integers (ops/op.hpp).
//   - `print()` is the text form (docs/janusc.md "IR text form"): one line per value or node, deterministic.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/ops/registry.hpp>

namespace janus::graph {

using ValueId = std::int32_t;
inline constexpr ValueId no_value = -1;  ///< an omitted optional input

enum class ValueKind : std::uint8_t { input, constant, node };

struct Value {
    std::string name;
    ops::TensorType type;
    ValueKind kind = ValueKind::node;
    std::optional<Tensor> data;  ///< constants only: contiguous, of `type`
};

/// Where a node runs. Planning decides; the importer marks float ops that no quantization covers as host.
enum class Target : std::uint8_t { any, npu, host };

inline std::string_view target_name(Target t) {
    switch (t) {
        case Target::any:
            return "any";
        case Target::npu:
            return "npu";
        case Target::host:
            return "host";
    }
    return "?";
}

struct Node {
    std::string op;
    ops::AttrMap attrs;
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
    std::string origin;  ///< ONNX node name(s), comma-separated
    Target target = Target::any;
};

struct Graph {
    std::string name;
    std::vector<Value> values;
    std::vector<Node> nodes;
    std::vector<ValueId> inputs, outputs;

    const Value& value(ValueId v) const { return values.at(static_cast<std::size_t>(v)); }
    Value& value(ValueId v) { return values.at(static_cast<std::size_t>(v)); }

    ValueId add_value(std::string name, ops::TensorType type, ValueKind kind) {
        values.push_back(Value{std::move(name), std::move(type), kind, std::nullopt});
        return static_cast<ValueId>(values.size() - 1);
    }
    ValueId add_constant(std::string name, Tensor data) {
        const ValueId v = add_value(std::move(name), ops::type_of(data), ValueKind::constant);
        values.back().data = std::move(data);
        return v;
    }

    /// `base`, or `base.1`, `base.2`, ...: the first name no value has.
    std::string fresh_name(const std::string& base) const {
        std::string n = base;
        for (int k = 1; find(n) != no_value; ++k) n = base + "." + std::to_string(k);
        return n;
    }

    /// The value named `n`, or no_value.
    ValueId find(std::string_view n) const {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (values[i].name == n) return static_cast<ValueId>(i);
        return no_value;
    }
    /// Indices of the nodes reading `v`, in node order.
    std::vector<std::size_t> consumers(ValueId v) const {
        std::vector<std::size_t> r;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (ValueId x : nodes[i].inputs)
                if (x == v) {
                    r.push_back(i);
                    break;
                }
        return r;
    }
    bool is_output(ValueId v) const {
        for (ValueId o : outputs)
            if (o == v) return true;
        return false;
    }
};

// ---- text form -----------------------------------------------------------------------------------------------

namespace detail {

/// A float with 9 significant digits (it reads back as the same float): the QuantParams text's own formatting.
inline std::string format_float(float f) { return numeric::detail::format_scale(f); }

/// A name as the text form writes it: %name when it is made of [A-Za-z0-9_./-], else %"..." with \" and \\.
inline std::string quote_name(std::string_view n) {
    bool plain = !n.empty();
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-'))
            plain = false;
    if (plain) return "%" + std::string(n);
    std::string s = "%\"";
    for (char c : n) {
        if (c == '"' || c == '\\') {
            s += '\\';
            s += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
            s += hex;
        } else {
            s += c;
        }
    }
    return s + "\"";
}

inline std::string attr_text(const ops::AttrValue& v) {
    struct Visit {
        std::string operator()(std::int64_t x) const { return std::to_string(x); }
        std::string operator()(float x) const { return format_float(x) + "f"; }
        std::string operator()(const std::string& x) const { return quote_name(x).substr(1); }
        std::string operator()(const std::vector<std::int64_t>& x) const {
            std::string s = "[";
            for (std::size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
            return s + "]";
        }
        std::string operator()(const std::vector<float>& x) const {  // "[]f" keeps an empty float list a float list
            std::string s = "[";
            for (std::size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + format_float(x[i]) + "f";
            return s + (x.empty() ? "]f" : "]");
        }
    };
    const std::string s = std::visit(Visit{}, v);
    // a string attribute always prints quoted (so it cannot be mistaken for a number)
    if (std::holds_alternative<std::string>(v) && s.front() != '"') return "\"" + s + "\"";
    return s;
}

inline std::string type_text(const ops::TensorType& t) {
    std::string s = std::string(dtype_name(t.dtype)) + "[";
    for (int i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
    s += "]";
    if (t.quant) s += " q(" + t.quant->str() + ")";
    return s;
}

inline std::string data_text(const Tensor& t) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string s;
    const auto* p = reinterpret_cast<const std::uint8_t*>(t.storage->data());
    const std::size_t n = static_cast<std::size_t>(t.elements()) * dtype_size(t.dtype);
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        s += hex[p[i] >> 4];
        s += hex[p[i] & 15];
    }
    return s;
}

}  // namespace detail

/// The text form. Constants print their bytes in hex unless `with_data` is false (then `= <N bytes>`).
inline std::string print(const Graph& g, bool with_data = true) {
    std::string s = "graph " + detail::quote_name(g.name).substr(1) + " {\n";
    for (ValueId v : g.inputs)
        s += "  input " + detail::quote_name(g.value(v).name) + ": " + detail::type_text(g.value(v).type) + "\n";
    for (std::size_t i = 0; i < g.values.size(); ++i) {
        const Value& v = g.values[i];
        if (v.kind != ValueKind::constant) continue;
        s += "  const " + detail::quote_name(v.name) + ": " + detail::type_text(v.type) + " = ";
        s += with_data
                 ? "0x" + detail::data_text(*v.data)
                 : "<" + std::to_string(v.data->elements() * static_cast<std::int64_t>(dtype_size(v.type.dtype))) +
                       " bytes>";
        s += "\n";
    }
    for (const Node& n : g.nodes) {
        s += "  ";
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            const Value& o = g.value(n.outputs[i]);
            s += (i ? ", " : "") + detail::quote_name(o.name) + ": " + detail::type_text(o.type);
        }
        s += " = " + n.op + "(";
        for (std::size_t i = 0; i < n.inputs.size(); ++i)
            s += (i ? ", " : "") +
                 (n.inputs[i] == no_value ? std::string("_") : detail::quote_name(g.value(n.inputs[i]).name));
        s += ")";
        if (!n.attrs.empty()) {
            s += " {";
            bool first = true;
            for (const auto& [k, v] : n.attrs) {
                s += (first ? "" : ", ") + k + "=" + detail::attr_text(v);
                first = false;
            }
            s += "}";
        }
        if (n.target != Target::any) s += " @" + std::string(target_name(n.target));
        if (!n.origin.empty()) {  // one line: line breaks in ONNX names become spaces
            std::string o = n.origin;
            for (char& c : o)
                if (c == '\n' || c == '\r') c = ' ';
            s += "  # " + o;
        }
        s += "\n";
    }
    for (ValueId v : g.outputs) s += "  output " + detail::quote_name(g.value(v).name) + "\n";
    return s + "}\n";
}

// ---- verification --------------------------------------------------------------------------------------------

/// Where node k is, for verify's errors (the parser passes the node's line and column).
using NodePosition = std::function<std::string(std::size_t node)>;

/// One node's type inference: ops::infer_by_name's signature (graph/execute.hpp's KernelFn is its kernel twin). A
/// compiler's own function types its ops and hands every other op to ops::infer_by_name; like it, it is called on
/// untrusted types and attributes, and answers an op it does not know with ops::unknown_op (rule known-op), which
/// is how the importer tells a compiler's op from one nobody knows.
using InferFn = Result<ops::TensorType> (*)(std::string_view op, std::span<const ops::TensorType> in,
                                            const ops::AttrMap& attrs);

/// The structural invariants of the header comment, each node's output type checked against `infer`. Errors name
/// `input` (default "graph NAME"), the value or node (`where(k)`, default "node k (Op origin)") and the rule.
inline Status verify(const Graph& g, std::string_view input = {}, const NodePosition& where = {},
                     InferFn infer = &ops::infer_by_name) {
    const std::string in = input.empty() ? "graph " + g.name : std::string(input);
    const auto fail = [&](const std::string& pos, const std::string& rule, const std::string& detail) -> Status {
        return make_error(in, pos, rule, detail);
    };
    std::unordered_set<std::string_view> names;  // hashed: verify runs after every pass (issue 26, linear time)
    names.reserve(g.values.size());
    for (const Value& v : g.values)
        if (!names.insert(v.name).second) return fail("value " + v.name, "ir-unique-name", "two values share a name");
    std::vector<int> defined(g.values.size(), 0);
    for (ValueId v : g.inputs) {
        if (g.value(v).kind != ValueKind::input) return fail("value " + g.value(v).name, "ir-kind", "not an input");
        defined[static_cast<std::size_t>(v)] = 1;
    }
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].kind == ValueKind::constant) {
            if (!g.values[i].data || ops::type_of(*g.values[i].data) != g.values[i].type)
                return fail("value " + g.values[i].name, "ir-constant", "a constant's data must match its type");
            defined[i] = 1;
        }
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& n = g.nodes[k];
        const std::string pos =
            where ? where(k)
                  : "node " + std::to_string(k) + " (" + n.op + (n.origin.empty() ? "" : " " + n.origin) + ")";
        std::vector<ops::TensorType> in;
        for (ValueId x : n.inputs) {
            if (x == no_value) continue;
            if (x < 0 || static_cast<std::size_t>(x) >= g.values.size() || !defined[static_cast<std::size_t>(x)])
                return fail(pos, "ir-topological", "reads a value that is not defined before it");
            in.push_back(g.value(x).type);
        }
        for (ValueId o : n.outputs) {
            if (defined[static_cast<std::size_t>(o)] || g.value(o).kind != ValueKind::node)
                return fail(pos, "ir-single-producer", "value " + g.value(o).name + " already has a producer");
            defined[static_cast<std::size_t>(o)] = 1;
        }
        if (n.outputs.size() != 1) continue;  // every registry op has one output
        auto t = infer(n.op, in, n.attrs);
        if (!t.ok()) return fail(pos, t.error().rule, t.error().input + ": " + t.error().detail);
        const ops::TensorType& have = g.value(n.outputs[0]).type;
        if (have.dtype != t->dtype || have.shape != t->shape || (t->quant.has_value() && have.quant != t->quant))
            return fail(pos, "ir-output-type",
                        "output " + g.value(n.outputs[0]).name + " is " + detail::type_text(have) + " but " + n.op +
                            " computes " + detail::type_text(*t));
        // int8/uint8 without quantization is a plain integer (ops/op.hpp PlainInts): only an op on plain integers
        // makes one; any other such output is a rewrite that lost its quantization
        bool plain_in = false;
        for (const auto& x : in) plain_in = plain_in || (is_quantized_storage(x.dtype) && !x.quant);
        if (is_quantized_storage(have.dtype) && !have.quant && !plain_in)
            return fail(pos, "ir-output-type",
                        "output " + g.value(n.outputs[0]).name + " is " + std::string(dtype_name(have.dtype)) +
                            " without quantization");
    }
    for (ValueId v : g.outputs)
        if (!defined[static_cast<std::size_t>(v)])
            return fail("output " + g.value(v).name, "ir-output-defined", "no node produces the graph output");
    return ok_status();
}

}  // namespace janus::graph
