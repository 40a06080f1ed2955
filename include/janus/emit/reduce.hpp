#pragma once
// Lowering of the quantized int8 reductions (ops/reduction.hpp: ReduceSum, ReduceMean, ReduceMax, ReduceMin) to
// the vnpu, from the op's own ReducePlan (Op::plan: axes, shapes, count, multipliers, zero points). The host's math
// is not restated: the plan's numbers go into vec.rq tables (append_rq_table).
//
// Layout (DramRows): a tensor of any rank in a DRAM region as rows of its innermost axis, `pitch` bytes apart (a
// multiple of 16 >= the innermost extent; rank 0 is one row of one element). Padding lanes of x hold anything;
// those of y are unspecified. An NHWC image [1, H, W, C] at channel pitch Cp is such a tensor.
//
// Two strategies, chosen by the reduced axes (unit axes are ignored):
//   outer  the innermost axis is kept (e.g. the spatial axes of NHWC). The outer axes must be [K1, R, K2] (kept,
//          reduced, kept; any of them may be absent): each of the K1 x chunks jobs reduces R "pixels" of w bytes
//          (w <= K2 x pitch, a multiple of the pitch; pixel r at stride K2 x pitch) element by element with
//          emit/pool.hpp's stream_partials: tiles of P pixels are combined into a P-pixel partial row (vec.acc into
//          ACC for sum / mean, vec.max / vec.min into LMEM for max / min), which is then halved log2(P) times.
//          The partial row starts at the combine's identity: 0, -128 (max) or 127 (min), which equals the host's
//          init and never wins against an element (min(127, v) = v), so the unused slots of the last tile and of
//          an odd halving change nothing. Epilogue, one vec.rq per job with channels = pitch:
//            sum / mean  sat8(rq(acc, M) + zp_out)                              (the plan's M; mean has 1/count)
//            max / min   vec.acc (zp 0) into a cleared ACC row, then sat8(rq(v + bias[c], M[c]) + zp_out) with
//                        bias[c] = -zp_in[c]: the host's sat(rq(acc - zp_in, M) + zp_out), per channel when the
//                        quantization axis is the innermost one
//   inner  the reduced axes are a suffix that holds the innermost axis (sum / mean only): each output reduces one
//          contiguous span of Kp = (rows per output) x pitch bytes. The MAC array multiplies A [outputs, Kp] by a
//          constant column block B [kc, 16] (1 where the byte is a real element, k mod pitch < C, 0 on padding
//          lanes; K is cut into chunks of kc, a multiple of the pitch, accumulated by mac.mma): every ACC lane of
//          output row q holds sum (x - zp_in), the array subtracting zp_in itself. vec.rq (16 channels) then gives
//          16 copies of each result:
//            output innermost extent 1 (keepdims = 1): the copies are the output row (lane 0 and its padding)
//            otherwise (keepdims = 0, the last kept axis becomes innermost, W > 1): the results must sit one byte
//               apart. A tile of output rows is loaded with output (row, w) at A row row x pitch_y + w (the rows
//               w >= W are never loaded, their results land in y's padding lanes); a second mac.mm with a 0/1
//               selection matrix S [256, 16] (S[16 l, l] = 1) moves lane 0 of each group of 16 result rows into 16
//               lanes, and an identity vec.rq (multiplier 2^30, shift 1: exact) brings them back to int8.
// Events follow the data: loaded / freed / done per job (outer, as the global pools); per tile LA (A loaded), M
// (sums in ACC), [V1 (int8 copies), M2 (compacted),] V (result in LMEM), each waited for exactly once; buffer sets
// are reused two tiles later, ordered through the in-order DMA queue (the store of tile i precedes the load of
// tile i + 2, whose waiters follow it).
// Refused with a rule (the host runs these):
//   lower-reduce-type       a float32 plan, or a zero point outside int8 (the vnpu computes int8 only)
//   lower-reduce-layout     shapes or pitches that do not chain with the plan, an empty tensor
//   lower-reduce-axes       reduced axes that are neither [K1, R, K2] outer blocks nor a suffix with the innermost
//   lower-reduce-per-axis   per-axis quantization along an outer axis (vec.rq's table is indexed by the lane within
//                           a row), or output zero points that vary by channel (the table header has one)
//   lower-reduce-inner-minmax  ReduceMax / ReduceMin over the innermost axis: VEC's vec.max / vec.min combine two
//                           vectors lane by lane (element i with element i), all addresses are 16-B aligned and
//                           DMA moves whole 16-B granules, so no VEC or DMA instruction can bring two elements of
//                           one granule (two channels of one pixel) into the same lane (the MAC array could, by
//                           0/1 permutation products and an identity vec.rq: not lowered)
//   lower-reduce-budget     one pixel chunk / one output row does not fit LMEM, ACC or the instruction fields
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/pool.hpp>
#include <janus/ops/reduction.hpp>

