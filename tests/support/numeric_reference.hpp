#pragma once
// Plain reference implementations of the numeric primitives (tests and fuzzers only; never shipped).
//
// Deliberately naive second implementations: each function writes the mathematical definition as an exact rational
// number n / d in __int128 and rounds it with an explicitly named tie rule. Nothing is shared with
// include/janus/numeric/ except the QuantizedMultiplier type. The fast code is compared against these with
// tolerance 0 (tests/numeric/fixed_point.cpp, tests/numeric/rounding.cpp, fuzz/requantize.cpp,
// fuzz/quantize_multiplier.cpp).
//
// Ranges: every intermediate here is bounded by |x| * |m| * 2^31 <= 2^93 < 2^127, so no __int128 overflow.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>

namespace janus::reference {

__extension__ typedef __int128 i128;  // __extension__: silences -Wpedantic, this file is GCC/Clang only

inline constexpr std::int32_t i32_min = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int32_t i32_max = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

/// How an exact tie (fraction exactly 1/2) is broken.
enum class Tie {
    to_even,         ///< ONNX QuantizeLinear, IEEE default
    toward_pos_inf,  ///< "round half up": Arm SQRDMULH, gemmlowp SRDHM, TFLite single rounding
    away_from_zero,  ///< gemmlowp RoundingDivideByPOT, std::llround
};

constexpr i128 pow2(int e) { return i128{1} << e; }

/// Floor division for d > 0, written out: q = floor(n / d), r = n - q*d in [0, d).
struct FloorDiv {
    i128 q;
    i128 r;
};
constexpr FloorDiv floor_div(i128 n, i128 d) {
    i128 q = n / d;  // C++ '/' truncates toward zero
    i128 r = n % d;
    if (r < 0) {
        q -= 1;
        r += d;
    }
    return {q, r};
}

/// Is n / d (d > 0) exactly halfway between two integers?
constexpr bool is_tie(i128 n, i128 d) { return 2 * floor_div(n, d).r == d; }

/// round(n / d) for d > 0, exact, ties broken by `tie`.
constexpr i128 round_div(i128 n, i128 d, Tie tie) {
    const auto [q, r] = floor_div(n, d);
    if (2 * r < d) return q;
    if (2 * r > d) return q + 1;
    switch (tie) {  // n / d == q + 1/2 exactly
        case Tie::to_even: return q % 2 == 0 ? q : q + 1;
        case Tie::toward_pos_inf: return q + 1;
        case Tie::away_from_zero: return q >= 0 ? q + 1 : q;  // q + 1/2 > 0 iff q >= 0
    }
    return q;
}

constexpr std::int32_t saturate_i32(i128 v) {
    return v < i32_min ? i32_min : v > i32_max ? i32_max : static_cast<std::int32_t>(v);
}
constexpr std::int64_t saturate_i64(i128 v) {
    return v < i64_min ? i64_min : v > i64_max ? i64_max : static_cast<std::int64_t>(v);
}
constexpr bool fits_i32(i128 v) { return v >= i32_min && v <= i32_max; }

// ---------------------------------------------------------------------------------------------------------------
// fixed_point.hpp

/// SQRDMULH / gemmlowp SRDHM: round(a * b / 2^31), ties toward +infinity, saturated to int32.
constexpr std::int32_t srdhm(std::int32_t a, std::int32_t b) {
    return saturate_i32(round_div(i128{a} * b, pow2(31), Tie::toward_pos_inf));
}

/// gemmlowp RoundingDivideByPOT: round(x / 2^e), ties away from zero, 0 <= e <= 31.
constexpr std::int32_t rounding_divide_by_pot(std::int32_t x, int e) {
    return static_cast<std::int32_t>(round_div(x, pow2(e), Tie::away_from_zero));
}

/// x * 2^s saturated to int32, 0 <= s <= 31.
constexpr std::int32_t saturating_left_shift(std::int32_t x, int s) { return saturate_i32(i128{x} * pow2(s)); }

/// round(v / 2^s), ties to even, 1 <= s <= 62.
constexpr std::int64_t round_half_even_shift(std::int64_t v, int s) {
    return static_cast<std::int64_t>(round_div(v, pow2(s), Tie::to_even));
}

// ---------------------------------------------------------------------------------------------------------------
// rounding.hpp

/// The exact product x * m * 2^(shift - 31) as the rational n / d (d = 2^(31 - shift) >= 2 for shift <= 30).
constexpr i128 product_num(std::int32_t x, std::int32_t m) { return i128{x} * m; }
constexpr i128 product_den(int shift) { return pow2(31 - shift); }

/// round(x * m * 2^(shift - 31)) with `tie`, NOT saturated.
constexpr i128 exact_scaled(std::int32_t x, std::int32_t m, int shift, Tie tie) {
    return round_div(product_num(x, m), product_den(shift), tie);
}
/// Is x * m * 2^(shift - 31) exactly halfway between two integers?
constexpr bool exact_is_tie(std::int32_t x, std::int32_t m, int shift) {
    return is_tie(product_num(x, m), product_den(shift));
}

/// The precondition of round_double's "within 1" bound: the left shift x * 2^max(shift, 0) fits int32.
constexpr bool left_shift_fits(std::int32_t x, int shift) { return shift <= 0 || fits_i32(i128{x} * pow2(shift)); }

/// TFLite MultiplyByQuantizedMultiplier (double rounding), composed from the references above.
constexpr std::int32_t tflite_double_rounding(std::int32_t x, std::int32_t m, int shift) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return rounding_divide_by_pot(srdhm(saturating_left_shift(x, left), m), right);
}

