#pragma once
// The blocked GEMM engine behind `contract` (ops/contract.hpp): C[M, N] = A[M, K] * B[K, N] + bias, int32 or float
// lanes, bit-identical to the plain reference loops of contract.hpp.
//
// Operands:
//   A  row-major lanes (int32 or float), row stride lda: the BROADCAST operand (one value per row and k);
//   B  packed into panels of NR = 2 x lanes columns: panel p holds B[k, p NR + j] at [p][k][j], the tail panel
//      zero-padded to NR columns (pack_panels / pack_conv_panels: im2col straight into panels);
//   C  row-major lanes, row stride ldc; only the valid rows and columns are written.
//   bias: per row (bias_rows, conv: output channel) or per column (bias_cols, matmul: n) or none (adds 0).
// Storage of B: float panels hold float; int32 panels are stored in the NARROWEST of int8 / int16 / int32 that holds
//   the operand's PROVED range (storage_for), and are widened in registers (an int8 minus a zero point lies in
//   [-255, 255]: int16 storage halves the memory traffic of a memory-bound FC layer). Widening is exact.
// Arithmetic (why it is bit-identical to the reference):
//   int32: every product and partial sum is computed modulo 2^32 (SIMD lanes wrap, no UB). The caller's
//     numeric::accumulator_range proof bounds every TRUE partial sum inside int32, so the wrapped result equals the
//     reference's int64 sum; the order of the terms is irrelevant for integers.
//   float: each output accumulates s = 0; for k ascending: s = s + (a * b) with a separate multiply and add (no FMA),
//     then s = s + bias (+ 0.0f without bias) -- the reference's order exactly. Vector lanes are independent
//     outputs, so the result is the same bits for every lane count. Requires that the compiler does not contract
//     a * b + c across xsimd's operator calls: true for g++ in ISO mode (-std=c++20: -ffp-contract=off) and clang
//     (contraction is per source expression). Under -std=gnu++20 g++ defaults to -ffp-contract=fast: both paths may
//     then differ; build with -ffp-contract=off. NaN results are NaN on both paths (payloads are not promised).
// Zero padding: padded B entries (panel tails, conv padding) are real zeros; for int32 they contribute 0 exactly;
//   for float a * 0 = +-0 leaves every partial sum unchanged (a sum that starts at +0 is never -0 in
//   round-to-nearest) PROVIDED a is finite: contract.hpp runs the reference loops when a conv weight is inf / NaN.
// Blocking: MR x NR register block (MR = 8 rows with 32 vector registers (AVX-512), else 4), two vectors per row;
//   per panel all row blocks run while the panel (K x NR) stays in L1. Convs: conv_direct (1-D / 2-D, innermost
//   stride 1) reads B rows in place from zero-padded planes of the input (row k at plane + off[k]); otherwise
//   pack_conv_tile writes im2col panels NC output pixels at a time (K x NC within ~256 KiB). Portable: xsimd batches for the arithmetic; the only ISA-specific code is the
//   widening load of int8 / int16 panels (AVX-512 / AVX2 / SSE4.1, with xsimd's generic conversion as fallback).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include <janus/numeric/range.hpp>

namespace janus::ops::gemm {

using arch = xsimd::default_arch;
template <class T>
using batch = xsimd::batch<T, arch>;
inline constexpr std::int64_t lanes = static_cast<std::int64_t>(batch<std::int32_t>::size);
static_assert(batch<float>::size == batch<std::int32_t>::size, "int32 and float batches must have the same lane count");
inline constexpr std::int64_t NR = 2 * lanes;           ///< panel width (columns)
inline constexpr std::int64_t MR = lanes >= 16 ? 8 : 4; ///< rows per register block

/// Element type of packed panels.
enum class Storage : std::uint8_t { i8, i16, i32, f32 };

inline constexpr std::size_t storage_size(Storage s) { return s == Storage::i8 ? 1 : s == Storage::i16 ? 2 : 4; }

/// Narrowest storage that holds every value of a proved int32 operand range.
inline Storage storage_for(numeric::Interval r) {
    if (r.lo >= -128 && r.hi <= 127) return Storage::i8;
    if (r.lo >= -32768 && r.hi <= 32767) return Storage::i16;
    return Storage::i32;
}

/// Reusable byte buffer, 64-byte aligned.
using Scratch = std::vector<std::byte, xsimd::aligned_allocator<std::byte, 64>>;

/// Packed B panels: ceil(cols / NR) panels of K x NR elements of `storage`.
struct Panels {
    Storage storage = Storage::i32;
    std::int64_t K = 0, cols = 0;
    Scratch bytes;

