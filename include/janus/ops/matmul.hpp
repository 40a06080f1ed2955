#pragma once
// MatMul and Gemm (ONNX semantics), float32 and quantized int8/uint8: one `contract` (run_matmul_contract, the sums
// of products) followed by one epilogue `map` (scaling, C, requantization). No loop nest of their own.
// MatMulInteger (below MatMul) is the same contract without the epilogue: its int32 sums are the result.
//
// MatMul (ONNX MatMul-13, numpy matmul): A [.., M, K] x B [.., K, N] -> Y [.., M, N], batch axes broadcast numpy-style.
//   1-D promotion (views, no copy): a 1-D A [K] is seen as [1, K] and the inserted axis is removed from Y; a 1-D B
//   [K] is seen as [K, 1] and that axis is removed from Y ([K] x [K] -> the scalar shape []). Operands of rank 0 are
//   refused (matmul-rank-at-least-1).
// Gemm (ONNX Gemm-13): A [M, K] (transA: [K, M]), B [K, N] (transB: [N, K]), optional C unidirectionally
//   broadcastable to [M, N] (shapes [], [N], [1, N], [M, 1], [M, N], ...): Y = alpha * A' B' + beta * C. Transposes
//   are views; the per-axis quantization axis moves with them (numeric::transposed). A and B must be rank 2.
//
// float32: acc[.., m, n] = sum_k A[.., m, k] * B[.., k, n] in float, k ascending (the contract's order, so scalar and
//   SIMD results are bit-identical); MatMul returns acc; Gemm returns alpha * acc + beta * C (float, in that order;
//   without C: alpha * acc) — the ONNX formula, including beta * C when beta == 0 (inf * 0 = NaN as in ONNX/numpy).
//
// Quantized (docs/numerics.md "MatMul and Gemm"):
//   inputs  A, B int8 or uint8 (each its own storage type), real = s * (q - zp).
//           A per-tensor or per-row (per-axis along A's row axis M: rank-2 after promotion/transpose);
//           B per-tensor or per-column (per-axis along B's last axis N). At most one of them per-axis
//           (one-per-axis-operand): s_a[m] * s_b[n] would need a 2-D multiplier table. Per-axis along K or a batch
//           axis is refused (matmul-a-quant-axis, matmul-b-quant-axis): elements of one sum would have different
//           scales. 1-D operands are per-tensor only (their one axis is K).
//   output  int8/uint8 of A's storage type, per-tensor, with the CALLER's scale and zero point (seed A10,
//           require_output_quant).
//   acc     = sum_k (a[m, k] - zp_a[m]) * (b[k, n] - zp_b[n])     int32, proved by the contract (accumulator_range,
//                                                                 rule accumulator-fits-int32: int8 x int8 with any
//                                                                 zero points: K <= 33,025; symmetric B: K <= 66,311)
//   Gemm:   core = acc + C_int   when C is given and beta != 0 (C int32 in ACCUMULATOR units: its real value is
//                                s_a[m] * s_b[n] * C_int, zero point 0; if C carries QuantParams they must say exactly
//                                that: zero point 0 and scale float(s_a * s_b) within 1e-6 relative, rule gemm-c-quant).
//                                Requires beta == alpha (then alpha * AB + beta * C = alpha * s_a s_b (acc + C_int)
//                                exactly), otherwise gemm-quantized-beta; beta == 0 ignores C (still type-checked).
//           core = -core         when alpha < 0 (exact; range-proved: int32 negation of the proved interval), and the
//                                multiplier uses |alpha|. alpha == 0 gives the zero multiplier: Y = zp_y.
//   y       = sat(rq(clamp(core, -L, L), |alpha| * s_a[m] * s_b[n] / s_y) + zp_y)
//           rq rounds as the plan says (MatMulQuantPlan::rounding, round_double by default), per-tensor or
//           per-channel along the output's row axis
//           (per-row A) or last axis (per-column B). The clamp changes no result: L = max over channels of
//           ceil(512 / multiplier) (|core| >= L saturates the output anyway, as in ops/binary.hpp), and it keeps
//           round_double's left shift inside int32 whenever the scale ratio is >= 1.
//   Proofs: the contract's acc_range (plus the range of C's values) is fed to expr::prove_ranges
//           (intermediate-fits-int32) and numeric::requantize_range per multiplier
//           (requantize-left-shift-fits-int32) before the epilogue runs. Multiplier rules: ratio-below-2^30.
//   Error:  |y - Q(alpha * A_real B'_real + beta * C_real)| <= 1 LSB (Q = round half to even, saturate). Measured
//           (tests/ops_matmul/random.cpp): MatMul 23 of 11,284 outputs off by 1, Gemm 23 of 10,114, never 2; the
//           causes are the Q31 rounding of the ratio and round_double's two roundings.
//
// Seed B12 (weights moved to the left operand): matmul_swap_operands turns Y = A B into Y^T = B^T A^T with each
//   operand a transposed VIEW (last two axes) whose quantization axis moves with it: a per-row left weight becomes a
//   per-column right weight and vice versa. matmul_unswap_output transposes the result back. Keeping the old axis is
//   not a silent numeric change: it lands on the reduced axis K and the op refuses it by rule.
//
// Rules (errors name the op input): input-count, float-or-quantized, quantized-input, same-kind-operands,
//   quant-dtype-matches, matmul-rank-at-least-1, matmul-inner-dims-match, broadcast-compatible, rank-at-most-6,
//   matmul-a-quant-axis, matmul-b-quant-axis, one-per-axis-operand, output-shape, quantized-output,
//   output-quantization-required, per-tensor-quantization, output-dtype, ratio-below-2^30, accumulator-fits-int32,
//   intermediate-fits-int32, requantize-left-shift-fits-int32; Gemm also gemm-rank-2, gemm-c-dtype,
//   gemm-c-broadcastable, gemm-quantized-beta, gemm-c-quant, attribute-range (transA/transB 0 or 1, alpha/beta
//   finite); swap: swap-operands-rank-at-least-2, swap-output-rank-matches.
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
#include <janus/ops/binary.hpp>
#include <janus/ops/contract.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

