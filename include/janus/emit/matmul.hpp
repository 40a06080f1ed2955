#pragma once
// Lowering of the contract primitive's matmul form (ops/matmul.hpp, quantized MatMul) to the MAC array, with the
// epilogue on VEC: Y = requantize(A B) for int8 A [M, K] (activations, in DRAM) and int8 B [K, N] (weights, known
// at compile time), from the op's own MatMulQuantPlan.
//
// Strategy (docs/emit.md "Matmul"):
//   - B is packed at compile time into the weights region as N tiles of Kp x nt bytes (Kp = K rounded up to 16, nt a
//     multiple of 16), zero padded: padded K rows contribute 0 whatever A holds there, padded N columns are
//     computed and never stored.
//   - One requantization table per N tile (header: zp_y, -128, 127, rounding; entries: the column's bias, 0 for
//     MatMul and Gemm's C for Gemm, and its multiplier) in the weights region, all loaded into LMEM once.
//     `bias`: empty, or one int32 per column in accumulator units (Gemm's C of shape [N] with beta == alpha).
//   - The tile shape (nt, mt) minimizes the timing model's estimate over every N tile width that fits LMEM and ACC
//     (wide N tiles reload A less; tall M tiles fill the 16-row MAC pipeline better: (16 + m) cycles per block).
//   - M is cut into tiles of mt rows. For each (N tile j, M tile i), in program order:
//         DMA  [B tile j+1 when the next step starts a new N tile] then A tile i+1
//         MAC  mac.cfg; mac.mm ACC[s] = (A_i - zp_a) B_j             waits for A tile i
//         VEC  vec.rq out[s] = rq(ACC[s])                             waits for the mac.mm
//         [LUT lut.apply out[s] = T[out[s]] (MatmulOptions::lut)    waits for the vec.rq]
//         DMA  store out[s] as mt rows of N-tile width into Y       waits for the vec.rq (or lut.apply)
//     Every instruction is queued into the kernel's Scheduler (emit/schedule.hpp) with the bytes it reads and
//     writes, and these waits are what it derives. A buffer set, ACC set or output set is reused two steps later;
//     the reuse is implied by the DMA queue (the store of step i precedes the A load of step i+2 there, and every
//     later user waits on that load), so each step spends exactly three signals, each waited for once.
//   - Batch (MatmulOptions::batch, a rank-3 MatMul [B, M, K] x [B, K, N] or either side broadcast): one kernel for
//     the G products, the same steps with per-product base offsets (A_g = A + g * a_stride, Y_g = Y + g * y_stride).
//     The weights hold G packed K x N blocks, one per product, or one block shared by all; B tiles are numbered
//     block-major (w * ntiles + j) and double buffered as soon as there are two. The steps run over the B tiles in
//     order and, for each, over the row tiles that use it: product w's M tiles, or with shared weights the M tiles
//     of every product in turn (each N tile of B is then loaded once for the whole batch). Every product shares the
//     plan (zero points, multipliers, tables): the batch axis carries no quantization axis (ops/matmul.hpp).
// int32 accumulator output (MatmulOptions::int32_output, MatMulInteger): no bias, no requantization. The VEC step
// and the rq tables are dropped; the ACC tile is DMA-stored straight from ACC into Y as little-endian int32, mt rows
// of 4 x (tile width) bytes (Y's pitch >= round16(4 N)), the store waiting for the product (two signals per step).
// A's zero
// point may then vary by row (MatMulInteger's per-row a_zero_point): mac.mm's zp is one value, so each row of the
// tile is its own mac.mm (m = 1, its zp), one per B part; the first waits for A's load, the last is waited for.
// Contract: A rows and Y rows have a 16-B aligned pitch >= their width (in bytes) rounded up to 16 (padding content
// is arbitrary in A, unspecified in Y). B's zero points: the MAC array subtracts A's only, so B holds b - zp_b[n] in int8
// parts (emit/weights.hpp), packed one Kp x nt block per part in the tile, one mac.mma per part after the mac.mm.
// Refused with a rule (the host runs these): lower-matmul-zero-point (A's zero point is not one value, with a
// requantized output), lower-matmul-per-row (per-row multipliers: VEC requantizes per column), lower-matmul-alpha
// (negative alpha), lower-matmul-layout (a pitch or shape that breaks the contract; an int32 output with a bias,
// clamp or lut; a batch whose strides are not multiples of 16, whose Y matrices overlap or whose weights are neither
// one K x N block nor one per product), lower-matmul-budget (a Kp x 16 B tile and its A rows do not fit the free
// LMEM: K is not tiled yet).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/emit/weights.hpp>
#include <janus/ops/matmul.hpp>

