// Dependency-driven synchronization (emit/schedule.hpp), seeds C2, C3, C6: events derived from declared accesses,
// 16 events for any number of forks and joins, memory reuse after a view's base is freed ordered after the view's
// asynchronous readers. The simulator's race detector is the oracle; negative controls show it reports the races
// the scheduler prevents.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include <janus/emit/schedule.hpp>
#include "support/compiled_sim.hpp"

#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

constexpr int rounds = 40;
constexpr std::int64_t zp = -3;
constexpr std::uint32_t lut_at = 0xC0000;  // LUT RAM table 0

std::uint8_t table_of(int i) { return static_cast<std::uint8_t>(i * 7 + 3); }

/// One program: per round, a DMA load of 64 B into X feeds three units (a fork): VEC copies X to Y (vec.max of X
/// with itself), LUT maps X to Z, MAC multiplies X (4 rows of 16) by the 16 x 16 identity into ACC; three DMA
/// stores write Y, Z and ACC out (a join on the next load of X, which must wait for the three readers of X).
/// `scheduled`: through the Scheduler; otherwise the same instructions with no event at all (the negative control).
/// `declare_y_write`: whether VEC's write of Y is declared (a wrong declaration is a race the detector sees).
struct ForkJoin {
    Builder b{"forkjoin"};
    Scheduler::Stats stats;
};

void build_fork_join(ForkJoin& f, bool scheduled, bool declare_y_write = true) {
    Builder& b = f.b;
    std::vector<std::uint8_t> ident(256, 0), table(256);
    for (int i = 0; i < 16; ++i) ident[static_cast<std::size_t>(i * 16 + i)] = 1;
    for (int i = 0; i < 256; ++i) table[static_cast<std::size_t>(i)] = table_of(i);
    const std::uint32_t ident_at = b.constant(ident), table_at = b.constant(table);
    auto X = b.alloc(Mem::lmem, 64, "X").value();
    auto Y = b.alloc(Mem::lmem, 64, "Y").value();
    auto Z = b.alloc(Mem::lmem, 64, "Z").value();
    auto I = b.alloc(Mem::lmem, 256, "identity").value();
    auto A = b.alloc(Mem::acc, 256, "ACC").value();
    auto T = b.alloc(Mem::lut, 256, "table").value();
    REQUIRE(T.address() == lut_at);
    auto rx = b.reg("x").value(), ry = b.reg("y").value(), rz = b.reg("z").value(), ri = b.reg("i").value(),
         ra = b.reg("acc").value(), rd = b.reg("dram").value(), rt = b.reg("t").value();
    Scheduler s(b, "forkjoin");
    const auto add = [&](std::string_view m, std::initializer_list<Operand> ops,
                         std::initializer_list<Access> acc = {}) {
        if (scheduled)
            REQUIRE(s.add(m, ops, acc).ok());
        else
            REQUIRE(b.emit(m, ops).ok());
    };
    for (const auto& [r, v] : {std::pair{&rx, X.address()},
                               {&ry, Y.address()},
                               {&rz, Z.address()},
                               {&ri, I.address()},
                               {&ra, A.address()},
                               {&rt, T.address()}})
        add("li", {*r, v});
    add("dma.cfg", {1, 0, 0});
    add("li", {rd, ident_at});
    add("dma.load", {ri, 0, rd, 256}, {reads(dram_span(0, ident_at, 256)), writes(span_of(I))});
    add("li", {rd, table_at});
    add("dma.load", {rt, 0, rd, 256}, {reads(dram_span(0, table_at, 256)), writes(span_of(T))});
    add("mac.cfg", {4, 16, 16, 16});
    for (int k = 0; k < rounds; ++k) {
        add("li", {rd, k * 64});
        add("dma.load", {rx, 2, rd, 64}, {reads(dram_span(2, k * 64, 64)), writes(span_of(X))});
        if (declare_y_write)
            add("vec.max", {ry, rx, rx, 64}, {reads(span_of(X)), writes(span_of(Y))});
        else
            add("vec.max", {ry, rx, rx, 64}, {reads(span_of(X))});
        add("lut.apply", {rz, rx, 0, 64}, {reads(span_of(X)), reads(span_of(T)), writes(span_of(Z))});
        add("mac.mm", {ra, rx, ri, zp}, {reads(span_of(X)), reads(span_of(I)), writes(span_of(A))});
        add("li", {rd, k * 64});
        add("dma.store", {3, rd, ry, 64}, {reads(span_of(Y)), writes(dram_span(3, k * 64, 64))});
        add("li", {rd, rounds * 64 + k * 64});
        add("dma.store", {3, rd, rz, 64}, {reads(span_of(Z)), writes(dram_span(3, rounds * 64 + k * 64, 64))});
        add("li", {rd, rounds * 128 + k * 256});
        add("dma.store", {3, rd, ra, 256}, {reads(span_of(A)), writes(dram_span(3, rounds * 128 + k * 256, 256))});
    }
    if (scheduled) {
        REQUIRE(s.finish().ok());
        f.stats = s.stats();
    }
}

