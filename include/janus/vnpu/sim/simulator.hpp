#pragma once
// The vnpu simulator: functional and timed, with a happens-before race detector (docs/vnpu.md).
//
// Contract:
//   run(program, machine, options) executes the instruction list from Options::entry (pc 0 by default) until HALT
//   over `machine`'s memories and returns a Report: total cycles, per-unit busy / stall cycles and instruction
//   counts, the races found, and the fault that stopped the run (if any). The run is deterministic: the same
//   program, machine contents and options give the same report and the same memory bytes, every time.
// Semantics: each row of the instruction table names its semantic function (`Sem`); execute() below has one case per
//   Sem and the compiler checks the switch is complete (-Wswitch). Element math is the plain scalar code of
//   vnpu/semantics.hpp and parameter tables are read by vnpu/params.hpp; nothing here shares code with the host
//   kernels of ops/ (tests/emit/isa_three_way.cpp compares the two).
// Scheduling (the timing model of docs/vnpu.md): SEQ executes one instruction per cycle; it dispatches the others in
//   program order to their unit's queue (depth 8; SEQ stalls on a full queue). A unit starts its queue's head when
//   the head's wait event is > 0 (it decrements it), runs it for its cost, then applies its effects and signals.
//   Within one cycle: completions, then starts, then SEQ, then starts again; units in the order DMA, MAC, VEC, LUT.
//   Register operands are read when SEQ dispatches (a later LI does not change a queued instruction).
// Ordering for the race detector (vector clocks, docs/vnpu.md "Events"): an instruction's clock joins its unit's
//   clock (in-order units), SEQ's clock at dispatch (so a SEQ wait orders everything dispatched after it) and, when
//   it waits, the clock that the matching signal published (events are FIFOs of clocks: the k-th wait on an event
//   takes the k-th signal's clock). When every event has one signalling unit this relation, and so the race report,
//   is the same under any timing parameters; when several units signal one event, which signal a wait consumes
//   (and so what it orders) follows the simulated timing.
// Faults stop the run at the faulting instruction: unmapped-address, alignment, dram-bounds, operand-space,
//   rq-table / ew-table (malformed parameter tables), event-overflow, leaked-event, deadlock (with every queue's
//   head), loop-depth, loop-nesting, loop-past-end, missing-halt, instruction-limit, cycle-limit, work-limit. The
//   Error names the program, `pc N`, the rule, and the cycle and instruction text.
// Limits (issue 26): a run stops with a fault when it passes Options::max_instructions SEQ steps
//   (instruction-limit), when simulated time would pass Options::max_cycles (cycle-limit), or when an instruction
//   about to start would take the run's unit work past a limit (work-limit): bytes moved or filled by DMA
//   (max_dma_bytes), int8 multiply-accumulates (max_macs: mac.mm and vec.mac) and VEC / LUT element operations
//   (max_vec_ops). The defaults (Limits below) let the full-size MobileNetV2 run with room to spare and stop a
//   hostile program (nested loops around a large dma.fill or mac.mm) within seconds of host time.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <janus/vnpu/isa.hpp>
#include <janus/vnpu/params.hpp>
#include <janus/vnpu/semantics.hpp>
#include <janus/vnpu/sim/machine.hpp>