struct GemmAttrs {
    float alpha = 1.0f;
    float beta = 1.0f;
    std::int64_t transA = 0;
    std::int64_t transB = 0;
    friend bool operator==(const GemmAttrs&, const GemmAttrs&) = default;
};

inline constexpr auto gemm_schema =
    attr_schema(attr<"alpha">(&GemmAttrs::alpha, finite_float{}), attr<"beta">(&GemmAttrs::beta, finite_float{}),
                attr<"transA">(&GemmAttrs::transA, int_range{0, 1}), attr<"transB">(&GemmAttrs::transB, int_range{0, 1}));

/// Which operand carries per-axis parameters, i.e. along which output axis the requantization varies.
enum class MatMulPerAxis { none, rows, columns };

/// Everything a quantized matmul needs besides the tensors, decided from types alone.
struct MatMulQuantPlan {
    MatMulPerAxis per_axis = MatMulPerAxis::none;
    std::vector<std::int32_t> zp_a;                         ///< length M: pre_a's chan (row m); per-tensor repeated
    std::vector<std::int32_t> zp_b;                         ///< length N: pre_b's chan (column n)
    std::vector<double> ratios;                             ///< |alpha| s_a s_b / s_y: 1 (per-tensor), M or N values
    std::vector<numeric::QuantizedMultiplier> multipliers;  ///< quantize_multiplier(ratios[c])
    std::int32_t clamp_limit = 0;                           ///< L of the header contract
    std::int32_t zp_y = 0;
    bool negate = false;  ///< alpha < 0
    bool add_c = false;   ///< Gemm: C enters the accumulator (given and beta != 0)
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the epilogue's rq
};

/// Seed B12: Y = A B rewritten as Y^T = B^T A^T.
struct MatMulSwap {
    Tensor a;          ///< new left operand: the old right operand, last two axes transposed, quantization axis moved
    Tensor b;          ///< new right operand: the old left operand, transposed likewise
    Dims output_perm;  ///< apply to the new product's axes to recover the original output (swaps the last two)
};

