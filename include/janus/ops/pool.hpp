#pragma once
// Pooling operators: AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool (float32 and quantized int8/uint8;
// MaxPool also plain int8/uint8, as ONNX MaxPool-12 does: see "Plain integers" below).
// Each is one `run_window` (ops/window.hpp) with its own four parts (seed A3); nothing else loops.
//
// Attributes (ONNX AveragePool opset 19 / MaxPool opset 12): auto_pad (NOTSET | SAME_UPPER | SAME_LOWER | VALID),
// kernel_shape (required, one value per spatial axis), strides, pads ([b_1.., e_1..]), dilations, ceil_mode (0/1);
// AveragePool count_include_pad (0/1); MaxPool storage_order (0/1: it only orders the second output, Indices, which
// is the op MaxPoolIndices below; it has no effect on Y).
// Geometry: NOTSET uses `pads`; VALID is pads 0 (ceil_mode still applies, as in ONNX Runtime); SAME_UPPER /
// SAME_LOWER fix the output extent to ceil(L / s) and pad total = max(0, (O - 1) s + (k - 1) d + 1 - L), the odd
// unit at the end (UPPER) or the beginning (LOWER); ceil_mode has no effect there. `pads` together with an auto_pad
// other than NOTSET is an error ("pads-with-auto-pad"). Global pools: kernel = all spatial extents, no padding.
// Every output window must hold at least one input element (rule "window-holds-input"): an all-padding window
// (possible with pads >= kernel, or dilation stepping over a short input) has no ONNX-defined value (ONNX Runtime
// refuses pads >= kernel; PyTorch refuses pads > kernel / 2), so Janus refuses it instead of inventing one. The
// check costs O(1) per axis, except for a dilation larger than the input, where at most 2^16 windows starting in the
// padding are examined (rule "window-scan-limit" beyond).
//
// | op               | kind  | init      | pre               | combine | post                                        |
// |------------------|-------|-----------|-------------------|---------|---------------------------------------------|
// | AveragePool,     | float | -0.0      | x                 | add     | acc / float(count)                          |
// | GlobalAveragePool| quant | 0         | widen(x) - zp_in  | add     | sat(rq_indexed(shl(clamp(acc, +-Lc), S), |
// |                  |       |           |                   |         |     count, M[count]) + zp_out)              |
// | MaxPool,         | float | -inf      | x                 | max     | acc                                         |
// | GlobalMaxPool    | quant | lowest(T) | widen(x)          | max     | sat(rq(acc - zp_in, s_in / s_out) + zp_out) |
//
// Denominator (seed D14: same output shape, completely different answers), `count` per output position:
//   count_include_pad = 1   kernel positions inside the PADDED input (padding counts; the ceil-mode overhang past
//                           the padded input does not: ONNX Runtime / PyTorch), DenominatorPolicy::count_include_pad;
//   count_include_pad = 0   kernel positions inside the input (DenominatorPolicy::count_valid).
//   Global average: the spatial volume (no padding, both policies agree). MaxPool: no denominator.
// Float32: sums in row-major kernel order (deterministic, scalar == SIMD bit for bit); to_float(count) is exact
//   (kernel volume <= 2^24 is proved by run_window, rule "intermediate-fits-int32"). NaN: the window's rule, i.e.
//   MaxPool SKIPS NaN elements (ONNX Runtime's `x > max` loop; PyTorch propagates NaN instead) and a window whose
//   elements are all NaN gives -inf (ONNX Runtime: -FLT_MAX); AveragePool propagates NaN by IEEE addition.
// Quantized (per-tensor int8/uint8; output dtype = input dtype, rule "output-dtype"):
//   AveragePool: the output quantization is the CALLER's (seed A10; require_output_quant), and may differ from the
//     input's. acc = sum (x - zp_in) over the window's input elements (int32; headroom proved by run_window, seed
//     A5: volume * max|x - zp_in| must fit int32). The divisor varies per position, so the epilogue multiplies by
//     a per-count table M[k] = quantize_multiplier(s_in / (s_out k 2^S)) (expr's rq_indexed, round_double):
//       q = sat(round_double((clamp(acc, +-Lc) * 2^S) * M[count]) + zp_out).
//     The table is dense over [min_count, max_count] (8 bytes an entry, at most 2^22 of them: rule
//     "pool-count-table"); only counts that occur get a multiplier. The plan finds them with window_count_values,
//     never by visiting every output position (rule "window-scan-limit" past 2^16 clipped windows per axis).
//     Lc = min(volume * max|x - zp_in|, ceil(512 * max_count * s_out / s_in)): beyond it every count saturates the
//     output, so the clamp never changes a result; it bounds the shifted accumulator for every valid scale pair.
//     S (pre-shift, 0..20) is the largest with Lc * 2^S <= 2^30 and s_in / (s_out max_count 2^S) >= 2^-31: it puts
//     round_double's first rounding S bits below the output LSB. round_double's left shift is proved per table
//     entry ("requantize-left-shift-fits-int32"; reachable only with count ranges over 2^21 and s_in > 2 s_out).
//     Error bound vs the exact real average r = s_in * acc / count, before output saturation (which is exact):
//       |q - zp_out - r / s_out| <= 1/2 + 2^(e_k - 1) + 2^-30 |r / s_out|
//     where 2^e_k = 2^min(shift_k, 0), shift_k the exponent of M[k] (M[k] in [2^(shift_k - 1), 2^shift_k)), so
//     2^e_k < 2 s_in / (s_out k 2^S): round_double's first rounding (SRDHM) is 2^(e_k - 1) of an output LSB, and
//     none when shift_k >= 0 (rounding.hpp). Hence q is round-to-nearest of the exact average except at exact
//     ties and within a ~2^-S band around them. Exact ties go away from zero when M[k] is a power of two (e.g.
//     equal scales and a count of 2 or 4), else either way.
//     Measured (tests/ops_pool, 4250 random outputs): worst 0.5 LSB, 0 non-tie outputs differ from round-half-even.
//   MaxPool: the max stays in the input's integer domain (rounding is monotonic, so requantizing the max equals
//     the max of the requantized values); `infer` PROPOSES the input's quantization (a selection); a caller-given
//     different output quantization is honoured by the requantizing post (exact identity when equal; otherwise
//     round_double of (max - zp_in) * s_in / s_out, within 3/4 LSB of exact: measured 0.747).
// Plain integers (MaxPool only, int8 / uint8 without quantization; the other pools and other integer dtypes are
//   refused with rule float-or-quantized): the same window, pre widen(x), init lowest(T), combine max, post sat<T>(acc)
//   (exact: the max of T values is a T value). Padding takes no part (as for float: only input elements are
//   combined, and every window holds one). The output is T without quantization.
// Data movement (seed A1): run_with_stats returns WindowStats (counts per output, kernel volume, elements combined).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>
#include <janus/ops/window.hpp>

