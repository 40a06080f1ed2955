#pragma once
// Lowering of a quantized 2-D convolution (ops/conv.hpp's Conv: any kernel, strides, dilations, pads and groups) to
// the MAC array, with the epilogue on VEC, from the op's own plan (ops::Conv::plan / ConvInteger::plan /
// ConvTranspose::plan: window, pads, groups, output extents and requantization are the plan's; the emitter derives
// none and checks that x and y are the plan's input and output):
//     ACC[p, oc] = sum over taps (ky, kx) and input channels c of (x[iy, ix, c] - zp_x) * w[oc, c, ky, kx]
//     y[p, oc]   = sat8(rq(ACC[p, oc] + bias[oc], M[oc]) + zp_y)
//
// Layout: NHWC images in DRAM (emit::DramImage: pixels `cpitch` bytes apart, a multiple of 16 >= C; rows dense).
// Strategy (docs/emit.md "Convolution"): an implicit im2col. No patch matrix is built; each tap is ONE mac.mm over
// many output pixels, reading the input where it lies in LMEM.
//   - A tile of R output rows needs a band of input rows in LMEM, zero-point padded: pl border pixels on the left,
//     the rest of a row of Wq = ceil(Wp / sw) sw pixels on the right (Wp = pl + W + pr), whole zero-point rows
//     above and below the image. The MAC subtracts zp_x, so padding adds 0, as on the host.
//   - Output pixel (r, xo) of the tile is MAC row p = r Wv + xo with Wv = Wq / sw: for tap (ky, kx) it reads the
//     input pixel at p sw + kx dw of band row r sh + ky dh. With a_stride = sw cpitch, this is one uniform stride
//     if sh == 1. For sh > 1 the band is stored as sh phase planes (plane ph holds the padded rows of residue ph
//     mod sh, in order), so that consecutive output rows read consecutive plane rows again. The Wv - Wo extra
//     pixels per row are computed and never stored; the last row stops at Wo, so no read leaves the band.
//   - B of every tap is packed at compile time: per N tile of nt output channels, taps x Cp x nt bytes with
//     B[t][c][n] = w[oc, c - g Cg, ky, kx] when input channel c belongs to output channel oc's group g, else 0.
//     Grouped convolutions are thus block diagonal: the groups' weights and per-channel multipliers stay together
//     with their output channels (seed B1), at the cost of MACs on zeros (logged). Padded input channels meet zero
//     rows of B, whatever x holds there.
//   - Per step (N tile j, M tile i; N-major; double buffered as emit/matmul.hpp; step s+1's DMA and MAC work is
//     dispatched before step s's VEC and store work, so that SEQ's stalls on full queues do not idle the MAC):
//         DMA  [B tile j+1 when the next step starts a new N tile], zero-point rows, the band
//         MAC  mac.cfg m, Cp, nt, sw Cp; mac.mm for tap 0, mac.mma for the others
//         VEC  vec.rq over m rows of nt channels with tile j's table
//        [LUT  lut.apply over the m x nt output tile (ConvOptions::lut)]
//         DMA  one store of Wo pixels per output row, into y's pitch
//     Every instruction is queued into the kernel's Scheduler (emit/schedule.hpp) with the bytes it reads and writes
//     (band, B, ACC and output sets, tables, DRAM rows), and the waits come from them: the first mac.mm of a step
//     waits for its last DMA transfer, vec.rq for the last mac.mma, the stores for vec.rq (or lut.apply); the reuse
//     of a band, ACC or output set two steps later is implied by the in-order DMA queue.
//   - The tile shape (nt, R) minimizes the timing model's estimate over every nt that fits, each with the tallest
//     R that fits LMEM, ACC (2 sets of m x nt int32) and mac.cfg's m <= 1024. The debug log records it.
// int32 accumulator output (a plan whose epilogue is int32_sums, ConvInteger's): no bias, no requantization. The
// VEC step and the rq tables are dropped; each output row's ACC lanes are DMA-stored straight from ACC to y as
// little-endian int32 (y's pixels `cpitch` >= 4 C bytes apart), the store waiting for the last mac.mma. The ACC set
// is reused two steps later, ordered through the DMA queue as above (the store of step s precedes the band load of
// step s + 2).
// Weight zero points: the MAC array subtracts x's only, so B holds w - zw[oc] in int8 parts (emit/weights.hpp), one
// mac.mma per tap and part; with every zero point 0 there is one part and B is w.
// Refused with a rule (the host runs these): lower-conv-layout (x or y not the plan's images, a float plan, pitches
// not multiples of 16 or below C, an int32 output below 4 C bytes per pixel or with a bias, clamp or lut),
// lower-conv-budget (one output row with a 16-channel tile does not fit LMEM / ACC, or a row is wider than mac.cfg's
// 1024 rows: rows are not split yet).
//
// ConvTranspose (lower_conv_transpose) is the host's own two steps (ops::ConvTranspose): the zero-stuffed, padded
// input in a DRAM scratch image (a zero-point row stored over every scratch row, then each input row loaded and
// stored back with a pixel stride of s_w, at row stuff_begin + iy s_h; positions outside the scratch are cropped),
// then lower_conv on it with ConvTranspose::conv_weights (flipped, transposed) and the same plan, whose geometry is
// the equivalent stride-1 convolution of the stuffed input. All of it is on the in-order DMA queue ahead of the
// convolution's loads, so it needs no event. The cost is the scratch traffic and s_h s_w times the MACs of a direct
// scatter (logged).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/weights.hpp>
#include <janus/ops/conv.hpp>