    std::int64_t panels() const { return (cols + NR - 1) / NR; }
    std::int64_t panel_elems() const { return K * NR; }
    void resize(Storage s, std::int64_t k, std::int64_t c) {
        storage = s;
        K = k;
        cols = c;
        bytes.assign(static_cast<std::size_t>(panels() * panel_elems()) * storage_size(s), std::byte{0});
    }
    template <class S>
    S* data() noexcept { return reinterpret_cast<S*>(bytes.data()); }
    template <class S>
    const S* data() const noexcept { return reinterpret_cast<const S*>(bytes.data()); }
};

/// A float product the compiler cannot contract into a following addition (FMA): g++ contracts across statements
/// by default in C++ even with -std=c++20 (-ffp-contract=fast; the ISO-mode exception is C only), which would make
/// the reference and the engine round differently. An empty asm that "modifies" the register is the barrier (no
/// instruction is emitted); other compilers / targets need -ffp-contract=off (clang's default contracts only
/// within one expression, which the callers avoid). Integers are returned unchanged (their fusion is exact).
template <class V>
inline V no_contract(V v) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
    if constexpr (std::is_same_v<V, float> || std::is_same_v<V, batch<float>>) {
        if constexpr (std::is_same_v<V, float>) {
#if defined(__aarch64__)
            __asm__("" : "+w"(v));
#elif defined(__AVX512F__)
            __asm__("" : "+v"(v));
#else
            __asm__("" : "+x"(v));
#endif
        } else {
            typename batch<float>::register_type r = v;
#if defined(__aarch64__)
            __asm__("" : "+w"(r));
#elif defined(__AVX512F__)
            __asm__("" : "+v"(r));
#else
            __asm__("" : "+x"(r));
#endif
            v = batch<float>(r);
        }
    }
#endif
    return v;
}

namespace detail {

/// lanes consecutive storage elements -> one batch of T (exact widening for int8 / int16).
template <class T, class S>
inline batch<T> load_widen(const S* p) noexcept {
    if constexpr (std::is_same_v<S, T>) {
        return batch<T>::load_unaligned(p);
    } else {
        static_assert(std::is_same_v<T, std::int32_t>, "only int32 lanes are stored narrow");
#if defined(__AVX512F__)
        if constexpr (lanes == 16) {
            if constexpr (sizeof(S) == 1)
                return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
            else
                return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        }
#endif
#if defined(__AVX2__)
        if constexpr (lanes == 8) {
            if constexpr (sizeof(S) == 1)
                return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
            else
                return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        }
#endif
#if defined(__SSE4_1__)
        if constexpr (lanes == 4) {
            if constexpr (sizeof(S) == 1) {
                std::int32_t w;
                std::memcpy(&w, p, 4);
                return _mm_cvtepi8_epi32(_mm_cvtsi32_si128(w));
            } else {
                return _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
            }
        }
#endif
        alignas(64) std::int32_t tmp[lanes];  // portable fallback
        for (std::int64_t i = 0; i < lanes; ++i) tmp[i] = p[i];
        return batch<T>::load_aligned(tmp);
    }
}

/// One R x NR block: C[r, j] = sum_k A[r, k] B[k, j] + bias, for r < R, j < cols.
/// B rows of a packed panel: row k at panel + k NR.
template <class S>
struct PanelRows {
    using storage = S;
    const S* panel;
    const S* row(std::int64_t k) const noexcept { return panel + k * NR; }
};

/// B rows read in place (direct conv): row k at base + off[k]; NR readable elements from there.
template <class S>
struct OffsetRows {
    using storage = S;
    const S* base;
    const std::int64_t* off;
    const S* row(std::int64_t k) const noexcept { return base + off[k]; }
};

template <class T, int R, class Rows>
inline void block(std::int64_t K, const T* a, std::int64_t lda, Rows rows_b, T* c, std::int64_t ldc,
                  std::int64_t cols, const T* bias_rows, const T* bias_cols) {
    batch<T> acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) {
        acc0[r] = batch<T>(T{0});
        acc1[r] = batch<T>(T{0});
    }
    for (std::int64_t k = 0; k < K; ++k) {
        const auto* brow = rows_b.row(k);
        const batch<T> b0 = load_widen<T>(brow);
        const batch<T> b1 = load_widen<T>(brow + lanes);
        for (int r = 0; r < R; ++r) {
            const batch<T> av(a[r * lda + k]);
            const batch<T> p0 = no_contract(av * b0);  // separate multiply and add: the reference's rounding
            const batch<T> p1 = no_contract(av * b1);
            acc0[r] = acc0[r] + p0;
            acc1[r] = acc1[r] + p1;
        }
    }
    batch<T> bc0(T{0}), bc1(T{0});
    if (bias_cols) {
        alignas(64) T tmp[NR] = {};
        for (std::int64_t j = 0; j < cols; ++j) tmp[j] = bias_cols[j];
        bc0 = batch<T>::load_aligned(tmp);
        bc1 = batch<T>::load_aligned(tmp + lanes);
    }
    for (int r = 0; r < R; ++r) {
        batch<T> v0 = acc0[r], v1 = acc1[r];
        if (bias_rows) {
            const batch<T> br(bias_rows[r]);
            v0 = v0 + br;
            v1 = v1 + br;
        } else {
            v0 = v0 + bc0;  // zeros without any bias: the reference adds 0 too
            v1 = v1 + bc1;
        }
        T* out = c + r * ldc;
        if (cols == NR) {
            v0.store_unaligned(out);
            v1.store_unaligned(out + lanes);
        } else {
            alignas(64) T tmp[NR];
            v0.store_aligned(tmp);
            v1.store_aligned(tmp + lanes);
            std::memcpy(out, tmp, static_cast<std::size_t>(cols) * sizeof(T));
        }
    }
}

