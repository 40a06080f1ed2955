// The program builder (emit/builder.hpp): scoped registers, events and buffers (seeds B9, C1), the real memory
// budget (C4), hardware loops and their limits, determinism under one more loop level (C8), and transactions
// that take everything back after a failure or an exception (C7).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <janus/emit/builder.hpp>
#include <janus/vnpu/asm.hpp>

#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

namespace {
std::vector<vnpu::Word> words(std::span<const vnpu::Instr> code) {
    std::vector<vnpu::Word> w;
    for (const auto& in : code) w.push_back(*vnpu::encode(in));
    return w;
}

/// A small kernel: its registers and buffer are borrowed inside, its words depend only on what it is given.
Status kernel(Builder& b, std::int64_t value) {
    auto scope = b.scope("kernel");
    JANUS_TRY(Reg a, b.reg("kernel a"));
    JANUS_TRY(Reg c, b.reg("kernel c"));
    JANUS_TRY(Buffer buf, b.alloc(Mem::lmem, 100, "kernel buffer"));
    JANUS_CHECK(b.emit("li", {a, buf.address()}));
    JANUS_CHECK(b.emit("addi", {c, a, value}));
    JANUS_CHECK(b.emit("dma.fill", {a, -1, 112}));
    return ok_status();
}
}  // namespace

TEST_CASE("registers: lowest first, returned at scope end, r0 never handed out; exhaustion names every holder") {
    Builder b("k");
    {
        auto r1 = b.reg("first");
        REQUIRE(r1.ok());
        CHECK(r1->index() == 1);
        auto r2 = b.reg("second");
        CHECK(r2->index() == 2);
    }
    std::vector<Reg> held;
    for (int i = 1; i <= 15; ++i) {
        auto r = b.reg("tmp" + std::to_string(i));
        REQUIRE(r.ok());
        CHECK(r->index() == i);  // the two above came back
        held.push_back(std::move(*r));
    }
    const auto none = b.reg("one too many");
    CHECK_RULE(none, "registers-exhausted");
    CHECK(none.error().detail.find("no free register for 'one too many'") != std::string::npos);
    CHECK(none.error().detail.find("r1 'tmp1'") != std::string::npos);
    CHECK(none.error().detail.find("r15 'tmp15'") != std::string::npos);
    CHECK_RULE(b.status(), "registers-exhausted");  // the builder stays failed: no silent reuse afterwards
}

TEST_CASE("events: e0..e15, and the 17th borrow names the 16 holders") {
    Builder b("k");
    std::vector<Event> held;
    for (int i = 0; i < 16; ++i) held.push_back(b.event("fork " + std::to_string(i)).value());
    CHECK(held[15].index() == 15);
    const auto e = b.event("join");
    CHECK_RULE(e, "events-exhausted");
    CHECK(e.error().detail.find("e0 'fork 0'") != std::string::npos);
}

TEST_CASE("seed B9: a temporary moved out of its scope is reported when the scope closes") {
    Builder b("k");
    Reg escaped;
    {
        auto scope = b.scope("inner");
        auto t = b.reg("inner temporary");
        REQUIRE(t.ok());
        escaped = std::move(*t);
    }
    CHECK_RULE(b.status(), "borrow-outlives-scope");
    CHECK(b.status().error().detail.find("r1 ('inner temporary')") != std::string::npos);
    CHECK(b.status().error().position == "scope 'inner'");
    CHECK_RULE(b.finish(), "borrow-outlives-scope");
}

TEST_CASE("seed C4: buffers come from the real 256 KiB of LMEM, not the encodable 1 MiB; the error says which") {
    Builder b("k");
    auto big = b.alloc(Mem::lmem, 200 * 1024, "weights tile");
    REQUIRE(big.ok());
    CHECK(big->address() == 0);
    auto small = b.alloc(Mem::lmem, 17, "bias");
    CHECK(small->address() == 200 * 1024);
    CHECK(small->bytes() == 32);  // rounded up to 16
    const auto more = b.alloc(Mem::lmem, 60 * 1024, "activation tile");
    CHECK_RULE(more, "lmem-budget");
    CHECK(more.error().detail ==
          "'activation tile' needs 61440 B of LMEM (of 262144 B); the largest free block is 57312 B; held: "
          "'weights tile' 204800 B at 0; 'bias' 32 B at 204800;");
    Builder c("k2");
    auto acc = c.alloc(Mem::acc, 65, "partial sums");
    CHECK(acc->address() == 0x80000);
    CHECK(acc->bytes() == 128);  // ACC rows are 64 B
    CHECK(c.largest_free(Mem::acc) == 64 * 1024 - 128);
    auto lut = c.alloc(Mem::lut, 256, "table");
    CHECK(lut->address() == 0xC0000);
}

