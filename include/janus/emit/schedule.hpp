#pragma once
// Dependency-driven synchronization (seeds C2, C3, C6): instructions are queued with the memory they read and write,
// and `finish` derives every wait and signal from those accesses, not from program order, using at most 16 events
// however many forks and joins the program has.
//
// The model (docs/vnpu.md "Events"): each unit runs its instructions in order; events are FIFOs of signals (the k-th
// wait on an event consumes its k-th signal); a SEQ `sync` waits on a set of events before SEQ dispatches anything
// after it, so everything dispatched after it is ordered after what it waited for.
//
// 1. Dependencies. Instruction i (unit U) must start after every earlier instruction j of another unit whose access
//    conflicts with one of i's (same space and region, overlapping bytes, at least one write: RAW, WAR, WAW). Per
//    unit only the latest such j matters (units are in order). Each instruction carries a vector `know`: per unit,
//    the latest instruction known complete when it starts (inherited from the previous instruction of its unit and
//    from every producer it waits for); an edge j -> i already implied by `know` is dropped (transitive reduction).
//    Memory that is freed and reallocated keeps its history: a buffer whose view is still read by an asynchronous
//    consumer cannot be overwritten before that read is done, whatever the handles' lifetimes (seed C3).
// 2. Channels instead of events per edge. An edge j -> i is DIRECT when j has one consumer and i chooses j as its
//    one waited producer: j signals the channel "unit(j) -> unit(i)" and i waits on it. Both ends are in program
//    order on their units and the reduction removes any edge whose pairing could cross (an earlier producer whose
//    consumer comes later is already implied), so the k-th signal meets the k-th wait. Every other edge (a fork:
//    several consumers; a join: several producers) goes through SEQ: j signals "unit(j) -> SEQ", and before i a
//    `sync` waits on that channel until it has consumed the signal of j (and of every earlier such producer of
//    unit(j): they are complete anyway). 4 units x 3 other units + 4 channels to SEQ = 16 events: the pool is never
//    exhausted, however many forks and joins (seed C2). A sync stalls dispatch until its producers complete: the
//    price of a fork or a join, counted in Stats.
// 3. Every signal has exactly one waiter, so every counter is 0 once the program has run (no leaked event).
//
// Contract: queued instructions are straight-line (no loop, sync or halt; they are refused); SEQ instructions (li,
// alu) have no memory accesses; the declared accesses must cover what the instruction really reads and writes (the
// simulator's race detector checks this in every test). Events are borrowed from the builder at `finish` and held
// until the Scheduler is destroyed (a later kernel reusing them must not be able to consume a signal meant for this
// one).
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/emit/builder.hpp>
#include <janus/vnpu/isa.hpp>

namespace janus::emit {

/// A byte range of a DRAM region (0..3), or of the local address map (LMEM, ACC and LUT RAM share one map:
/// vnpu/sim/machine.hpp).
struct Span {
    enum class Space : std::uint8_t { dram, local } space = Space::local;
    int region = 0;                   ///< DRAM only
    std::int64_t begin = 0, end = 0;  ///< [begin, end)
};

struct Access {
    Span span;
    bool write = false;
};

inline Access reads(Span s) { return {s, false}; }
inline Access writes(Span s) { return {s, true}; }
inline Span local_span(std::int64_t at, std::int64_t bytes) { return {Span::Space::local, 0, at, at + bytes}; }
inline Span dram_span(int region, std::int64_t at, std::int64_t bytes) {
    return {Span::Space::dram, region, at, at + bytes};
}
/// The span of a buffer (or of a view of it: `offset` and `bytes` inside it).
inline Span span_of(const Buffer& b, std::int64_t offset = 0, std::int64_t bytes = -1) {
    const std::int64_t at = b.address() + offset;
    return local_span(at, bytes < 0 ? static_cast<std::int64_t>(b.bytes()) - offset : bytes);
}

class Scheduler {
public:
    struct Stats {
        int instructions = 0;  ///< queued
        int edges = 0;         ///< dependencies after the transitive reduction
        int direct = 0;        ///< edges carried by a unit -> unit channel
        int through_seq = 0;   ///< edges carried by a sync
        int syncs = 0;         ///< sync instructions inserted
        int channels = 0;      ///< events used (at most 16)
    };

    Scheduler(Builder& b, std::string what) : b_(b), what_(std::move(what)) {}