namespace detail {

inline Dims swap_last_two_perm(int rank) {
    Dims p;
    for (int k = 0; k < rank; ++k) p.push_back(k);
    std::swap(p[rank - 2], p[rank - 1]);
    return p;
}

/// The view of t with its axes permuted by perm; per-axis quantization follows (numeric::transposed).
inline Result<Tensor> permuted_view(const Tensor& t, const Dims& perm, const std::string& what) {
    JANUS_TRY(Layout l, transpose(t.layout, perm, what));
    Tensor v = t.view(l);
    if (v.quant) v.quant = numeric::transposed(*v.quant, perm);
    return v;
}

inline TensorType permuted_type(const TensorType& t, const Dims& perm) {
    TensorType r = t;
    r.shape = permute(t.shape, perm);
    if (r.quant) r.quant = numeric::transposed(*r.quant, perm);
    return r;
}

/// ONNX 1-D promotion of a MatMul operand: A [K] -> [1, K] (insert at 0), B [K] -> [K, 1] (insert at 1).
inline TensorType promoted_type(const TensorType& t, int insert_at) {
    if (t.shape.size() != 1) return t;
    TensorType r = t;
    r.shape.insert(insert_at, 1);
    if (r.quant) r.quant = numeric::unsqueezed(*r.quant, Dims{insert_at});
    return r;
}

/// Float (false) or quantized (true) operand; quantized ones are checked for consistent parameters.
inline Result<bool> matmul_operand_kind(const TensorType& t, const std::string& what) {
    if (t.dtype == DType::f32 && !t.quant) return false;
    if (!is_quantized_storage(t.dtype))
        return make_unsupported(what, "", "float-or-quantized", what + " type " + t.str(),
                                "Janus takes float32 or a quantized int8/uint8 tensor");
    JANUS_CHECK(require_quantized(t, what, true));
    if (t.quant->dtype != t.dtype)
        return make_error(what, "", "quant-dtype-matches", "quantization dtype differs from storage dtype: " + t.str());
    JANUS_CHECK(numeric::check_quant_fits(*t.quant, t.shape, what + ".quant"));
    return true;
}

/// Both operands of one kind.
inline Result<bool> matmul_kind(const TensorType& a, const TensorType& b, const std::string& wa,
                                const std::string& wb) {
    JANUS_TRY(bool qa, matmul_operand_kind(a, wa));
    JANUS_TRY(bool qb, matmul_operand_kind(b, wb));
    if (qa != qb)
        return make_error(qa ? wb : wa, "", "same-kind-operands",
                          "one operand is quantized and the other float32 (" + a.str() + " x " + b.str() +
                              "); dequantize or quantize explicitly");
    return qa;
}

/// Per-axis rules on the canonical operands a [.., M, K], b [.., K, N].
/// `scaled` = false (MatMulInteger: zero points only, no multiplier table) lets per-row A and per-column B meet.
inline Result<MatMulPerAxis> matmul_per_axis(const TensorType& a, const TensorType& b, const std::string& wa,
                                             const std::string& wb, bool scaled = true) {
    const bool pa = !a.quant->per_tensor(), pb = !b.quant->per_tensor();
    if (pa && *a.quant->axis != a.shape.size() - 2)
        return make_error(wa, "axis " + std::to_string(*a.quant->axis), "matmul-a-quant-axis",
                          "the left operand " + a.str() + " (as multiplied, [.., M, K]) may be quantized per tensor "
                          "or per row (axis " + std::to_string(a.shape.size() - 2) +
                              "); along K or a batch axis one sum would mix scales");
    if (pb && *b.quant->axis != b.shape.size() - 1)
        return make_error(wb, "axis " + std::to_string(*b.quant->axis), "matmul-b-quant-axis",
                          "the right operand " + b.str() + " (as multiplied, [.., K, N]) may be quantized per tensor "
                          "or per column (axis " + std::to_string(b.shape.size() - 1) +
                              "); along K or a batch axis one sum would mix scales");
    if (pa && pb && scaled)
        return make_error(wb, "", "one-per-axis-operand",
                          "per-row A and per-column B together need one multiplier per (row, column); quantize one "
                          "of them per tensor");
    return pa ? MatMulPerAxis::rows : pb ? MatMulPerAxis::columns : MatMulPerAxis::none;
}

/// A float product is float32 of the product's shape.
inline Status check_float_output(const TensorType& out, const Shape& shape, const std::string& what) {
    if (!(out.shape == shape))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape.str() + " differs from the product's " + shape.str());
    if (out.dtype != DType::f32)
        return make_error(what, "output", "output-dtype", "a float product is float32, not " + out.str());
    return ok_status();
}

/// The quantized output type rules shared by MatMul and Gemm.
inline Status check_matmul_output(const TensorType& out, DType expected, const Shape& shape, const std::string& what) {
    if (!(out.shape == shape))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape.str() + " differs from the product's " + shape.str());
    if (!is_quantized_storage(out.dtype))
        return make_error(what, "output", "quantized-output", "a quantized matmul produces int8/uint8, not " +
                                                                  out.str());
    if (out.dtype != expected)
        return make_error(what, "output", "output-dtype",
                          "the output is stored as the left operand's type " + std::string(dtype_name(expected)) +
                              ", not " + out.str());
    return require_output_quant(out, what);
}

/// Multipliers, zero points and the clamp limit from canonical types a [.., M, K], b [.., K, N].
inline Result<MatMulQuantPlan> plan_matmul_quant(const TensorType& a, const TensorType& b, const TensorType& out,
                                                 double alpha, MatMulPerAxis per_axis, numeric::Rounding rounding,
                                                 const std::string& what) {
    MatMulQuantPlan p;
    p.per_axis = per_axis;
    p.rounding = rounding;
    const std::int64_t M = a.shape[a.shape.size() - 2], N = b.shape[b.shape.size() - 1];
    const auto& qa = *a.quant;
    const auto& qb = *b.quant;
    for (std::int64_t m = 0; m < M; ++m) p.zp_a.push_back(qa.zero_point(static_cast<std::size_t>(m)));
    for (std::int64_t n = 0; n < N; ++n) p.zp_b.push_back(qb.zero_point(static_cast<std::size_t>(n)));
    p.zp_y = out.quant->zero_point();
    p.negate = alpha < 0;
    const double s_y = out.quant->scale();
    const std::int64_t channels = per_axis == MatMulPerAxis::rows ? M : per_axis == MatMulPerAxis::columns ? N : 1;
    std::int64_t limit = 0;
    for (std::int64_t c = 0; c < channels; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const double ratio = std::fabs(alpha) * static_cast<double>(qa.scale(k)) * static_cast<double>(qb.scale(k)) / s_y;
        JANUS_TRY(numeric::QuantizedMultiplier m,
                  numeric::quantize_multiplier(ratio, what + ": |alpha| s_a s_b / s_y" +
                                                          (channels > 1 ? " (channel " + std::to_string(c) + ")" : "")));
        p.ratios.push_back(ratio);
        p.multipliers.push_back(m);
        limit = std::max<std::int64_t>(limit, saturation_limit(std::numeric_limits<std::int32_t>::max(), m));
    }
    p.clamp_limit = static_cast<std::int32_t>(limit);
    return p;
}