TEST_CASE("a freed block is reused first-fit, lowest address first") {
    Builder b("k");
    auto x = b.alloc(Mem::lmem, 64, "x");
    auto y = b.alloc(Mem::lmem, 64, "y");
    x->release();
    auto z = b.alloc(Mem::lmem, 32, "z");
    CHECK(z->address() == 0);
    auto w = b.alloc(Mem::lmem, 64, "w");
    CHECK(w->address() == 128);
}

TEST_CASE("emit checks each instruction at once: unknown mnemonic, operand count, range") {
    Builder b("k");
    CHECK_RULE(b.emit("mov", {1, 2}), "known-instruction");
    Builder c("k");
    CHECK_RULE(c.emit("li", {1}), "operand-count");
    Builder d("k");
    CHECK_RULE(d.emit("dma.fill", {1, 0, 24}), "field-alignment");
    CHECK(d.status().error().input == "k:instruction 0");
}

TEST_CASE("program-size: at most max_program_instructions; the attempt that passes it rolls back cleanly") {
    Builder b("k");
    bool all = true;
    for (std::int64_t i = 0; i < max_program_instructions; ++i) all = all && b.emit("nop", {}).ok();
    REQUIRE(all);
    {
        auto t = b.transaction();  // the lowering's attempt at one more node: refused, then taken back
        CHECK_RULE(b.emit("nop", {}), "program-size");
        CHECK(b.status().error().position == "instruction " + std::to_string(max_program_instructions));
    }
    CHECK(b.status().ok());
    CHECK(b.size() == static_cast<std::size_t>(max_program_instructions));
}

TEST_CASE("loops: body length filled in, nesting 2, body 1..1024, count 1..16384; count 0 emits nothing") {
    Builder b("k");
    REQUIRE(b.loop(3, "outer", [&]() -> Status {
                 JANUS_CHECK(b.emit("nop", {}));
                 return b.loop(4, "inner", [&] { return b.emit("nop", {}); });
             }).ok());
    REQUIRE(b.loop(0, "empty", [&] { return b.emit("nop", {}); }).ok());
    const auto p = b.finish();
    REQUIRE(p.ok());
    const auto text = vnpu::disassemble(words(p->code));
    CHECK(*text == "loop 3, 3\nnop\nloop 4, 1\nnop\nhalt\n");
    Builder c("k");
    CHECK_RULE(
        c.loop(2, "a",
               [&] { return c.loop(2, "b", [&] { return c.loop(2, "c", [&] { return c.emit("nop", {}); }); }); }),
        "loop-depth");
    Builder d("k");
    CHECK_RULE(d.loop(2, "a", [&] { return ok_status(); }), "loop-body");
    Builder e("k");
    CHECK_RULE(e.loop(2, "a",
                      [&]() -> Status {
                          for (int i = 0; i < 1025; ++i) JANUS_CHECK(e.emit("nop", {}));
                          return ok_status();
                      }),
               "loop-body");
    Builder f("k");
    CHECK_RULE(f.loop(16385, "a", [&] { return f.emit("nop", {}); }), "loop-count");
}

TEST_CASE("seed C8: the same kernel gives the same words alone, twice, and inside one more loop level") {
    Builder alone("a");
    REQUIRE(kernel(alone, 5).ok());
    const auto one = words(alone.code());
    REQUIRE(one.size() == 3);

    Builder twice("b");
    REQUIRE(kernel(twice, 5).ok());
    REQUIRE(kernel(twice, 5).ok());
    const auto two = words(twice.code());
    CHECK(std::vector<vnpu::Word>(two.begin(), two.begin() + 3) == one);
    CHECK(std::vector<vnpu::Word>(two.begin() + 3, two.end()) == one);

    Builder looped("c");
    REQUIRE(looped.loop(7, "outer", [&] { return kernel(looped, 5); }).ok());
    const auto in_loop = words(looped.code());
    REQUIRE(in_loop.size() == 4);
    CHECK(std::vector<vnpu::Word>(in_loop.begin() + 1, in_loop.end()) == one);

    Builder two_builders("d");  // independent instances do not share numbering
    REQUIRE(kernel(two_builders, 5).ok());
    CHECK(words(two_builders.code()) == one);
}

