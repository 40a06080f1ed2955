#pragma once
// Fixed-point integer primitives (gemmlowp semantics), the building blocks of requantization.
//
// Every function here is exact integer arithmetic: no floating point, no undefined behaviour for ANY int32 input
// (including INT32_MIN), constexpr, and identical under NDEBUG. Each is tested against a plain int64/__int128
// reference over >= 10^6 random inputs plus every boundary (tests/numeric/fixed_point.cpp).
// NPU: these are the scalar semantics of the VEC unit's requantize step (docs/vnpu.md, VEC.RQ).
#include <cstdint>
#include <limits>

namespace janus::numeric {

inline constexpr std::int32_t i32_min = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int32_t i32_max = std::numeric_limits<std::int32_t>::max();

/// Saturate an int64 to int32.
constexpr std::int32_t saturate_i32(std::int64_t v) noexcept {
    return v < i32_min ? i32_min : v > i32_max ? i32_max : static_cast<std::int32_t>(v);
}

/// round(a * b / 2^31), ties toward +infinity ("round half up": -0.5 -> 0, +0.5 -> 1), saturating.
/// Contract: defined for all int32 a, b; equals floor((a*b + 2^30) / 2^31). The only overflowing case,
/// a == b == INT32_MIN (exact result 2^31), saturates to INT32_MAX. Matches gemmlowp
/// SaturatingRoundingDoublingHighMul and Arm's SQRDMULH ((2ab + 2^31) >> 32) bit for bit.
/// NOT ties away from zero: the negative nudge is 1 - 2^30, not -2^30 (tests/numeric/fixed_point.cpp pins it).
constexpr std::int32_t saturating_rounding_doubling_high_mul(std::int32_t a, std::int32_t b) noexcept {
    if (a == i32_min && b == i32_min) return i32_max;
    const std::int64_t ab = static_cast<std::int64_t>(a) * static_cast<std::int64_t>(b);
    const std::int64_t nudge = ab >= 0 ? (std::int64_t{1} << 30) : (1 - (std::int64_t{1} << 30));
    // C++ division truncates toward zero; for ab < 0, trunc((ab + 1 - 2^30) / 2^31) == floor((ab + 2^30) / 2^31).
    return static_cast<std::int32_t>((ab + nudge) / (std::int64_t{1} << 31));
}

/// round(x / 2^exponent), ties away from zero. gemmlowp RoundingDivideByPOT. Contract: 0 <= exponent <= 31 (callers
/// check it); never overflows. Outside the contract the result is defined (no UB) but is not round(x / 2^exponent):
/// exponent < 0 returns x unchanged and exponent > 31 behaves as 31.
constexpr std::int32_t rounding_divide_by_pot(std::int32_t x, int exponent) noexcept {
    if (exponent <= 0) return x;
    if (exponent > 31) exponent = 31;
    const std::int32_t mask = static_cast<std::int32_t>((std::int64_t{1} << exponent) - 1);
    const std::int32_t remainder = x & mask;
    const std::int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// x * 2^s saturated to int32, for 0 <= s <= 31. TFLite computes `x * (1 << s)` here, which is undefined on
/// overflow; Janus saturates instead and its range analysis (numeric/range.hpp) refuses kernels where it could happen.
constexpr std::int32_t saturating_left_shift(std::int32_t x, int s) noexcept {
    if (s <= 0) return x;
    if (s > 31) s = 31;
    return saturate_i32(static_cast<std::int64_t>(x) * (std::int64_t{1} << s));
}

/// round(v / 2^s) to nearest, ties to even, for every int64 v and 1 <= s <= 62. Exact; never overflows.
constexpr std::int64_t round_half_even_shift(std::int64_t v, int s) noexcept {
    const std::int64_t q = v >> s;  // arithmetic shift = floor (C++20 guarantees two's complement)
    const std::int64_t rem = v - (q << s);
    const std::int64_t half = std::int64_t{1} << (s - 1);
    return q + ((rem > half || (rem == half && (q & 1) != 0)) ? 1 : 0);
}

}  // namespace janus::numeric
