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
// Synchronization: every instruction is queued into the kernel's Scheduler (emit/schedule.hpp) with the bytes it
// reads and writes, and the events come from those accesses: the first vec.mac of a row waits for the last DMA work
// of its set (the ACC clear and the input rows), the store for vec.rq (or, with a fused table `lut`, for lut.apply,
// which maps the row in place after vec.rq); the reuse of a set two rows later is implied by the in-order DMA queue.
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
    Scheduler q(b, what);
    JANUS_TRY(Buffer wbuf, load_constant(b, q, Mem::lmem, wrep, "depthwise weights"));
    JANUS_TRY(Buffer tbuf, load_constant(b, q, Mem::lmem, table, "depthwise rq table"));
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
    std::optional<Buffer> lut_table;
    if (lut) {
        JANUS_CHECK(check_epilogue_table(b, *lut, "depthwise"));
        JANUS_TRY(lut_table, load_lut_table(b, q, *lut, "depthwise epilogue lut"));
    }
    const auto li = [&](const Reg& r, std::int64_t v) { return q.add("li", {r, v}); };
    const auto at = [](const Buffer& buf, std::int64_t offset, std::int64_t bytes) {
        return span_of(buf, offset, bytes);
    };
    const std::int64_t zp = static_cast<std::int8_t>(qp.zp_x);  // dma.fill writes the int8 zero point
    // border pixels of every buffered row, per phase: written once per set (loads only write the image's pixels)
    const auto phase_at = [&](std::int64_t ph, std::int64_t j) { return (ph * Wv + j) * Cp; };  // byte in a row
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_CHECK(q.add("dma.cfg", {kh, 0, prow}));
        for (std::int64_t ph = 0; ph < sw; ++ph) {
            // phase index j is padded pixel j sw + ph: left border j < jl, right border j >= jr
            const std::int64_t jl = pl > ph ? (pl - ph + sw - 1) / sw : 0;
            const std::int64_t jr = (pl + x.w - ph + sw - 1) / sw;
            if (jl > 0) {
                JANUS_CHECK(li(r1, in[s].address() + phase_at(ph, 0)));
                JANUS_CHECK(q.add("dma.fill", {r1, zp, jl * Cp},  // kh rows, prow apart
                                  {writes(at(in[s], phase_at(ph, 0), (kh - 1) * prow + jl * Cp))}));
            }
            if (jr < Wv) {
                JANUS_CHECK(li(r1, in[s].address() + phase_at(ph, jr)));
                JANUS_CHECK(q.add("dma.fill", {r1, zp, (Wv - jr) * Cp},
                                  {writes(at(in[s], phase_at(ph, jr), (kh - 1) * prow + (Wv - jr) * Cp))}));
            }
        }
    }
    // the DMA work of output row yo: clear its ACC set, bring its kh input rows
    const auto load_row = [&](std::int64_t yo) -> Status {
        const auto s = static_cast<std::size_t>(yo % 2);
        // buffered row ky holds image row yo sh + ky dh - pt; those inside the image are ky in [k0, k1)
        const auto image_row = [&](std::int64_t ky) { return yo * sh + ky * dh - pt; };
        std::int64_t k0 = 0, k1 = 0;
        while (k0 < kh && image_row(k0) < 0) ++k0;
        k1 = k0;
        while (k1 < kh && image_row(k1) < x.h) ++k1;
        JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(li(r1, acc[s].address()));
        JANUS_CHECK(q.add("dma.fill", {r1, 0, 4 * row}, {writes(at(acc[s], 0, 4 * row))}));
        for (std::int64_t ky = 0; ky < kh; ++ky)  // rows outside the image: zero-point rows
            if (ky < k0 || ky >= k1) {
                JANUS_CHECK(li(r1, in[s].address() + ky * prow));
                JANUS_CHECK(q.add("dma.fill", {r1, zp, prow}, {writes(at(in[s], ky * prow, prow))}));
            }
        if (k1 > k0 && sw == 1) {  // one transfer: the rows, dh image rows apart
            const std::int64_t src = static_cast<std::int64_t>(x.offset) + image_row(k0) * x.w * Cp;
            JANUS_CHECK(q.add("dma.cfg", {k1 - k0, dh * x.w * Cp, prow}));
            JANUS_CHECK(li(r1, in[s].address() + k0 * prow + pl * Cp));
            JANUS_CHECK(li(r2, src));
            JANUS_CHECK(q.add("dma.load", {r1, x.region, r2, x.w * Cp},
                              {reads(dram_span(x.region, src, ((k1 - k0 - 1) * dh + 1) * x.w * Cp)),
                               writes(at(in[s], k0 * prow, (k1 - k0) * prow))}));
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
        for (const Pixels& px : work) {  // n pixels sw apart in the image, one per DMA row, dense in LMEM
            JANUS_CHECK(q.add("dma.cfg", {px.n, sw * Cp, Cp}));
            JANUS_CHECK(li(r1, px.dst));
            JANUS_CHECK(li(r2, px.src));
            JANUS_CHECK(q.add("dma.load", {r1, x.region, r2, Cp},
                              {reads(dram_span(x.region, px.src, ((px.n - 1) * sw + 1) * Cp)),
                               writes(local_span(px.dst, px.n * Cp))}));
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
                JANUS_CHECK(q.add("vec.mac", {r3, r1, r2, qp.zp_x, row},
                                  {reads(at(in[s], 0, kh * prow)), reads(at(wbuf, (t * P + part) * row, row)),
                                   reads(at(acc[s], 0, 4 * row)), writes(at(acc[s], 0, 4 * row))}));
            }
        }
        JANUS_CHECK(li(r1, out[s].address()));
        JANUS_CHECK(li(r2, tbuf.address()));
        JANUS_CHECK(q.add("vec.rq", {r1, r3, r2, Cp, Wo},
                          {reads(at(acc[s], 0, 4 * row)), reads(span_of(tbuf)), writes(at(out[s], 0, row))}));
        if (lut_table)
            JANUS_CHECK(q.add("lut.apply", {r1, r1, lut_slot(*lut_table), row},
                              {reads(at(out[s], 0, row)), reads(span_of(*lut_table)), writes(at(out[s], 0, row))}));
        const std::int64_t dst = static_cast<std::int64_t>(y.offset) + yo * row;
        JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(li(r2, dst));
        JANUS_CHECK(q.add("dma.store", {y.region, r2, r1, row},
                          {reads(at(out[s], 0, row)), writes(dram_span(y.region, dst, row))}));
    }
    JANUS_CHECK(q.finish());
    txn.commit();
    return ok_status();
}

}  // namespace janus::emit
