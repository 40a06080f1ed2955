#pragma once
// Resize (ONNX opsets 11, 13, 18, 19), restricted to 2-D spatial resizing of an N x C x H x W tensor: the scale of N
// and C must be 1 (their sizes unchanged). Constant inputs are attributes (the importer folds roi, scales, sizes):
// exactly one of `scales` (floats) and `sizes` (ints) is given, one entry per axis of `axes` (default: all 4).
// nearest and linear: float32 and quantized int8/uint8; cubic and tf_crop_and_resize: float32 only.
// docs/numerics.md "Resize" holds the tables and measured bounds (seed D14: same output shape, different answers —
// the coordinate rule, the nearest rounding and the weights decide the result).
//
// Output extents. sizes: as given ("stretch"); keep_aspect_ratio_policy not_larger / not_smaller (opset 18) takes
// s = min / max over `axes` of size / in, then out = floor(s * in + 0.5) on those axes and scale s. scales:
// out = floor(in * scale), computed in double (the ONNX reference). ONNX Runtime multiplies in float; where the two
// disagree (0.7f * 10: 6.99999988 in double, 7 in float) the model is ambiguous and is refused
// ("scale-extent-unambiguous": give sizes instead).
//
// Coordinates, per spatial axis, in double (the ONNX reference's float64 arithmetic; ONNX Runtime uses float and may
// differ in the last bit of a coordinate, which matters only on exact ties): scale = the attribute (float widened to
// double) or out / in (sizes), x = output coordinate, L_in / L_out the integer extents.
//   half_pixel            (x + 0.5) / scale - 0.5
//   half_pixel_symmetric  offset + (x + 0.5) / scale - 0.5, offset = L_in / 2 * (1 - L_out / (scale * L_in))
//   pytorch_half_pixel    L_out > 1 ? (x + 0.5) / scale - 0.5 : 0
//   align_corners         L_out > 1 ? x * (L_in - 1) / (L_out - 1) : 0      (integer L_out, as ORT; with scales,
//                         in * scale must be an integer: the ONNX reference divides by the float extent
//                         double(scale) * L_in - 1, ORT by the integer extent - 1, "align-corners-extent-ambiguous",
//                         onnx/onnx issue 2462; ORT's backend-test filters list both node tests as mismatches)
//   asymmetric            x / scale
//   tf_half_pixel_for_nn  (x + 0.5) / scale
//   tf_crop_and_resize    L_out > 1 ? x * (end - start) * (L_in - 1) / (L_out - 1) + start * (L_in - 1)
//                                   : (end - start) * (L_in - 1) / 2 + start * (L_in - 1)
//                         start, end = the axis's roi (float; end - start is a float subtraction, as the reference's
//                         float32 roi). Float32 only, sizes only ("tf-crop-and-resize-sizes": with scales the spec's
//                         extent floor(in * (end - start) * scale) and the reference's floor(in * scale) differ). roi
//                         has 2 * len(axes) entries, starts then ends ("roi-length"), [0, 1] on N and C
//                         ("roi-batch-channel-full"). A coordinate outside [0, L_in - 1] on either spatial axis makes
//                         the output extrapolation_value (nearest: its table says IndexMap::outside, the gather fills;
//                         linear, cubic: a final gather with such tables overwrites the interpolated value).
// nearest: round the coordinate by nearest_mode (round_prefer_floor: ties down, else nearest; round_prefer_ceil: ties
// up; floor; ceil), then clamp to [0, L_in - 1] (the reference's edge padding). A pure selection: an index_map gather
// (bit copy), then a requantization (copy.hpp) if the output's parameters differ from the input's. Any quantization
// of N or C (per-axis along them included) moves through unchanged; per-axis along H or W is refused.
// linear: clamp the coordinate to [0, L_in - 1]; i0 = floor, i1 = min(i0 + 1, L_in - 1), f = coordinate - i0,
// weights (1 - f, f) (the reference's edge padding gives the same values). Separable: pass 1 gathers the two source
// columns of every output column (index_map) and combines them with per-column weights, pass 2 does the same with
// rows on pass 1's result. Weights are [W_out] / [H_out, 1] tensors broadcast with stride 0 (seeds B5, A7).
//   float32:   t = w0 * a + w1 * b per pass, float arithmetic (w = float of the double weights).
//   quantized: integer weights Q.11: w1 = round(f * 2^11) (half up), w0 = 2^11 - w1, so w0 + w1 = 2^11 exactly.
//     pass 1: t  = w0 (a - zp_in) + w1 (b - zp_in)                 |t| <= 255 * 2^11 (a convex combination)
//     pass 2: acc = w0' t0 + w1' t1 = sum of the 4 taps w_y w_x (q - zp_in) in Q.22 (exact; no rounding yet)
//     out = sat(round(acc / 2^22) + zp_out) when the output quantization equals the input's (rshift: one rounding,
//           half away from zero), else sat(rq(acc, s_in / (s_out 2^22)) + zp_out) (OpContext::rounding).
//     Headroom: the interval proof (expr::prove_ranges) sees each product of pass 2 in (lo - zp) 2^22 .. (hi - zp)
//     2^22 and their sum within 510 * 2^22 = 2139095040 < 2^31 - 1; with 12 fractional bits it would not fit, so 11
//     is the most this two-pass form allows. Pass 2's input range is declared from pass 1's convexity (w0, w1 >= 0,
//     w0 + w1 = 2^11), the one assumed bound, stated here.
//   Error against "dequantize, resize in exact arithmetic, quantize (half to even)": weight rounding moves the value
//   by at most 2 * 2^-12 * 255 ~= 0.125 input LSB; with the final rounding the result is within 1 output LSB while
//   0.125 s_in / s_out < 1 (s_in / s_out <= 7; measured max 1 LSB: tests/ops_resize, docs/numerics.md). Ties round
//   half away from the zero point (the reference quantizes half to even).
// cubic (float32 only, "cubic-quantized-unsupported"): per axis, x = the coordinate (not clamped), taps floor(x) - 1 ..
// floor(x) + 2 with the ONNX reference's coefficients at r = x - floor(x) (cubic_coeffs, computed in double, A =
// cubic_coeff_a). exclude_outside = 1: the weights of taps outside [0, L_in - 1] become 0 and the rest are divided by
// their sum (a zero sum is refused, "cubic-weight-sum-nonzero"; only an unusual A gets there). Then the indices are
// clamped to [0, L_in - 1]: the reference's edge padding (x lies in (-0.5, L_in] in every mode but tf_crop_and_resize,
// whose outside coordinates are extrapolated, so its 2-wide padding is never exceeded). Separable like linear, the same
// pass (two gathered taps, w0 * a + w1 * b, float weights) run on the tap pairs (0, 1) and (2, 3), the two results
// added: (w0 a + w1 b) + (w2 c + w3 d) per axis, W then H. pytorch_half_pixel to L_out = 1 with L_in > 1 is refused
// ("cubic-single-output-ambiguous": the spec and ORT sample x = 0, the reference -0.5; nearest and linear clamp both to
// index 0). The reference takes the taps nearest to x + 2 in double, which rounds a coordinate within half an ulp above
// an integer down and reads one tap to the left (2.0000000000000004: half_pixel_symmetric 7 -> 10 with scales 1.5); the
// kernel's floor(x) is what ORT computes.
//   Error: against a double port of the reference, measured max 1.8e-7 * max|x| (tested bound 2^-21 * max|x|,
//   tests/ops_resize/cubic.cpp).
// Other attributes: cubic_coeff_a (cubic) and extrapolation_value (tf_crop_and_resize): any finite value; roi:
// finite floats, read only by tf_crop_and_resize. exclude_outside = 1: cubic renormalizes; linear unchanged (the
// reference's outside tap already has weight 0, ORT ignores it); nearest refused ("exclude-outside-unsupported": the
// reference divides by a zero sum when the chosen neighbour lies outside). antialias must be 0
// ("antialias-unsupported").
// Quantization rule (seed A10): nearest proposes the input's quantization (a selection preserves real values);
// linear leaves the output quantization to the caller (require_output_quant) and needs per-tensor parameters.
// Rules: resize-rank-4, scales-or-sizes, scales-length, sizes-length, axis-in-range, axes-unique,
// resize-batch-channel-unchanged, spatial-input-nonempty, output-extent-in-range, scale-extent-unambiguous,
// align-corners-extent-ambiguous, tf-crop-and-resize-sizes, roi-length, roi-batch-channel-full,
// cubic-single-output-ambiguous, cubic-weight-sum-nonzero, cubic-quantized-unsupported,
// tf-crop-and-resize-quantized-unsupported, antialias-unsupported, exclude-outside-unsupported,
// resize-keeps-quantization-axis, per-tensor-quantization, output-quantization-required, input-not-quantized,
// output-type-matches-inference (plus op.hpp's and the schema's attribute rules).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/layout/view.hpp>
#include <janus/ops/copy.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/index_map.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

