#pragma once
// The arithmetic of the vnpu instructions as plain scalar code: one function per element (or per product) of each
// VEC / MAC / LUT instruction of the instruction table (vnpu/isa.hpp). The simulator runs these functions; the host
// kernels of ops/ are an independent implementation that tests/emit/isa_three_way.cpp compares with them (and with
// emitted programs) bit for bit. Nothing here includes ops/: a wrong host formula cannot agree with itself.
//
// Value model: int8 operands widen to int32; every int32 add, sub, mul and left shift wraps modulo 2^32 (computed in
// uint32); sat8 clamps to [-128, 127]; clamp(x, lo, hi) is min(max(x, lo), hi) in that order. The fixed-point
// multiply round_R(x * M) is numeric::round_{double,single,half_even}::apply (numeric/rounding.hpp, tested against
// wide integers), M = stored_multiplier(mult, t). Parameters come decoded and validated (vnpu/params.hpp).
#include <array>
#include <cstdint>

#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/vnpu/isa.hpp>
#include <janus/vnpu/params.hpp>

namespace janus::vnpu::semantics {

constexpr std::int32_t wrap_add(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}
constexpr std::int32_t wrap_sub(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b));
}
constexpr std::int32_t wrap_mul(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b));
}
constexpr std::int32_t wrap_shl(std::int32_t a, int s) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) << s);
}
constexpr std::int32_t clamp(std::int32_t x, std::int32_t lo, std::int32_t hi) {
    const std::int32_t t = x > lo ? x : lo;
    return t < hi ? t : hi;
}
constexpr std::int8_t sat8(std::int32_t x) { return static_cast<std::int8_t>(clamp(x, -128, 127)); }

/// vec.rq, one element: sat8(clamp(round_R((acc + bias) * M) + zp, min, max)), R = the header's rounding.
template <numeric::RoundingMode R>
constexpr std::int8_t requantize(std::int32_t acc, const RqHeader& h, const RqChannel& c) {
    const std::int32_t y = R::apply(wrap_add(acc, c.bias), stored_multiplier(c.multiplier, c.right_shift));
    return sat8(clamp(wrap_add(y, h.zp), h.min, h.max));
}
inline std::int8_t requantize(std::int32_t acc, const RqHeader& h, const RqChannel& c) {
    return with_rounding(h.rounding, [&](auto r) { return requantize<decltype(r)>(acc, h, c); });
}

/// vec.ew.<func>, one element (func: the row's func, EwFunc order). With a' = a - zp_a, b' = b - zp_b:
///   add, sub  acc = clamp(rq(a' << left_shift, M_a) +- rq(b' << left_shift, M_b), -acc_limit, acc_limit)
///   mul       acc = clamp(a' * b', -acc_limit, acc_limit)
///             result sat8(rq(acc, M_out) + zp_out)
///   min, max  sat8(min / max(rq(a', M_a), rq(b', M_b)) + zp_out)
enum class EwFunc : std::int64_t { add = 0, sub = 1, mul = 2, min = 3, max = 4 };
namespace detail {
constexpr bool ew_rows_match() {
    constexpr std::string_view names[] = {"vec.ew.add", "vec.ew.sub", "vec.ew.mul", "vec.ew.min", "vec.ew.max"};
    for (std::int64_t f = 0; f < 5; ++f) {
        bool found = false;
        for (const InstrInfo& r : instruction_table)
            found |= r.mnemonic == names[f] && r.sem == Sem::vec_ew && r.func == f;
        if (!found) return false;
    }
    return true;
}
static_assert(ew_rows_match(), "EwFunc must number the vec.ew.* rows of vnpu::instruction_table by their func");
}  // namespace detail

template <EwFunc F, numeric::RoundingMode R>
constexpr std::int8_t elementwise(std::int8_t x, std::int8_t y, const EwParams& p) {
    const std::int32_t a = wrap_sub(x, p.zp_a), b = wrap_sub(y, p.zp_b);
    const auto m_a = stored_multiplier(p.mult_a, p.shift_a), m_b = stored_multiplier(p.mult_b, p.shift_b);
    const auto m_out = stored_multiplier(p.mult_out, p.shift_out);
    const std::int32_t lim_lo = wrap_sub(0, p.acc_limit), lim_hi = p.acc_limit;
    if constexpr (F == EwFunc::add || F == EwFunc::sub) {
        const std::int32_t ra = R::apply(wrap_shl(a, p.left_shift), m_a);
        const std::int32_t rb = R::apply(wrap_shl(b, p.left_shift), m_b);
        const std::int32_t acc = clamp(F == EwFunc::add ? wrap_add(ra, rb) : wrap_sub(ra, rb), lim_lo, lim_hi);
        return sat8(wrap_add(R::apply(acc, m_out), p.zp_out));
    } else if constexpr (F == EwFunc::mul) {
        return sat8(wrap_add(R::apply(clamp(wrap_mul(a, b), lim_lo, lim_hi), m_out), p.zp_out));
    } else {
        const std::int32_t ra = R::apply(a, m_a), rb = R::apply(b, m_b);
        return sat8(wrap_add(F == EwFunc::min ? (ra < rb ? ra : rb) : (ra > rb ? ra : rb), p.zp_out));
    }
}
/// Call f(integral_constant<EwFunc>, R{}) for a func code 0..4 and a valid rounding code.
template <class Fn>
constexpr decltype(auto) with_ew_func(std::int64_t func, std::int32_t rounding, Fn&& f) {
    return with_rounding(rounding, [&](auto r) -> decltype(auto) {
        switch (func) {
            case 0: return f(std::integral_constant<EwFunc, EwFunc::add>{}, r);
            case 1: return f(std::integral_constant<EwFunc, EwFunc::sub>{}, r);
            case 2: return f(std::integral_constant<EwFunc, EwFunc::mul>{}, r);
            case 3: return f(std::integral_constant<EwFunc, EwFunc::min>{}, r);
            default: return f(std::integral_constant<EwFunc, EwFunc::max>{}, r);
        }
    });
}
inline std::int8_t elementwise(std::int64_t func, std::int8_t x, std::int8_t y, const EwParams& p) {
    return with_ew_func(func, p.rounding,
                        [&](auto f, auto r) { return elementwise<decltype(f)::value, decltype(r)>(x, y, p); });
}