vnpu::sim::Machine fork_join_machine(std::vector<std::int8_t>& x) {
    vnpu::sim::Machine m;
    x.resize(rounds * 64);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int8_t>(i * 37 + 11);
    m.dram[2].assign(x.size(), 0);
    std::memcpy(m.dram[2].data(), x.data(), x.size());
    m.dram[3].assign(static_cast<std::size_t>(rounds * (128 + 256)), 0);
    return m;
}

}  // namespace

TEST_CASE("a fork to three units and a join, 40 rounds: 16 events suffice, no race, the data arrive (C2, C6)") {
    ForkJoin f;
    build_fork_join(f, true);
    std::vector<std::int8_t> x;
    auto m = fork_join_machine(x);
    const auto r = et::run_clean(f.b, m);
    CHECK(r.races.empty());
    for (int k = 0; k < rounds; ++k)
        for (int i = 0; i < 64; ++i) {
            const auto xi = static_cast<std::size_t>(k * 64 + i);
            CHECK(static_cast<std::int8_t>(m.dram[3][xi]) == x[xi]);
            CHECK(m.dram[3][static_cast<std::size_t>(rounds * 64) + xi] == table_of(x[xi] + 128));
            std::int32_t acc = 0;
            std::memcpy(&acc, &m.dram[3][static_cast<std::size_t>(rounds * 128 + k * 256 + i * 4)], 4);
            CHECK(acc == x[xi] - zp);
        }
    const auto& st = f.stats;
    CHECK(st.channels <= 16);
    CHECK(st.edges == rounds * 6);  // per round: 3 fork edges, 3 join edges; the next load's WAR edges are implied
    CHECK(st.syncs > 0);            // forks and joins go through SEQ
    CHECK(st.direct > 0);
    MESSAGE("fork/join x " << rounds << ": " << st.instructions << " instructions, " << st.edges << " edges ("
                           << st.direct << " direct, " << st.through_seq << " through " << st.syncs << " syncs), "
                           << st.channels << " events, " << r.cycles << " cycles");
}

TEST_CASE("negative controls: without events, or with an undeclared write, the race detector reports races") {
    {
        ForkJoin f;
        build_fork_join(f, false);
        std::vector<std::int8_t> x;
        auto m = fork_join_machine(x);
        auto p = f.b.finish();
        REQUIRE(p.ok());
        m.dram[0] = p->weights;
        const auto r = janus_test::simulate(p->code, m);
        CHECK_FALSE(r.races.empty());
    }
    {
        ForkJoin f;
        build_fork_join(f, true, false);
        std::vector<std::int8_t> x;
        auto m = fork_join_machine(x);
        auto p = f.b.finish();
        REQUIRE(p.ok());
        m.dram[0] = p->weights;
        const auto r = janus_test::simulate(p->code, m);
        REQUIRE_FALSE(r.races.empty());  // VEC's write of Y against the store that reads it
        CHECK(janus_test::report_text(r, p->code).find("RAW") != std::string::npos);
    }
}