/// round_double's left shift must fit int32 for every value reaching rq (numeric::requantize_range).
inline Status prove_requantize(numeric::Interval x, const MatMulQuantPlan& p, DType out, const std::string& what) {
    for (std::size_t c = 0; c < p.multipliers.size(); ++c)
        JANUS_CHECK(numeric::requantize_range(x, p.multipliers[c], p.zp_y, qmin(out), qmax(out),
                                              what + (p.multipliers.size() > 1 ? " (channel " + std::to_string(c) + ")"
                                                                               : std::string())));
    return ok_status();
}

/// Shapes of a product from types: the promoted operands, the accumulator shape and the output shape.
struct MatMulShapes {
    TensorType a, b;  ///< promoted (rank >= 2), quantization axes moved along
    Shape acc;        ///< [batch.., M, N]
    Shape out;        ///< acc without the promoted axes
    bool a_promoted = false, b_promoted = false;
    bool quantized = false;
};

/// MatMul's shape rules (numpy matmul with 1-D promotion), errors named after op O.
template <class O>
Result<MatMulShapes> matmul_shapes(std::span<const TensorType> in) {
    JANUS_CHECK(check_arity<O>(in));
    const std::string wa = op_what<O>(0), wb = op_what<O>(1);
    MatMulShapes s;
    JANUS_TRY(s.quantized, matmul_kind(in[0], in[1], wa, wb));
    for (int k = 0; k < 2; ++k)
        if (in[k].shape.size() < 1)
            return make_error(op_what<O>(k), "", "matmul-rank-at-least-1",
                              std::string(O::name.view()) + " operands need rank >= 1, got the scalar " + in[k].str());
    s.a_promoted = in[0].shape.size() == 1;
    s.b_promoted = in[1].shape.size() == 1;
    s.a = promoted_type(in[0], 0);
    s.b = promoted_type(in[1], 1);
    JANUS_TRY(s.acc, matmul_output_shape(s.a.shape, s.b.shape, op_what<O>()));
    s.out = s.acc;
    const int r = s.acc.size();
    if (s.b_promoted) s.out.erase(r - 1);
    if (s.a_promoted) s.out.erase(r - 2);
    return s;
}

/// The operands with 1-D promotion applied as views, and the accumulator's promoted unit axes (removed from the
/// output by views).
struct MatMulOperands {
    Tensor a, b;
    Dims removed;
};
template <class O>
Result<MatMulOperands> matmul_promote(const Tensor& a0, const Tensor& b0, const MatMulShapes& s) {
    MatMulOperands r{a0, b0, {}};
    if (s.a_promoted) {
        JANUS_TRY(Layout l, unsqueeze(r.a.layout, Dims{0}, op_what<O>(0)));
        r.a = r.a.view(l);
        r.a.quant = s.a.quant;
    }
    if (s.b_promoted) {
        JANUS_TRY(Layout l, unsqueeze(r.b.layout, Dims{1}, op_what<O>(1)));
        r.b = r.b.view(l);
        r.b.quant = s.b.quant;
    }
    const int rank = s.acc.size();
    if (s.a_promoted) r.removed.push_back(rank - 2);
    if (s.b_promoted) r.removed.push_back(rank - 1);
    return r;
}

