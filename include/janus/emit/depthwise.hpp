#pragma once
// Lowering of a depthwise convolution (ops/conv.hpp's Conv with group == C, any strides and dilations) to VEC
// accumulation, from the op's own plan (ops::Conv::plan: window, pads, output extents and requantization are the
// plan's; the emitter derives none and checks that x and y are the plan's input and output):
//     ACC[p, c] = sum over taps (ky, kx) of (x[y sh + ky dh - pt, p + kx dw - pl, c] - zp_x) * w[c, ky, kx]   (vec.mac)
//     y[p, c]   = sat8(rq(ACC[p, c] + bias[c], M[c]) + zp_y)                                          (vec.rq)
//
// Layout: NHWC images in DRAM, one image, pixels `cpitch` bytes apart (a multiple of 16 >= C; the padding channels
// are computed and unspecified in the output) and rows w * cpitch bytes apart.
// Strategy, per output row (double buffered, as emit/stream.hpp):
//   - the kh input rows it reads (yo sh + ky dh - pt) sit in LMEM with pl / pr border pixels filled with zp_x
//     (dma.fill once per buffer set; rows above or below the image are filled with zp_x whole). With a horizontal
//     stride sw > 1 each buffered row is stored as sw PHASES (padded pixel p at phase p mod sw, index p / sw; the
//     loads place pixels sw apart, one per DMA row), so that the pixels a tap reads are contiguous again. Every tap
//     is then ONE vec.mac over the output row: x at (row ky, phase kx dw mod sw, index kx dw / sw), weights at tap
//     (ky, kx) replicated over the row's pixels (a constant, loaded once), n = Wo * cpitch;
//   - ACC is cleared by a dma.fill of 0 before the first tap; vec.rq requantizes with the per-channel table (bias
//     and multiplier per channel, loaded once); a dma.store writes the row.
// Events: the DMA work of a row (ACC clear, input rows) signals L[s], the first vec.mac waits on it; vec.rq signals
// V[s], the store waits on it (with a fused table `lut`, lut.apply maps the row in place between them: waits V[s],
// signals T[s], and the store waits T[s]); reuse two rows later is ordered through the DMA queue.
// Weight zero points: vec.mac subtracts x's only, so the replicated weights hold w - zw[c] in int8 parts
// (emit/weights.hpp), one vec.mac per tap and part; with every zero point 0 there is one part.
// Refused with a rule: lower-depthwise-layout (x or y not the plan's images, group != C, a plan that does not
// requantize, a pitch that is not a multiple of 16 or below C),
// lower-depthwise-budget (the row buffers, replicated weights and ACC rows do not fit: rows are not split yet).
#include <array>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/emit/weights.hpp>
#include <janus/ops/conv.hpp>

