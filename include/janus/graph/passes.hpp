#pragma once
// Graph passes: each a named function Graph -> Graph that keeps the graph verified and explains itself in a log.
//
// Contract: `run_passes(g, names, log, ctx, dump)` runs the named passes in order; after each one the graph is
// verified (graph/ir.hpp verify), so a pass that breaks an invariant (a lost quantization, a dangling value) fails at
// once with the pass named. Every decision a pass takes or refuses is one line of `log`: "pass: node ...: reason"
// (seed B11: a refused fusion says why). `dump(pass, g)` is called after each pass (janusc --dump-ir=after:PASS).
// `ctx.kernel` is the reference kernel that fold-constants and batch-norm-to-conv evaluate nodes with
// (ops::call_by_name, as for the engines); `ctx.infer` types the nodes for that verification (ops::infer_by_name
// unless the compiler has ops of its own, graph/ir.hpp InferFn).
//
// Passes (docs/janusc.md "Passes"):
//   fold-constants    a node whose inputs are all constants is evaluated once with the reference kernel, with the
//                     output type the graph gives it (so its quantization is the graph's, seed A10), and its output
//                     becomes a constant: the reference engine computes the same bytes before and after. Kept, with
//                     the reason, when its output is a graph output or larger than ctx.fold_limit_bytes.
//   canonicalize      x - 0, x + 0, x * 1 removed; 0 - x -> Neg; constants second in Add and Mul: each rewrite only
//                     when the kernels agree on all 256 codes (seed B7; see canonicalize below).
//   batch-norm-to-conv a quantized BatchNormalization (int8, per-tensor, constant float parameters, an image
//                     [N, C, H, W]) becomes a depthwise 1x1 Conv, an op the NPU runs (seeds A6, A8: the fixed
//                     statistics become per-channel weight scales and an int32 bias, no dedicated affine op). The
//                     two kernels round differently (the BatchNorm twice, through 8 fractional bits; the Conv once),
//                     so each channel's bias and slope are searched, on all 256 input codes, for the fewest codes
//                     unequal to the BatchNorm kernel's. Taken when no code differs by more than 1 LSB; the log
//                     gives the number of unequal codes and how far each form is from dequantize -> BatchNorm in
//                     double -> quantize (seed A6: the numeric work is measured, not assumed). This is the one pass
//                     that may change codes. Kept when the Conv kernel refuses the Conv (a multiplier beyond 2^30).
//                     The Conv before it keeps its output quantization and rounding (seed B10: folding into the
//                     preceding Conv would remove that boundary and is not done).
//   sink-transpose    Transpose -> quantized Reduce* becomes Reduce* over the permuted axes -> the Transpose of the
//                     axes that are left: with keepdims=0 that permutation is rebuilt over the kept axes, never
//                     patched from the old inverse (seed A2), and disappears when it is the identity (NHWC -> NCHW
//                     before a spatial mean). Kept for float reductions (another summation order), a Transpose
//                     with other readers, and the identity reduction. First, a Transpose whose one reader is a
//                     unary elementwise op moves below it (the op reads x, the Transpose its result), repeatedly,
//                     when that chain of unary ops ends at a quantized reduction.
//   fuse-activation   a quantized Relu or Clip right after a Conv / ConvTranspose / MatMul / Gemm is removed when
//                     it is exactly the identity on its tensor's quantization: evaluated on all 256 int8 codes with
//                     the op's own kernel (seed B10: the clamp must be exactly representable in the output
//                     quantization; a rounding boundary cannot slip through). Refused, with the reason, when the
//                     producer has other consumers, the activation's input and output quantizations differ, or the
//                     clamp changes a code (then the lowering fuses it into the producer's requantization when it is
//                     a clamp of the codes: graph/lower.hpp).
//   remove-identity   a node whose output has exactly its input's type, quantization included, and whose op then
//                     copies values (Requantize, Reshape, Flatten, Squeeze, Unsqueeze, Expand, an identity
//                     Transpose, a reduction over extent-1 axes) is removed; with different quantizations it stays,
//                     because it is a requantization (seed A4).
//   dce               nodes whose outputs nobody reads and constants nobody reads are removed.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/ir.hpp>
#include <janus/layout/permutation.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/norm.hpp>
#include <janus/ops/quantize.hpp>
#include <janus/ops/reduction.hpp>
#include <janus/ops/unary.hpp>