namespace janus::ops {

struct AveragePoolAttrs {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::int64_t count_include_pad = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

struct MaxPoolAttrs {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::int64_t storage_order = 0;  ///< orders the Indices output only (MaxPoolIndices)
    std::vector<std::int64_t> strides;
};

inline constexpr one_of<4> auto_pad_values{{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}};
inline constexpr ints_range window_ints{1, max_window_param, 0, 2 * (max_rank - 2)};
inline constexpr ints_range pad_ints{0, max_window_param, 0, 2 * (max_rank - 2)};

inline constexpr auto average_pool_schema =
    attr_schema(attr<"auto_pad">(&AveragePoolAttrs::auto_pad, auto_pad_values),
                attr<"ceil_mode">(&AveragePoolAttrs::ceil_mode, int_range{0, 1}),
                attr<"count_include_pad">(&AveragePoolAttrs::count_include_pad, int_range{0, 1}),
                attr<"dilations">(&AveragePoolAttrs::dilations, window_ints),
                attr<"kernel_shape">(&AveragePoolAttrs::kernel_shape, window_ints),
                attr<"pads">(&AveragePoolAttrs::pads, pad_ints),
                attr<"strides">(&AveragePoolAttrs::strides, window_ints));

inline constexpr auto max_pool_schema =
    attr_schema(attr<"auto_pad">(&MaxPoolAttrs::auto_pad, auto_pad_values),
                attr<"ceil_mode">(&MaxPoolAttrs::ceil_mode, int_range{0, 1}),
                attr<"dilations">(&MaxPoolAttrs::dilations, window_ints),
                attr<"kernel_shape">(&MaxPoolAttrs::kernel_shape, window_ints),
                attr<"pads">(&MaxPoolAttrs::pads, pad_ints),
                attr<"storage_order">(&MaxPoolAttrs::storage_order, int_range{0, 1}),
                attr<"strides">(&MaxPoolAttrs::strides, window_ints));

/// A pooling node's output and the data movement it implied (seed A1).
struct PoolResult {
    Tensor y;
    WindowStats stats;
};

/// Most entries of an average pool's multiplier table (32 MiB): max_count - min_count < this (rule
/// "pool-count-table"; a 302-byte model asked for counts 1 to 2^30, an 8 GiB table: tests/hostile).
inline constexpr std::int64_t max_count_table = std::int64_t{1} << 22;

/// Everything a pooling node computes, decided from types alone.
struct PoolPlan {
    WindowParams window;          ///< normalized geometry (explicit pads, auto_pad resolved)
    DenominatorPolicy policy = DenominatorPolicy::fixed;
    Shape out_shape;
    std::int64_t volume = 1;      ///< kernel volume
    std::int32_t min_count = 0, max_count = 0;  ///< range of the denominators that occur (average pools)
    // quantized kernels
    std::int32_t zp_in = 0, zp_out = 0;
    numeric::QuantizedMultiplier multiplier{};        ///< max pools: s_in / s_out
    std::vector<numeric::QuantizedMultiplier> table;  ///< average pools: entry k - min_count: s_in / (s_out k 2^S)
    std::int64_t acc_bound = 0;  ///< average pools: the largest |acc| a window's sum reaches (at most 2^62)
    std::int32_t clamp_limit = 0;                     ///< average pools: |acc| clamp (never changes a result)
    int pre_shift = 0;                                ///< average pools: acc * 2^pre_shift before rq_indexed
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the rq (quantized kernels)
};

namespace detail {

/// ONNX pooling attributes -> window geometry for an input of shape `in` (rank >= 3).
inline Result<WindowParams> pool_geometry(const Shape& in, const std::string& auto_pad,
                                          std::span<const std::int64_t> kernel_shape,
                                          std::span<const std::int64_t> strides,
                                          std::span<const std::int64_t> dilations, std::span<const std::int64_t> pads,
                                          bool ceil_mode, const std::string& what) {
    if (in.size() < 3)
        return make_error(what + ".input[0]", "", "window-input-rank",
                          "pooling needs N x C x spatial axes (rank >= 3), got rank " + std::to_string(in.size()));
    const int spatial = in.size() - 2;
    if (static_cast<int>(kernel_shape.size()) != spatial)
        return make_error(what, "kernel_shape", "window-param-length",
                          "kernel_shape has " + std::to_string(kernel_shape.size()) + " values for " +
                              std::to_string(spatial) + " spatial axes (it is required)");
    if (auto_pad != "NOTSET" && !pads.empty())
        return make_error(what, "pads", "pads-with-auto-pad",
                          "pads cannot be given together with auto_pad " + auto_pad);
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    JANUS_TRY(WindowParams p, window_params_from_onnx(kernel_shape, strides, dilations, pads, ceil_mode && !same, what));
    if (same) {
        for (int a = 0; a < spatial; ++a) {
            const std::int64_t L = in[2 + a], s = p.strides[a];
            const std::int64_t o = (L + s - 1) / s;
            const std::int64_t eff = (p.kernel[a] - 1) * p.dilations[a] + 1;
            const std::int64_t total = std::max<std::int64_t>(0, (o - 1) * s + eff - L);
            const std::int64_t small = total / 2, big = total - small;
            p.pads_begin[a] = auto_pad == "SAME_UPPER" ? small : big;
            p.pads_end[a] = auto_pad == "SAME_UPPER" ? big : small;
        }
    }
    return p;
}

/// Rule "window-holds-input": every output window covers at least one input element (per axis: the window box is
/// a product, so it is empty iff one axis range is). The first empty window is found without visiting every output
/// position (a huge extent made inference loop 2^40 times, issue 26). Per axis, with first = o s - pad_begin:
///   - a window starting inside the input (0 <= first < L) holds its first position;
///   - one starting at or past the input's end (first >= L) is empty: the first is o = ceil((L + pad_begin) / s);
///   - one starting in the padding (first < 0): when the dilation d <= L its positions are d apart, so the first
///     one at or past 0 lies in [0, d), inside the input, and the window is empty only when the kernel ends before
///     it, which is likeliest for o = 0: that window alone is checked. When d > L the windows are checked one by
///     one, at most max_scanned_windows of them (rule window-scan-limit beyond: a dilation larger than the input
///     with that many windows in the padding).
inline Status check_windows_hold_input(const Shape& in, const WindowParams& n, const Shape& out,
                                       const std::string& what) {
    for (int a = 0; a < in.size() - 2; ++a) {
        const std::int64_t L = in[2 + a], s = n.strides[a], d = n.dilations[a], pb = n.pads_begin[a], N = out[2 + a];
        const auto empty = [&](std::int64_t o) { return kernel_range(o * s - pb, d, n.kernel[a], 0, L).count() == 0; };
        const auto refuse = [&](std::int64_t o) {
            return make_error(what, "spatial axis " + std::to_string(a) + " output " + std::to_string(o),
                              "window-holds-input",
                              "this window covers only padding (or skips every input position by dilation): its "
                              "pooled value is undefined");
        };
        const std::int64_t in_padding = std::min(N, ceil_div_pos(pb, s));  // windows with first < 0
        if (d <= L) {
            if (in_padding > 0 && empty(0)) return refuse(0);
        } else {
            if (in_padding > max_scanned_windows)
                return make_error(what, "spatial axis " + std::to_string(a), "window-scan-limit",
                                  std::to_string(in_padding) + " windows start in the padding and the dilation " +
                                      std::to_string(d) + " exceeds the input extent " + std::to_string(L) +
                                      "; Janus checks at most " + std::to_string(max_scanned_windows) +
                                      " such windows for one that covers only padding");
            for (std::int64_t o = 0; o < in_padding; ++o)
                if (empty(o)) return refuse(o);
        }
        if (const std::int64_t past = ceil_div_pos(L + pb, s); past < N) return refuse(past);
    }
    return ok_status();
}

}  // namespace detail

/// CRTP base: shapes, the quantization rule, the plan and the kernel. The op supplies name, Attrs, schema,
/// Attrs and combine (add: average, max: max) as template arguments, `geometry(shape, attrs, what)`, `policy(attrs)`.
template <class Derived, class A, expr::BinOp Combine>
struct pool_op {
    using Attrs = A;
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    static constexpr bool average = Combine == expr::BinOp::add;

