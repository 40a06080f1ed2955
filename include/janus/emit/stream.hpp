#pragma once
// Streaming lowering: the index structure "map over contiguous elements" (ops/map.hpp) as a vnpu pipeline.
//
// stream(b, inputs, output, options, compute) splits the (16-B padded) element range into tiles that fit the LMEM
// left free, and emits, for every tile i, in program order:
//     DMA   load tile i+1 of every input into buffer set (i+1) % 2     [the last load signals L[(i+1) % 2]]
//     unit  compute(tile i) in place into input 0's buffer of set i % 2 (Tile::out), waiting L[i % 2],
//           signalling V[i % 2]
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
//
// Kept in LMEM: a tensor whose region is lmem_region lives in LMEM between two kernels (the lowering decides which,
// graph/lower.hpp "LMEM between kernels"). Such an input is read where it is, tile i at its address + i x tile,
// with no load and no buffer; such an output is written there by compute() (Tile::out) and never stored (so the
// load that reuses a buffer set two tiles later waits for the compute that read it: no store orders it). When no
// input is loaded, the first compute waits for a DMA marker instead of a load (it orders the kernel's parameter
// loads), and a result that is stored goes to a staging buffer per set, whose reuse two tiles later waits for the
// store that emptied it.
// Rules: stream-shape (an input that is neither the output's size nor a repeatable row; a kept input of another
// size), and those of the builder (budgets, encodings).
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/builder.hpp>

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