namespace janus::emit {

/// A tensor in a DRAM region as rows of its innermost axis: `shape` row-major, rows `pitch` bytes apart.
struct DramRows {
    int region = 0;
    std::uint32_t offset = 0;
    Shape shape;
    std::int64_t pitch = 0;
};

/// Tile limits, for tests and experiments (0: from the free memory).
struct ReduceTiles {
    std::int64_t max_tile = 0;   ///< outer: pixels per tile; inner: output rows per tile
    std::int64_t max_width = 0;  ///< outer: bytes of one pixel chunk (rounded down to a multiple of the pitch)
};

namespace reduce_detail {

enum class Kind { sum, max, min };

inline std::int64_t inner_extent(const Shape& s) { return s.size() == 0 ? 1 : s[s.size() - 1]; }
inline std::int64_t row_count(const Shape& s) {
    std::int64_t n = 1;
    for (int k = 0; k + 1 < s.size(); ++k) n *= s[k];
    return n;
}

/// Rules lower-reduce-type and lower-reduce-layout.
inline Status check_common(const ops::ReducePlan& p, const DramRows& x, const DramRows& y, const std::string& what) {
    if (p.multipliers.empty())
        return make_error(what, "", "lower-reduce-type", "a float32 reduction: the vnpu reduces int8 tensors");
    for (std::size_t k = 0; k < p.zp_in.size(); ++k)
        if (p.zp_in[k] < -128 || p.zp_in[k] > 127 || p.zp_out[k] < -128 || p.zp_out[k] > 127)
            return make_error(what, "", "lower-reduce-type",
                              "zero points " + std::to_string(p.zp_in[k]) + " -> " + std::to_string(p.zp_out[k]) +
                                  " are not int8 ones: the vnpu reduces int8 tensors");
    const auto refuse = [&](const std::string& why) {
        return make_error(what, "", "lower-reduce-layout",
                          "x " + x.shape.str() + " (pitch " + std::to_string(x.pitch) + "), y " + y.shape.str() +
                              " (pitch " + std::to_string(y.pitch) + "): " + why);
    };
    if (x.shape.size() != p.keep_shape.size()) return refuse("x's rank differs from the plan's");
    std::int64_t count = 1;
    for (int k = 0; k < x.shape.size(); ++k) {
        const bool red = std::find(p.axes.begin(), p.axes.end(), k) != p.axes.end();
        if (red) count *= x.shape[k];
        if (x.shape[k] < 1) return refuse("an axis of extent 0");
        if (red ? p.keep_shape[k] != 1 : p.keep_shape[k] != x.shape[k])
            return refuse("x's shape is not the plan's input (kept shape " + p.keep_shape.str() + ")");
    }
    if (count != p.count || !(y.shape == p.out_shape)) return refuse("the shapes do not chain through the plan");
    if (x.pitch % 16 != 0 || y.pitch % 16 != 0 || x.pitch < std::max<std::int64_t>(16, inner_extent(x.shape)) ||
        y.pitch < std::max<std::int64_t>(16, inner_extent(y.shape)) || x.offset % 16 != 0 || y.offset % 16 != 0)
        return refuse("pitches must be multiples of 16 >= the innermost extent, offsets multiples of 16");
    return ok_status();
}

/// The reduced axes as the outer blocks [K1, R, K2] (innermost axis kept); false when they are not of that form.
inline bool outer_blocks(const Shape& s, const Dims& axes, std::int64_t& k1, std::int64_t& r, std::int64_t& k2) {
    k1 = r = k2 = 1;
    int stage = 0;  // 0: in K1, 1: in R, 2: in K2
    for (int k = 0; k + 1 < s.size(); ++k) {
        if (s[k] == 1) continue;
        const bool red = std::find(axes.begin(), axes.end(), k) != axes.end();
        if (red && stage == 2) return false;
        if (red) stage = 1;
        if (!red && stage == 1) stage = 2;
        (stage == 0 ? k1 : stage == 1 ? r : k2) *= s[k];
    }
    if (r == 1) k2 *= std::exchange(k1, 1);  // nothing reduced: one job of single-pixel "reductions"
    return true;
}

/// Is every kept axis of extent > 1 in front of every reduced one (a reduced suffix, unit axes ignored)?
inline bool reduced_suffix(const Shape& s, const Dims& axes) {
    bool seen = false;
    for (int k = 0; k < s.size(); ++k) {
        const bool red = std::find(axes.begin(), axes.end(), k) != axes.end();
        if (red && s[k] > 1) seen = true;
        if (!red && s[k] > 1 && seen) return false;
    }
    return true;
}

inline std::string job_text(std::int64_t n, const char* one) { return std::to_string(n) + " " + one; }

/// The outer strategy (see the header).
template <Kind K>
Status lower_outer(Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y, const ReduceTiles& opt,
                   const std::string& what) {
    const int rank = x.shape.size();
    std::int64_t K1 = 1, Rr = 1, K2 = 1;
    if (!outer_blocks(x.shape, p.axes, K1, Rr, K2))
        return make_error(what, "", "lower-reduce-axes",
                          "reduced axes " + p.axes.str() + " of " + x.shape.str() +
                              " are two separate blocks of outer axes: one block (kept, reduced, kept) is lowered");
    const std::int64_t Cp = x.pitch, C = inner_extent(x.shape), Wd = K2 * Cp;
    if (y.pitch != Cp)
        return make_error(
            what, "", "lower-reduce-layout",
            "the innermost axis is kept: y's pitch " + std::to_string(y.pitch) + " must be x's " + std::to_string(Cp));
    // per-channel parameters: per tensor, or along the innermost axis (kernel coordinates: rank - 1)
    const bool per_channel = p.multipliers.size() > 1 || p.channel_axis >= 0;
    if (per_channel && p.channel_axis != rank - 1)
        return make_error(what, "", "lower-reduce-per-axis",
                          "quantized along axis " + std::to_string(p.channel_axis) +
                              ", not the innermost one: vec.rq's table is indexed by the lane within a row");
    for (const auto z : p.zp_out)
        if (z != p.zp_out[0])
            return make_error(what, "", "lower-reduce-per-axis",
                              "the output zero point varies by channel: vec.rq's table header holds one");
    const auto chan = [&](std::int64_t c) {
        return static_cast<std::size_t>(per_channel && c < C ? c : 0);  // padding lanes reuse channel 0's numbers
    };
    constexpr bool is_sum = K == Kind::sum;
    // budgets: per byte of chunk width, LMEM holds 2 tile sets (x P pixels), the max/min row (x P) and the output;
    // ACC the sums (x P) or the max/min post row
    const std::int64_t table = 16 + 16 * Cp;
    const std::int64_t lfree = static_cast<std::int64_t>(b.largest_free(Mem::lmem)) - table - 64;
    const std::int64_t afree = static_cast<std::int64_t>(b.largest_free(Mem::acc));
    std::int64_t w = std::min({Wd, lfree / (is_sum ? 3 : 4), afree / 4, std::int64_t{4096} * Cp, std::int64_t{262144}});
    if (opt.max_width > 0) w = std::min(w, opt.max_width);
    w = w / Cp * Cp;
    if (w < Cp || Cp > 16384)
        return make_error(what, "", "lower-reduce-budget",
                          "one row of " + std::to_string(Cp) + " B does not fit the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B) and ACC (" + std::to_string(afree) +
                              " B) with its tiles");
    if (w < Wd && Wd > 4194288)
        return make_error(what, "", "lower-reduce-budget",
                          "chunks of a " + std::to_string(Wd) + "-B pixel need a DMA row stride above 4194288 B");
    std::int64_t P = std::min(Rr, (lfree - w) / ((is_sum ? 2 : 3) * w));
    if (is_sum) P = std::min(P, afree / (4 * w));
    P = std::min<std::int64_t>({P, 4096, 262144 / w});
    if (opt.max_tile > 0)
        P = std::min(P, opt.max_tile);
    else
        P = std::min(P, std::max<std::int64_t>((Rr + 7) / 8, (2048 + w - 1) / w));  // >= 8 tiles or >= 2 KiB
    P = std::max<std::int64_t>(P, 1);
    const std::int64_t tiles = (Rr + P - 1) / P, chunks = (Wd + w - 1) / w, tile = P * w;
    int halvings = 0;
    for (std::int64_t q = P; q > 1; q = (q + 1) / 2) ++halvings;

    auto txn = b.transaction();
    auto scope = b.scope("reduce");
    b.note(what + ": outer axes as [" + std::to_string(K1) + ", " + std::to_string(Rr) + ", " + std::to_string(K2) +
           "] rows of " + std::to_string(Cp) + " B: " + job_text(K1 * chunks, "job(s)") + " of " + std::to_string(Rr) +
           " pixels of " + std::to_string(w) + " B in " + job_text(tiles, "tile(s)") + " of " + std::to_string(P) +
           " into a " +
           (is_sum           ? "vec.acc"
            : K == Kind::max ? "vec.max"
                             : "vec.min") +
           " row, halved " + std::to_string(halvings) + " times" +
           (tiles > 1 ? ", double buffered" : "; double buffering off: a single tile"));
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    std::vector<std::uint8_t> t;
    if constexpr (is_sum) {
        append_rq_table(t, p.rounding, p.zp_out[0], -128, 127, Cp, [](std::int64_t) { return 0; },
            [&](std::int64_t) { return p.multipliers[0]; });
    } else {
        append_rq_table(t, p.rounding, p.zp_out[0], -128, 127, Cp, [&](std::int64_t c) { return -p.zp_in[chan(c)]; },
            [&](std::int64_t c) { return p.multipliers[chan(c)]; });
    }
    JANUS_TRY(Buffer tab, load_constant(b, Mem::lmem, t, "reduce rq table"));
    Buffer accum, post, result;
    if constexpr (is_sum) {
        JANUS_TRY(accum, b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * tile), "reduce sums"));
    } else {
        JANUS_TRY(accum, b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile), "reduce partial row"));
        JANUS_TRY(post, b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * w), "reduce post ACC"));
    }
    JANUS_TRY(result, b.alloc(Mem::lmem, static_cast<std::uint32_t>(w), "reduce out"));
    std::array<Buffer, 2> in;
    std::array<Event, 2> loaded, freed;
    for (std::size_t s = 0; s < (tiles > 1 ? 2u : 1u); ++s) {
        const std::string n = std::to_string(s);
        JANUS_TRY(in[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile), "reduce tile " + n));
        JANUS_TRY(loaded[s], b.event("reduce tile loaded " + n));
        if (tiles > 2) {
            JANUS_TRY(freed[s], b.event("reduce tile read " + n));
        }
    }
    JANUS_TRY(Event done, b.event("reduce result"));
    JANUS_TRY(Reg r1, b.reg("reduce address 1"));
    JANUS_TRY(Reg r2, b.reg("reduce address 2"));
    JANUS_TRY(Reg r3, b.reg("reduce address 3"));
    JANUS_TRY(Reg r4, b.reg("reduce address 4"));
    const std::int64_t init = is_sum ? 0 : K == Kind::max ? -128 : 127;
    for (std::int64_t a = 0; a < K1; ++a)
        for (std::int64_t j0 = 0; j0 < Wd; j0 += w) {
            const std::int64_t cw = std::min(w, Wd - j0);
            // a job: the partial row (and the max / min post row) start cleared; the store of the previous job
            // precedes these fills on the DMA queue and waited for its last VEC instruction
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r1, accum.address()));
            JANUS_CHECK(b.emit("dma.fill", {r1, init, is_sum ? 4 * P * cw : P * cw}));
            if (post) {
                JANUS_CHECK(li(r1, post.address()));
                JANUS_CHECK(b.emit("dma.fill", {r1, 0, 4 * cw}));
            }
            StreamedPartials sp;
            sp.op = is_sum ? PartialOp::sum : K == Kind::max ? PartialOp::max : PartialOp::min;
            sp.count = Rr, sp.width = cw, sp.tile = P, sp.region = x.region, sp.stride = Wd;
            sp.offset = static_cast<std::int64_t>(x.offset) + a * Rr * Wd + j0;
            sp.zp = is_sum ? p.zp_in[0] : 0;
            JANUS_CHECK(stream_partials(b, sp, accum, in, loaded, freed, nullptr, r1, r2, r3, r4));
            // r3 = the result (pixel 0 of the partial row)
            JANUS_CHECK(li(r2, result.address()));
            JANUS_CHECK(li(r4, tab.address()));
            if (post) {
                JANUS_CHECK(li(r1, post.address()));
                JANUS_CHECK(b.emit("vec.acc", {r1, r3, 0, cw}));
                JANUS_CHECK(b.emit("vec.rq", {r2, r1, r4, Cp, cw / Cp}, Sync{nullptr, &done}));
            } else {
                JANUS_CHECK(b.emit("vec.rq", {r2, r3, r4, Cp, cw / Cp}, Sync{nullptr, &done}));
            }
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r1, static_cast<std::int64_t>(y.offset) + a * Wd + j0));
            JANUS_CHECK(b.emit("dma.store", {y.region, r1, r2, cw}, Sync{&done, nullptr}));
        }
    txn.commit();
    return ok_status();
}