template <class T, class Rows, int R = static_cast<int>(MR)>
inline void block_rows(int rows, std::int64_t K, const T* a, std::int64_t lda, Rows b, T* c, std::int64_t ldc,
                       std::int64_t cols, const T* bias_rows, const T* bias_cols) {
    if constexpr (R >= 1) {
        if (rows == R) return block<T, R>(K, a, lda, b, c, ldc, cols, bias_rows, bias_cols);
        return block_rows<T, Rows, R - 1>(rows, K, a, lda, b, c, ldc, cols, bias_rows, bias_cols);
    }
}

template <class T, class S>
void run_typed(std::int64_t M, const T* a, std::int64_t lda, const Panels& b, std::int64_t col0, std::int64_t ncols,
               T* c, std::int64_t ldc, const T* bias_rows, const T* bias_cols) {
    const S* base = b.data<S>();
    const std::int64_t K = b.K;
    for (std::int64_t j = 0; j < ncols; j += NR) {
        const S* panel = base + ((col0 + j) / NR) * b.panel_elems();
        const std::int64_t cols = std::min<std::int64_t>(NR, ncols - j);
        const T* bc = bias_cols ? bias_cols + col0 + j : nullptr;
        for (std::int64_t m = 0; m < M; m += MR) {
            const int rows = static_cast<int>(std::min<std::int64_t>(MR, M - m));
            block_rows<T>(rows, K, a + m * lda, lda, PanelRows<S>{panel}, c + m * ldc + j, ldc, cols,
                          bias_rows ? bias_rows + m : nullptr, bc);
        }
    }
}

}  // namespace detail

/// C[M, ncols] = A[M, K] * B[K, col0 .. col0 + ncols) + bias; col0 must be a multiple of NR (a panel boundary).
/// bias_rows: M values (or null); bias_cols: the panels' column bias indexed from column 0 (or null); not both.
template <class T>
void run(std::int64_t M, const T* a, std::int64_t lda, const Panels& b, std::int64_t col0, std::int64_t ncols, T* c,
         std::int64_t ldc, const T* bias_rows, const T* bias_cols) {
    static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, float>, "gemm lanes are int32 or float");
    if constexpr (std::is_same_v<T, float>) {
        detail::run_typed<float, float>(M, a, lda, b, col0, ncols, c, ldc, bias_rows, bias_cols);
    } else {
        switch (b.storage) {
            case Storage::i8:
                return detail::run_typed<T, std::int8_t>(M, a, lda, b, col0, ncols, c, ldc, bias_rows, bias_cols);
            case Storage::i16:
                return detail::run_typed<T, std::int16_t>(M, a, lda, b, col0, ncols, c, ldc, bias_rows, bias_cols);
            default:
                return detail::run_typed<T, std::int32_t>(M, a, lda, b, col0, ncols, c, ldc, bias_rows, bias_cols);
        }
    }
}

