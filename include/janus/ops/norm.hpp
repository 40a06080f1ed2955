#pragma once
// Normalization operators: BatchNormalization, InstanceNormalization, LayerNormalization (float32 and quantized
// int8/uint8). The parameter tensors (scale, B, mean, var) are float32 inputs (constants in models); X and Y are
// float32, or quantized int8/uint8 with per-tensor parameters (Y's are the CALLER's, seed A10; Y has X's dtype).
//
// BatchNormalization (ONNX opset 15, inference: training_mode = 0 only; momentum is accepted and unused).
//   Not a dedicated kernel (seed A8: a dedicated affine op costs more than it buys). The statistics are folded, in
//   double, into a per-channel affine y = a_c x + b_c, a_c = scale_c / sqrt(var_c + eps), b_c = B_c - mean_c a_c
//   (fold_batch_norm_affine), and the affine is one `map` with per-channel `chan` / per-channel `rq` nodes along
//   axis 1 (seeds A6, A7): every parameter vector has C entries, nothing is materialized over the tensor.
//     float32:   y = x * chan(float(a)) + chan(float(b))
//     quantized: q_y = sat(rshift(rq(chan(sign_c) * (q_x - chan(off_c)), M_c) + chan(bias_c), F))   (fold_batch_norm)
//                F = 8 output fractional bits; M_c = |a_c| s_x / s_y 2^F (a QuantizedMultiplier is positive: a
//                negative scale_c becomes sign_c = -1 on the input term); off_c = zp_x; bias_c = round((b_c / s_y +
//                zp_y) 2^F), clamped to +-(2^21 + 1024) output steps (beyond, |rq| <= 255 2^13 cannot pull the output
//                back from saturation: the clamp changes nothing).
//   Tiny variance / tiny epsilon: a_c can be huge. A ratio |a_c| s_x / s_y above 2^13 is capped to 2^13 and the
//   channel is centred on the input code m nearest the mean's code: q_x = m gives the exactly rounded (clamped)
//   v(m); any other code is >= 1/2 code from the mean, so exact and capped outputs saturate in the same direction,
//   provided |B_c / s_y + zp_y| <= 2048 (otherwise the two huge terms could cancel: "batch-norm-fold-range").
//   var_c + eps <= 0 is "variance-plus-epsilon-positive"; non-finite parameters are "parameters-finite".
//   Error: within 1 LSB of round_half_even(exact / s_y) + zp_y (|ours - exact| <= 1/2 + 1.25 2^-F + 2^-10).
//
// InstanceNormalization (opset 6): per (n, c), over the spatial axes; scale and B per channel C.
// LayerNormalization (opset 17): over axes [axis, rank) (axis may be negative); Scale (and optional B) have shape
//   X.shape[axis:]; stash_type = 1 only; the optional outputs Mean and InvStdDev are NOT produced (a Janus op has one
//   output; the importer must refuse a node that uses them).
//   Both: X is viewed as [R, K] (rows = the statistics groups, K = elements per group; a non-mergeable layout is
//   copied first) and epsilon > 0.
//   float32: mean = reduce_sum(x) / K, d = x - mean (map), var = reduce_sum(d * d) / K, rstd = 1 / sqrtf(var + eps)
//     per row, y = d * rstd * gamma + beta (map; LayerNorm gamma/beta are stride-0 broadcast views over the rows).
//   quantized, in integers (seed A9; docs "Normalizations" has the range table):
//     d = q_x - centre (centre 0 for int8, 128 for uint8: variance is shift invariant and |d| <= 128)
//     S1 = sum d, S2 = sum d^2 per row      (reduce, int32: K * 128^2 must fit, so K <= 131071, proved)
//     V = K S2 - S1^2 = K^2 var_d           (int64, exact, <= 2^48)
//     den2 = V 2^48 + E, E = round(K^2 eps / s_x^2 2^48)      (unsigned 128-bit; eps in the SAME units as V 2^48,
//                                            so it vanishes only below 2^-49 / K^2 in d^2 units; eps / s_x^2 <= 2^40)
//     D = floor(sqrt(den2)) (exact integer square root) = K sqrt(var_d + eps') 2^24
//     M_r = 2^(Z + 24) / D as a QuantizedMultiplier computed by integer division (rows with V = 0 use the cap
//           2^Z / sqrt(K - 1): their c below is 0, so the multiplier is irrelevant)
//     per element (one map over [R, K], the row is the channel axis):
//       c = K d - S1                     |c| <= 255 K                      (exact: K (d - mean))
//       z = clamp(rq(c, M_r), +-Zl)      z = normalized * 2^Z; the clamp never acts (|x - mean| <= sd sqrt(K - 1))
//       p = z * Gi                       Gi = round(G / Gs 2^g), G = gamma / s_y, Gs = max |G|; |p| <= 2^29
//       a = rq(p, Mo)                    Mo = Gs 2^(F - Z - g) <= 1/2 (F = output fractional bits, <= 8)
//       q_y = sat((a + Bf) >> F (rounding) + zp_y)   Bf = round(clamp(beta / s_y) 2^F)
//     Gi and Bf: LayerNorm: K-entry int32 tensors broadcast over rows (stride 0); InstanceNorm: per-row chan values.
//     Error vs the exact value (in output LSB, before saturation): <= 1/2 + e, e = Gs 2^-Z + sqrt(K-1) Gs 2^-(g+1)
//     + sqrt(K-1) Gs 2^-20 + 1.5 2^-F (NormQuantPlan::extra_error_lsb); e < 1/2 gives <= 1 LSB from
//     round_half_even(exact), floor(1 + e) LSB otherwise (e.g. K near 131071 with |gamma| / s_y ~ 30). Refusals: "epsilon-range", "normalization-scale-range" (|gamma| / s_y so large that
//     F < 0), "accumulator-fits-int32" (K > 131071).
// Rounding: the plan's (OpContext::rounding; round_double by default) for every rq; rshift rounds half away from zero.
// Scalar (OpContext{.simd = false}) and SIMD results are bit-identical (both are map/reduce paths).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/view.hpp>
#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>
#include <janus/ops/reduce.hpp>

