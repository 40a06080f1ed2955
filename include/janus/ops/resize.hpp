#pragma once
// Resize (ONNX opsets 11, 13, 18, 19), restricted to 2-D spatial resizing of an N x C x H x W tensor: the scale of N
// and C must be 1 (their sizes unchanged). Constant inputs are attributes (the importer folds roi, scales, sizes):
// exactly one of `scales` (floats) and `sizes` (ints) is given, one entry per axis of `axes` (default: all 4).
// Float32 and quantized int8/uint8. docs/numerics.md "Resize" holds the tables and measured bounds (seed D14: same
// output shape, different answers — the coordinate rule, the nearest rounding and the weights decide the result).
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
//   align_corners         L_out > 1 ? x * (L_in - 1) / (L_out - 1) : 0      (integer L_out, as the spec and ORT;
//                         with scales, in * scale must be an integer: the ONNX reference divides by in * scale - 1,
//                         "align-corners-extent-ambiguous", onnx/onnx issue 2462)
//   asymmetric            x / scale
//   tf_half_pixel_for_nn  (x + 0.5) / scale
//   tf_crop_and_resize    refused ("tf-crop-and-resize-unsupported": it needs roi and extrapolation)
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
//           half away from zero), else sat(rq(acc, s_in / (s_out 2^22)) + zp_out) (default_rounding).
//     Headroom: the interval proof (expr::prove_ranges) sees each product of pass 2 in (lo - zp) 2^22 .. (hi - zp)
//     2^22 and their sum within 510 * 2^22 = 2139095040 < 2^31 - 1; with 12 fractional bits it would not fit, so 11
//     is the most this two-pass form allows. Pass 2's input range is declared from pass 1's convexity (w0, w1 >= 0,
//     w0 + w1 = 2^11), the one assumed bound, stated here.
//   Error against "dequantize, resize in exact arithmetic, quantize (half to even)": weight rounding moves the value
//   by at most 2 * 2^-12 * 255 ~= 0.125 input LSB; with the final rounding the result is within 1 output LSB while
//   0.125 s_in / s_out < 1 (s_in / s_out <= 7; measured max 1 LSB: tests/ops_resize, docs/numerics.md). Ties round
//   half away from the zero point (the reference quantizes half to even).
// Other attributes: cubic_coeff_a and extrapolation_value only affect cubic and tf_crop_and_resize (both refused),
// so any finite value is accepted and has no effect; exclude_outside must be 0 and antialias must be 0
// ("exclude-outside-unsupported", "antialias-unsupported"); mode cubic is refused ("mode-cubic-unsupported").
// Quantization rule (seed A10): nearest proposes the input's quantization (a selection preserves real values);
// linear leaves the output quantization to the caller (require_output_quant) and needs per-tensor parameters.
// Rules: resize-rank-4, scales-or-sizes, scales-length, sizes-length, axis-in-range, axes-unique,
// resize-batch-channel-unchanged, spatial-input-nonempty, output-extent-in-range, scale-extent-unambiguous,
// align-corners-extent-ambiguous, mode-cubic-unsupported, tf-crop-and-resize-unsupported, antialias-unsupported,
// exclude-outside-unsupported, resize-keeps-quantization-axis, per-tensor-quantization, output-quantization-required,
// input-not-quantized, output-type-matches-inference (plus op.hpp's and the schema's attribute rules).
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

enum class Mode { nearest, linear };
enum class Coord {
    half_pixel,
    half_pixel_symmetric,
    pytorch_half_pixel,
    align_corners,
    asymmetric,
    tf_half_pixel_for_nn
};
enum class Nearest { round_prefer_floor, round_prefer_ceil, floor, ceil };

/// Fractional bits of the quantized linear weights (see the header comment for why 11).
inline constexpr int weight_bits = 11;
inline constexpr std::int32_t weight_one = std::int32_t{1} << weight_bits;

/// The coordinate in the input of output coordinate x along one axis (the table in the header comment).
inline double original_coordinate(Coord m, std::int64_t x, double scale, std::int64_t len_in, std::int64_t len_out) {
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
};