namespace resize {

/// Each element of a float list finite and > 0; list length in [min_len, max_len].
struct positive_floats {
    std::size_t min_len = 0, max_len = 4;
    std::string check(const std::vector<float>& v) const {
        if (v.size() < min_len || v.size() > max_len)
            return "must have between " + std::to_string(min_len) + " and " + std::to_string(max_len) + " elements";
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!(std::isfinite(v[i]) && v[i] > 0.0f))
                return "element " + std::to_string(i) + " must be finite and > 0";
        return {};
    }
};

/// Each element of a float list finite; list length at most max_len (roi: starts then ends, one pair per axis).
struct finite_floats {
    std::size_t max_len = 8;
    std::string check(const std::vector<float>& v) const {
        if (v.size() > max_len) return "must have at most " + std::to_string(max_len) + " elements";
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!std::isfinite(v[i])) return "element " + std::to_string(i) + " must be finite";
        return {};
    }
};

enum class Mode { nearest, linear, cubic };
enum class Coord {
    half_pixel,
    half_pixel_symmetric,
    pytorch_half_pixel,
    align_corners,
    asymmetric,
    tf_half_pixel_for_nn,
    tf_crop_and_resize
};
enum class Nearest { round_prefer_floor, round_prefer_ceil, floor, ceil };

/// Fractional bits of the quantized linear weights (see the header comment for why 11).
inline constexpr int weight_bits = 11;
inline constexpr std::int32_t weight_one = std::int32_t{1} << weight_bits;

/// The coordinate in the input of output coordinate x along one axis (the table in the header comment); start, end:
/// the axis's roi (tf_crop_and_resize only; end - start in float, as the ONNX reference's float32 roi).
inline double original_coordinate(Coord m, std::int64_t x, double scale, std::int64_t len_in, std::int64_t len_out,
                                  float start = 0.0f, float end = 1.0f) {
    const double xd = static_cast<double>(x);
    switch (m) {
        case Coord::half_pixel: return (xd + 0.5) / scale - 0.5;
        case Coord::half_pixel_symmetric: {
            const double adjustment = static_cast<double>(len_out) / (scale * static_cast<double>(len_in));
            const double offset = static_cast<double>(len_in) / 2.0 * (1.0 - adjustment);
            return offset + (xd + 0.5) / scale - 0.5;
        }
        case Coord::pytorch_half_pixel: return len_out > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
        case Coord::align_corners:
            return len_out > 1 ? static_cast<double>(x * (len_in - 1)) / static_cast<double>(len_out - 1) : 0.0;
        case Coord::asymmetric: return xd / scale;
        case Coord::tf_half_pixel_for_nn: return (xd + 0.5) / scale;
        case Coord::tf_crop_and_resize: {
            const double span = static_cast<double>(len_in - 1), width = static_cast<double>(end - start);
            return (len_out > 1 ? xd * width * span / static_cast<double>(len_out - 1) : width * span / 2.0) +
                   static_cast<double>(start) * span;
        }
    }
    return 0.0;
}