namespace janus::emit {

struct ConvOptions {
    std::int64_t max_n_tile = 0;  ///< 0: as wide as LMEM allows
    std::int64_t max_rows = 0;    ///< output rows per M tile; 0: as many as LMEM, ACC and mac.cfg allow
    Clamp clamp;                  ///< a fused activation clamp in the requantization (default: none)
    /// A fused elementwise op after the requantization (Conv + Sigmoid, HardSwish, ...): its int8 -> int8 table is
    /// applied by lut.apply to each output tile in LMEM before the stores.
    std::optional<expr::Table256> lut = std::nullopt;
};

/// `plan`: the op's own plan (ops::Conv::plan; ops::ConvInteger::plan for the int32 sums; ops::ConvTranspose::plan,
/// whose x is then the stuffed input, as lower_conv_transpose passes it); x and y must be its input and output.
/// weights: ONNX order [Co, C / groups, kh, kw]; bias: empty or Co int32 values (accumulator units).
inline Status lower_conv(Builder& b, const ops::ConvPlan& plan, const DramImage& x,
                         std::span<const std::int8_t> weights, std::span<const std::int32_t> bias, const DramImage& y,
                         const ConvOptions& opt = {}) {
    const std::string what = b.name() + ": conv";
    const auto refuse = [&](const char* rule, const std::string& why) { return make_error(what, "", rule, why); };
    const ops::ConvGeometry& geo = plan.geometry;
    const ops::ConvQuantPlan& qp = plan.quant;
    const Shape xs = geo.conv_input(), ys = geo.out_shape;
    if (xs.size() != 4 || plan.epilogue == ops::ConvEpilogue::float_sums)
        return refuse("lower-conv-layout", "only quantized 2-D convolutions lower");
    const ops::WindowParams& k = geo.conv.window;
    const std::int64_t kh = k.kernel[0], kw = k.kernel[1], sh = k.strides[0], sw = k.strides[1], dh = k.dilations[0],
                       dw = k.dilations[1];
    const std::int64_t C = x.c, Cp = x.cpitch, Co = y.c, G = geo.conv.groups, taps = kh * kw;
    const std::int64_t pt = k.pads_begin[0], pl = k.pads_begin[1], pb = k.pads_end[0], pr = k.pads_end[1];
    const std::int64_t Wp = pl + x.w + pr, Hp = pt + x.h + pb, Ho = ys[2], Wo = ys[3];
    const bool i32 = plan.epilogue == ops::ConvEpilogue::int32_sums;
    const std::int64_t esize = i32 ? 4 : 1;  // bytes per output element
    if (xs[0] != 1 || x.h != xs[2] || x.w != xs[3] || C != xs[1] || Co != ys[1] || Cp % 16 != 0 || Cp < C ||
        y.cpitch % 16 != 0 || y.cpitch < esize * Co || y.h != Ho || y.w != Wo || Ho < 1 || Wo < 1 ||
        x.offset % 16 != 0 || y.offset % 16 != 0 || static_cast<std::int64_t>(weights.size()) != Co * (C / G) * taps ||
        (!bias.empty() && static_cast<std::int64_t>(bias.size()) != Co) ||
        (!i32 && qp.multipliers.size() != static_cast<std::size_t>(Co)) ||
        qp.zp_w.size() != static_cast<std::size_t>(Co))
        return refuse("lower-conv-layout",
                      "x " + std::to_string(x.h) + "x" + std::to_string(x.w) + "x" + std::to_string(C) + " (pitch " +
                          std::to_string(Cp) + "), kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
                          ", groups " + std::to_string(G) + ", y " + std::to_string(y.h) + "x" + std::to_string(y.w) +
                          "x" + std::to_string(Co) + " (pitch " + std::to_string(y.cpitch) +
                          "): x and y must be the plan's input " + xs.str() + " and output " + ys.str() +
                          ", pitches multiples of 16 >= the channels (y: >= 4 x the channels for an int32 output)");
    if (i32 && (!bias.empty() || opt.lut || !(opt.clamp == Clamp{})))
        return refuse(
            "lower-conv-layout",
            "an int32 accumulator output takes no bias, clamp or lut (it is stored as the MAC array sums it)");
    const std::int64_t Cg = C / G, Cog = Co / G, Np = round16(Co);
    // weight zero points: each tap's product is taken once per part of w - zw (emit/weights.hpp)
    const std::int64_t P =
        weight_parts(weights, [&](std::size_t i) { return qp.zp_w[i / static_cast<std::size_t>(Cg * taps)]; });
    const std::int64_t Wv = (Wp + sw - 1) / sw, Wq = Wv * sw, prow = Wq * Cp;
    // Plane rows for R output rows: plane ph holds R + max(ky dh / sh) rows over the taps of residue ph.
    const auto plane_rows = [&](std::int64_t rows) {
        std::vector<std::int64_t> q(static_cast<std::size_t>(sh), 0);
        for (std::int64_t ky = 0; ky < kh; ++ky) {
            auto& v = q[static_cast<std::size_t>(ky * dh % sh)];
            v = std::max(v, rows + ky * dh / sh);
        }
        return q;
    };
    const auto band_bytes = [&](std::int64_t rows) {
        std::int64_t n = 0;
        for (const auto q : plane_rows(rows)) n += q;
        return n * prow;
    };
    const auto m_of = [&](std::int64_t rows) { return (rows - 1) * Wv + Wo; };

    auto txn = b.transaction();
    auto scope = b.scope("conv");
    const std::int64_t free = b.largest_free(Mem::lmem);
    const std::int64_t n_cap = opt.max_n_tile > 0 ? std::min(Np, round16(opt.max_n_tile)) : Np;
    // int32 output: no rq tables and no LMEM output sets (the stores read ACC)
    const auto tables_bytes = [&](std::int64_t t) { return i32 ? 0 : 16 * ((Np + t - 1) / t) * (1 + t); };
    const auto fits = [&](std::int64_t t, std::int64_t rows) {
        const std::int64_t m = m_of(rows), bsets = t < Np ? 2 : 1;
        return m <= 1024 && 2 * m * t * 4 <= static_cast<std::int64_t>(vnpu::sim::acc_size) &&
               bsets * P * taps * Cp * t + 2 * band_bytes(rows) + (i32 ? 0 : 2 * m * t) + tables_bytes(t) <= free;
    };
    // The tile shape: for every N tile width, the tallest M tile that fits, scored by the timing model (docs/vnpu.md):
    // the busiest unit's cycles plus one step's exposed load and store.
    std::int64_t nt = 0, rows_per_tile = 0;
    double best = 0;
    for (std::int64_t t = n_cap; t >= 16; t -= 16) {
        std::int64_t r = opt.max_rows > 0 ? std::min(opt.max_rows, Ho) : Ho;
        while (r > 1 && !fits(t, r)) --r;
        if (!fits(t, r)) continue;
        const double nts = static_cast<double>((Np + t - 1) / t), mts = static_cast<double>((Ho + r - 1) / r);
        const double md = static_cast<double>(m_of(r)), kb = static_cast<double>(Cp / 16),
                     tb = static_cast<double>(t / 16), rd = static_cast<double>(r);
        const double mac = nts * mts * static_cast<double>(P * taps) * (kb * tb * (16 + md) + 8);
        const double load = static_cast<double>(sh) * 64 +
                            static_cast<double>(band_bytes(r) / prow) * (2 + static_cast<double>(x.w * Cp) / 16);
        const double store = rd * (64 + static_cast<double>(Wo) * (2 + static_cast<double>(esize) * tb));
        const double dma =
            nts * (66 + static_cast<double>(P * taps) * kb * static_cast<double>(t)) + nts * mts * (load + store);
        const double vec = i32 ? 0 : nts * mts * (4 + md * tb);
        const double score = std::max({mac, dma, vec}) + load + store;
        if (nt == 0 || score < best) nt = t, rows_per_tile = r, best = score;
    }
    if (nt == 0)
        return refuse("lower-conv-budget",
                      "one output row (" + std::to_string(m_of(1)) + " MAC rows of " + std::to_string(Cp) +
                          " B, band " + std::to_string(band_bytes(1)) + " B) with a 16-channel tile of " +
                          std::to_string(taps) + " taps does not fit the " + std::to_string(free) +
                          " B of free LMEM, the ACC or mac.cfg's 1024 rows (rows are not split yet)");
    const std::int64_t ntiles = (Np + nt - 1) / nt, mtiles = (Ho + rows_per_tile - 1) / rows_per_tile;
    b.note(what + ": " + std::to_string(Ho) + "x" + std::to_string(Wo) + "x" + std::to_string(Co) + " from " +
           std::to_string(x.h) + "x" + std::to_string(x.w) + "x" + std::to_string(C) + ", " + std::to_string(taps) +
           " taps as " + std::to_string(mtiles) + " M tile(s) of " + std::to_string(rows_per_tile) + " rows (" +
           std::to_string(m_of(rows_per_tile)) + " MAC rows, " + std::to_string(Wv - Wo) +
           " computed and dropped per row) x " + std::to_string(ntiles) + " N tile(s) of " + std::to_string(nt) +
           "; modelled " + std::to_string(static_cast<std::int64_t>(best)) + " cycles" +
           (i32 ? "; int32 accumulator output, stored from ACC" : ""));
    if (G > 1)
        b.note(what + ": " + std::to_string(G) + " groups as a block-diagonal B: " + std::to_string(G - 1) + " of " +
               std::to_string(G) + " MACs multiply zeros");
    if (sh > 1)
        b.note(what + ": stride " + std::to_string(sh) + " over rows: the band is stored as " + std::to_string(sh) +
               " phase planes");
    if (P > 1)
        b.note(what + ": weight zero points: w - zw in " + std::to_string(P) + " int8 parts, " + std::to_string(P) +
               " MACs per tap");

    // ---- constants: per N tile, every tap's Cp x nt block of B (per part: block t P + p); then the requantization
    // tables
    std::vector<std::uint32_t> b_at, t_at;
    const std::int64_t btile = P * taps * Cp * nt;
    for (std::int64_t j = 0; j < ntiles; ++j) {
        std::vector<std::uint8_t> tile(static_cast<std::size_t>(btile), 0);
        for (std::int64_t n = 0; n < nt && j * nt + n < Co; ++n) {
            const std::int64_t oc = j * nt + n, g = oc / Cog;
            for (std::int64_t ci = 0; ci < Cg; ++ci)
                for (std::int64_t t = 0; t < taps; ++t)
                    for (std::int64_t p = 0; p < P; ++p) {
                        const std::int32_t d = weights[static_cast<std::size_t>((oc * Cg + ci) * taps + t)] -
                                               qp.zp_w[static_cast<std::size_t>(oc)];
                        tile[static_cast<std::size_t>(((t * P + p) * Cp + g * Cg + ci) * nt + n)] =
                            static_cast<std::uint8_t>(weight_part(d, static_cast<int>(p)));
                    }
        }
        b_at.push_back(b.constant(tile));
    }
    Scheduler q(b, what);
    Buffer tab;
    if (!i32) {
        std::vector<std::uint8_t> tables;
        t_at = append_tile_tables(tables, qp.rounding, qp.zp_y, Co, nt, bias, qp.multipliers, opt.clamp);
        JANUS_TRY(tab, load_constant(b, q, Mem::lmem, tables, "conv rq tables"));
    }

    // ---- buffers, registers
    const std::int64_t mt = m_of(rows_per_tile), bsets = ntiles > 1 ? 2 : 1;
    std::vector<Buffer> bset, band, out, acc;
    for (std::int64_t s = 0; s < bsets; ++s) {
        JANUS_TRY(Buffer buf, b.alloc(Mem::lmem, static_cast<std::uint32_t>(btile), "conv B set " + std::to_string(s)));
        bset.push_back(std::move(buf));
    }
    for (int s = 0; s < 2; ++s) {
        JANUS_TRY(Buffer i, b.alloc(Mem::lmem, static_cast<std::uint32_t>(band_bytes(rows_per_tile)),
                                    "conv band " + std::to_string(s)));
        if (!i32) {
            JANUS_TRY(Buffer o,
                      b.alloc(Mem::lmem, static_cast<std::uint32_t>(mt * nt), "conv out " + std::to_string(s)));
            out.push_back(std::move(o));
        }
        JANUS_TRY(Buffer a,
                  b.alloc(Mem::acc, static_cast<std::uint32_t>(mt * nt * 4), "conv ACC " + std::to_string(s)));
        band.push_back(std::move(i)), acc.push_back(std::move(a));
    }
    JANUS_TRY(Reg r1, b.reg("conv address 1"));
    JANUS_TRY(Reg r2, b.reg("conv address 2"));
    JANUS_TRY(Reg r3, b.reg("conv address 3"));
    std::optional<Buffer> lut_table;
    if (opt.lut) {
        JANUS_CHECK(check_epilogue_table(b, *opt.lut, "conv"));
        JANUS_TRY(lut_table, load_lut_table(b, q, *opt.lut, "conv epilogue lut"));
    }
    const auto li = [&](const Reg& r, std::int64_t v) { return q.add("li", {r, v}); };
    // a store of Wo rows (dma.cfg Wo, src stride, y.cpitch) of `width` bytes at y + dst
    const auto y_rows = [&](std::int64_t dst, std::int64_t width) {
        return dram_span(y.region, dst, (Wo - 1) * y.cpitch + width);
    };
    const std::int64_t zp = static_cast<std::int8_t>(qp.zp_x);  // dma.fill writes the int8 zero point
    const std::vector<std::int64_t> planes = plane_rows(rows_per_tile);
    std::vector<std::int64_t> plane_at(planes.size(), 0);  // a plane's first row, in band rows
    for (std::size_t ph = 1; ph < planes.size(); ++ph) plane_at[ph] = plane_at[ph - 1] + planes[ph - 1];
    const std::int64_t band_rows = band_bytes(rows_per_tile) / prow;

    // border pixels of every band row, once per set: loads write only the image's pixels
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_CHECK(q.add("dma.cfg", {band_rows, 0, prow}));
        if (pl > 0) {
            JANUS_CHECK(li(r1, band[s].address()));
            JANUS_CHECK(q.add("dma.fill", {r1, zp, pl * Cp},  // band_rows rows, prow apart
                              {writes(span_of(band[s], 0, (band_rows - 1) * prow + pl * Cp))}));
        }
        if (Wq > pl + x.w) {
            const std::int64_t from = (pl + x.w) * Cp, n = (Wq - pl - x.w) * Cp;
            JANUS_CHECK(li(r1, band[s].address() + from));
            JANUS_CHECK(q.add("dma.fill", {r1, zp, n}, {writes(span_of(band[s], from, (band_rows - 1) * prow + n))}));
        }
    }
    // the DMA work of a step: B for a new N tile, zero-point rows and the image rows of every plane
    const std::int64_t steps = ntiles * mtiles;
    const auto rows_of = [&](std::int64_t i) { return std::min(rows_per_tile, Ho - i * rows_per_tile); };
    const auto load_step = [&](std::int64_t step) -> Status {
        const std::int64_t j = step / mtiles, i = step % mtiles, y0 = i * rows_per_tile;
        const auto s = static_cast<std::size_t>(step % 2);
        struct Transfer {
            bool fill;
            std::int64_t dst, src, rows;
        };
        std::vector<Transfer> work;
        for (std::size_t ph = 0; ph < planes.size(); ++ph) {
            // plane row q holds padded row (y0 + q) sh + ph; image rows are [pt, pt + H)
            std::int64_t q0 = -1, q1 = -1;
            for (std::int64_t q = 0; q < planes[ph]; ++q) {
                const std::int64_t py = (y0 + q) * sh + static_cast<std::int64_t>(ph);
                const std::int64_t dst = band[s].address() + (plane_at[ph] + q) * prow;
                if (py < pt || py >= pt + x.h) {
                    if (py < Hp) work.push_back({true, dst, 0, 1});  // rows past the padded image are never read
                } else {
                    if (q0 < 0) q0 = q;
                    q1 = q + 1;
                }
            }
            if (q0 >= 0)
                work.push_back({false, band[s].address() + (plane_at[ph] + q0) * prow + pl * Cp,
                                static_cast<std::int64_t>(x.offset) +
                                    ((y0 + q0) * sh + static_cast<std::int64_t>(ph) - pt) * x.w * Cp,
                                q1 - q0});
        }
        if (i == 0) {  // a new N tile: its packed B, one contiguous transfer
            const Buffer& to = bset[static_cast<std::size_t>(j % bsets)];
            const std::int64_t from = b_at[static_cast<std::size_t>(j)];
            JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r1, to.address()));
            JANUS_CHECK(li(r2, from));
            JANUS_CHECK(q.add("dma.load", {r1, 0, r2, btile}, {reads(dram_span(0, from, btile)), writes(span_of(to))}));
        }
        for (const Transfer& t : work) {
            JANUS_CHECK(li(r1, t.dst));
            if (t.fill) {
                JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
                JANUS_CHECK(q.add("dma.fill", {r1, zp, prow}, {writes(local_span(t.dst, prow))}));
            } else {  // t.rows image rows, sh apart, into band rows prow apart
                JANUS_CHECK(q.add("dma.cfg", {t.rows, sh * x.w * Cp, prow}));
                JANUS_CHECK(li(r2, t.src));
                JANUS_CHECK(q.add("dma.load", {r1, x.region, r2, x.w * Cp},
                                  {reads(dram_span(x.region, t.src, ((t.rows - 1) * sh + 1) * x.w * Cp)),
                                   writes(local_span(t.dst, (t.rows - 1) * prow + x.w * Cp))}));
            }
        }
        return ok_status();
    };
    // MAC work of a step: every tap (and part) into ACC set s
    const auto mac_step = [&](std::int64_t step) -> Status {
        const std::int64_t j = step / mtiles, m = m_of(rows_of(step % mtiles));
        const auto s = static_cast<std::size_t>(step % 2);
        JANUS_CHECK(q.add("mac.cfg", {m, Cp, nt, sw * Cp}));
        JANUS_CHECK(li(r3, acc[s].address()));
        for (std::int64_t t = 0; t < taps; ++t) {
            const std::int64_t ky = t / kw, kx = t % kw, ph = ky * dh % sh;
            JANUS_CHECK(li(r1, band[s].address() + (plane_at[static_cast<std::size_t>(ph)] + ky * dh / sh) * prow +
                                   kx * dw * Cp));
            for (std::int64_t p = 0; p < P; ++p) {
                const bool first = t == 0 && p == 0;
                const Buffer& bt = bset[static_cast<std::size_t>(j % bsets)];
                JANUS_CHECK(li(r2, bt.address() + (t * P + p) * Cp * nt));
                JANUS_CHECK(q.add(first ? "mac.mm" : "mac.mma", {r3, r1, r2, qp.zp_x},
                                  {reads(span_of(band[s])), reads(span_of(bt, (t * P + p) * Cp * nt, Cp * nt)),
                                   reads(span_of(acc[s])), writes(span_of(acc[s]))}));
            }
        }
        return ok_status();
    };
    // VEC and DMA work of a step: requantize, then one store per output row
    const auto out_step = [&](std::int64_t step) -> Status {
        const std::int64_t j = step / mtiles, i = step % mtiles, rows = rows_of(i), m = m_of(rows);
        const auto s = static_cast<std::size_t>(step % 2);
        if (i32) {  // the int32 sums themselves: one store per output row straight from ACC (4 B per channel)
            const std::int64_t width = std::min(4 * nt, round16(4 * Co) - 4 * j * nt);
            JANUS_CHECK(q.add("dma.cfg", {Wo, 4 * nt, y.cpitch}));
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t dst =
                    static_cast<std::int64_t>(y.offset) + (i * rows_per_tile + r) * Wo * y.cpitch + j * nt * 4;
                JANUS_CHECK(li(r1, acc[s].address() + r * Wv * nt * 4));
                JANUS_CHECK(li(r2, dst));
                JANUS_CHECK(q.add("dma.store", {y.region, r2, r1, width},
                                  {reads(span_of(acc[s])), writes(y_rows(dst, width))}));
            }
            return ok_status();
        }
        JANUS_CHECK(li(r1, out[s].address()));
        JANUS_CHECK(li(r2, tab.address() + t_at[static_cast<std::size_t>(j)]));
        JANUS_CHECK(li(r3, acc[s].address()));
        JANUS_CHECK(q.add("vec.rq", {r1, r3, r2, nt, m},
                          {reads(span_of(acc[s])), reads(span_of(tab)), writes(span_of(out[s]))}));
        if (lut_table)
            JANUS_CHECK(q.add("lut.apply", {r1, r1, lut_slot(*lut_table), m * nt},
                              {reads(span_of(out[s])), reads(span_of(*lut_table)), writes(span_of(out[s]))}));
        const std::int64_t width = std::min(nt, Np - j * nt);
        JANUS_CHECK(q.add("dma.cfg", {Wo, nt, y.cpitch}));
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t dst =
                static_cast<std::int64_t>(y.offset) + (i * rows_per_tile + r) * Wo * y.cpitch + j * nt;
            JANUS_CHECK(li(r1, out[s].address() + r * Wv * nt));
            JANUS_CHECK(li(r2, dst));
            JANUS_CHECK(q.add("dma.store", {y.region, r2, r1, width},
                              {reads(span_of(out[s])), writes(y_rows(dst, width))}));
        }
        return ok_status();
    };
    // Software pipelined: step s+1's loads and MACs are dispatched before step s's requantization and stores, so
    // SEQ, stalled on a full VEC or DMA queue (depth 8) by step s, does not hold back the MAC array.
    JANUS_CHECK(load_step(0));
    JANUS_CHECK(mac_step(0));
    for (std::int64_t step = 0; step < steps; ++step) {
        if (step + 1 < steps) {
            JANUS_CHECK(load_step(step + 1));
            JANUS_CHECK(mac_step(step + 1));
        }
        JANUS_CHECK(out_step(step));
    }
    JANUS_CHECK(q.finish());
    txn.commit();
    return ok_status();
}