namespace janus::vnpu::sim {

static_assert(std::endian::native == std::endian::little, "the simulator stores ACC and tables little endian");

/// Cycle parameters of the timing model (docs/vnpu.md "Timing model"). Results and races never depend on them.
struct Timing {
    std::uint64_t dram_latency = 64;   ///< DMA L when DRAM is involved
    std::uint64_t local_latency = 8;   ///< DMA L otherwise
    std::uint64_t mac_fixed = 8;
    std::uint64_t vec_fixed = 4;
    std::uint64_t lut_fixed = 2;
    std::uint64_t config = 1;          ///< dma.cfg, mac.cfg
};

/// The default work limits of one run (see the header comment). MobileNetV2-1.0 at 224x224 (scripts/
/// make_onnx_models.py --full) needs 3.84 M cycles, 38.8 MB of DMA, 366 M MACs (with padding) and 27.9 M VEC / LUT
/// element operations: 8.7x, 27x, 5.9x and 19x below these. On the development machine (2 shared cores,
/// gcc-release, race detector on) each limit alone is reached within about 4 s of host time by a loop of SEQ steps,
/// dma.fill, mac.mm or vec.max (tests/hostile/sim_*_loop.s; 0.3 to 2.4 s when the machine is not loaded).
struct Limits {
    static constexpr std::uint64_t max_cycles = std::uint64_t{1} << 25;
    static constexpr std::uint64_t max_dma_bytes = std::uint64_t{1} << 30;
    static constexpr std::uint64_t max_macs = std::uint64_t{1} << 31;
    static constexpr std::uint64_t max_vec_ops = std::uint64_t{1} << 29;
};

struct Options {
    Timing timing{};
    std::string name = "program";                     ///< names the program in fault messages
    std::uint64_t max_instructions = std::uint64_t{1} << 32;  ///< SEQ steps before "instruction-limit"
    std::uint64_t max_cycles = Limits::max_cycles;            ///< simulated cycles before "cycle-limit"
    std::uint64_t max_dma_bytes = Limits::max_dma_bytes;      ///< DMA bytes moved or filled before "work-limit"
    std::uint64_t max_macs = Limits::max_macs;                ///< multiply-accumulates before "work-limit"
    std::uint64_t max_vec_ops = Limits::max_vec_ops;          ///< VEC and LUT element operations before "work-limit"
    bool detect_races = true;
    std::size_t max_races = 64;                       ///< distinct race reports kept
    /// When set: resized to the program, entry pc = the last cycle instruction pc completed (SEQ instructions: the
    /// cycle they executed); 0 for instructions that never ran. Per-node cycles (janusc inspect) come from it.
    std::vector<std::uint64_t>* finished = nullptr;
    /// The pc SEQ starts at (a segment's entry point: a program of several segments, each ending with halt, runs
    /// one segment per call over the same machine). Rule entry-range when it is not inside the program.
    std::uint32_t entry = 0;
};

struct UnitStats {
    std::uint64_t busy = 0;          ///< cycles running instructions
    std::uint64_t stall = 0;         ///< cycles with a head blocked on an event (SEQ: on an event or a full queue)
    std::uint64_t instructions = 0;  ///< instructions executed
};

struct Report {
    std::uint64_t cycles = 0;
    std::array<UnitStats, n_units> units{};
    std::uint64_t macs = 0;  ///< int8 multiply-accumulates done by mac.mm / vec.mac
    std::uint64_t dma_bytes = 0;  ///< bytes moved or filled by DMA instructions started (the work limits' count)
    std::uint64_t vec_ops = 0;    ///< VEC and LUT element operations of the instructions started
    std::uint64_t started_macs = 0;  ///< multiply-accumulates of the mac.mm / vec.mac instructions started
    std::vector<Race> races;
    std::uint64_t race_accesses = 0;  ///< conflicting granule accesses, including unreported ones
    std::optional<Error> fault;
    std::array<std::int32_t, 16> regs{};
    std::array<int, 16> events{};
};

/// Whether a fault is one of the run's limits (instruction-limit, cycle-limit, work-limit) rather than a fault of
/// the program's own: a caller that blames a faulting compiled program on the compiler (rule npu-fault) keeps these
/// as the input's (a model or package asking for more work than the limits allow).
inline bool is_limit_fault(const Error& e) {
    return e.rule == "instruction-limit" || e.rule == "cycle-limit" || e.rule == "work-limit";
}

/// Add the report of a run that followed `total`'s on the same machine (the next segment of a program): cycles,
/// unit counters, MACs and races add up; the fault, registers and events are the later run's.
inline void accumulate(Report& total, const Report& next) {
    total.cycles += next.cycles;
    for (std::size_t u = 0; u < total.units.size(); ++u) {
        total.units[u].busy += next.units[u].busy;
        total.units[u].stall += next.units[u].stall;
        total.units[u].instructions += next.units[u].instructions;
    }
    total.macs += next.macs;
    total.dma_bytes += next.dma_bytes;
    total.vec_ops += next.vec_ops;
    total.started_macs += next.started_macs;
    total.races.insert(total.races.end(), next.races.begin(), next.races.end());
    total.race_accesses += next.race_accesses;
    total.fault = next.fault;
    total.regs = next.regs;
    total.events = next.events;
}

/// Configuration state of the DMA and MAC units (set by dma.cfg / mac.cfg, in queue order).
struct DmaConfig {
    std::int64_t rows = 1, src_stride = 0, dst_stride = 0;
};
struct MacConfig {
    std::int64_t m = 16, k = 16, n = 16, a_stride = 16;
};

/// The operand values of an instruction as a unit sees them (registers resolved at dispatch).
struct Work {
    std::uint32_t pc = 0;
    std::uint64_t seq = 0;  ///< dispatch number
    const Instr* in = nullptr;
    std::array<std::int64_t, max_fields> v{};
    Clock dispatch{}, clock{};

    std::int64_t operator[](std::string_view field) const {
        const InstrInfo& r = *in->info;
        for (int k = 0; k < r.n_fields; ++k)
            if (r.fields[static_cast<std::size_t>(k)].name == field) return v[static_cast<std::size_t>(k)];
        JANUS_ASSERT(false && "no such field");
        return 0;
    }
};

namespace detail {

inline std::int32_t load_i32(const std::uint8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

}  // namespace detail

class Simulator {
public:
    Simulator(std::span<const Instr> program, Machine& machine, Options options)
        : prog_(program), m_(machine), opt_(std::move(options)) {
        shadow_.limit = opt_.max_races;
        if (opt_.finished) opt_.finished->assign(prog_.size(), 0);
        if (opt_.detect_races) shadow_.reset(m_);
    }