/// Round a coordinate by nearest_mode (ties are exact halves of the double coordinate).
inline double round_nearest(Nearest m, double x) {
    const double f = std::floor(x);
    switch (m) {
        case Nearest::floor: return f;
        case Nearest::ceil: return std::ceil(x);
        case Nearest::round_prefer_floor: return x - f <= 0.5 ? f : f + 1.0;
        case Nearest::round_prefer_ceil: return x - f < 0.5 ? f : f + 1.0;
    }
    return f;
}

/// Everything decided from the input type and the attributes.
struct Plan {
    Mode mode = Mode::nearest;
    Coord coord = Coord::half_pixel;
    Nearest nearest = Nearest::round_prefer_floor;
    Shape out;
    std::array<double, 4> scale{1.0, 1.0, 1.0, 1.0};
    double cubic_a = -0.75;                                            // cubic_coeff_a
    bool exclude_outside = false;                                      // linear (no effect) and cubic
    float extrapolation = 0.0f;                                        // tf_crop_and_resize
    std::array<float, 4> roi_start{0.0f, 0.0f, 0.0f, 0.0f}, roi_end{1.0f, 1.0f, 1.0f, 1.0f};  // tf_crop_and_resize
    // Quantized linear only (Resize::plan; the geometry leaves them unset): the epilogue of pass 2.
    bool rescale = false;             ///< the output's quantization differs from the input's: rq by m, else rshift 22
    numeric::QuantizedMultiplier m{};  ///< s_in / (s_out 2^22)
    std::int32_t zp_in = 0, zp_out = 0;
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the rq
};

/// The input coordinate of output coordinate j along `axis` (2 or 3) of an input extent len_in.
inline double coordinate(const Plan& p, int axis, std::int64_t j, std::int64_t len_in) {
    const auto k = static_cast<std::size_t>(axis);
    return original_coordinate(p.coord, j, p.scale[k], len_in, p.out[axis], p.roi_start[k], p.roi_end[k]);
}

/// tf_crop_and_resize: a coordinate outside [0, L_in - 1] takes extrapolation_value (no interpolation).
inline bool extrapolated(const Plan& p, double x, std::int64_t len_in) {
    return p.coord == Coord::tf_crop_and_resize && (x < 0.0 || x > static_cast<double>(len_in - 1));
}

/// Source index of every output coordinate of one axis (nearest); IndexMap::outside where extrapolated.
inline std::vector<std::int64_t> nearest_table(const Plan& p, int axis, std::int64_t len_in) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(p.out[axis]));
    for (std::int64_t j = 0; j < p.out[axis]; ++j) {
        const double c = coordinate(p, axis, j, len_in);
        const double x = std::clamp(round_nearest(p.nearest, c), 0.0, static_cast<double>(len_in - 1));
        t[static_cast<std::size_t>(j)] = extrapolated(p, c, len_in) ? IndexMap::outside : static_cast<std::int64_t>(x);
    }
    return t;
}

/// Identity on one axis but IndexMap::outside where extrapolated (the last gather of linear and cubic).
inline std::vector<std::int64_t> extrapolation_table(const Plan& p, int axis, std::int64_t len_in) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(p.out[axis]));
    for (std::int64_t j = 0; j < p.out[axis]; ++j) {
        const bool outside = extrapolated(p, coordinate(p, axis, j, len_in), len_in);
        t[static_cast<std::size_t>(j)] = outside ? IndexMap::outside : j;
    }
    return t;
}

/// Two source indices and the fraction of the second, per output coordinate of one axis (linear).
struct LinearAxis {
    std::vector<std::int64_t> i0, i1;
    std::vector<double> frac;
};
inline LinearAxis linear_table(const Plan& p, int axis, std::int64_t len_in) {
    LinearAxis a;
    for (std::int64_t j = 0; j < p.out[axis]; ++j) {
        const double x = std::clamp(coordinate(p, axis, j, len_in), 0.0, static_cast<double>(len_in - 1));
        const double f = std::floor(x);
        const auto i0 = static_cast<std::int64_t>(f);
        a.i0.push_back(i0);
        a.i1.push_back(std::min(i0 + 1, len_in - 1));
        a.frac.push_back(x - f);
    }
    return a;
}

/// The integer weight of the second tap: round(f * 2^11), half up (f >= 0).
inline std::int32_t fixed_weight(double frac) {
    return static_cast<std::int32_t>(std::floor(frac * static_cast<double>(weight_one) + 0.5));
}

