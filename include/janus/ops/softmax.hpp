#pragma once
// Softmax (ONNX opset 13): y = exp(x - max) / sum(exp(x - max)), max and sum taken along ONE axis, for float32 and
// quantized int8/uint8 (in integers, with a derived and tested error bound).
//
// Semantics (seed D15: one name, several numeric contracts; the axis is part of the contract):
//   - `axis` (default -1, any value in [-rank, rank - 1]) names the ONE axis the max and the sum run along; every
//     other coordinate indexes an independent row. This is opset 13. Opsets 1-12 instead FLATTENED the input to 2-D
//     [prod(shape[:axis]), prod(shape[axis:])] (default axis 1) and normalized over all trailing axes at once; the two
//     agree only when `axis` is the last axis. Janus implements opset 13 only; an importer of an older model must
//     rewrite Softmax(axis=a) of a rank-r input as Reshape -> Softmax(axis=-1) -> Reshape (or refuse), never pass the
//     attribute through (docs: /tmp/helper_docs/softmax.md, "opset 13 vs < 13").
//   - Input rank >= 1 (rank 0 has no valid axis: rule "axis-in-range"). An empty input gives an empty output.
//   - float32 -> float32, quantized T -> quantized T' (int8/uint8; the output parameters are the CALLER's, seed A10,
//     TFLite's usual choice is scale 1/256 with zero point -128 for int8 and 0 for uint8).
//
// Built from primitives (no private loop nest): reduce (max), map (exp table / exp), reduce (add), map (reciprocal,
// once per row), map (output). Per-row values (max, sum, reciprocal) live in keep-dims tensors and are read through
// stride-0 broadcast views (layout/view.hpp broadcast_to, seed B5); they are never expanded over the whole tensor.
//
// float32: exactly ONNX's formula, e = exp(x - max) (xsimd's exp on both paths), sum accumulated in index order along
// the axis from -0.0 (deterministic, ops/reduce.hpp), y = e / sum (a true division, not a multiply by 1/sum). NaN in
// a row makes the whole row NaN; +inf in a row gives NaN (inf - inf), as numpy's reference does.
//
// Quantized (N = extent of the axis, s_x / s_y the scales, all steps int32, every range proved before running):
//
// U = min(floor((2^31 - 1) / N), 2^30) is the table's unit (exp(0) = U), s1 = max(0, floor(log2 U) - 15), K = 30 + s1.
//
// | step | value                                  | format              | range                    | primitive       |
// |------|----------------------------------------|---------------------|--------------------------|-----------------|
// | 1    | m = max_j x_j                          | storage integer     | T's range                | reduce max      |
// | 2    | d = x - m, index d + 255               | integer             | d in [-255, 0]           | map: sat<u8>    |
// | 3    | e = table[d+255] = round(exp(s_x d) U) | fixed point, unit U | [0, U]; U at the row max | map: lut        |
// | 4    | S = sum_j e_j                          | unit U              | [U, N U] (proved)        | reduce add      |
// | 5    | r = round(2^K / S)                     | 1/S, K frac. bits   | [2^K / (N U), 2^K / U]   | map: recip      |
// | 6    | e' = round(e / 2^s1)                   | 16 significant bits | [0, 2^16]                | map: rshift     |
// | 7    | P = e' r ~ p 2^30                      | Q0.30 probability   | [0, 2^30 + 2^16 + r_max] | map: mul        |
// | 8    | y = sat(rq(P, 2^-30 / s_y) + zp_y)     | output storage      | T_out's range            | map: rq add sat |
//
// Error bound (derived in SoftmaxPlan::eps, measured in tests/ops_softmax): with p the exact softmax of the
// dequantized input, |p_hat - p| <= eps = N / (2U) (table rounding) + 2^(s1-1) / U (step 6) + 2^16 / 2^31 (step 5)
// + 2^-31 (multiplier), and |y - y_ref| <= floor(5/4 + eps / s_y) output LSBs against y_ref = "dequantize, softmax in
// double, quantize (half to even)". The first term grows as N^2 / 2^32: a row long enough for the bound to exceed
// max_error_lsb (2) LSBs is refused (rule "softmax-error-bound", e.g. N > 5402 at s_y = 1/256): dequantize and use the
// float32 op there. Only the table is computed in double (std::exp, then llround); all kernel arithmetic is integer.
//
// recip (step 5) is an element primitive local to this header: round(2^K / x), ties up, exact in int64, for x >= 1
// (a proved range); NPU: one per row, Newton-Raphson on the VEC unit or the scalar unit. It is a candidate for
// ops/expr.hpp if another op needs a per-row reciprocal.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include <janus/layout/view.hpp>
#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>
#include <janus/ops/reduce.hpp>