namespace janus::graph {

using PassLog = std::vector<std::string>;

/// What passes may need beyond the graph.
struct PassContext {
    KernelFn kernel = nullptr;                 ///< the reference kernel (ops::call_by_name)
    std::int64_t fold_limit_bytes = 16 << 20;  ///< fold-constants keeps nodes whose result would be larger
    /// The rounding the kernels a pass runs use (folded constants, batch-norm-to-conv's probes): the engines' own.
    numeric::Rounding rounding = numeric::default_rounding_mode;
    InferFn infer = &ops::infer_by_name;  ///< the type inference the graph is verified with after each pass
    ops::OpContext op_context() const { return ops::OpContext{true, rounding}; }
};
using PassFn = Status (*)(Graph&, PassLog&, const PassContext&);

namespace pass_detail {

/// Every value's reading nodes (node indices, one entry per input that reads it), built once by a pass and kept up
/// to date by replace_uses: a rewrite then touches only the nodes that read the value it replaces. A scan of every
/// node per rewrite made remove-identity on a chain of N identity Reshapes O(N^2) (issue 26: 20,000 of them took
/// 2.9 s in the passes). An entry may go stale when a rewrite drops an input (it is checked before use), never
/// missing: passes that add inputs to existing nodes must not use it.
struct Readers {
    std::vector<std::vector<std::size_t>> of;
    explicit Readers(const Graph& g) : of(g.values.size()) {
        for (std::size_t i = 0; i < g.nodes.size(); ++i)
            for (ValueId x : g.nodes[i].inputs)
                if (x != no_value) of[static_cast<std::size_t>(x)].push_back(i);
    }
};

/// Replace every read of `from` by `to` (graph outputs included; an output keeps its name by renaming `to`), visiting
/// only the readers `r` lists, which it updates.
inline void replace_uses(Graph& g, ValueId from, ValueId to, Readers& r) {
    const auto f = static_cast<std::size_t>(from), t = static_cast<std::size_t>(to);
    if (std::max(f, t) >= r.of.size()) r.of.resize(std::max(f, t) + 1);
    std::vector<std::size_t> moved = std::move(r.of[f]);
    r.of[f].clear();
    for (std::size_t i : moved)
        for (ValueId& x : g.nodes[i].inputs)
            if (x == from) x = to;
    r.of[t].insert(r.of[t].end(), moved.begin(), moved.end());
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
        Result<Tensor> r = ctx.kernel(n.op, in, n.attrs, out.type, ctx.op_context());
        if (!r.ok()) {
            const Error& e = r.error();
            if (e.unsupported()) return e.within("node " + pass_detail::describe(g, n), "");
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
    pass_detail::Readers readers(g);
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
            pass_detail::replace_uses(g, y, x, readers);
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

namespace pass_detail {

/// Why a BatchNormalization node cannot be a depthwise Conv at all, or "" when it may be tried.
inline std::string batch_norm_conv_shape(const Graph& g, const Node& n) {
    const auto& tx = g.value(n.inputs.at(0)).type;
    const auto& ty = g.value(n.outputs.at(0)).type;
    if (tx.dtype != DType::i8 || ty.dtype != DType::i8 || !tx.quant || !ty.quant || !tx.quant->per_tensor() ||
        !ty.quant->per_tensor())
        return "its input and output are not per-tensor int8";
    if (tx.shape.size() != 4) return "its input is not an image [N, C, H, W]";
    for (std::size_t k = 1; k < 5; ++k)
        if (g.value(n.inputs.at(k)).kind != ValueKind::constant || g.value(n.inputs[k]).type.dtype != DType::f32)
            return "its parameter " + g.value(n.inputs[k]).name + " is not a float32 constant";
    return "";
}

/// One channel of the depthwise 1x1 Conv that stands for a BatchNorm: weight +-127 with scale `sw`, an int32 bias
/// with scale s_x sw, and how many of the 256 codes differ from the BatchNorm kernel's (bn_far or more: some code
/// differs by more than 1 LSB).
struct BnConvChannel {
    std::int8_t w = 0;
    float sw = 0;
    std::int32_t bias = 0;
    int differ = 0;
};
inline constexpr int bn_far = 513;

/// The int8 probe holding all 256 codes in each of `channels` channels: [1, channels, 16, 16].
inline Tensor bn_probe(std::int64_t channels, const numeric::QuantParams& q) {
    std::vector<std::int8_t> codes(static_cast<std::size_t>(channels) * 256);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::int8_t>(static_cast<int>(i % 256) - 128);
    return Tensor::from<std::int8_t>(Shape{1, channels, 16, 16}, codes, q);
}

/// The depthwise 1x1 Conv of `ch`: its weight and bias constants and attributes.
struct BnConv {
    Tensor weight, bias;
    ops::AttrMap attrs;
};
inline Result<BnConv> bn_conv(std::span<const BnConvChannel> ch, const numeric::QuantParams& qx,
                              const std::string& what) {
    const auto C = static_cast<std::int64_t>(ch.size());
    std::vector<float> sw, sb;
    std::vector<std::int8_t> w;
    std::vector<std::int32_t> b;
    for (const BnConvChannel& c : ch) {
        sw.push_back(c.sw);
        sb.push_back(static_cast<float>(static_cast<double>(qx.scale()) * static_cast<double>(c.sw)));
        w.push_back(c.w);
        b.push_back(c.bias);
    }
    JANUS_TRY(auto wq, numeric::make_quant_per_axis(DType::i8, sw, {}, 0, Shape{C, 1, 1, 1}, what + " weight"));
    JANUS_TRY(auto bq, numeric::make_quant_per_axis(DType::i32, sb, {}, 0, Shape{C}, what + " bias"));
    return BnConv{Tensor::from<std::int8_t>(Shape{C, 1, 1, 1}, w, wq), Tensor::from<std::int32_t>(Shape{C}, b, bq),
                  ops::AttrMap{{"group", C}, {"kernel_shape", std::vector<std::int64_t>{1, 1}}}};
}

/// The codes the depthwise Conv `conv` gives on bn_probe, [channels * 256].
inline Result<std::vector<std::int8_t>> bn_conv_codes(const BnConv& conv, const numeric::QuantParams& qx,
                                                      const numeric::QuantParams& qy, const PassContext& ctx) {
    const std::int64_t C = conv.weight.shape()[0];
    const std::vector<Tensor> in{bn_probe(C, qx), conv.weight, conv.bias};
    JANUS_TRY(const Tensor y,
              ctx.kernel("Conv", in, conv.attrs, ops::TensorType{DType::i8, Shape{1, C, 16, 16}, qy}, ctx.op_context()));
    return y.to_vector<std::int8_t>();
}

/// Improve `best` for the channels `idx`: weight scale |a_c| factor / 127 and bias round(b_c / (s_x sw)) + d for
/// d = 0, 1, -1, ..., +-range, keeping per channel the candidate with the fewest codes unequal to `want`.
inline Status bn_search(const ops::BatchNormAffine& f, std::span<const std::int8_t> want, std::vector<std::size_t> idx,
                        double factor, int range, const numeric::QuantParams& qx, const numeric::QuantParams& qy,
                        const PassContext& ctx, std::vector<BnConvChannel>& best, const std::string& what) {
    std::vector<BnConvChannel> cand;
    std::vector<double> b0;
    for (std::size_t c : idx) {
        BnConvChannel x;
        x.w = static_cast<std::int8_t>(f.a[c] < 0 ? -127 : 127);
        x.sw = static_cast<float>(std::fabs(f.a[c]) * factor / 127.0);
        cand.push_back(x);
        b0.push_back(std::nearbyint(f.b[c] / (static_cast<double>(qx.scale()) * static_cast<double>(x.sw))));
    }
    for (int step = 0; step <= 2 * range; ++step) {
        const int d = step % 2 ? (step + 1) / 2 : -(step / 2);  // 0, 1, -1, 2, -2, ...
        bool open = false;
        for (std::size_t j = 0; j < idx.size(); ++j) {
            const double b = b0[j] + d;
            cand[j].bias = std::fabs(b) < 2147483647.0 ? static_cast<std::int32_t>(b) : 0;
            open = open || best[idx[j]].differ != 0;
        }
        if (!open) break;
        JANUS_TRY(const BnConv trial, bn_conv(cand, qx, what));
        JANUS_TRY(const auto got, bn_conv_codes(trial, qx, qy, ctx));
        for (std::size_t j = 0; j < idx.size(); ++j) {
            const std::size_t c = idx[j];
            int differ = std::fabs(b0[j] + d) < 2147483647.0 ? 0 : bn_far;
            for (std::size_t i = 0; i < 256; ++i) {
                const int e = std::abs(got[j * 256 + i] - want[c * 256 + i]);
                differ += e == 0 ? 0 : e == 1 ? 1 : bn_far;
            }
            if (differ < best[c].differ) best[c] = BnConvChannel{cand[j].w, cand[j].sw, cand[j].bias, differ};
        }
    }
    return ok_status();
}

}  // namespace pass_detail

/// batch-norm-to-conv: see the file comment. Per channel, the Conv has weight sign(a_c) 127 with scale about
/// |a_c| / 127 (a_c = scale / sqrt(var + eps)) and bias about b_c / (s_x s_w): first the bias offsets up to +-128
/// at that scale, then, for channels still unequal, scales 1 + j 2^-14 (|j| <= 16) times it with offsets up to +-32.
/// The slope matters as much as the bias: near a tie, which side a code falls on depends on both.
inline Status batch_norm_to_conv(Graph& g, PassLog& log, const PassContext& ctx) {
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        Node& n = g.nodes[k];
        if (n.op != "BatchNormalization" || n.inputs.size() != 5 || n.outputs.size() != 1) continue;
        const std::string what = "batch-norm-to-conv: " + pass_detail::describe(g, n);
        if (const std::string why = pass_detail::batch_norm_conv_shape(g, n); !why.empty()) {
            log.push_back(what + ": kept, " + why);
            continue;
        }
        if (!ctx.kernel)
            return make_error("pass batch-norm-to-conv", "", "pass-kernel",
                              "no reference kernel was given to evaluate " + pass_detail::describe(g, n));
        const ValueId x = n.inputs[0], y = n.outputs[0];
        const numeric::QuantParams qx = *g.value(x).type.quant, qy = *g.value(y).type.quant;
        const std::int64_t C = g.value(x).type.shape[1];
        const auto Cs = static_cast<std::size_t>(C);
        const std::string node = "node " + pass_detail::describe(g, n);
        ops::BatchNormAttrs attrs;
        JANUS_CHECK(ops::parse_attrs(ops::batch_norm_schema, n.attrs, attrs, node));
        std::vector<std::vector<float>> p;
        for (std::size_t i = 1; i < 5; ++i) p.push_back(g.value(n.inputs[i]).data->to_vector<float>());
        JANUS_TRY(const ops::BatchNormAffine f,
                  ops::fold_batch_norm_affine(p[0], p[1], p[2], p[3], attrs.epsilon, node));
        std::string refused;
        for (std::size_t c = 0; c < Cs && refused.empty(); ++c) {
            const auto sw = static_cast<float>(std::fabs(f.a[c]) / 127.0);
            if (!(sw >= std::numeric_limits<float>::min()) || !std::isfinite(sw))
                refused = "channel " + std::to_string(c) +
                          " has a = scale / sqrt(var + eps) = " + numeric::detail::format_ratio(f.a[c]) +
                          ", not a weight scale";
        }
        if (!refused.empty()) {
            log.push_back(what + ": kept, " + refused);
            continue;
        }
        std::vector<Tensor> bn_in{pass_detail::bn_probe(C, qx)};
        for (std::size_t i = 1; i < 5; ++i) bn_in.push_back(*g.value(n.inputs[i]).data);
        JANUS_TRY(const Tensor want_t, ctx.kernel("BatchNormalization", bn_in, n.attrs,
                                                  ops::TensorType{DType::i8, Shape{1, C, 16, 16}, qy},
                                                  ctx.op_context()));
        const auto want = want_t.to_vector<std::int8_t>();

        // The Conv kernel may refuse a candidate the BatchNorm kernel takes (its capped plan covers ratios up to
        // any size; a Conv's multiplier must stay below 2^30): then the BatchNorm stays, with the kernel's reason.
        std::vector<pass_detail::BnConvChannel> best(Cs, {0, 0, 0, 2 * pass_detail::bn_far});
        const Status searched = [&]() -> Status {
            std::vector<std::size_t> all(Cs);
            for (std::size_t c = 0; c < Cs; ++c) all[c] = c;
            JANUS_CHECK(pass_detail::bn_search(f, want, all, 1.0, 128, qx, qy, ctx, best, what));
            for (int j = 1; j <= 16; ++j)
                for (int sign : {1, -1}) {
                    std::vector<std::size_t> open;
                    for (std::size_t c = 0; c < Cs; ++c)
                        if (best[c].differ != 0) open.push_back(c);
                    if (open.empty()) return ok_status();
                    JANUS_CHECK(pass_detail::bn_search(f, want, open, 1.0 + sign * j * 0x1p-14, 32, qx, qy, ctx,
                                                       best, what));
                }
            return ok_status();
        }();
        if (!searched.ok()) {
            log.push_back(what + ": kept, the Conv kernel refuses the depthwise Conv: " + searched.error().message());
            continue;
        }
        int unequal = 0;
        std::size_t far_channel = Cs;
        for (std::size_t c = 0; c < Cs; ++c) {
            unequal += best[c].differ;
            if (best[c].differ >= pass_detail::bn_far && far_channel == Cs) far_channel = c;
        }
        if (far_channel != Cs) {
            log.push_back(what + ": kept, channel " + std::to_string(far_channel) +
                          ": every depthwise 1x1 Conv tried differs from the BatchNorm by more than 1 LSB on some code "
                          "(or needs a bias beyond int32)");
            continue;
        }
        JANUS_TRY(pass_detail::BnConv dw, pass_detail::bn_conv(best, qx, what));
        JANUS_TRY(const auto conv, pass_detail::bn_conv_codes(dw, qx, qy, ctx));
        int bn_off = 0, conv_off = 0;  // against dequantize -> BatchNorm in double -> quantize
        [[maybe_unused]] int checked = 0;  // read by the assertion only (unused under NDEBUG)
        for (std::size_t i = 0; i < want.size(); ++i) {
            const std::size_t c = i / 256;
            const int code = static_cast<int>(i % 256) - 128;
            const double v = f.a[c] * qx.scale() * (code - qx.zero_point()) + f.b[c];
            const double q = std::clamp(std::nearbyint(v / qy.scale()) + qy.zero_point(), -128.0, 127.0);
            bn_off += static_cast<double>(want[i]) != q;
            conv_off += static_cast<double>(conv[i]) != q;
            checked += conv[i] != want[i];
        }
        JANUS_ASSERT(checked == unequal);
        const std::string total = std::to_string(C * 256);
        log.push_back(what + ": rewritten as a depthwise 1x1 Conv: " +
                      (unequal == 0 ? "equal on all 256 codes of all " + std::to_string(C) + " channels"
                                    : std::to_string(unequal) + " of " + total +
                                          " codes differ from the BatchNorm kernel, by 1 LSB each") +
                      "; against dequantize -> BatchNorm in double -> quantize, the BatchNorm kernel differs in " +
                      std::to_string(bn_off) + " and the Conv in " + std::to_string(conv_off) + " of " + total);
        const std::string base = g.value(y).name;
        const ValueId wv = g.add_constant(g.fresh_name(base + ".bn_weight"), std::move(dw.weight));
        const ValueId bv = g.add_constant(g.fresh_name(base + ".bn_bias"), std::move(dw.bias));
        g.nodes[k] = Node{"Conv", std::move(dw.attrs), {x, wv, bv}, {y}, n.origin, n.target};
    }
    return ok_status();
}

namespace pass_detail {
inline bool is_reduction(std::string_view op) {
    return op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin";
}
inline std::string ints_text(const Dims& d) {
    std::string s = "[";
    for (int i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}
}  // namespace pass_detail

/// One step of sink-transpose through a unary elementwise op: Transpose(x, perm) -> U, with U the Transpose's only
/// reader, becomes U(x) -> Transpose(perm), when the chain of unary ops from U reaches a quantized reduction (the
/// Transpose then shrinks or disappears there). An elementwise op on permuted elements is the permutation of its
/// results, bit for bit; a per-axis quantization moves with its axis. Returns whether it rewrote; `kept` collects
/// the refusals (logged once by the pass).
inline bool sink_through_unary(Graph& g, PassLog& log, std::set<std::string>& kept) {
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& tn = g.nodes[k];
        if (tn.op != "Transpose" || tn.inputs.size() != 1 || tn.outputs.size() != 1) continue;
        const ValueId t = tn.outputs[0];
        const auto readers = g.consumers(t);
        if (readers.size() != 1 || g.is_output(t) || !ops::is_unary_elementwise(g.nodes[readers[0]].op)) continue;
        const std::size_t j = readers[0];
        const std::string what = "sink-transpose: " + pass_detail::describe(g, g.nodes[j]) + " after Transpose";
        bool reaches = false;  // the chain of unary ops below U ends at a quantized reduction
        for (ValueId v = g.nodes[j].outputs[0];;) {
            const auto r = g.consumers(v);
            if (r.size() != 1 || g.is_output(v)) break;
            const Node& n = g.nodes[r[0]];
            if (pass_detail::is_reduction(n.op)) {
                reaches = g.value(v).type.quant.has_value() && g.value(n.outputs[0]).type.quant.has_value();
                break;
            }
            if (!ops::is_unary_elementwise(n.op)) break;
            v = n.outputs[0];
        }
        if (!reaches) {
            kept.insert(what + ": kept, no quantized reduction follows the elementwise chain");
            continue;
        }
        ops::Transpose::Attrs ta;
        if (!ops::parse_attrs(ops::Transpose::schema, tn.attrs, ta, what).ok()) continue;  // verify() refuses it
        const ValueId x = tn.inputs[0];
        const int rank = g.value(x).type.shape.size();
        std::vector<std::int64_t> perm_v = ta.perm;
        if (perm_v.empty())
            for (int a = rank - 1; a >= 0; --a) perm_v.push_back(a);
        const auto perm = make_permutation(std::span<const std::int64_t>(perm_v));
        if (!perm.ok() || perm->size() != rank) continue;
        Node u = g.nodes[j];
        const ValueId y = u.outputs[0];
        const ops::TensorType yt = g.value(y).type;
        ops::TensorType mt{yt.dtype, g.value(x).type.shape,
                           yt.quant ? std::optional(numeric::transposed(*yt.quant, inverse(*perm))) : std::nullopt};
        const ValueId m = g.add_value(g.fresh_name(g.value(y).name + ".unpermuted"), std::move(mt), ValueKind::node);
        u.inputs[0] = x;
        u.outputs[0] = m;
        Node moved{"Transpose", tn.attrs, {m}, {y}, tn.origin, tn.target};
        log.push_back(what + ": moved below it, the " + u.op + " now reads " + g.value(x).name +
                      " (a quantized reduction follows)");
        std::vector<Node> nodes;
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            if (i == k) continue;
            if (i == j) {
                nodes.push_back(std::move(u));
                nodes.push_back(std::move(moved));
            } else {
                nodes.push_back(std::move(g.nodes[i]));
            }
        }
        g.nodes = std::move(nodes);
        return true;
    }
    return false;
}

/// sink-transpose: Transpose(x, perm) -> Reduce(axes, keepdims) becomes Reduce(x, perm[axes], keepdims), followed
/// by the Transpose of what is left: perm itself when keepdims = 1, and when keepdims = 0 the permutation REBUILT
/// over the kept axes (layout/permutation.hpp permutation_after_removing, seed A2); none when that is the identity
/// (NHWC -> NCHW followed by a spatial mean). Quantized reductions only: their int32 sums and max/min are exact
/// in any order, while a float sum over reordered axes adds in another order and is not the same bits.
inline Status sink_transpose(Graph& g, PassLog& log) {
    std::set<std::string> kept;
    while (sink_through_unary(g, log, kept)) {}
    for (const std::string& line : kept) log.push_back(line);
    std::vector<bool> dead(g.nodes.size(), false);
    std::vector<std::optional<Node>> after(g.nodes.size());
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& r = g.nodes[k];
        if (!pass_detail::is_reduction(r.op) || r.inputs.size() != 1 || r.outputs.size() != 1) continue;
        const ValueId t = r.inputs[0];
        std::size_t p = g.nodes.size();
        for (std::size_t i = 0; i < k; ++i)
            if (!dead[i] && g.nodes[i].op == "Transpose" && g.nodes[i].outputs.at(0) == t) p = i;
        if (p == g.nodes.size()) continue;
        const std::string what = "sink-transpose: " + pass_detail::describe(g, r) + " after Transpose";
        const Value& tv = g.value(t);
        const ValueId y = r.outputs[0];
        const ops::TensorType yt = g.value(y).type;
        if (!tv.type.quant || !yt.quant) {
            log.push_back(what + ": kept, a float reduction over reordered axes adds in another order");
            continue;
        }
        if (g.consumers(t).size() != 1 || g.is_output(t)) {
            log.push_back(what + ": kept, " + tv.name + " has other readers");
            continue;
        }
        const int rank = tv.type.shape.size();
        ops::ReduceAttrs ra;
        ops::Transpose::Attrs ta;
        if (!ops::parse_attrs(ops::reduce_schema, r.attrs, ra, what).ok() ||
            !ops::parse_attrs(ops::Transpose::schema, g.nodes[p].attrs, ta, what).ok())
            continue;  // verify() refuses such a graph
        const bool keepdims = ra.keepdims != 0;
        const std::vector<std::int64_t>& axes = ra.axes;
        if (axes.empty() && ra.noop_with_empty_axes != 0) {
            log.push_back(what + ": kept, an identity reduction (remove-identity's case)");
            continue;
        }
        std::vector<std::int64_t> perm_v = ta.perm;
        if (perm_v.empty())
            for (int a = rank - 1; a >= 0; --a) perm_v.push_back(a);
        const auto perm_r = make_permutation(std::span<const std::int64_t>(perm_v));
        if (!perm_r.ok() || perm_r->size() != rank) continue;  // verify() refuses such a graph
        const Dims perm = *perm_r;
        Dims removed;  // input axes of the Transpose that the reduction removes (or keeps as extent 1), ascending
        for (int v = 0; v < rank; ++v)
            for (int a = 0; a < rank; ++a) {
                bool reduced = axes.empty();
                for (std::int64_t b : axes) reduced = reduced || (b < 0 ? b + rank : b) == a;
                if (perm[a] == v && reduced) removed.push_back(v);
            }
        const Dims rest = keepdims ? perm : permutation_after_removing(perm, removed);
        const bool identity = rest == identity_permutation(rest.size());

        const ValueId x = g.nodes[p].inputs.at(0);
        Node reduce = r;
        reduce.inputs[0] = x;
        if (!axes.empty()) reduce.attrs["axes"] = std::vector<std::int64_t>(removed.begin(), removed.end());
        std::string msg = what + ": moved below it, the reduction now reads " + g.value(x).name + " over axes " +
                          pass_detail::ints_text(removed);
        if (identity) {
            msg += "; no Transpose is left (the kept axes are already in order)";
        } else {
            Shape s;
            for (int a = 0; a < rank; ++a) {
                const bool gone = janus::detail::contains(removed, a);
                if (!gone)
                    s.push_back(g.value(x).type.shape[a]);
                else if (keepdims)
                    s.push_back(1);
            }
            ops::TensorType mid{yt.dtype, s, numeric::transposed(*yt.quant, inverse(rest))};
            const ValueId m =
                g.add_value(g.fresh_name(g.value(y).name + ".unpermuted"), std::move(mid), ValueKind::node);
            reduce.outputs[0] = m;
            after[k] = Node{"Transpose",
                            {{"perm", std::vector<std::int64_t>(rest.begin(), rest.end())}},
                            {m},
                            {y},
                            g.nodes[p].origin,
                            g.nodes[p].target};
            msg += keepdims ? "; Transpose perm=" + pass_detail::ints_text(rest) + " follows it"
                            : "; Transpose perm=" + pass_detail::ints_text(rest) +
                                  " over the kept axes follows it (rebuilt from perm=" + pass_detail::ints_text(perm) +
                                  ", seed A2)";
        }
        log.push_back(msg);
        g.nodes[k] = std::move(reduce);
        dead[p] = true;
    }
    std::vector<Node> nodes;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (!dead[i]) nodes.push_back(std::move(g.nodes[i]));
        if (after[i]) nodes.push_back(std::move(*after[i]));
    }
    g.nodes = std::move(nodes);
    pass_detail::compact_values(g);
    return ok_status();
}