/// What compute() receives for one tile: the LMEM addresses (in registers) and the byte count.
struct Tile {
    std::span<const Reg* const> in;  ///< the inputs' bytes of this tile
    const Reg* out = nullptr;        ///< where the result goes: an input's buffer (in place), or the output in LMEM
    std::int64_t bytes = 0;
    Sync sync;  ///< the wait and signal compute() must put on its one instruction
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

/// Stream `in` to `out` tile by tile (the contract at the top of this header). A tensor kept in LMEM (lmem_region:
/// the lowering keeps it there between two kernels, graph/lower.hpp) is read or written where it is, with no DMA
/// and no buffer: an input kept in LMEM has the output's element count (rule stream-shape); when every input is
/// there, a DMA marker after the kernel's earlier loads (its parameter tables) signals the first compute instead of
/// a tile load, and an output kept in LMEM is written by compute() itself and never stored.
template <class Compute>
Status stream(Builder& b, std::span<const DramTensor> in, const DramTensor& out, const StreamOptions& opt,
              Compute&& compute) {
    const int k = static_cast<int>(in.size());
    std::int64_t period = 16;  // tiles are multiples of every repeated row
    int loaded_inputs = 0, last_loaded = -1;
    for (int j = 0; j < k; ++j) {
        const DramTensor& t = in[static_cast<std::size_t>(j)];
        if (!t.in_lmem()) ++loaded_inputs, last_loaded = j;
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
            JANUS_CHECK(b.emit("li", {r, buf.address()}));
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
    // loaded[s]: the tile inputs of set s are in LMEM; with no loaded input: the kernel's earlier loads are done
    // (set 0, the first tile), or the staging buffer of set s is free again. computed[s]: the result of set s is in
    // LMEM, for its store; with a kept output, the compute has read set s, which the load two tiles later waits for
    // (no store orders that load after the compute then).
    std::vector<Event> loaded, computed;
    for (int s = 0; s < sets; ++s) {
        JANUS_TRY(Event l, b.event("stream loaded set " + std::to_string(s)));
        loaded.push_back(std::move(l));
        if (stored || loaded_inputs > 0) {
            JANUS_TRY(Event v, b.event("stream computed set " + std::to_string(s)));
            computed.push_back(std::move(v));
        }
    }
    const auto bytes_of = [&](std::int64_t i) { return std::min(tile, total - i * tile); };
    const auto buffer_reg = [&](std::size_t s, int slot) -> const Reg& {
        return regs[s * static_cast<std::size_t>(per_set) + static_cast<std::size_t>(slot)];
    };
    const auto load = [&](std::int64_t i) -> Status {
        const auto s = static_cast<std::size_t>(i % sets);
        // a kept output: the first transfer into set s waits until the compute two tiles earlier has read it
        const Event* reuse = !stored && loaded_inputs > 0 && i >= 2 ? &computed[s] : nullptr;
        for (int j = 0, slot = 0; j < k; ++j) {
            const DramTensor& t = in[static_cast<std::size_t>(j)];
            if (t.in_lmem()) continue;
            const Sync sync{std::exchange(reuse, nullptr), j == last_loaded ? &loaded[s] : nullptr};
            const Reg& dst = buffer_reg(s, slot++);
            if (t.elements == out.elements) {
                JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(t.offset) + i * tile}));
                JANUS_CHECK(b.emit("dma.load", {dst, t.region, dram, bytes_of(i)}, sync));
            } else {  // a repeated row: tile / P rows from one source row (stride 0)
                const std::int64_t p = t.elements, rows = (bytes_of(i) + p - 1) / p;
                JANUS_CHECK(b.emit("dma.cfg", {rows, 0, p}, Sync{sync.wait, nullptr}));
                JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(t.offset)}));
                JANUS_CHECK(b.emit("dma.load", {dst, t.region, dram, p}, Sync{nullptr, sync.signal}));
                JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}));
            }
        }
        return ok_status();
    };
    // one row per transfer, whatever the DMA queue was set to before; with nothing to load, this marker orders the
    // kernel's earlier loads (parameter tables, LUT contents) before the first compute
    JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}, Sync{nullptr, loaded_inputs == 0 ? &loaded[0] : nullptr}));
    JANUS_CHECK(load(0));
    std::vector<const Reg*> view(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < tiles; ++i) {
        const auto s = static_cast<std::size_t>(i % sets);
        if (i + 1 < tiles) JANUS_CHECK(load(i + 1));
        for (int j = 0, slot = 0, kr = 0; j < k; ++j) {
            const DramTensor& t = in[static_cast<std::size_t>(j)];
            if (t.in_lmem()) {
                const Reg& r = kept_regs[static_cast<std::size_t>(kr++)];
                JANUS_CHECK(b.emit("li", {r, static_cast<std::int64_t>(t.offset) + i * tile}));
                view[static_cast<std::size_t>(j)] = &r;
            } else {
                view[static_cast<std::size_t>(j)] = &buffer_reg(s, slot++);
            }
        }
        const Reg* result = nullptr;
        if (out.in_lmem()) {
            result = &kept_regs.back();
            JANUS_CHECK(b.emit("li", {*result, static_cast<std::int64_t>(out.offset) + i * tile}));
        } else {  // in place: the first loaded input's buffer, else the staging buffer
            result = &buffer_reg(s, 0);
        }
        // compute waits for its tile's loads; with nothing loaded, tile 0 waits for the marker and a staging buffer
        // for the store that emptied it two tiles earlier (the store signals it only when a compute will wait)
        const Event* wait = loaded_inputs > 0 || i == 0 ? &loaded[s] : staging && i >= 2 ? &loaded[s] : nullptr;
        const Event* done = stored || (loaded_inputs > 0 && i + 2 < tiles) ? &computed[s] : nullptr;
        JANUS_CHECK(compute(Tile{view, result, bytes_of(i), Sync{wait, done}}));
        if (stored) {
            const Event* freed = staging && i + 2 < tiles ? &loaded[s] : nullptr;
            JANUS_CHECK(b.emit("li", {dram, static_cast<std::int64_t>(out.offset) + i * tile}));
            JANUS_CHECK(b.emit("dma.store", {out.region, dram, *result, bytes_of(i)}, Sync{&computed[s], freed}));
        }
    }
    return ok_status();
}

}  // namespace janus::emit
