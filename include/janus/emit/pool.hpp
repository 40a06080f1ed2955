#pragma once
// Lowering of quantized int8 pooling (ops/pool.hpp) to the vnpu, from the op's own PoolPlan (Op::plan):
//   MaxPool             windowed max: vec.max, separably (rows, then taps along the row)
//   GlobalMaxPool       streamed vec.max into a row of partial maxima, then a halving tree
//   GlobalAveragePool   streamed vec.acc into a row of int32 partial sums, then a vec.add32 halving tree
//   AveragePool         only when every output position has the same count (one multiplier): vec.acc per row,
//                       vec.add32 per tap
// and the host's epilogue (the plan's numbers, the vec.rq table written by append_rq_table):
//   max      sat8(rq(max - zp_in, M) + zp_out); skipped when it is the identity on int8 (checked on all 256 values)
//   average  sat8(rq(clamp(acc, +-Lc) << S, M[count]) + zp_out)
//
// Layout: NHWC images (emit::DramImage), one image, pixels `cpitch` bytes apart (a multiple of 16 >= C; padding
// channels are computed and unspecified in the output), rows w * cpitch bytes apart.
//
// Windowed pools, per output row yo (double buffered, as emit/depthwise.hpp):
//   - only the input rows its window holds (yo sh - pt + ky dh inside the image: never all of them outside, rule
//     window-holds-input of the op) are loaded, by one multi-row dma.load, into consecutive row slots of Wb pixels:
//     Wb = (Wo - 1) sw + (kw - 1) dw + 1 input columns starting at -pl. The border columns (pads, the ceil-mode
//     overhang) are filled once per buffer set: with -128 for max (a window always holds an input element, so -128
//     never wins over one and never changes the max) and with zp_in for average (x - zp_in = 0: padding adds 0, as
//     on the host, which sums input elements only);
//   - rows are combined first over the full slot (max: vec.max in place into slot 0; average: vec.acc into an ACC
//     row cleared by dma.fill), then the kw taps along the row at stride 1 (vec.max / vec.add32 of the row shifted
//     by kx dw pixels) over Wfull = (Wo - 1) sw + 1 pixels;
//   - strides: the row is computed at horizontal stride 1 and every sw-th pixel is stored by one strided dma.store
//     (rows Wo, source stride sw cpitch): no gather before the compute, the VEC work grows by sw on the tap stage only;
//     vertical strides and dilations only pick the loaded rows.
// Global pools stream the image in tiles of P pixels (double buffered; the set is released by an event from the
// VEC instruction that read it) into a P-pixel accumulator row, then halve it log2(P) times.
// Average epilogue: vec.shl32 by S, vec.rq with M[count]. The host clamps acc to +-Lc first. When the largest
// reachable |acc| (volume x max |x - zp_in|) is <= Lc the clamp never acts and is left out; otherwise it is
// emulated exactly: two vec.rq masks (acc > Lc, acc < -Lc; multiplier 1, bias -+Lc) select, by vec.sel, the host's
// value at +-Lc over the (then possibly wrapped) shifted result.
// Events follow the data: L[s] (rows / tile in LMEM) from DMA to VEC, V[s] (result in LMEM) from VEC to the store,
// F[s] (tile set read) from VEC back to the DMA in global pools; every signal is waited for exactly once.
// Refused with a rule (the host runs these): lower-pool-layout (shapes or pitches that do not chain, a rank other
// than 2 spatial axes, N != 1), lower-pool-count (an average whose count varies by position: one multiplier per
// row is not lowered), lower-pool-range (an accumulator that could exceed int32), lower-pool-budget (the row
// buffers or tiles do not fit LMEM / ACC; rows are not split).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <janus/emit/depthwise.hpp>
#include <janus/ops/pool.hpp>

