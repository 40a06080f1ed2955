#pragma once
// SIMD form of round_double (numeric/rounding.hpp) for a per-tensor multiplier: the hot step of every quantized
// elementwise kernel (Add alone rescales three times per element).
//
// Contract: round_double_batch(x, q) returns, lane for lane, exactly numeric::round_double::apply(x[l], q) for every
// int32 x and every valid q (tests/ops_expr compares them over random and boundary inputs). The portable fallback is
// that scalar function applied lane by lane; on x86 the saturating rounding doubling high multiply is computed exactly
// with the unsigned 32x32->64 multiply (SSE2 pmuludq and its AVX2 / AVX-512 forms) on the magnitude |x|:
//   SRDHM(x, m) = floor((x m + 2^30) / 2^31)        (ties toward +inf; m >= 0 for a valid multiplier)
//               =  floor((|x| m + 2^30) / 2^31)      for x >= 0
//               = -floor((|x| m + 2^30 - 1) / 2^31)  for x < 0
// |x| m < 2^31 * 2^31 = 2^62 fits the 64-bit lane; the quotient < 2^31 fits 32 bits. The saturating left shift and
// RoundingDivideByPOT steps use plain 32-bit lane arithmetic (select and arithmetic shifts).
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include <janus/numeric/rounding.hpp>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace janus::expr::simd {

namespace detail {
#if defined(__SSE2__)
// One set of lane operations per register width; the algorithm below is written once over them.
inline __m128i srai32(__m128i a, int s) { return _mm_srai_epi32(a, s); }
inline __m128i xor_(__m128i a, __m128i b) { return _mm_xor_si128(a, b); }
inline __m128i and_(__m128i a, __m128i b) { return _mm_and_si128(a, b); }
inline __m128i or_(__m128i a, __m128i b) { return _mm_or_si128(a, b); }
inline __m128i sub32(__m128i a, __m128i b) { return _mm_sub_epi32(a, b); }
inline __m128i add32(__m128i a, __m128i b) { return _mm_add_epi32(a, b); }
inline __m128i add64(__m128i a, __m128i b) { return _mm_add_epi64(a, b); }
inline __m128i mulu(__m128i a, __m128i b) { return _mm_mul_epu32(a, b); }
inline __m128i srli64(__m128i a, int s) { return _mm_srli_epi64(a, s); }
inline __m128i slli64(__m128i a, int s) { return _mm_slli_epi64(a, s); }
inline __m128i set1(std::int32_t v, __m128i) { return _mm_set1_epi32(v); }
inline __m128i set1_64(std::int64_t v, __m128i) { return _mm_set1_epi64x(v); }
#endif
#if defined(__AVX2__)
inline __m256i srai32(__m256i a, int s) { return _mm256_srai_epi32(a, s); }
inline __m256i xor_(__m256i a, __m256i b) { return _mm256_xor_si256(a, b); }
inline __m256i and_(__m256i a, __m256i b) { return _mm256_and_si256(a, b); }
inline __m256i or_(__m256i a, __m256i b) { return _mm256_or_si256(a, b); }
inline __m256i sub32(__m256i a, __m256i b) { return _mm256_sub_epi32(a, b); }
inline __m256i add32(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
inline __m256i add64(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
inline __m256i mulu(__m256i a, __m256i b) { return _mm256_mul_epu32(a, b); }
inline __m256i srli64(__m256i a, int s) { return _mm256_srli_epi64(a, s); }
inline __m256i slli64(__m256i a, int s) { return _mm256_slli_epi64(a, s); }
inline __m256i set1(std::int32_t v, __m256i) { return _mm256_set1_epi32(v); }
inline __m256i set1_64(std::int64_t v, __m256i) { return _mm256_set1_epi64x(v); }
#endif
#if defined(__AVX512F__)
inline __m512i srai32(__m512i a, int s) { return _mm512_srai_epi32(a, static_cast<unsigned>(s)); }
inline __m512i xor_(__m512i a, __m512i b) { return _mm512_xor_si512(a, b); }
inline __m512i and_(__m512i a, __m512i b) { return _mm512_and_si512(a, b); }
inline __m512i or_(__m512i a, __m512i b) { return _mm512_or_si512(a, b); }
inline __m512i sub32(__m512i a, __m512i b) { return _mm512_sub_epi32(a, b); }
inline __m512i add32(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
inline __m512i add64(__m512i a, __m512i b) { return _mm512_add_epi64(a, b); }
inline __m512i mulu(__m512i a, __m512i b) { return _mm512_mul_epu32(a, b); }
inline __m512i srli64(__m512i a, int s) { return _mm512_srli_epi64(a, static_cast<unsigned>(s)); }
inline __m512i slli64(__m512i a, int s) { return _mm512_slli_epi64(a, static_cast<unsigned>(s)); }
inline __m512i set1(std::int32_t v, __m512i) { return _mm512_set1_epi32(v); }
inline __m512i set1_64(std::int64_t v, __m512i) { return _mm512_set1_epi64(v); }
#endif

/// SRDHM(x, m) for m >= 0, on one register.
template <class V>
V srdhm_nonneg(V x, V m) {
    const V sign = srai32(x, 31);                                  // -1 in negative lanes, else 0
    const V mag = sub32(xor_(x, sign), sign);                      // |x| (INT32_MIN -> 2^31, right as unsigned)
    const V nudge = add32(set1(1 << 30, x), sign);                 // 2^30, or 2^30 - 1 in negative lanes
    const V low = set1_64(0xffffffffLL, x);
    const V even = srli64(add64(mulu(mag, m), and_(nudge, low)), 31);
    const V odd = srli64(add64(mulu(srli64(mag, 32), srli64(m, 32)), srli64(nudge, 32)), 31);
    const V q = or_(and_(even, low), slli64(odd, 32));
    return sub32(xor_(q, sign), sign);                             // restore the sign
}

template <class A>
inline constexpr bool has_native = false;
#if defined(__SSE2__)
template <class A>
    requires(sizeof(typename xsimd::batch<std::int32_t, A>::register_type) == 16)
inline constexpr bool has_native<A> = true;
#endif
#if defined(__AVX2__)
template <class A>
    requires(sizeof(typename xsimd::batch<std::int32_t, A>::register_type) == 32)
inline constexpr bool has_native<A> = true;
#endif
#if defined(__AVX512F__)
template <class A>
    requires(sizeof(typename xsimd::batch<std::int32_t, A>::register_type) == 64)
inline constexpr bool has_native<A> = true;
#endif
}  // namespace detail

/// Lane-wise numeric::round_double::apply(x, q) for one per-tensor multiplier.
template <class A>
xsimd::batch<std::int32_t, A> round_double_batch(const xsimd::batch<std::int32_t, A>& x,
                                                 const numeric::QuantizedMultiplier& q) {
    using B = xsimd::batch<std::int32_t, A>;
    if constexpr (detail::has_native<A>) {
        const int left = q.shift > 0 ? q.shift : 0;
        const int right = q.shift > 0 ? 0 : -q.shift;
        B y = x;
        if (left > 0) {  // saturating x * 2^left
            const std::int32_t hi = numeric::i32_max >> left;
            const std::int32_t lo = numeric::i32_min >> left;
            y = xsimd::select(x > B(hi), B(numeric::i32_max), xsimd::select(x < B(lo), B(numeric::i32_min), x << left));
        }
        using R = typename B::register_type;
        y = B(detail::srdhm_nonneg(static_cast<R>(y), static_cast<R>(B(q.multiplier))));
        if (right > 0) {  // RoundingDivideByPOT: ties away from zero
            const int s = right > 31 ? 31 : right;
            const B mask(static_cast<std::int32_t>((std::int64_t{1} << s) - 1));
            const B rem = y & mask;
            const B threshold = (mask >> 1) + xsimd::select(y < B(0), B(1), B(0));
            y = (y >> s) + xsimd::select(rem > threshold, B(1), B(0));
        }
        return y;
    } else {
        alignas(64) std::int32_t v[B::size];
        x.store_aligned(v);
        for (auto& e : v) e = numeric::round_double::apply(e, q);
        return B::load_aligned(v);
    }
}

}  // namespace janus::expr::simd