/// The quantized kernel on canonical views a [.., M, K], b [.., K, N]: contract, then the epilogue map into y (a view
/// with the accumulator's shape). c: int32 view broadcast to that shape (or nullptr) and the range of its values.
inline Status run_matmul_quant(const Tensor& a, const Tensor& b, const Tensor* c, numeric::Interval c_range,
                        const MatMulQuantPlan& p, Tensor& y, const OpContext& ctx, const std::string& what) {
    using namespace expr;
    const std::span<const std::int32_t> zpa(p.zp_a), zpb(p.zp_b);
    return visit_quant_dtype(a.dtype, [&](auto ta) -> Status {
        return visit_quant_dtype(b.dtype, [&](auto tb) -> Status {
            using Ta = typename decltype(ta)::type;
            using Tb = typename decltype(tb)::type;
            const auto pre_a = sub(widen(In<0, Ta>{}), chan<std::int32_t>(zpa));
            const auto pre_b = sub(widen(In<0, Tb>{}), chan<std::int32_t>(zpb));
            JANUS_TRY(Contracted k, run_matmul_contract(pre_a, pre_b, a, b, nullptr, ContractOptions{ctx.simd}, what));
            InputRanges r;
            r.r[0] = k.acc_range;
            r.set[0] = true;
            r.r[1] = c_range;
            r.set[1] = c != nullptr;
            const int rank = k.acc.rank();
            const int channel_axis = p.per_axis == MatMulPerAxis::rows      ? rank - 2
                                     : p.per_axis == MatMulPerAxis::columns ? rank - 1
                                                                            : -1;
            const std::span<const numeric::QuantizedMultiplier> mult(p.multipliers);
            return visit_quant_dtype(y.dtype, [&](auto to) -> Status {
                using To = typename decltype(to)::type;
                auto finish = [&](auto core) -> Status {
                    const auto clamped = clamp(core, -p.clamp_limit, p.clamp_limit);
                    const auto q = p.per_axis == MatMulPerAxis::none ? rq(clamped, mult[0], p.rounding)
                                                                       : rq(clamped, mult, p.rounding);
                    const auto e = sat<To>(add(q, cst(p.zp_y)));
                    JANUS_CHECK(prove_ranges(e, r, what + ": epilogue"));
                    JANUS_CHECK(prove_requantize(clamped.range(r), p, y.dtype, what + ": requantization"));
                    std::vector<Tensor> ins{k.acc};
                    if (c) ins.push_back(*c);
                    return run_map(e, std::span<const Tensor>(ins), y, MapOptions{ctx.simd, channel_axis},
                                   what + ": epilogue");
                };
                auto signed_core = [&](auto core) -> Status { return p.negate ? finish(neg(core)) : finish(core); };
                if (c) return signed_core(add(In<0, std::int32_t>{}, In<1, std::int32_t>{}));
                return signed_core(In<0, std::int32_t>{});
            });
        });
    });
}

}  // namespace detail

/// Seed B12: the operands of Y^T = B^T A^T from those of Y = A B (both rank >= 2; batch axes untouched). Views only;
/// per-axis quantization moves with the transpose (a per-row left operand becomes a per-column right operand).
/// Applying it to its own result gives back the original operands.
inline Result<MatMulSwap> matmul_swap_operands(const Tensor& a, const Tensor& b,
                                               const std::string& what = "matmul_swap_operands") {
    if (a.rank() < 2 || b.rank() < 2)
        return make_error(what, a.rank() < 2 ? "a" : "b", "swap-operands-rank-at-least-2",
                          "swapping needs both operands of rank >= 2 (a 1-D operand's promotion is not a transpose)");
    JANUS_TRY(Tensor bt, detail::permuted_view(b, detail::swap_last_two_perm(b.rank()), what));
    JANUS_TRY(Tensor at, detail::permuted_view(a, detail::swap_last_two_perm(a.rank()), what));
    const int out_rank = std::max(a.rank(), b.rank());
    return MatMulSwap{bt, at, detail::swap_last_two_perm(out_rank)};
}

/// The original product from the swapped one: a view with the last two axes transposed back.
inline Result<Tensor> matmul_unswap_output(const Tensor& y_swapped, const MatMulSwap& s,
                                           const std::string& what = "matmul_unswap_output") {
    if (y_swapped.rank() != s.output_perm.size())
        return make_error(what, "y", "swap-output-rank-matches",
                          "the swapped product has rank " + std::to_string(y_swapped.rank()) + ", expected " +
                              std::to_string(s.output_perm.size()));
    return detail::permuted_view(y_swapped, s.output_perm, what);
}

// ---------------------------------------------------------------------------------------------------------------
// MatMul

struct MatMul {
    static constexpr fixed_string name = "MatMul";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 2;
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;