/// The inner strategy (sum / mean; see the header).
inline Status lower_inner(Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y, const ReduceTiles& opt,
                   const std::string& what) {
    if (!reduced_suffix(x.shape, p.axes))
        return make_error(what, "", "lower-reduce-axes",
                          "reduced axes " + p.axes.str() + " of " + x.shape.str() +
                              " hold the innermost axis but are not a suffix: a kept axis lies between them");
    const std::int64_t Cx = x.pitch, C = inner_extent(x.shape), M = p.outputs;
    const std::int64_t Kp = row_count(x.shape) / M * Cx;  // bytes each output reduces (whole rows of x)
    const std::int64_t Wout = inner_extent(y.shape), Py = y.pitch;
    const bool lanes = Wout > 1;
    const std::int64_t rows_y = M / Wout;
    const auto refuse = [&](const std::string& why) { return make_error(what, "", "lower-reduce-budget", why); };
    // K chunks: a multiple of the pitch (the column block's lane pattern repeats), at most 16384 (mac.cfg)
    const std::int64_t bcap = std::min<std::int64_t>(65536, b.largest_free(Mem::lmem) / 4) / 16;
    std::int64_t kc = Kp <= std::min<std::int64_t>(16384, bcap) ? Kp : std::min<std::int64_t>(16384, bcap) / Cx * Cx;
    if (kc < 1) return refuse("a row of " + std::to_string(Cx) + " B exceeds a K chunk of the MAC array");
    // tiles: rows mode mt outputs (= MAC rows); lanes mode mr output rows of Py MAC rows each
    const std::int64_t unit = lanes ? Py : 1;  // MAC rows per tile step
    if (lanes && Py > 1024)
        return refuse("an output row of pitch " + std::to_string(Py) + " exceeds the 1024 rows of one mac.mm");
    const std::int64_t fixed = 16 * kc + (lanes ? 4096 + 272 : 0) + 272 + 64;
    const std::int64_t lfree = static_cast<std::int64_t>(b.largest_free(Mem::lmem)) - fixed;
    const std::int64_t per_row = 2 * (Kp + (lanes ? 16 + 1 : 16));  // A, int8 copies (lanes), out; two sets
    const std::int64_t acc_row = 2 * (64 + (lanes ? 4 : 0));
    std::int64_t mv = std::min<std::int64_t>({lfree / per_row, b.largest_free(Mem::acc) / acc_row, 1024});
    std::int64_t steps_total = lanes ? rows_y : M;
    std::int64_t mt = std::min(mv / unit, steps_total);  // outputs (rows mode) or output rows (lanes mode) per tile
    if (opt.max_tile > 0)
        mt = std::min(mt, opt.max_tile);
    else
        mt = std::min(mt, std::max<std::int64_t>((steps_total + 7) / 8, (4096 + unit * Kp - 1) / (unit * Kp)));
    mt = std::min<std::int64_t>(mt, 4096);
    if (mt < 1 || (lanes ? Wout * Kp : Kp) > 1048576)
        return refuse("one output " + std::string(lanes ? "row" : "") + " reducing " + std::to_string(Kp) +
                      " B does not fit the free LMEM (" + std::to_string(b.largest_free(Mem::lmem)) +
                      " B) with two buffer sets; K is not split across loads");
    mv = mt * unit;
    const std::int64_t tiles = (steps_total + mt - 1) / mt;

    auto txn = b.transaction();
    auto scope = b.scope("reduce");
    b.note(what + ": " + std::to_string(M) + " outputs of " + std::to_string(Kp) + " B on the MAC array (" +
           std::to_string((Kp + kc - 1) / kc) + " K chunk(s) of " + std::to_string(kc) + ") in " +
           job_text(tiles, "tile(s)") + " of " + std::to_string(mv) + " MAC rows" +
           (lanes ? ", compacted to " + std::to_string(Wout) + " results per row by a selection mac.mm" +
                        (Py > Wout ? " (" + std::to_string(Py - Wout) + " padding rows computed)" : std::string())
                  : std::string()) +
           (tiles > 1 ? ", double buffered" : "; double buffering off: a single tile"));
    // constants: the masked ones block, the selection matrix, the tables
    std::vector<std::uint8_t> ones(static_cast<std::size_t>(16 * kc), 0);
    for (std::int64_t k = 0; k < kc; ++k)
        if (k % Cx < C)
            for (std::int64_t j = 0; j < 16; ++j) ones[static_cast<std::size_t>(16 * k + j)] = 1;
    JANUS_TRY(Buffer bones, load_constant(b, Mem::lmem, ones, "reduce ones block"));
    std::vector<std::uint8_t> t;
    append_rq_table(t, p.rounding, p.zp_out[0], -128, 127, 16, [](std::int64_t) { return 0; }, [&](std::int64_t) { return p.multipliers[0]; });
    JANUS_TRY(Buffer tab, load_constant(b, Mem::lmem, t, "reduce rq table"));
    Buffer sel, ident;
    if (lanes) {
        std::vector<std::uint8_t> s(4096, 0);
        for (std::int64_t l = 0; l < 16; ++l) s[static_cast<std::size_t>(16 * l * 16 + l)] = 1;  // S[16 l, l] = 1
        JANUS_TRY(sel, load_constant(b, Mem::lmem, s, "reduce selection matrix"));
        std::vector<std::uint8_t> it;
        const numeric::QuantizedMultiplier one{1 << 30, 1};
        append_rq_table(it, p.rounding, 0, -128, 127, 16, [](std::int64_t) { return 0; }, [&](std::int64_t) { return one; });
        JANUS_TRY(ident, load_constant(b, Mem::lmem, it, "reduce identity table"));
    }
    std::array<Buffer, 2> abuf, copies, out, acc, acc2;
    std::array<Event, 2> la, mm, v1, m2, vv;
    for (std::size_t s = 0; s < 2 && s < static_cast<std::size_t>(tiles); ++s) {
        const std::string n = std::to_string(s);
        JANUS_TRY(abuf[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(mv * Kp), "reduce A " + n));
        JANUS_TRY(out[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(lanes ? mv : 16 * mv), "reduce out " + n));
        JANUS_TRY(acc[s], b.alloc(Mem::acc, static_cast<std::uint32_t>(64 * mv), "reduce sums " + n));
        JANUS_TRY(la[s], b.event("reduce A loaded " + n));
        JANUS_TRY(mm[s], b.event("reduce sums " + n));
        JANUS_TRY(vv[s], b.event("reduce result " + n));
        if (lanes) {
            JANUS_TRY(copies[s], b.alloc(Mem::lmem, static_cast<std::uint32_t>(16 * mv), "reduce copies " + n));
            JANUS_TRY(acc2[s], b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * mv), "reduce compacted " + n));
            JANUS_TRY(v1[s], b.event("reduce copies " + n));
            JANUS_TRY(m2[s], b.event("reduce compacted " + n));
        }
    }
    JANUS_TRY(Reg r1, b.reg("reduce address 1"));
    JANUS_TRY(Reg r2, b.reg("reduce address 2"));
    JANUS_TRY(Reg r3, b.reg("reduce address 3"));
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    const auto count = [&](std::int64_t i) { return std::min(mt, steps_total - i * mt); };
    const auto load = [&](std::int64_t i) -> Status {
        const auto s = static_cast<std::size_t>(i % 2);
        const std::int64_t n = count(i);
        JANUS_CHECK(li(r1, abuf[s].address()));
        if (lanes) {  // output row r's W input spans go to MAC rows r Py .. r Py + W - 1
            JANUS_CHECK(b.emit("dma.cfg", {n, Wout * Kp, Py * Kp}));
            JANUS_CHECK(li(r2, static_cast<std::int64_t>(x.offset) + i * mt * Wout * Kp));
            return b.emit("dma.load", {r1, x.region, r2, Wout * Kp}, Sync{nullptr, &la[s]});
        }
        JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(li(r2, static_cast<std::int64_t>(x.offset) + i * mt * Kp));
        return b.emit("dma.load", {r1, x.region, r2, n * Kp}, Sync{nullptr, &la[s]});
    };
    JANUS_CHECK(load(0));
    for (std::int64_t i = 0; i < tiles; ++i) {
        const auto s = static_cast<std::size_t>(i % 2);
        const std::int64_t n = count(i), rows = n * unit;
        if (i + 1 < tiles) JANUS_CHECK(load(i + 1));
        // MAC: the row sums, K chunk by chunk
        JANUS_CHECK(li(r3, acc[s].address()));
        JANUS_CHECK(li(r2, bones.address()));
        for (std::int64_t k0 = 0; k0 < Kp; k0 += kc) {
            const std::int64_t k = std::min(kc, Kp - k0);
            JANUS_CHECK(b.emit("mac.cfg", {rows, k, 16, Kp}));
            JANUS_CHECK(li(r1, abuf[s].address() + k0));
            const Sync sync{k0 == 0 ? &la[s] : nullptr, k0 + kc >= Kp ? &mm[s] : nullptr};
            JANUS_CHECK(b.emit(k0 == 0 ? "mac.mm" : "mac.mma", {r3, r1, r2, p.zp_in[0]}, sync));
        }
        // VEC: 16 copies of each result
        JANUS_CHECK(li(r1, (lanes ? copies[s] : out[s]).address()));
        JANUS_CHECK(li(r2, tab.address()));
        JANUS_CHECK(b.emit("vec.rq", {r1, r3, r2, 16, rows}, Sync{&mm[s], lanes ? &v1[s] : &vv[s]}));
        if (lanes) {  // lane 0 of each group of 16 MAC rows -> 16 lanes of one row; back to int8 exactly
            JANUS_CHECK(b.emit("mac.cfg", {rows / 16, 256, 16, 256}));
            JANUS_CHECK(li(r2, sel.address()));
            JANUS_CHECK(li(r3, acc2[s].address()));
            JANUS_CHECK(b.emit("mac.mm", {r3, r1, r2, 0}, Sync{&v1[s], &m2[s]}));
            JANUS_CHECK(li(r1, out[s].address()));
            JANUS_CHECK(li(r2, ident.address()));
            JANUS_CHECK(b.emit("vec.rq", {r1, r3, r2, 16, rows / 16}, Sync{&m2[s], &vv[s]}));
        }
        // DMA: the results into y
        JANUS_CHECK(li(r1, out[s].address()));
        if (lanes) {
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset) + i * mt * Py));
            JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, n * Py}, Sync{&vv[s], nullptr}));
        } else {
            JANUS_CHECK(b.emit("dma.cfg", {n, 16, Py}));
            JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset) + i * mt * Py));
            JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, 16}, Sync{&vv[s], nullptr}));
        }
    }
    txn.commit();
    return ok_status();
}