namespace janus::emit {

/// How a streamed reduction combines a tile into its row of partial results.
enum class PartialOp { max, min, sum };

/// A streamed reduction (global pools, emit/reduce.hpp's outer-axis reductions): `count` pixels of `width` bytes,
/// pixel i at DRAM `offset + i * stride` of `region`, reduced element by element into ONE pixel.
struct StreamedPartials {
    PartialOp op = PartialOp::max;
    std::int64_t count = 0;  ///< pixels
    std::int64_t width = 0;  ///< bytes per pixel, a multiple of 16
    std::int64_t tile = 0;   ///< P: pixels per tile, and of the partial row
    int region = 0;
    std::int64_t offset = 0, stride = 0;  ///< stride == width: tiles are contiguous (one single-row dma.load)
    std::int32_t zp = 0;                  ///< sum: vec.acc's zero point
};

/// Stream the pixels in tiles of P through the buffer sets `in` (2 sets of P x width bytes when there is more than
/// one tile, else `in[0]` only) into the P-pixel partial row `accum` (LMEM int8 for max / min, ACC int32 for sum),
/// which the caller has filled with the combine's identity (-128, 127, 0) on the DMA queue before this call; then
/// halve the row log2(P) times, so that pixel 0 of `accum` holds the result.
/// Events: loaded[s] (tile in LMEM, DMA -> VEC), freed[s] (set read, VEC -> DMA; held only when there are more
/// than 2 tiles); the last halving signals `done` when it is given and P > 1. Every signal is waited for here,
/// except `done`. DMA configuration: with stride == width the loads are single-row transfers under the caller's
/// dma.cfg (rows 1); otherwise each load sets its own (rows, stride, width), so P <= 4096.
/// r1, r2: load addresses; r3 = accum's address on return; r4: scratch.
inline Status stream_partials(Builder& b, const StreamedPartials& p, const Buffer& accum,
                              const std::array<Buffer, 2>& in, const std::array<Event, 2>& loaded,
                              const std::array<Event, 2>& freed, const Event* done, const Reg& r1, const Reg& r2,
                              const Reg& r3, const Reg& r4) {
    const std::int64_t P = p.tile, W = p.width, tiles = (p.count + P - 1) / P, tile = P * W;
    const std::int64_t sets = tiles > 1 ? 2 : 1;
    const bool contiguous = p.stride == W;
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    const auto pixels = [&](std::int64_t i) { return std::min(P, p.count - i * P); };
    const auto load = [&](std::int64_t i) -> Status {
        const auto s = static_cast<std::size_t>(i % sets);
        JANUS_CHECK(li(r1, in[s].address()));
        JANUS_CHECK(li(r2, p.offset + i * (contiguous ? tile : P * p.stride)));
        const Sync sync{i >= 2 ? &freed[s] : nullptr, &loaded[s]};
        if (contiguous) return b.emit("dma.load", {r1, p.region, r2, pixels(i) * W}, sync);
        JANUS_CHECK(b.emit("dma.cfg", {pixels(i), p.stride, W}));
        return b.emit("dma.load", {r1, p.region, r2, W}, sync);
    };
    JANUS_CHECK(load(0));
    JANUS_CHECK(li(r3, accum.address()));
    for (std::int64_t i = 0; i < tiles; ++i) {
        const auto s = static_cast<std::size_t>(i % sets);
        if (i + 1 < tiles) JANUS_CHECK(load(i + 1));
        JANUS_CHECK(li(r4, in[s].address()));
        const Sync sync{&loaded[s], i + 2 < tiles ? &freed[s] : nullptr};  // the set is reused by tile i + 2
        if (p.op == PartialOp::sum)
            JANUS_CHECK(b.emit("vec.acc", {r3, r4, p.zp, pixels(i) * W}, sync));
        else
            JANUS_CHECK(b.emit(p.op == PartialOp::max ? "vec.max" : "vec.min", {r3, r3, r4, pixels(i) * W}, sync));
    }
    // halve the accumulator row: slots [0, q - h) combine with [h, q)
    for (std::int64_t q = P; q > 1;) {
        const std::int64_t h = (q + 1) / 2;
        const Sync sync{nullptr, h == 1 ? done : nullptr};
        if (p.op == PartialOp::sum) {
            JANUS_CHECK(li(r4, accum.address() + 4 * h * W));
            JANUS_CHECK(b.emit("vec.add32", {r3, r3, r4, (q - h) * W}, sync));
        } else {
            JANUS_CHECK(li(r4, accum.address() + h * W));
            JANUS_CHECK(b.emit(p.op == PartialOp::max ? "vec.max" : "vec.min", {r3, r3, r4, (q - h) * W}, sync));
        }
        q = h;
    }
    return ok_status();
}

namespace pool_detail {

inline std::string dims(const DramImage& i) {
    return std::to_string(i.h) + "x" + std::to_string(i.w) + "x" + std::to_string(i.c) + " (pitch " +
           std::to_string(i.cpitch) + ")";
}

/// Rule lower-pool-layout: one NHWC image whose shape chains through the plan's window.
inline Status check_layout(const ops::PoolPlan& plan, const DramImage& x, const DramImage& y, const std::string& what) {
    const auto refuse = [&](const std::string& why) {
        return make_error(what, "", "lower-pool-layout", "x " + dims(x) + ", y " + dims(y) + ": " + why);
    };
    if (plan.out_shape.size() != 4 || plan.window.kernel.size() != 2)
        return refuse("only two spatial axes (NCHW on the host, NHWC on the vnpu) are lowered");
    if (plan.out_shape[0] != 1) return refuse("one image (N = 1) per lowering");
    if (x.c < 1 || x.cpitch % 16 != 0 || x.cpitch < x.c || y.cpitch != x.cpitch || y.c != x.c || x.offset % 16 != 0 ||
        y.offset % 16 != 0 || x.h < 1 || x.w < 1)
        return refuse("pitches must be equal multiples of 16 >= C, offsets multiples of 16");
    const auto out = ops::window_output_shape(Shape{1, x.c, x.h, x.w}, plan.window, what);
    if (!out.ok() || !(*out == plan.out_shape) || y.h != plan.out_shape[2] || y.w != plan.out_shape[3] ||
        plan.out_shape[1] != x.c)
        return refuse("the shapes do not chain through the plan's window (output " + plan.out_shape.str() + ")");
    return ok_status();
}

/// The host's quantized epilogue (ops pool_op::quant_post, int8) at accumulator `acc` and window count `count`.
template <class Op>
std::int32_t host_post(const ops::PoolPlan& p, std::int32_t acc, std::int32_t count = 0) {
    expr::ScalarArgs a;
    a.i[0] = acc;
    a.i[1] = count;
    return Op::template quant_post<std::int8_t>(p).eval(a);
}

/// Is the max pools' post (the host's: sat8(rq(v - zp_in, M) + zp_out)) the identity on every int8 v? (then it is
/// left out)
inline bool max_post_is_identity(const ops::PoolPlan& p) {
    for (std::int32_t v = -128; v <= 127; ++v)
        if (host_post<ops::MaxPool>(p, v) != v) return false;
    return true;
}

/// The average epilogue's constants and buffers (emulating the clamp when it can act).
struct AverageEpilogue {
    bool clamp = false;
    int shift = 0;
    std::int64_t n = 0;  ///< bytes of the output row (pixels x cpitch)
    Buffer table, hi_table, lo_table, hi_mask, lo_mask, hi_row, lo_row;

