#pragma once
// The vnpu's memories, its local address map, and the happens-before race detector's shadow memory.
//
// Address map (docs/vnpu.md "Memories and addresses"): a local address is 20 bits; only LMEM, ACC and LUT RAM exist
// inside that space, and an access that touches any byte outside the one space its first byte is in faults
// ("unmapped-address", seed C4). DRAM is 4 regions whose sizes the host sets; an access past a region's end faults
// ("dram-bounds"). Alignment: LMEM, LUT RAM and DRAM addresses are multiples of 16 B, ACC addresses multiples of
// 64 B ("alignment").
//
// Race detector (seed C6). Every instruction that runs on a unit gets a vector clock (one component per unit, see
// simulator.hpp for how clocks travel through dispatch and events). Each memory granule (16 B; 64 B in ACC)
// remembers its last write (unit, epoch, pc) and, per unit, its last read. An access by instruction X with clock C
// conflicts with a remembered access by unit u at epoch e when e > C[u]: X is not ordered after it. Reads check the
// last write (RAW); writes check the last write (WAW) and every unit's last read (WAR), then clear the reads (they
// are ordered before this write, or were just reported) except the writer's own read (an instruction that reads
// and writes a granule, e.g. in-place VEC, keeps both so that a conflict with it is reported as RAW and WAW in
// whichever order the timing model runs the two instructions).
// Precision: like FastTrack, a granule keeps one write, so once it has raced a later conflict on it may be masked
// (every racy granule yields at least one report; a program with no report has no race). This is independent of
// timing: a wait on an event that does not cover the real producer is reported even when the timing model happens
// to run the producer first.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/vnpu/isa.hpp>

namespace janus::vnpu::sim {

inline constexpr std::uint32_t local_space_bits = 20;
inline constexpr std::uint32_t lmem_base = 0x00000, lmem_size = 256 * 1024;
inline constexpr std::uint32_t acc_base = 0x80000, acc_size = 64 * 1024;
inline constexpr std::uint32_t lut_base = 0xC0000, lut_size = 4 * 256;

/// Units that run instructions from queues, and SEQ; index = static_cast<int>(Unit).
inline constexpr int n_units = 5;
using Clock = std::array<std::uint32_t, n_units>;

inline Clock join(const Clock& a, const Clock& b) {
    Clock c;
    for (std::size_t u = 0; u < c.size(); ++u) c[u] = std::max(a[u], b[u]);
    return c;
}

enum class Space : std::uint8_t { lmem, acc, lut, weights, scratch, input, output };
inline constexpr int n_spaces = 7;

inline std::string_view space_name(Space s) {
    constexpr std::string_view names[] = {"LMEM", "ACC", "LUT RAM", "DRAM weights", "DRAM scratch", "DRAM input",
                                          "DRAM output"};
    return names[static_cast<int>(s)];
}
inline constexpr std::uint32_t granule(Space s) { return s == Space::acc ? 64 : 16; }
inline constexpr std::uint32_t alignment(Space s) { return s == Space::acc ? 64 : 16; }
inline constexpr Space dram_space(std::int64_t region) { return static_cast<Space>(3 + region); }

/// The instruction an access belongs to, as the detector reports it.
struct Actor {
    std::uint32_t pc = 0;
    Unit unit = Unit::seq;
    std::uint64_t seq = 0;  ///< dynamic dispatch number (program order, loops unrolled)
};

enum class RaceKind : std::uint8_t { raw, war, waw };
inline std::string_view race_kind_name(RaceKind k) {
    constexpr std::string_view n[] = {"RAW", "WAR", "WAW"};
    return n[static_cast<int>(k)];
}

/// One conflict between two accesses that no event orders. `first` is the one earlier in PROGRAM order (dispatch
/// order), so the report does not depend on which one the timing model happened to run first: write then read is
/// RAW, read then write WAR, write then write WAW. Reports are deduplicated by (kind, space, first pc, second pc);
/// `granules` counts the conflicting granule accesses, `address` is the first one.
struct Race {
    RaceKind kind = RaceKind::raw;
    Space space = Space::lmem;
    std::uint32_t address = 0;  ///< local address, or DRAM region offset
    Actor first, second;
    std::uint64_t granules = 0;
};

/// All memories of one machine. The host fills `dram` before a run (and reads the output region after it).
struct Machine {
    std::vector<std::uint8_t> lmem = std::vector<std::uint8_t>(lmem_size);
    std::vector<std::uint8_t> acc = std::vector<std::uint8_t>(acc_size);
    std::vector<std::uint8_t> lut = std::vector<std::uint8_t>(lut_size);
    std::array<std::vector<std::uint8_t>, 4> dram;  ///< weights, scratch, input, output (region_names order)