namespace janus::ops {

// ---------------------------------------------------------------------------------------------------------------
// Attributes

struct BatchNormAttrs {
    float epsilon = 1e-5f;
    float momentum = 0.9f;           ///< training only; accepted and unused
    std::int64_t training_mode = 0;  ///< inference only
};
inline constexpr auto batch_norm_schema =
    attr_schema(attr<"epsilon">(&BatchNormAttrs::epsilon, finite_float{}),
                attr<"momentum">(&BatchNormAttrs::momentum, finite_float{}),
                attr<"training_mode">(&BatchNormAttrs::training_mode, int_range{0, 0}));

struct InstanceNormAttrs {
    float epsilon = 1e-5f;
};
inline constexpr auto instance_norm_schema =
    attr_schema(attr<"epsilon">(&InstanceNormAttrs::epsilon, positive_float{}));

struct LayerNormAttrs {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    std::int64_t stash_type = 1;  ///< 1 (float32 statistics) only
};
inline constexpr auto layer_norm_schema =
    attr_schema(attr<"axis">(&LayerNormAttrs::axis, int_range{-max_rank, max_rank - 1}),
                attr<"epsilon">(&LayerNormAttrs::epsilon, positive_float{}),
                attr<"stash_type">(&LayerNormAttrs::stash_type, int_range{1, 1}));

// ---------------------------------------------------------------------------------------------------------------
// Shared checks

namespace norm_detail {

/// X: float32, or quantized int8/uint8 per-tensor with a matching quantization dtype.
inline Status check_data_input(const TensorType& t, const std::string& w) {
    if (t.dtype == DType::f32 && !t.quant) return ok_status();
    JANUS_CHECK(require_quantized(t, w));
    if (t.quant->dtype != t.dtype)
        return make_error(w, "", "quant-dtype-matches", "quantization dtype differs from storage dtype: " + t.str());
    return ok_status();
}

/// A parameter tensor: float32 of exactly `shape`.
inline Status check_param(const TensorType& t, const Shape& shape, const std::string& w) {
    if (t.dtype != DType::f32 || t.quant)
        return make_error(w, "", "parameter-dtype", "normalization parameters are float32 tensors, got " + t.str());
    if (!(t.shape == shape))
        return make_error(w, "", "parameter-shape",
                          "expected shape " + shape.str() + ", got " + t.shape.str());
    return ok_status();
}

/// Output of a quantized normalization: the caller's quantization, the input's dtype.
inline Status check_quant_output(const TensorType& in, const TensorType& out, const std::string& what) {
    if (out.dtype != in.dtype)
        return make_error(what, "output", "output-dtype",
                          "the output must have the input's element type " + std::string(dtype_name(in.dtype)) +
                              ", not " + out.str());
    if (in.dtype == DType::f32) return ok_status();
    return require_output_quant(out, what);
}

inline std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

/// Scale (input 1) and bias (input 2) values finite (rule `parameters-finite`).
template <class O>
Status check_finite(const std::vector<float>& gamma, const std::vector<float>& beta) {
    for (int k = 0; k < 2; ++k)
        for (float v : k == 0 ? gamma : beta)
            if (!std::isfinite(v))
                return make_error(op_what<O>(k + 1), "", "parameters-finite",
                                  "a normalization parameter is NaN or infinite");
    return ok_status();
}

/// x viewed as [rows, inner] (a copy when its layout cannot merge the axes).
inline Tensor rows_view(const Tensor& x, std::int64_t rows, std::int64_t inner) {
    Shape s;
    s.push_back(rows);
    s.push_back(inner);
    auto l = reshape(x.layout, s, "norm");
    if (l.ok()) return x.view(*l);
    const Tensor c = x.clone();
    return c.view(reshape(c.layout, s, "norm").value());
}

inline Shape shape2(std::int64_t a, std::int64_t b) {
    Shape s;
    s.push_back(a);
    s.push_back(b);
    return s;
}

}  // namespace norm_detail

// ---------------------------------------------------------------------------------------------------------------
// BatchNormalization fold (seeds A6, A7, A8)

/// The per-channel affine of an inference BatchNorm, in double: y = a[c] * x + b[c].
struct BatchNormAffine {
    std::vector<double> a, b;
};

/// Fold scale, B, mean, var (C entries each) and epsilon into the affine. Errors: "parameters-finite",
/// "variance-plus-epsilon-positive" (naming the parameter input and the channel).
inline Result<BatchNormAffine> fold_batch_norm_affine(std::span<const float> scale, std::span<const float> bias,
                                                      std::span<const float> mean, std::span<const float> var,
                                                      double epsilon, const std::string& what = "BatchNormalization") {
    BatchNormAffine f;
    const std::size_t C = scale.size();
    JANUS_ASSERT(bias.size() == C && mean.size() == C && var.size() == C);
    const std::span<const float> params[4] = {scale, bias, mean, var};
    for (int k = 0; k < 4; ++k)
        for (std::size_t c = 0; c < C; ++c)
            if (!std::isfinite(params[k][c]))
                return make_error(what + ".input[" + std::to_string(k + 1) + "]", "channel " + std::to_string(c),
                                  "parameters-finite", "a normalization parameter is NaN or infinite");
    for (std::size_t c = 0; c < C; ++c) {
        const double ve = static_cast<double>(var[c]) + epsilon;
        if (!(ve > 0.0))
            return make_error(what + ".input[4]", "channel " + std::to_string(c), "variance-plus-epsilon-positive",
                              "var + epsilon = " + numeric::detail::format_ratio(ve) +
                                  " must be > 0 (its square root divides)");
        const double a = static_cast<double>(scale[c]) / std::sqrt(ve);
        f.a.push_back(a);
        f.b.push_back(static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * a);
    }
    return f;
}

/// The integer plan of a quantized BatchNorm, per channel c (C entries each):
///   q_y = sat(rshift(rq(sign[c] * (q_x - offset[c]), multipliers[c]) + bias[c], frac_bits))
struct BatchNormPlan {
    static constexpr int frac_bits = 8;                     ///< F: fractional bits of the output before rshift
    std::vector<std::int32_t> offset;                       ///< zp_x; capped channels: the code nearest the mean
    std::vector<numeric::QuantizedMultiplier> multipliers;  ///< |a_c| s_x / s_y 2^F, ratio capped at 2^13
    std::vector<std::int32_t> sign;                         ///< -1 where a_c < 0 (negative gamma), else +1
    std::vector<std::int32_t> bias;                         ///< output-unit bias (zp_y included) times 2^F
    std::vector<bool> capped;                               ///< ratio capped (tiny variance / epsilon)
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the rq
};

inline constexpr double batch_norm_ratio_cap = 8192.0;                 // 2^13 LSB per input code
inline constexpr double batch_norm_capped_bias = 2048.0;               // |beta| allowed on capped channels
inline constexpr double batch_norm_bias_limit = 2097152.0 + 1024.0;    // 2^(29-F) + 1024 output LSB

/// Fold the affine into integers for input quantization `in` and output quantization `out` (per-tensor).
/// Exact value of output code q_x: v(q) = r s (q - mu) + beta, r = |a| s_x / s_y, s = sign(a), mu = the mean's
/// real-valued code (mean / s_x + zp_x), beta = b'/s_y + zp_y with b' = B (the mean term is in (q - mu)).
///   r <= 2^13: offset zp_x, bias = beta - r s (mu - zp_x) = b / s_y + zp_y clamped to +-(2^21 + 1024) (beyond,
///              |rq| <= 255 2^13 < 2^21 cannot bring the output back: the clamp changes nothing).
///   r > 2^13 (tiny variance or epsilon): offset m = the code nearest mu (clamped to the code range), multiplier
///              2^13, bias = clamp(v(m), +-1024). q = m gives sat(round(v(m))) exactly; q != m has |q - mu| >= 1/2,
///              so |r (q - mu)| > 4096 while |beta| <= 2048 ("batch-norm-fold-range" otherwise): the exact output
///              saturates in the direction s (q - m), and so does ours (|2^13 (q - m)| - 1024 > 512).
inline Result<BatchNormPlan> fold_batch_norm(const BatchNormAffine& f, std::span<const float> mean,
                                             const numeric::QuantParams& in, const numeric::QuantParams& out,
                                             numeric::Rounding rounding, const std::string& what = "BatchNormalization") {
    BatchNormPlan p;
    p.rounding = rounding;
    constexpr double F = static_cast<double>(1 << BatchNormPlan::frac_bits);
    const double sx = in.scale(), sy = out.scale();
    const double zx = in.zero_point(), zy = out.zero_point();
    for (std::size_t c = 0; c < f.a.size(); ++c) {
        const double ratio = std::fabs(f.a[c]) * sx / sy;
        const double sgn = f.a[c] < 0 ? -1.0 : 1.0;
        const bool cap = ratio > batch_norm_ratio_cap;
        double bias = 0;
        std::int32_t offset = in.zero_point();
        if (cap) {
            const double mu = static_cast<double>(mean[c]) / sx + zx;
            const double beta = (f.b[c] + f.a[c] * static_cast<double>(mean[c])) / sy + zy;  // B / s_y + zp_y
            if (std::fabs(beta) > batch_norm_capped_bias)
                return make_unsupported(what, "channel " + std::to_string(c), "batch-norm-fold-range",
                                        what + " channel " + std::to_string(c) + " on quantized tensors",
                                        "scale / sqrt(var + eps) gives " + numeric::detail::format_ratio(ratio) +
                                            " output steps per input step and B gives " +
                                            numeric::detail::format_ratio(beta) +
                                            " output steps: both huge, they may cancel and no capped plan is exact");
            const double m = std::clamp(std::nearbyint(mu), static_cast<double>(qmin(in.dtype)),
                                        static_cast<double>(qmax(in.dtype)));
            offset = static_cast<std::int32_t>(m);
            bias = std::clamp(ratio * sgn * (m - mu) + beta, -1024.0, 1024.0);
        } else {
            bias = std::clamp(f.b[c] / sy + zy, -batch_norm_bias_limit, batch_norm_bias_limit);
        }
        JANUS_TRY(auto m, numeric::quantize_multiplier(std::min(ratio, batch_norm_ratio_cap) * F,
                                                       what + ": channel " + std::to_string(c) + " ratio"));
        p.offset.push_back(offset);
        p.multipliers.push_back(m);
        p.sign.push_back(static_cast<std::int32_t>(sgn));
        p.bias.push_back(static_cast<std::int32_t>(std::nearbyint(bias * F)));
        p.capped.push_back(cap);
    }
    return p;
}

template <expr::Element T, expr::Element To>
auto batch_norm_quant_expr(const BatchNormPlan& p) {
    using namespace expr;
    const auto d = mul(sub(widen(In<0, T>{}), chan<std::int32_t>(std::span<const std::int32_t>(p.offset))),
                       chan<std::int32_t>(std::span<const std::int32_t>(p.sign)));
    const auto acc = add(rq(d, std::span<const numeric::QuantizedMultiplier>(p.multipliers), p.rounding),
                         chan<std::int32_t>(std::span<const std::int32_t>(p.bias)));
    return sat<To>(rshift(acc, BatchNormPlan::frac_bits));
}

struct BatchNormalization {
    static constexpr fixed_string name = "BatchNormalization";
    static constexpr int min_inputs = 5, max_inputs = 5;
    using Attrs = BatchNormAttrs;
    static constexpr auto schema = batch_norm_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_CHECK(check_arity<BatchNormalization>(in));
        JANUS_CHECK(norm_detail::check_data_input(in[0], op_what<BatchNormalization>(0)));
        if (in[0].shape.size() < 2)
            return make_error(op_what<BatchNormalization>(0), "", "input-rank",
                              "X must be [N, C, ...] (rank >= 2), got " + in[0].str());
        Shape c;
        c.push_back(in[0].shape[1]);
        for (int k = 1; k < 5; ++k) JANUS_CHECK(norm_detail::check_param(in[k], c, op_what<BatchNormalization>(k)));
        return TensorType{in[0].dtype, in[0].shape, std::nullopt};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        const std::string what = op_what<BatchNormalization>();
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(TensorType inferred, infer(types, a));
        JANUS_CHECK(norm_detail::check_quant_output(inferred, out, what));
        const auto scale = norm_detail::values(in[1]), bias = norm_detail::values(in[2]);
        const auto mean = norm_detail::values(in[3]), var = norm_detail::values(in[4]);
        JANUS_TRY(const BatchNormAffine f, fold_batch_norm_affine(scale, bias, mean, var, a.epsilon, what));
        const MapOptions mo{ctx.simd, 1};
        const Tensor xs[1] = {in[0]};
        if (in[0].dtype == DType::f32) {
            std::vector<float> fa, fb;
            for (std::size_t c = 0; c < f.a.size(); ++c) {
                fa.push_back(static_cast<float>(f.a[c]));
                fb.push_back(static_cast<float>(f.b[c]));
            }
            using namespace expr;
            const auto e = add(mul(In<0, float>{}, chan<float>(std::span<const float>(fa))),
                               chan<float>(std::span<const float>(fb)));
            Tensor y = Tensor::zeros(DType::f32, in[0].shape());
            JANUS_CHECK(run_map(e, std::span<const Tensor>(xs), y, mo, what));
            return y;
        }
        JANUS_TRY(const BatchNormPlan p, fold_batch_norm(f, mean, *in[0].quant, *out.quant, ctx.rounding, what));
        return visit_quant_dtype(in[0].dtype, [&](auto tag) -> Result<Tensor> {
            using T = typename decltype(tag)::type;
            const auto e = batch_norm_quant_expr<T, T>(p);
            JANUS_CHECK(expr::prove_ranges(e, {}, what));
            JANUS_CHECK(expr::prove_rq_shifts(e, {}, what));
            Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
            JANUS_CHECK(run_map(e, std::span<const Tensor>(xs), y, mo, what));
            return y;
        });
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Integer statistics and reciprocal square root (seed A9)

namespace norm_detail {
__extension__ typedef unsigned __int128 u128;  // __extension__: no -Wpedantic warning

/// floor(sqrt(n)), exact for every n < 2^126 (long double estimate, then integer correction).
inline u128 isqrt(u128 n) {
    u128 r = static_cast<u128>(std::sqrt(static_cast<long double>(n)));
    while (r > 0 && r * r > n) --r;
    while ((r + 1) * (r + 1) <= n) ++r;
    return r;
}

inline int bit_length(u128 v) {
    int b = 0;
    while (v != 0) v >>= 1, ++b;
    return b;
}
}  // namespace norm_detail

inline constexpr int norm_stat_frac_bits = 24;                      ///< f: D = K sqrt(var + eps') 2^f
inline constexpr std::int64_t norm_max_inner = 131071;               ///< K * 128^2 < 2^31
inline constexpr double norm_max_eps_ratio = 1099511627776.0;       ///< eps / s_x^2 <= 2^40

/// Everything the quantized Instance/Layer norm computes from types and parameters (rows excluded).
struct NormQuantPlan {
    std::int64_t inner = 0;                 ///< K, elements per statistics group
    std::int32_t centre = 0;                ///< 0 (int8) or 128 (uint8)
    int Z = 0, g = 0, F = 0;                ///< fractional bits: normalized value, gamma, output
    std::int32_t zlim = 0;                  ///< |z| bound (Samuelson: |x - mean| <= sd sqrt(K - 1))
    double eps_ratio = 0;                   ///< eps' = eps / s_x^2 (d^2 units)
    norm_detail::u128 eps_fx = 0;           ///< round(K^2 eps' 2^(2f)): epsilon in the units of V 2^(2f)
    numeric::QuantizedMultiplier m_cap{};   ///< 2^Z / sqrt(max(K - 1, 1)): rows with V = 0
    numeric::QuantizedMultiplier m_out{};   ///< Gs 2^(F - Z - g)
    std::vector<std::int32_t> gamma_int;    ///< Gi, |Gi| <= 2^g
    std::vector<std::int32_t> beta_fx;      ///< Bf (output units 2^-F)
    std::int32_t beta_limit = 0;            ///< |Bf| bound
    std::int32_t zp_out = 0;
    double extra_error_lsb = 0;             ///< e of the header's bound (vs exact: 1/2 + e)
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of every rq
};

/// Plan from K, the parameters (G = gamma / s_y per parameter entry), epsilon and the quantizations.
inline Result<NormQuantPlan> plan_norm_quant(std::int64_t K, std::span<const float> gamma, std::span<const float> beta,
                                             double epsilon, const numeric::QuantParams& in,
                                             const numeric::QuantParams& out, numeric::Rounding rounding,
                                             const std::string& what) {
    NormQuantPlan p;
    p.rounding = rounding;
    p.inner = K;
    p.centre = in.dtype == DType::u8 ? 128 : 0;
    p.zp_out = out.zero_point();
    if (K > norm_max_inner)
        return make_unsupported(
            what, "K = " + std::to_string(K), "accumulator-fits-int32",
            what + " of " + std::to_string(K) + " quantized elements per group",
            "the sum of squares of " + std::to_string(K) +
                " centred values (each <= 128^2) may exceed int32; at most 131071 elements per group");
    const double sx = in.scale(), sy = out.scale();
    p.eps_ratio = epsilon / (sx * sx);
    if (!(p.eps_ratio <= norm_max_eps_ratio))
        return make_error(what, "epsilon", "epsilon-range",
                          "epsilon / s_x^2 = " + numeric::detail::format_ratio(p.eps_ratio) +
                              " exceeds 2^40: the input's variance is invisible next to it");
    const double km1 = static_cast<double>(std::max<std::int64_t>(K - 1, 1));
    const int z_bal = static_cast<int>(std::floor((30.0 - std::log2(km1)) / 2.0));
    const int z_max = 28 - static_cast<int>(std::ceil(std::log2(255.0 * static_cast<double>(K) / std::sqrt(km1))));
    p.Z = std::max(0, std::min(z_bal, z_max));
    p.zlim = static_cast<std::int32_t>(
                 std::floor(std::sqrt(static_cast<double>(K - 1)) * std::ldexp(1.0, p.Z) * (1.0 + 0x1p-20))) + 2;
    p.g = 29 - static_cast<int>(std::ceil(std::log2(static_cast<double>(p.zlim))));
    p.eps_fx = static_cast<norm_detail::u128>(std::nearbyint(static_cast<long double>(K) * static_cast<long double>(K) *
                                                             static_cast<long double>(p.eps_ratio) *
                                                             std::ldexp(1.0L, 2 * norm_stat_frac_bits)));
    JANUS_TRY(p.m_cap, numeric::quantize_multiplier(std::ldexp(1.0, p.Z) / std::sqrt(km1), what + ": rstd cap"));

    double gs = 0;
    for (float v : gamma) gs = std::max(gs, std::fabs(static_cast<double>(v)) / sy);
    p.F = 8;
    if (gs > 0) {
        const int f = static_cast<int>(std::floor(p.Z + p.g - 1 - std::log2(gs)));
        if (f < 0)
            return make_unsupported(what, "scale", "normalization-scale-range", what + " scale on quantized tensors",
                                    "max |scale| / s_y = " + numeric::detail::format_ratio(gs) +
                                        " is too large for the int32 plan (outputs would saturate for any deviation)");
        p.F = std::min(8, f);
    }
    const double gs_div = gs > 0 ? gs : 1.0;
    for (float v : gamma)
        p.gamma_int.push_back(static_cast<std::int32_t>(std::nearbyint(static_cast<double>(v) / sy / gs_div *
                                                                       std::ldexp(1.0, p.g))));
    JANUS_TRY(p.m_out, numeric::quantize_multiplier(gs * std::ldexp(1.0, p.F - p.Z - p.g), what + ": output ratio"));
    const double blim = std::ldexp(1.0, 28 - p.F) + 1024.0;
    p.beta_limit = static_cast<std::int32_t>(std::ldexp(blim, p.F));
    for (std::size_t k = 0; k < gamma.size(); ++k) {
        const double b = beta.empty() ? 0.0 : static_cast<double>(beta[k]) / sy;
        p.beta_fx.push_back(static_cast<std::int32_t>(std::nearbyint(std::ldexp(std::clamp(b, -blim, blim), p.F))));
    }
    const double sk = std::sqrt(static_cast<double>(K - 1));
    p.extra_error_lsb = gs * std::ldexp(1.0, -p.Z) + sk * gs * std::ldexp(1.0, -(p.g + 1)) + sk * gs * 0x1p-20 +
                        1.5 * std::ldexp(1.0, -p.F);
    return p;
}

/// The per-row multiplier M_r = 2^(Z + f) / floor(sqrt(V 2^(2f) + eps_fx)), by integer division (one rounding of
/// the 31-bit mantissa, to nearest). V = K S2 - S1^2 >= 0. Rows with V = 0 get the cap (their c is 0).
inline numeric::QuantizedMultiplier norm_row_multiplier(std::int64_t V, const NormQuantPlan& p) {
    using norm_detail::u128;
    JANUS_ASSERT(V >= 0);
    if (V == 0) return p.m_cap;
    const u128 den2 = (static_cast<u128>(V) << (2 * norm_stat_frac_bits)) + p.eps_fx;
    const u128 D = norm_detail::isqrt(den2);  // >= 2^24 since V >= 1
    const int b = norm_detail::bit_length(D);  // D in [2^(b-1), 2^b), b <= 63
    u128 m = ((u128{1} << (30 + b)) + D / 2) / D;  // in (2^30, 2^31]
    int shift = p.Z + norm_stat_frac_bits + 1 - b;
    if (m == (u128{1} << 31)) m >>= 1, ++shift;
    if (shift < numeric::min_multiplier_shift) return {};  // below 2^-32: rounds every int32 product to 0
    JANUS_ASSERT(shift <= numeric::max_multiplier_shift);
    return {static_cast<std::int32_t>(m), shift};
}

namespace norm_detail {

/// The quantized element expression. G, B: chan (per row) or int32 inputs In<1>, In<2> (broadcast along rows).
template <expr::Element T, expr::Element To, expr::Expr GE, expr::Expr BE>
auto norm_quant_expr(const NormQuantPlan& p, std::span<const std::int32_t> s1,
                     std::span<const numeric::QuantizedMultiplier> rows, GE gamma, BE beta) {
    using namespace expr;
    const auto c = sub(mul(sub(widen(In<0, T>{}), cst(p.centre)), cst(static_cast<std::int32_t>(p.inner))),
                       chan<std::int32_t>(s1));
    const auto z = clamp(rq(c, rows, p.rounding), -p.zlim, p.zlim);
    const auto a = rq(mul(z, gamma), p.m_out, p.rounding);
    return sat<To>(add(rshift(add(a, beta), p.F), cst(p.zp_out)));
}

/// Row sums S1 = sum d and S2 = sum d^2 (d = x - centre) of x viewed as [R, K], by the reduce primitive.
template <class T>
Status row_sums(const Tensor& x2, const NormQuantPlan& p, bool simd, std::vector<std::int32_t>& s1,
                std::vector<std::int64_t>& s2, const std::string& what) {
    using namespace expr;
    const auto d = sub(widen(In<0, T>{}), cst(p.centre));
    const auto sq = mul(d, d);
    JANUS_CHECK(check_ranges(sq, {}, what + ": d^2"));
    const auto K = x2.shape()[1], R = x2.shape()[0];
    JANUS_CHECK(numeric::accumulator_range(sq.range({}), numeric::Interval::point(1), K, numeric::Interval::point(0),
                                           what + ": sum of squares"));
    Dims axes;
    axes.push_back(1);
    Tensor a = Tensor::zeros(DType::i32, shape2(R, 1));
    Tensor b = Tensor::zeros(DType::i32, shape2(R, 1));
    const In<0, std::int32_t> id;
    JANUS_CHECK(run_reduce<BinOp::add>(d, 0, id, x2, axes, a, ReduceOptions{simd, -1}, what));
    JANUS_CHECK(run_reduce<BinOp::add>(sq, 0, id, x2, axes, b, ReduceOptions{simd, -1}, what));
    s1 = a.to_vector<std::int32_t>();
    const auto v = b.to_vector<std::int32_t>();
    s2.assign(v.begin(), v.end());
    return ok_status();
}

/// Float path: y[R, K] = (x - mean) * rstd * gamma + beta. gamma_row/beta_row: per-row vectors (InstanceNorm) or
/// empty with g/b tensors [R, K] broadcast views (LayerNorm).
inline Status norm_float(const Tensor& x2, float eps, std::span<const float> gamma_row, std::span<const float> beta_row,
                         const Tensor* g, const Tensor* b, Tensor& y2, bool simd, const std::string& what) {
    using namespace expr;
    const auto R = x2.shape()[0], K = x2.shape()[1];
    Dims axes;
    axes.push_back(1);
    const In<0, float> x;
    Tensor mean = Tensor::zeros(DType::f32, shape2(R, 1));
    JANUS_CHECK(run_reduce<BinOp::add>(x, -0.0f, div(x, cstf(static_cast<float>(K))), x2, axes, mean,
                                       ReduceOptions{simd, -1}, what));
    const auto mv = mean.to_vector<float>();
    Tensor d = Tensor::zeros(DType::f32, shape2(R, K));
    const Tensor xs[1] = {x2};
    JANUS_CHECK(run_map(sub(x, chan<float>(std::span<const float>(mv))), std::span<const Tensor>(xs), d,
                        MapOptions{simd, 0}, what));
    Tensor var = Tensor::zeros(DType::f32, shape2(R, 1));
    JANUS_CHECK(run_reduce<BinOp::add>(mul(x, x), -0.0f, div(x, cstf(static_cast<float>(K))), d, axes, var,
                                       ReduceOptions{simd, -1}, what));
    std::vector<float> rstd;
    for (float v : var.to_vector<float>()) rstd.push_back(1.0f / std::sqrt(v + eps));
    const auto nrm = mul(x, chan<float>(std::span<const float>(rstd)));
    if (g == nullptr) {
        const auto e = add(mul(nrm, chan<float>(gamma_row)), chan<float>(beta_row));
        const Tensor ds[1] = {d};
        return run_map(e, std::span<const Tensor>(ds), y2, MapOptions{simd, 0}, what);
    }
    const auto e = add(mul(nrm, In<1, float>{}), In<2, float>{});
    const Tensor ds[3] = {d, *g, *b};
    return run_map(e, std::span<const Tensor>(ds), y2, MapOptions{simd, 0}, what);
}

/// One quantized normalization over x2 [R, K] into y2; per-row gamma/beta (InstanceNorm: `gamma_of_row` maps a row
/// to its parameter index) or per-inner-element (LayerNorm: gamma_of_row empty, parameters have K entries).
inline Status norm_quant(const Tensor& x2, const NormQuantPlan& p, std::span<const std::int64_t> param_of_row, Tensor& y2,
                  bool simd, const std::string& what) {
    return visit_quant_dtype(x2.dtype, [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        std::vector<std::int32_t> s1;
        std::vector<std::int64_t> s2;
        JANUS_CHECK(row_sums<T>(x2, p, simd, s1, s2, what));
        const std::int64_t rows = x2.shape()[0], K = p.inner;
        std::vector<numeric::QuantizedMultiplier> ms;
        for (std::int64_t r = 0; r < rows; ++r) {
            const auto u = static_cast<std::size_t>(r);
            const std::int64_t V = K * s2[u] - static_cast<std::int64_t>(s1[u]) * s1[u];  // <= 2^48
            ms.push_back(norm_row_multiplier(V, p));
        }
        const std::span<const std::int32_t> s1s(s1);
        const std::span<const numeric::QuantizedMultiplier> mss(ms);
        expr::InputRanges ranges;
        ranges.r[1] = {-(std::int64_t{1} << p.g), std::int64_t{1} << p.g};
        ranges.r[2] = {-std::int64_t{p.beta_limit}, p.beta_limit};
        ranges.set[1] = ranges.set[2] = true;
        const MapOptions mo{simd, 0};
        if (!param_of_row.empty()) {
            std::vector<std::int32_t> gr, br;
            for (auto k : param_of_row) {
                gr.push_back(p.gamma_int[static_cast<std::size_t>(k)]);
                br.push_back(p.beta_fx[static_cast<std::size_t>(k)]);
            }
            const auto e = norm_quant_expr<T, T>(p, s1s, mss, expr::chan<std::int32_t>(std::span<const std::int32_t>(gr)),
                                                    expr::chan<std::int32_t>(std::span<const std::int32_t>(br)));
            JANUS_CHECK(expr::prove_ranges(e, ranges, what));
            JANUS_CHECK(expr::prove_rq_shifts(e, ranges, what));
            const Tensor xs[1] = {x2};
            return run_map(e, std::span<const Tensor>(xs), y2, mo, what);
        }
        const auto e = norm_quant_expr<T, T>(p, s1s, mss, expr::In<1, std::int32_t>{}, expr::In<2, std::int32_t>{});
        JANUS_CHECK(expr::prove_ranges(e, ranges, what));
        JANUS_CHECK(expr::prove_rq_shifts(e, ranges, what));
        const Tensor gt = Tensor::from<std::int32_t>(shape2(1, K), p.gamma_int);
        const Tensor bt = Tensor::from<std::int32_t>(shape2(1, K), p.beta_fx);
        JANUS_TRY(Layout gl, broadcast_to(gt.layout, y2.shape(), what));
        JANUS_TRY(Layout bl, broadcast_to(bt.layout, y2.shape(), what));
        const Tensor xs[3] = {x2, gt.view(gl), bt.view(bl)};
        return run_map(e, std::span<const Tensor>(xs), y2, mo, what);
    });
}

}  // namespace norm_detail

// ---------------------------------------------------------------------------------------------------------------
// InstanceNormalization and LayerNormalization

struct InstanceNormalization {
    static constexpr fixed_string name = "InstanceNormalization";
    static constexpr int min_inputs = 3, max_inputs = 3;
    using Attrs = InstanceNormAttrs;
    static constexpr auto schema = instance_norm_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_CHECK(check_arity<InstanceNormalization>(in));
        JANUS_CHECK(norm_detail::check_data_input(in[0], op_what<InstanceNormalization>(0)));
        if (in[0].shape.size() < 3)
            return make_error(op_what<InstanceNormalization>(0), "", "input-rank",
                              "X must be [N, C, D1, ...] (rank >= 3), got " + in[0].str());
        Shape c;
        c.push_back(in[0].shape[1]);
        for (int k = 1; k < 3; ++k)
            JANUS_CHECK(norm_detail::check_param(in[k], c, op_what<InstanceNormalization>(k)));
        return TensorType{in[0].dtype, in[0].shape, std::nullopt};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        const std::string what = op_what<InstanceNormalization>();
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(TensorType inferred, infer(types, a));
        JANUS_CHECK(norm_detail::check_quant_output(inferred, out, what));
        const Shape& s = in[0].shape();
        const std::int64_t C = s[1], R = s[0] * C, K = R == 0 ? 0 : element_count(s) / R;
        const auto gamma = norm_detail::values(in[1]), beta = norm_detail::values(in[2]);
        JANUS_CHECK(norm_detail::check_finite<InstanceNormalization>(gamma, beta));
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        if (element_count(s) == 0) return y;
        const Tensor x2 = norm_detail::rows_view(in[0], R, K);
        Tensor y2 = y.view(reshape(y.layout, norm_detail::shape2(R, K)).value());
        if (in[0].dtype == DType::f32) {
            std::vector<float> gr, br;
            for (std::int64_t r = 0; r < R; ++r) {
                gr.push_back(gamma[static_cast<std::size_t>(r % C)]);
                br.push_back(beta[static_cast<std::size_t>(r % C)]);
            }
            JANUS_CHECK(norm_detail::norm_float(x2, a.epsilon, gr, br, nullptr, nullptr, y2, ctx.simd, what));
            return y;
        }
        JANUS_TRY(const NormQuantPlan p, plan_norm_quant(K, gamma, beta, a.epsilon, *in[0].quant, *out.quant, ctx.rounding, what));
        std::vector<std::int64_t> param_of_row;
        for (std::int64_t r = 0; r < R; ++r) param_of_row.push_back(r % C);
        JANUS_CHECK(norm_detail::norm_quant(x2, p, param_of_row, y2, ctx.simd, what));
        return y;
    }
};

struct LayerNormalization {
    static constexpr fixed_string name = "LayerNormalization";
    static constexpr int min_inputs = 2, max_inputs = 3;
    using Attrs = LayerNormAttrs;
    static constexpr auto schema = layer_norm_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<LayerNormalization>(in));
        JANUS_CHECK(norm_detail::check_data_input(in[0], op_what<LayerNormalization>(0)));
        JANUS_TRY(const int axis, normalize_axis(a.axis, in[0].shape.size(), op_what<LayerNormalization>() + ".axis"));
        Shape ps;
        for (int k = axis; k < in[0].shape.size(); ++k) ps.push_back(in[0].shape[k]);
        for (std::size_t k = 1; k < in.size(); ++k)
            JANUS_CHECK(norm_detail::check_param(in[k], ps, op_what<LayerNormalization>(static_cast<int>(k))));
        return TensorType{in[0].dtype, in[0].shape, std::nullopt};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        const std::string what = op_what<LayerNormalization>();
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(TensorType inferred, infer(types, a));
        JANUS_CHECK(norm_detail::check_quant_output(inferred, out, what));
        const Shape& s = in[0].shape();
        const int axis = normalize_axis(a.axis, s.size()).value();
        std::int64_t R = 1;
        for (int k = 0; k < axis; ++k) R *= s[k];
        const std::int64_t K = R == 0 ? 0 : element_count(s) / R;
        const auto gamma = norm_detail::values(in[1]);
        const auto beta = in.size() > 2 ? norm_detail::values(in[2]) : std::vector<float>(gamma.size(), 0.0f);
        JANUS_CHECK(norm_detail::check_finite<LayerNormalization>(gamma, beta));
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        if (element_count(s) == 0) return y;
        const Tensor x2 = norm_detail::rows_view(in[0], R, K);
        Tensor y2 = y.view(reshape(y.layout, norm_detail::shape2(R, K)).value());
        if (in[0].dtype == DType::f32) {
            // gamma / beta: K entries, broadcast over the rows with stride 0 (seed A7)
            const Tensor gt = Tensor::from<float>(norm_detail::shape2(1, K), gamma);
            const Tensor bt = Tensor::from<float>(norm_detail::shape2(1, K), beta);
            JANUS_TRY(Layout gl, broadcast_to(gt.layout, y2.shape(), what));
            JANUS_TRY(Layout bl, broadcast_to(bt.layout, y2.shape(), what));
            const Tensor gv = gt.view(gl), bv = bt.view(bl);
            JANUS_CHECK(norm_detail::norm_float(x2, a.epsilon, {}, {}, &gv, &bv, y2, ctx.simd, what));
            return y;
        }
        JANUS_TRY(const NormQuantPlan p, plan_norm_quant(K, gamma, beta, a.epsilon, *in[0].quant, *out.quant, ctx.rounding, what));
        JANUS_CHECK(norm_detail::norm_quant(x2, p, {}, y2, ctx.simd, what));
        return y;
    }
};

JANUS_OP_INSTANCES(BatchNormalization)
JANUS_OP_INSTANCES(InstanceNormalization)
JANUS_OP_INSTANCES(LayerNormalization)

}  // namespace janus::ops