/// The ONNX reference's cubic coefficients of the taps floor(x) - 1 .. floor(x) + 2 at ratio r = x - floor(x)
/// (Keys' kernel with parameter A, the reference's expressions in double).
inline std::array<double, 4> cubic_coeffs(double r, double A) {
    const double s = 1.0 - r;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

/// The float interpolation of one axis: tap k of output coordinate j reads index[k][j] with weight weight[k][j]
/// (an even number of taps: 2 for linear, 4 for cubic).
struct Taps {
    std::vector<std::vector<std::int64_t>> index;
    std::vector<std::vector<double>> weight;
};

/// Linear as taps: (i0, i1) with weights (1 - f, f).
inline Taps linear_taps(const Plan& p, int axis, std::int64_t len_in) {
    LinearAxis a = linear_table(p, axis, len_in);
    Taps t{{std::move(a.i0), std::move(a.i1)}, {{}, {}}};
    for (double f : a.frac) {
        t.weight[0].push_back(1.0 - f);
        t.weight[1].push_back(f);
    }
    return t;
}

/// Cubic taps: floor(x) - 1 .. floor(x) + 2 (x not clamped) with cubic_coeffs; exclude_outside zeroes the taps
/// outside [0, L_in - 1] and divides the rest by their sum; indices are then clamped to [0, L_in - 1] (the
/// reference's edge padding). A zero sum (possible only for unusual cubic_coeff_a) is refused.
inline Result<Taps> cubic_taps(const Plan& p, int axis, std::int64_t len_in, const std::string& what) {
    Taps t{std::vector<std::vector<std::int64_t>>(4), std::vector<std::vector<double>>(4)};
    for (std::int64_t j = 0; j < p.out[axis]; ++j) {
        const double x = coordinate(p, axis, j, len_in);
        const double f = std::floor(x);
        // an extrapolated coordinate (any finite value) reads a placeholder; the final gather overwrites it
        const bool ext = extrapolated(p, x, len_in);
        std::array<double, 4> c = ext ? std::array<double, 4>{1.0, 0.0, 0.0, 0.0} : cubic_coeffs(x - f, p.cubic_a);
        const std::int64_t first = ext ? 0 : static_cast<std::int64_t>(f) - 1;
        if (p.exclude_outside && !ext) {
            double sum = 0.0;
            for (std::int64_t k = 0; k < 4; ++k) {
                if (first + k < 0 || first + k >= len_in) c[static_cast<std::size_t>(k)] = 0.0;
                sum += c[static_cast<std::size_t>(k)];
            }
            if (sum == 0.0)
                return make_error(what + ".cubic_coeff_a", "axis " + std::to_string(axis), "cubic-weight-sum-nonzero",
                                  "exclude_outside leaves taps whose cubic weights sum to 0 at output coordinate " +
                                      std::to_string(j) + "; the renormalization is undefined");
            for (double& w : c) w /= sum;
        }
        for (std::size_t k = 0; k < 4; ++k) {
            t.index[k].push_back(std::clamp<std::int64_t>(first + static_cast<std::int64_t>(k), 0, len_in - 1));
            t.weight[k].push_back(c[k]);
        }
    }
    return t;
}

inline std::vector<std::int64_t> iota_table(std::int64_t n) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = i;
    return t;
}

}  // namespace resize