/// Pack B[K, N] (row-major lanes, row stride ldb) into panels of `storage` (every value must fit it).
template <class T>
void pack_panels(const T* b, std::int64_t K, std::int64_t N, std::int64_t ldb, Storage storage, Panels& out) {
    out.resize(storage, K, N);
    auto fill = [&](auto* dst) {
        using S = std::remove_pointer_t<decltype(dst)>;
        for (std::int64_t p = 0; p < out.panels(); ++p) {
            const std::int64_t cols = std::min<std::int64_t>(NR, N - p * NR);
            S* pd = dst + p * out.panel_elems();
            for (std::int64_t k = 0; k < K; ++k) {
                const T* row = b + k * ldb + p * NR;
                for (std::int64_t j = 0; j < cols; ++j) pd[k * NR + j] = static_cast<S>(row[j]);
            }
        }
    };
    switch (storage) {
        case Storage::i8: return fill(out.data<std::int8_t>());
        case Storage::i16: return fill(out.data<std::int16_t>());
        case Storage::i32: return fill(out.data<std::int32_t>());
        case Storage::f32: return fill(out.data<float>());
    }
}

/// Convolution geometry for im2col packing (spatial axes 1..4, normalized window parameters).
struct ConvGeometry {
    int spatial = 0;
    std::int64_t cin_g = 0;
    std::int64_t in[4] = {}, out[4] = {}, kernel[4] = {}, stride[4] = {}, dilation[4] = {}, pad[4] = {};
    std::int64_t kvol = 1, in_pixels = 1, out_pixels = 1;
};

/// im2col of output pixels [pix0, pix0 + npix) into panels: row k = (ci, j_1 .. j_s) row-major, column = pixel;
/// x points at channel 0 of the group ([cin_g, in pixels] lanes, contiguous). Positions outside the input are 0.
template <class T, class S>
void pack_conv_tile(const T* x, const ConvGeometry& g, std::int64_t pix0, std::int64_t npix, S* dst) {
    const int s = g.spatial;
    const int inner = s - 1;
    const std::int64_t K = g.cin_g * g.kvol;
    const std::int64_t OW = g.out[inner], IW = g.in[inner], sw = g.stride[inner], dw = g.dilation[inner],
                       pw = g.pad[inner];
    std::int64_t pix = pix0;
    while (pix < pix0 + npix) {
        // one output row segment: the outer output coordinates stay fixed
        std::int64_t oc[4] = {};
        std::int64_t rest = pix;
        for (int a = s - 1; a >= 0; --a) {
            oc[a] = rest % g.out[a];
            rest /= g.out[a];
        }
        const std::int64_t ow0 = oc[inner];
        const std::int64_t len = std::min<std::int64_t>(OW - ow0, pix0 + npix - pix);
        const std::int64_t t0 = pix - pix0;  // tile column of the segment's first pixel
        std::int64_t j[4] = {};
        for (std::int64_t k = 0; k < K; ++k) {
            // decompose k = (ci, j_0 .. j_{s-1})
            std::int64_t r = k;
            for (int a = s - 1; a >= 0; --a) {
                j[a] = r % g.kernel[a];
                r /= g.kernel[a];
            }
            const std::int64_t ci = r;
            bool inside = true;
            std::int64_t off = ci;
            for (int a = 0; a < inner; ++a) {
                const std::int64_t i = oc[a] * g.stride[a] - g.pad[a] + j[a] * g.dilation[a];
                inside = inside && i >= 0 && i < g.in[a];
                off = off * g.in[a] + i;
            }
            const T* row = inside ? x + off * IW : x;  // only read when inside
            const std::int64_t first = -pw + j[inner] * dw;  // input column of output column 0
            // valid output columns [lo, hi): 0 <= ow s + first < IW
            std::int64_t lo = first >= 0 ? 0 : (-first + sw - 1) / sw;
            std::int64_t hi = IW - first <= 0 ? 0 : (IW - first - 1) / sw + 1;
            if (!inside) lo = hi = ow0;
            for (std::int64_t q = 0; q < len;) {
                const std::int64_t t = t0 + q;
                const std::int64_t n = std::min<std::int64_t>(len - q, NR - t % NR);
                S* d = dst + (t / NR) * K * NR + k * NR + t % NR;
                const std::int64_t ow = ow0 + q;
                const std::int64_t i_lo = std::clamp<std::int64_t>(lo - ow, 0, n);
                const std::int64_t i_hi = std::clamp<std::int64_t>(hi - ow, i_lo, n);
                for (std::int64_t i = 0; i < i_lo; ++i) d[i] = S{0};
                if (sw == 1) {
                    const std::int64_t base = ow + first;  // base + i >= 0 for i >= i_lo
                    for (std::int64_t i = i_lo; i < i_hi; ++i) d[i] = static_cast<S>(row[base + i]);
                } else {
                    for (std::int64_t i = i_lo; i < i_hi; ++i) d[i] = static_cast<S>(row[(ow + i) * sw + first]);
                }
                for (std::int64_t i = i_hi; i < n; ++i) d[i] = S{0};
                q += n;
            }
        }
        pix += len;
    }
}