namespace {
/// A lowering that fails midway: it borrows, allocates, adds a constant and emits, then errs or throws.
Status failing_lowering(Builder& b, bool throw_instead, Reg* leak_out = nullptr) {
    auto txn = b.transaction();
    JANUS_TRY(Reg r, b.reg("doomed"));
    JANUS_TRY(Event e, b.event("doomed event"));
    JANUS_TRY(Buffer buf, b.alloc(Mem::lmem, 4096, "doomed buffer"));
    const std::uint8_t table[3] = {1, 2, 3};
    (void)b.constant(table);
    JANUS_CHECK(b.emit("li", {r, buf.address()}));
    JANUS_CHECK(b.emit("dma.fill", {r, 0, 16}, Sync{nullptr, &e}));
    if (leak_out) *leak_out = std::move(r);  // a handle that outlives the transaction
    if (throw_instead) throw std::runtime_error("injected");
    JANUS_CHECK(b.emit("dma.fill", {r, 0, 24}));  // misaligned: fails here
    txn.commit();
    return ok_status();
}
}  // namespace

TEST_CASE("seed C7: a failed or thrown lowering leaves no instruction, constant, register, event or buffer behind") {
    for (const bool throwing : {false, true}) {
        CAPTURE(throwing);
        Builder b("k");
        REQUIRE(kernel(b, 1).ok());
        const std::uint8_t kept[2] = {9, 9};
        const auto kept_at = b.constant(kept);
        const auto before = words(b.code());
        const auto weights_before = std::vector<std::uint8_t>(b.weights().begin(), b.weights().end());
        Reg leaked;
        if (throwing)
            CHECK_THROWS_AS((void)failing_lowering(b, true, &leaked), std::runtime_error);
        else
            CHECK_RULE(failing_lowering(b, false, nullptr), "field-alignment");
        CHECK(words(b.code()) == before);
        CHECK(std::vector<std::uint8_t>(b.weights().begin(), b.weights().end()) == weights_before);
        CHECK(b.holders().empty());
        CHECK(b.status().ok());  // the failure belonged to the abandoned attempt
        CHECK(b.constant(kept) == kept_at);
        const std::uint8_t table[3] = {1, 2, 3};
        CHECK(b.constant(table) == 16);  // the rolled-back constant's slot is free again
        // the builder is usable afterwards, with the same numbering as if the attempt never happened
        auto r = b.reg("next");
        CHECK(r->index() == 1);
        auto buf = b.alloc(Mem::lmem, 16, "next buffer");
        CHECK(buf->address() == 0);
        leaked.release();  // a handle from the rolled-back attempt gives back nothing
        CHECK(b.holders() == "r1 'next'\nLMEM +0 16 B 'next buffer'\n");
    }
}

TEST_CASE("nested transactions: the inner one rolls back, the outer one commits") {
    Builder b("k");
    auto outer = b.transaction();
    REQUIRE(b.emit("nop", {}).ok());
    {
        auto inner = b.transaction();
        REQUIRE(b.emit("halt", {}).ok());
    }
    outer.commit();
    CHECK(b.size() == 1);
}

TEST_CASE("end_segment: halt appended, the next pc returned; a held register is refused, events may stay held") {
    Builder b("k");
    auto e = b.event("whole program");
    REQUIRE(b.emit("nop", {}).ok());
    const auto entry = b.end_segment();
    REQUIRE(entry.ok());
    CHECK(*entry == 2);
    CHECK(b.code()[1].info->mnemonic == "halt");
    auto r = b.reg("address");
    const auto refused = b.end_segment();
    CHECK_RULE(refused, "held-at-segment-end");
    CHECK(refused.error().message().find("r1 ('address')") != std::string::npos);
}

TEST_CASE("finish: held resources are named; halt is appended") {
    Builder b("k");
    auto r = b.reg("forgotten");
    CHECK_RULE(b.finish(), "held-at-finish");
    r->release();
    const auto p = b.finish();
    REQUIRE(p.ok());
    CHECK(p->code.size() == 1);
    CHECK(p->code[0].info->mnemonic == "halt");
}