template <Kind K>
Status lower(Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y, const ReduceTiles& opt,
             const char* name) {
    const std::string what = b.name() + ": " + name;
    JANUS_CHECK(check_common(p, x, y, what));
    const int rank = x.shape.size();
    const bool inner = rank > 0 && std::find(p.axes.begin(), p.axes.end(), rank - 1) != p.axes.end();
    if (!inner) return lower_outer<K>(b, p, x, y, opt, what);
    if constexpr (K != Kind::sum) {
        return make_error(what, "", "lower-reduce-inner-minmax",
                          "a max / min over the innermost axis: vec.max and vec.min combine two vectors lane by lane "
                          "(element i with element i), every local address is 16-B aligned and DMA moves whole 16-B "
                          "granules, so no VEC or DMA instruction brings two elements of one granule into one lane");
    } else {
        return lower_inner(b, p, x, y, opt, what);
    }
}

}  // namespace reduce_detail

/// ReduceSum (int8, per tensor) from ops::ReduceSum::plan: outer axes ([K1, R, K2]) on VEC, or a reduced suffix
/// holding the innermost axis on the MAC array.
inline Status lower_reduce_sum(Builder& b, const ops::ReducePlan& plan, const DramRows& x, const DramRows& y,
                        const ReduceTiles& opt = {}) {
    return reduce_detail::lower<reduce_detail::Kind::sum>(b, plan, x, y, opt, "reduce sum");
}