namespace janus::ops {

namespace softmax_detail {

/// round(2^k / x), ties toward +infinity, for int32 x >= 1 and 0 <= k <= 61: floor((2^(k+1) + x) / (2x)) in int64,
/// saturated to INT32_MAX. x <= 0 (outside the proved domain) gives INT32_MAX. Scalar and SIMD paths are the same
/// function (lane by lane).
inline std::int32_t recip_pow2(std::int32_t x, int k) noexcept {
    if (x <= 0) return std::numeric_limits<std::int32_t>::max();
    const std::int64_t num = (std::int64_t{1} << (k + 1)) + x;
    const std::int64_t q = num / (2 * static_cast<std::int64_t>(x));
    return q > std::numeric_limits<std::int32_t>::max() ? std::numeric_limits<std::int32_t>::max()
                                                         : static_cast<std::int32_t>(q);
}

template <expr::Expr E>
struct Recip : expr::node_tag {
    static_assert(std::is_same_v<typename E::type, std::int32_t>, "recip() takes an int32 expression");
    using type = std::int32_t;
    static constexpr std::string_view kind = "recip";
    static constexpr int arity = E::arity;
    E e;
    int k = 0;
    std::int32_t eval(const expr::ScalarArgs& a) const { return recip_pow2(e.eval(a), k); }
    expr::batch_t<type> eval(const expr::BatchArgs& a) const {
        return expr::detail::per_lane([k = k](std::int32_t v) { return recip_pow2(v, k); }, e.eval(a));
    }
    /// Decreasing in x: [f(hi), f(lo)] for lo >= 1; unbounded (refused by check_ranges) when x may be <= 0.
    numeric::Interval range(const expr::InputRanges& r) const {
        const numeric::Interval x = e.range(r);
        if (x.lo < 1 || x.hi > std::numeric_limits<std::int32_t>::max()) return numeric::Interval::unbounded();
        return {recip_pow2(static_cast<std::int32_t>(x.hi), k), recip_pow2(static_cast<std::int32_t>(x.lo), k)};
    }
    void print(std::string& s) const { s += "recip("; e.print(s); s += ", 2^" + std::to_string(k) + ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

template <expr::Expr E>
Recip<E> recip(E e, int k) { return {{}, e, k}; }

}  // namespace softmax_detail

struct SoftmaxAttrs {
    std::int64_t axis = -1;
    friend bool operator==(const SoftmaxAttrs&, const SoftmaxAttrs&) = default;
};

/// Everything a quantized Softmax node computes, decided from types only (float plans fill the first block only).
struct SoftmaxPlan {
    int axis = 0;                 ///< normalized softmax axis
    std::int64_t extent = 0;      ///< N, elements per row
    Shape keep_shape;             ///< input shape with the axis set to 1: the per-row tensors
    // quantized only
    std::int32_t unit = 0;        ///< U: exp(0) in the table's fixed point; N * U <= 2^31 - 1
    int s1 = 0;                   ///< right shift of e before the product (step 6)
    int k = 0;                    ///< reciprocal fraction bits, 30 + s1 (step 5)
    numeric::QuantizedMultiplier m_out{};  ///< 2^-30 / s_y
    std::int32_t zp_out = 0;
    std::shared_ptr<const expr::Table256> table;  ///< exp(s_x (i - 255)) * U, rounded; entry 255 == U
    numeric::Interval sum_range{0, 0};            ///< proved range of S
    numeric::Interval recip_range{0, 0};          ///< proved range of r
    double eps = 0;               ///< derived bound of |p_hat - p| (probability units)
    int bound_lsb = 0;            ///< derived bound of |y - y_ref| in output LSBs: floor(5/4 + eps / s_y)
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of step 8's rq
};

struct Softmax {
    static constexpr fixed_string name = "Softmax";
    static constexpr int min_inputs = 1, max_inputs = 1;
    using Attrs = SoftmaxAttrs;
    static constexpr auto schema = attr_schema(attr<"axis">(&Attrs::axis, int_range{-max_rank, max_rank - 1}));
    static constexpr int kept_bits = 15;      ///< e' keeps floor(log2 U) - s1 = 15 bits below its leading one
    static constexpr int max_error_lsb = 2;   ///< the largest derived bound accepted (rule "softmax-error-bound")

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Softmax>(in));
        JANUS_TRY(bool q, classify_inputs(in, op_what<Softmax>()));
        if (q) JANUS_CHECK(require_quantized(in[0], op_what<Softmax>(0)));
        JANUS_CHECK(normalize_axis(a.axis, in[0].shape.size(), op_what<Softmax>() + ".axis"));
        return TensorType{in[0].dtype, in[0].shape, std::nullopt};
    }