/// Source index of every output coordinate of one axis (nearest).
inline std::vector<std::int64_t> nearest_table(const Plan& p, std::int64_t len_in, std::int64_t len_out, double scale) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(len_out));
    for (std::int64_t j = 0; j < len_out; ++j) {
        const double x = round_nearest(p.nearest, original_coordinate(p.coord, j, scale, len_in, len_out));
        t[static_cast<std::size_t>(j)] = static_cast<std::int64_t>(std::clamp(x, 0.0, static_cast<double>(len_in - 1)));
    }
    return t;
}

/// Two source indices and the fraction of the second, per output coordinate of one axis (linear).
struct LinearAxis {
    std::vector<std::int64_t> i0, i1;
    std::vector<double> frac;
};
inline LinearAxis linear_table(const Plan& p, std::int64_t len_in, std::int64_t len_out, double scale) {
    LinearAxis a;
    for (std::int64_t j = 0; j < len_out; ++j) {
        const double x = std::clamp(original_coordinate(p.coord, j, scale, len_in, len_out), 0.0,
                                    static_cast<double>(len_in - 1));
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
                                         one_of<3>{{"stretch", "not_larger", "not_smaller"}}));

    /// Modes, output extents and scales (rules in the header comment and at each error).
    static Result<resize::Plan> plan(const TensorType& in, const Attrs& a) {
        using namespace resize;
        const std::string what = op_what<Resize>();
        Plan p;
        if (a.mode == "cubic")
            return make_error(what + ".mode", "", "mode-cubic-unsupported",
                              "cubic interpolation is not supported; use nearest or linear");
        p.mode = a.mode == "linear" ? Mode::linear : Mode::nearest;
        const std::string& c = a.coordinate_transformation_mode;
        if (c == "tf_crop_and_resize")
            return make_error(what + ".coordinate_transformation_mode", "", "tf-crop-and-resize-unsupported",
                              "tf_crop_and_resize (roi and extrapolation) is not supported");
        p.coord = c == "half_pixel_symmetric" ? Coord::half_pixel_symmetric
                  : c == "pytorch_half_pixel" ? Coord::pytorch_half_pixel
                  : c == "align_corners"      ? Coord::align_corners
                  : c == "asymmetric"         ? Coord::asymmetric
                  : c == "tf_half_pixel_for_nn" ? Coord::tf_half_pixel_for_nn
                                              : Coord::half_pixel;
        const std::string& n = a.nearest_mode;
        p.nearest = n == "round_prefer_ceil" ? Nearest::round_prefer_ceil
                    : n == "floor"           ? Nearest::floor
                    : n == "ceil"            ? Nearest::ceil
                                             : Nearest::round_prefer_floor;
        if (a.antialias != 0)
            return make_error(what + ".antialias", "", "antialias-unsupported", "antialias must be 0");
        if (a.exclude_outside != 0)
            return make_error(what + ".exclude_outside", "", "exclude-outside-unsupported",
                              "exclude_outside must be 0 (it only renormalizes cubic weights near the border)");
        if (in.shape.size() != 4)
            return make_error(what + ".input[0]", "", "resize-rank-4",
                              "Resize resizes the spatial axes of an N x C x H x W tensor; got " + in.str());
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
                    return make_error(what + ".scales", "element " + std::to_string(i), "scale-extent-unambiguous",
                                      "floor(" + std::to_string(in.shape[axes[i]]) + " * " + expr::detail::num(s) +
                                          ") is " + std::to_string(static_cast<std::int64_t>(exact)) +
                                          " in double but " + std::to_string(static_cast<std::int64_t>(ort)) +
                                          " in float (ONNX reference and ONNX Runtime differ); give sizes instead");
                // align_corners divides by L_out - 1: the spec and ONNX Runtime take the integer extent, the ONNX
                // reference takes in * scale (onnx/onnx issue 2462); they agree only when in * scale is an integer.
                const double product = static_cast<double>(s) * static_cast<double>(in.shape[axes[i]]);
                if (p.coord == Coord::align_corners && exact != product)
                    return make_error(what + ".scales", "element " + std::to_string(i),
                                      "align-corners-extent-ambiguous",
                                      "align_corners with extent " + std::to_string(in.shape[axes[i]]) + " * scale " +
                                          expr::detail::num(s) + " not an integer: the ONNX reference and ONNX "
                                          "Runtime differ; give sizes instead");
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
        JANUS_TRY(resize::Plan p, plan(in[0], a));
        if (!q) return TensorType{DType::f32, p.out, std::nullopt};
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
        const std::string what = op_what<Resize>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(TensorType inferred, infer(std::span<const TensorType>(&t0, 1), a));
        JANUS_TRY(resize::Plan p, plan(t0, a));
        if (out.dtype != inferred.dtype || !(out.shape == inferred.shape))
            return make_error(what, "output", "output-type-matches-inference",
                              "requested output " + out.str() + " but the op produces " + inferred.str());
        if (p.mode == resize::Mode::nearest) return run_nearest(in[0], p, inferred, out, ctx);
        if (!t0.quantized()) {
            if (out.quant)
                return make_error(what, "output", "input-not-quantized",
                                  "a float resize cannot produce a quantized output: " + out.str());
            return run_linear_float(in[0], p, ctx);
        }
        JANUS_CHECK(require_output_quant(out, what));
        return run_linear_quant(in[0], p, out, ctx);
    }