    /// LMEM bytes for `pixels` pixels of pitch cp.
    static std::int64_t lmem(bool clamp, std::int64_t pixels, std::int64_t cp) {
        return (16 + 16 * cp) * (clamp ? 3 : 1) + (clamp ? 4 * pixels * cp : 0) + 64;
    }
};

/// Rules lower-pool-count and lower-pool-range for an average plan.
inline Status check_average(const ops::PoolPlan& p, const std::string& what) {
    if (p.min_count != p.max_count || p.table.size() != 1)
        return make_error(what, "", "lower-pool-count",
                          "the window's count varies from " + std::to_string(p.min_count) + " to " +
                              std::to_string(p.max_count) +
                              " over the output (padding with count_include_pad = 0, or a ceil-mode overhang): "
                              "one multiplier per output row is not lowered");
    const std::int64_t bound = p.acc_bound, lc = p.clamp_limit;
    const std::int64_t lim = std::numeric_limits<std::int32_t>::max();
    if (bound > lim || (bound > lc && bound + lc > lim) || (lc << p.pre_shift) > lim)
        return make_error(what, "", "lower-pool-range",
                          "the accumulator reaches " + std::to_string(bound) + " (clamp " + std::to_string(lc) +
                              ", pre-shift " + std::to_string(p.pre_shift) + "): its comparisons would wrap int32");
    return ok_status();
}

inline Result<AverageEpilogue> prepare_average(Builder& b, const ops::PoolPlan& p, std::int64_t pixels, std::int64_t cp,
                                        const std::string& what) {
    AverageEpilogue e;
    const std::int64_t lc = p.clamp_limit;
    e.clamp = p.acc_bound > lc;
    e.shift = p.pre_shift;
    e.n = pixels * cp;
    const auto m = p.table[0];
    std::vector<std::uint8_t> t;
    append_rq_table(t, p.rounding, p.zp_out, -128, 127, cp, [](std::int64_t) { return 0; }, [&](std::int64_t) { return m; });
    JANUS_TRY(e.table, load_constant(b, Mem::lmem, t, what + " rq table"));
    if (!e.clamp) return e;
    // acc > Lc  <=>  rq(acc - Lc, 1) >= 1 (clamped to [0, 127]);  acc < -Lc  <=>  rq(acc + Lc, 1) <= -1 ([-128, 0])
    const numeric::QuantizedMultiplier one{1 << 30, 1};
    const auto lc32 = static_cast<std::int32_t>(lc);
    std::vector<std::uint8_t> th, tl;
    append_rq_table(th, p.rounding, 0, 0, 127, cp, [&](std::int64_t) { return -lc32; }, [&](std::int64_t) { return one; });
    append_rq_table(tl, p.rounding, 0, -128, 0, cp, [&](std::int64_t) { return lc32; }, [&](std::int64_t) { return one; });
    JANUS_TRY(e.hi_table, load_constant(b, Mem::lmem, th, what + " mask acc > Lc"));
    JANUS_TRY(e.lo_table, load_constant(b, Mem::lmem, tl, what + " mask acc < -Lc"));
    // the host's results at the clamp limits (its epilogue evaluated there; check_average: one count)
    const auto at = [&](std::int64_t a) {
        return static_cast<std::uint8_t>(
            static_cast<std::int8_t>(host_post<ops::AveragePool>(p, static_cast<std::int32_t>(a), p.min_count)));
    };
    const std::vector<std::uint8_t> hi(static_cast<std::size_t>(e.n), at(lc)),
        lo(static_cast<std::size_t>(e.n), at(-lc));
    JANUS_TRY(e.hi_row, load_constant(b, Mem::lmem, hi, what + " value at +Lc"));
    JANUS_TRY(e.lo_row, load_constant(b, Mem::lmem, lo, what + " value at -Lc"));
    JANUS_TRY(e.hi_mask, b.alloc(Mem::lmem, static_cast<std::uint32_t>(e.n), what + " mask hi"));
    JANUS_TRY(e.lo_mask, b.alloc(Mem::lmem, static_cast<std::uint32_t>(e.n), what + " mask lo"));
    return e;
}

/// Emit the average epilogue: ACC row at `acc` (pixels x cp int32, destroyed) -> int8 row at `out`. VEC only; the
/// last instruction signals `done`. r1..r4: scratch registers.
inline Status emit_average(Builder& b, const AverageEpilogue& e, std::int64_t cp, std::uint32_t acc, std::uint32_t out,
                           const Event* done, const Reg& r1, const Reg& r2, const Reg& r3, const Reg& r4) {
    const std::int64_t rows = e.n / cp;
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    JANUS_CHECK(li(r1, acc));
    if (e.clamp) {
        JANUS_CHECK(li(r2, e.hi_mask.address()));
        JANUS_CHECK(li(r3, e.hi_table.address()));
        JANUS_CHECK(b.emit("vec.rq", {r2, r1, r3, cp, rows}));
        JANUS_CHECK(li(r2, e.lo_mask.address()));
        JANUS_CHECK(li(r3, e.lo_table.address()));
        JANUS_CHECK(b.emit("vec.rq", {r2, r1, r3, cp, rows}));
    }
    if (e.shift > 0) JANUS_CHECK(b.emit("vec.shl32", {r1, r1, e.shift, e.n}));
    JANUS_CHECK(li(r2, out));
    JANUS_CHECK(li(r3, e.table.address()));
    JANUS_CHECK(b.emit("vec.rq", {r2, r1, r3, cp, rows}, Sync{nullptr, e.clamp ? nullptr : done}));
    if (e.clamp) {
        JANUS_CHECK(li(r1, e.hi_mask.address()));
        JANUS_CHECK(li(r3, e.hi_row.address()));
        JANUS_CHECK(b.emit("vec.sel", {r2, r1, r3, r2, e.n}));
        JANUS_CHECK(li(r1, e.lo_mask.address()));
        JANUS_CHECK(li(r4, e.lo_row.address()));
        JANUS_CHECK(b.emit("vec.sel", {r2, r1, r4, r2, e.n}, Sync{nullptr, done}));
    }
    return ok_status();
}

enum class Kind { max, average };

/// MaxPool / AveragePool over 2-D windows, one output row at a time (see the header).
template <Kind K>
Status lower_window(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y,
                    const std::string& what) {
    constexpr bool is_max = K == Kind::max;
    JANUS_CHECK(check_layout(plan, x, y, what));
    if constexpr (!is_max) JANUS_CHECK(check_average(plan, what));
    const auto& wp = plan.window;
    const std::int64_t Cp = x.cpitch, H = x.h, W = x.w, Ho = y.h, Wo = y.w;
    const std::int64_t kh = wp.kernel[0], kw = wp.kernel[1], sh = wp.strides[0], sw = wp.strides[1];
    const std::int64_t dh = wp.dilations[0], dw = wp.dilations[1], pt = wp.pads_begin[0], pl = wp.pads_begin[1];
    const std::int64_t Wfull = (Wo - 1) * sw + 1, Wb = Wfull + (kw - 1) * dw, cols = std::min(W, Wb - pl);
    const std::int64_t right = Wb - pl - cols, prow = Wb * Cp, row = Wfull * Cp;
    const auto refuse = [&](const char* rule, const std::string& why) { return make_error(what, "", rule, why); };
    // the input rows each output row reads: [k0, k1) of the kernel's rows, never empty (window-holds-input)
    std::vector<std::array<std::int64_t, 2>> span(static_cast<std::size_t>(Ho));
    std::int64_t slots = 1;
    for (std::int64_t yo = 0; yo < Ho; ++yo) {
        const auto kr = ops::detail::kernel_range(yo * sh - pt, dh, kh, 0, H);
        if (kr.count() == 0 || cols < 1) return refuse("lower-pool-layout", "a window holds no input element");
        span[static_cast<std::size_t>(yo)] = {kr.lo, kr.hi + 1};
        slots = std::max(slots, kr.count());
    }
    bool post = true;  // max: requantize (vec.acc + vec.rq); average: always
    if constexpr (is_max) post = !max_post_is_identity(plan);
    const bool clamp = !is_max && plan.acc_bound > plan.clamp_limit;
    const bool out_buf = !is_max || post || kw > 1;
    // LMEM: row slots and output rows of both sets, the epilogue's tables and masks; ACC: the post's rows
    const std::int64_t lmem = 2 * slots * prow + (out_buf ? 2 * row : 0) +
                              (is_max ? (post ? 16 + 16 * Cp : 0) : AverageEpilogue::lmem(clamp, Wfull, Cp) + 2 * row);
    const std::int64_t acc = is_max ? (post ? 2 * 4 * row : 0) : 2 * 4 * prow + (kw > 1 ? 4 * row : 0);
    if (lmem > b.largest_free(Mem::lmem) || acc > b.largest_free(Mem::acc) || prow > 262144)
        return refuse("lower-pool-budget",
                      "an output row of " + std::to_string(Wo) + " pixels needs " + std::to_string(lmem) +
                          " B of LMEM (" + std::to_string(b.largest_free(Mem::lmem)) + " free) and " +
                          std::to_string(acc) + " B of ACC (" + std::to_string(b.largest_free(Mem::acc)) +
                          " free); rows are not split yet");

    auto txn = b.transaction();
    auto scope = b.scope("pool");
    b.note(what + ": " + std::to_string(Ho) + " output rows of " + std::to_string(Wo) + " x " + std::to_string(Cp) +
           " B, " + std::to_string(kh) + "x" + std::to_string(kw) + " window: rows combined over " +
           std::to_string(Wb) + " pixels, then " + std::to_string(kw - 1) + " tap(s) at stride 1 over " +
           std::to_string(Wfull) + " pixels" +
           (sw > 1 ? ", pixels " + std::to_string(sw) + " apart stored by a strided dma.store" : std::string()) +
           (is_max ? (post ? "; requantized by vec.acc + vec.rq" : "; output quantization = input's: no post")
                   : (clamp ? "; clamp emulated by masks" : "; clamp never acts")) +
           (Ho > 1 ? ", double buffered" : "; double buffering off: a single row"));
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    const std::int64_t fill = is_max ? -128 : plan.zp_in;
    Buffer table;
    AverageEpilogue ep;
    if constexpr (is_max) {
        if (post) {
            std::vector<std::uint8_t> t;
            append_rq_table(t, plan.rounding, plan.zp_out, -128, 127, Cp, [](std::int64_t) { return 0; },
                [&](std::int64_t) { return plan.multiplier; });
            JANUS_TRY(table, load_constant(b, Mem::lmem, t, "pool rq table"));
        }
    } else {
        JANUS_TRY(ep, prepare_average(b, plan, Wfull, Cp, "pool"));
    }
    std::array<Buffer, 2> in, out, accs;
    for (std::size_t s = 0; s < 2; ++s) {
        const std::string n = std::to_string(s);
        JANUS_TRY(in[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(slots * prow), "pool rows " + n));
        if (out_buf) {
            JANUS_TRY(out[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(row), "pool out " + n));
        }
        if (!is_max || post) {
            JANUS_TRY(accs[s],
                      b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * (is_max ? row : prow)), "pool ACC " + n));
        }
    }
    Buffer taps;  // average: the row's taps summed (VEC only: one set)
    if (!is_max && kw > 1) {
        JANUS_TRY(taps, b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * row), "pool taps"));
    }
    JANUS_TRY(Reg r1, b.reg("pool address 1"));
    JANUS_TRY(Reg r2, b.reg("pool address 2"));
    JANUS_TRY(Reg r3, b.reg("pool address 3"));
    JANUS_TRY(Reg r4, b.reg("pool address 4"));
    std::array<Event, 2> loaded, done;
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_TRY(loaded[s], b.event("pool rows loaded " + std::to_string(s)));
        JANUS_TRY(done[s], b.event("pool row done " + std::to_string(s)));
    }
    // VEC instructions of output row yo: none when it is a plain copy of one loaded row
    const auto vec_ops = [&](std::int64_t yo) {
        const auto& sp = span[static_cast<std::size_t>(yo)];
        return is_max ? (sp[1] - sp[0] - 1) + (kw - 1) + (post ? 2 : 0) : 1;
    };
    // border columns of every slot: written once per set, loads write the interior only
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_CHECK(b.emit("dma.cfg", {slots, 0, prow}));
        if (pl > 0) {
            JANUS_CHECK(li(r1, in[s].address()));
            JANUS_CHECK(b.emit("dma.fill", {r1, fill, pl * Cp}));
        }
        if (right > 0) {
            JANUS_CHECK(li(r1, in[s].address() + (pl + cols) * Cp));
            JANUS_CHECK(b.emit("dma.fill", {r1, fill, right * Cp}));
        }
    }
    // the DMA work of output row yo: clear its ACC set, bring its input rows; the last instruction signals
    const auto load_row = [&](std::int64_t yo) -> Status {
        const auto s = static_cast<std::size_t>(yo % 2);
        const auto& sp = span[static_cast<std::size_t>(yo)];
        const std::int64_t n = sp[1] - sp[0], r0 = yo * sh - pt + sp[0] * dh;
        if (accs[s]) {
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r1, accs[s].address()));
            JANUS_CHECK(b.emit("dma.fill", {r1, 0, 4 * (is_max ? row : prow)}));
        }
        const Event* sig = vec_ops(yo) > 0 ? &loaded[s] : nullptr;
        const bool one = dh * W * Cp <= 4194288;  // one multi-row transfer when the source stride is encodable
        for (std::int64_t j = 0; j < n; j += one ? n : 1) {
            const std::int64_t rows = one ? n : 1;
            JANUS_CHECK(b.emit("dma.cfg", {rows, rows > 1 ? dh * W * Cp : 0, prow}));
            JANUS_CHECK(li(r1, in[s].address() + j * prow + pl * Cp));
            JANUS_CHECK(li(r2, static_cast<std::int64_t>(x.offset) + (r0 + j * dh) * W * Cp));
            JANUS_CHECK(
                b.emit("dma.load", {r1, x.region, r2, cols * Cp}, Sync{nullptr, j + rows >= n ? sig : nullptr}));
        }
        return ok_status();
    };
    JANUS_CHECK(load_row(0));
    for (std::int64_t yo = 0; yo < Ho; ++yo) {
        const auto s = static_cast<std::size_t>(yo % 2);
        if (yo + 1 < Ho) JANUS_CHECK(load_row(yo + 1));
        const std::int64_t n = span[static_cast<std::size_t>(yo)][1] - span[static_cast<std::size_t>(yo)][0];
        std::int64_t left = vec_ops(yo);
        const Event* wait = &loaded[s];
        // one VEC instruction: the first waits for the rows, the last signals the result
        [[maybe_unused]] const auto vec = [&](std::string_view m, std::initializer_list<Operand> ops) -> Status {
            const Sync sync{wait, --left == 0 ? &done[s] : nullptr};
            wait = nullptr;
            return b.emit(m, ops, sync);
        };
        std::uint32_t result = in[s].address();
        if constexpr (is_max) {
            JANUS_CHECK(li(r1, in[s].address()));
            for (std::int64_t j = 1; j < n; ++j) {  // rows: max in place into slot 0, over the whole slot
                JANUS_CHECK(li(r2, in[s].address() + j * prow));
                JANUS_CHECK(vec("vec.max", {r1, r1, r2, prow}));
            }
            if (kw > 1) {  // taps along the row, at stride 1
                JANUS_CHECK(li(r3, out[s].address()));
                JANUS_CHECK(li(r2, in[s].address() + dw * Cp));
                JANUS_CHECK(vec("vec.max", {r3, r1, r2, row}));
                for (std::int64_t k = 2; k < kw; ++k) {
                    JANUS_CHECK(li(r2, in[s].address() + k * dw * Cp));
                    JANUS_CHECK(vec("vec.max", {r3, r3, r2, row}));
                }
                result = out[s].address();
            }
            if (post) {
                JANUS_CHECK(li(r1, accs[s].address()));
                JANUS_CHECK(li(r2, result));
                JANUS_CHECK(vec("vec.acc", {r1, r2, plan.zp_in, row}));
                JANUS_CHECK(li(r2, out[s].address()));
                JANUS_CHECK(li(r3, table.address()));
                JANUS_CHECK(vec("vec.rq", {r2, r1, r3, Cp, Wfull}));
                result = out[s].address();
            }
        } else {
            // rows: sum (x - zp_in) into the cleared ACC row over the whole slot; taps: vec.add32 of shifted rows
            JANUS_CHECK(li(r1, accs[s].address()));
            for (std::int64_t j = 0; j < n; ++j) {
                JANUS_CHECK(li(r2, in[s].address() + j * prow));
                JANUS_CHECK(
                    b.emit("vec.acc", {r1, r2, plan.zp_in, prow}, Sync{j == 0 ? &loaded[s] : nullptr, nullptr}));
            }
            std::uint32_t sum = accs[s].address();
            if (kw > 1) {
                JANUS_CHECK(li(r3, taps.address()));
                JANUS_CHECK(li(r2, accs[s].address() + 4 * dw * Cp));
                JANUS_CHECK(b.emit("vec.add32", {r3, r1, r2, row}));
                for (std::int64_t k = 2; k < kw; ++k) {
                    JANUS_CHECK(li(r2, accs[s].address() + 4 * k * dw * Cp));
                    JANUS_CHECK(b.emit("vec.add32", {r3, r3, r2, row}));
                }
                sum = taps.address();
            }
            JANUS_CHECK(emit_average(b, ep, Cp, sum, out[s].address(), &done[s], r1, r2, r3, r4));
            result = out[s].address();
        }
        // store: the whole row (stride 1), or every sw-th pixel (rows of one pixel, 4096 rows per transfer)
        const Event* w = vec_ops(yo) > 0 ? &done[s] : nullptr;
        JANUS_CHECK(li(r1, result));
        JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset) + yo * Wo * Cp));
        if (sw == 1) {
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, Wo * Cp}, Sync{w, nullptr}));
        } else {
            for (std::int64_t j = 0; j < Wo; j += 4096) {
                const std::int64_t rows = std::min<std::int64_t>(4096, Wo - j);
                JANUS_CHECK(b.emit("dma.cfg", {rows, sw * Cp, Cp}));
                if (j > 0) {
                    JANUS_CHECK(li(r1, result + j * sw * Cp));
                    JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset) + (yo * Wo + j) * Cp));
                }
                JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, Cp}, Sync{j == 0 ? w : nullptr, nullptr}));
            }
        }
    }
    txn.commit();
    return ok_status();
}