namespace janus::emit {

/// One NHWC int8 image in a DRAM region: h x w pixels of c channels, pixels `cpitch` bytes apart, rows dense.
struct DramImage {
    int region = 0;
    std::uint32_t offset = 0;
    std::int64_t h = 0, w = 0, c = 0, cpitch = 0;
};

/// `plan`: the Conv's own plan (ops::Conv::plan, group == C, requantized); x and y must be its input and output.
/// weights: ONNX order [C, 1, kh, kw]. bias: empty or C int32 values.
inline Status lower_depthwise(Builder& b, const ops::ConvPlan& plan, const DramImage& x,
                              std::span<const std::int8_t> weights, std::span<const std::int32_t> bias,
                              const DramImage& y, Clamp clamp = {},
                              const std::optional<expr::Table256>& lut = std::nullopt) {
    const std::string what = b.name() + ": depthwise";
    const auto refuse = [&](const char* rule, const std::string& why) { return make_error(what, "", rule, why); };
    const ops::ConvGeometry& geo = plan.geometry;
    const ops::ConvQuantPlan& qp = plan.quant;
    const Shape xs = geo.conv_input(), ys = geo.out_shape;
    if (xs.size() != 4 || plan.epilogue != ops::ConvEpilogue::requantize)
        return refuse("lower-depthwise-layout", "only requantized 2-D convolutions lower to the depthwise kernel");
    const ops::WindowParams& k = geo.conv.window;
    const std::int64_t kh = k.kernel[0], kw = k.kernel[1], sh = k.strides[0], sw = k.strides[1], dh = k.dilations[0],
                       dw = k.dilations[1];
    const std::int64_t C = x.c, Cp = x.cpitch, pt = k.pads_begin[0], pl = k.pads_begin[1], pr = k.pads_end[1];
    const std::int64_t Wp = x.w + pl + pr, Ho = ys[2], Wo = ys[3];
    // a buffered row holds the Wp padded pixels as sw phases (pixel p at phase p mod sw, index p / sw) of Wv pixels
    const std::int64_t Wv = (Wp + sw - 1) / sw;
    if (xs[0] != 1 || x.h != xs[2] || x.w != xs[3] || C != xs[1] || geo.conv.groups != C || ys[1] != C || C < 1 ||
        Cp % 16 != 0 || Cp < C || y.cpitch != Cp || y.c != C || y.h != Ho || y.w != Wo || Ho < 1 || Wo < 1 ||
        x.offset % 16 != 0 || y.offset % 16 != 0 || static_cast<std::int64_t>(weights.size()) != C * kh * kw ||
        (!bias.empty() && static_cast<std::int64_t>(bias.size()) != C) ||
        qp.multipliers.size() != static_cast<std::size_t>(C) || qp.zp_w.size() != static_cast<std::size_t>(C))
        return refuse("lower-depthwise-layout",
                      "x " + std::to_string(x.h) + "x" + std::to_string(x.w) + "x" + std::to_string(C) + " (pitch " +
                          std::to_string(Cp) + "), kernel " + std::to_string(kh) + "x" + std::to_string(kw) + ", y " +
                          std::to_string(y.h) + "x" + std::to_string(y.w) + "x" + std::to_string(y.c) + " (pitch " +
                          std::to_string(y.cpitch) + "): x and y must be the plan's input " + xs.str() +
                          " and output " + ys.str() + " (group = C) and pitches equal multiples of 16 >= C");
    const std::int64_t row = Wo * Cp, prow = sw * Wv * Cp, taps = kh * kw;
    // weight zero points: one vec.mac per tap and part of w - zw (emit/weights.hpp)
    const std::int64_t P =
        weight_parts(weights, [&](std::size_t i) { return qp.zp_w[i / static_cast<std::size_t>(taps)]; });
    const std::int64_t lmem = 2 * kh * prow + P * taps * row + 16 + 16 * Cp + 2 * row;
    if (2 * row * 4 > static_cast<std::int64_t>(vnpu::sim::acc_size) || lmem > b.largest_free(Mem::lmem))
        return refuse("lower-depthwise-budget",
                      "an output row of " + std::to_string(row) + " B needs " + std::to_string(2 * row * 4) +
                          " B of ACC (of 65536) and " + std::to_string(lmem) + " B of LMEM (" +
                          std::to_string(b.largest_free(Mem::lmem)) + " free); rows are not split yet");

    auto txn = b.transaction();
    auto scope = b.scope("depthwise");
    b.note(what + ": " + std::to_string(Ho) + " output rows of " + std::to_string(Wo) + " x " + std::to_string(Cp) +
           " B, " + std::to_string(taps) + " vec.mac per row, double buffered" +
           (sw > 1 ? "; input rows in " + std::to_string(sw) + " phases (stride " + std::to_string(sw) + ")" : ""));
    if (P > 1)
        b.note(what + ": weight zero points: w - zw in " + std::to_string(P) + " int8 parts, " + std::to_string(P) +
               " vec.mac per tap");
    // constants: the taps' weights (per part: row t P + part) replicated over a row's pixels, then the requantization
    // table
    std::vector<std::uint8_t> wrep(static_cast<std::size_t>(P * taps * row), 0);
    for (std::int64_t t = 0; t < taps; ++t)
        for (std::int64_t part = 0; part < P; ++part)
            for (std::int64_t p = 0; p < Wo; ++p)
                for (std::int64_t c = 0; c < C; ++c) {
                    const std::int32_t d =
                        weights[static_cast<std::size_t>(c * taps + t)] - qp.zp_w[static_cast<std::size_t>(c)];
                    wrep[static_cast<std::size_t>((t * P + part) * row + p * Cp + c)] =
                        static_cast<std::uint8_t>(weight_part(d, static_cast<int>(part)));
                }
    std::vector<std::uint8_t> table;
    append_rq_table(table, qp.rounding, qp.zp_y, clamp.lo, clamp.hi, Cp,
        [&](std::int64_t c) { return c < C && !bias.empty() ? bias[static_cast<std::size_t>(c)] : 0; },
        [&](std::int64_t c) { return qp.multipliers[static_cast<std::size_t>(c < C ? c : 0)]; });
    JANUS_TRY(Buffer wbuf, load_constant(b, Mem::lmem, wrep, "depthwise weights"));
    JANUS_TRY(Buffer tbuf, load_constant(b, Mem::lmem, table, "depthwise rq table"));
    std::array<Buffer, 2> in, out, acc;
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_TRY(Buffer i,
                  b.alloc(Mem::lmem, static_cast<std::uint32_t>(kh * prow), "depthwise rows " + std::to_string(s)));
        JANUS_TRY(Buffer o, b.alloc(Mem::lmem, static_cast<std::uint32_t>(row), "depthwise out " + std::to_string(s)));
        JANUS_TRY(Buffer a,
                  b.alloc(Mem::acc, static_cast<std::uint32_t>(4 * row), "depthwise ACC " + std::to_string(s)));
        in[s] = std::move(i), out[s] = std::move(o), acc[s] = std::move(a);
    }
    JANUS_TRY(Reg r1, b.reg("depthwise address 1"));
    JANUS_TRY(Reg r2, b.reg("depthwise address 2"));
    JANUS_TRY(Reg r3, b.reg("depthwise address 3"));
    std::array<Event, 2> loaded, done;
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_TRY(Event l, b.event("depthwise rows loaded " + std::to_string(s)));
        JANUS_TRY(Event v, b.event("depthwise row requantized " + std::to_string(s)));
        loaded[s] = std::move(l), done[s] = std::move(v);
    }
    JANUS_TRY(std::optional<EpilogueLut> epi, epilogue_lut(b, lut, "depthwise"));
    const auto li = [&](const Reg& r, std::int64_t v) { return b.emit("li", {r, v}); };
    const std::int64_t zp = static_cast<std::int8_t>(qp.zp_x);  // dma.fill writes the int8 zero point
    // border pixels of every buffered row, per phase: written once per set (loads only write the image's pixels)
    const auto phase_at = [&](std::int64_t ph, std::int64_t j) { return (ph * Wv + j) * Cp; };  // byte in a row
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_CHECK(b.emit("dma.cfg", {kh, 0, prow}));
        for (std::int64_t ph = 0; ph < sw; ++ph) {
            // phase index j is padded pixel j sw + ph: left border j < jl, right border j >= jr
            const std::int64_t jl = pl > ph ? (pl - ph + sw - 1) / sw : 0;
            const std::int64_t jr = (pl + x.w - ph + sw - 1) / sw;
            if (jl > 0) {
                JANUS_CHECK(li(r1, in[s].address() + phase_at(ph, 0)));
                JANUS_CHECK(b.emit("dma.fill", {r1, zp, jl * Cp}));
            }
            if (jr < Wv) {
                JANUS_CHECK(li(r1, in[s].address() + phase_at(ph, jr)));
                JANUS_CHECK(b.emit("dma.fill", {r1, zp, (Wv - jr) * Cp}));
            }
        }
    }
    // the DMA work of output row yo: clear its ACC set, bring its kh input rows; the last instruction signals
    const auto load_row = [&](std::int64_t yo) -> Status {
        const auto s = static_cast<std::size_t>(yo % 2);
        // buffered row ky holds image row yo sh + ky dh - pt; those inside the image are ky in [k0, k1)
        const auto image_row = [&](std::int64_t ky) { return yo * sh + ky * dh - pt; };
        std::int64_t k0 = 0, k1 = 0;
        while (k0 < kh && image_row(k0) < 0) ++k0;
        k1 = k0;
        while (k1 < kh && image_row(k1) < x.h) ++k1;
        JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(li(r1, acc[s].address()));
        JANUS_CHECK(b.emit("dma.fill", {r1, 0, 4 * row}));
        for (std::int64_t ky = 0; ky < kh; ++ky)  // rows outside the image: zero-point rows
            if (ky < k0 || ky >= k1) {
                JANUS_CHECK(li(r1, in[s].address() + ky * prow));
                const bool last = k1 <= k0 && ky == kh - 1;  // no load follows: the last fill signals
                JANUS_CHECK(b.emit("dma.fill", {r1, zp, prow}, Sync{nullptr, last ? &loaded[s] : nullptr}));
            }
        if (k1 > k0 && sw == 1) {  // one transfer: the rows, dh image rows apart
            JANUS_CHECK(b.emit("dma.cfg", {k1 - k0, dh * x.w * Cp, prow}));
            JANUS_CHECK(li(r1, in[s].address() + k0 * prow + pl * Cp));
            JANUS_CHECK(li(r2, static_cast<std::int64_t>(x.offset) + image_row(k0) * x.w * Cp));
            JANUS_CHECK(b.emit("dma.load", {r1, x.region, r2, x.w * Cp}, Sync{nullptr, &loaded[s]}));
        }
        struct Pixels {
            std::int64_t n, dst, src;
        };
        std::vector<Pixels> work;  // sw > 1: per row and phase, the image pixels sw apart, one per DMA row
        for (std::int64_t ky = k0; ky < k1 && sw > 1; ++ky)
            for (std::int64_t ph = 0; ph < sw; ++ph) {
                const std::int64_t ix0 = ((ph - pl) % sw + sw) % sw;  // the first image pixel of this phase
                if (ix0 < x.w)
                    work.push_back({(x.w - ix0 + sw - 1) / sw,
                                    in[s].address() + ky * prow + phase_at(ph, (ix0 + pl) / sw),
                                    static_cast<std::int64_t>(x.offset) + (image_row(ky) * x.w + ix0) * Cp});
            }
        for (std::size_t w = 0; w < work.size(); ++w) {
            JANUS_CHECK(b.emit("dma.cfg", {work[w].n, sw * Cp, Cp}));
            JANUS_CHECK(li(r1, work[w].dst));
            JANUS_CHECK(li(r2, work[w].src));
            JANUS_CHECK(
                b.emit("dma.load", {r1, x.region, r2, Cp}, Sync{nullptr, w + 1 == work.size() ? &loaded[s] : nullptr}));
        }
        return ok_status();
    };
    JANUS_CHECK(load_row(0));
    for (std::int64_t yo = 0; yo < Ho; ++yo) {
        const auto s = static_cast<std::size_t>(yo % 2);
        if (yo + 1 < Ho) JANUS_CHECK(load_row(yo + 1));
        JANUS_CHECK(li(r3, acc[s].address()));
        for (std::int64_t t = 0; t < taps; ++t) {
            const std::int64_t kx = (t % kw) * dw;  // padded pixel offset of the tap: phase kx mod sw
            JANUS_CHECK(li(r1, in[s].address() + (t / kw) * prow + phase_at(kx % sw, kx / sw)));
            for (std::int64_t part = 0; part < P; ++part) {
                JANUS_CHECK(li(r2, wbuf.address() + (t * P + part) * row));
                JANUS_CHECK(b.emit("vec.mac", {r3, r1, r2, qp.zp_x, row},
                                   Sync{t == 0 && part == 0 ? &loaded[s] : nullptr, nullptr}));
            }
        }
        JANUS_CHECK(li(r1, out[s].address()));
        JANUS_CHECK(li(r2, tbuf.address()));
        JANUS_CHECK(b.emit("vec.rq", {r1, r3, r2, Cp, Wo}, Sync{nullptr, &done[s]}));
        if (epi) JANUS_CHECK(b.emit("lut.apply", {r1, r1, epi->slot, row}, Sync{&done[s], &epi->applied[s]}));
        JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(li(r2, static_cast<std::int64_t>(y.offset) + yo * row));
        JANUS_CHECK(b.emit("dma.store", {y.region, r2, r1, row}, Sync{epi ? &epi->applied[s] : &done[s], nullptr}));
    }
    txn.commit();
    return ok_status();
}

}  // namespace janus::emit