    /// Queue one instruction with the memory it reads and writes. Rules: known-instruction, operand-count,
    /// schedule-straight-line (loop, sync and halt are not queued), schedule-seq-access (a SEQ instruction with
    /// memory accesses), schedule-finished (after finish).
    Status add(std::string_view mnemonic, std::initializer_list<Operand> ops, std::initializer_list<Access> acc = {}) {
        const std::string where = "queued instruction " + std::to_string(nodes_.size());
        if (done_) return make_error(what_, where, "schedule-finished", "the schedule was already emitted");
        const vnpu::InstrInfo* info = vnpu::find_instruction(mnemonic);
        if (!info)
            return make_error(what_, where, "known-instruction",
                              "'" + std::string(mnemonic) + "' is no vnpu instruction");
        if (static_cast<int>(ops.size()) != info->n_fields)
            return make_error(what_, where, "operand-count",
                              std::string(mnemonic) + " takes " + std::to_string(info->n_fields) + " operands");
        if (mnemonic == "loop" || mnemonic == "sync" || mnemonic == "halt")
            return make_error(what_, where, "schedule-straight-line",
                              std::string(mnemonic) +
                                  " is not queued: the scheduler places syncs itself and "
                                  "handles straight-line code only");
        if (info->unit == vnpu::Unit::seq && acc.size() != 0)
            return make_error(what_, where, "schedule-seq-access",
                              std::string(mnemonic) + " runs on SEQ, which accesses no memory");
        Node n;
        n.mnemonic = mnemonic;
        for (const Operand& o : ops) n.ops.push_back(o.value);
        n.acc.assign(acc.begin(), acc.end());
        n.unit = static_cast<int>(info->unit);
        nodes_.push_back(std::move(n));
        return ok_status();
    }

    /// Derive the dependencies, borrow the channels' events and emit every queued instruction (with the syncs) into
    /// the builder, inside one transaction.
    Status finish() {
        if (done_) return make_error(what_, "", "schedule-finished", "the schedule was already emitted");
        done_ = true;
        stats_.instructions = static_cast<int>(nodes_.size());
        derive();
        auto txn = b_.transaction();
        std::array<int, units> consumed{};  // signals of "unit -> SEQ" consumed by syncs so far
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const Node& n = nodes_[i];
            // syncs: consume the "unit -> SEQ" channels up to each through-SEQ producer of i
            std::array<int, units> need{};
            for (const int j : n.seq_producers) {
                const auto u = static_cast<std::size_t>(nodes_[static_cast<std::size_t>(j)].unit);
                need[u] = std::max(need[u], nodes_[static_cast<std::size_t>(j)].seq_ordinal);
            }
            for (;;) {
                std::int64_t mask = 0;
                for (std::size_t u = 0; u < units; ++u)
                    if (need[u] > consumed[u]) {
                        JANUS_TRY(const int e, channel(static_cast<int>(u), seq));
                        mask |= std::int64_t{1} << e;
                        ++consumed[u];
                    }
                if (mask == 0) break;
                JANUS_CHECK(b_.emit("sync", {mask, 0}));
                ++stats_.syncs;
            }
            std::optional<int> wait, signal;
            if (n.direct_producer >= 0) {
                JANUS_TRY(const int e, channel(nodes_[static_cast<std::size_t>(n.direct_producer)].unit, n.unit));
                wait = e;
            }
            if (n.signal_to >= 0) {
                JANUS_TRY(const int e, channel(n.unit, n.signal_to));
                signal = e;
            }
            JANUS_CHECK(emit_node(n, wait, signal));
        }
        txn.commit();
        return ok_status();
    }

    const Stats& stats() const { return stats_; }

private:
    static constexpr std::size_t units = 5;  // vnpu::Unit: seq, dma, mac, vec, lut
    static constexpr int seq = static_cast<int>(vnpu::Unit::seq);

    struct Node {
        std::string mnemonic;
        std::vector<std::int64_t> ops;
        std::vector<Access> acc;
        int unit = 0;
        std::array<int, units> know{-1, -1, -1, -1, -1};  ///< per unit: latest node known complete at start
        std::vector<int> producers;                       ///< after the reduction
        int consumers = 0;
        int direct_producer = -1;        ///< the producer waited for directly, or -1
        std::vector<int> seq_producers;  ///< producers waited for through a sync
        int signal_to = -1;              ///< the channel this node signals: a unit, seq, or -1 (none)
        int seq_ordinal = 0;             ///< 1-based rank among the "unit -> SEQ" signallers of its unit
    };