    using Shapes = detail::MatMulShapes;
    static Result<Shapes> shapes(std::span<const TensorType> in) { return detail::matmul_shapes<MatMul>(in); }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_TRY(Shapes s, shapes(in));
        if (s.quantized) JANUS_CHECK(detail::matmul_per_axis(s.a, s.b, op_what<MatMul>(0), op_what<MatMul>(1)));
        return TensorType{s.quantized ? in[0].dtype : DType::f32, s.out, std::nullopt};
    }

    /// The quantized plan from types (out: the caller's output type).
    using Plan = MatMulQuantPlan;
    static Result<Plan> plan(std::span<const TensorType> in, const Attrs&, const TensorType& out,
                             numeric::Rounding rounding) {
        JANUS_TRY(Shapes s, shapes(in));
        if (!s.quantized)
            return make_error(op_what<MatMul>(0), "", "quantized-input", "plan() is for quantized operands");
        JANUS_TRY(MatMulPerAxis pa, detail::matmul_per_axis(s.a, s.b, op_what<MatMul>(0), op_what<MatMul>(1)));
        JANUS_CHECK(detail::check_matmul_output(out, in[0].dtype, s.out, op_what<MatMul>()));
        return detail::plan_matmul_quant(s.a, s.b, out, 1.0, pa, rounding, op_what<MatMul>());
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs&, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<MatMul>(in));
        const std::string what = op_what<MatMul>();
        const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
        JANUS_TRY(Shapes s, shapes(types));
        JANUS_TRY(const detail::MatMulOperands ops, detail::matmul_promote<MatMul>(in[0], in[1], s));
        const Tensor &a = ops.a, &b = ops.b;
        const Dims& removed = ops.removed;
        if (!s.quantized) {
            JANUS_CHECK(detail::check_float_output(out, s.out, what));
            JANUS_TRY(Contracted k, run_matmul_contract(expr::In<0, float>{}, expr::In<0, float>{}, a, b, nullptr,
                                                        ContractOptions{ctx.simd}, what));
            if (removed.empty()) return k.acc;
            JANUS_TRY(Layout l, squeeze(k.acc.layout, removed, what + ".output"));
            return k.acc.view(l);
        }
        JANUS_TRY(MatMulQuantPlan p, plan(types, Attrs{}, out, ctx.rounding));
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        Tensor yv = y;
        if (!removed.empty()) {
            JANUS_TRY(Layout l, unsqueeze(y.layout, removed, what + ".output"));
            yv = y.view(l);
        }
        JANUS_CHECK(detail::run_matmul_quant(a, b, nullptr, numeric::Interval::point(0), p, yv, ctx, what));
        return y;
    }
};

/// MatMulInteger (ONNX opset 10): MatMul's shapes and contract on integer operands, without requantization:
///   Y[.., m, n] = sum_k (A[.., m, k] - zp_a[m]) * (B[.., k, n] - zp_b[n])     int32
/// The sum is the contract's, with its headroom proved (accumulator-fits-int32). In Janus the zero points are the
/// operands' quantization (the importer moves ONNX's a_zero_point and b_zero_point inputs there, with scale 1):
/// A per-tensor or per-row, B per-tensor or per-column, both per-axis at once allowed (no scales meet); the scales
/// do not enter. The output is int32 of MatMul's shape, without quantization.
struct MatMulInteger {
    static constexpr fixed_string name = "MatMulInteger";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 2;
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;

    static Result<detail::MatMulShapes> shapes(std::span<const TensorType> in) {
        JANUS_CHECK(check_arity<MatMulInteger>(in));
        // int8/uint8 whose quantization holds the zero points
        for (int k = 0; k < 2; ++k) JANUS_CHECK(require_quantized(in[k], op_what<MatMulInteger>(k), true));
        JANUS_TRY(detail::MatMulShapes s, detail::matmul_shapes<MatMulInteger>(in));
        JANUS_CHECK(detail::matmul_per_axis(s.a, s.b, op_what<MatMulInteger>(0), op_what<MatMulInteger>(1), false));
        return s;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_TRY(detail::MatMulShapes s, shapes(in));
        return TensorType{DType::i32, s.out, std::nullopt};
    }