namespace janus::emit {

/// An int8 matrix in a DRAM region: `rows` x `cols`, rows `pitch` bytes apart.
struct DramMatrix {
    int region = 0;
    std::uint32_t offset = 0;
    std::int64_t rows = 0, cols = 0, pitch = 0;
};

/// A batch of products for lower_matmul (a rank-3 MatMul, numpy broadcasting over the batch axis): `count` products
/// Y_g = requantize(A_g B_g), g = 0 .. count-1. A_g is the `a` matrix moved by g * a_stride bytes (a_stride 0: one A
/// for every product, an [M, K] left operand broadcast over a [B, K, N] right one), Y_g the `y` matrix moved by
/// g * y_stride bytes; B_g is the g-th K x N block of the weights when they hold count * K * N values, or the one
/// K x N block for every product when they hold K * N. Strides are multiples of 16 and Y matrices do not overlap.
struct MatmulBatch {
    std::int64_t count = 1;
    std::int64_t a_stride = 0;  ///< bytes between A_g and A_g+1; 0: A is broadcast
    std::int64_t y_stride = 0;  ///< bytes between Y_g and Y_g+1 (>= y.rows * y.pitch when count > 1)
};

struct MatmulOptions {
    std::int64_t max_n_tile = 0;  ///< 0: as wide as LMEM allows
    std::int64_t max_m_tile = 0;  ///< 0: as tall as LMEM and ACC allow
    Clamp clamp;                  ///< a fused activation clamp in the requantization (default: none)
    /// A fused elementwise op after the requantization (seed B11: MatMul + Sigmoid): its int8 -> int8 table is
    /// applied by lut.apply to each output tile in LMEM before the store (lower_matmul and lower_matmul_left).
    std::optional<expr::Table256> lut = std::nullopt;
    /// lower_matmul only: store the int32 accumulator itself (MatMulInteger: Y[m, n] = ACC[m, n], 4 bytes per element,
    /// little endian) instead of requantizing it; Y's pitch must then cover 4 N bytes. No bias, clamp or lut with it.
    bool int32_output = false;
    MatmulBatch batch = {};  ///< lower_matmul only: a batch of products sharing the plan (default: one product)
};

inline Status lower_matmul(Builder& b, const ops::MatMulQuantPlan& plan, const DramMatrix& a,
                    std::span<const std::int8_t> weights, std::int64_t K, std::int64_t N, const DramMatrix& y,
                    const MatmulOptions& opt = {}, std::span<const std::int32_t> bias = {}) {
    const std::string what = b.name() + ": matmul";
    const std::int64_t M = a.rows, Kp = round16(K), Np = round16(N);
    const bool i32 = opt.int32_output;
    const std::int64_t esize = i32 ? 4 : 1;  // bytes per output element
    const auto refuse = [&](const char* rule, const std::string& why) { return make_error(what, "", rule, why); };
    // the batch (MatmulBatch): G products, B_g one block per product (wsets = G) or one block for all (wsets = 1)
    const MatmulBatch& batch = opt.batch;
    const std::int64_t G = batch.count, wn = static_cast<std::int64_t>(weights.size());
    const bool shared = wn == K * N;
    if (G < 1 || batch.a_stride < 0 || batch.a_stride % 16 != 0 || batch.y_stride % 16 != 0 ||
        (G > 1 && batch.y_stride < M * y.pitch) || (!shared && wn != G * K * N))
        return refuse("lower-matmul-layout",
                      "a batch of " + std::to_string(G) + " products, A " + std::to_string(batch.a_stride) +
                          " B and Y " + std::to_string(batch.y_stride) + " B apart, " + std::to_string(wn) +
                          " weights for K " + std::to_string(K) + " x N " + std::to_string(N) +
                          ": strides must be multiples of 16, Y matrices must not overlap, and the weights hold one "
                          "K x N block or one per product");
    const std::int64_t wsets = shared ? 1 : G;
    if (a.cols != K || y.rows != M || y.cols != N || M < 1 || K < 1 || N < 1 || a.pitch % 16 != 0 || a.pitch < Kp ||
        y.pitch % 16 != 0 || y.pitch < round16(esize * N) || a.offset % 16 != 0 || y.offset % 16 != 0)
        return refuse("lower-matmul-layout",
                      "A " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " pitch " +
                          std::to_string(a.pitch) + ", B " + std::to_string(K) + "x" + std::to_string(N) + ", Y " +
                          std::to_string(y.rows) + "x" + std::to_string(y.cols) + " pitch " + std::to_string(y.pitch) +
                          ": shapes must chain, pitches and offsets be multiples of 16 and cover the rounded-up width");
    if (plan.negate) return refuse("lower-matmul-alpha", "a negative alpha is not lowered");
    if (i32 && (!bias.empty() || opt.lut || !(opt.clamp == Clamp{})))
        return refuse(
            "lower-matmul-layout",
            "an int32 accumulator output takes no bias, clamp or lut (it is stored as the MAC array sums it)");
    if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != N)
        return refuse("lower-matmul-layout",
                      "the bias has " + std::to_string(bias.size()) + " values for " + std::to_string(N) + " columns");
    if (plan.per_axis == ops::MatMulPerAxis::rows && plan.multipliers.size() > 1)
        return refuse("lower-matmul-per-row", "per-row multipliers: the VEC unit requantizes per column");
    if (!i32 && plan.multipliers.size() != 1 && plan.multipliers.size() != static_cast<std::size_t>(N))
        return refuse("lower-matmul-layout", "the plan has " + std::to_string(plan.multipliers.size()) +
                                                 " multipliers for " + std::to_string(N) +
                                                 " columns (a requantized output needs 1 or N)");
    if (plan.zp_a.size() != static_cast<std::size_t>(M))
        return refuse("lower-matmul-layout",
                      "A has " + std::to_string(plan.zp_a.size()) + " zero points for " + std::to_string(M) + " rows");
    // A's zero point per row (MatMulInteger's a_zero_point): mac.mm's zp is one value, so each row is its own
    // mac.mm (m = 1); lowered for the int32 output only
    bool per_row = false;
    for (const auto z : plan.zp_a) per_row = per_row || z != plan.zp_a[0];
    if (per_row && !i32)
        return refuse("lower-matmul-zero-point", "A's zero point varies by row (lowered for an int32 output only)");
    if (plan.zp_b.size() != static_cast<std::size_t>(N))
        return refuse("lower-matmul-layout", "B has " + std::to_string(plan.zp_b.size()) + " zero points for " +
                                                 std::to_string(N) + " columns");
    // B's zero points: one product per part of b - zp_b (emit/weights.hpp)
    const std::int64_t P =
        weight_parts(weights, [&](std::size_t i) { return plan.zp_b[i % static_cast<std::size_t>(N)]; });