/// ReduceMean (int8, per tensor) from ops::ReduceMean::plan (1 / count is in the plan's multiplier): as ReduceSum.
inline Status lower_reduce_mean(Builder& b, const ops::ReducePlan& plan, const DramRows& x, const DramRows& y,
                         const ReduceTiles& opt = {}) {
    return reduce_detail::lower<reduce_detail::Kind::sum>(b, plan, x, y, opt, "reduce mean");
}

/// ReduceMax (int8; per tensor, or per channel along the innermost axis) from ops::ReduceMax::plan: outer axes only
/// (rule lower-reduce-inner-minmax otherwise).
inline Status lower_reduce_max(Builder& b, const ops::ReducePlan& plan, const DramRows& x, const DramRows& y,
                        const ReduceTiles& opt = {}) {
    return reduce_detail::lower<reduce_detail::Kind::max>(b, plan, x, y, opt, "reduce max");
}

/// ReduceMin (int8; per tensor, or per channel along the innermost axis) from ops::ReduceMin::plan: outer axes only
/// (rule lower-reduce-inner-minmax otherwise).
inline Status lower_reduce_min(Builder& b, const ops::ReducePlan& plan, const DramRows& x, const DramRows& y,
                        const ReduceTiles& opt = {}) {
    return reduce_detail::lower<reduce_detail::Kind::min>(b, plan, x, y, opt, "reduce min");
}

}  // namespace janus::emit