inline Status fuse_activation(Graph& g, PassLog& log) {
    std::vector<bool> dead(g.nodes.size(), false);
    // each value's producer (node outputs do not change in this pass) and its number of reading nodes, kept up to
    // date below: scanning every node per activation made the pass O(N^2) on a chain
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> producer_of(g.values.size(), none), readers(g.values.size(), 0);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (!g.nodes[i].outputs.empty()) producer_of[static_cast<std::size_t>(g.nodes[i].outputs[0])] = i;
        const auto& ins = g.nodes[i].inputs;
        for (std::size_t j = 0; j < ins.size(); ++j)
            if (ins[j] != no_value && std::find(ins.begin(), ins.begin() + static_cast<std::ptrdiff_t>(j), ins[j]) ==
                                          ins.begin() + static_cast<std::ptrdiff_t>(j))
                ++readers[static_cast<std::size_t>(ins[j])];
    }
    pass_detail::Readers uses(g);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& act = g.nodes[k];
        if (act.op != "Relu" && act.op != "Clip") continue;
        const ValueId x = act.inputs.at(0);
        const ValueId y = act.outputs.at(0);
        const Value& xv = g.value(x);
        if (!xv.type.quant) continue;  // a float activation: nothing to fuse into an integer epilogue
        const std::size_t pi = producer_of[static_cast<std::size_t>(x)];
        const Node* producer = pi == none ? nullptr : &g.nodes[pi];
        if (!producer || (producer->op != "Conv" && producer->op != "ConvTranspose" && producer->op != "MatMul" &&
                          producer->op != "Gemm"))
            continue;
        const std::string what = "fuse-activation: " + pass_detail::describe(g, act) + " after " + producer->op;
        if (readers[static_cast<std::size_t>(x)] != 1 || g.is_output(x)) {
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
        pass_detail::replace_uses(g, y, x, uses);
        readers[static_cast<std::size_t>(x)] += readers[static_cast<std::size_t>(y)];  // x's only reader was act
        readers[static_cast<std::size_t>(y)] = 0;
        dead[k] = true;
    }
    return pass_detail::remove_dead(g, dead);
}