    Report run() {
        pc_ = opt_.entry;
        if (pc_ >= prog_.size())
            fault(pc_, "entry-range", "the entry pc " + std::to_string(pc_) + " is not inside the program's " +
                                          std::to_string(prog_.size()) + " instructions");
        for (;;) {
            if (rep_.fault) break;
            complete_due();
            if (rep_.fault) break;
            start_ready();
            const Step s = step_seq();
            if (rep_.fault || s == Step::done) break;
            start_ready();
            std::uint64_t next = UINT64_MAX;
            for (int u = 1; u < n_units; ++u)
                if (units_[u].current) next = std::min(next, units_[u].finish);
            if (s == Step::executed) next = std::min(next, t_ + 1);
            if (next == UINT64_MAX) {
                deadlock();
                break;
            }
            if (next > opt_.max_cycles) {
                fault(pc_, "cycle-limit",
                      "the run would pass " + std::to_string(opt_.max_cycles) + " cycles (janusc --max-cycles)");
                break;
            }
            t_ = next;
        }
        if (!rep_.fault && rep_.cycles == 0) rep_.cycles = t_;
        rep_.races = shadow_.races();
        // program order, not discovery order: the report must not depend on timing
        std::sort(rep_.races.begin(), rep_.races.end(), [](const Race& a, const Race& b) {
            return std::tuple(a.first.pc, a.second.pc, a.kind, a.space, a.address) <
                   std::tuple(b.first.pc, b.second.pc, b.kind, b.space, b.address);
        });
        rep_.race_accesses = shadow_.total();
        rep_.regs = regs_;
        for (int e = 0; e < 16; ++e) rep_.events[static_cast<std::size_t>(e)] = static_cast<int>(events_[static_cast<std::size_t>(e)].size());
        return rep_;
    }

private:
    enum class Step { executed, blocked, done };
    struct Loop {
        std::uint32_t start, end;
        std::int64_t remaining;
    };
    struct UnitState {
        std::deque<Work> queue;
        std::optional<Work> current;
        std::uint64_t finish = 0;
        Clock clock{};
        std::optional<std::uint64_t> blocked_since;
    };

    // ---------------------------------------------------------------------------------------------- faults
    void fault(std::uint32_t pc, std::string rule, const std::string& detail) {
        if (rep_.fault) return;
        const std::string text = pc < prog_.size() ? print(prog_[pc]) : std::string("<end of program>");
        rep_.fault = make_error(opt_.name, "pc " + std::to_string(pc), std::move(rule),
                                "cycle " + std::to_string(t_) + ", " + text + ": " + detail);
        rep_.cycles = t_;
    }
    void fault(const Work& w, const Error& e) { fault(w.pc, e.rule, e.input + ": " + e.detail); }

    // ---------------------------------------------------------------------------------------------- memory
    /// Check and record an access; returns the bytes or null after a fault. `allowed`: bit per Space.
    std::uint8_t* local(const Work& w, std::int64_t addr, std::int64_t len, bool write, const char* operand,
                        unsigned allowed) {
        auto r = resolve_local(addr, len, std::string(operand));
        if (!r.ok()) return fault(w, r.error()), nullptr;
        if ((allowed >> static_cast<int>(r->space) & 1u) == 0) {
            std::string spaces;
            for (int s = 0; s < 3; ++s)
                if (allowed >> s & 1u) spaces += (spaces.empty() ? "" : " or ") + std::string(space_name(static_cast<Space>(s)));
            fault(w.pc, "operand-space",
                  std::string(operand) + " = " + hex_address(addr) + " is in " + std::string(space_name(r->space)) +
                      "; " + std::string(w.in->info->mnemonic) + " expects " + spaces);
            return nullptr;
        }
        return touch(w, *r, len, write);
    }
    std::uint8_t* dram(const Work& w, std::int64_t region, std::int64_t off, std::int64_t len, bool write,
                       const char* operand) {
        auto r = resolve_dram(m_, region, off, len, std::string(operand));
        if (!r.ok()) return fault(w, r.error()), nullptr;
        return touch(w, *r, len, write);
    }
    std::uint8_t* touch(const Work& w, const Region& r, std::int64_t len, bool write) {
        if (opt_.detect_races)
            shadow_.access(r.space, r.offset, static_cast<std::uint32_t>(len), write,
                           Actor{w.pc, w.in->info->unit, w.seq}, w.clock);
        return m_.bytes(r.space).data() + r.offset;
    }
    static constexpr unsigned lmem_only = 1u << static_cast<int>(Space::lmem);
    static constexpr unsigned acc_only = 1u << static_cast<int>(Space::acc);
    static constexpr unsigned any_local = 7u;

    // ---------------------------------------------------------------------------------------------- costs
    std::uint64_t cost(const Work& w) const {
        const InstrInfo& r = *w.in->info;
        const Timing& tm = opt_.timing;
        switch (r.cost) {
            case Cost::seq: return 1;
            case Cost::config: return tm.config;
            case Cost::dma: {
                const bool dram = r.sem == Sem::dma_load || r.sem == Sem::dma_store;
                return (dram ? tm.dram_latency : tm.local_latency) +
                       static_cast<std::uint64_t>(dma_.rows) * (2 + static_cast<std::uint64_t>(w["bytes"]) / 16);
            }
            case Cost::mac:
                return static_cast<std::uint64_t>(mac_.k / 16) * static_cast<std::uint64_t>(mac_.n / 16) *
                           (16 + static_cast<std::uint64_t>(mac_.m)) + tm.mac_fixed;
            case Cost::vec: return tm.vec_fixed + static_cast<std::uint64_t>(elements(w)) / 16;
            case Cost::lut: return tm.lut_fixed + static_cast<std::uint64_t>(w["n"]) / 16;
        }
        return 1;
    }
    static std::int64_t elements(const Work& w) {
        return w.in->info->sem == Sem::vec_rq ? w["channels"] * w["rows"] : w["n"];
    }