struct Resize {
    static constexpr fixed_string name = "Resize";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    struct Attrs {
        std::vector<float> scales;
        std::vector<std::int64_t> sizes;
        std::string mode = "nearest";
        std::string coordinate_transformation_mode = "half_pixel";
        std::string nearest_mode = "round_prefer_floor";
        float cubic_coeff_a = -0.75f;
        std::int64_t exclude_outside = 0;
        float extrapolation_value = 0.0f;
        std::int64_t antialias = 0;
        std::vector<std::int64_t> axes;
        std::string keep_aspect_ratio_policy = "stretch";
        std::vector<float> roi;  // the folded roi input: starts, then ends, one pair per axis of `axes`
    };
    static constexpr auto schema = attr_schema(
        attr<"scales">(&Attrs::scales, resize::positive_floats{0, 4}),
        attr<"sizes">(&Attrs::sizes, ints_range{0, max_elements, 0, 4}),
        attr<"mode">(&Attrs::mode, one_of<3>{{"nearest", "linear", "cubic"}}),
        attr<"coordinate_transformation_mode">(
            &Attrs::coordinate_transformation_mode,
            one_of<7>{{"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                       "tf_half_pixel_for_nn", "tf_crop_and_resize"}}),
        attr<"nearest_mode">(&Attrs::nearest_mode,
                             one_of<4>{{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}}),
        attr<"cubic_coeff_a">(&Attrs::cubic_coeff_a, finite_float{}),
        attr<"exclude_outside">(&Attrs::exclude_outside, int_range{0, 1}),
        attr<"extrapolation_value">(&Attrs::extrapolation_value, finite_float{}),
        attr<"antialias">(&Attrs::antialias, int_range{0, 1}),
        attr<"axes">(&Attrs::axes, ints_range{-4, 3, 0, 4}),
        attr<"keep_aspect_ratio_policy">(&Attrs::keep_aspect_ratio_policy,
                                         one_of<3>{{"stretch", "not_larger", "not_smaller"}}),
        attr<"roi">(&Attrs::roi, resize::finite_floats{8}));

    /// The plan: modes, output extents, scales (rules in the header comment and at each error) and, for a
    /// quantized linear resize, the requantization of pass 2. `in` and `out` are NCHW. The host's passes and the
    /// NPU's copies (emit/resize.hpp) read it.
    using Plan = resize::Plan;
    static Result<Plan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                             numeric::Rounding rounding) {
        JANUS_CHECK(check_arity<Resize>(in));
        const std::string what = op_what<Resize>();
        JANUS_TRY(const TensorType inferred, infer(in, a));
        JANUS_TRY(resize::Plan p, geometry(in[0], a));
        if (out.dtype != inferred.dtype || !(out.shape == inferred.shape))
            return make_error(what, "output", "output-type-matches-inference",
                              "requested output " + out.str() + " but the op produces " + inferred.str());
        if (p.mode == resize::Mode::nearest) {
            JANUS_CHECK(movement::check_output(inferred, out, what));
            return p;
        }
        if (!in[0].quantized()) {
            if (out.quant)
                return make_error(what, "output", "input-not-quantized",
                                  "a float resize cannot produce a quantized output: " + out.str());
            return p;
        }
        JANUS_CHECK(require_output_quant(out, what));
        const numeric::QuantParams& qi = *in[0].quant;
        const numeric::QuantParams& qo = *out.quant;
        p.zp_in = qi.zero_point();
        p.zp_out = qo.zero_point();
        p.rounding = rounding;
        p.rescale = !(qi == qo);
        if (p.rescale) {
            const double q22 = static_cast<double>(resize::weight_one) * resize::weight_one;  // 2^22
            JANUS_TRY(p.m, numeric::quantize_multiplier(
                               static_cast<double>(qi.scale()) / (static_cast<double>(qo.scale()) * q22),
                               what + ": requantization ratio"));
        }
        return p;
    }

    /// What infer knows: modes, output extents and scales.
    static Result<resize::Plan> geometry(const TensorType& in, const Attrs& a) {
        using namespace resize;
        const std::string what = op_what<Resize>();
        Plan p;
        p.mode = a.mode == "linear" ? Mode::linear : a.mode == "cubic" ? Mode::cubic : Mode::nearest;
        const std::string& c = a.coordinate_transformation_mode;
        p.coord = c == "half_pixel_symmetric" ? Coord::half_pixel_symmetric
                  : c == "pytorch_half_pixel" ? Coord::pytorch_half_pixel
                  : c == "align_corners"      ? Coord::align_corners
                  : c == "asymmetric"         ? Coord::asymmetric
                  : c == "tf_half_pixel_for_nn" ? Coord::tf_half_pixel_for_nn
                  : c == "tf_crop_and_resize" ? Coord::tf_crop_and_resize
                                              : Coord::half_pixel;
        const std::string& n = a.nearest_mode;
        p.nearest = n == "round_prefer_ceil" ? Nearest::round_prefer_ceil
                    : n == "floor"           ? Nearest::floor
                    : n == "ceil"            ? Nearest::ceil
                                             : Nearest::round_prefer_floor;
        if (a.antialias != 0)
            return make_unsupported(what + ".antialias", "", "antialias-unsupported",
                                    what + " antialias " + std::to_string(a.antialias), "Janus implements antialias 0");
        if (a.exclude_outside != 0 && p.mode == Mode::nearest)
            return make_unsupported(what + ".exclude_outside", "", "exclude-outside-unsupported",
                                    what + " exclude_outside 1 with mode nearest",
                                    "the ONNX reference divides by a zero weight sum when "
                                    "the chosen neighbour lies outside, ONNX Runtime ignores it; give 0");
        p.cubic_a = static_cast<double>(a.cubic_coeff_a);
        p.exclude_outside = a.exclude_outside != 0;
        p.extrapolation = a.extrapolation_value;
        if (in.shape.size() != 4)
            return make_unsupported(what + ".input[0]", "", "resize-rank-4",
                                    what + ".input[0] of rank " + std::to_string(in.shape.size()),
                                    "Janus resizes the spatial axes of an N x C x H x W tensor; got " + in.str());
        const bool has_scales = !a.scales.empty(), has_sizes = !a.sizes.empty();
        if (has_scales == has_sizes)
            return make_error(what, "attribute scales", "scales-or-sizes",
                              has_scales ? "both scales and sizes are given; give exactly one"
                                         : "neither scales nor sizes is given; give exactly one");
        // axes: default all four, else distinct axes in [-4, 3].
        std::vector<int> axes;
        if (a.axes.empty()) axes = {0, 1, 2, 3};
        for (std::size_t i = 0; i < a.axes.size(); ++i) {
            const std::int64_t v = a.axes[i];
            if (v < -4 || v > 3)
                return make_error(what + ".axes", "element " + std::to_string(i), "axis-in-range",
                                  "axis " + std::to_string(v) + " is outside [-4, 3]");
            const int ax = static_cast<int>(v < 0 ? v + 4 : v);
            if (std::find(axes.begin(), axes.end(), ax) != axes.end())
                return make_error(what + ".axes", "element " + std::to_string(i), "axes-unique",
                                  "axis " + std::to_string(ax) + " is listed twice");
            axes.push_back(ax);
        }
        const std::size_t given = has_scales ? a.scales.size() : a.sizes.size();
        if (given != axes.size())
            return make_error(what, has_scales ? "attribute scales" : "attribute sizes",
                              has_scales ? "scales-length" : "sizes-length",
                              std::to_string(given) + " entries for " + std::to_string(axes.size()) + " axes");
        if (p.coord == Coord::tf_crop_and_resize) {
            // The spec's extent is floor(in * (end - start) * scale), the ONNX reference's floor(in * scale), whose
            // coordinate then divides by the float extent in * scale - 1: only sizes is unambiguous.
            if (has_scales)
                return make_error(what + ".scales", "", "tf-crop-and-resize-sizes",
                                  "tf_crop_and_resize with scales: the spec's extent floor(in * (end - start) * "
                                  "scale) and the ONNX reference's floor(in * scale) differ; give sizes instead");
            if (a.roi.size() != 2 * axes.size())
                return make_error(what + ".roi", "", "roi-length",
                                  "tf_crop_and_resize needs roi with " + std::to_string(2 * axes.size()) +
                                      " float entries (starts, then ends, one per axis), got " +
                                      std::to_string(a.roi.size()));
            for (std::size_t i = 0; i < axes.size(); ++i) {
                const auto k = static_cast<std::size_t>(axes[i]);
                p.roi_start[k] = a.roi[i];
                p.roi_end[k] = a.roi[i + axes.size()];
                if (k < 2 && (p.roi_start[k] != 0.0f || p.roi_end[k] != 1.0f))
                    return make_error(what + ".roi", "axis " + std::to_string(k), "roi-batch-channel-full",
                                      std::string(k == 0 ? "N" : "C") + " must keep its whole extent: roi [0, 1], " +
                                          "got [" + expr::detail::num(a.roi[i]) + ", " +
                                          expr::detail::num(a.roi[i + axes.size()]) + "]");
            }
        }
        std::array<double, 4> out_d{};
        for (int k = 0; k < 4; ++k) out_d[static_cast<std::size_t>(k)] = static_cast<double>(in.shape[k]);
        if (has_scales) {
            for (std::size_t i = 0; i < axes.size(); ++i) {
                const auto k = static_cast<std::size_t>(axes[i]);
                const float s = a.scales[i];
                const double exact = std::floor(static_cast<double>(s) * static_cast<double>(in.shape[axes[i]]));
                if (exact > static_cast<double>(max_elements))
                    return make_error(what + ".scales", "element " + std::to_string(i), "output-extent-in-range",
                                      "extent " + std::to_string(in.shape[axes[i]]) + " * scale exceeds 2^40");
                // ONNX Runtime: static_cast<int64_t>(float scale * float(extent)).
                const double ort = std::trunc(static_cast<double>(s * static_cast<float>(in.shape[axes[i]])));
                if (exact != ort)
                    return make_unsupported(
                        what + ".scales", "element " + std::to_string(i), "scale-extent-unambiguous",
                        what + " scales[" + std::to_string(i) + "] " + expr::detail::num(s) + " on extent " +
                            std::to_string(in.shape[axes[i]]),
                        "floor(" + std::to_string(in.shape[axes[i]]) + " * " + expr::detail::num(s) + ") is " +
                            std::to_string(static_cast<std::int64_t>(exact)) + " in double but " +
                            std::to_string(static_cast<std::int64_t>(ort)) +
                            " in float (ONNX reference and ONNX Runtime differ); give sizes instead");
                // align_corners divides by L_out - 1: the spec and ONNX Runtime take the integer extent, the ONNX
                // reference takes in * scale (onnx/onnx issue 2462); they agree only when in * scale is an integer.
                const double product = static_cast<double>(s) * static_cast<double>(in.shape[axes[i]]);
                if (p.coord == Coord::align_corners && exact != product)
                    return make_unsupported(
                        what + ".scales", "element " + std::to_string(i), "align-corners-extent-ambiguous",
                        what + " align_corners with scales[" + std::to_string(i) + "] " + expr::detail::num(s) +
                            " on extent " + std::to_string(in.shape[axes[i]]),
                        "extent * scale is not an integer: the ONNX reference and ONNX Runtime "
                        "differ; give sizes instead");
                p.scale[k] = static_cast<double>(s);
                out_d[k] = exact;
            }
        } else {
            for (std::size_t i = 0; i < axes.size(); ++i) {
                const auto k = static_cast<std::size_t>(axes[i]);
                out_d[k] = static_cast<double>(a.sizes[i]);
                p.scale[k] = in.shape[axes[i]] == 0 ? 1.0 : out_d[k] / static_cast<double>(in.shape[axes[i]]);
            }
            if (a.keep_aspect_ratio_policy != "stretch") {
                const bool smaller = a.keep_aspect_ratio_policy == "not_larger";
                double s = p.scale[static_cast<std::size_t>(axes[0])];
                for (int ax : axes) s = smaller ? std::min(s, p.scale[static_cast<std::size_t>(ax)])
                                                : std::max(s, p.scale[static_cast<std::size_t>(ax)]);
                for (int ax : axes) {
                    const auto k = static_cast<std::size_t>(ax);
                    p.scale[k] = s;
                    out_d[k] = std::floor(s * static_cast<double>(in.shape[ax]) + 0.5);
                    if (out_d[k] > static_cast<double>(max_elements))
                        return make_error(what + ".sizes", "axis " + std::to_string(ax), "output-extent-in-range",
                                          "the aspect-preserving extent exceeds 2^40");
                }
            }
        }
        for (int k = 0; k < 2; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            if (out_d[ku] != static_cast<double>(in.shape[k]) || (in.shape[k] != 0 && p.scale[ku] != 1.0))
                return make_error(what, "axis " + std::to_string(k), "resize-batch-channel-unchanged",
                                  std::string(k == 0 ? "N" : "C") + " must keep its extent " +
                                      std::to_string(in.shape[k]) + " with scale 1 (only H and W are resized)");
        }
        for (int k = 2; k < 4; ++k)
            if (in.shape[k] == 0 && out_d[static_cast<std::size_t>(k)] != 0.0)
                return make_error(what + ".input[0]", "axis " + std::to_string(k), "spatial-input-nonempty",
                                  "an empty spatial axis cannot be resized to a nonempty one");
        // pytorch_half_pixel with L_out = 1: the spec and ONNX Runtime take x = 0, the ONNX reference -0.5. Nearest
        // and linear clamp both to source index 0; cubic reads other taps, so the two engines differ.
        for (int k = 2; k < 4; ++k)
            if (p.mode == Mode::cubic && p.coord == Coord::pytorch_half_pixel &&
                out_d[static_cast<std::size_t>(k)] == 1.0 && in.shape[k] > 1)
                return make_unsupported(what, "axis " + std::to_string(k), "cubic-single-output-ambiguous",
                                        what + " cubic pytorch_half_pixel to one output on axis " + std::to_string(k),
                                        "the spec and ONNX Runtime sample x = 0, the ONNX reference x = -0.5 "
                                        "(different taps); use half_pixel or align_corners");
        std::vector<std::int64_t> ext;
        for (double d : out_d) ext.push_back(static_cast<std::int64_t>(d));
        JANUS_TRY(p.out, make_shape(ext, what + ".output"));
        return p;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Resize>(in));
        const std::string w0 = op_what<Resize>(0);
        JANUS_TRY(bool q, classify_inputs(in, op_what<Resize>()));
        JANUS_CHECK(movement::check_input(in[0], w0));
        JANUS_TRY(resize::Plan p, geometry(in[0], a));
        if (!q) return TensorType{DType::f32, p.out, std::nullopt};
        if (p.mode == resize::Mode::cubic)
            return make_unsupported(w0, "", "cubic-quantized-unsupported", "Resize mode cubic on a quantized tensor",
                                    "cubic resize is float32 only (its weights leave [0, 1], so linear's Q.11 "
                                    "headroom proof does not carry over); dequantize first");
        if (p.coord == resize::Coord::tf_crop_and_resize)
            return make_unsupported(w0, "", "tf-crop-and-resize-quantized-unsupported",
                                    "Resize tf_crop_and_resize on a quantized tensor",
                                    "tf_crop_and_resize is float32 only (extrapolation_value has no quantized "
                                    "encoding here); dequantize first");
        if (p.mode == resize::Mode::linear) {
            JANUS_CHECK(require_quantized(in[0], w0));
            return TensorType{in[0].dtype, p.out, std::nullopt};
        }
        if (in[0].quant->axis && *in[0].quant->axis >= 2)
            return make_error(w0, "axis " + std::to_string(*in[0].quant->axis), "resize-keeps-quantization-axis",
                              "per-axis quantization along a resized axis has no parameters for the new positions");
        return TensorType{in[0].dtype, p.out, in[0].quant};  // a selection: the input's quantization moves through
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Resize>(in));
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(const resize::Plan p, plan(std::span<const TensorType>(&t0, 1), a, out, ctx.rounding));
        if (p.mode == resize::Mode::nearest) return run_nearest(in[0], p, out, ctx);
        if (!t0.quantized()) return run_float(in[0], p, ctx);
        return run_linear_quant(in[0], p, out, ctx);
    }

private:
    static IndexMap spatial_map(const Shape& s, std::vector<std::int64_t> h, std::vector<std::int64_t> w) {
        IndexMap m;
        m.axes = {resize::iota_table(s[0]), resize::iota_table(s[1]), std::move(h), std::move(w)};
        return m;
    }

