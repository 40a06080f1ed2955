#pragma once
// Quantization parameters of one tensor: real = scale * (q - zero_point).
//
// Contract:
//   - storage dtype: int8 or uint8 for activations and weights, int32 for biases (zero point 0 by ONNX convention,
//     not enforced: an int32 tensor may carry any zero point in int32).
//   - per-tensor: one scale and one zero point, `axis` empty. Per-axis: one (scale, zero point) per index of `axis`;
//     the axis is part of the meaning and moves with the tensor (transposed(), squeezed(), unsqueezed()).
//   - scales are float32 (as in ONNX), finite and > 0; zero points lie in the storage dtype's range.
//   - uint8 -> int8 is exact: q8 = u8 - 128 and zp8 = zp - 128 (to_int8()).
// Invalid parameters are input errors (Result), never asserts: they come from model files.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/layout/shape.hpp>

namespace janus::numeric {

struct QuantParams {
    DType dtype = DType::i8;
    std::vector<float> scales;             ///< size 1 (per-tensor) or the extent of `axis`
    std::vector<std::int32_t> zero_points; ///< same size as scales
    std::optional<int> axis;               ///< per-axis quantization axis, normalized to [0, rank)

    bool per_tensor() const noexcept { return !axis.has_value(); }
    std::size_t channels() const noexcept { return scales.size(); }
    float scale(std::size_t c = 0) const { return scales[per_tensor() ? 0 : c]; }
    std::int32_t zero_point(std::size_t c = 0) const { return zero_points[per_tensor() ? 0 : c]; }

    friend bool operator==(const QuantParams&, const QuantParams&) = default;

    /// "int8 s=0.05 zp=-3" or "int8 axis=0 s=[...] zp=[...]" (IR dumps).
    std::string str() const;

