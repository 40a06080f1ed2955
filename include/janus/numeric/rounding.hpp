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
//
// A kernel's mode is also a VALUE (`Rounding`): every quantized op's plan carries the mode it was planned with
// (`janusc --rounding`), and its rq expression nodes dispatch on it once per vector (ops/expr.hpp, `by_plan`), so
// one instantiation of a kernel serves all three modes. docs/numerics.md ("Rounding as a choice") measures the cost.
#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

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

/// A rounding mode as a value: what a plan, a package and the command line carry. The numbering is Janus's own
/// (the vnpu's parameter tables have a numbering of their own, vnpu/params.hpp).
enum class Rounding : std::uint8_t { round_double = 0, round_single = 1, round_half_even = 2 };

/// The command-line spelling of each mode, in enum order (`--rounding double|single|half-even`).
inline constexpr std::array<std::string_view, 3> rounding_names = {"double", "single", "half-even"};

constexpr std::string_view rounding_name(Rounding r) noexcept { return rounding_names[static_cast<std::size_t>(r)]; }

/// The mode named `s` (one of rounding_names), or nothing.
constexpr std::optional<Rounding> parse_rounding(std::string_view s) noexcept {
    for (std::size_t k = 0; k < rounding_names.size(); ++k)
        if (s == rounding_names[k]) return static_cast<Rounding>(k);
    return std::nullopt;
}

/// The value of a mode type.
template <RoundingMode R>
inline constexpr Rounding rounding_of = std::is_same_v<R, round_double>   ? Rounding::round_double
                                        : std::is_same_v<R, round_single> ? Rounding::round_single
                                                                          : Rounding::round_half_even;
static_assert(rounding_of<round_half_even> == Rounding::round_half_even);

/// The default mode as a value.
inline constexpr Rounding default_rounding_mode = rounding_of<default_rounding>;

/// f(R{}) for the mode type of `r`: the one switch from a value to the typed primitives.
template <class F>
constexpr decltype(auto) visit_rounding(Rounding r, F&& f) {
    switch (r) {
        case Rounding::round_single: return f(round_single{});
        case Rounding::round_half_even: return f(round_half_even{});
        case Rounding::round_double: break;
    }
    return f(round_double{});
}

/// round_r(x * M) for a mode value.
constexpr std::int32_t multiply_by_quantized_multiplier(Rounding r, std::int32_t x, QuantizedMultiplier q) noexcept {
    return visit_rounding(r, [&](auto m) { return decltype(m)::apply(x, q); });
}

}  // namespace janus::numeric