    // ---- The element expressions of the quantized kernel (exposed for the NPU lowering and tests) -------------

    /// Step 2-3: in0 = x (T), in1 = the row max (int32, broadcast).
    template <expr::Element T>
    static auto exp_expr(const SoftmaxPlan& p) {
        using namespace expr;
        return lut<std::int32_t>(sat<std::uint8_t>(add(sub(widen(In<0, T>{}), In<1, std::int32_t>{}), cst(255))),
                                 p.table);
    }
    /// Step 5: in0 = the row sum S.
    static auto recip_expr(const SoftmaxPlan& p) { return softmax_detail::recip(expr::In<0, std::int32_t>{}, p.k); }
    /// Step 6-7: in0 = e, in1 = the row reciprocal (broadcast).
    static auto product_expr(const SoftmaxPlan& p) {
        using namespace expr;
        return mul(rshift(In<0, std::int32_t>{}, p.s1), In<1, std::int32_t>{});
    }
    /// Step 8.
    template <expr::Element To>
    static auto output_expr(const SoftmaxPlan& p) {
        using namespace expr;
        return sat<To>(add(rq(product_expr(p), p.m_out, p.rounding), cst(p.zp_out)));
    }

    using Plan = SoftmaxPlan;
    /// The plan from types alone: axis, extent, and for quantized inputs the formats, table, multiplier, the range
    /// proofs and the derived error bound.
    static Result<SoftmaxPlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                    numeric::Rounding rounding) {
        JANUS_CHECK(check_arity<Softmax>(in));
        const TensorType& x = in[0];
        const std::string what = op_what<Softmax>();
        SoftmaxPlan p;
        p.rounding = rounding;
        JANUS_TRY(p.axis, normalize_axis(a.axis, x.shape.size(), what + ".axis"));
        p.extent = x.shape[p.axis];
        p.keep_shape = x.shape;
        p.keep_shape[p.axis] = 1;
        if (!(out.shape == x.shape))
            return make_error(what, "output", "output-shape",
                              "output shape " + out.shape.str() + " differs from the input shape " + x.shape.str());
        if (!x.quantized()) {
            if (x.dtype != DType::f32)
                return make_unsupported(op_what<Softmax>(0), "", "float-or-quantized",
                                        op_what<Softmax>(0) + " type " + x.str(),
                                        "Janus takes float32 or a quantized int8/uint8 tensor");
            if (out.dtype != DType::f32)
                return make_error(what, "output", "output-dtype",
                                  "a float32 Softmax produces float32, not " + out.str());
            return p;
        }
        const std::string w0 = op_what<Softmax>(0);
        JANUS_CHECK(require_quantized(x, w0));
        if (x.quant->dtype != x.dtype)
            return make_error(w0, "", "quant-dtype-matches",
                              "quantization dtype differs from storage dtype: " + x.str());
        if (!is_quantized_storage(out.dtype))
            return make_error(what, "output", "output-dtype",
                              "a quantized Softmax produces int8/uint8, not " + out.str());
        JANUS_CHECK(require_output_quant(out, what));
        const double s_x = x.quant->scale(), s_y = out.quant->scale();
        p.zp_out = out.quant->zero_point();
        const std::int64_t n = std::max<std::int64_t>(p.extent, 1);

        // Step 3-4 format: the largest unit U whose N-term sum fits int32 (at most 2^30).
        const std::int64_t i32_max = std::numeric_limits<std::int32_t>::max();
        const std::int64_t unit = std::min<std::int64_t>(i32_max / n, std::int64_t{1} << 30);
        // Derived bound (header comment); computed before refusing so the message can quote it.
        const int log2_unit = unit > 0 ? std::bit_width(static_cast<std::uint64_t>(unit)) - 1 : 0;
        p.s1 = std::max(0, log2_unit - kept_bits);
        p.k = 30 + p.s1;
        const double u = static_cast<double>(std::max<std::int64_t>(unit, 1));
        const double e_max = std::ldexp(1.0, kept_bits + 1);  // e' <= round(U / 2^s1) <= 2^16
        p.eps = static_cast<double>(n) / (2.0 * u) + (p.s1 > 0 ? std::ldexp(1.0, p.s1 - 1) / u : 0.0) +
                e_max / std::ldexp(1.0, 31) + std::ldexp(1.0, -31);
        const double lsb = 1.25 + p.eps / s_y;
        p.bound_lsb = lsb > 1e9 ? 1000000000 : static_cast<int>(std::floor(lsb));
        if (unit < 2 || p.bound_lsb > max_error_lsb)
            return make_unsupported(w0, "axis " + std::to_string(p.axis), "softmax-error-bound",
                                    "Softmax of a quantized row of " + std::to_string(p.extent) +
                                        " elements at output scale " + expr::detail::num(s_y),
                                    "the row needs exp terms in units of " + std::to_string(unit) +
                                        " for the int32 sum, so the output may be off by up to " +
                                        std::to_string(p.bound_lsb) + " LSBs of scale " + expr::detail::num(s_y) +
                                        " (at most " + std::to_string(max_error_lsb) +
                                        " accepted); dequantize and run the float32 Softmax");
        p.unit = static_cast<std::int32_t>(unit);

        // Step 3: the exp table, entry i = round(exp(s_x (i - 255)) * U); entry 255 = U exactly.
        auto t = std::make_shared<expr::Table256>();
        t->in = DType::u8;
        t->out = DType::i32;
        for (int i = 0; i < 256; ++i)
            t->values[static_cast<std::size_t>(i)] =
                static_cast<std::int32_t>(std::llround(std::exp(s_x * static_cast<double>(i - 255)) * u));
        p.table = t;

        // Step 4: the sum. S >= U because the row's max contributes table[255] = U and every entry is >= 0 (a
        // semantic fact, not an interval one: the proved accumulator range alone starts at 0).
        JANUS_TRY(const numeric::Interval s, numeric::accumulator_range({0, unit}, numeric::Interval::point(1), n,
                                                                         numeric::Interval::point(0),
                                                                         what + ": exp sum over the axis"));
        p.sum_range = {std::min<std::int64_t>(unit, s.hi), s.hi};
        // Step 5-8: recip range, output expression range and round_double's left shift.
        JANUS_TRY(p.m_out, numeric::quantize_multiplier(std::ldexp(1.0, -30) / s_y, what + ": 2^-30 / output scale"));
        expr::InputRanges rr;
        rr.r[0] = p.sum_range;
        rr.set[0] = true;
        JANUS_TRY(p.recip_range, expr::check_ranges(recip_expr(p), rr, what + ": reciprocal"));
        return visit_quant_dtype(out.dtype, [&](auto tag) -> Result<SoftmaxPlan> {
            using To = typename decltype(tag)::type;
            expr::InputRanges r;
            r.r[0] = {0, unit};
            r.r[1] = p.recip_range;
            r.set[0] = r.set[1] = true;
            JANUS_CHECK(expr::prove_ranges(output_expr<To>(p), r, what + ": output"));
            auto shifted = numeric::requantize_range(product_expr(p).range(r), p.m_out, p.zp_out, numeric::i32_min,
                                                     numeric::i32_max, what + ": output");
            if (!shifted.ok()) return shifted.error();
            return p;
        });
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Softmax>(in));
        const std::string what = op_what<Softmax>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(const SoftmaxPlan p, plan(std::span<const TensorType>(&t0, 1), a, out, ctx.rounding));
        const Tensor& x = in[0];
        const Dims axes{p.axis};
        const MapOptions mo{ctx.simd, -1};
        const ReduceOptions ro{ctx.simd, -1};
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        if (x.elements() == 0) return y;
        // A per-row tensor (keep-dims shape) seen over the whole input shape: stride 0 along the axis.
        auto rows = [&](const Tensor& t) -> Result<Tensor> {
            JANUS_TRY(Layout l, broadcast_to(t.layout, x.shape(), what));
            return t.view(l);
        };