    std::vector<std::uint8_t>& bytes(Space s) {
        switch (s) {
            case Space::lmem: return lmem;
            case Space::acc: return acc;
            case Space::lut: return lut;
            default: return dram[static_cast<std::size_t>(static_cast<int>(s) - 3)];
        }
    }
};

/// Shadow memory of the race detector: per granule, the last write and each unit's last read.
class Shadow {
public:
    struct Cell {
        std::uint32_t w_epoch = 0, w_pc = 0;  ///< epoch 0: never written
        Unit w_unit = Unit::seq;
        std::uint64_t w_seq = 0;
        std::array<std::uint32_t, n_units> r_epoch{}, r_pc{};
        std::array<std::uint64_t, n_units> r_seq{};
    };

    void reset(Machine& m) {
        for (int s = 0; s < n_spaces; ++s) {
            const auto sp = static_cast<Space>(s);
            const std::size_t cells = (m.bytes(sp).size() + granule(sp) - 1) / granule(sp);
            auto& chunks = cells_[static_cast<std::size_t>(s)];
            chunks.clear();  // chunks are allocated on first touch: most programs touch a few KiB of 1.3 MiB
            chunks.resize((cells + chunk_cells - 1) / chunk_cells);
        }
        races_.clear();
        index_.clear();
        total_ = 0;
    }

    /// Record an access of [offset, offset + len) in `s` by `who` (epoch = clock[who.unit]).
    void access(Space s, std::uint32_t offset, std::uint32_t len, bool write, const Actor& who, const Clock& clock) {
        if (len == 0) return;
        auto& chunks = cells_[static_cast<std::size_t>(s)];
        const std::uint32_t g = granule(s);
        const auto me = static_cast<std::size_t>(who.unit);
        for (std::uint32_t i = offset / g; i <= (offset + len - 1) / g; ++i) {
            auto& chunk = chunks[i / chunk_cells];
            if (!chunk) chunk = std::make_unique<std::array<Cell, chunk_cells>>();
            Cell& c = (*chunk)[i % chunk_cells];
            const auto wu = static_cast<std::size_t>(c.w_unit);
            if (c.w_epoch != 0 && c.w_epoch > clock[wu]) conflict(s, i * g, {c.w_pc, c.w_unit, c.w_seq}, true, who, write);
            if (write) {
                for (std::size_t u = 0; u < static_cast<std::size_t>(n_units); ++u)
                    if (c.r_epoch[u] != 0 && c.r_epoch[u] > clock[u])
                        conflict(s, i * g, {c.r_pc[u], static_cast<Unit>(u), c.r_seq[u]}, false, who, true);
                for (std::size_t u = 0; u < static_cast<std::size_t>(n_units); ++u)
                    if (c.r_seq[u] != who.seq) c.r_epoch[u] = 0;  // keep X's own read: it may still race
                c.w_epoch = clock[me], c.w_pc = who.pc, c.w_unit = who.unit, c.w_seq = who.seq;
            } else {
                c.r_epoch[me] = clock[me], c.r_pc[me] = who.pc, c.r_seq[me] = who.seq;
            }
        }
    }

