#pragma once
// IEEE 754 binary16 as a storage type: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
//
// Contract: `float16` holds the 16 bits and converts, and does nothing else (no arithmetic: kernels compute on float
// lanes and narrow each result, ops/expr.hpp `wrap<float16>`).
//   - float(h) is exact (every binary16 value is a binary32 value): NaN stays NaN with its sign and payload,
//     infinities and signed zeros are kept.
//   - float16(f) rounds to nearest, ties to even, as an IEEE conversion does: values of 65520 or more in magnitude
//     become infinity, tiny values round into the subnormals (2^-24 is the smallest) or to a signed zero, and a NaN
//     becomes a quiet NaN keeping its sign and the top 9 bits of its payload.
//   - Round trip: float16(float(h)) has the bits of h for every h that is not a signaling NaN (tests check all
//     65536 patterns, and every float32 whose exponent reaches binary16's range against a double-precision rounding).
// Why float lanes are enough for the ops that take float16 (docs/numerics.md "float16"): for + - * / and sqrt, the
// float32 result rounded to binary16 equals the correctly rounded binary16 result, because 24 >= 2 * 11 + 2 (double
// rounding is innocuous when the wide format has at least 2p + 2 bits); min and max select an operand exactly.
#include <bit>
#include <cstdint>
#include <type_traits>

namespace janus {

struct float16 {
    std::uint16_t bits = 0;

    constexpr float16() = default;
    static constexpr float16 from_bits(std::uint16_t b) {
        float16 h;
        h.bits = b;
        return h;
    }

    explicit constexpr float16(float f) : bits(narrow(std::bit_cast<std::uint32_t>(f))) {}

    explicit constexpr operator float() const { return std::bit_cast<float>(widen(bits)); }
    /// As float's conversion to A (exact for double; an integer conversion truncates as float's does).
    template <class A>
        requires(std::is_arithmetic_v<A> && !std::is_same_v<A, float>)
    explicit constexpr operator A() const { return static_cast<A>(static_cast<float>(*this)); }

    friend constexpr bool operator==(float16 a, float16 b) { return a.bits == b.bits; }  // bitwise, not IEEE

private:
    static constexpr std::uint32_t widen(std::uint16_t h) {
        const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
        const std::uint32_t exp = (h >> 10) & 0x1Fu;
        std::uint32_t frac = h & 0x3FFu;
        if (exp == 0x1F) return sign | 0x7F800000u | (frac << 13);  // infinity, NaN (payload kept)
        if (exp != 0) return sign | ((exp + 112u) << 23) | (frac << 13);
        if (frac == 0) return sign;  // signed zero
        // A subnormal is frac * 2^-24: shift the leading 1 up to bit 10, lowering the exponent from 2^-14's.
        std::uint32_t e = 113;
        while ((frac & 0x400u) == 0) {
            frac <<= 1;
            --e;
        }
        return sign | (e << 23) | ((frac & 0x3FFu) << 13);
    }

    static constexpr std::uint16_t narrow(std::uint32_t f) {
        const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
        const std::uint32_t exp = (f >> 23) & 0xFFu;
        const std::uint32_t frac = f & 0x7FFFFFu;
        if (exp == 0xFF) {
            if (frac == 0) return sign | 0x7C00u;                                           // infinity
            return static_cast<std::uint16_t>(sign | 0x7E00u | ((frac >> 13) & 0x1FFu));  // quiet NaN
        }
        if (exp > 142) return sign | 0x7C00u;  // >= 2^16: beyond 65520, infinity
        // The value is m * 2^(u - 150): m the 24-bit significand, u the exponent field (1 for a float subnormal).
        // The result counts units of 2^-24 below 2^-14 (subnormals) and of 2^(e - 137) from there on; q = m >> shift
        // rounded to nearest even is that count.
        const std::uint32_t m = exp == 0 ? frac : (frac | 0x800000u);
        const std::uint32_t u = exp == 0 ? 1 : exp;
        const std::uint32_t unit = exp < 113 ? 113 : exp;  // unit 2^(unit - 137)
        const std::uint32_t shift = unit + 13 - u;          // (unit - 137) - (u - 150), at least 13
        if (shift > 31) return sign;                        // below half the smallest subnormal: a signed zero
        const std::uint32_t q = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        const std::uint32_t r = q + ((rem > half || (rem == half && (q & 1u) != 0)) ? 1u : 0u);
        // Subnormal: r < 2^10, or exactly 2^10 after a carry, which is the bit pattern of 2^-14. Normal: r in
        // [2^10, 2^11], the implicit bit included, so adding it to the exponent field below lets a carry to 2^11
        // bump the exponent (and 65504 + a carry becomes infinity's pattern 0x7C00).
        if (exp < 113) return static_cast<std::uint16_t>(sign | r);
        return static_cast<std::uint16_t>(sign | (((exp - 113u) << 10) + r));
    }
};

static_assert(sizeof(float16) == 2);
static_assert(float16(1.0f).bits == 0x3C00 && float16(65504.0f).bits == 0x7BFF && float16(65520.0f).bits == 0x7C00);
static_assert(static_cast<float>(float16::from_bits(0x0001)) == 0x1p-24f);

}  // namespace janus
