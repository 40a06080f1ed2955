// Simulator: the race detector (seed C6), faults with precise messages (seeds C4, B6), event semantics, the timing
// report, and determinism.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim_support.hpp"

using namespace vt;

namespace {

/// Races must not depend on the timing parameters: run with the default model and with a very different one.
std::vector<sim::Race> races_under_two_timings(std::string_view text, const sim::Machine& init) {
    sim::Machine a = init, b = init;
    const Run ra = run_text(text, a);
    sim::Options slow;
    slow.timing = {1, 1000, 5000, 1, 1, 700};  // DRAM fast, everything else very slow
    const Run rb = run_text(text, b, slow);
    REQUIRE_FALSE(ra.report.fault.has_value());
    REQUIRE_FALSE(rb.report.fault.has_value());
    REQUIRE(ra.report.races.size() == rb.report.races.size());
    for (std::size_t i = 0; i < ra.report.races.size(); ++i) {
        CHECK(ra.report.races[i].kind == rb.report.races[i].kind);
        CHECK(ra.report.races[i].first.pc == rb.report.races[i].first.pc);
        CHECK(ra.report.races[i].second.pc == rb.report.races[i].second.pc);
    }
    CHECK(ra.report.cycles != rb.report.cycles);
    return ra.report.races;
}

sim::Machine with_input(std::size_t bytes) {
    sim::Machine m;
    m.dram[2].resize(bytes);
    m.dram[3].resize(bytes);
    return m;
}

bool has(const std::vector<sim::Race>& rs, sim::RaceKind k, std::uint32_t first, std::uint32_t second) {
    for (const auto& r : rs)
        if (r.kind == k && r.first.pc == first && r.second.pc == second) return true;
    return false;
}

}  // namespace

TEST_CASE("race: a consumer with no wait at all is RAW against the producer") {
    const auto rs = races_under_two_timings(R"(
        li r1, 0x100
        dma.load r1, input, r0, 256
        lut.apply r1, r1, 0, 256
        halt
    )",
                                            with_input(256));
    REQUIRE(rs.size() >= 1);
    CHECK(has(rs, sim::RaceKind::raw, 1, 2));
    CHECK(rs[0].space == sim::Space::lmem);
    CHECK(rs[0].address == 0x100);
    CHECK(rs[0].granules == 16);
}

TEST_CASE("race (seed C6): the wait covers an earlier DMA, not the real producer, and timing hides it") {
    // Both loads run on DMA; the second one writes the data VEC reads, but the event comes from the first. With the
    // slow timing below (DRAM latency 1, VEC slow) the second load happens to finish before VEC reads, so the data is
    // right by luck; the detector must report the race under both timings.
    // the program `janusc sim` reports in tests/janusc/cli_test.sh: one copy, read from the source tree
    std::ifstream f(std::string(JANUS_SOURCE_DIR) + "/tests/janusc/race.s", std::ios::binary);
    REQUIRE(f);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto rs = races_under_two_timings(text, with_input(64));
    CHECK(rs.size() == 1);
    CHECK(has(rs, sim::RaceKind::raw, 3, 4));
}

TEST_CASE("race: waiting on the wrong event orders nothing") {
    const auto rs = races_under_two_timings(R"(
        li r1, 0x100
        dma.load r1, input, r0, 16 signal(e0)
        nop signal(e1)
        lut.apply r1, r1, 0, 16 wait(e1)
        sync 0x0001, 0x0000
        halt
    )",
                                            with_input(64));
    CHECK(has(rs, sim::RaceKind::raw, 1, 3));
}

TEST_CASE("race: WAR -- VEC overwrites a buffer a DMA store may still be reading; WAW between two writers") {
    const auto rs = races_under_two_timings(R"(
        li r1, 0x100
        dma.store output, r0, r1, 64 signal(e0)
        vec.max r1, r1, r1, 16
        dma.fill r1, 0, 16
        sync 0x0001, 0x0000
        halt
    )",
                                            with_input(64));
    CHECK(has(rs, sim::RaceKind::war, 1, 2));
    CHECK(has(rs, sim::RaceKind::waw, 2, 3));
}