    // ---- tiles: B (2 sets unless one N tile), A (2 sets), outputs (2 sets) in LMEM; ACC 2 sets
    auto txn = b.transaction();
    auto scope = b.scope("matmul");
    const std::int64_t free = b.largest_free(Mem::lmem);
    const std::int64_t n_cap =
        opt.max_n_tile > 0 ? std::min(Np, round16(opt.max_n_tile)) : std::min<std::int64_t>(Np, 16384);
    // int32 output: no rq tables and no LMEM output sets (the stores read ACC)
    const auto tables_bytes = [&](std::int64_t t) {
        return i32 ? 0 : ((Np + t - 1) / t) * 16 + 16 * ((Np + t - 1) / t) * t;
    };
    const auto fits = [&](std::int64_t t, std::int64_t m) {
        const std::int64_t bsets = t < Np || wsets > 1 ? 2 : 1;
        return bsets * P * Kp * t + 2 * m * Kp + (i32 ? 0 : 2 * m * t) + tables_bytes(t) <= free &&
               2 * m * t * 4 <= vnpu::sim::acc_size;
    };
    // The tile shape: for every N tile width that fits, the tallest M tile that fits, scored by the timing model
    // (docs/vnpu.md): the busiest unit's cycles plus one step's exposed load and store. Ties keep the wider tile.
    std::int64_t nt = 0, mt = 0;
    double best = 0;
    for (std::int64_t t = n_cap; t >= 16; t -= 16) {
        if (!fits(t, 1)) continue;
        std::int64_t m = std::min<std::int64_t>({M, 1024, vnpu::sim::acc_size / (2 * 4 * t)});
        if (opt.max_m_tile > 0) m = std::min(m, opt.max_m_tile);
        while (m > 1 && !fits(t, m)) --m;
        const double nts = static_cast<double>((Np + t - 1) / t), mts = static_cast<double>((M + m - 1) / m);
        const double kb = static_cast<double>(Kp / 16), tb = static_cast<double>(t / 16), md = static_cast<double>(m);
        const double g = static_cast<double>(G), ws = static_cast<double>(wsets);
        const double mac = g * nts * mts * static_cast<double>(P) * (kb * tb * (16 + md) + 8);
        const double load_a = 64 + md * (2 + kb), store = 64 + md * (2 + static_cast<double>(esize) * tb);
        const double dma =
            ws * nts * (66 + static_cast<double>(P) * kb * static_cast<double>(t)) + g * nts * mts * (load_a + store);
        const double vec = i32 ? 0 : g * nts * mts * (4 + md * tb);
        const double score = std::max({mac, dma, vec}) + load_a + store;
        if (nt == 0 || score < best) nt = t, mt = m, best = score;
    }
    if (nt == 0)
        return refuse("lower-matmul-budget", "a " + std::to_string(Kp) +
                                                 " x 16 B tile of B with one row of A does not fit the " +
                                                 std::to_string(free) + " B of free LMEM (K is not tiled yet)");
    const std::int64_t ntiles = (Np + nt - 1) / nt, mtiles = (M + mt - 1) / mt, btiles = wsets * ntiles;
    b.note(what + ": " + (G > 1 ? std::to_string(G) + " x " : std::string()) + std::to_string(M) + "x" +
           std::to_string(K) + "x" + std::to_string(N) + " as " + std::to_string(mtiles) + " M tile(s) of " +
           std::to_string(mt) + " x " + std::to_string(ntiles) + " N tile(s) of " + std::to_string(nt) +
           (btiles == 1 ? "; B loaded once" : "; B double buffered") + "; modelled " +
           std::to_string(static_cast<std::int64_t>(best)) + " cycles" +
           (i32 ? "; int32 accumulator output, stored from ACC" : ""));
    if (G > 1)
        b.note(what + ": a batch of " + std::to_string(G) + " products, A " +
               (batch.a_stride == 0 ? std::string("broadcast") : std::to_string(batch.a_stride) + " B apart") + ", B " +
               (shared ? std::string("shared (each N tile loaded once for the batch)") : "one per product") + ", Y " +
               std::to_string(batch.y_stride) + " B apart");

