#pragma once
// Rounding modes are TYPES. A kernel is `requantize<round_double>(...)`, never a macro switch.
//
// Each mode computes   y = round(x * M)   for an int32 x and a QuantizedMultiplier M = m * 2^(shift-31),
// saturated to int32. They differ only in how "round" is done:
//
// | type               | how                                                        | source                        |
// |--------------------|------------------------------------------------------------|-------------------------------|
// | round_double       | sat-left-shift, SRDHM (half up), RoundingDivideByPOT       | TFLite MultiplyByQuantized-   |
// |                    | (half away): two roundings, may differ from exact by 1 LSB | Multiplier, gemmlowp          |
// | round_single       | (x*m + 2^(t-1)) >> t, t = 31 - shift: one rounding,         | TFLite TFLITE_SINGLE_ROUNDING |
// |                    | ties toward +infinity                                      |                               |
// | round_half_even    | exact x*M rounded to nearest, ties to even                 | ONNX QuantizeLinear rounding  |
//
// What is promised: all three are exact integer functions (no floating point), defined for every int32 x and every
// valid M, constexpr. round_half_even and round_single equal the exact value saturated to int32, and differ from
// each other only on exact ties. If x * 2^max(shift, 0) fits int32 (always true for shift <= 0), the exact value
// fits int32, nothing saturates, and round_double differs from it by at most 1 (|round_double - x*M| <= 1/4 + 1/2
// and |exact - x*M| <= 1/2; for shift >= 0 there is only one rounding and round_double == round_single).
// tests/numeric/rounding.cpp checks all of this against an __int128 reference on 10^6 random inputs and boundaries.
// What is NOT promised: when x * 2^shift overflows int32 (shift > 0 only), round_double saturates the shifted value
// first and its result can be far from the exact one (it keeps the sign and has magnitude >= 2^30, e.g. x = INT32_MIN,
// M = 2^30 * 2^(1-31) gives -2^30, exact -2^31); TFLite is undefined there. numeric/range.hpp (requantize_range)
// refuses such kernels.
// NPU: the VEC unit implements all three; a requantization table or parameter block names its mode (docs/vnpu.md).
#include <concepts>
#include <cstdint>
#include <string_view>

#include <janus/numeric/fixed_point.hpp>
#include <janus/numeric/multiplier.hpp>

namespace janus::numeric {

struct round_double {
    static constexpr std::string_view name = "double";
    static constexpr std::int32_t apply(std::int32_t x, QuantizedMultiplier q) noexcept {
        const int left = q.shift > 0 ? q.shift : 0;
        const int right = q.shift > 0 ? 0 : -q.shift;
        return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(saturating_left_shift(x, left), q.multiplier),
                                      right);
    }
};

struct round_single {
    static constexpr std::string_view name = "single";
    static constexpr std::int32_t apply(std::int32_t x, QuantizedMultiplier q) noexcept {
        const int total = 31 - q.shift;  // in [1, 62]
        const std::int64_t prod = static_cast<std::int64_t>(x) * q.multiplier;  // |prod| < 2^62
        return saturate_i32((prod + (std::int64_t{1} << (total - 1))) >> total);
    }
};

struct round_half_even {
    static constexpr std::string_view name = "half_even";
    static constexpr std::int32_t apply(std::int32_t x, QuantizedMultiplier q) noexcept {
        const std::int64_t prod = static_cast<std::int64_t>(x) * q.multiplier;
        return saturate_i32(round_half_even_shift(prod, 31 - q.shift));
    }
};

/// A rounding mode: a type with a name and an exact `apply(int32, QuantizedMultiplier) -> int32`.
template <class R>
concept RoundingMode = requires(std::int32_t x, QuantizedMultiplier q) {
    { R::name } -> std::convertible_to<std::string_view>;
    { R::apply(x, q) } -> std::same_as<std::int32_t>;
};

/// y = round_R(x * M). The one entry point kernels use.
template <RoundingMode R>
constexpr std::int32_t multiply_by_quantized_multiplier(std::int32_t x, QuantizedMultiplier q) noexcept {
    return R::apply(x, q);
}

/// Full requantization of an accumulator: clamp(round_R(acc * M) + zero_point, lo, hi), the addition done in int64
/// (never overflows). Contract: lo <= hi (otherwise the result is defined but meaningless).
template <RoundingMode R>
constexpr std::int32_t requantize(std::int32_t acc, QuantizedMultiplier q, std::int32_t zero_point, std::int32_t lo,
                                  std::int32_t hi) noexcept {
    const std::int64_t v = static_cast<std::int64_t>(R::apply(acc, q)) + zero_point;
    return static_cast<std::int32_t>(v < lo ? lo : v > hi ? hi : v);
}

/// The default rounding of Janus kernels, chosen to match TFLite's reference kernels bit for bit.
using default_rounding = round_double;

}  // namespace janus::numeric