TEST_CASE("race: ACC granules are 64 B -- MAC writes partial sums VEC joins without waiting; vec.sel reads a mask") {
    const auto rs = races_under_two_timings(R"(
        li r1, 0x80000
        li r2, 0x80400
        mac.cfg 1, 16, 16, 16
        mac.mm r2, r0, r0, 0            ; ACC[0x400 .. 0x440)
        vec.add32 r1, r1, r2, 16        ; reads it: RAW (one 64-B granule)
        li r3, 0x100
        dma.load r3, input, r0, 16
        vec.sel r0, r3, r0, r0, 16      ; the mask is still being loaded: RAW (and WAR with the mac.mm reading A, B)
        halt
    )",
                                            with_input(64));
    CHECK(has(rs, sim::RaceKind::raw, 3, 4));
    CHECK(has(rs, sim::RaceKind::raw, 6, 7));
    for (const auto& r : rs)
        if (r.first.pc == 3 && r.second.pc == 4) {
            CHECK(r.space == sim::Space::acc);
            CHECK(r.address == 0x400);
            CHECK(r.granules == 1);
        }
}

TEST_CASE("race: a DMA store of ACC (int32 sums) without waiting for the mac.mm that writes it is RAW on ACC") {
    const char* racy = R"(
        li r1, 0x80000
        li r2, 0x100
        mac.cfg 4, 16, 16, 16
        mac.mm r1, r2, r2, 5
        dma.cfg 4, 64, 64
        dma.store output, r0, r1, 64     ; reads the 4 rows of sums with no event: RAW (4 granules of 64 B)
        halt
    )";
    const auto rs = races_under_two_timings(racy, with_input(256));
    REQUIRE(rs.size() == 1);
    CHECK(has(rs, sim::RaceKind::raw, 3, 5));
    CHECK(rs[0].space == sim::Space::acc);
    CHECK(rs[0].granules == 4);
    CHECK(rs[0].first.unit == Unit::mac);
    CHECK(rs[0].second.unit == Unit::dma);
    // the product's event orders it
    sim::Machine m = with_input(256);
    run_clean(R"(
        li r1, 0x80000
        li r2, 0x100
        mac.cfg 4, 16, 16, 16
        mac.mm r1, r2, r2, 5 signal(e3)
        dma.cfg 4, 64, 64
        dma.store output, r0, r1, 64 wait(e3)
        halt
    )", m);
}

TEST_CASE("no race: producer -> event -> consumer, and a SEQ sync orders everything dispatched after it") {
    sim::Machine m = with_input(64);
    run_clean(R"(
        li r1, 0x100
        dma.load r1, input, r0, 16 signal(e0)
        lut.apply r1, r1, 0, 16 wait(e0) signal(e1)
        sync 0x0002, 0x0000         ; SEQ waits for the LUT
        dma.store output, r0, r1, 16 signal(e2)
        vec.max r1, r1, r1, 16 wait(e2)   ; WAR against the store, ordered by e2
        halt
    )",
              m);
}

TEST_CASE("events are FIFOs of clocks: the k-th wait takes the k-th signal's ordering") {
    // Two producers signal e0 in order; the consumer of the SECOND buffer waits once: it is ordered after the first
    // load only, so its read of the second buffer is a race; waiting twice fixes it.
    const char* once = R"(
        li r1, 0x100
        li r2, 0x200
        dma.load r1, input, r0, 16 signal(e0)
        dma.load r2, input, r0, 16 signal(e0)
        lut.apply r2, r2, 0, 16 wait(e0)
        sync 0x0001, 0x0000
        halt
    )";
    CHECK(has(races_under_two_timings(once, with_input(64)), sim::RaceKind::raw, 3, 4));
    sim::Machine m = with_input(64);
    run_clean(R"(
        li r1, 0x100
        li r2, 0x200
        dma.load r1, input, r0, 16 signal(e0)
        dma.load r2, input, r0, 16 signal(e0)
        sync 0x0001, 0x0000
        lut.apply r2, r2, 0, 16 wait(e0)
        halt
    )",
              m);
}

namespace {
void check_fault(std::string_view text, sim::Machine m, const std::string& rule, const std::string& pc,
                 const std::string& fragment) {
    const Run r = run_text(text, m);
    REQUIRE(r.report.fault.has_value());
    CHECK(r.report.fault->rule == rule);
    CHECK(r.report.fault->input == "program");
    CHECK(r.report.fault->position == pc);
    CHECK_MESSAGE(r.report.fault->detail.find(fragment) != std::string::npos, r.report.fault->message());
}
}  // namespace