    /// The same real values stored as int8 (uint8 shifts by 128; int8 and int32 unchanged).
    QuantParams to_int8() const {
        QuantParams q = *this;
        if (dtype == DType::u8) {
            q.dtype = DType::i8;
            for (auto& z : q.zero_points) z -= 128;
        }
        return q;
    }
};

/// Validate and build per-tensor parameters. `what` names the tensor in errors.
Result<QuantParams> make_quant(DType dtype, float scale, std::int32_t zero_point, const std::string& what = "quant");

/// Validate and build per-axis parameters for a tensor of shape `shape` (axis may be negative, ONNX style).
Result<QuantParams> make_quant_per_axis(DType dtype, std::vector<float> scales, std::vector<std::int32_t> zero_points,
                                        std::int64_t axis, const Shape& shape, const std::string& what = "quant");

/// Check that `q` fits a tensor of shape `shape` (axis in range and its extent equal to the channel count).
Status check_quant_fits(const QuantParams& q, const Shape& shape, const std::string& what = "quant");

/// Follow the tensor through a transpose: output axis j is input axis perm[j].
QuantParams transposed(const QuantParams& q, const Dims& perm);
/// Follow the tensor through removal of `removed` (sorted, unique axes, none of them the quantization axis).
Result<QuantParams> squeezed(const QuantParams& q, const Dims& removed, const std::string& what = "quant");
/// Follow the tensor through insertion of new unit axes at `inserted` (sorted output positions).
QuantParams unsqueezed(const QuantParams& q, const Dims& inserted);

// ---------------------------------------------------------------------------------------------------------------
// Implementation

namespace detail {
/// "%.9g": reads back as the same float (std::to_string would print 1e-10 as "0.000000").
inline std::string format_scale(float f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
    return buf;
}
}  // namespace detail

inline std::string QuantParams::str() const {
    std::string s(dtype_name(dtype));
    auto num = [](float f) { return detail::format_scale(f); };
    if (per_tensor()) return s + " s=" + num(scales.at(0)) + " zp=" + std::to_string(zero_points.at(0));
    s += " axis=" + std::to_string(*axis) + " s=[";
    for (std::size_t i = 0; i < scales.size(); ++i) s += (i ? "," : "") + num(scales[i]);
    s += "] zp=[";
    for (std::size_t i = 0; i < zero_points.size(); ++i) s += (i ? "," : "") + std::to_string(zero_points[i]);
    return s + "]";
}

namespace detail {
inline Status check_pair(DType dtype, float scale, std::int32_t zp, const std::string& what, const std::string& pos) {
    if (!(std::isfinite(scale) && scale > 0.0f))
        return make_error(what, pos, "scale-positive-finite",
                          "scale must be finite and > 0, got " + format_scale(scale));
    if (dtype == DType::i8 || dtype == DType::u8) {
        if (zp < qmin(dtype) || zp > qmax(dtype))
            return make_error(what, pos, "zero-point-in-range",
                              "zero point " + std::to_string(zp) + " is outside the " +
                                  std::string(dtype_name(dtype)) + " range [" + std::to_string(qmin(dtype)) + ", " +
                                  std::to_string(qmax(dtype)) + "]");
    } else if (dtype != DType::i32) {
        return make_error(what, pos, "quantized-dtype",
                          std::string(dtype_name(dtype)) + " cannot be quantized (int8, uint8 or int32)");
    }
    return ok_status();
}
}  // namespace detail

inline Result<QuantParams> make_quant(DType dtype, float scale, std::int32_t zero_point, const std::string& what) {
    JANUS_CHECK(detail::check_pair(dtype, scale, zero_point, what, ""));
    return QuantParams{dtype, {scale}, {zero_point}, std::nullopt};
}

inline Result<QuantParams> make_quant_per_axis(DType dtype, std::vector<float> scales,
                                               std::vector<std::int32_t> zero_points, std::int64_t axis,
                                               const Shape& shape, const std::string& what) {
    JANUS_TRY(int ax, normalize_axis(axis, shape.size(), what + ".axis"));
    if (zero_points.empty()) zero_points.assign(scales.size(), 0);  // ONNX: zero point defaults to 0
    if (scales.size() != zero_points.size())
        return make_error(what, "", "scale-zero-point-same-length",
                          std::to_string(scales.size()) + " scales but " + std::to_string(zero_points.size()) +
                              " zero points");
    for (std::size_t c = 0; c < scales.size(); ++c)
        JANUS_CHECK(detail::check_pair(dtype, scales[c], zero_points[c], what, "channel " + std::to_string(c)));
    QuantParams q{dtype, std::move(scales), std::move(zero_points), ax};
    JANUS_CHECK(check_quant_fits(q, shape, what));
    return q;
}

inline Status check_quant_fits(const QuantParams& q, const Shape& shape, const std::string& what) {
    if (q.scales.empty() || q.scales.size() != q.zero_points.size())
        return make_error(what, "", "scale-zero-point-same-length", "scales and zero points must be non-empty and "
                                                                    "of equal length");
    if (q.per_tensor()) {
        if (q.scales.size() != 1)
            return make_error(what, "", "per-tensor-single-scale", "per-tensor quantization needs exactly one scale");
        return ok_status();
    }
    if (*q.axis < 0 || *q.axis >= shape.size())
        return make_error(what, "", "axis-in-range",
                          "quantization axis " + std::to_string(*q.axis) + " is outside a rank-" +
                              std::to_string(shape.size()) + " tensor");
    if (static_cast<std::int64_t>(q.scales.size()) != shape[*q.axis])
        return make_error(what, "axis " + std::to_string(*q.axis), "channels-match-extent",
                          std::to_string(q.scales.size()) + " scales for an axis of extent " +
                              std::to_string(shape[*q.axis]));
    return ok_status();
}

inline QuantParams transposed(const QuantParams& q, const Dims& perm) {
    QuantParams r = q;
    if (q.axis)
        for (int j = 0; j < perm.size(); ++j)
            if (perm[j] == *q.axis) r.axis = j;
    return r;
}

inline Result<QuantParams> squeezed(const QuantParams& q, const Dims& removed, const std::string& what) {
    QuantParams r = q;
    if (!q.axis) return r;
    int shift = 0;
    for (auto a : removed) {
        if (a == *q.axis)
            return make_error(what, "axis " + std::to_string(a), "keep-quantization-axis",
                              "cannot remove the per-axis quantization axis");
        if (a < *q.axis) ++shift;
    }
    r.axis = *q.axis - shift;
    return r;
}

inline QuantParams unsqueezed(const QuantParams& q, const Dims& inserted) {
    QuantParams r = q;
    if (!q.axis) return r;
    int ax = *q.axis;
    for (auto a : inserted)  // sorted output positions: each one at or before the (moving) axis shifts it right
        if (a <= ax) ++ax;
    r.axis = ax;
    return r;
}

}  // namespace janus::numeric