    static Result<Tensor> run_nearest(const Tensor& x, const resize::Plan& p, const TensorType& out,
                                      const OpContext& ctx) {
        const std::string what = op_what<Resize>();
        const Shape& s = x.shape();
        const IndexMap m = spatial_map(s, resize::nearest_table(p, 2, s[2]), resize::nearest_table(p, 3, s[3]));
        Tensor g = Tensor::zeros(x.dtype, p.out, x.quant);
        JANUS_TRY(const std::optional<Tensor> fill, extrapolation_fill(m, p.extrapolation, p.out));
        JANUS_CHECK(run_index_map(x, m, fill, g, what));
        if (x.quant == out.quant) return g;
        return materialize(g, out, ctx, what);  // seed A4: a selection still requantizes when parameters differ
    }

    /// tf_crop_and_resize: the fill of a gather whose tables hold IndexMap::outside (the float extrapolation_value
    /// broadcast with stride 0); none otherwise.
    static Result<std::optional<Tensor>> extrapolation_fill(const IndexMap& m, float value, const Shape& out) {
        if (!m.has_outside()) return std::optional<Tensor>{};
        const Tensor f = Tensor::from<float>(Shape{1, 1, 1, 1}, {value});
        JANUS_TRY(Layout l, broadcast_to(f.layout, out, op_what<Resize>() + ".extrapolation_value"));
        return std::optional<Tensor>{f.view(l)};
    }