/// GlobalMaxPool / GlobalAveragePool: stream the image through a P-pixel accumulator row, halve it, post.
template <Kind K>
Status lower_global(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y,
                    const std::string& what, std::int64_t max_tile) {
    constexpr bool is_max = K == Kind::max;
    JANUS_CHECK(check_layout(plan, x, y, what));
    if (y.h != 1 || y.w != 1 || plan.window.kernel[0] != x.h || plan.window.kernel[1] != x.w)
        return make_error(what, "", "lower-pool-layout", "a global pool's window is the whole image, its output 1x1");
    if constexpr (!is_max) JANUS_CHECK(check_average(plan, what));
    const std::int64_t Cp = x.cpitch, HW = x.h * x.w;
    const bool post = is_max ? !max_post_is_identity(plan) : true;
    const bool clamp = !is_max && plan.acc_bound > plan.clamp_limit;
    // fixed LMEM: the output row and the post's tables; per pixel of the tile: 2 sets (+ the max row)
    const std::int64_t fixed = 16 + Cp + (is_max ? (post ? 16 + 16 * Cp : 0) : AverageEpilogue::lmem(clamp, 1, Cp));
    const std::int64_t lfree = b.largest_free(Mem::lmem) - fixed, afree = b.largest_free(Mem::acc);
    std::int64_t P = std::min<std::int64_t>(HW, lfree / ((is_max ? 3 : 2) * Cp));
    if (!is_max) P = std::min(P, afree / (4 * Cp));
    if (is_max && post && afree < 4 * Cp) P = 0;
    if (max_tile > 0)
        P = std::min(P, max_tile);
    else
        P = std::min(P, std::max<std::int64_t>((HW + 7) / 8, (2048 + Cp - 1) / Cp));  // >= 8 tiles or >= 2 KiB
    if (P < 1)
        return make_error(what, "", "lower-pool-budget",
                          "one pixel of " + std::to_string(Cp) + " B does not fit the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B) and ACC (" + std::to_string(afree) +
                              " B)");
    const std::int64_t tiles = (HW + P - 1) / P, tile = P * Cp;
    int halvings = 0;
    for (std::int64_t p = P; p > 1; p = (p + 1) / 2) ++halvings;

    auto txn = b.transaction();
    auto scope = b.scope("global pool");
    b.note(what + ": " + std::to_string(HW) + " pixels of " + std::to_string(Cp) + " B in " + std::to_string(tiles) +
           " tile(s) of " + std::to_string(P) + " pixels into a " + std::to_string(P) + "-pixel " +
           (is_max ? "vec.max row" : "vec.acc row") + ", halved " + std::to_string(halvings) + " times" +
           (is_max ? (post ? "; requantized by vec.acc + vec.rq" : "; output quantization = input's: no post")
                   : (clamp ? "; clamp emulated by masks" : "; clamp never acts")) +
           (tiles > 1 ? ", double buffered" : "; double buffering off: a single tile"));
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    Buffer table, accum, result, acc1;
    AverageEpilogue ep;
    if constexpr (is_max) {
        if (post) {
            std::vector<std::uint8_t> t;
            append_rq_table(t, plan.rounding, plan.zp_out, -128, 127, Cp, [](std::int64_t) { return 0; },
                [&](std::int64_t) { return plan.multiplier; });
            JANUS_TRY(table, load_constant(b, Mem::lmem, t, "global pool rq table"));
            JANUS_TRY(acc1, b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * Cp), "global pool post ACC"));
        }
        JANUS_TRY(accum, b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile), "global pool max row"));
    } else {
        JANUS_TRY(ep, prepare_average(b, plan, 1, Cp, "global pool"));
        JANUS_TRY(accum, b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * tile), "global pool sums"));
    }
    JANUS_TRY(result, b.alloc(Mem::lmem, static_cast<std::uint32_t>(Cp), "global pool out"));
    const int sets = tiles > 1 ? 2 : 1;
    std::array<Buffer, 2> in;
    std::array<Event, 2> loaded, freed;
    for (int s = 0; s < sets; ++s) {
        const std::string n = std::to_string(s);
        JANUS_TRY(in[static_cast<std::size_t>(s)],
                  b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile), "global pool tile " + n));
        JANUS_TRY(loaded[static_cast<std::size_t>(s)], b.event("global pool tile loaded " + n));
        if (tiles > 2) {
            JANUS_TRY(freed[static_cast<std::size_t>(s)], b.event("global pool tile read " + n));
        }
    }
    JANUS_TRY(Event done, b.event("global pool result"));
    JANUS_TRY(Reg r1, b.reg("global pool address 1"));
    JANUS_TRY(Reg r2, b.reg("global pool address 2"));
    JANUS_TRY(Reg r3, b.reg("global pool address 3"));
    JANUS_TRY(Reg r4, b.reg("global pool address 4"));
    // the accumulator row starts at -128 (max) or 0 (sums); ordered before tile 0's use by L[0] (one DMA queue)
    JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
    JANUS_CHECK(li(r1, accum.address()));
    JANUS_CHECK(b.emit("dma.fill", {r1, is_max ? -128 : 0, is_max ? tile : 4 * tile}));
    if (acc1) {
        JANUS_CHECK(li(r1, acc1.address()));
        JANUS_CHECK(b.emit("dma.fill", {r1, 0, 4 * Cp}));
    }
    const bool any_post = !is_max || post;
    StreamedPartials sp;
    sp.op = is_max ? PartialOp::max : PartialOp::sum;
    sp.count = HW, sp.width = Cp, sp.tile = P;
    sp.region = x.region, sp.offset = static_cast<std::int64_t>(x.offset), sp.stride = Cp, sp.zp = plan.zp_in;
    JANUS_CHECK(stream_partials(b, sp, accum, in, loaded, freed, any_post ? nullptr : &done, r1, r2, r3, r4));
    std::uint32_t res = accum.address();
    if constexpr (is_max) {
        if (P == 1 && !post) {  // nothing followed the accumulation: signal with a copy of the row
            JANUS_CHECK(li(r1, result.address()));
            JANUS_CHECK(b.emit("vec.max", {r1, r3, r3, Cp}, Sync{nullptr, &done}));
            res = result.address();
        }
        if (post) {
            JANUS_CHECK(li(r1, acc1.address()));
            JANUS_CHECK(b.emit("vec.acc", {r1, r3, plan.zp_in, Cp}));
            JANUS_CHECK(li(r2, result.address()));
            JANUS_CHECK(li(r4, table.address()));
            JANUS_CHECK(b.emit("vec.rq", {r2, r1, r4, Cp, 1}, Sync{nullptr, &done}));
            res = result.address();
        }
    } else {
        JANUS_CHECK(emit_average(b, ep, Cp, accum.address(), result.address(), &done, r1, r2, r3, r4));
        res = result.address();
    }
    JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
    JANUS_CHECK(li(r1, res));
    JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset)));
    JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, Cp}, Sync{&done, nullptr}));
    txn.commit();
    return ok_status();
}

}  // namespace pool_detail