    // ---------------------------------------------------------------------------------------------- semantics
    void execute(Work& w) {
        switch (w.in->info->sem) {
            case Sem::nop: case Sem::halt: case Sem::li: case Sem::addi: case Sem::alu: case Sem::loop:
            case Sem::sync: return;  // SEQ instructions never reach a unit
            case Sem::dma_cfg: dma_ = {w["rows"], w["src_stride"], w["dst_stride"]}; return;
            case Sem::dma_load:
            case Sem::dma_store:
            case Sem::dma_move:
            case Sem::dma_fill: return dma(w);
            case Sem::mac_cfg: mac_ = {w["m"], w["k"], w["n"], w["a_stride"]}; return;
            case Sem::mac_mm: return mac_mm(w);
            case Sem::vec_rq: return vec_rq(w);
            case Sem::vec_ew: return vec_ew(w);
            case Sem::vec_acc:
            case Sem::vec_mac:
            case Sem::vec_minmax: return vec_simple(w);
            case Sem::vec_i32: return vec_i32(w);
            case Sem::vec_sel: return vec_sel(w);
            case Sem::lut_apply: return lut_apply(w);
        }
    }

    void dma(const Work& w) {
        const Sem sem = w.in->info->sem;
        const std::int64_t bytes = w["bytes"];
        const auto n = static_cast<std::size_t>(bytes);
        for (std::int64_t r = 0; r < dma_.rows; ++r) {
            const std::int64_t so = r * dma_.src_stride, dof = r * dma_.dst_stride;
            if (sem == Sem::dma_fill) {
                std::uint8_t* dst = local(w, w["rd"] + dof, bytes, true, "rd", any_local);
                if (!dst) return;
                std::memset(dst, static_cast<int>(static_cast<std::uint8_t>(w["value"])), n);
                continue;
            }
            // the source is checked (and recorded) before the destination, then the row is copied as a whole
            const std::uint8_t* src = sem == Sem::dma_load ? dram(w, w["region"], w["rs"] + so, bytes, false, "rs")
                                                           : local(w, w["rs"] + so, bytes, false, "rs", any_local);
            if (!src) return;
            std::uint8_t* dst = sem == Sem::dma_store ? dram(w, w["region"], w["rd"] + dof, bytes, true, "rd")
                                                      : local(w, w["rd"] + dof, bytes, true, "rd", any_local);
            if (!dst) return;
            std::memmove(dst, src, n);
        }
    }

    void mac_mm(const Work& w) {
        const std::int64_t M = mac_.m, K = mac_.k, N = mac_.n;
        const auto zp = static_cast<std::int32_t>(w["zp"]);
        const bool accumulate = w.in->info->func == 1;
        for (std::int64_t i = 0; i < M; ++i)  // every row of A is checked (and recorded)
            if (!local(w, w["ra"] + i * mac_.a_stride, K, false, "ra", lmem_only)) return;
        const std::uint8_t* b = local(w, w["rb"], K * N, false, "rb", lmem_only);
        if (!b) return;
        std::uint8_t* c = nullptr;
        if (accumulate && !local(w, w["acc"], 4 * M * N, false, "acc", acc_only)) return;
        if (!(c = local(w, w["acc"], 4 * M * N, true, "acc", acc_only))) return;
        const std::uint8_t* a = m_.bytes(Space::lmem).data() + (w["ra"] - static_cast<std::int64_t>(lmem_base));
        c32_.resize(static_cast<std::size_t>(M * N));
        if (accumulate) std::memcpy(c32_.data(), c, c32_.size() * 4);
        semantics::mac_mm(reinterpret_cast<const std::int8_t*>(a), mac_.a_stride, zp,
                          reinterpret_cast<const std::int8_t*>(b), M, K, N, c32_.data(), accumulate);
        std::memcpy(c, c32_.data(), c32_.size() * 4);
        rep_.macs += static_cast<std::uint64_t>(M * K * N);
    }

    /// Decode one parameter table at p (rule: the layout's fault), or fault and return nothing.
    template <class S, std::size_t N>
    std::optional<S> table(const Work& w, const ParamLayout<S, N>& l, const std::uint8_t* p, const std::string& where) {
        auto r = decode(l, std::span<const std::uint8_t>(p, l.size), "table", where);
        if (!r.ok()) return fault(w.pc, r.error().rule, r.error().detail), std::nullopt;
        return *r;
    }