    /// One separable pass: gather two taps (source indices i0, i1 per output position) along `axis` (2 or 3) of
    /// `src`, with their per-position weights (w0, w1 of shape [n] for axis 3, [n, 1] for axis 2, broadcast with
    /// stride 0): the 4 inputs of the pass's map.
    static Result<std::array<Tensor, 4>> pass_inputs(const Tensor& src, int axis, const std::vector<std::int64_t>& i0,
                                                     const std::vector<std::int64_t>& i1, const Tensor& w0,
                                                     const Tensor& w1) {
        const std::string what = op_what<Resize>();
        const Shape& s = src.shape();
        Shape os = s;
        os[axis] = static_cast<std::int64_t>(i0.size());
        const auto table = [&](const std::vector<std::int64_t>& sel) {
            return axis == 3 ? spatial_map(s, resize::iota_table(s[2]), sel)
                             : spatial_map(s, sel, resize::iota_table(s[3]));
        };
        Tensor g0 = Tensor::zeros(src.dtype, os), g1 = Tensor::zeros(src.dtype, os);
        JANUS_CHECK(run_index_map(src, table(i0), std::nullopt, g0, what));
        JANUS_CHECK(run_index_map(src, table(i1), std::nullopt, g1, what));
        JANUS_TRY(Layout l0, broadcast_to(w0.layout, os, what + ".weights"));
        JANUS_TRY(Layout l1, broadcast_to(w1.layout, os, what + ".weights"));
        return std::array<Tensor, 4>{g0, g1, w0.view(l0), w1.view(l1)};
    }

    /// Per-position weights of one axis as a [n] (axis 3) or [n, 1] (axis 2) tensor.
    template <class T>
    static Tensor weight_tensor(const std::vector<T>& v, int axis) {
        const auto n = static_cast<std::int64_t>(v.size());
        return Tensor::from<T>(axis == 3 ? Shape{n} : Shape{n, 1}, v);
    }

    /// The quantized linear weights of one axis: (2^11 - w1, w1), w1 = fixed_weight(f).
    static std::array<Tensor, 2> fixed_weights(const resize::LinearAxis& t, int axis) {
        std::vector<std::int32_t> v0, v1;
        for (double f : t.frac) {
            const std::int32_t w1 = resize::fixed_weight(f);
            v0.push_back(resize::weight_one - w1);
            v1.push_back(w1);
        }
        return {weight_tensor(v0, axis), weight_tensor(v1, axis)};
    }

