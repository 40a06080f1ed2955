// Fuzz target: the vnpu simulator (vnpu/sim/simulator.hpp) on arbitrary programs, the input of `janusc sim`.
//
// Input: bytes 0..3 give the sizes of the four DRAM regions (byte * 16 B), byte 4 seeds their contents; the rest is
// little-endian 64-bit instruction words (undecodable words are skipped, a halt is appended).
// Properties (a __builtin_trap() when broken):
//   1. run() returns: the program ends at HALT, or with a fault that is a well-formed Error (input, position, rule
//      and detail non-empty). It never crashes, reads outside a memory or hangs (instruction limit 20000, and low
//      cycle and work limits: cycle-limit, work-limit).
//   2. determinism: a second run on a copy of the initial machine gives the same report text and the same bytes.
// (Timing independence of race reports holds per program only when each event has one signalling unit, see
// simulator.hpp; tests/vnpu/sim_checks.cpp checks it on such programs.)
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <janus/vnpu/sim/simulator.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "vnpu_sim: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus::vnpu;
    if (size < 5) return 0;
    // Two machines kept across executions and cleared in place: allocating 1.3 MiB of fresh memory per run (page
    // faults under ASan) was most of this target's time.
    static sim::Machine a, b;
    std::array<std::vector<std::uint8_t>, 4> dram;
    std::uint32_t x = data[4] * 2654435761u + 1;
    for (int r = 0; r < 4; ++r) {
        dram[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(data[r]) * 16);
        for (auto& v : dram[static_cast<std::size_t>(r)]) v = static_cast<std::uint8_t>((x = x * 1103515245u + 12345u) >> 24);
    }
    for (sim::Machine* m : {&a, &b}) {
        std::fill(m->lmem.begin(), m->lmem.end(), 0);
        std::fill(m->acc.begin(), m->acc.end(), 0);
        std::fill(m->lut.begin(), m->lut.end(), 0);
        m->dram = dram;
    }
    std::vector<Instr> prog;
    for (std::size_t at = 5; at + 8 <= size; at += 8) {
        Word w = 0;
        for (int b = 0; b < 8; ++b) w |= static_cast<Word>(data[at + static_cast<std::size_t>(b)]) << (8 * b);
        if (auto in = decode(w); in.ok()) prog.push_back(*in);
    }
    prog.push_back(*decode(Word{1} << 58));  // halt
    sim::Options opt;
    opt.max_instructions = 20000;
    // the work limits (issue 26), low: a loop around a 1 MiB dma.fill or a large mac.mm stays fast to fuzz
    opt.max_cycles = std::uint64_t{1} << 22;
    opt.max_dma_bytes = std::uint64_t{1} << 24;
    opt.max_macs = std::uint64_t{1} << 24;
    opt.max_vec_ops = std::uint64_t{1} << 22;
    const sim::Report ra = sim::run(prog, a, opt);
    if (ra.fault) {
        const auto& e = *ra.fault;
        check(!e.input.empty() && !e.position.empty() && !e.rule.empty() && !e.detail.empty(), "well-formed fault");
    }
    const sim::Report rb = sim::run(prog, b, opt);
    check(sim::format_report(ra, prog) == sim::format_report(rb, prog), "same report twice");
    check(a.lmem == b.lmem && a.acc == b.acc && a.lut == b.lut && a.dram == b.dram, "same bytes twice");
    return 0;
}