inline Status remove_identity(Graph& g, PassLog& log) {
    std::vector<bool> dead(g.nodes.size(), false);
    pass_detail::Readers readers(g);
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
        pass_detail::replace_uses(g, y, x, readers);
        dead[k] = true;
    }
    return pass_detail::remove_dead(g, dead);
}

inline Status dce(Graph& g, PassLog& log) {
    // one backward sweep with per-value read counts (graph outputs count as a read): nodes are in topological
    // order, so a node's readers come after it and are decided first (a scan of every node per value was O(N^2))
    std::vector<std::size_t> reads(g.values.size(), 0);
    for (const Node& n : g.nodes)
        for (ValueId x : n.inputs)
            if (x != no_value) ++reads[static_cast<std::size_t>(x)];
    for (ValueId o : g.outputs) ++reads[static_cast<std::size_t>(o)];
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = g.nodes.size(); k-- > 0;) {
        bool read = false;
        for (ValueId o : g.nodes[k].outputs) read = read || reads[static_cast<std::size_t>(o)] != 0;
        if (read) continue;
        log.push_back("dce: " + pass_detail::describe(g, g.nodes[k]) + ": removed, nothing reads it");
        dead[k] = true;
        for (ValueId x : g.nodes[k].inputs)  // its inputs lose this reader
            if (x != no_value) --reads[static_cast<std::size_t>(x)];
    }
    pass_detail::erase_nodes(g, dead);
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
    {"batch-norm-to-conv", &batch_norm_to_conv},
    {"sink-transpose", &pass_detail::graph_only<&sink_transpose>},
    {"fuse-activation", &pass_detail::graph_only<&fuse_activation>},
    {"remove-identity", &pass_detail::graph_only<&remove_identity>},
    {"dce", &pass_detail::graph_only<&dce>},
};
/// The pipeline janusc runs after import, in order.
inline constexpr std::string_view default_pipeline[] = {
    "fold-constants",  "canonicalize", "batch-norm-to-conv", "sink-transpose", "fuse-activation",
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
        const Status v = verify(g, {}, {}, ctx.infer);
        if (!v.ok())
            return make_error("pass " + std::string(name), "", v.error().rule,
                              "the graph is invalid after the pass: " + v.error().message());
        if (dump) dump(name, g);
    }
    return ok_status();
}

}  // namespace janus::graph