    /// The plain integer dtypes the op takes (Derived::plain_integers, else none).
    static constexpr PlainInts plain_ints() {
        if constexpr (requires { Derived::plain_integers; }) return Derived::plain_integers;
        else return PlainInts::none;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        const std::string what = op_what<Derived>();
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_TRY(const InputKind kind, classify_input_kinds(in, what, plain_ints()));
        JANUS_TRY(PoolPlan p, plan_geometry(in[0].shape, a));
        TensorType t{in[0].dtype, p.out_shape, std::nullopt};
        if (kind != InputKind::quantized) return t;
        JANUS_CHECK(check_quant_input(in[0]));
        if constexpr (!average) t.quant = in[0].quant;  // a selection preserves real values: propose the input's
        return t;
    }

    /// The whole plan from types: geometry, denominators, multipliers and every range proof.
    using Plan = PoolPlan;
    static Result<PoolPlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                 numeric::Rounding rounding) {
        JANUS_CHECK(check_arity<Derived>(in));
        const TensorType& x = in[0];
        const std::string what = op_what<Derived>();
        JANUS_TRY(PoolPlan p, plan_geometry(x.shape, a));
        p.rounding = rounding;
        if (!(out.shape == p.out_shape))
            return make_error(what, "output", "output-shape",
                              "output shape " + out.shape.str() + " differs from the pooled shape " +
                                  p.out_shape.str());
        if (out.dtype != x.dtype)
            return make_error(what, "output", "output-dtype",
                              "the output must have the input's element type " + std::string(dtype_name(x.dtype)) +
                                  ", not " + out.str());
        if (x.dtype == DType::f32) return p;
        if (!x.quant && plain_int_allowed(x.dtype, plain_ints())) {
            JANUS_CHECK(require_plain_output(out, x.dtype, what));
            return p;
        }
        JANUS_CHECK(check_quant_input(x));
        JANUS_CHECK(require_output_quant(out, what));
        JANUS_CHECK(numeric::check_quant_fits(*out.quant, out.shape, what + ".output"));
        const double s_in = x.quant->scale(), s_out = out.quant->scale();
        p.zp_in = x.quant->zero_point();
        p.zp_out = out.quant->zero_point();
        if constexpr (average) {
            // Every count that occurs gets its own multiplier (one rounding per output).
            JANUS_TRY(const std::vector<std::int64_t> c, window_count_values(x.shape, p.window, p.policy, what));
            p.min_count = static_cast<std::int32_t>(c.front());  // >= 1: window-holds-input
            p.max_count = static_cast<std::int32_t>(c.back());   // <= the kernel volume <= 2^31 - 1
            if (p.max_count - p.min_count >= max_count_table)
                return make_error(what, "", "pool-count-table",
                                  "the window's count runs from " + std::to_string(p.min_count) + " to " +
                                      std::to_string(p.max_count) + ": the multiplier table would hold more than " +
                                      std::to_string(max_count_table) + " entries");
            // Lc: beyond it |acc * s_in / (s_out k)| >= 512 for every k <= max_count: the output saturates anyway.
            const std::int64_t span = std::max<std::int64_t>(std::abs(quant_lo(x.dtype) - p.zp_in),
                                                             std::abs(quant_hi(x.dtype) - p.zp_in));
            const long double bound = static_cast<long double>(span) * static_cast<long double>(p.volume);
            p.acc_bound = bound < 0x1p62L ? static_cast<std::int64_t>(bound) : std::int64_t{1} << 62;  // saturated
            const long double sat = std::ceil(512.0L * p.max_count * s_out / s_in);
            const long double lc = std::min({bound, sat, static_cast<long double>(std::numeric_limits<std::int32_t>::max())});
            p.clamp_limit = static_cast<std::int32_t>(lc);
            // Pre-shift S: acc * 2^S with M[k] / 2^S moves round_double's first rounding (SRDHM) S bits below the
            // output LSB, so the result is within 1/2 + 2^-(S+1) of exact instead of 3/4 (rounding.hpp). S <= 20,
            // |clamped acc| * 2^S <= 2^30, and M[k] / 2^S >= 2^-31 keeps the multiplier's full 31-bit mantissa.
            while (p.pre_shift < 20 && (std::int64_t{p.clamp_limit} << (p.pre_shift + 1)) <= (std::int64_t{1} << 30) &&
                   std::ldexp(s_in / (s_out * static_cast<double>(p.max_count)), -(p.pre_shift + 1)) >= 0x1p-31)
                ++p.pre_shift;
            // Dense over [min_count, max_count]; only counts that occur get their own multiplier, the others (never
            // read) repeat the previous entry, so the range proof over the table sees nothing new.
            const std::string ratio_what = what + ": scale ratio / count";
            std::vector<bool> occurs(static_cast<std::size_t>(p.max_count - p.min_count + 1), false);
            for (auto k : c) occurs[static_cast<std::size_t>(k - p.min_count)] = true;
            p.table.reserve(occurs.size());
            for (std::int64_t k = p.min_count; k <= p.max_count; ++k) {
                if (!occurs[static_cast<std::size_t>(k - p.min_count)]) {
                    p.table.push_back(p.table.back());  // k > min_count: min_count occurs
                    continue;
                }
                const double ratio = std::ldexp(s_in / (s_out * static_cast<double>(k)), -p.pre_shift);
                JANUS_TRY(auto m, numeric::quantize_multiplier(ratio, ratio_what));
                p.table.push_back(m);
            }
            const std::int64_t shifted = std::int64_t{p.clamp_limit} << p.pre_shift;
            const numeric::Interval acc{-shifted, shifted};
            const std::string post_what = what + ": post";
            for (std::size_t j = 0; j < p.table.size(); ++j)
                if (occurs[j])
                    JANUS_CHECK(numeric::requantize_range(acc, p.table[j], 0, std::numeric_limits<std::int32_t>::min(),
                                                          std::numeric_limits<std::int32_t>::max(), post_what));
        } else {
            JANUS_TRY(p.multiplier, numeric::quantize_multiplier(s_in / s_out, what + ": scale ratio"));
            const numeric::Interval acc = numeric::Interval{quant_lo(x.dtype), quant_hi(x.dtype)} -
                                          numeric::Interval::point(p.zp_in);
            JANUS_CHECK(numeric::requantize_range(acc, p.multiplier, 0, std::numeric_limits<std::int32_t>::min(),
                                                  std::numeric_limits<std::int32_t>::max(), what + ": post"));
        }
        return p;
    }

