#pragma once
// Integer interval analysis: the worst-case range of every intermediate of an integer kernel (seed A5: "the
// multiplication is right, the scale is wrong": check the input scale, the output scale AND the range of every
// intermediate product and accumulator).
//
// What is proved:
//   - Soundness. An Interval [lo, hi] (lo <= hi) holds every value a quantity can take; for every helper, if x is in
//     a and y is in b then op(x, y) is in op(a, b). add, sub, mul (four corners), neg, abs, min, max, shift_left,
//     clamp and join are also tight (both bounds are attained); scale is tight to within 1 on each side.
//   - No overflow, no undefined behaviour, for ANY int64 bounds. A lower bound of INT64_MIN means -infinity and an
//     upper bound of INT64_MAX means +infinity ("unbounded"). Helpers compute exactly in __int128 (infinite bounds
//     stay infinite, 0 * inf = 0) and saturate each resulting bound to [INT64_MIN, INT64_MAX], which is sound: a
//     lower bound saturated to INT64_MAX still says "x >= 2^63 - 1", and one pushed to INT64_MIN becomes -infinity.
//   - Exactness. With every operand bound within +-2^40 (Janus' element-count limit, shape.hpp), add, sub, neg, abs,
//     min, max, clamp, join and scale are exact (no saturation); mul and shift_left are exact while the true bound
//     stays inside (INT64_MIN, INT64_MAX) (e.g. two +-2^31 operands) and saturate (become unbounded) otherwise.
//   - accumulator_range: sum_{k < terms} input_k * weight_k + bias AND every partial sum of it (any summation order,
//     bias added first or last) fits int32, or an Error [accumulator-fits-int32] names the numbers.
//   - requantize_range: the accumulator fits int32 and round_double's left shift acc * 2^shift cannot saturate (the
//     precondition of rounding.hpp's "within 1" promise), or an Error names the rule.
// What is NOT proved:
//   - The input intervals: that zero-point-adjusted activations really lie in [-255, 255] is the caller's claim.
//   - Correlations: each operand varies independently (x - x is [lo - hi, hi - lo], not [0, 0]).
//   - Anything about rounding other than the three modes of rounding.hpp.
// GCC/Clang only (__int128), like the rest of Janus.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/numeric/multiplier.hpp>

namespace janus::numeric {

namespace detail {
__extension__ typedef __int128 range_i128;  // __extension__: no -Wpedantic warning
inline constexpr std::int64_t neg_inf = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t pos_inf = std::numeric_limits<std::int64_t>::max();
// Extended values in __int128: finite bounds as themselves, -inf / +inf as -2^64 / +2^64 (beyond every int64).
// Only a LOWER bound of INT64_MIN is -inf and only an UPPER bound of INT64_MAX is +inf; a lower bound of INT64_MAX
// means "x >= 2^63 - 1" and an upper bound of INT64_MIN means "x <= -2^63", both finite claims (that is what
// saturating an exact bound produces, and treating them as infinite would be unsound: (+inf) + (-(2^63 - 1))).
inline constexpr range_i128 ext_inf = range_i128{1} << 64;
constexpr range_i128 lo_ext(std::int64_t v) noexcept { return v == neg_inf ? -ext_inf : range_i128{v}; }
constexpr range_i128 hi_ext(std::int64_t v) noexcept { return v == pos_inf ? ext_inf : range_i128{v}; }
/// Back to a bound: at or beyond the int64 limits it saturates to INT64_MIN / INT64_MAX (sound in both roles).
constexpr std::int64_t to_bound(range_i128 v) noexcept {
    return v >= pos_inf ? pos_inf : v <= neg_inf ? neg_inf : static_cast<std::int64_t>(v);
}
/// Extended product, 0 * inf = 0 (the values behind an infinite bound are finite integers). |finite| <= 2^63, so a
/// finite product is < 2^127 and fits __int128.
constexpr range_i128 ext_mul(range_i128 a, range_i128 b) noexcept {
    if (a == 0 || b == 0) return 0;
    if (a == ext_inf || a == -ext_inf || b == ext_inf || b == -ext_inf) return (a < 0) != (b < 0) ? -ext_inf : ext_inf;
    return a * b;
}
constexpr std::int64_t min2(std::int64_t a, std::int64_t b) noexcept { return a < b ? a : b; }
constexpr std::int64_t max2(std::int64_t a, std::int64_t b) noexcept { return a < b ? b : a; }
constexpr range_i128 min2(range_i128 a, range_i128 b) noexcept { return a < b ? a : b; }
constexpr range_i128 max2(range_i128 a, range_i128 b) noexcept { return a < b ? b : a; }
/// round(v * m * 2^(shift - 31)), ties to even (= round_half_even extended to int64 v); q valid, m > 0.
constexpr range_i128 scale_bound(std::int64_t v, const QuantizedMultiplier& q) noexcept {
    const int s = 31 - q.shift;                         // in [1, 62]
    const range_i128 n = range_i128{v} * q.multiplier;  // |n| < 2^94
    const range_i128 fl = n >> s;                       // floor (arithmetic shift)
    const range_i128 rem = n - fl * (range_i128{1} << s);
    const range_i128 half = range_i128{1} << (s - 1);
    return fl + ((rem > half || (rem == half && (fl & 1) != 0)) ? 1 : 0);
}
}  // namespace detail

/// A closed integer interval [lo, hi], lo <= hi; lo == INT64_MIN is -inf and hi == INT64_MAX is +inf.
struct Interval {
    std::int64_t lo;
    std::int64_t hi;