    /// The plan: the zero points the sum subtracts, as a MatMulQuantPlan with zp_a[m] and zp_b[n] only (no
    /// multipliers, zp_y 0, no requantization: the rounding does not enter): what run() uses, and what
    /// emit::lower_matmul's int32 output takes.
    using Plan = MatMulQuantPlan;
    static Result<Plan> plan(std::span<const TensorType> in, const Attrs&, const TensorType& out, numeric::Rounding) {
        JANUS_CHECK(check_arity<MatMulInteger>(in));
        JANUS_TRY(detail::MatMulShapes s, shapes(in));
        if (!(out.shape == s.out) || out.dtype != DType::i32 || out.quant)
            return make_error(op_what<MatMulInteger>(), "output", "output-dtype",
                              "the output is int32 " + s.out.str() + " without quantization, not " + out.str());
        const std::int64_t M = s.a.shape[s.a.shape.size() - 2], N = s.b.shape[s.b.shape.size() - 1];
        MatMulQuantPlan p;
        for (std::int64_t m = 0; m < M; ++m) p.zp_a.push_back(s.a.quant->zero_point(static_cast<std::size_t>(m)));
        for (std::int64_t n = 0; n < N; ++n) p.zp_b.push_back(s.b.quant->zero_point(static_cast<std::size_t>(n)));
        return p;
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs&, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<MatMulInteger>(in));
        const std::string what = op_what<MatMulInteger>();
        const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
        JANUS_TRY(const MatMulQuantPlan zp, plan(types, Attrs{}, out, ctx.rounding));
        JANUS_TRY(detail::MatMulShapes s, shapes(types));
        JANUS_TRY(const detail::MatMulOperands ops, detail::matmul_promote<MatMulInteger>(in[0], in[1], s));
        const std::vector<std::int32_t>& zp_a = zp.zp_a;
        const std::vector<std::int32_t>& zp_b = zp.zp_b;
        return visit_quant_dtype(in[0].dtype, [&](auto ta) -> Result<Tensor> {
            return visit_quant_dtype(in[1].dtype, [&](auto tb) -> Result<Tensor> {
                using namespace expr;
                using Ta = typename decltype(ta)::type;
                using Tb = typename decltype(tb)::type;
                const auto pre_a = sub(widen(In<0, Ta>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_a)));
                const auto pre_b = sub(widen(In<0, Tb>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_b)));
                JANUS_TRY(Contracted k, run_matmul_contract(pre_a, pre_b, ops.a, ops.b, nullptr,
                                                            ContractOptions{ctx.simd}, what));
                if (ops.removed.empty()) return k.acc;
                JANUS_TRY(Layout l, squeeze(k.acc.layout, ops.removed, what + ".output"));
                return k.acc.view(l);
            });
        });
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Gemm

struct Gemm {
    static constexpr fixed_string name = "Gemm";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 3;
    using Attrs = GemmAttrs;
    static constexpr auto schema = gemm_schema;

    struct Shapes {
        TensorType a, b;  ///< A' [M, K] and B' [K, N] (transposes applied, quantization axes moved)
        Shape out;        ///< [M, N]
        bool has_c = false;
        bool quantized = false;
    };

    static Result<Shapes> shapes(std::span<const TensorType> in, const Attrs& at) {
        JANUS_CHECK(check_arity<Gemm>(in));
        const std::string wa = op_what<Gemm>(0), wb = op_what<Gemm>(1);
        Shapes s;
        for (int k = 0; k < 2; ++k)
            if (in[k].shape.size() != 2)
                return make_error(op_what<Gemm>(k), "", "gemm-rank-2",
                                  "Gemm operands must be matrices (rank 2), got " + in[k].str());
        JANUS_TRY(s.quantized, detail::matmul_kind(in[0], in[1], wa, wb));
        s.a = at.transA ? detail::permuted_type(in[0], Dims{1, 0}) : in[0];
        s.b = at.transB ? detail::permuted_type(in[1], Dims{1, 0}) : in[1];
        JANUS_TRY(s.out, matmul_output_shape(s.a.shape, s.b.shape, op_what<Gemm>()));
        s.has_c = in.size() == 3;
        if (s.has_c) {
            const TensorType& c = in[2];
            const std::string wc = op_what<Gemm>(2);
            const DType want = s.quantized ? DType::i32 : DType::f32;
            if (c.dtype != want || (!s.quantized && c.quant))
                return make_error(wc, "", "gemm-c-dtype",
                                  s.quantized ? "a quantized Gemm takes C as an int32 bias in accumulator units "
                                                "(scale s_a * s_b, zero point 0), got " + c.str()
                                              : "a float Gemm takes a float32 C, got " + c.str());
            if (c.shape.size() > 2 || !broadcast_to(Layout::contiguous(c.shape, 4), s.out).ok())
                return make_error(wc, "", "gemm-c-broadcastable",
                                  "C " + c.shape.str() + " does not broadcast (unidirectionally) to [M, N] = " +
                                      s.out.str());
        }
        return s;
    }