    /// The quantized epilogue on a window's int32 accumulator (in0) and, for average pools, its count (in1), for
    /// storage type T. The host kernel runs it; the NPU lowering evaluates it where it needs a value of it
    /// (emit/pool.hpp) instead of restating it.
    template <expr::Element T>
    static auto quant_post(const PoolPlan& p) {
        using namespace expr;
        const In<0, std::int32_t> acc;
        if constexpr (average)
            return sat<T>(add(rq_indexed(shl(clamp(acc, -p.clamp_limit, p.clamp_limit), p.pre_shift),
                                         clamp(In<1, std::int32_t>{}, p.min_count, p.max_count),
                                         std::span<const numeric::QuantizedMultiplier>(p.table), p.min_count,
                                         p.rounding),
                              cst(p.zp_out)));
        else
            return sat<T>(add(rq(sub(acc, cst(p.zp_in)), p.multiplier, p.rounding), cst(p.zp_out)));
    }

    /// The kernel and its data movement; `winners` (max pools): also the index of each output's element
    /// (WindowOptions::winners), MaxPool's Indices.
    static Result<PoolResult> run_with_stats(std::span<const Tensor> in, const Attrs& a, const TensorType& out,
                                             const OpContext& ctx, Tensor* winners = nullptr,
                                             bool column_major = false) {
        using namespace expr;
        JANUS_CHECK(check_arity<Derived>(in));
        const std::string what = op_what<Derived>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(const PoolPlan p, plan(std::span<const TensorType>(&t0, 1), a, out, ctx.rounding));
        const WindowOptions wo{ctx.simd, -1, winners, column_major};
        if (in[0].dtype == DType::f32) {
            Tensor y = Tensor::zeros(DType::f32, p.out_shape);
            const In<0, float> x;
            if constexpr (average) {
                const auto post = div(In<0, float>{}, to_float(In<1, std::int32_t>{}));
                JANUS_TRY(WindowStats st, run_window<Combine>(x, -0.0f, post, in[0], p.window, p.policy, y, wo, what));
                return PoolResult{std::move(y), std::move(st)};
            } else {
                JANUS_TRY(WindowStats st, run_window<Combine>(x, -std::numeric_limits<float>::infinity(), x, in[0],
                                                              p.window, p.policy, y, wo, what));
                return PoolResult{std::move(y), std::move(st)};
            }
        }
        if constexpr (!average && plain_ints() != PlainInts::none) {
            if (!in[0].quant) {  // plan() accepted it: a plain int8 / uint8 tensor
                return visit_quant_dtype(in[0].dtype, [&](auto tag) -> Result<PoolResult> {
                    using T = typename decltype(tag)::type;
                    Tensor y = Tensor::zeros(out.dtype, p.out_shape);
                    const auto pre = widen(In<0, T>{});
                    const auto post = sat<T>(In<0, std::int32_t>{});
                    const auto init = static_cast<std::int32_t>(type_range<T>().lo);
                    JANUS_TRY(WindowStats st,
                              run_window<Combine>(pre, init, post, in[0], p.window, p.policy, y, wo, what));
                    return PoolResult{std::move(y), std::move(st)};
                });
            }
        }
        return visit_quant_dtype(in[0].dtype, [&](auto tag) -> Result<PoolResult> {
            using T = typename decltype(tag)::type;
            Tensor y = Tensor::zeros(out.dtype, p.out_shape, out.quant);
            const auto post = quant_post<T>(p);
            if constexpr (average) {
                const auto pre = sub(widen(In<0, T>{}), cst(p.zp_in));
                JANUS_TRY(WindowStats st, run_window<Combine>(pre, 0, post, in[0], p.window, p.policy, y, wo, what));
                return PoolResult{std::move(y), std::move(st)};
            } else {
                const auto pre = widen(In<0, T>{});
                JANUS_TRY(WindowStats st, run_window<Combine>(pre, static_cast<std::int32_t>(type_range<T>().lo),
                                                              post, in[0], p.window, p.policy, y, wo, what));
                return PoolResult{std::move(y), std::move(st)};
            }
        });
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out,
                              const OpContext& ctx) {
        JANUS_TRY(PoolResult r, run_with_stats(in, a, out, ctx));
        return std::move(r.y);
    }

private:
    static std::int64_t quant_lo(DType d) { return d == DType::u8 ? 0 : -128; }
    static std::int64_t quant_hi(DType d) { return d == DType::u8 ? 255 : 127; }