        if (x.dtype == DType::f32) {
            using namespace expr;
            const In<0, float> v;
            Tensor m = Tensor::zeros(DType::f32, p.keep_shape);
            JANUS_CHECK(run_reduce<BinOp::max>(v, -std::numeric_limits<float>::infinity(), v, x, axes, m, ro, what));
            JANUS_TRY(Tensor mb, rows(m));
            Tensor e = Tensor::zeros(DType::f32, x.shape());
            const Tensor xe[2] = {x, mb};
            JANUS_CHECK(run_map(exp(sub(v, In<1, float>{})), std::span<const Tensor>(xe), e, mo, what));
            Tensor s = Tensor::zeros(DType::f32, p.keep_shape);
            JANUS_CHECK(run_reduce<BinOp::add>(v, -0.0f, v, e, axes, s, ro, what));
            JANUS_TRY(Tensor sb, rows(s));
            const Tensor es[2] = {e, sb};
            JANUS_CHECK(run_map(div(v, In<1, float>{}), std::span<const Tensor>(es), y, mo, what));
            return y;
        }

        return visit_quant_dtype(x.dtype, [&](auto tin) -> Result<Tensor> {
            using T = typename decltype(tin)::type;
            using namespace expr;
            const In<0, std::int32_t> acc;
            // 1: row max in the storage domain.
            Tensor m = Tensor::zeros(DType::i32, p.keep_shape);
            JANUS_CHECK(run_reduce<BinOp::max>(widen(In<0, T>{}), static_cast<std::int32_t>(type_range<T>().lo), acc,
                                               x, axes, m, ro, what));
            JANUS_TRY(Tensor mb, rows(m));
            // 2-3: e = table[x - max + 255]; the max is one of the row's values, so x - max is in [-255, 0].
            const auto ee = exp_expr<T>(p);
            InputRanges er;
            er.r[1] = type_range<T>();
            er.set[1] = true;
            JANUS_CHECK(prove_ranges(ee, er, what + ": exp table"));
            Tensor e = Tensor::zeros(DType::i32, x.shape());
            const Tensor xm[2] = {x, mb};
            JANUS_CHECK(run_map(ee, std::span<const Tensor>(xm), e, mo, what));
            // 4: S = sum of e along the axis (headroom proved in plan).
            Tensor s = Tensor::zeros(DType::i32, p.keep_shape);
            JANUS_CHECK(run_reduce<BinOp::add>(acc, 0, acc, e, axes, s, ro, what));
            // 5: r = round(2^k / S), once per row.
            Tensor r = Tensor::zeros(DType::i32, p.keep_shape);
            const Tensor sv[1] = {s};
            JANUS_CHECK(run_map(recip_expr(p), std::span<const Tensor>(sv), r, mo, what));
            JANUS_TRY(Tensor rb, rows(r));
            // 6-8: y = sat(rq((e >> s1) * r, 2^-30 / s_y) + zp_y).
            return visit_quant_dtype(out.dtype, [&](auto tout) -> Result<Tensor> {
                using To = typename decltype(tout)::type;
                const Tensor er2[2] = {e, rb};
                JANUS_CHECK(run_map(output_expr<To>(p), std::span<const Tensor>(er2), y, mo, what));
                return y;
            });
        });
    }
};

JANUS_OP_INSTANCES(Softmax)

}  // namespace janus::ops
