#pragma once
// Graph passes: each a named function Graph -> Graph that keeps the graph verified and explains itself in a log.
//
// Contract: `run_passes(g, names, log, ctx, dump)` runs the named passes in order; after each one the graph is
// verified (graph/ir.hpp verify), so a pass that breaks an invariant (a lost quantization, a dangling value) fails at
// once with the pass named. Every decision a pass takes or refuses is one line of `log`: "pass: node ...: reason"
// (seed B11: a refused fusion says why). `dump(pass, g)` is called after each pass (janusc --dump-ir=after:PASS).
// `ctx.kernel` is the reference kernel fold-constants evaluates nodes with (ops::call_by_name, as for the engines).
//
// Passes (docs/janusc.md "Passes"):
//   fold-constants    a node whose inputs are all constants is evaluated once with the reference kernel, with the
//                     output type the graph gives it (so its quantization is the graph's, seed A10), and its output
//                     becomes a constant: the reference engine computes the same bytes before and after. Kept, with
//                     the reason, when its output is a graph output or larger than ctx.fold_limit_bytes.
//   canonicalize      x - 0, x + 0, x * 1 removed; 0 - x -> Neg; constants second in Add and Mul: each rewrite only
//                     when the kernels agree on all 256 codes (seed B7; see canonicalize below).
//   fuse-activation   a quantized Relu or Clip right after a Conv / ConvTranspose / MatMul / Gemm is removed when
//                     it is exactly the identity on its tensor's quantization: evaluated on all 256 int8 codes with
//                     the op's own kernel (seed B10: the clamp must be exactly representable in the output
//                     quantization; a rounding boundary cannot slip through). Refused, with the reason, when the
//                     producer has other consumers, the activation's input and output quantizations differ, or the
//                     clamp changes a code.
//   remove-identity   a node whose output has exactly its input's type, quantization included, and whose op then
//                     copies values (Requantize, Reshape, Flatten, Squeeze, Unsqueeze, Expand, an identity
//                     Transpose, a reduction over extent-1 axes) is removed; with different quantizations it stays,
//                     because it is a requantization (seed A4).
//   dce               nodes whose outputs nobody reads and constants nobody reads are removed.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/ir.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/quantize.hpp>
#include <janus/ops/unary.hpp>

