// The vnpu instruction table (vnpu/isa.hpp): golden encodings of every field's boundary values (the words were
// computed independently from docs/vnpu.md's word format), the canonical text of each, encoder and decoder
// diagnostics, and the round-trip properties decode(encode(i)) == i and encode(decode(w)) == w.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/vnpu/isa.hpp>

#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::vnpu;

namespace {

Instr make(std::string_view mnemonic, std::initializer_list<std::int64_t> ops, std::optional<int> wait = {},
           std::optional<int> signal = {}) {
    Instr in;
    in.info = find_instruction(mnemonic);
    REQUIRE(in.info != nullptr);
    int k = 0;
    for (auto v : ops) in.operands[static_cast<std::size_t>(k++)] = v;
    in.wait = wait;
    in.signal = signal;
    return in;
}

struct Golden {
    Instr in;
    std::string text;
    Word word;
};

}  // namespace

TEST_CASE("golden encodings: every field at its boundary values, events on and off, every row") {
    // DMA .. LUT rows: words computed in Python from the field table of docs/vnpu.md (lo, width, stored value)
    const std::vector<Golden> cases = {
        {make("nop", {}), "nop", 0x0000000000000000ULL},
        {make("halt", {}), "halt", 0x0400000000000000ULL},
        {make("li", {15, -2147483648LL}), "li r15, -2147483648", 0x0800f00080000000ULL},
        {make("li", {0, 2147483647}), "li r0, 2147483647", 0x080000007fffffffULL},
        {make("addi", {1, 2, -1}), "addi r1, r2, -1", 0x0c001200ffffffffULL},
        {make("alu.add", {1, 2, 3}), "alu.add r1, r2, r3", 0x1000012300000000ULL},
        {make("alu.max", {15, 14, 13}), "alu.max r15, r14, r13", 0x1000afed00000000ULL},
        {make("loop", {16384, 1024}), "loop 16384, 1024", 0x1400000000ffffffULL},
        {make("loop", {1, 1}), "loop 1, 1", 0x1400000000000000ULL},
        {make("sync", {0xffff, 0x0001}), "sync 0xffff, 0x0001", 0x18000000ffff0001ULL},
        {make("nop", {}, 15, 0), "nop wait(e15) signal(e0)", 0x03f0000000000000ULL},
        {make("halt", {}, std::nullopt, 15), "halt signal(e15)", 0x041f000000000000ULL},
        {make("dma.cfg", {4096, 4194288, 4194288}), "dma.cfg 4096, 4194288, 4194288", 0x2000ffffffffffffULL},
        {make("dma.cfg", {1, 0, 16}), "dma.cfg 1, 0, 16", 0x2000000040000000ULL},
        {make("dma.load", {15, 0, 1, 16}), "dma.load r15, weights, r1, 16", 0x2400f01000000000ULL},
        {make("dma.load", {0, 3, 15, 1048576}, std::nullopt, 2), "dma.load r0, output, r15, 1048576 signal(e2)", 0x241203f00000ffffULL},
        {make("dma.store", {2, 3, 4, 32}, 1, std::nullopt), "dma.store input, r3, r4, 32 wait(e1)", 0x2a20234000000001ULL},
        {make("dma.move", {1, 2, 1048576}), "dma.move r1, r2, 1048576", 0x2c0012000000ffffULL},
        {make("dma.fill", {1, -128, 16}), "dma.fill r1, -128, 16", 0x3000100000800000ULL},
        {make("dma.fill", {1, 127, 48}), "dma.fill r1, 127, 48", 0x30001000007f0002ULL},
        {make("mac.cfg", {1, 16, 16, 0}), "mac.cfg 1, 16, 16, 0", 0x4000000000000000ULL},
        {make("mac.cfg", {1024, 16384, 16384, 4194288}), "mac.cfg 1024, 16384, 16384, 4194288", 0x4000ffffffffffffULL},
        {make("mac.mm", {1, 2, 3, -256}), "mac.mm r1, r2, r3, -256", 0x4400012300000100ULL},
        {make("mac.mma", {1, 2, 3, 255}), "mac.mma r1, r2, r3, 255", 0x44008123000000ffULL},
        {make("vec.rq", {1, 2, 3, 16, 1}), "vec.rq r1, r2, r3, 16, 1", 0x5000123000000000ULL},
        {make("vec.rq", {1, 2, 3, 16384, 4096}), "vec.rq r1, r2, r3, 16384, 4096", 0x50001230003fffffULL},
        {make("vec.ew.add", {1, 2, 3, 4, 16}), "vec.ew.add r1, r2, r3, r4, 16", 0x5400012340000000ULL},
        {make("vec.ew.max", {15, 14, 13, 12, 262144}), "vec.ew.max r15, r14, r13, r12, 262144", 0x54004fedc0003fffULL},
        {make("vec.acc", {1, 2, -256, 16}), "vec.acc r1, r2, -256, 16", 0x5800120001000000ULL},
        {make("vec.mac", {1, 2, 3, 255, 262144}), "vec.mac r1, r2, r3, 255, 262144", 0x5c00123000ff3fffULL},
        {make("vec.max", {1, 2, 3, 16}), "vec.max r1, r2, r3, 16", 0x6000012300000000ULL},
        {make("vec.min", {1, 2, 3, 16}), "vec.min r1, r2, r3, 16", 0x6000812300000000ULL},
        {make("vec.shl32", {1, 2, 31, 16}), "vec.shl32 r1, r2, 31, 16", 0x64000120001f0000ULL},
        {make("vec.rshr32", {15, 14, 0, 262144}), "vec.rshr32 r15, r14, 0, 262144", 0x64001fe000003fffULL},
        {make("vec.abs32", {1, 2, 16}), "vec.abs32 r1, r2, 16", 0x6400212000000000ULL},
        {make("vec.add32", {1, 2, 3, 32}), "vec.add32 r1, r2, r3, 32", 0x6400312300000001ULL},
        {make("vec.sel", {1, 2, 3, 4, 16}, 3), "vec.sel r1, r2, r3, r4, 16 wait(e3)", 0x6a60012340000000ULL},
        {make("vec.sel", {15, 15, 15, 15, 262144}), "vec.sel r15, r15, r15, r15, 262144", 0x68000ffff0003fffULL},
        {make("lut.apply", {1, 2, 3, 262144}, 15, 15), "lut.apply r1, r2, 3, 262144 wait(e15) signal(e15)", 0x73ff123000003fffULL},
        {make("lut.apply", {0, 0, 0, 16}), "lut.apply r0, r0, 0, 16", 0x7000000000000000ULL},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        const auto w = encode(c.in);
        REQUIRE(w.ok());
        CHECK(*w == c.word);
        CHECK(print(c.in) == c.text);
        const auto back = decode(c.word);
        REQUIRE(back.ok());
        CHECK(*back == c.in);
        CHECK(print(*back) == c.text);
    }
}