    void vec_rq(const Work& w) {
        const std::int64_t C = w["channels"], R = w["rows"];
        const std::uint8_t* p = local(w, w["rp"], rq_table_bytes(C), false, "rp", lmem_only);
        if (!p) return;
        const auto h = table(w, rq_header_layout, p, "header");
        if (!h) return;
        channels_.resize(static_cast<std::size_t>(C));
        for (std::int64_t c = 0; c < C; ++c) {
            const auto e = table(w, rq_channel_layout, p + rq_header_layout.size + rq_channel_layout.size * c,
                                 "channel " + std::to_string(c));
            if (!e) return;
            channels_[static_cast<std::size_t>(c)] = *e;
        }
        const std::uint8_t* src = local(w, w["rs"], 4 * R * C, false, "rs", acc_only);
        if (!src) return;
        std::uint8_t* dst = local(w, w["rd"], R * C, true, "rd", lmem_only);
        if (!dst) return;
        i8_.resize(static_cast<std::size_t>(R * C));
        with_rounding(h->rounding, [&](auto rounding) {
            using Rd = decltype(rounding);
            for (std::int64_t r = 0; r < R; ++r)
                for (std::int64_t c = 0; c < C; ++c) {
                    const std::int64_t i = r * C + c;
                    i8_[static_cast<std::size_t>(i)] = semantics::requantize<Rd>(
                        detail::load_i32(src + 4 * i), *h, channels_[static_cast<std::size_t>(c)]);
                }
        });
        std::memcpy(dst, i8_.data(), i8_.size());
    }

    void vec_ew(const Work& w) {
        const std::uint8_t* p = local(w, w["rp"], ew_layout.size, false, "rp", lmem_only);
        if (!p) return;
        const auto params = table(w, ew_layout, p, "");
        if (!params) return;
        semantics::with_ew_func(w.in->info->func, params->rounding, [&](auto f, auto r) {
            constexpr semantics::EwFunc F = decltype(f)::value;
            using Rd = decltype(r);
            int8_map(w, std::array{"ra", "rb"},
                     [&](std::int8_t a, std::int8_t b) { return semantics::elementwise<F, Rd>(a, b, *params); });
        });
    }