private:
    static IndexMap spatial_map(const Shape& s, std::vector<std::int64_t> h, std::vector<std::int64_t> w) {
        IndexMap m;
        m.axes = {resize::iota_table(s[0]), resize::iota_table(s[1]), std::move(h), std::move(w)};
        return m;
    }

    static Result<Tensor> run_nearest(const Tensor& x, const resize::Plan& p, const TensorType& moved,
                                      const TensorType& out, const OpContext& ctx) {
        const std::string what = op_what<Resize>();
        JANUS_CHECK(movement::check_output(moved, out, what));
        const Shape& s = x.shape();
        const IndexMap m = spatial_map(s, resize::nearest_table(p, s[2], p.out[2], p.scale[2]),
                                       resize::nearest_table(p, s[3], p.out[3], p.scale[3]));
        Tensor g = Tensor::zeros(x.dtype, p.out, x.quant);
        JANUS_CHECK(run_index_map(x, m, std::nullopt, g, what));
        if (moved.quant == out.quant) return g;
        return materialize(g, out, ctx, what);  // seed A4: a selection still requantizes when parameters differ
    }

    /// One separable pass: gather the two taps along `axis` (2 or 3) of `src` and combine them with the per-position
    /// weights (w0, w1 of shape [n] for axis 3, [n, 1] for axis 2, broadcast with stride 0).
    static Result<std::array<Tensor, 4>> pass_inputs(const Tensor& src, int axis, const resize::LinearAxis& t,
                                                     const Tensor& w0, const Tensor& w1) {
        const std::string what = op_what<Resize>();
        const Shape& s = src.shape();
        Shape os = s;
        os[axis] = static_cast<std::int64_t>(t.i0.size());
        const auto table = [&](const std::vector<std::int64_t>& sel) {
            return axis == 3 ? spatial_map(s, resize::iota_table(s[2]), sel)
                             : spatial_map(s, sel, resize::iota_table(s[3]));
        };
        Tensor g0 = Tensor::zeros(src.dtype, os), g1 = Tensor::zeros(src.dtype, os);
        JANUS_CHECK(run_index_map(src, table(t.i0), std::nullopt, g0, what));
        JANUS_CHECK(run_index_map(src, table(t.i1), std::nullopt, g1, what));
        JANUS_TRY(Layout l0, broadcast_to(w0.layout, os, what + ".weights"));
        JANUS_TRY(Layout l1, broadcast_to(w1.layout, os, what + ".weights"));
        return std::array<Tensor, 4>{g0, g1, w0.view(l0), w1.view(l1)};
    }

    template <class T>
    static std::array<Tensor, 2> weight_tensors(const resize::LinearAxis& t, int axis) {
        std::vector<T> v0, v1;
        for (double f : t.frac) {
            if constexpr (std::is_same_v<T, float>) {
                v0.push_back(static_cast<float>(1.0 - f));
                v1.push_back(static_cast<float>(f));
            } else {
                const std::int32_t w1 = resize::fixed_weight(f);
                v0.push_back(resize::weight_one - w1);
                v1.push_back(w1);
            }
        }
        const auto n = static_cast<std::int64_t>(t.frac.size());
        const Shape s = axis == 3 ? Shape{n} : Shape{n, 1};
        return {Tensor::from<T>(s, v0), Tensor::from<T>(s, v1)};
    }

    static Result<Tensor> run_linear_float(const Tensor& x, const resize::Plan& p, const OpContext& ctx) {
        using namespace expr;
        const std::string what = op_what<Resize>();
        const Shape& s = x.shape();
        const auto e = add(mul(In<0, float>{}, In<2, float>{}), mul(In<1, float>{}, In<3, float>{}));
        const MapOptions mo{ctx.simd, -1};
        Tensor cur = x;
        for (int axis : {3, 2}) {
            const auto t = resize::linear_table(p, s[axis], p.out[axis], p.scale[static_cast<std::size_t>(axis)]);
            const auto w = weight_tensors<float>(t, axis);
            JANUS_TRY(auto ins, pass_inputs(cur, axis, t, w[0], w[1]));
            Tensor y = Tensor::zeros(DType::f32, ins[0].shape());
            JANUS_CHECK(run_map(e, std::span<const Tensor>(ins), y, mo, what));
            cur = y;
        }
        return cur;
    }

    static Result<Tensor> run_linear_quant(const Tensor& x, const resize::Plan& p, const TensorType& out,
                                           const OpContext& ctx) {
        using namespace expr;
        using R = numeric::default_rounding;
        const std::string what = op_what<Resize>();
        const Shape& s = x.shape();
        const numeric::QuantParams& qi = *x.quant;
        const numeric::QuantParams& qo = *out.quant;
        const std::int32_t zp = qi.zero_point();
        const MapOptions mo{ctx.simd, -1};
        const bool same = qi == qo;
        numeric::QuantizedMultiplier m{};
        if (!same) {
            const double q22 = static_cast<double>(resize::weight_one) * resize::weight_one;  // 2^22
            JANUS_TRY(m, numeric::quantize_multiplier(
                             static_cast<double>(qi.scale()) / (static_cast<double>(qo.scale()) * q22),
                             what + ": requantization ratio"));
        }
        const auto tw = resize::linear_table(p, s[3], p.out[3], p.scale[3]);
        const auto th = resize::linear_table(p, s[2], p.out[2], p.scale[2]);
        const auto ww = weight_tensors<std::int32_t>(tw, 3);
        const auto wh = weight_tensors<std::int32_t>(th, 2);
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
                JANUS_TRY(auto in1, pass_inputs(x, 3, tw, ww[0], ww[1]));
                Tensor t1 = Tensor::zeros(DType::i32, in1[0].shape());
                JANUS_CHECK(run_map(e1, std::span<const Tensor>(in1), t1, mo, what));
                // Pass 2 (rows): acc = w0' t0 + w1' t1, Q.22; t0, t1 are convex combinations of (q - zp) in Q.11.
                InputRanges r2 = wr;
                r2.r[0] = r2.r[1] = numeric::Interval{(type_range<T>().lo - zp) * resize::weight_one,
                                                      (type_range<T>().hi - zp) * resize::weight_one};
                r2.set[0] = r2.set[1] = true;
                const auto acc = add(mul(In<0, std::int32_t>{}, In<2, std::int32_t>{}),
                                     mul(In<1, std::int32_t>{}, In<3, std::int32_t>{}));
                JANUS_TRY(auto in2, pass_inputs(t1, 2, th, wh[0], wh[1]));
                Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
                if (same) {
                    const auto e2 = sat<To>(add(rshift(acc, 2 * resize::weight_bits), cst(qo.zero_point())));
                    JANUS_CHECK(prove_ranges(e2, r2, what));
                    JANUS_CHECK(run_map(e2, std::span<const Tensor>(in2), y, mo, what));
                } else {
                    const auto e2 = sat<To>(add(rq<R>(acc, m), cst(qo.zero_point())));
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