namespace janus::graph {

using PassLog = std::vector<std::string>;

/// What passes may need beyond the graph.
struct PassContext {
    KernelFn kernel = nullptr;                 ///< fold-constants: the reference kernel (ops::call_by_name)
    std::int64_t fold_limit_bytes = 16 << 20;  ///< fold-constants keeps nodes whose result would be larger
};
using PassFn = Status (*)(Graph&, PassLog&, const PassContext&);

namespace pass_detail {

/// Replace every read of `from` by `to` (graph outputs included; an output keeps its name by renaming `to`).
inline void replace_uses(Graph& g, ValueId from, ValueId to) {
    for (Node& n : g.nodes)
        for (ValueId& x : n.inputs)
            if (x == from) x = to;
    for (ValueId& o : g.outputs)
        if (o == from) {
            o = to;
            std::swap(g.value(to).name, g.value(from).name);  // the graph output keeps its ONNX name
        }
}

/// Remove nodes marked in `dead` (indices), keeping order.
inline void erase_nodes(Graph& g, const std::vector<bool>& dead) {
    std::vector<Node> kept;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
}

/// Compact the value table: drop values no node reads or writes and no graph input/output names. Ids are remapped.
inline void compact_values(Graph& g) {
    std::vector<bool> used(g.values.size(), false);
    for (const Node& n : g.nodes) {
        for (ValueId x : n.inputs)
            if (x != no_value) used[static_cast<std::size_t>(x)] = true;
        for (ValueId x : n.outputs) used[static_cast<std::size_t>(x)] = true;
    }
    for (ValueId x : g.inputs) used[static_cast<std::size_t>(x)] = true;
    for (ValueId x : g.outputs) used[static_cast<std::size_t>(x)] = true;
    std::vector<ValueId> remap(g.values.size(), no_value);
    std::vector<Value> kept;
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (used[i]) {
            remap[i] = static_cast<ValueId>(kept.size());
            kept.push_back(std::move(g.values[i]));
        }
    g.values = std::move(kept);
    const auto fix = [&](ValueId& x) {
        if (x != no_value) x = remap[static_cast<std::size_t>(x)];
    };
    for (Node& n : g.nodes) {
        for (ValueId& x : n.inputs) fix(x);
        for (ValueId& x : n.outputs) fix(x);
    }
    for (ValueId& x : g.inputs) fix(x);
    for (ValueId& x : g.outputs) fix(x);
}

/// The end of a rewriting pass: drop the nodes marked dead, then the values nobody references.
inline Status remove_dead(Graph& g, const std::vector<bool>& dead) {
    erase_nodes(g, dead);
    compact_values(g);
    return ok_status();
}

inline std::string describe(const Graph& g, const Node& n) {
    return n.op + " -> " + g.value(n.outputs.at(0)).name + (n.origin.empty() ? "" : " (" + n.origin + ")");
}

/// Whether the quantized unary `act` maps every int8 code of its input's quantization to itself.
inline Result<bool> is_identity_on_codes(const Graph& g, const Node& act) {
    const ops::TensorType& in = g.value(act.inputs.at(0)).type;
    if (in.dtype != DType::i8 || !in.quant || !in.quant->per_tensor()) return false;
    std::vector<std::int8_t> codes(256);
    for (int c = 0; c < 256; ++c) codes[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 128);
    const Tensor x = Tensor::from<std::int8_t>(Shape{256}, codes, in.quant);
    ops::TensorType out{DType::i8, Shape{256}, in.quant};
    Result<Tensor> y = act.op == "Relu" ? ops::call_with<ops::Relu>(std::span<const Tensor>(&x, 1), act.attrs, out)
                                        : ops::call_with<ops::Clip>(std::span<const Tensor>(&x, 1), act.attrs, out);
    if (!y.ok()) return y.error();
    return y->to_vector<std::int8_t>() == codes;
}

/// 256 int8 codes, -128..127, as a [256] tensor of quantization `q`.
inline Tensor all_codes(const numeric::QuantParams& q) {
    std::vector<std::int8_t> codes(256);
    for (int c = 0; c < 256; ++c) codes[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 128);
    return Tensor::from<std::int8_t>(Shape{256}, codes, q);
}

/// The int8 code every element of a constant holds, if it holds one code everywhere (per-tensor int8 only).
inline std::optional<std::int8_t> uniform_code(const Value& v) {
    if (v.kind != ValueKind::constant || v.type.dtype != DType::i8 || !v.type.quant || !v.type.quant->per_tensor())
        return std::nullopt;
    const auto codes = v.data->to_vector<std::int8_t>();
    if (codes.empty() || std::any_of(codes.begin(), codes.end(), [&](std::int8_t c) { return c != codes[0]; }))
        return std::nullopt;
    return codes[0];
}

}  // namespace pass_detail

/// fold-constants: see the file comment. A node whose kernel fails on its constants fails the pass (the run would
/// fail the same way), with the node named.
inline Status fold_constants(Graph& g, PassLog& log, const PassContext& ctx) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& n = g.nodes[k];
        std::vector<Tensor> in;
        bool constant = n.outputs.size() == 1;
        for (ValueId x : n.inputs)
            if (x != no_value) {
                constant = constant && g.value(x).kind == ValueKind::constant;
                if (constant) in.push_back(*g.value(x).data);
            }
        if (!constant || in.empty()) continue;
        const ValueId y = n.outputs[0];
        Value& out = g.value(y);
        const std::string what = "fold-constants: " + pass_detail::describe(g, n);
        if (g.is_output(y)) {
            log.push_back(what + ": kept, it computes a graph output");
            continue;
        }
        const std::int64_t bytes =
            element_count(out.type.shape) * static_cast<std::int64_t>(dtype_size(out.type.dtype));
        if (bytes > ctx.fold_limit_bytes) {
            log.push_back(what + ": kept, its result (" + std::to_string(bytes) + " bytes) is larger than the " +
                          std::to_string(ctx.fold_limit_bytes) + "-byte fold limit");
            continue;
        }
        if (!ctx.kernel)
            return make_error("pass fold-constants", "", "pass-kernel",
                              "no reference kernel was given to evaluate " + pass_detail::describe(g, n));
        Result<Tensor> r = ctx.kernel(n.op, in, n.attrs, out.type, ops::OpContext{});
        if (!r.ok()) {
            const Error& e = r.error();
            return make_error("node " + pass_detail::describe(g, n), "", e.rule,
                              "its inputs are constants and its kernel fails on them: " + e.input +
                                  (e.position.empty() ? "" : ":" + e.position) + ": " + e.detail);
        }
        Tensor t = r->clone();
        t.quant = out.type.quant;
        out.kind = ValueKind::constant;
        out.data = std::move(t);
        log.push_back(what + ": folded into a constant " + detail::type_text(out.type));
        dead[k] = true;
    }
    return pass_detail::remove_dead(g, dead);
}