/// Direct convolution for 1-D / 2-D convs with stride 1 on the innermost axis: the group's input planes are copied
/// once into a zero-padded buffer of storage S (padding = real 0, plus NR elements of slack for the last panel's
/// reads), and B[k, (oh, ow .. ow + NR)] is read in place at plane + off[k] + oh s_h WP + ow: no im2col. The sums
/// and their order are those of the packed path. `planes` and `off` are scratch buffers.
template <class T, class S>
void conv_direct(const T* x, const ConvGeometry& g, std::int64_t M, const T* a, const T* bias_rows, T* c,
                 Scratch& scratch, std::vector<std::int64_t>& off) {
    const bool two = g.spatial == 2;
    const std::int64_t H = two ? g.in[0] : 1, W = g.in[g.spatial - 1];
    const std::int64_t KH = two ? g.kernel[0] : 1, KW = g.kernel[g.spatial - 1];
    const std::int64_t sh = two ? g.stride[0] : 1, dh = two ? g.dilation[0] : 1, dw = g.dilation[g.spatial - 1];
    const std::int64_t ph = two ? g.pad[0] : 0, pw = g.pad[g.spatial - 1];
    const std::int64_t OH = two ? g.out[0] : 1, OW = g.out[g.spatial - 1];
    // padded extents: every read (oh s_h + kh d_h, ow + kw d_w) of a valid output lies inside
    const std::int64_t HP = (OH - 1) * sh + (KH - 1) * dh + 1, WP = OW + (KW - 1) * dw;
    const std::int64_t plane = HP * WP, K = g.cin_g * KH * KW;
    scratch.assign(static_cast<std::size_t>(g.cin_g * plane + NR) * sizeof(S), std::byte{0});
    S* planes = reinterpret_cast<S*>(scratch.data());
    for (std::int64_t ci = 0; ci < g.cin_g; ++ci)
        for (std::int64_t r = 0; r < HP; ++r) {
            const std::int64_t i = r - ph;
            if (i < 0 || i >= H) continue;
            const T* src = x + (ci * H + i) * W;
            S* dst = planes + ci * plane + r * WP;
            const std::int64_t lo = std::max<std::int64_t>(0, pw), hi = std::min<std::int64_t>(WP, W + pw);
            for (std::int64_t q = lo; q < hi; ++q) dst[q] = static_cast<S>(src[q - pw]);
        }
    off.resize(static_cast<std::size_t>(K));
    for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t ci = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
        off[static_cast<std::size_t>(k)] = ci * plane + kh * dh * WP + kw * dw;
    }
    const std::int64_t P = OH * OW;
    for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ow += NR) {
            const std::int64_t cols = std::min<std::int64_t>(NR, OW - ow);
            const detail::OffsetRows<S> rows{planes + oh * sh * WP + ow, off.data()};
            for (std::int64_t m = 0; m < M; m += MR) {
                const int rcount = static_cast<int>(std::min<std::int64_t>(MR, M - m));
                detail::block_rows<T>(rcount, K, a + m * K, K, rows, c + m * P + oh * OW + ow, P, cols,
                                      bias_rows + m, static_cast<const T*>(nullptr));
            }
        }
}

}  // namespace janus::ops::gemm