TEST_CASE("every ALU function has its own row sharing opcode 4, told apart by bits 47..44") {
    const char* names[] = {"alu.add", "alu.sub", "alu.mul", "alu.shl", "alu.sra", "alu.srl",
                           "alu.and", "alu.or",  "alu.xor", "alu.min", "alu.max"};
    for (int f = 0; f < 11; ++f) {
        const auto w = encode(make(names[f], {1, 2, 3}));
        REQUIRE(w.ok());
        CHECK((*w >> 58) == 4);
        CHECK(((*w >> 44) & 0xF) == static_cast<Word>(f));
        CHECK(decode(*w)->info->mnemonic == names[f]);
    }
}

TEST_CASE("field-range: one past each boundary is refused with the field's name") {
    CHECK_RULE(encode(make("li", {0, 2147483648LL})), "field-range");
    CHECK_RULE(encode(make("li", {0, -2147483649LL})), "field-range");
    CHECK_RULE(encode(make("li", {16, 0})), "field-range");
    CHECK_RULE(encode(make("li", {-1, 0})), "field-range");
    CHECK_RULE(encode(make("loop", {0, 1})), "field-range");
    CHECK_RULE(encode(make("loop", {16385, 1})), "field-range");
    CHECK_RULE(encode(make("loop", {1, 1025})), "field-range");
    CHECK_RULE(encode(make("sync", {0x10000, 0})), "field-range");
    CHECK_RULE(encode(make("dma.move", {1, 2, 0})), "field-range");           // byte counts start at 16
    CHECK_RULE(encode(make("dma.move", {1, 2, 1048592})), "field-range");
    CHECK_RULE(encode(make("dma.move", {1, 2, 24})), "field-alignment");      // and step by 16
    CHECK_RULE(encode(make("dma.cfg", {1, 8, 0})), "field-alignment");
    CHECK_RULE(encode(make("dma.load", {1, 4, 2, 16})), "field-range");       // regions 0..3
    CHECK_RULE(encode(make("mac.mm", {1, 2, 3, 256})), "field-range");
    CHECK_RULE(encode(make("vec.rq", {1, 2, 3, 16, 4097})), "field-range");
    CHECK_RULE(encode(make("vec.shl32", {1, 2, 32, 16})), "field-range");     // shifts 0..31
    const auto e = encode(make("loop", {1, 1025}));
    CHECK(e.error().position == "body");
    CHECK(e.error().message() ==
          "instruction:body: error: loop: body = 1025 is outside [1, 1024] [field-range]");
}