/// canonicalize (seed B7): a quantized Add, Sub or Mul of an activation x and a constant c holding one code
/// everywhere. Each rewrite is taken only when the op's own kernel and the replacement's kernel give the same code
/// for all 256 codes of x (the constant is fixed, so that is every case):
///   x op c that maps every code to itself, with equal quantizations  -> removed (x - 0, x + 0, x * 1);
///   the same map onto another quantization                            -> Requantize(x);
///   c - x that equals Neg(x) into the output's quantization           -> Neg(x) (0 - x; never x, seed B7);
///   c + x, c * x                                                      -> x + c, x * c when swapping the operands
///                                                                        gives the same codes (commutation is
///                                                                        checked, not assumed); c - x never swaps.
/// Otherwise the node stays and the log says which check failed.
inline Status canonicalize(Graph& g, PassLog& log) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        Node& n = g.nodes[k];
        if ((n.op != "Add" && n.op != "Sub" && n.op != "Mul") || n.inputs.size() != 2 || n.outputs.size() != 1)
            continue;
        std::size_t ci = 0;
        std::optional<std::int8_t> c;
        for (std::size_t i = 0; i < 2 && !c; ++i)
            if ((c = pass_detail::uniform_code(g.value(n.inputs[i])))) ci = i;
        if (!c) continue;
        const ValueId x = n.inputs[1 - ci], y = n.outputs[0];
        const auto tx = g.value(x).type;
        const auto ty = g.value(y).type;
        if (g.value(x).kind == ValueKind::constant || tx.dtype != DType::i8 || !tx.quant || !tx.quant->per_tensor() ||
            ty.dtype != DType::i8 || !ty.quant || !ty.quant->per_tensor() || !(tx.shape == ty.shape))
            continue;
        const std::string what = "canonicalize: " + pass_detail::describe(g, n);
        const Tensor codes = pass_detail::all_codes(*tx.quant);
        const Tensor cst =
            Tensor::from<std::int8_t>(Shape{1}, std::vector<std::int8_t>{*c}, g.value(n.inputs[ci]).type.quant);
        const ops::TensorType out{DType::i8, Shape{256}, ty.quant};
        const auto eval = [&](std::string_view op, bool const_first) -> Result<std::vector<std::int8_t>> {
            const std::vector<Tensor> in =
                const_first ? std::vector<Tensor>{cst, codes} : std::vector<Tensor>{codes, cst};
            Result<Tensor> r = op == "Add"   ? ops::call_with<ops::Add>(in, n.attrs, out)
                               : op == "Sub" ? ops::call_with<ops::Sub>(in, n.attrs, out)
                                             : ops::call_with<ops::Mul>(in, n.attrs, out);
            if (!r.ok()) return r.error();
            return r->to_vector<std::int8_t>();
        };
        JANUS_TRY(const auto f, eval(n.op, ci == 0));
        const auto ident = codes.to_vector<std::int8_t>();
        if (f == ident && tx.quant == ty.quant) {
            if (g.is_output(y) && (g.is_output(x) || g.value(x).kind != ValueKind::node)) {
                log.push_back(what + ": kept, the identity separates a graph output from a graph input or output");
                continue;
            }
            log.push_back(what + ": removed, it maps all 256 codes of " + tx.quant->str() + " to themselves");
            pass_detail::replace_uses(g, y, x);
            dead[k] = true;
            continue;
        }
        JANUS_TRY(const Tensor rq, ops::call_with<ops::Requantize>(std::span<const Tensor>(&codes, 1),
                                                                   ops::AttrMap{{"dtype", std::string("int8")}}, out));
        const auto rqv = rq.to_vector<std::int8_t>();
        std::size_t rq_differ = 0;
        for (std::size_t i = 0; i < 256; ++i) rq_differ += f[i] != rqv[i];
        if (rq_differ == 0) {
            log.push_back(what + ": rewritten as Requantize, equal on all 256 codes");
            n = Node{"Requantize", {{"dtype", std::string("int8")}}, {x}, {y}, n.origin, n.target};
            continue;
        }
        if (n.op == "Sub" && ci == 0) {
            JANUS_TRY(const Tensor neg, ops::call_with<ops::Neg>(std::span<const Tensor>(&codes, 1), {}, out));
            const auto nv = neg.to_vector<std::int8_t>();
            std::size_t differ = 0;
            for (std::size_t i = 0; i < 256; ++i) differ += f[i] != nv[i];
            if (differ == 0) {
                log.push_back(what + ": rewritten as Neg, equal on all 256 codes");
                n = Node{"Neg", {}, {x}, {y}, n.origin, n.target};
            } else {
                log.push_back(what + ": kept, c - x differs from Neg(x) in " + std::to_string(differ) +
                              " of 256 codes (and never equals x)");
            }
            continue;
        }
        if (ci == 0) {  // Add or Mul with the constant first
            JANUS_TRY(const auto swapped, eval(n.op, false));
            if (swapped == f) {
                log.push_back(what + ": operands swapped (the constant second), equal on all 256 codes");
                std::swap(n.inputs[0], n.inputs[1]);
            } else {
                log.push_back(what + ": kept, swapping the operands changes some codes");
            }
            continue;
        }
        log.push_back(what + ": kept, it differs from Requantize(x) in " + std::to_string(rq_differ) + " of 256 codes");
    }
    return pass_detail::remove_dead(g, dead);
}