    /// dst[rd + i] = f(operands...[i]) over n int8 lanes of LMEM. The operands named in `names` are read (and
    /// recorded) in that order before rd is written; they may alias it (the result goes through a buffer first).
    template <std::size_t K, class F>
    void int8_map(const Work& w, const std::array<const char*, K>& names, const F& f) {
        const std::int64_t n = w["n"];
        std::array<const std::int8_t*, K> in{};
        for (std::size_t k = 0; k < K; ++k)
            if (!(in[k] = reinterpret_cast<const std::int8_t*>(local(w, w[names[k]], n, false, names[k], lmem_only))))
                return;
        auto* d = reinterpret_cast<std::int8_t*>(local(w, w["rd"], n, true, "rd", lmem_only));
        if (!d) return;
        i8_.resize(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
            i8_[static_cast<std::size_t>(i)] = std::apply([&](const auto*... p) { return f(p[i]...); }, in);
        std::memcpy(d, i8_.data(), static_cast<std::size_t>(n));
    }

    void vec_simple(const Work& w) {
        const std::int64_t n = w["n"];
        const Sem sem = w.in->info->sem;
        if (sem == Sem::vec_minmax) {
            const std::int64_t func = w.in->info->func;
            int8_map(w, std::array{"ra", "rb"},
                     [&](std::int8_t a, std::int8_t b) { return semantics::min_max(func, a, b); });
            return;
        }
        const auto zp = static_cast<std::int32_t>(w["zp"]);
        const auto* x = reinterpret_cast<const std::int8_t*>(local(w, w["rx"], n, false, "rx", lmem_only));
        if (!x) return;
        const std::int8_t* wt = nullptr;
        if (sem == Sem::vec_mac && !(wt = reinterpret_cast<const std::int8_t*>(local(w, w["rw"], n, false, "rw", lmem_only))))
            return;
        if (!local(w, w["acc"], 4 * n, false, "acc", acc_only)) return;
        std::uint8_t* acc = local(w, w["acc"], 4 * n, true, "acc", acc_only);
        if (!acc) return;
        i32_.resize(static_cast<std::size_t>(n));
        std::memcpy(i32_.data(), acc, static_cast<std::size_t>(4 * n));
        for (std::int64_t i = 0; i < n; ++i) {
            std::int32_t& a = i32_[static_cast<std::size_t>(i)];
            a = sem == Sem::vec_acc ? semantics::accumulate(a, x[i], zp)
                                    : semantics::multiply_accumulate(a, x[i], zp, wt[i]);
        }
        if (sem == Sem::vec_mac) rep_.macs += static_cast<std::uint64_t>(n);
        std::memcpy(acc, i32_.data(), static_cast<std::size_t>(4 * n));
    }

    /// vec.shl32 / vec.rshr32 / vec.abs32 / vec.add32: int32 ACC -> ACC. Operands are read (and recorded) before
    /// the destination is written; they may alias it.
    void vec_i32(const Work& w) {
        const std::int64_t n = w["n"];
        const std::int64_t func = w.in->info->func;
        const bool two = func == 3;
        const std::uint8_t* a = local(w, w[two ? "ra" : "rs"], 4 * n, false, two ? "ra" : "rs", acc_only);
        if (!a) return;
        const std::uint8_t* b = two ? local(w, w["rb"], 4 * n, false, "rb", acc_only) : nullptr;
        if (two && !b) return;
        std::uint8_t* d = local(w, w["rd"], 4 * n, true, "rd", acc_only);
        if (!d) return;
        const auto N = static_cast<std::size_t>(n);
        const int shift = func <= 1 ? static_cast<int>(w["shift"]) : 0;
        i32_.resize(N);
        for (std::size_t i = 0; i < N; ++i)
            i32_[i] = semantics::int32_op(func, detail::load_i32(a + 4 * i), two ? detail::load_i32(b + 4 * i) : 0,
                                          shift);
        std::memcpy(d, i32_.data(), 4 * N);
    }

    void vec_sel(const Work& w) {
        int8_map(w, std::array{"rc", "ra", "rb"},
                 [](std::int8_t c, std::int8_t a, std::int8_t b) { return semantics::select(c, a, b); });
    }

    void lut_apply(const Work& w) {
        const std::uint8_t* t = local(w, static_cast<std::int64_t>(lut_base) + 256 * w["table"], 256, false, "table",
                                      1u << static_cast<int>(Space::lut));
        if (!t) return;
        std::array<std::uint8_t, 256> table{};  // a copy: the destination is LMEM, never LUT RAM, but stay simple
        std::memcpy(table.data(), t, 256);
        int8_map(w, std::array{"rs"}, [&](std::int8_t x) { return semantics::lookup(table.data(), x); });
    }

    // ---------------------------------------------------------------------------------------------- events
    bool signal(std::uint32_t pc, int e, const Clock& c) {
        auto& q = events_[static_cast<std::size_t>(e)];
        if (q.size() >= 255) {
            fault(pc, "event-overflow", "signal(e" + std::to_string(e) + ") would take its counter past 255");
            return false;
        }
        q.push_back(c);
        return true;
    }

    // ---------------------------------------------------------------------------------------------- units
    void complete_due() {
        for (int u = 1; u < n_units && !rep_.fault; ++u) {
            UnitState& s = units_[u];
            if (!s.current || s.finish > t_) continue;
            Work& w = *s.current;
            execute(w);
            if (rep_.fault) return;
            if (opt_.finished) (*opt_.finished)[w.pc] = t_;
            if (w.in->signal && !signal(w.pc, *w.in->signal, w.clock)) return;
            s.current.reset();
        }
    }

    void start_ready() {
        for (int u = 1; u < n_units; ++u) {
            UnitState& s = units_[u];
            if (s.current || s.queue.empty()) continue;
            Work w = s.queue.front();
            Clock c = join(s.clock, w.dispatch);
            if (w.in->wait) {
                auto& q = events_[static_cast<std::size_t>(*w.in->wait)];
                if (q.empty()) {
                    if (!s.blocked_since) s.blocked_since = t_;
                    continue;
                }
                c = join(c, q.front());
                q.pop_front();
            }
            if (s.blocked_since) rep_.units[static_cast<std::size_t>(u)].stall += t_ - *s.blocked_since, s.blocked_since.reset();
            s.queue.pop_front();
            ++c[static_cast<std::size_t>(u)];
            s.clock = c;
            w.clock = c;
            if (!charge_work(w)) return;
            const std::uint64_t d = cost(w);
            rep_.units[static_cast<std::size_t>(u)].busy += d;
            ++rep_.units[static_cast<std::size_t>(u)].instructions;
            s.finish = t_ + d;
            s.current = w;
        }
    }

    /// Count the work of `w`, about to start, against the limits; false after a work-limit fault.
    bool charge_work(const Work& w) {
        const Sem sem = w.in->info->sem;
        const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); };
        const auto over = [&](std::uint64_t& total, std::uint64_t add, std::uint64_t limit, const char* what,
                              const char* option) {
            total += add;  // add <= 2^46 per instruction (field ranges), so the sum cannot wrap before the check
            if (total <= limit) return false;
            fault(w.pc, "work-limit",
                  std::string("the run would pass ") + std::to_string(limit) + " " + what + " (janusc " + option + ")");
            return true;
        };
        switch (w.in->info->cost) {
            case Cost::dma:
                return !over(rep_.dma_bytes, u64(dma_.rows) * u64(w["bytes"]), opt_.max_dma_bytes, "DMA bytes", "--max-dma-bytes");
            case Cost::mac:
                return sem != Sem::mac_mm ||
                       !over(rep_.started_macs, u64(mac_.m) * u64(mac_.k) * u64(mac_.n), opt_.max_macs,
                             "multiply-accumulates", "--max-macs");
            case Cost::vec:
            case Cost::lut: {
                const std::uint64_t n = sem == Sem::lut_apply ? u64(w["n"]) : u64(elements(w));
                if (sem == Sem::vec_mac && over(rep_.started_macs, n, opt_.max_macs, "multiply-accumulates", "--max-macs"))
                    return false;
                return !over(rep_.vec_ops, n, opt_.max_vec_ops, "VEC and LUT element operations", "--max-vec-ops");
            }
            case Cost::seq:
            case Cost::config:
                return true;
        }
        return true;
    }