    if (P > 1)
        b.note(what + ": B's zero points: b - zp_b in " + std::to_string(P) + " int8 parts, " + std::to_string(P) +
               " MACs per step");
    if (per_row) b.note(what + ": A's zero point varies by row: one mac.mm (m = 1) per row and part");

    // ---- constants: packed B tiles, tile w * ntiles + j for block w (part p: the tile's p-th Kp x nt block), then
    // the requantization tables (one per N tile: every product shares the plan)
    std::vector<std::uint32_t> b_at, t_at;
    for (std::int64_t bt = 0; bt < btiles; ++bt) {
        const std::int64_t j = bt % ntiles, base = bt / ntiles * K * N;
        std::vector<std::uint8_t> tile(static_cast<std::size_t>(P * Kp * nt), 0);
        for (std::int64_t p = 0; p < P; ++p)
            for (std::int64_t k = 0; k < K; ++k)
                for (std::int64_t n = 0; n < nt && j * nt + n < N; ++n) {
                    const std::int32_t d = weights[static_cast<std::size_t>(base + k * N + j * nt + n)] -
                                           plan.zp_b[static_cast<std::size_t>(j * nt + n)];
                    tile[static_cast<std::size_t>((p * Kp + k) * nt + n)] =
                        static_cast<std::uint8_t>(weight_part(d, static_cast<int>(p)));
                }
        b_at.push_back(b.constant(tile));
    }
    Scheduler q(b, what);
    Buffer tab;
    if (!i32) {
        std::vector<std::uint8_t> tables;
        t_at = append_tile_tables(tables, plan.rounding, plan.zp_y, N, nt, bias, plan.multipliers, opt.clamp);
        JANUS_TRY(tab, load_constant(b, q, Mem::lmem, tables, "matmul rq tables"));
    }

    // ---- buffers, registers
    const std::int64_t bsets = btiles > 1 ? 2 : 1;
    std::vector<Buffer> bufs;
    std::vector<Reg> rb, ra, ro, racc;
    const auto make = [&](Mem mem, std::int64_t bytes, const std::string& name, std::vector<Reg>& regs) -> Status {
        JANUS_TRY(Buffer buf, b.alloc(mem, static_cast<std::uint32_t>(bytes), name));
        JANUS_TRY(Reg r, b.reg(name));
        JANUS_CHECK(q.add("li", {r, buf.address()}));
        bufs.push_back(std::move(buf));
        regs.push_back(std::move(r));
        return ok_status();
    };
    // the sets' buffers, by index into bufs (B sets first)
    std::array<std::size_t, 2> a_buf{}, o_buf{}, acc_buf{};
    for (std::int64_t s = 0; s < bsets; ++s)
        JANUS_CHECK(make(Mem::lmem, P * Kp * nt, "matmul B set " + std::to_string(s), rb));
    std::array<std::int64_t, 2> a_at{}, acc_at{};  // the sets' local addresses (per-row MACs offset them)
    for (int s = 0; s < 2; ++s) {
        const auto at = static_cast<std::size_t>(s);
        JANUS_CHECK(make(Mem::lmem, mt * Kp, "matmul A set " + std::to_string(s), ra));
        a_at[at] = bufs.back().address(), a_buf[at] = bufs.size() - 1;
        if (!i32) {
            JANUS_CHECK(make(Mem::lmem, mt * nt, "matmul out set " + std::to_string(s), ro));
            o_buf[at] = bufs.size() - 1;
        }
        JANUS_CHECK(make(Mem::acc, mt * nt * 4, "matmul ACC set " + std::to_string(s), racc));
        acc_at[at] = bufs.back().address(), acc_buf[at] = bufs.size() - 1;
    }
    JANUS_TRY(Reg rt, b.reg("matmul rq table"));
    JANUS_TRY(Reg rd, b.reg("matmul DRAM offset"));
    std::optional<Reg> rpart;  // the address of B's part p > 0
    if (P > 1) {
        JANUS_TRY(Reg r, b.reg("matmul B part"));
        rpart = std::move(r);
    }
    std::optional<Reg> rrow_a, rrow_acc;  // per-row zero points: the row's A and ACC addresses
    if (per_row) {
        JANUS_TRY(Reg r1, b.reg("matmul A row"));
        JANUS_TRY(Reg r2, b.reg("matmul ACC row"));
        rrow_a = std::move(r1), rrow_acc = std::move(r2);
    }
    std::optional<Buffer> lut_table;
    if (opt.lut) {
        JANUS_CHECK(check_epilogue_table(b, *opt.lut, "matmul"));
        JANUS_TRY(lut_table, load_lut_table(b, q, *opt.lut, "matmul epilogue lut"));
    }
    const auto set = [&](std::size_t at) { return span_of(bufs[at]); };