    static Result<PoolPlan> plan_geometry(const Shape& in, const Attrs& a) {
        const std::string what = op_what<Derived>();
        PoolPlan p;
        JANUS_TRY(p.window, Derived::geometry(in, a, what));
        JANUS_TRY(p.out_shape, window_output_shape(in, p.window, what));
        JANUS_CHECK(detail::check_windows_hold_input(in, p.window, p.out_shape, what));
        p.policy = Derived::policy(a);
        for (auto k : p.window.kernel) p.volume *= k;
        return p;
    }

    static Status check_quant_input(const TensorType& t) {
        const std::string w = op_what<Derived>(0);
        JANUS_CHECK(require_quantized(t, w));
        if (t.quant->dtype != t.dtype)
            return make_error(w, "", "quant-dtype-matches", "quantization dtype differs from storage dtype: " + t.str());
        return ok_status();
    }
};

// ---------------------------------------------------------------------------------------------------------------
// The operators.

struct AveragePool : pool_op<AveragePool, AveragePoolAttrs, expr::BinOp::add> {
    static constexpr fixed_string name = "AveragePool";
    static constexpr auto schema = average_pool_schema;
    static Result<WindowParams> geometry(const Shape& in, const Attrs& a, const std::string& what) {
        return detail::pool_geometry(in, a.auto_pad, a.kernel_shape, a.strides, a.dilations, a.pads,
                                     a.ceil_mode != 0, what);
    }
    static DenominatorPolicy policy(const Attrs& a) {
        return a.count_include_pad != 0 ? DenominatorPolicy::count_include_pad : DenominatorPolicy::count_valid;
    }
};

struct MaxPool : pool_op<MaxPool, MaxPoolAttrs, expr::BinOp::max> {
    static constexpr fixed_string name = "MaxPool";
    static constexpr PlainInts plain_integers = PlainInts::bytes;  // ONNX MaxPool-12: int8, uint8 (and floats)
    static constexpr auto schema = max_pool_schema;
    static Result<WindowParams> geometry(const Shape& in, const Attrs& a, const std::string& what) {
        return detail::pool_geometry(in, a.auto_pad, a.kernel_shape, a.strides, a.dilations, a.pads,
                                     a.ceil_mode != 0, what);
    }
    static DenominatorPolicy policy(const Attrs&) { return DenominatorPolicy::fixed; }
};

namespace detail {
/// Global pools: one window over every spatial axis, no padding.
inline Result<WindowParams> global_geometry(const Shape& in, const std::string& what) {
    if (in.size() < 3)
        return make_error(what + ".input[0]", "", "window-input-rank",
                          "pooling needs N x C x spatial axes (rank >= 3), got rank " + std::to_string(in.size()));
    std::vector<std::int64_t> k;
    for (int a = 2; a < in.size(); ++a) k.push_back(in[a]);
    return window_params_from_onnx(k, {}, {}, {}, false, what);
}
}  // namespace detail

struct GlobalAveragePool : pool_op<GlobalAveragePool, NoAttrs, expr::BinOp::add> {
    static constexpr fixed_string name = "GlobalAveragePool";
    static constexpr auto schema = no_attrs_schema;
    static Result<WindowParams> geometry(const Shape& in, const Attrs&, const std::string& what) {
        return detail::global_geometry(in, what);
    }
    static DenominatorPolicy policy(const Attrs&) { return DenominatorPolicy::count_valid; }
};

struct GlobalMaxPool : pool_op<GlobalMaxPool, NoAttrs, expr::BinOp::max> {
    static constexpr fixed_string name = "GlobalMaxPool";
    static constexpr auto schema = no_attrs_schema;
    static Result<WindowParams> geometry(const Shape& in, const Attrs&, const std::string& what) {
        return detail::global_geometry(in, what);
    }
    static DenominatorPolicy policy(const Attrs&) { return DenominatorPolicy::fixed; }
};

/// MaxPool's second output, Indices: an op of Janus's IR, not an ONNX op type. The importer turns a MaxPool node with
/// two outputs into MaxPool (Y) and MaxPoolIndices (Indices) of the same input and attributes. Both are the same
/// window (MaxPool::run_with_stats); this op keeps its winners (WindowOptions::winners): per output, the flat index
/// into X of the first element in kernel order that holds the maximum, over N, C and the spatial axes row-major
/// (storage_order 0) or column-major over the spatial axes (storage_order 1), as ONNX defines Indices. A window
/// whose elements are all NaN (skipped, as MaxPool skips them) has no element: -1. A quantized input picks the same
/// elements (the max of the integers is the max of the real values). Output: int64, no quantization.
struct MaxPoolIndices {
    static constexpr fixed_string name = "MaxPoolIndices";
    static constexpr int min_inputs = 1, max_inputs = 1;
    using Attrs = MaxPoolAttrs;
    static constexpr auto schema = max_pool_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(const TensorType y, MaxPool::infer(in, a));
        return TensorType{DType::i64, y.shape, std::nullopt};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(const TensorType y, MaxPool::infer(types, a));
        Tensor idx = Tensor::zeros(DType::i64, out.shape);
        JANUS_CHECK(MaxPool::run_with_stats(in, a, y, ctx, &idx, a.storage_order != 0));
        return idx;
    }
};

static_assert(Op<AveragePool> && Op<MaxPool> && Op<GlobalAveragePool> && Op<GlobalMaxPool> && Op<MaxPoolIndices>);

JANUS_OP_INSTANCES(AveragePool)
JANUS_OP_INSTANCES(MaxPool)
JANUS_OP_INSTANCES(GlobalAveragePool)
JANUS_OP_INSTANCES(MaxPoolIndices)
JANUS_OP_INSTANCES(GlobalMaxPool)

}  // namespace janus::ops