/// MaxPool (int8, per tensor) from ops::MaxPool::plan: any kernel, pads, strides, dilations, ceil_mode.
inline Status lower_max_pool(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y) {
    return pool_detail::lower_window<pool_detail::Kind::max>(b, plan, x, y, b.name() + ": max pool");
}

/// AveragePool (int8) from ops::AveragePool::plan, when every output position has the same count
/// (rule lower-pool-count otherwise).
inline Status lower_average_pool(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y) {
    return pool_detail::lower_window<pool_detail::Kind::average>(b, plan, x, y, b.name() + ": average pool");
}

/// GlobalMaxPool (int8) from ops::GlobalMaxPool::plan. max_tile: pixels per tile (0: from the free memory).
inline Status lower_global_max_pool(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y,
                             std::int64_t max_tile = 0) {
    return pool_detail::lower_global<pool_detail::Kind::max>(b, plan, x, y, b.name() + ": global max pool",
                                                                max_tile);
}

/// GlobalAveragePool (int8) from ops::GlobalAveragePool::plan. max_tile: pixels per tile (0: from the free memory).
inline Status lower_global_average_pool(Builder& b, const ops::PoolPlan& plan, const DramImage& x, const DramImage& y,
                                 std::int64_t max_tile = 0) {
    return pool_detail::lower_global<pool_detail::Kind::average>(b, plan, x, y, b.name() + ": global average pool",
                                                                    max_tile);
}

}  // namespace janus::emit