    static constexpr std::int64_t neg_inf = detail::neg_inf;
    static constexpr std::int64_t pos_inf = detail::pos_inf;

    static constexpr Interval point(std::int64_t v) noexcept { return {v, v}; }
    static constexpr Interval unbounded() noexcept { return {neg_inf, pos_inf}; }
    /// The stored range of a dtype: an integer type up to 32 bits its range; int64, float16 and float32 unbounded.
    static constexpr Interval of(DType d) noexcept {
        if (d == DType::i64 || is_float_dtype(d)) return unbounded();
        return visit_dtype(d, [](auto t) -> Interval {
            using T = typename decltype(t)::type;
            if constexpr (std::is_integral_v<T>) return {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
            else return unbounded();
        });
    }

    constexpr bool ordered() const noexcept { return lo <= hi; }
    constexpr bool bounded() const noexcept { return lo != neg_inf && hi != pos_inf; }
    constexpr bool contains(std::int64_t v) const noexcept { return lo <= v && v <= hi; }
    constexpr bool contains(const Interval& o) const noexcept { return lo <= o.lo && o.hi <= hi; }
    constexpr bool fits_i32() const noexcept {
        return lo >= std::numeric_limits<std::int32_t>::min() && hi <= std::numeric_limits<std::int32_t>::max();
    }
    /// "[-255, 255]", "[-inf, 7]"
    std::string str() const {
        auto b = [](std::int64_t v) {
            return v == neg_inf ? std::string("-inf") : v == pos_inf ? std::string("+inf") : std::to_string(v);
        };
        return "[" + b(lo) + ", " + b(hi) + "]";
    }
    friend bool operator==(const Interval&, const Interval&) = default;

    // Arithmetic: hidden friends (found by argument-dependent lookup only, so `min`, `abs` never clash).
    friend constexpr Interval add(Interval a, Interval b) noexcept {
        using namespace detail;
        return {to_bound(lo_ext(a.lo) + lo_ext(b.lo)), to_bound(hi_ext(a.hi) + hi_ext(b.hi))};
    }
    friend constexpr Interval sub(Interval a, Interval b) noexcept {
        using namespace detail;
        return {to_bound(lo_ext(a.lo) - hi_ext(b.hi)), to_bound(hi_ext(a.hi) - lo_ext(b.lo))};
    }
    friend constexpr Interval neg(Interval a) noexcept {
        using namespace detail;
        return {to_bound(-hi_ext(a.hi)), to_bound(-lo_ext(a.lo))};
    }
    /// Four corners.
    friend constexpr Interval mul(Interval a, Interval b) noexcept {
        using namespace detail;
        const range_i128 c0 = ext_mul(lo_ext(a.lo), lo_ext(b.lo));
        const range_i128 c1 = ext_mul(lo_ext(a.lo), hi_ext(b.hi));
        const range_i128 c2 = ext_mul(hi_ext(a.hi), lo_ext(b.lo));
        const range_i128 c3 = ext_mul(hi_ext(a.hi), hi_ext(b.hi));
        return {to_bound(min2(min2(c0, c1), min2(c2, c3))), to_bound(max2(max2(c0, c1), max2(c2, c3)))};
    }
    friend constexpr Interval abs(Interval a) noexcept {
        if (a.lo >= 0) return a;
        if (a.hi <= 0) return neg(a);
        return {0, detail::max2(detail::to_bound(-detail::lo_ext(a.lo)), a.hi)};
    }
    friend constexpr Interval min(Interval a, Interval b) noexcept {
        return {detail::min2(a.lo, b.lo), detail::min2(a.hi, b.hi)};
    }
    friend constexpr Interval max(Interval a, Interval b) noexcept {
        return {detail::max2(a.lo, b.lo), detail::max2(a.hi, b.hi)};
    }
    /// x * 2^s. Contract: s >= 0 (asserted; s < 0 is treated as 0). s > 63 acts as 63 (every nonzero bound
    /// saturates).
    friend constexpr Interval shift_left(Interval a, int s) noexcept {
        using namespace detail;
        JANUS_ASSERT(s >= 0);
        const range_i128 p = range_i128{1} << (s <= 0 ? 0 : s >= 63 ? 63 : s);
        return {to_bound(ext_mul(lo_ext(a.lo), p)), to_bound(ext_mul(hi_ext(a.hi), p))};
    }
    /// The values of clamp(x, lo, hi). Contract: lo <= hi.
    friend constexpr Interval clamp(Interval a, std::int64_t lo, std::int64_t hi) noexcept {
        return {detail::min2(detail::max2(a.lo, lo), hi), detail::min2(detail::max2(a.hi, lo), hi)};
    }
    /// The smallest interval holding both.
    friend constexpr Interval join(Interval a, Interval b) noexcept {
        return {detail::min2(a.lo, b.lo), detail::max2(a.hi, b.hi)};
    }
    /// Bounds of round_R(x * q) for every x in a and every rounding mode R of rounding.hpp:
    /// [round_half_even(a.lo * q) - 1, round_half_even(a.hi * q) + 1] (x -> x * q is monotone; round_single is
    /// round_half_even or +1, round_double within 1 of it). Valid when x fits int32 and, for round_double, x * 2^shift
    /// does (requantize_range checks both). The zero multiplier gives [0, 0]; an invalid q gives unbounded().
    friend constexpr Interval scale(Interval a, const QuantizedMultiplier& q) noexcept {
        if (!is_valid(q)) return unbounded();
        if (q.multiplier == 0) return point(0);
        return {a.lo == neg_inf ? neg_inf : detail::to_bound(detail::scale_bound(a.lo, q) - 1),
                a.hi == pos_inf ? pos_inf : detail::to_bound(detail::scale_bound(a.hi, q) + 1)};
    }

    friend constexpr Interval operator+(Interval a, Interval b) noexcept { return add(a, b); }
    friend constexpr Interval operator-(Interval a, Interval b) noexcept { return sub(a, b); }
    friend constexpr Interval operator*(Interval a, Interval b) noexcept { return mul(a, b); }
    friend constexpr Interval operator-(Interval a) noexcept { return neg(a); }
};

/// The largest number of terms K >= 0 for which accumulator_range(input, weight, K, bias) succeeds: every partial sum
/// of K products input*weight, with or without the bias, fits int32. INT64_MAX when every product is 0 (any K);
/// -1 when no K works (an interval with lo > hi, or a bias that does not fit int32 by itself).
constexpr std::int64_t max_terms_without_overflow(Interval input, Interval weight, Interval bias) noexcept {
    if (!input.ordered() || !weight.ordered() || !bias.ordered() || !bias.fits_i32()) return -1;
    const Interval p = mul(input, weight);
    constexpr std::int64_t i32_lo = std::numeric_limits<std::int32_t>::min();
    constexpr std::int64_t i32_hi = std::numeric_limits<std::int32_t>::max();
    std::int64_t k = Interval::pos_inf;
    // K * p.hi <= INT32_MAX and K * p.hi + bias.hi <= INT32_MAX  (the numerator is >= 0: the bias fits)
    if (p.hi > 0) k = detail::min2(k, p.hi == Interval::pos_inf ? 0 : (i32_hi - detail::max2(bias.hi, 0)) / p.hi);
    // K * p.lo >= INT32_MIN and K * p.lo + bias.lo >= INT32_MIN
    if (p.lo < 0)
        k = detail::min2(k, p.lo == Interval::neg_inf ? 0 : (detail::min2(bias.lo, 0) - i32_lo) / -p.lo);
    return k;
}

/// Worst-case range of sum_{k < terms} input_k * weight_k + bias, each input_k in `input` and weight_k in `weight`.
/// Succeeds only if that sum and every partial sum (any order, bias first or last) fit int32; otherwise an Error
/// [accumulator-fits-int32] naming `what`, the number of terms, the per-term range, the total and the largest
/// number of terms that would fit. Intervals with lo > hi are [interval-ordered], terms < 0 is [terms-nonnegative].
/// Classic numbers: input [-255, 255] (int8 minus an arbitrary int8 zero point), weight [-127, 127] (symmetric
/// int8), bias 0: each product is in [-32385, 32385] and at most 66311 terms fit (66311 * 32385 = 2147481735).
inline Result<Interval> accumulator_range(Interval input, Interval weight, std::int64_t terms, Interval bias,
                                          const std::string& what) {
    const std::pair<const char*, Interval> operands[] = {{"input", input}, {"weight", weight}, {"bias", bias}};
    for (const auto& [name, v] : operands)
        if (!v.ordered())
            return make_error(what, name, "interval-ordered",
                              std::string(name) + " range [" + std::to_string(v.lo) + ", " + std::to_string(v.hi) +
                                  "] has lo > hi");
    if (terms < 0)
        return make_error(what, "", "terms-nonnegative", "number of terms " + std::to_string(terms) + " is negative");
    const Interval per_term = mul(input, weight);
    const Interval products = mul(per_term, Interval::point(terms));
    const Interval total = add(products, bias);
    // k -> k * per_term is linear, so every partial sum of k <= terms products (plus the bias or not) lies in
    // join(0, products, bias, total): the extremes are at k = 0 and k = terms.
    const char* failing = !products.fits_i32() ? "the sum of the products"
                          : !bias.fits_i32()   ? "the bias (a partial sum when it is added first)"
                          : !total.fits_i32()  ? "the total"
                                               : nullptr;
    if (failing == nullptr) return total;
    const std::int64_t fit = max_terms_without_overflow(input, weight, bias);
    return make_unsupported(
        what, "", "accumulator-fits-int32", what + " with an int32 accumulator of " + std::to_string(terms) + " terms",
        std::to_string(terms) + " terms of input " + input.str() + " x weight " + weight.str() + ", each in " +
            per_term.str() + ", sum to " + products.str() + "; plus bias " + bias.str() + " gives " + total.str() +
            "; " + failing + " does not fit int32 [-2147483648, 2147483647]; " +
            (fit < 0 ? std::string("no number of terms fits") : "at most " + std::to_string(fit) + " terms fit"));
}

/// Range of requantize<R>(acc, q, zero_point, lo, hi) for every acc in `acc` and every R of rounding.hpp, after
/// proving its preconditions: acc fits int32 [requantize-input-fits-int32], q is valid [multiplier-valid], lo <= hi
/// [clamp-ordered], and acc * 2^shift fits int32 when shift > 0 [requantize-left-shift-fits-int32] (otherwise
/// round_double saturates its left shift and can be far from the exact result, see rounding.hpp).
inline Result<Interval> requantize_range(Interval acc, const QuantizedMultiplier& q, std::int32_t zero_point,
                                         std::int32_t lo, std::int32_t hi, const std::string& what) {
    if (!acc.ordered() || !acc.fits_i32())
        return make_error(what, "", "requantize-input-fits-int32",
                          "accumulator range " + acc.str() + " is not an int32 range");
    if (!is_valid(q))
        return make_error(what, "", "multiplier-valid",
                          "multiplier " + std::to_string(q.multiplier) + " with shift " + std::to_string(q.shift) +
                              " is not normalized (0 with shift 0, or [2^30, 2^31) with shift in [-31, 30])");
    if (lo > hi)
        return make_error(what, "", "clamp-ordered",
                          "clamp range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] has lo > hi");
    if (q.shift > 0 && q.multiplier != 0) {
        const Interval shifted = shift_left(acc, q.shift);
        if (!shifted.fits_i32())
            return make_error(what, "", "requantize-left-shift-fits-int32",
                              "accumulator " + acc.str() + " shifted left by " + std::to_string(q.shift) + " is " +
                                  shifted.str() + ", outside int32; round_double would saturate it");
    }
    return clamp(add(scale(acc, q), Interval::point(zero_point)), lo, hi);
}

}  // namespace janus::numeric