TEST_CASE("faults (seed C4): encodable but unmapped, past a space's end, misaligned, wrong space, DRAM bounds") {
    sim::Machine m = with_input(64);
    check_fault("li r1, 0x50000\ndma.load r1, input, r0, 16\nhalt\n", m, "unmapped-address", "pc 1",
                "encodable but maps to no memory");
    check_fault("li r1, 0x3fff0\ndma.load r1, input, r0, 32\nhalt\n", m, "unmapped-address", "pc 1",
                "runs past the end of LMEM");
    check_fault("li r1, 0x100000\ndma.load r1, input, r0, 16\nhalt\n", m, "unmapped-address", "pc 1", "20-bit");
    check_fault("li r1, 0x108\ndma.load r1, input, r0, 16\nhalt\n", m, "alignment", "pc 1", "not a multiple of 16");
    check_fault("li r1, 0x80010\nvec.acc r1, r0, 0, 16\nhalt\n", m, "alignment", "pc 1", "multiple of 64");
    check_fault("li r1, 0x80000\nmac.mm r0, r1, r0, 0\nhalt\n", m, "operand-space", "pc 1",
                "ra = 0x80000 is in ACC; mac.mm expects LMEM");
    check_fault("li r2, 64\ndma.load r0, input, r2, 16\nhalt\n", m, "dram-bounds", "pc 1", "DRAM input (64 B)");
    check_fault("dma.load r0, scratch, r0, 16\nhalt\n", m, "dram-bounds", "pc 0", "DRAM scratch (0 B)");
}

TEST_CASE("fault (seed B6): the first row fits, the third does not -- every row is checked") {
    sim::Machine m = with_input(64);
    check_fault("dma.cfg 3, 32, 16\ndma.load r0, input, r0, 16\nhalt\n", m, "dram-bounds", "pc 1", "[64, 80)");
}

TEST_CASE("faults: event overflow, leaked event, deadlock dump, loops, missing halt, instruction limit, tables") {
    sim::Machine m;
    std::string many;
    for (int i = 0; i < 256; ++i) many += "nop signal(e4)\n";
    check_fault(many + "halt\n", m, "event-overflow", "pc 255", "past 255");
    check_fault("nop signal(e2)\nnop signal(e2)\nhalt\n", m, "leaked-event", "pc 2", "e2 = 2");
    check_fault("li r1, 0x100\nvec.max r1, r1, r1, 16 wait(e7)\ndma.fill r1, 0, 16 wait(e8)\nhalt\n", m, "deadlock",
                "pc 3", "VEC: pc 1 vec.max r1, r1, r1, 16 wait(e7) (e7 = 0)");
    check_fault("loop 2, 3\nloop 2, 2\nloop 2, 1\nnop\nhalt\n", m, "loop-depth", "pc 2", "third nested loop");
    check_fault("loop 2, 2\nloop 2, 2\nnop\nnop\nhalt\n", m, "loop-nesting", "pc 1", "after the enclosing loop");
    check_fault("nop\nloop 2, 1\n", m, "loop-past-end", "pc 1", "past the program");
    check_fault("nop\n", m, "missing-halt", "pc 1", "without a halt");
    sim::Machine t;
    put_rq_table(t.lmem, 0, 0, -128, 127, std::vector<std::int32_t>(16, 0),
                 std::vector<numeric::QuantizedMultiplier>(16, {1 << 30, 0}));
    t.lmem[16 + 16 * 3 + 12] = 1;  // a reserved byte of channel 3
    check_fault("li r1, 0x80000\nli r2, 0x1000\nvec.rq r2, r1, r0, 16, 1\nhalt\n", t, "rq-table", "pc 2",
                "channel 3: reserved byte 12 is 1");
    t.lmem[16 + 16 * 3 + 12] = 0;
    t.lmem[16 + 16 * 5 + 8] = 0;  // t = 0: not a shift the table can hold
    check_fault("li r1, 0x80000\nli r2, 0x1000\nvec.rq r2, r1, r0, 16, 1\nhalt\n", t, "rq-table", "pc 2", "channel 5");
    t.lmem[16 + 16 * 5 + 8] = 31;
    t.lmem[12] = 3;  // the header's rounding: 0..2 only
    check_fault("li r1, 0x80000\nli r2, 0x1000\nvec.rq r2, r1, r0, 16, 1\nhalt\n", t, "rq-table", "pc 2",
                "header: rounding = 3 (bytes 12..15) is outside [0, 2]");
    put_i32(t.lmem, 0x400 + 44, -1);  // an elementwise block whose rounding word is -1
    check_fault("li r1, 0x400\nvec.ew.add r0, r0, r0, r1, 16\nhalt\n", t, "ew-table", "pc 1",
                "rounding = -1 (bytes 44..47) is outside [0, 2]");
    check_fault("li r1, 0x80000\nvec.sel r0, r0, r1, r0, 16\nhalt\n", t, "operand-space", "pc 1",
                "ra = 0x80000 is in ACC; vec.sel expects LMEM");
    check_fault("li r1, 0x100\nvec.abs32 r0, r1, 16\nhalt\n", t, "operand-space", "pc 1",
                "rs = 0x00100 is in LMEM; vec.abs32 expects ACC");
    sim::Options limit;
    limit.max_instructions = 1000;
    const Run r = run_text("loop 16384, 1\nnop\nhalt\n", m, limit);
    REQUIRE(r.report.fault.has_value());
    CHECK(r.report.fault->rule == "instruction-limit");
}