    bool units_idle() const {
        for (int u = 1; u < n_units; ++u)
            if (units_[u].current || !units_[u].queue.empty()) return false;
        return true;
    }

    Step blocked() {
        if (!seq_blocked_since_) seq_blocked_since_ = t_;
        return Step::blocked;
    }

    Step step_seq() {
        if (pc_ >= prog_.size()) {
            fault(pc_, "missing-halt", "the program ran past its last instruction without a halt");
            return Step::done;
        }
        const Instr& in = prog_[pc_];
        const InstrInfo& r = *in.info;
        if (r.unit != Unit::seq) {
            UnitState& s = units_[static_cast<int>(r.unit)];
            if (s.queue.size() >= 8) return blocked();
            Work w;
            w.pc = pc_;
            w.seq = steps_;
            w.in = &in;
            for (int k = 0; k < r.n_fields; ++k) {
                const auto ks = static_cast<std::size_t>(k);
                w.v[ks] = r.fields[ks].kind == FieldKind::reg
                              ? static_cast<std::int64_t>(static_cast<std::uint32_t>(regs_[static_cast<std::size_t>(in.operands[ks])]))
                              : in.operands[ks];
            }
            w.dispatch = seq_clock_;
            s.queue.push_back(w);
        } else {
            // waits: the header's plus SYNC's mask, all at once
            std::array<int, 16> need{};
            if (in.wait) ++need[static_cast<std::size_t>(*in.wait)];
            if (r.sem == Sem::sync)
                for (int e = 0; e < 16; ++e) need[static_cast<std::size_t>(e)] += static_cast<int>((in.operands[0] >> e) & 1);
            for (int e = 0; e < 16; ++e)
                if (events_[static_cast<std::size_t>(e)].size() < static_cast<std::size_t>(need[static_cast<std::size_t>(e)]))
                    return blocked();
            if (r.sem == Sem::halt && !units_idle()) return blocked();
            for (int e = 0; e < 16; ++e)
                for (int k = 0; k < need[static_cast<std::size_t>(e)]; ++k) {
                    seq_clock_ = join(seq_clock_, events_[static_cast<std::size_t>(e)].front());
                    events_[static_cast<std::size_t>(e)].pop_front();
                }
            if (!exec_seq(in)) return Step::done;
            if (opt_.finished) (*opt_.finished)[pc_] = t_;
            if (in.signal && !signal(pc_, *in.signal, seq_clock_)) return Step::done;
            if (r.sem == Sem::sync)
                for (int e = 0; e < 16; ++e)
                    if (((in.operands[1] >> e) & 1) && !signal(pc_, e, seq_clock_)) return Step::done;
            if (r.sem == Sem::halt) {
                std::string leaked;
                for (int e = 0; e < 16; ++e)
                    if (!events_[static_cast<std::size_t>(e)].empty())
                        leaked += (leaked.empty() ? "" : ", ") + std::string("e") + std::to_string(e) + " = " +
                                  std::to_string(events_[static_cast<std::size_t>(e)].size());
                account_seq();
                ++rep_.units[0].instructions;
                ++rep_.units[0].busy;
                rep_.cycles = t_ + 1;
                if (!leaked.empty()) fault(pc_, "leaked-event", "event counters are not 0 at halt: " + leaked);
                return Step::done;
            }
        }
        account_seq();
        ++seq_clock_[0];
        ++rep_.units[0].instructions;
        ++rep_.units[0].busy;
        if (++steps_ > opt_.max_instructions) {
            fault(pc_, "instruction-limit", "more than " + std::to_string(opt_.max_instructions) + " SEQ steps");
            return Step::done;
        }
        advance();
        return rep_.fault ? Step::done : Step::executed;
    }

    void account_seq() {
        if (seq_blocked_since_) rep_.units[0].stall += t_ - *seq_blocked_since_, seq_blocked_since_.reset();
    }

