#pragma once
// A real scale ratio as a Q31 fixed-point multiplier and a power-of-two exponent.
//
// Representation: value = multiplier * 2^(shift - 31), with multiplier in [2^30, 2^31) (normalized) or
// multiplier == 0 (the ratio is zero or flushed). shift in [-31, 30], so ratios in [2^-32, 2^30) are representable.
//   - shift > 0 is a left shift (ratios >= 1), shift < 0 a right shift (TFLite's convention).
//   - The NPU stores the total right shift `31 - shift` in 0..63 (docs/vnpu.md, requantization tables).
// Rounding of the ratio itself: the 31-bit mantissa is rounded to nearest (ties away from zero, std::llround); a
// mantissa that rounds up to 2^31 is renormalized to 2^30 with shift + 1.
// Flushing: a ratio < 2^-32 (compared before rounding) becomes multiplier 0. This is EXACT for every int32 input under
// every rounding mode of rounding.hpp, because |x * ratio| < 2^31 * 2^-32 = 1/2 rounds to 0. (TFLite's
// QuantizeMultiplier decides after rounding, so it maps ratios in [2^-32 - 2^-64, 2^-32) to (2^30, -31) = 2^-32,
// for which round_double sends INT32_MIN to -1 and INT32_MAX to 1 although the real products round to 0.)
// Errors: a ratio that is negative, NaN or infinite ("ratio-finite-nonnegative"), or whose 31-bit rounding reaches
// 2^30, i.e. ratio >= 2^30 - 2^-2 ("ratio-below-2^30"), is an input error (it names `what`). The largest
// representable value is (2^31 - 1) * 2^-1 = 2^30 - 1/2.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include <janus/core/error.hpp>

namespace janus::numeric {

struct QuantizedMultiplier {
    std::int32_t multiplier = 0;  ///< Q31 mantissa, 0 or in [2^30, 2^31)
    std::int32_t shift = 0;       ///< power-of-two exponent, in [-31, 30]

    /// The exact real value represented (long double holds 31 bits of mantissa exactly).
    long double value() const noexcept { return std::ldexp(static_cast<long double>(multiplier), shift - 31); }
    bool is_zero() const noexcept { return multiplier == 0; }
    friend bool operator==(const QuantizedMultiplier&, const QuantizedMultiplier&) = default;
};

inline constexpr int min_multiplier_shift = -31;
inline constexpr int max_multiplier_shift = 30;

/// Is `q` a well-formed multiplier (normalized or zero, shift in range)? Decoders of untrusted tables use this.
constexpr bool is_valid(const QuantizedMultiplier& q) noexcept {
    if (q.multiplier == 0) return q.shift == 0;
    return q.multiplier >= (std::int32_t{1} << 30) && q.shift >= min_multiplier_shift && q.shift <= max_multiplier_shift;
}

namespace detail {
/// Shortest text that reads back as the same double ("%.17g"): std::to_string would print 1e-10 as "0.000000".
inline std::string format_ratio(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
}  // namespace detail

/// Derive (multiplier, shift) from a real ratio. `what` names the ratio in error messages.
inline Result<QuantizedMultiplier> quantize_multiplier(double real, const std::string& what = "scale ratio") {
    if (std::isnan(real) || std::isinf(real) || real < 0.0)
        return make_error(what, "", "ratio-finite-nonnegative",
                          "scale ratio must be a finite number >= 0, got " + detail::format_ratio(real));
    if (real < 0x1p-32) return QuantizedMultiplier{0, 0};  // zero, or flushed before rounding: exact, see above
    int exponent = 0;
    const double mantissa = std::frexp(real, &exponent);  // real = mantissa * 2^exponent, mantissa in [0.5, 1)
    std::int64_t q = std::llround(mantissa * 2147483648.0);
    if (q == (std::int64_t{1} << 31)) {
        q /= 2;
        ++exponent;
    }
    JANUS_ASSERT(exponent >= min_multiplier_shift);  // real >= 2^-32 = 0.5 * 2^-31
    if (exponent > max_multiplier_shift)
        return make_error(what, "", "ratio-below-2^30",
                          "scale ratio " + detail::format_ratio(real) +
                              " rounds to 2^30 or more; the largest representable ratio is 2^30 - 1/2");
    return QuantizedMultiplier{static_cast<std::int32_t>(q), exponent};
}

}  // namespace janus::numeric
