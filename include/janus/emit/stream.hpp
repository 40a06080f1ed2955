#pragma once
// Streaming lowering: the index structure "map over contiguous elements" (ops/map.hpp) as a vnpu pipeline.
//
// stream(b, inputs, output, options, compute) splits the (16-B padded) element range into tiles that fit the LMEM
// left free, and emits, for every tile i, in program order:
//     DMA   load tile i+1 of every input into buffer set (i+1) % 2     [the last load signals L[(i+1) % 2]]
//     unit  compute(tile i) in place into input 0's buffer of set i % 2, waiting L[i % 2], signalling V[i % 2]
//     DMA   store tile i from set i % 2, waiting V[i % 2]
// (tile 0's loads come first). The events follow the data: L carries "this tile's inputs are in LMEM" from the
// DMA to the computing unit, V carries "the result is in LMEM" back; the reuse of a buffer set two tiles later is
// ordered by the DMA queue itself (the store of tile i precedes the load of tile i+2 on the same in-order unit),
// so no event is spent on it. Everything the kernel loaded earlier on the DMA queue (parameter tables, LUT
// contents) is ordered before compute(tile 0) by L[0] the same way. Every signal is waited for exactly once, so the
// kernel leaves all event counters at 0.
//
// Contract: every DramTensor is int8, contiguous, its storage padded to a multiple of 16 B (the padding is loaded,
// computed and stored like data; its value is unspecified). An input has the output's element count, or is a ROW
// REPEATED along the output (broadcast over the outer axes, seed A7): element i reads row[i mod P], P its element
// count, a multiple of 16. A repeated row is loaded per tile by one DMA transfer with a source stride of 0 (tile / P
// rows of P bytes), so it is never materialized beyond one tile, in DRAM or in the constants; tiles are then
// multiples of P.
// Rules: stream-shape (an input that is neither the output's size nor a repeatable row), and those of the builder
// (budgets, encodings).
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <janus/emit/builder.hpp>