    bool exec_seq(const Instr& in) {
        const auto reg = [&](int k) { return regs_[static_cast<std::size_t>(in.operands[static_cast<std::size_t>(k)])]; };
        const auto set = [&](std::int64_t v) {
            if (in.operands[0] != 0) regs_[static_cast<std::size_t>(in.operands[0])] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
        };
        const auto u = [](std::int32_t v) { return static_cast<std::uint32_t>(v); };
        switch (in.info->sem) {
            case Sem::li: set(in.operands[1]); break;
            case Sem::addi: set(static_cast<std::int64_t>(u(reg(1)) + static_cast<std::uint32_t>(in.operands[2]))); break;
            case Sem::alu: {
                const std::int32_t a = reg(1), b = reg(2);
                const int sh = b & 31;
                std::uint32_t v = 0;
                switch (in.info->func) {
                    case 0: v = u(a) + u(b); break;
                    case 1: v = u(a) - u(b); break;
                    case 2: v = u(a) * u(b); break;
                    case 3: v = u(a) << sh; break;
                    case 4: v = u(a >> sh); break;
                    case 5: v = u(a) >> sh; break;
                    case 6: v = u(a) & u(b); break;
                    case 7: v = u(a) | u(b); break;
                    case 8: v = u(a) ^ u(b); break;
                    case 9: v = u(std::min(a, b)); break;
                    default: v = u(std::max(a, b)); break;
                }
                set(v);
                break;
            }
            case Sem::loop: {
                const std::int64_t count = in.operands[0], body = in.operands[1];
                const auto end = static_cast<std::uint32_t>(pc_ + body);
                if (loops_.size() >= 2) return fault(pc_, "loop-depth", "a third nested loop (hardware loops nest at most 2 deep)"), false;
                if (end >= prog_.size())
                    return fault(pc_, "loop-past-end", "the body ends at pc " + std::to_string(end) + ", past the program"), false;
                if (!loops_.empty() && end > loops_.back().end)
                    return fault(pc_, "loop-nesting",
                                 "the body ends at pc " + std::to_string(end) + ", after the enclosing loop's body (pc " +
                                     std::to_string(loops_.back().end) + ")"),
                           false;
                loops_.push_back({pc_ + 1, end, count});
                break;
            }
            default: break;  // nop, sync, halt: events only
        }
        return true;
    }

    void advance() {
        std::uint32_t next = pc_ + 1;
        while (!loops_.empty() && loops_.back().end == pc_) {
            if (--loops_.back().remaining > 0) {
                next = loops_.back().start;
                break;
            }
            loops_.pop_back();
        }
        pc_ = next;
    }

    void deadlock() {
        std::string d = "every unit is blocked and nothing is in flight;";
        const auto head = [&](const Instr& in) {
            return print(in) + (in.wait ? " (e" + std::to_string(*in.wait) + " = 0)" : std::string());
        };
        d += " SEQ at pc " + std::to_string(pc_) + ": " + (pc_ < prog_.size() ? head(prog_[pc_]) : "-");
        for (int u = 1; u < n_units; ++u) {
            const UnitState& s = units_[u];
            d += "; " + std::string(unit_name(static_cast<Unit>(u))) + ": ";
            d += s.queue.empty() ? std::string("empty")
                                 : "pc " + std::to_string(s.queue.front().pc) + " " + head(*s.queue.front().in) +
                                       " (+" + std::to_string(s.queue.size() - 1) + " queued)";
        }
        fault(pc_, "deadlock", d);
    }

    std::span<const Instr> prog_;
    Machine& m_;
    Options opt_;
    Shadow shadow_;
    Report rep_;
    std::uint64_t t_ = 0, steps_ = 0;
    std::uint32_t pc_ = 0;
    std::array<std::int32_t, 16> regs_{};
    std::array<std::deque<Clock>, 16> events_;
    std::vector<Loop> loops_;
    Clock seq_clock_{};
    std::optional<std::uint64_t> seq_blocked_since_;
    std::array<UnitState, n_units> units_;
    DmaConfig dma_;
    MacConfig mac_;
    std::vector<std::int32_t> c32_, i32_;
    std::vector<std::int8_t> i8_;
    std::vector<RqChannel> channels_;
};

/// Run `program` on `machine` (see the header comment).
inline Report run(std::span<const Instr> program, Machine& machine, Options options = {}) {
    return Simulator(program, machine, std::move(options)).run();
}

/// The report as text: cycles, the per-unit table, the races and the fault (janusc sim prints this).
inline std::string format_report(const Report& r, std::span<const Instr> program) {
    std::string s = "cycles: " + std::to_string(r.cycles) + "\n";
    s += "unit  instructions        busy       stall\n";
    for (int u = 0; u < n_units; ++u) {
        char line[96];
        const auto& x = r.units[static_cast<std::size_t>(u)];
        std::snprintf(line, sizeof line, "%-4s %13llu %11llu %11llu\n", std::string(unit_name(static_cast<Unit>(u))).c_str(),
                      static_cast<unsigned long long>(x.instructions), static_cast<unsigned long long>(x.busy),
                      static_cast<unsigned long long>(x.stall));
        s += line;
    }
    s += "macs: " + std::to_string(r.macs) + "\n";
    const auto who = [&](const Actor& a) {
        return "pc " + std::to_string(a.pc) + " (" + std::string(unit_name(a.unit)) + ": " +
               (a.pc < program.size() ? print(program[a.pc]) : std::string("?")) + ")";
    };
    s += "races: " + std::to_string(r.races.size()) + "\n";
    for (const Race& x : r.races) {
        s += "  " + std::string(race_kind_name(x.kind)) + " on " + std::string(space_name(x.space)) + " " +
             hex_address(x.address) + " (" +
             std::to_string(x.granules) + " granule" + (x.granules == 1 ? "" : "s") + "): " + who(x.first) +
             " is not ordered before " + who(x.second) + "\n";
    }
    if (r.fault) s += r.fault->message() + "\n";
    return s;
}

}  // namespace janus::vnpu::sim