TEST_CASE("a view's base freed and reallocated: the new writer waits for the view's asynchronous reader (C3)") {
    const auto run = [](bool scheduled) {
        Builder b("view");
        std::uint32_t base_at = 0;
        {
            auto rb = b.reg("base").value(), ro = b.reg("out").value(), rd = b.reg("dram").value(),
                 rv = b.reg("view").value();
            auto out = b.alloc(Mem::lmem, 64, "out").value();
            Scheduler s(b, "view");
            std::optional<Event> e1, e2;
            if (!scheduled) e1 = b.event("loaded").value(), e2 = b.event("read").value();
            const auto add = [&](std::string_view m, std::initializer_list<Operand> ops,
                                 std::initializer_list<Access> acc = {}, Sync sync = {}) {
                if (scheduled)
                    REQUIRE(s.add(m, ops, acc).ok());
                else
                    REQUIRE(b.emit(m, ops, sync).ok());
            };
            add("li", {ro, out.address()});
            {
                auto base = b.alloc(Mem::lmem, 128, "base").value();
                base_at = base.address();
                const Span view = span_of(base, 64, 64);  // the upper half, read by VEC
                add("li", {rb, base.address()});
                add("li", {rv, view.begin});
                add("dma.cfg", {1, 0, 0});
                add("li", {rd, 0});
                add("dma.load", {rb, 2, rd, 128}, {reads(dram_span(2, 0, 128)), writes(span_of(base))},
                    Sync{nullptr, e1 ? &*e1 : nullptr});
                add("vec.max", {ro, rv, rv, 64}, {reads(view), writes(span_of(out))},
                    Sync{e1 ? &*e1 : nullptr, e2 ? &*e2 : nullptr});
            }  // base and its view go out of scope while the VEC read may still be running
            auto next = b.alloc(Mem::lmem, 128, "next").value();
            CHECK(next.address() == base_at);  // the memory really is reused
            add("li", {rb, next.address()});
            add("li", {rd, 128});
            add("dma.load", {rb, 2, rd, 128}, {reads(dram_span(2, 128, 128)), writes(span_of(next))});
            add("li", {rd, 0});
            add("dma.store", {3, rd, ro, 64}, {reads(span_of(out)), writes(dram_span(3, 0, 64))},
                Sync{e2 ? &*e2 : nullptr, nullptr});  // unscheduled: nothing orders the reload after the VEC read
            if (scheduled) REQUIRE(s.finish().ok());
        }  // the handles go back before finish
        CHECK(base_at != 0);
        vnpu::sim::Machine m;
        m.dram[2].resize(256);
        for (int i = 0; i < 256; ++i) m.dram[2][static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
        m.dram[3].resize(64);
        auto p = b.finish();
        REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
        const auto r = janus_test::simulate(p->code, m);
        return std::pair{r, m.dram[3]};
    };
    const auto [good, out] = run(true);
    CHECK_FALSE(good.fault);
    CHECK(good.races.empty());
    for (int i = 0; i < 64; ++i) CHECK(out[static_cast<std::size_t>(i)] == 64 + i);  // the first load's upper half
    const auto bad = run(false).first;  // the negative control: events for the data only, not for the reuse
    CHECK_FALSE(bad.fault);
    CHECK_FALSE(bad.races.empty());
}

TEST_CASE("a plain pipeline needs no sync: every edge is a direct channel, and the reduction drops implied ones") {
    Builder b("pipe");
    {
        auto x0 = b.alloc(Mem::lmem, 64, "x0").value(), x1 = b.alloc(Mem::lmem, 64, "x1").value();
        auto rx = b.reg("x").value(), rd = b.reg("dram").value();
        Scheduler s(b, "pipe");
        REQUIRE(s.add("dma.cfg", {1, 0, 0}).ok());
        for (int k = 0; k < 6; ++k) {
            const Buffer& x = k % 2 ? x1 : x0;
            REQUIRE(s.add("li", {rx, x.address()}).ok());
            REQUIRE(s.add("li", {rd, k * 64}).ok());
            REQUIRE(s.add("dma.load", {rx, 2, rd, 64}, {reads(dram_span(2, k * 64, 64)), writes(span_of(x))}).ok());
            REQUIRE(s.add("vec.max", {rx, rx, rx, 64}, {reads(span_of(x)), writes(span_of(x))}).ok());
            REQUIRE(s.add("dma.store", {3, rd, rx, 64}, {reads(span_of(x)), writes(dram_span(3, k * 64, 64))}).ok());
        }
        REQUIRE(s.finish().ok());
        // per round: load -> vec (RAW), vec -> store (RAW); the next load into the same buffer (WAR/WAW against the vec)
        // is implied: the store before it on the DMA queue waited for the vec
        CHECK(s.stats().edges == 12);
        CHECK(s.stats().direct == 12);
        CHECK(s.stats().syncs == 0);
        CHECK(s.stats().channels == 2);
    }
    vnpu::sim::Machine m;
    m.dram[2].resize(6 * 64);
    for (std::size_t i = 0; i < m.dram[2].size(); ++i) m.dram[2][i] = static_cast<std::uint8_t>(i * 5);
    m.dram[3].resize(6 * 64);
    et::run_clean(b, m);
    CHECK(m.dram[3] == m.dram[2]);
}

TEST_CASE("scheduler refusals") {
    Builder b("bad");
    Scheduler s(b, "bad");
    CHECK_RULE(s.add("loop", {1, 1}), "schedule-straight-line");
    CHECK_RULE(s.add("sync", {1, 0}), "schedule-straight-line");
    CHECK_RULE(s.add("halt", {}), "schedule-straight-line");
    CHECK_RULE(s.add("li", {1, 0}, {reads(local_span(0, 16))}), "schedule-seq-access");
    CHECK_RULE(s.add("vec.nope", {}), "known-instruction");
    CHECK_RULE(s.add("vec.max", {1, 2}), "operand-count");
    REQUIRE(s.finish().ok());
    CHECK_RULE(s.finish(), "schedule-finished");
    CHECK_RULE(s.add("nop", {}), "schedule-finished");
    CHECK(b.size() == 0);
}