    /// Float linear and cubic: per axis (W, then H) the taps in pairs, each pair one map w0 * a + w1 * b (float
    /// weights of the double ones), the pairs' results added left to right (cubic: (w0 a + w1 b) + (w2 c + w3 d));
    /// then tf_crop_and_resize's extrapolated rows and columns are overwritten by one gather.
    static Result<Tensor> run_float(const Tensor& x, const resize::Plan& p, const OpContext& ctx) {
        using namespace expr;
        const std::string what = op_what<Resize>();
        const Shape& s = x.shape();
        const auto e = add(mul(In<0, float>{}, In<2, float>{}), mul(In<1, float>{}, In<3, float>{}));
        const auto sum = add(In<0, float>{}, In<1, float>{});
        const MapOptions mo{ctx.simd, -1};
        Tensor cur = x;
        for (int axis : {3, 2}) {
            resize::Taps t;
            if (p.mode == resize::Mode::cubic) {
                JANUS_TRY(t, resize::cubic_taps(p, axis, s[axis], what));
            } else {
                t = resize::linear_taps(p, axis, s[axis]);
            }
            std::optional<Tensor> acc;
            for (std::size_t k = 0; k + 1 < t.index.size(); k += 2) {
                std::vector<float> w0(t.weight[k].begin(), t.weight[k].end()),
                    w1(t.weight[k + 1].begin(), t.weight[k + 1].end());
                JANUS_TRY(auto ins, pass_inputs(cur, axis, t.index[k], t.index[k + 1], weight_tensor(w0, axis),
                                                weight_tensor(w1, axis)));
                Tensor y = Tensor::zeros(DType::f32, ins[0].shape());
                JANUS_CHECK(run_map(e, std::span<const Tensor>(ins), y, mo, what));
                if (acc) {
                    const std::array<Tensor, 2> both{*acc, y};
                    Tensor z = Tensor::zeros(DType::f32, y.shape());
                    JANUS_CHECK(run_map(sum, std::span<const Tensor>(both), z, mo, what));
                    y = z;
                }
                acc = y;
            }
            cur = *acc;
        }
        if (p.coord != resize::Coord::tf_crop_and_resize) return cur;
        const IndexMap m = spatial_map(p.out, resize::extrapolation_table(p, 2, s[2]),
                                       resize::extrapolation_table(p, 3, s[3]));
        JANUS_TRY(const std::optional<Tensor> fill, extrapolation_fill(m, p.extrapolation, p.out));
        if (!fill) return cur;
        Tensor y = Tensor::zeros(DType::f32, p.out);
        JANUS_CHECK(run_index_map(cur, m, fill, y, what));
        return y;
    }

    static Result<Tensor> run_linear_quant(const Tensor& x, const resize::Plan& p, const TensorType& out,
                                           const OpContext& ctx) {
        using namespace expr;
        const std::string what = op_what<Resize>();
        const Shape& s = x.shape();
        const std::int32_t zp = p.zp_in;
        const MapOptions mo{ctx.simd, -1};
        const auto tw = resize::linear_table(p, 3, s[3]);
        const auto th = resize::linear_table(p, 2, s[2]);
        const auto ww = fixed_weights(tw, 3);
        const auto wh = fixed_weights(th, 2);
        InputRanges wr;
        wr.r[2] = wr.r[3] = numeric::Interval{0, resize::weight_one};
        wr.set[2] = wr.set[3] = true;
        return visit_quant_dtype(x.dtype, [&](auto tin) -> Result<Tensor> {
            return visit_quant_dtype(out.dtype, [&](auto tout) -> Result<Tensor> {
                using T = typename decltype(tin)::type;
                using To = typename decltype(tout)::type;
                // Pass 1 (columns): t = w0 (a - zp) + w1 (b - zp), Q.11.
                const auto e1 = add(mul(sub(widen(In<0, T>{}), cst(zp)), In<2, std::int32_t>{}),
                                    mul(sub(widen(In<1, T>{}), cst(zp)), In<3, std::int32_t>{}));
                JANUS_CHECK(prove_ranges(e1, wr, what));
                JANUS_TRY(auto in1, pass_inputs(x, 3, tw.i0, tw.i1, ww[0], ww[1]));
                Tensor t1 = Tensor::zeros(DType::i32, in1[0].shape());
                JANUS_CHECK(run_map(e1, std::span<const Tensor>(in1), t1, mo, what));
                // Pass 2 (rows): acc = w0' t0 + w1' t1, Q.22; t0, t1 are convex combinations of (q - zp) in Q.11.
                InputRanges r2 = wr;
                r2.r[0] = r2.r[1] = numeric::Interval{(type_range<T>().lo - zp) * resize::weight_one,
                                                      (type_range<T>().hi - zp) * resize::weight_one};
                r2.set[0] = r2.set[1] = true;
                const auto acc = add(mul(In<0, std::int32_t>{}, In<2, std::int32_t>{}),
                                     mul(In<1, std::int32_t>{}, In<3, std::int32_t>{}));
                JANUS_TRY(auto in2, pass_inputs(t1, 2, th.i0, th.i1, wh[0], wh[1]));
                Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
                if (!p.rescale) {
                    const auto e2 = sat<To>(add(rshift(acc, 2 * resize::weight_bits), cst(p.zp_out)));
                    JANUS_CHECK(prove_ranges(e2, r2, what));
                    JANUS_CHECK(run_map(e2, std::span<const Tensor>(in2), y, mo, what));
                } else {
                    const auto e2 = sat<To>(add(rq(acc, p.m, p.rounding), cst(p.zp_out)));
                    JANUS_CHECK(prove_ranges(e2, r2, what));
                    JANUS_CHECK(run_map(e2, std::span<const Tensor>(in2), y, mo, what));
                }
                return y;
            });
        });
    }
};

JANUS_OP_INSTANCES(Resize)

}  // namespace janus::ops