    /// Quantized C: beta and C's own parameters (types only).
    static Status check_quant_c(std::span<const TensorType> in, const Attrs& at, const Shapes& s) {
        if (!s.has_c) return ok_status();
        const std::string wc = op_what<Gemm>(2);
        if (at.beta != 0.0f && at.beta != at.alpha)
            return make_unsupported(wc, "attribute beta", "gemm-quantized-beta",
                                    "Gemm beta " + std::to_string(at.beta) + " with alpha " + std::to_string(at.alpha) +
                                        " on quantized operands",
                                    "a quantized Gemm adds C to the int32 accumulator before one requantization, "
                                    "which is exact only for beta == alpha (or beta == 0: C ignored)");
        const TensorType& c = in[2];
        if (!c.quant) return ok_status();
        JANUS_CHECK(numeric::check_quant_fits(*c.quant, c.shape, wc + ".quant"));
        for (auto z : c.quant->zero_points)
            if (z != 0)
                return make_error(wc, "", "gemm-c-quant", "C's zero point must be 0, got " + std::to_string(z));
        const std::int64_t M = s.out[0], N = s.out[1];
        const int rc = c.shape.size();
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                std::size_t ch = 0;
                if (c.quant->axis) {
                    const int ax = *c.quant->axis;
                    const std::int64_t coord = (ax + 2 - rc) == 0 ? m : n;  // C's axis in output coordinates
                    ch = c.shape[ax] == 1 ? 0 : static_cast<std::size_t>(coord);
                }
                const double want = static_cast<double>(static_cast<float>(
                    static_cast<double>(s.a.quant->scale(static_cast<std::size_t>(m))) *
                    static_cast<double>(s.b.quant->scale(static_cast<std::size_t>(n)))));
                const double got = c.quant->scale(ch);
                if (std::fabs(got - want) > 1e-6 * want)
                    return make_error(wc, "row " + std::to_string(m) + " column " + std::to_string(n), "gemm-c-quant",
                                      "C's scale " + std::to_string(got) + " differs from s_a * s_b = " +
                                          std::to_string(want) + "; C must be in accumulator units");
            }
        return ok_status();
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& at) {
        JANUS_TRY(Shapes s, shapes(in, at));
        if (s.quantized) {
            JANUS_CHECK(detail::matmul_per_axis(s.a, s.b, op_what<Gemm>(0), op_what<Gemm>(1)));
            JANUS_CHECK(check_quant_c(in, at, s));
        }
        return TensorType{s.quantized ? in[0].dtype : DType::f32, s.out, std::nullopt};
    }

    using Plan = MatMulQuantPlan;
    static Result<Plan> plan(std::span<const TensorType> in, const Attrs& at, const TensorType& out,
                             numeric::Rounding rounding) {
        JANUS_TRY(Shapes s, shapes(in, at));
        if (!s.quantized)
            return make_error(op_what<Gemm>(0), "", "quantized-input", "plan() is for quantized operands");
        JANUS_TRY(MatMulPerAxis pa, detail::matmul_per_axis(s.a, s.b, op_what<Gemm>(0), op_what<Gemm>(1)));
        JANUS_CHECK(check_quant_c(in, at, s));
        JANUS_CHECK(detail::check_matmul_output(out, in[0].dtype, s.out, op_what<Gemm>()));
        JANUS_TRY(MatMulQuantPlan p, detail::plan_matmul_quant(s.a, s.b, out, at.alpha, pa, rounding, op_what<Gemm>()));
        p.add_c = s.has_c && at.beta != 0.0f;
        return p;
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& at, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Gemm>(in));
        const std::string what = op_what<Gemm>();
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(Shapes s, shapes(types, at));
        Tensor a = in[0], b = in[1];
        if (at.transA) {
            JANUS_TRY(a, detail::permuted_view(in[0], Dims{1, 0}, op_what<Gemm>(0)));
        }
        if (at.transB) {
            JANUS_TRY(b, detail::permuted_view(in[1], Dims{1, 0}, op_what<Gemm>(1)));
        }
        std::optional<Tensor> c;
        if (s.has_c) {
            JANUS_TRY(Layout l, broadcast_to(in[2].layout, s.out, op_what<Gemm>(2)));
            c = in[2].view(l);
        }
        if (!s.quantized) {
            JANUS_CHECK(detail::check_float_output(out, s.out, what));
            JANUS_TRY(Contracted k, run_matmul_contract(expr::In<0, float>{}, expr::In<0, float>{}, a, b, nullptr,
                                                        ContractOptions{ctx.simd}, what));
            Tensor y = Tensor::zeros(DType::f32, s.out);
            using namespace expr;
            const MapOptions mo{ctx.simd, -1};
            const auto scaled = mul(cstf(at.alpha), In<0, float>{});
            if (c) {
                const Tensor ins[2] = {k.acc, *c};
                JANUS_CHECK(run_map(add(scaled, mul(cstf(at.beta), In<1, float>{})), std::span<const Tensor>(ins), y,
                                    mo, what + ": epilogue"));
            } else {
                const Tensor ins[1] = {k.acc};
                JANUS_CHECK(run_map(scaled, std::span<const Tensor>(ins), y, mo, what + ": epilogue"));
            }
            return y;
        }
        JANUS_TRY(MatMulQuantPlan p, plan(types, at, out, ctx.rounding));
        a.quant = s.a.quant;
        b.quant = s.b.quant;
        numeric::Interval c_range = numeric::Interval::point(0);
        if (p.add_c) {
            const auto v = in[2].to_vector<std::int32_t>();
            if (!v.empty()) {
                const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
                c_range = {*lo, *hi};
            }
        }
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        JANUS_CHECK(detail::run_matmul_quant(a, b, p.add_c ? &*c : nullptr, c_range, p, y, ctx, what));
        return y;
    }
};

JANUS_OP_INSTANCES(MatMul)
JANUS_OP_INSTANCES(Gemm)
JANUS_OP_INSTANCES(MatMulInteger)

}  // namespace janus::ops