/// mac.mm / mac.mma: C[i][j] = (mac.mma: C[i][j] +) sum over k < K of (A[i][k] - zp) * B[k][j], modulo 2^32, for an
/// m x K A (row stride a_stride), a dense K x n B and a dense int32 C. Each product fits int32 (|A - zp| <= 383 for a
/// 9-bit zp, |B| <= 128); the additions wrap (uint32), so their order does not change the result. Loop order: i, then
/// blocks of 16 columns, then k; a block's sums stay in a local array while rows of B stream past (a fixed trip count
/// and no aliasing let the compiler vectorize it; mac.cfg's n is a multiple of 16, other n end with a partial block).
inline void mac_mm(const std::int8_t* a, std::int64_t a_stride, std::int32_t zp, const std::int8_t* b, std::int64_t m,
                   std::int64_t K, std::int64_t n, std::int32_t* c, bool accumulate) {
    constexpr std::int64_t block = 16;
    for (std::int64_t i = 0; i < m; ++i) {
        const std::int8_t* ai = a + i * a_stride;
        for (std::int64_t j0 = 0; j0 < n; j0 += block) {
            std::array<std::uint32_t, block> sum{};
            if (n - j0 >= block) {
                for (std::int64_t k = 0; k < K; ++k) {
                    const std::int32_t x = ai[k] - zp;
                    const std::int8_t* bk = b + k * n + j0;
                    for (std::size_t j = 0; j < block; ++j) sum[j] += static_cast<std::uint32_t>(x * bk[j]);
                }
            } else {
                for (std::int64_t k = 0; k < K; ++k) {
                    const std::int32_t x = ai[k] - zp;
                    const std::int8_t* bk = b + k * n + j0;
                    for (std::int64_t j = 0; j < n - j0; ++j)
                        sum[static_cast<std::size_t>(j)] += static_cast<std::uint32_t>(x * bk[j]);
                }
            }
            std::int32_t* out = c + i * n + j0;
            for (std::int64_t j = 0; j < block && j0 + j < n; ++j)
                out[j] = wrap_add(accumulate ? out[j] : 0, static_cast<std::int32_t>(sum[static_cast<std::size_t>(j)]));
        }
    }
}

/// vec.acc / vec.mac, one lane: acc + (x - zp) (* w).
constexpr std::int32_t accumulate(std::int32_t acc, std::int8_t x, std::int32_t zp) {
    return wrap_add(acc, wrap_sub(x, zp));
}
constexpr std::int32_t multiply_accumulate(std::int32_t acc, std::int8_t x, std::int32_t zp, std::int8_t w) {
    return wrap_add(acc, wrap_mul(wrap_sub(x, zp), w));
}

/// vec.shl32 / vec.rshr32 / vec.abs32 / vec.add32, one lane (func 0..3). rshr32 rounds half away from zero
/// (numeric::rounding_divide_by_pot); abs of INT32_MIN wraps to INT32_MIN.
constexpr std::int32_t int32_op(std::int64_t func, std::int32_t a, std::int32_t b, int shift) {
    switch (func) {
        case 0: return wrap_shl(a, shift);
        case 1: return numeric::rounding_divide_by_pot(a, shift);
        case 2: return a < 0 ? wrap_sub(0, a) : a;
        default: return wrap_add(a, b);
    }
}

/// vec.max / vec.min (func 0 / 1), vec.sel and lut.apply, one lane.
constexpr std::int8_t min_max(std::int64_t func, std::int8_t a, std::int8_t b) {
    return func == 0 ? (a > b ? a : b) : (a < b ? a : b);
}
constexpr std::int8_t select(std::int8_t c, std::int8_t a, std::int8_t b) { return c != 0 ? a : b; }
constexpr std::int8_t lookup(const std::uint8_t* table, std::int8_t x) {
    return static_cast<std::int8_t>(table[static_cast<std::size_t>(x + 128)]);
}

}  // namespace janus::vnpu::semantics
