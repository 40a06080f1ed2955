#pragma once
// Streaming lowering: the index structure "map over contiguous elements" (ops/map.hpp) as a vnpu pipeline.
//
// stream(b, q, inputs, output, options, compute) splits the (16-B padded) element range into tiles that fit the LMEM
// left free, and queues into the kernel's Scheduler `q` (emit/schedule.hpp), for every tile i, in program order:
//     DMA   load tile i+1 of every input into buffer set (i+1) % 2
//     unit  compute(tile i) in place into input 0's buffer of set i % 2 (Tile::out)
//     DMA   store tile i from set i % 2
// (tile 0's loads come first). Every instruction is queued with the bytes it reads and writes, and the scheduler
// derives every wait and signal from them (seeds C2, C3, C6): compute(i) waits for the loads of tile i, the store for
// compute(i), the load that reuses a buffer set two tiles later for whatever last read it (the store on the same
// in-order DMA queue, or the compute itself when the output stays in LMEM). The caller queues its parameter loads
// (load_constant with the same scheduler) before calling stream(), so the first compute that reads them waits for
// them too, and calls q.finish() after it: nothing is emitted before. No event is named here; the pipeline above
// needs two (DMA -> unit, unit -> DMA) and no sync, and every signal is waited for exactly once, so the kernel
// leaves all event counters at 0.
//
// Contract: every DramTensor is int8, contiguous, its storage padded to a multiple of 16 B (the padding is loaded,
// computed and stored like data; its value is unspecified). An input has the output's element count, or is a ROW
// REPEATED along the output (broadcast over the outer axes, seed A7): element i reads row[i mod P], P its element
// count, a multiple of 16. A repeated row is loaded per tile by one DMA transfer with a source stride of 0 (tile / P
// rows of P bytes), so it is never materialized beyond one tile, in DRAM or in the constants; tiles are then
// multiples of P. compute() queues its instructions into Tile::queue with the accesses Tile names (the input and
// output spans of the tile) and those of its own parameters: the scheduler orders only what is declared.
//
// Kept in LMEM: a tensor whose region is lmem_region lives in LMEM between two kernels (the lowering decides which,
// graph/lower.hpp "LMEM between kernels"). Such an input is read where it is, tile i at its address + i x tile,
// with no load and no buffer; such an output is written there by compute() (Tile::out) and never stored. When no
// input is loaded and the result is stored, it goes to a staging buffer per set.
// Rules: stream-shape (an input that is neither the output's size nor a repeatable row; a kept input of another
// size), and those of the builder and the scheduler (budgets, encodings).
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/builder.hpp>
#include <janus/emit/schedule.hpp>