inline Status fuse_activation(Graph& g, PassLog& log) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& act = g.nodes[k];
        if (act.op != "Relu" && act.op != "Clip") continue;
        const ValueId x = act.inputs.at(0);
        const ValueId y = act.outputs.at(0);
        const Value& xv = g.value(x);
        if (!xv.type.quant) continue;  // a float activation: nothing to fuse into an integer epilogue
        const Node* producer = nullptr;
        for (const Node& n : g.nodes)
            if (!n.outputs.empty() && n.outputs[0] == x) producer = &n;
        if (!producer || (producer->op != "Conv" && producer->op != "ConvTranspose" && producer->op != "MatMul" &&
                          producer->op != "Gemm"))
            continue;
        const std::string what = "fuse-activation: " + pass_detail::describe(g, act) + " after " + producer->op;
        if (g.consumers(x).size() != 1 || g.is_output(x)) {
            log.push_back(what + ": kept, " + xv.name + " has other readers");
            continue;
        }
        if (g.value(y).type.quant != xv.type.quant) {
            log.push_back(what + ": kept, its input and output quantizations differ (a requantization, not a clamp)");
            continue;
        }
        JANUS_TRY(const bool identity, pass_detail::is_identity_on_codes(g, act));
        if (!identity) {
            log.push_back(what + ": kept, the clamp changes some codes of " + xv.type.quant->str() +
                          " (not exactly representable as the output range)");
            continue;
        }
        log.push_back(what + ": removed, the clamp is the identity on " + xv.type.quant->str());
        pass_detail::replace_uses(g, y, x);
        dead[k] = true;
    }
    return pass_detail::remove_dead(g, dead);
}