    static bool conflict(const Node& a, const Node& b) {
        for (const Access& x : a.acc)
            for (const Access& y : b.acc)
                if ((x.write || y.write) && x.span.space == y.span.space && x.span.region == y.span.region &&
                    x.span.begin < y.span.end && y.span.begin < x.span.end)
                    return true;
        return false;
    }

    void derive() {
        std::array<int, units> last{-1, -1, -1, -1, -1};  // latest node per unit so far
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            Node& n = nodes_[i];
            const auto u = static_cast<std::size_t>(n.unit);
            if (last[u] >= 0) {  // in order: the previous node of the unit is complete, and all it knew
                n.know = nodes_[static_cast<std::size_t>(last[u])].know;
                n.know[u] = last[u];
            }
            if (!n.acc.empty()) {
                // the latest conflicting node of every other unit, latest first (it implies the most)
                std::vector<int> cand;
                for (std::size_t v = 1; v < units; ++v) {
                    if (v == u) continue;
                    for (int j = last[v]; j >= 0; --j) {
                        const Node& p = nodes_[static_cast<std::size_t>(j)];
                        if (static_cast<std::size_t>(p.unit) == v && conflict(p, n)) {
                            cand.push_back(j);
                            break;
                        }
                    }
                }
                std::sort(cand.rbegin(), cand.rend());
                for (const int j : cand) {
                    const Node& p = nodes_[static_cast<std::size_t>(j)];
                    if (n.know[static_cast<std::size_t>(p.unit)] >= j) continue;  // already implied
                    n.producers.push_back(j);
                    for (std::size_t v = 0; v < units; ++v) n.know[v] = std::max(n.know[v], p.know[v]);
                    n.know[static_cast<std::size_t>(p.unit)] = std::max(n.know[static_cast<std::size_t>(p.unit)], j);
                }
            }
            for (const int j : n.producers) ++nodes_[static_cast<std::size_t>(j)].consumers;
            last[u] = static_cast<int>(i);
        }
        // modes: a consumer waits directly for its latest producer that has no other consumer; the rest go
        // through SEQ
        std::vector<bool> through_seq(nodes_.size(), false);
        for (Node& n : nodes_) {
            stats_.edges += static_cast<int>(n.producers.size());
            for (const int j : n.producers) {  // producers are sorted latest first
                if (n.direct_producer < 0 && nodes_[static_cast<std::size_t>(j)].consumers == 1)
                    n.direct_producer = j;
                else
                    n.seq_producers.push_back(j), through_seq[static_cast<std::size_t>(j)] = true;
            }
        }
        std::array<int, units> ordinal{};
        for (std::size_t j = 0; j < nodes_.size(); ++j) {
            Node& p = nodes_[j];
            if (through_seq[j]) {
                p.signal_to = seq;
                p.seq_ordinal = ++ordinal[static_cast<std::size_t>(p.unit)];
            }
        }
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const Node& n = nodes_[i];
            if (n.direct_producer >= 0) nodes_[static_cast<std::size_t>(n.direct_producer)].signal_to = n.unit;
            stats_.direct += n.direct_producer >= 0;
            stats_.through_seq += static_cast<int>(n.seq_producers.size());
        }
    }

    /// The event of channel from -> to, borrowed on first use.
    Result<int> channel(int from, int to) {
        const auto k = static_cast<std::size_t>(from * static_cast<int>(units) + to);
        if (!channels_[k]) {
            static constexpr std::array<std::string_view, units> name{"SEQ", "DMA", "MAC", "VEC", "LUT"};
            JANUS_TRY(Event e, b_.event(what_ + ": channel " + std::string(name[static_cast<std::size_t>(from)]) +
                                        " -> " + std::string(name[static_cast<std::size_t>(to)])));
            channels_[k] = std::move(e);
            ++stats_.channels;
        }
        return channels_[k]->index();
    }

    Status emit_node(const Node& n, std::optional<int> wait, std::optional<int> signal) {
        const Event* w = nullptr;  // Builder::emit takes the held handles
        const Event* s = nullptr;
        for (const auto& c : channels_) {
            if (!c) continue;
            if (wait && c->index() == *wait) w = &*c;
            if (signal && c->index() == *signal) s = &*c;
        }
        return b_.emit(n.mnemonic, std::span<const std::int64_t>(n.ops), Sync{w, s});
    }

    Builder& b_;
    std::string what_;
    std::vector<Node> nodes_;
    std::array<std::optional<Event>, units * units> channels_;
    Stats stats_;
    bool done_ = false;
};

}  // namespace janus::emit