/// clamp(y + zero_point, lo, hi) in exact arithmetic, lo <= hi.
constexpr std::int32_t clamp_add(std::int32_t y, std::int32_t zero_point, std::int32_t lo, std::int32_t hi) {
    const i128 v = i128{y} + zero_point;
    return static_cast<std::int32_t>(v < lo ? lo : v > hi ? hi : v);
}

// ---------------------------------------------------------------------------------------------------------------
// multiplier.hpp

/// What quantize_multiplier must return for `real`, found without frexp/llround.
struct MultiplierRef {
    enum Kind { value, error_not_finite_nonnegative, error_too_large } kind = value;
    std::int32_t multiplier = 0;
    int shift = 0;
};

/// Rule (multiplier.hpp): NaN, +-inf, < 0 -> error; 0 and every ratio < 2^-32 -> (0, 0); otherwise the mantissa is
/// rounded to 31 bits (ties away from zero), 2^31 renormalized to 2^30 with exponent + 1; exponent > 30 -> error.
inline MultiplierRef quantize_multiplier_ref(double real) {
    if (std::isnan(real) || std::isinf(real) || real < 0.0) return {MultiplierRef::error_not_finite_nonnegative};
    if (real < 0x1p-32) return {};  // includes +-0: flushed
    // Find e with 2^(e-1) <= real < 2^e by exact power-of-two scaling (long double: no rounding happens).
    long double v = real;
    int e = 0;
    while (v >= 1.0L) {
        v /= 2;
        ++e;
    }
    while (v < 0.5L) {
        v *= 2;
        --e;
    }
    // real >= 2^-32 is a normal double, so v * 2^53 is an integer in [2^52, 2^53).
    const i128 mant53 = static_cast<i128>(v * 0x1p53L);
    i128 m = round_div(mant53, pow2(22), Tie::away_from_zero);
    if (m == pow2(31)) {
        m = pow2(30);
        ++e;
    }
    if (e > 30) return {MultiplierRef::error_too_large};
    return {MultiplierRef::value, static_cast<std::int32_t>(m), e};
}

// ---------------------------------------------------------------------------------------------------------------
// Deterministic, biased generators (tests only). std::mt19937_64's output is specified by the standard; the
// std::*_distribution classes are not, so values are mapped by hand to stay identical on every standard library.

class BiasedRng {
public:
    explicit BiasedRng(std::uint64_t seed) : rng_(seed) {}