inline Status remove_identity(Graph& g, PassLog& log) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& n = g.nodes[k];
        if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] == no_value) continue;
        const std::string& op = n.op;
        const bool copies = op == "Requantize" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
                            op == "Unsqueeze" || op == "Expand" || op == "Transpose" || op == "ReduceSum" ||
                            op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin";
        if (!copies) continue;
        const ValueId x = n.inputs[0], y = n.outputs[0];
        const auto& tx = g.value(x).type;
        const auto& ty = g.value(y).type;
        if (tx.dtype != ty.dtype || !(tx.shape == ty.shape)) continue;
        if (op == "Transpose") {
            const auto it = n.attrs.find("perm");
            bool ident = it != n.attrs.end();
            if (ident) {
                const auto& p = std::get<std::vector<std::int64_t>>(it->second);
                for (std::size_t i = 0; i < p.size(); ++i) ident = ident && p[i] == static_cast<std::int64_t>(i);
            }
            if (!ident) continue;
        }
        const std::string what = "remove-identity: " + pass_detail::describe(g, n);
        if (tx.quant != ty.quant) {
            log.push_back(what + ": kept, same shape but the quantization changes (" +
                          (tx.quant ? tx.quant->str() : "none") + " -> " + (ty.quant ? ty.quant->str() : "none") + ")");
            continue;
        }
        if (g.is_output(y) && (g.is_output(x) || g.value(x).kind != ValueKind::node)) {
            log.push_back(what + ": kept, it separates a graph output from a graph input, constant or output");
            continue;
        }
        log.push_back(what + ": removed, its output is its input");
        pass_detail::replace_uses(g, y, x);
        dead[k] = true;
    }
    return pass_detail::remove_dead(g, dead);
}

inline Status dce(Graph& g, PassLog& log) {
    for (bool changed = true; changed;) {
        changed = false;
        std::vector<bool> dead(g.nodes.size(), false);
        for (std::size_t k = g.nodes.size(); k-- > 0;) {
            bool read = false;
            for (ValueId o : g.nodes[k].outputs) read = read || g.is_output(o) || !g.consumers(o).empty();
            if (read) continue;
            log.push_back("dce: " + pass_detail::describe(g, g.nodes[k]) + ": removed, nothing reads it");
            dead[k] = true;
            changed = true;
            g.nodes[k].inputs.clear();  // so its inputs lose this reader before the next sweep
        }
        pass_detail::erase_nodes(g, dead);
    }
    pass_detail::compact_values(g);  // unread constants go with the values nobody references
    return ok_status();
}

struct PassInfo {
    std::string_view name;
    PassFn run;
};
namespace pass_detail {
/// A pass that needs nothing but the graph, as a PassFn.
template <Status (*F)(Graph&, PassLog&)>
Status graph_only(Graph& g, PassLog& log, const PassContext&) {
    return F(g, log);
}
}  // namespace pass_detail

inline constexpr PassInfo all_passes[] = {
    {"fold-constants", &fold_constants},
    {"canonicalize", &pass_detail::graph_only<&canonicalize>},
    {"fuse-activation", &pass_detail::graph_only<&fuse_activation>},
    {"remove-identity", &pass_detail::graph_only<&remove_identity>},
    {"dce", &pass_detail::graph_only<&dce>},
};
/// The pipeline janusc runs after import, in order.
inline constexpr std::string_view default_pipeline[] = {"fold-constants", "canonicalize", "fuse-activation",
                                                        "remove-identity", "dce"};

/// Run `names` in order, verifying after each; `dump(pass, g)` sees the graph after each pass.
inline Status run_passes(Graph& g, std::span<const std::string_view> names, PassLog& log, const PassContext& ctx,
                         const std::function<void(std::string_view, const Graph&)>& dump = {}) {
    for (std::string_view name : names) {
        const PassInfo* p = nullptr;
        for (const PassInfo& q : all_passes)
            if (q.name == name) p = &q;
        if (!p) {
            std::string known;
            for (const PassInfo& q : all_passes) known += (known.empty() ? "" : ", ") + std::string(q.name);
            return make_error("pass " + std::string(name), "", "known-pass", "no such pass; the passes are " + known);
        }
        JANUS_CHECK(p->run(g, log, ctx));
        const Status v = verify(g);
        if (!v.ok())
            return make_error("pass " + std::string(name), "", v.error().rule,
                              "the graph is invalid after the pass: " + v.error().message());
        if (dump) dump(name, g);
    }
    return ok_status();
}

}  // namespace janus::graph