TEST_CASE("fault message: program:pc N: error: cycle T, <instruction>: <operand>: <sentence> [rule]") {
    sim::Machine m;
    const Run r = run_text("li r1, 0x50000\ndma.fill r1, 0, 16\nhalt\n", m);
    REQUIRE(r.report.fault.has_value());
    CHECK(r.report.fault->message() ==
          "program:pc 1: error: cycle 12, dma.fill r1, 0, 16: rd: local address 0x50000 is encodable but maps to no "
          "memory (LMEM 0x00000-0x3ffff, ACC 0x80000-0x8ffff, LUT RAM 0xc0000-0xc03ff) [unmapped-address]");
}

TEST_CASE("timing: queue depth 8 stalls SEQ; busy, stall and total cycles add up") {
    sim::Machine m;
    std::string text = "li r1, 0x100\n";
    for (int i = 0; i < 12; ++i) text += "dma.fill r1, 0, 16\n";  // 8 + (2 + 1) = 11 cycles each
    text += "halt\n";
    const Run r = run_clean(text, m);
    const auto& dma = r.report.units[1];
    CHECK(dma.instructions == 12);
    CHECK(dma.busy == 12 * 11);
    // the DMA starts the first fill at cycle 1 and runs back to back; halt executes when it drains
    CHECK(r.report.cycles == 1 + 12 * 11 + 1);
    CHECK(r.report.units[0].stall > 0);
    CHECK(r.report.units[0].busy == 14);
}

TEST_CASE("determinism: same program, same report text and same bytes, every run") {
    const char* text = R"(
        li r1, 0x100
        li r2, 0x80000
        dma.cfg 4, 16, 16
        dma.load r1, input, r0, 16 signal(e0)
        mac.cfg 4, 16, 16, 16
        mac.mm r2, r1, r1, 3 wait(e0) signal(e1)
        dma.cfg 1, 0, 0
        dma.store output, r0, r1, 64 wait(e1)
        vec.max r1, r1, r1, 16      ; races with the load (RAW, WAW): reported the same way every time
        halt
    )";
    sim::Machine init = with_input(64);
    for (int i = 0; i < 64; ++i) init.dram[2][static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 37);
    std::string first_report;
    sim::Machine first;
    for (int run = 0; run < 3; ++run) {
        sim::Machine m = init;
        const Run r = run_text(text, m);
        const std::string rep = janus_test::report_text(r.report, r.program);
        if (run == 0) {
            first_report = rep, first = m;
            CHECK(rep.find("races: 2") != std::string::npos);
        } else {
            CHECK(rep == first_report);
            CHECK(m.lmem == first.lmem);
            CHECK(m.acc == first.acc);
            CHECK(m.dram == first.dram);
        }
    }
}

TEST_CASE("entry: a program of segments runs one segment per call over one machine; entry-range") {
    // segment 0 (pc 0..2) fills LMEM 0x100; segment 1 (pc 3..4) uses r1 without setting it: registers start at 0
    // in every run, while the memories keep what the previous segment wrote
    const auto p = assemble("li r1, 0x100\ndma.fill r1, 7, 16\nhalt\ndma.fill r1, 9, 16\nhalt\n", "seg.s");
    REQUIRE(p.ok());
    sim::Machine m;
    const sim::Report r0 = janus_test::simulate(*p, m, {});
    REQUIRE_FALSE(r0.fault.has_value());
    CHECK(r0.regs[1] == 0x100);
    CHECK(m.lmem[0x100] == 7);
    CHECK(m.lmem[0] == 0);
    sim::Options second;
    second.entry = 3;
    const sim::Report r1 = janus_test::simulate(*p, m, second);
    REQUIRE_FALSE(r1.fault.has_value());
    CHECK(r1.regs[1] == 0);
    CHECK(m.lmem[0] == 9);
    CHECK(m.lmem[0x100] == 7);
    CHECK(r1.units[0].instructions == 2);  // dma.fill dispatched, halt
    sim::Report total = r0;
    sim::accumulate(total, r1);
    CHECK(total.cycles == r0.cycles + r1.cycles);
    CHECK(total.units[1].instructions == 2);
    sim::Options past;
    past.entry = 5;
    const sim::Report r2 = janus_test::simulate(*p, m, past);
    REQUIRE(r2.fault.has_value());
    CHECK(r2.fault->rule == "entry-range");
    CHECK(r2.fault->message().find("the entry pc 5 is not inside the program's 5 instructions") != std::string::npos);
}