    const std::vector<Race>& races() const { return races_; }
    /// Conflicting granule accesses seen, including those past the report limit.
    std::uint64_t total() const { return total_; }
    std::size_t limit = 64;  ///< distinct reports kept

private:
    /// Unordered accesses a (remembered, a_write) and b (now, b_write): order them by program order, then classify.
    void conflict(Space s, std::uint32_t addr, Actor a, bool a_write, Actor b, bool b_write) {
        if (b.seq < a.seq) std::swap(a, b), std::swap(a_write, b_write);
        report(a_write ? (b_write ? RaceKind::waw : RaceKind::raw) : RaceKind::war, s, addr, a, b);
    }
    void report(RaceKind k, Space s, std::uint32_t addr, Actor first, Actor second) {
        ++total_;
        const auto key = std::make_tuple(static_cast<int>(k), static_cast<int>(s), first.pc, second.pc);
        if (auto it = index_.find(key); it != index_.end()) {
            ++races_[it->second].granules;
            return;
        }
        if (races_.size() >= limit) return;
        index_.emplace(key, races_.size());
        races_.push_back({k, s, addr, first, second, 1});
    }

    static constexpr std::size_t chunk_cells = 256;
    std::array<std::vector<std::unique_ptr<std::array<Cell, chunk_cells>>>, n_spaces> cells_;
    std::vector<Race> races_;
    std::map<std::tuple<int, int, std::uint32_t, std::uint32_t>, std::size_t> index_;
    std::uint64_t total_ = 0;
};

/// A checked view of `len` bytes at a local address or a DRAM offset.
struct Region {
    Space space = Space::lmem;
    std::uint32_t offset = 0;  ///< within the space's byte vector
};

/// A local address or DRAM offset as diagnostics and race reports print it: `0x` and at least 5 hex digits.
inline std::string hex_address(std::int64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%05llx", static_cast<unsigned long long>(v));
    return b;
}

/// Resolve a local address range: it must lie inside ONE existing space, aligned for it. `what` names the operand.
inline Result<Region> resolve_local(std::int64_t addr, std::int64_t len, const std::string& what) {
    const auto hex = hex_address;
    struct Range {
        Space s;
        std::uint32_t base, size;
    };
    constexpr Range map[] = {{Space::lmem, lmem_base, lmem_size}, {Space::acc, acc_base, acc_size},
                             {Space::lut, lut_base, lut_size}};
    if (addr < 0 || addr >= (std::int64_t{1} << local_space_bits))
        return make_error(what, "", "unmapped-address",
                          "local address " + std::to_string(addr) + " does not fit the 20-bit local address space");
    for (const Range& r : map) {
        if (addr < r.base || addr >= static_cast<std::int64_t>(r.base) + r.size) continue;
        if (addr + len > static_cast<std::int64_t>(r.base) + r.size)
            return make_error(what, "", "unmapped-address",
                              "[" + hex(addr) + ", " + hex(addr + len) + ") runs past the end of " +
                                  std::string(space_name(r.s)) + " (" + hex(r.base + r.size) + ")");
        if (addr % alignment(r.s) != 0)
            return make_error(what, "", "alignment",
                              hex(addr) + " in " + std::string(space_name(r.s)) + " is not a multiple of " +
                                  std::to_string(alignment(r.s)) + " B");
        return Region{r.s, static_cast<std::uint32_t>(addr - r.base)};
    }
    return make_error(what, "", "unmapped-address",
                      "local address " + hex(addr) +
                          " is encodable but maps to no memory (LMEM 0x00000-0x3ffff, ACC 0x80000-0x8ffff, LUT RAM "
                          "0xc0000-0xc03ff)");
}

/// Resolve a DRAM range of `region` (0..3) in machine `m`.
inline Result<Region> resolve_dram(const Machine& m, std::int64_t region, std::int64_t offset, std::int64_t len,
                                   const std::string& what) {
    const Space s = dram_space(region);
    const auto size = static_cast<std::int64_t>(m.dram[static_cast<std::size_t>(region)].size());
    if (offset < 0 || offset + len > size)
        return make_error(what, "", "dram-bounds",
                          "[" + std::to_string(offset) + ", " + std::to_string(offset + len) + ") is outside " +
                              std::string(space_name(s)) + " (" + std::to_string(size) + " B)");
    if (offset % 16 != 0)
        return make_error(what, "", "alignment",
                          "offset " + std::to_string(offset) + " in " + std::string(space_name(s)) +
                              " is not a multiple of 16 B");
    return Region{s, static_cast<std::uint32_t>(offset)};
}

}  // namespace janus::vnpu::sim