namespace janus::emit {

/// DramTensor::region of a tensor kept in LMEM between kernels: `offset` is then its LMEM address (see stream()).
inline constexpr int lmem_region = 4;

/// A contiguous int8 tensor in a DRAM region (vnpu::region_names order), or kept in LMEM (lmem_region).
struct DramTensor {
    int region = 0;
    std::uint32_t offset = 0;
    std::int64_t elements = 0;
    /// A repeated row only (see stream()): its logical length when the stored row is a repetition of a shorter one
    /// (broadcast_row_constant stores C values repeated to lcm(C, 16)); 0: the row is `elements` long.
    std::int64_t row = 0;
    /// Bytes of storage: the element count rounded up to 16.
    std::int64_t padded() const { return round16(elements); }
    bool in_lmem() const { return region == lmem_region; }
};

struct StreamOptions {
    std::int64_t max_tile = 0;  ///< bytes per tile and input (multiple of 16); 0: as large as the free LMEM allows
};

/// What compute() receives for one tile: the LMEM addresses (in registers), the bytes they span, and the scheduler
/// to queue its instructions into, with those spans as their accesses.
struct Tile {
    std::span<const Reg* const> in;  ///< the inputs' bytes of this tile
    const Reg* out = nullptr;        ///< where the result goes: an input's buffer (in place), or the output in LMEM
    std::int64_t bytes = 0;
    std::span<const Span> in_span;   ///< the LMEM bytes of each input of this tile
    Span out_span;                   ///< the LMEM bytes the result is written to
    Scheduler* queue = nullptr;
};

/// The tile (a multiple of 16): as large as 2 sets x `inputs` buffers in `free_bytes` allow (and at most `limit`
/// when one is given), but without a limit no larger than 1/8 of the tensor unless that would go below 2 KiB: a
/// single tile cannot overlap its load, compute and store, and 8 tiles of >= 2 KiB keep the DMA's fixed latency
/// (64 cycles per transfer) under 1/3 of each transfer (bench/RESULTS.md "Emitted kernels").
inline std::int64_t pick_tile(std::int64_t padded, int inputs, std::int64_t free_bytes, std::int64_t limit) {
    std::int64_t t = free_bytes / (2 * std::max(inputs, 1)) / 16 * 16;
    if (limit > 0)
        t = std::min(t, limit / 16 * 16);
    else
        t = std::min(t, std::max<std::int64_t>(2048, round16(padded / 8)));
    return std::min<std::int64_t>({t, padded, 262144});  // VEC / LUT element counts stop at 256 Ki
}

/// Stream `in` to `out` tile by tile into the kernel's scheduler `q` (the contract at the top of this header). A
/// tensor kept in LMEM (lmem_region: the lowering keeps it there between two kernels, graph/lower.hpp) is read or
/// written where it is, with no DMA and no buffer: an input kept in LMEM has the output's element count (rule
/// stream-shape), an output kept in LMEM is written by compute() itself and never stored.
template <class Compute>
Status stream(Builder& b, Scheduler& q, std::span<const DramTensor> in, const DramTensor& out,
              const StreamOptions& opt, Compute&& compute) {
    const int k = static_cast<int>(in.size());
    std::int64_t period = 16;  // tiles are multiples of every repeated row
    int loaded_inputs = 0;
    for (int j = 0; j < k; ++j) {
        const DramTensor& t = in[static_cast<std::size_t>(j)];
        if (!t.in_lmem()) ++loaded_inputs;
        if (t.elements != out.elements) {
            if (t.in_lmem() || t.elements < 16 || t.elements % 16 != 0)
                return make_error(b.name(), "stream", "stream-shape",
                                  "an input has " + std::to_string(t.elements) + " elements, the output " +
                                      std::to_string(out.elements) +
                                      (t.in_lmem() ? ": an input kept in LMEM must have the output's element count"
                                                   : ": a repeated row must be a multiple of 16 elements"));
            period = std::lcm(period, t.elements);
        }
    }
    const std::int64_t total = out.padded();
    if (total == 0) return ok_status();
    // buffers per set: one per loaded input, plus one for the result when it is stored and no loaded input holds it
    const bool stored = !out.in_lmem(), staging = stored && loaded_inputs == 0;
    const int per_set = loaded_inputs + (staging ? 1 : 0);
    const std::int64_t tile = pick_tile(total, per_set, b.largest_free(Mem::lmem), opt.max_tile) / period * period;
    if (tile < period && period > 16)
        return make_error(b.name(), "stream", "stream-shape",
                          "repeated rows of period " + std::to_string(period) + " B do not fit " +
                              std::to_string(2 * per_set) + " tile buffers in the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B)");
    if (tile < 16)
        return make_error(b.name(), "stream", "lmem-budget",
                          "no room for " + std::to_string(2 * per_set) + " tile buffers of 16 B in the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B)");
    const std::int64_t tiles = (total + tile - 1) / tile;
    const int sets = tiles > 1 && per_set > 0 ? 2 : 1;
    const int kept = k - loaded_inputs + (out.in_lmem() ? 1 : 0);
    b.note(b.name() + ": stream of " + std::to_string(total) + " B x " + std::to_string(k) +
           " input(s): " + std::to_string(tiles) + " tile(s) of " + std::to_string(tile) + " B" +
           (per_set == 0 ? ", no buffers" : sets == 2 ? ", double buffered" : "; double buffering off: a single tile") +
           (kept ? ", " + std::to_string(kept) + " tensor(s) kept in LMEM (no DMA)" : std::string()));

    auto scope = b.scope("stream");
    std::vector<Buffer> bufs;
    std::vector<Reg> regs;  // per set: the loaded inputs' buffers, then the staging buffer
    for (int s = 0; s < sets; ++s)
        for (int j = 0; j < k + (staging ? 1 : 0); ++j) {
            if (j < k && in[static_cast<std::size_t>(j)].in_lmem()) continue;
            const std::string what = j < k ? "stream set " + std::to_string(s) + " input " + std::to_string(j)
                                           : "stream set " + std::to_string(s) + " result";
            JANUS_TRY(Buffer buf, b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile), what));
            JANUS_TRY(Reg r, b.reg(what));
            JANUS_CHECK(q.add("li", {r, buf.address()}));
            bufs.push_back(std::move(buf));
            regs.push_back(std::move(r));
        }
    std::vector<Reg> kept_regs;  // the tensors kept in LMEM: the inputs', then the output's address of each tile
    for (int j = 0; j <= k; ++j)
        if (j < k ? in[static_cast<std::size_t>(j)].in_lmem() : out.in_lmem()) {
            JANUS_TRY(Reg r, b.reg(j < k ? "stream input " + std::to_string(j) + " in LMEM" : "stream output in LMEM"));
            kept_regs.push_back(std::move(r));
        }
    Reg dram;
    if (loaded_inputs > 0 || stored) {
        JANUS_TRY(dram, b.reg("stream DRAM offset"));
    }
    const auto bytes_of = [&](std::int64_t i) { return std::min(tile, total - i * tile); };
    const auto slot_of = [&](std::int64_t i, int slot) {
        return static_cast<std::size_t>(i % sets) * static_cast<std::size_t>(per_set) + static_cast<std::size_t>(slot);
    };
    const auto load = [&](std::int64_t i) -> Status {
        for (int j = 0, slot = 0; j < k; ++j) {
            const DramTensor& t = in[static_cast<std::size_t>(j)];
            if (t.in_lmem()) continue;
            const std::size_t at = slot_of(i, slot++);
            const Reg& dst = regs[at];
            if (t.elements == out.elements) {
                const std::int64_t from = static_cast<std::int64_t>(t.offset) + i * tile;
                JANUS_CHECK(q.add("li", {dram, from}));
                JANUS_CHECK(q.add("dma.load", {dst, t.region, dram, bytes_of(i)},
                                  {reads(dram_span(t.region, from, bytes_of(i))),
                                   writes(span_of(bufs[at], 0, bytes_of(i)))}));
            } else {  // a repeated row: tile / P rows from one source row (stride 0)
                const std::int64_t p = t.elements, rows = (bytes_of(i) + p - 1) / p;
                JANUS_CHECK(q.add("dma.cfg", {rows, 0, p}));
                JANUS_CHECK(q.add("li", {dram, static_cast<std::int64_t>(t.offset)}));
                JANUS_CHECK(q.add("dma.load", {dst, t.region, dram, p},
                                  {reads(dram_span(t.region, t.offset, p)), writes(span_of(bufs[at], 0, rows * p))}));
                JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
            }
        }
        return ok_status();
    };
    JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));  // one row per transfer, whatever the DMA queue was set to before
    JANUS_CHECK(load(0));
    std::vector<const Reg*> view(static_cast<std::size_t>(k));
    std::vector<Span> spans(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < tiles; ++i) {
        if (i + 1 < tiles) JANUS_CHECK(load(i + 1));
        const std::int64_t n = bytes_of(i);
        for (int j = 0, slot = 0, kr = 0; j < k; ++j) {
            const DramTensor& t = in[static_cast<std::size_t>(j)];
            if (t.in_lmem()) {
                const Reg& r = kept_regs[static_cast<std::size_t>(kr++)];
                const std::int64_t at = static_cast<std::int64_t>(t.offset) + i * tile;
                JANUS_CHECK(q.add("li", {r, at}));
                view[static_cast<std::size_t>(j)] = &r;
                spans[static_cast<std::size_t>(j)] = local_span(at, n);
            } else {
                const std::size_t at = slot_of(i, slot++);
                view[static_cast<std::size_t>(j)] = &regs[at];
                spans[static_cast<std::size_t>(j)] = span_of(bufs[at], 0, n);
            }
        }
        const Reg* result = nullptr;
        Span result_span;
        if (out.in_lmem()) {
            result = &kept_regs.back();
            const std::int64_t at = static_cast<std::int64_t>(out.offset) + i * tile;
            JANUS_CHECK(q.add("li", {*result, at}));
            result_span = local_span(at, n);
        } else {  // in place: the first loaded input's buffer, else the staging buffer
            result = &regs[slot_of(i, 0)];
            result_span = span_of(bufs[slot_of(i, 0)], 0, n);
        }
        JANUS_CHECK(compute(Tile{view, result, n, spans, result_span, &q}));
        if (stored) {
            const std::int64_t to = static_cast<std::int64_t>(out.offset) + i * tile;
            JANUS_CHECK(q.add("li", {dram, to}));
            JANUS_CHECK(q.add("dma.store", {out.region, dram, *result, n},
                              {reads(result_span), writes(dram_span(out.region, to, n))}));
        }
    }
    return ok_status();
}

}  // namespace janus::emit