    // ---- the steps: for each B tile (block w, N tile j; block-major), the row tiles that use it: the M tiles of
    // product w, or, with shared weights, the M tiles of every product in turn (B is loaded once per N tile)
    const std::int64_t rtiles = shared ? G * mtiles : mtiles, steps = btiles * rtiles;
    struct Step {
        std::int64_t bt, j, g, i;  ///< B tile, its N tile, the product, its M tile
    };
    const auto step_of = [&](std::int64_t step) {
        const std::int64_t bt = step / rtiles, r = step % rtiles;
        return Step{bt, bt % ntiles, shared ? r / mtiles : bt / ntiles, r % mtiles};
    };
    const auto rows_of = [&](std::int64_t i) { return std::min(mt, M - i * mt); };
    const auto cfg = [&](std::int64_t rows, std::int64_t src, std::int64_t dst) {
        return q.add("dma.cfg", {rows, src, dst});
    };
    const auto load_step = [&](std::int64_t step) -> Status {
        const Step t = step_of(step);
        const auto s = static_cast<std::size_t>(step % 2);
        if (step % rtiles == 0) {  // a new B tile: its packed block (one contiguous transfer)
            const std::int64_t from = b_at[static_cast<std::size_t>(t.bt)];
            const auto bs = static_cast<std::size_t>(t.bt % bsets);
            JANUS_CHECK(cfg(1, 0, 0));
            JANUS_CHECK(q.add("li", {rd, from}));
            JANUS_CHECK(q.add("dma.load", {rb[bs], 0, rd, P * Kp * nt},
                              {reads(dram_span(0, from, P * Kp * nt)), writes(set(bs))}));
        }
        const std::int64_t from = static_cast<std::int64_t>(a.offset) + t.g * batch.a_stride + t.i * mt * a.pitch;
        JANUS_CHECK(cfg(rows_of(t.i), a.pitch, Kp));
        JANUS_CHECK(q.add("li", {rd, from}));
        return q.add("dma.load", {ra[s], a.region, rd, Kp},  // rows_of(i) rows, a.pitch apart
                     {reads(dram_span(a.region, from, (rows_of(t.i) - 1) * a.pitch + Kp)), writes(set(a_buf[s]))});
    };
    JANUS_CHECK(load_step(0));
    for (std::int64_t step = 0; step < steps; ++step) {
        const Step t = step_of(step);
        const std::int64_t j = t.j, i = t.i, rows = rows_of(i);
        const auto s = static_cast<std::size_t>(step % 2), bs = static_cast<std::size_t>(t.bt % bsets);
        if (step + 1 < steps) JANUS_CHECK(load_step(step + 1));
        // every row at once, or (per-row zero points) one row per mac.mm
        const std::int64_t mrows = per_row ? 1 : rows;
        const std::initializer_list<Access> mac_acc = {reads(set(a_buf[s])), reads(set(bs)),
                                                       reads(set(acc_buf[s])), writes(set(acc_buf[s]))};
        JANUS_CHECK(q.add("mac.cfg", {mrows, Kp, nt, Kp}));
        for (std::int64_t r0 = 0; r0 < rows; r0 += mrows) {
            if (per_row) {
                JANUS_CHECK(q.add("li", {*rrow_acc, acc_at[s] + r0 * nt * 4}));
                JANUS_CHECK(q.add("li", {*rrow_a, a_at[s] + r0 * Kp}));
            }
            const Reg& acc = per_row ? *rrow_acc : racc[s];
            const Reg& arow = per_row ? *rrow_a : ra[s];
            const std::int64_t zp = plan.zp_a[static_cast<std::size_t>(i * mt + r0)];
            JANUS_CHECK(q.add("mac.mm", {acc, arow, rb[bs], zp}, mac_acc));
            for (std::int64_t p = 1; p < P; ++p) {
                JANUS_CHECK(q.add("li", {*rpart, bufs[bs].address() + p * Kp * nt}));
                JANUS_CHECK(q.add("mac.mma", {acc, arow, *rpart, zp}, mac_acc));
            }
        }
        if (i32) {  // the int32 sums themselves: mt rows of the ACC tile, straight from ACC into Y
            const std::int64_t dst =
                static_cast<std::int64_t>(y.offset) + t.g * batch.y_stride + i * mt * y.pitch + j * nt * 4;
            const std::int64_t width = std::min(4 * nt, round16(4 * N) - 4 * j * nt);
            JANUS_CHECK(cfg(rows, 4 * nt, y.pitch));
            JANUS_CHECK(q.add("li", {rd, dst}));
            JANUS_CHECK(q.add("dma.store", {y.region, rd, racc[s], width},
                              {reads(set(acc_buf[s])), writes(dram_span(y.region, dst, (rows - 1) * y.pitch + width))}));
            continue;
        }
        JANUS_CHECK(q.add("li", {rt, tab.address() + t_at[static_cast<std::size_t>(j)]}));
        JANUS_CHECK(q.add("vec.rq", {ro[s], racc[s], rt, nt, rows},
                          {reads(set(acc_buf[s])), reads(span_of(tab)), writes(set(o_buf[s]))}));
        if (lut_table)
            JANUS_CHECK(q.add("lut.apply", {ro[s], ro[s], lut_slot(*lut_table), rows * nt},
                              {reads(set(o_buf[s])), reads(span_of(*lut_table)), writes(set(o_buf[s]))}));
        const std::int64_t width = std::min(nt, Np - j * nt);
        const std::int64_t dst = static_cast<std::int64_t>(y.offset) + t.g * batch.y_stride + i * mt * y.pitch + j * nt;
        JANUS_CHECK(cfg(rows, nt, y.pitch));
        JANUS_CHECK(q.add("li", {rd, dst}));
        JANUS_CHECK(q.add("dma.store", {y.region, rd, ro[s], width},
                          {reads(set(o_buf[s])), writes(dram_span(y.region, dst, (rows - 1) * y.pitch + width))}));
    }
    JANUS_CHECK(q.finish());
    txn.commit();
    return ok_status();
}