    std::uint64_t bits() { return rng_(); }
    /// Uniform in [lo, hi] (modulo bias is irrelevant here).
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
        const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
        const std::uint64_t r = span == 0 ? bits() : bits() % span;
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r);
    }
    bool one_in(std::uint64_t n) { return bits() % n == 0; }

    /// int32 biased toward boundaries: small values, +-2^k (+-1), extremes, ties of power-of-two divisions,
    /// log-uniform magnitudes, and plain uniform values.
    std::int32_t i32() {
        switch (bits() % 16) {
            case 0: return static_cast<std::int32_t>(uniform(-64, 64));
            case 1: {
                const int k = static_cast<int>(uniform(0, 31));
                const std::int64_t p = std::int64_t{1} << k;
                return static_cast<std::int32_t>(one_in(2) ? -p : (k == 31 ? p - 1 : p));
            }
            case 2: {
                const int k = static_cast<int>(uniform(0, 30));
                const std::int64_t p = (std::int64_t{1} << k) + uniform(-1, 1);
                return static_cast<std::int32_t>(one_in(2) ? -p : p);
            }
            case 3: {
                static constexpr std::int32_t extremes[] = {i32_min, i32_min + 1, i32_min + 2, i32_max - 2,
                                                            i32_max - 1, i32_max, 0, 1, -1};
                return extremes[bits() % std::size(extremes)];
            }
            case 4:
            case 5: {  // low e bits are 100...0: a tie of x / 2^e
                const int e = static_cast<int>(uniform(1, 31));
                const auto high = static_cast<std::int64_t>(static_cast<std::int32_t>(bits())) >> e;
                return static_cast<std::int32_t>(high * (std::int64_t{1} << e) + (std::int64_t{1} << (e - 1)));
            }
            case 6:
            case 7:
            case 8: {  // log-uniform magnitude
                const int k = static_cast<int>(uniform(0, 31));
                return static_cast<std::int32_t>(uniform(-(std::int64_t{1} << k), (std::int64_t{1} << k) - 1));
            }
            default: return static_cast<std::int32_t>(bits());
        }
    }

    /// int64 biased the same way (for round_half_even_shift).
    std::int64_t i64() {
        switch (bits() % 12) {
            case 0: return uniform(-64, 64);
            case 1: {
                const int k = static_cast<int>(uniform(0, 63));
                const auto p = static_cast<std::int64_t>(std::uint64_t{1} << k);  // k == 63: INT64_MIN
                return one_in(2) ? p : (k == 63 ? i64_max : -p);
            }
            case 2: {
                static constexpr std::int64_t extremes[] = {i64_min, i64_min + 1, i64_max - 1, i64_max, 0, 1, -1};
                return extremes[bits() % std::size(extremes)];
            }
            case 3:
            case 4: {  // a tie of v / 2^s
                const int s = static_cast<int>(uniform(1, 62));
                const auto high = static_cast<std::int64_t>(bits()) >> s;
                return static_cast<std::int64_t>(static_cast<std::uint64_t>(high) << s) +
                       (std::int64_t{1} << (s - 1));
            }
            case 5:
            case 6: {
                const int k = static_cast<int>(uniform(0, 62));
                return uniform(-(std::int64_t{1} << k), (std::int64_t{1} << k) - 1);
            }
            case 7: return static_cast<std::int64_t>(i32()) * static_cast<std::int64_t>(uniform(0, i32_max));
            default: return static_cast<std::int64_t>(bits());
        }
    }

    /// A power-of-two exponent in [lo, hi], half the time one of the listed boundaries (if in range).
    int exponent(int lo, int hi) {
        if (one_in(2)) {
            const int picks[] = {lo, lo + 1, hi - 1, hi, 0, 1, 30, 31, -1, -30, -31};
            const int p = picks[bits() % std::size(picks)];
            if (p >= lo && p <= hi) return p;
        }
        return static_cast<int>(uniform(lo, hi));
    }

    /// A valid nonzero Q31 mantissa in [2^30, 2^31), biased to both ends.
    std::int32_t mantissa() {
        switch (bits() % 8) {
            case 0: return std::int32_t{1} << 30;
            case 1: return i32_max;
            case 2: return (std::int32_t{1} << 30) + static_cast<std::int32_t>(uniform(1, 3));
            case 3: return i32_max - static_cast<std::int32_t>(uniform(1, 3));
            default: return static_cast<std::int32_t>(uniform(std::int64_t{1} << 30, i32_max));
        }
    }

private:
    std::mt19937_64 rng_;
};

}  // namespace janus::reference