/// ConvTranspose's scratch image: the plan's stuffed input (T_h x T_w pixels of C channels, pitch round16(C)).
inline Result<DramImage> conv_transpose_scratch(const ops::ConvPlan& plan, int region, std::uint32_t offset) {
    const ops::ConvGeometry& geo = plan.geometry;
    if (geo.stuffed.size() != 2)
        return make_error("conv_transpose_scratch", "x", "lower-conv-layout",
                          "only 2-D ConvTranspose plans are lowered");
    const std::int64_t C = geo.x_shape[1];
    return DramImage{region, offset, geo.stuffed[0], geo.stuffed[1], C, round16(C)};
}

/// ConvTranspose: `plan` is ops::ConvTranspose::plan's, `w` the weights in ConvTranspose's dialect
/// [C, Co / groups, kh, kw]; x must be the plan's input; `scratch` receives the stuffed input and must be
/// conv_transpose_scratch's image at x's pitch. bias: empty or Co int32 values.
inline Status lower_conv_transpose(Builder& b, const ops::ConvPlan& plan, const Tensor& w,
                                   std::span<const std::int32_t> bias, const DramImage& x, const DramImage& scratch,
                                   const DramImage& y, const ConvOptions& opt = {}) {
    const std::string what = b.name() + ": conv_transpose";
    const ops::ConvGeometry& geo = plan.geometry;
    JANUS_TRY(const DramImage want, conv_transpose_scratch(plan, scratch.region, scratch.offset));
    const Shape& xs = geo.x_shape;
    const std::int64_t Cp = x.cpitch, Th = want.h, Tw = want.w, row = Tw * Cp;
    if (xs[0] != 1 || x.c != xs[1] || x.h != xs[2] || x.w != xs[3] ||
        scratch.h != Th || scratch.w != Tw || scratch.c != x.c || scratch.cpitch != Cp || Cp % 16 != 0 || Cp < x.c ||
        scratch.offset % 16 != 0 || x.offset % 16 != 0 || w.dtype != DType::i8)
        return make_error(what, "", "lower-conv-layout",
                          "x " + std::to_string(x.h) + "x" + std::to_string(x.w) + "x" + std::to_string(x.c) +
                              " (pitch " + std::to_string(Cp) + "), scratch " + std::to_string(scratch.h) + "x" +
                              std::to_string(scratch.w) + ": x must be the plan's input " + xs.str() +
                              ", int8 weights, and the scratch be " + std::to_string(Th) + "x" + std::to_string(Tw) +
                              " at x's pitch");
    if (row > b.largest_free(Mem::lmem) || x.w * Cp > b.largest_free(Mem::lmem) - row)
        return make_error(what, "", "lower-conv-budget",
                          "a stuffed row of " + std::to_string(row) + " B and an input row of " +
                              std::to_string(x.w * Cp) + " B do not fit the " +
                              std::to_string(b.largest_free(Mem::lmem)) + " B of free LMEM");
    JANUS_TRY(const Tensor wc, ops::ConvTranspose::conv_weights(w, geo.conv.groups, ops::OpContext{}, what));
    const std::vector<std::int8_t> wv = wc.to_vector<std::int8_t>();
    const std::int64_t sh = geo.stride[0], sw = geo.stride[1], bh = geo.stuff_begin[0], bw = geo.stuff_begin[1];

    auto txn = b.transaction();
    {
        auto scope = b.scope("conv_transpose stuffing");
        b.note(what + ": zero-stuffed input " + std::to_string(Th) + "x" + std::to_string(Tw) + " in DRAM scratch (" +
               std::to_string(sh * sw) + "x the MACs of a direct scatter)");
        JANUS_TRY(Buffer zrow, b.alloc(Mem::lmem, static_cast<std::uint32_t>(row), "conv_transpose zero-point row"));
        JANUS_TRY(Buffer in, b.alloc(Mem::lmem, static_cast<std::uint32_t>(x.w * Cp), "conv_transpose input row"));
        JANUS_TRY(Reg r1, b.reg("conv_transpose local address"));
        JANUS_TRY(Reg r2, b.reg("conv_transpose DRAM address"));
        JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
        JANUS_CHECK(b.emit("li", {r1, zrow.address()}));
        const std::int64_t zp = static_cast<std::int8_t>(plan.quant.zp_x);  // dma.fill writes the int8 zero point
        JANUS_CHECK(b.emit("dma.fill", {r1, zp, row}));
        for (std::int64_t r0 = 0; r0 < Th; r0 += 4096) {  // dma.cfg counts at most 4096 rows
            JANUS_CHECK(b.emit("dma.cfg", {std::min<std::int64_t>(4096, Th - r0), 0, row}));
            JANUS_CHECK(b.emit("li", {r2, static_cast<std::int64_t>(scratch.offset) + r0 * row}));
            JANUS_CHECK(b.emit("dma.store", {scratch.region, r2, r1, row}));
        }
        // input pixel ix lands at stuffed column bw + ix sw; keep those inside [0, Tw)
        const auto first = [](std::int64_t begin, std::int64_t s) { return begin >= 0 ? 0 : (-begin + s - 1) / s; };
        const std::int64_t ix0 = first(bw, sw), ix1 = std::min(x.w, bw >= Tw ? 0 : (Tw - 1 - bw) / sw + 1);
        for (std::int64_t iy = first(bh, sh); iy < x.h && bh + iy * sh < Th; ++iy) {
            if (ix1 <= ix0) break;
            JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(b.emit("li", {r1, in.address()}));
            JANUS_CHECK(b.emit("li", {r2, static_cast<std::int64_t>(x.offset) + iy * x.w * Cp}));
            JANUS_CHECK(b.emit("dma.load", {r1, x.region, r2, x.w * Cp}));
            JANUS_CHECK(b.emit("dma.cfg", {ix1 - ix0, Cp, sw * Cp}));
            JANUS_CHECK(b.emit("li", {r1, in.address() + ix0 * Cp}));
            JANUS_CHECK(b.emit(
                "li", {r2, static_cast<std::int64_t>(scratch.offset) + (bh + iy * sh) * row + (bw + ix0 * sw) * Cp}));
            JANUS_CHECK(b.emit("dma.store", {scratch.region, r2, r1, Cp}));
        }
    }
    JANUS_CHECK(lower_conv(b, plan, scratch, wv, bias, y, opt));  // the plan's equivalent stride-1 Conv
    txn.commit();
    return ok_status();
}

}  // namespace janus::emit