/// Seed B12, the weight on the LEFT: Y = W X for a constant int8 W [M, K] (symmetric, per-tensor or per-row scales)
/// and int8 activations X [K, N] in DRAM (per-tensor zero point zx), from the op's own MatMulQuantPlan with W as A.
/// The MAC array subtracts its zero point from A only, so the product is taken raw, sum_k W[m,k] X[k,n], and the
/// zero point enters as a per-row constant: acc = raw - zx rowsum(W)[m], exactly the host's sum W (X - zx). Rows
/// carry their own multiplier and constant, so VEC requantizes row by row, each with its own rq table of 16 equal
/// entries (272 B), the row's nt values seen as nt / 16 rows of 16 channels.
/// Strategy: W packed at compile time into M tiles of mt x Kp rows (K zero padded: X's rows past K are multiplied
/// by 0), each with its mt tables; N tiles of nt columns of X loaded as Kp x nt blocks (rows K of X's pitch); per
/// step (M tile i, N tile j; M-major): DMA [W tile + tables when a new M tile starts] then the X block, mac.mm
/// (waits for the X block), mt vec.rq (the first waits for the mac.mm), one multi-row store (waits for the last
/// vec.rq; with MatmulOptions::lut, lut.apply maps the tile first); step s+1's DMA and MAC work is dispatched before
/// step s's VEC and store work. The waits are derived by the kernel's Scheduler from the declared accesses, as in
/// lower_matmul; sets are reused two steps later, implied by the DMA queue.
/// Refused: lower-matmul-zero-point (W's zero point is not 0, or X's varies by column), lower-matmul-per-column
/// (per-column multipliers: the rows carry the scales here), lower-matmul-alpha, lower-matmul-layout (also a
/// MatmulOptions::batch of more than one product: batches are lower_matmul's), lower-matmul-budget.
inline Status lower_matmul_left(Builder& b, const ops::MatMulQuantPlan& plan, std::span<const std::int8_t> weights,
                         std::int64_t M, std::int64_t K, const DramMatrix& x, const DramMatrix& y,
                         const MatmulOptions& opt = {}) {
    const std::string what = b.name() + ": matmul (weight on the left)";
    const std::int64_t N = x.cols, Kp = round16(K), Np = round16(N);
    const auto refuse = [&](const char* rule, const std::string& why) { return make_error(what, "", rule, why); };
    if (opt.batch.count != 1)
        return refuse("lower-matmul-layout", "a batch of " + std::to_string(opt.batch.count) +
                                                 " products: only lower_matmul (the weight on the right) takes one");
    if (x.rows != K || y.rows != M || y.cols != N || static_cast<std::int64_t>(weights.size()) != M * K || M < 1 ||
        K < 1 || N < 1 || x.pitch % 16 != 0 || x.pitch < Np || y.pitch % 16 != 0 || y.pitch < Np ||
        x.offset % 16 != 0 || y.offset % 16 != 0 || plan.zp_b.size() != static_cast<std::size_t>(N))
        return refuse("lower-matmul-layout",
                      "W " + std::to_string(M) + "x" + std::to_string(K) + ", X " + std::to_string(x.rows) + "x" +
                          std::to_string(x.cols) + " pitch " + std::to_string(x.pitch) + ", Y " +
                          std::to_string(y.rows) + "x" + std::to_string(y.cols) + " pitch " + std::to_string(y.pitch) +
                          ": shapes must chain, pitches and offsets be multiples of 16 and cover the rounded-up width");
    if (plan.negate) return refuse("lower-matmul-alpha", "a negative alpha is not lowered");
    if (opt.int32_output)
        return refuse("lower-matmul-layout",
                      "an int32 accumulator output is lowered with the weight on the right only");
    if (plan.per_axis == ops::MatMulPerAxis::columns && plan.multipliers.size() > 1)
        return refuse("lower-matmul-per-column",
                      "per-column multipliers: with the weight on the left, rows carry them");
    for (const auto z : plan.zp_a)
        if (z != 0)
            return refuse("lower-matmul-zero-point",
                          "W has a non-zero zero point (" + std::to_string(z) + "): the raw product needs W - 0");
    for (const auto z : plan.zp_b)
        if (z != plan.zp_b[0]) return refuse("lower-matmul-zero-point", "X's zero point varies by column");
    const std::int64_t zx = plan.zp_b[0];

    auto txn = b.transaction();
    auto scope = b.scope("matmul left");
    const std::int64_t free = b.largest_free(Mem::lmem);
    // N tiles: as wide as 128 columns (one vec.rq per row and N tile); M tiles: the tallest that fits
    const std::int64_t table = 16 + 16 * 16;  // a row's table: 16 equal entries; vec.rq sees the row as nt / 16 rows
    const auto fits = [&](std::int64_t t, std::int64_t m) {
        return 2 * m * (Kp + table) + 2 * Kp * t + 2 * m * t <= free &&
               2 * m * t * 4 <= static_cast<std::int64_t>(vnpu::sim::acc_size);
    };
    // The tile shape: for every N tile width up to 128 columns, the tallest M tile that fits; the one with the
    // fewest modelled MAC cycles ((16 + m) cycles per 16 x 16 block, N padded to whole tiles) wins.
    const std::int64_t n_cap = std::min(Np, opt.max_n_tile > 0 ? round16(opt.max_n_tile) : std::int64_t{128});
    std::int64_t nt = 0, mt = 0;
    double best = 0;
    for (std::int64_t t = n_cap; t >= 16; t -= 16) {
        std::int64_t m = std::min<std::int64_t>({M, 1024, opt.max_m_tile > 0 ? opt.max_m_tile : M});
        while (m > 1 && !fits(t, m)) --m;
        if (!fits(t, m)) continue;
        const double cycles = static_cast<double>((M + m - 1) / m) * static_cast<double>((Np + t - 1) / t) *
                              (static_cast<double>(Kp / 16 * t / 16 * (16 + m)) + 8);
        if (nt == 0 || cycles < best) nt = t, mt = m, best = cycles;
    }
    if (nt == 0)
        return refuse("lower-matmul-budget", "a row of W (" + std::to_string(Kp) + " B) with its table and a " +
                                                 std::to_string(Kp) + " x 16 block of X do not fit the " +
                                                 std::to_string(free) + " B of free LMEM (K is not tiled yet)");
    const std::int64_t mtiles = (M + mt - 1) / mt, ntiles = (Np + nt - 1) / nt, steps = mtiles * ntiles;
    b.note(what + ": " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N) + " as " +
           std::to_string(mtiles) + " M tile(s) of " + std::to_string(mt) + " x " + std::to_string(ntiles) +
           " N tile(s) of " + std::to_string(nt) + "; X's zero point as a per-row constant, one vec.rq per row");

    // ---- constants: per M tile, the packed rows of W and then their tables
    std::vector<std::uint32_t> w_at;
    for (std::int64_t i = 0; i < mtiles; ++i) {
        std::vector<std::uint8_t> tile(static_cast<std::size_t>(mt * (Kp + table)), 0);
        std::vector<std::uint8_t> tables;
        for (std::int64_t r = 0; r < mt; ++r) {
            const std::int64_t m = std::min(i * mt + r, M - 1);  // rows past M repeat the last (never stored)
            std::int64_t rowsum = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                const std::int8_t v = weights[static_cast<std::size_t>(m * K + k)];
                tile[static_cast<std::size_t>(r * Kp + k)] = static_cast<std::uint8_t>(v);
                rowsum += v;
            }
            const auto bias = static_cast<std::int32_t>(-zx * rowsum);  // |zx rowsum| <= 128 * 128 K
            const auto mult = plan.multipliers[plan.multipliers.size() == 1 ? 0 : static_cast<std::size_t>(m)];
            append_rq_table(tables, plan.rounding, plan.zp_y, opt.clamp.lo, opt.clamp.hi, 16, [&](std::int64_t) { return bias; },
                [&](std::int64_t) { return mult; });
        }
        std::copy(tables.begin(), tables.end(), tile.begin() + mt * Kp);
        w_at.push_back(b.constant(tile));
    }

    // ---- buffers, registers
    Scheduler q(b, what);
    std::array<Buffer, 2> wb, xb, ob, ab;
    for (std::size_t s = 0; s < 2; ++s) {
        JANUS_TRY(Buffer w1, b.alloc(Mem::lmem, static_cast<std::uint32_t>(mt * (Kp + table)),
                                     "matmul W set " + std::to_string(s)));
        JANUS_TRY(Buffer x1,
                  b.alloc(Mem::lmem, static_cast<std::uint32_t>(Kp * nt), "matmul X set " + std::to_string(s)));
        JANUS_TRY(Buffer o1,
                  b.alloc(Mem::lmem, static_cast<std::uint32_t>(mt * nt), "matmul out set " + std::to_string(s)));
        JANUS_TRY(Buffer a1,
                  b.alloc(Mem::acc, static_cast<std::uint32_t>(mt * nt * 4), "matmul ACC set " + std::to_string(s)));
        wb[s] = std::move(w1), xb[s] = std::move(x1), ob[s] = std::move(o1), ab[s] = std::move(a1);
    }
    JANUS_TRY(Reg r1, b.reg("matmul address 1"));
    JANUS_TRY(Reg r2, b.reg("matmul address 2"));
    JANUS_TRY(Reg r3, b.reg("matmul address 3"));
    std::optional<Buffer> lut_table;
    if (opt.lut) {
        JANUS_CHECK(check_epilogue_table(b, *opt.lut, "matmul left"));
        JANUS_TRY(lut_table, load_lut_table(b, q, *opt.lut, "matmul left epilogue lut"));
    }
    const auto li = [&](const Reg& r, std::int64_t v) { return q.add("li", {r, v}); };
    const auto rows_of = [&](std::int64_t i) { return std::min(mt, M - i * mt); };
    const auto load_step = [&](std::int64_t step) -> Status {
        const std::int64_t i = step / ntiles, j = step % ntiles;
        const auto s = static_cast<std::size_t>(step % 2);
        if (j == 0) {  // a new M tile: its rows of W and their tables, one transfer
            const std::int64_t from = w_at[static_cast<std::size_t>(i)];
            const Buffer& to = wb[static_cast<std::size_t>(i % 2)];
            JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(li(r1, to.address()));
            JANUS_CHECK(li(r2, from));
            JANUS_CHECK(q.add("dma.load", {r1, 0, r2, mt * (Kp + table)},
                              {reads(dram_span(0, from, mt * (Kp + table))), writes(span_of(to))}));
        }
        const std::int64_t from = static_cast<std::int64_t>(x.offset) + j * nt, width = std::min(nt, Np - j * nt);
        JANUS_CHECK(q.add("dma.cfg", {K, x.pitch, nt}));
        JANUS_CHECK(li(r1, xb[s].address()));
        JANUS_CHECK(li(r2, from));
        return q.add("dma.load", {r1, x.region, r2, width},  // K rows, x.pitch apart, into rows nt apart
                     {reads(dram_span(x.region, from, (K - 1) * x.pitch + width)), writes(span_of(xb[s]))});
    };
    const auto mac_step = [&](std::int64_t step) -> Status {
        const std::int64_t i = step / ntiles;
        const auto s = static_cast<std::size_t>(step % 2), ws = static_cast<std::size_t>(i % 2);
        JANUS_CHECK(q.add("mac.cfg", {rows_of(i), Kp, nt, Kp}));
        JANUS_CHECK(li(r1, ab[s].address()));
        JANUS_CHECK(li(r2, wb[ws].address()));
        JANUS_CHECK(li(r3, xb[s].address()));
        return q.add("mac.mm", {r1, r2, r3, 0},
                     {reads(span_of(wb[ws])), reads(span_of(xb[s])), writes(span_of(ab[s]))});
    };
    const auto out_step = [&](std::int64_t step) -> Status {
        const std::int64_t i = step / ntiles, j = step % ntiles, rows = rows_of(i);
        const auto s = static_cast<std::size_t>(step % 2), ws = static_cast<std::size_t>(i % 2);
        for (std::int64_t r = 0; r < rows; ++r) {
            JANUS_CHECK(li(r1, ob[s].address() + r * nt));
            JANUS_CHECK(li(r2, ab[s].address() + r * nt * 4));
            JANUS_CHECK(li(r3, wb[ws].address() + mt * Kp + r * table));
            JANUS_CHECK(q.add("vec.rq", {r1, r2, r3, 16, nt / 16},
                              {reads(span_of(ab[s], r * nt * 4, nt * 4)), reads(span_of(wb[ws])),
                               writes(span_of(ob[s], r * nt, nt))}));
        }
        JANUS_CHECK(li(r1, ob[s].address()));
        if (lut_table)
            JANUS_CHECK(q.add("lut.apply", {r1, r1, lut_slot(*lut_table), rows * nt},
                              {reads(span_of(ob[s])), reads(span_of(*lut_table)), writes(span_of(ob[s]))}));
        const std::int64_t dst = static_cast<std::int64_t>(y.offset) + i * mt * y.pitch + j * nt;
        const std::int64_t width = std::min(nt, Np - j * nt);
        JANUS_CHECK(q.add("dma.cfg", {rows, nt, y.pitch}));
        JANUS_CHECK(li(r2, dst));
        return q.add("dma.store", {y.region, r2, r1, width},
                     {reads(span_of(ob[s])), writes(dram_span(y.region, dst, (rows - 1) * y.pitch + width))});
    };
    // Software pipelined: step s+1's loads and product are dispatched before step s's mt vec.rq, which fill VEC's
    // queue (depth 8) and stall SEQ until the product of step s is requantized.
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

}  // namespace janus::emit