TEST_CASE("event-range: wait and signal name e0..e15 only") {
    CHECK_RULE(encode(make("nop", {}, 16)), "event-range");
    CHECK_RULE(encode(make("nop", {}, std::nullopt, -1)), "event-range");
}

TEST_CASE("decoder: unknown opcodes and ALU functions, reserved bits, event bits without their flag") {
    CHECK_RULE(decode(Word{63} << 58), "known-opcode");
    CHECK_RULE(decode(Word{4} << 58 | Word{11} << 44), "known-opcode");  // ALU function 11 does not exist
    CHECK_RULE(decode(Word{25} << 58 | Word{4} << 44), "known-opcode");  // int32 VEC function 4 does not exist
    CHECK_RULE(decode(Word{25} << 58 | Word{2} << 44 | Word{1} << 16), "reserved-bits-zero");  // vec.abs32: no shift
    CHECK_RULE(decode(Word{1}), "reserved-bits-zero");                   // nop with payload bit 0
    CHECK_RULE(decode(Word{1} << 58 | Word{1} << 47), "reserved-bits-zero");
    CHECK_RULE(decode(Word{2} << 58 | Word{1} << 32), "reserved-bits-zero");  // li: bits 43..32 are reserved
    CHECK_RULE(decode(Word{4} << 58 | Word{1} << 31), "reserved-bits-zero");  // alu: bits 31..0 are reserved
    CHECK_RULE(decode(Word{5} << 24), "reserved-bits-zero");                  // nop with loop's bits
    CHECK_RULE(decode(Word{5} << 58 | Word{1} << 24), "reserved-bits-zero");  // loop: bits 47..24 are reserved
    CHECK_RULE(decode(Word{3} << 53), "event-flag-clear");
    CHECK_RULE(decode(Word{1} << 48), "event-flag-clear");
    const auto e = decode(Word{1} | Word{1} << 58, "prog.bin:word 7");
    CHECK(e.error().message() ==
          "prog.bin:word 7: error: 0x0400000000000001: halt leaves payload bits 0x0000000000000001 reserved; they "
          "must be 0 [reserved-bits-zero]");
}

TEST_CASE("round trip: random valid instructions encode, decode and print back identically") {
    std::mt19937_64 rng(4);
    for (int i = 0; i < 20000; ++i) {
        const InstrInfo& r = instruction_table[rng() % instruction_table.size()];
        Instr in;
        in.info = &r;
        for (int k = 0; k < r.n_fields; ++k) {
            const Field& f = r.fields[static_cast<std::size_t>(k)];
            const auto span = static_cast<std::uint64_t>(f.max() - f.min()) / static_cast<std::uint64_t>(f.scale);
            const int pick = static_cast<int>(rng() % 4);  // min, max, or anywhere
            const auto off = pick == 0 ? 0 : pick == 1 ? span : rng() % (span + 1);
            in.operands[static_cast<std::size_t>(k)] = f.min() + static_cast<std::int64_t>(off) * f.scale;
        }
        if (rng() % 2) in.wait = static_cast<int>(rng() % 16);
        if (rng() % 2) in.signal = static_cast<int>(rng() % 16);
        const auto w = encode(in);
        REQUIRE(w.ok());
        const auto back = decode(*w);
        REQUIRE(back.ok());
        CHECK(*back == in);
        CHECK(print(*back) == print(in));
    }
}

TEST_CASE("round trip: every word the decoder accepts re-encodes to the same bits") {
    std::mt19937_64 rng(5);
    long accepted = 0;
    for (int i = 0; i < 200000; ++i) {
        // random opcode and flags, sparse payloads so that some words are valid
        Word w = (rng() % 32) << 58 | (rng() & (Word{0x3FF} << 48));
        const int bits = static_cast<int>(rng() % 40);
        for (int b = 0; b < bits; ++b) w |= Word{1} << (rng() % 48);
        const auto d = decode(w);
        if (!d.ok()) {
            CHECK_FALSE(d.error().rule.empty());
            continue;
        }
        ++accepted;
        const auto again = encode(*d);
        REQUIRE(again.ok());
        CHECK(*again == w);
    }
    CHECK(accepted > 1000);  // the property was exercised
}