namespace janus::emit {

/// A contiguous int8 tensor in a DRAM region (vnpu::region_names order).
struct DramTensor {
    int region = 0;
    std::uint32_t offset = 0;
    std::int64_t elements = 0;
    /// A repeated row only (see stream()): its logical length when the stored row is a repetition of a shorter one
    /// (broadcast_row_constant stores C values repeated to lcm(C, 16)); 0: the row is `elements` long.
    std::int64_t row = 0;
    /// Bytes of storage: the element count rounded up to 16.
    std::int64_t padded() const { return round16(elements); }
};

struct StreamOptions {
    std::int64_t max_tile = 0;  ///< bytes per tile and input (multiple of 16); 0: as large as the free LMEM allows
};

/// What compute() receives for one tile: the LMEM addresses (in registers) and the byte count.
struct Tile {
    std::span<const Reg* const> in;  ///< input buffers; the result goes to in[0]
    std::int64_t bytes = 0;
    Sync sync;  ///< the wait and signal compute() must put on its one instruction
};

/// The tile (a multiple of 16): as large as 2 sets x `inputs` buffers in `free_bytes` allow (and at most `limit`
/// when one is given), but without a limit no larger than 1/8 of the tensor unless that would go below 2 KiB: a
/// single tile cannot overlap its load, compute and store, and 8 tiles of >= 2 KiB keep the DMA's fixed latency
/// (64 cycles per transfer) under 1/3 of each transfer (bench/RESULTS.md "Emitted kernels").
inline std::int64_t pick_tile(std::int64_t padded, int inputs, std::int64_t free_bytes, std::int64_t limit) {
    std::int64_t t = free_bytes / (2 * inputs) / 16 * 16;
    if (limit > 0)
        t = std::min(t, limit / 16 * 16);
    else
        t = std::min(t, std::max<std::int64_t>(2048, round16(padded / 8)));
    return std::min<std::int64_t>({t, padded, 262144});  // VEC / LUT element counts stop at 256 Ki
}

template <class Compute>
Status stream(Builder& b, std::span<const DramTensor> in, const DramTensor& out, const StreamOptions& opt,
              Compute&& compute) {
    const int k = static_cast<int>(in.size());
    std::int64_t period = 16;  // tiles are multiples of every repeated row
    for (const auto& t : in)
        if (t.elements != out.elements) {
            if (t.elements < 16 || t.elements % 16 != 0)
                return make_error(b.name(), "stream", "stream-shape",
                                  "an input has " + std::to_string(t.elements) + " elements, the output " +
                                      std::to_string(out.elements) +
                                      ": a repeated row must be a multiple of 16 elements");
            period = std::lcm(period, t.elements);
        }
    const std::int64_t total = out.padded();
    if (total == 0) return ok_status();
    const std::int64_t tile = pick_tile(total, k, b.largest_free(Mem::lmem), opt.max_tile) / period * period;
    if (tile < period && period > 16)
        return make_error(b.name(), "stream", "stream-shape",
                          "repeated rows of period " + std::to_string(period) + " B do not fit " +
                              std::to_string(2 * k) + " tile buffers in the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B)");
    if (tile < 16)
        return make_error(b.name(), "stream", "lmem-budget",
                          "no room for " + std::to_string(2 * k) + " tile buffers of 16 B in the free LMEM (" +
                              std::to_string(b.largest_free(Mem::lmem)) + " B)");
    const std::int64_t tiles = (total + tile - 1) / tile;
    const int sets = tiles > 1 ? 2 : 1;
    b.note(b.name() + ": stream of " + std::to_string(total) + " B x " + std::to_string(k) +
           " input(s): " + std::to_string(tiles) + " tile(s) of " + std::to_string(tile) + " B" +
           (sets == 2 ? ", double buffered" : "; double buffering off: a single tile"));

    auto scope = b.scope("stream");
    std::vector<Buffer> bufs;
    std::vector<Reg> regs;
    for (int s = 0; s < sets; ++s)
        for (int j = 0; j < k; ++j) {
            JANUS_TRY(Buffer buf, b.alloc(Mem::lmem, static_cast<std::uint32_t>(tile),
                                          "stream set " + std::to_string(s) + " input " + std::to_string(j)));
            JANUS_TRY(Reg r, b.reg("stream set " + std::to_string(s) + " input " + std::to_string(j)));
            JANUS_CHECK(b.emit("li", {r, buf.address()}));
            bufs.push_back(std::move(buf));
            regs.push_back(std::move(r));
        }
    JANUS_TRY(Reg dram, b.reg("stream DRAM offset"));
    std::vector<Event> loaded, computed;
    for (int s = 0; s < sets; ++s) {
        JANUS_TRY(Event l, b.event("stream loaded set " + std::to_string(s)));
        JANUS_TRY(Event v, b.event("stream computed set " + std::to_string(s)));
        loaded.push_back(std::move(l));
        computed.push_back(std::move(v));
    }
    const auto bytes_of = [&](std::int64_t i) { return std::min(tile, total - i * tile); };
    const auto load = [&](std::int64_t i) -> Status {
        const auto s = static_cast<std::size_t>(i % sets);
        for (int j = 0; j < k; ++j) {
            const DramTensor& t = in[static_cast<std::size_t>(j)];
            const Sync sync{nullptr, j == k - 1 ? &loaded[s] : nullptr};
            const Reg& dst = regs[s * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)];
            if (t.elements == out.elements) {
                JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(t.offset) + i * tile}));
                JANUS_CHECK(b.emit("dma.load", {dst, t.region, dram, bytes_of(i)}, sync));
            } else {  // a repeated row: tile / P rows from one source row (stride 0)
                const std::int64_t p = t.elements, rows = (bytes_of(i) + p - 1) / p;
                JANUS_CHECK(b.emit("dma.cfg", {rows, 0, p}));
                JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(t.offset)}));
                JANUS_CHECK(b.emit("dma.load", {dst, t.region, dram, p}, sync));
                JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            }
        }
        return ok_status();
    };
    JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));  // one row per transfer, whatever the DMA queue was set to before
    JANUS_CHECK(load(0));
    std::vector<const Reg*> view(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < tiles; ++i) {
        const auto s = static_cast<std::size_t>(i % sets);
        if (i + 1 < tiles) JANUS_CHECK(load(i + 1));
        for (int j = 0; j < k; ++j)
            view[static_cast<std::size_t>(j)] = &regs[s * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)];
        JANUS_CHECK(compute(Tile{view, bytes_of(i), Sync{&loaded[s], &computed[s]}}));
        JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(out.offset) + i * tile}));
        JANUS_CHECK(b.emit("dma.store", {out.region, dram, regs[s * static_cast<std::size_t>(k)], bytes_of(i)},
                           Sync{&computed[s], nullptr}));
    }
    return ok_status();
}

}  // namespace janus::emit
