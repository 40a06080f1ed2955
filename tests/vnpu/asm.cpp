// vnpu assembler and disassembler (vnpu/asm.hpp): round trips in both directions, labels and aliases, and every
// diagnostic pinned to its line and column (seed C9: a number that was read is not yet a valid operand).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <janus/vnpu/asm.hpp>

#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::vnpu;

namespace {

/// The diagnostic of a text that must fail: "file:line:col: error: detail [rule]".
std::string diag(std::string_view text) {
    const auto r = assemble(text, "t.s");
    REQUIRE_FALSE(r.ok());
    return r.error().message();
}

const char* const canonical =
    "li r1, -5\n"
    "addi r2, r1, 2147483647\n"
    "alu.xor r3, r2, r1 wait(e2)\n"
    "loop 16, 2 signal(e15)\n"
    "alu.add r4, r4, r3\n"
    "alu.srl r5, r4, r0\n"
    "sync 0x8001, 0x0002\n"
    "nop wait(e0) signal(e1)\n"
    "halt\n";

}  // namespace

TEST_CASE("round trip: canonical text -> words -> text is identical, words -> text -> words is identical") {
    const auto words = assemble_words(canonical, "t.s");
    REQUIRE(words.ok());
    CHECK(words->size() == 9);
    const auto text = disassemble(*words, "t.bin");
    REQUIRE(text.ok());
    CHECK(*text == canonical);
    const auto again = assemble_words(*text, "t.s");
    REQUIRE(again.ok());
    CHECK(*again == *words);
}

TEST_CASE("round trip: random accepted words disassemble and re-assemble to the same bytes") {
    std::mt19937_64 rng(9);
    std::vector<Word> words;
    while (words.size() < 3000) {
        Word w = (rng() % 32) << 58 | (rng() & (Word{0x3FF} << 48));
        for (int b = static_cast<int>(rng() % 40); b > 0; --b) w |= Word{1} << (rng() % 48);
        if (decode(w).ok()) words.push_back(w);
    }
    const auto text = disassemble(words);
    REQUIRE(text.ok());
    const auto back = assemble_words(*text);
    REQUIRE(back.ok());
    CHECK(*back == words);
}

TEST_CASE("labels, aliases, comments and hex: a loop body given by a label counts the instructions before it") {
    const char* src =
        "; sum r1 over 8 iterations\n"
        ".reg acc = r1\n"
        ".reg step = r2\n"
        ".event done = e7\n"
        "        li acc, 0          ; the accumulator\n"
        "        li step, 0x10\n"
        "        loop 8, after\n"
        "body:   alu.add acc, acc, step\n"
        "        addi step, step, -1\n"
        "after:  halt signal(done)\n";
    const auto ins = assemble(src, "t.s");
    REQUIRE(ins.ok());
    CHECK(print_program(*ins) ==
          "li r1, 0\nli r2, 16\nloop 8, 2\nalu.add r1, r1, r2\naddi r2, r2, -1\nhalt signal(e7)\n");
}

TEST_CASE("diagnostics are pinned to file:line:col and name the rule") {
    // seed C9: full consumption, signs, ranges
    CHECK(diag("li r1, 12abc") == "t.s:1:10: error: '12abc' is not a number (trailing characters after the digits) "
                                  "[number-syntax]");
    CHECK(diag("loop -3, 1") == "t.s:1:6: error: count is unsigned; '-3' has a sign [sign-not-allowed]");
    CHECK(diag("li r1, 2147483648") ==
          "t.s:1:8: error: li: imm = 2147483648 is outside [-2147483648, 2147483647] [field-range]");
    CHECK(diag("nop\nloop 16385, 1") == "t.s:2:6: error: loop: count = 16385 is outside [1, 16384] [field-range]");
    CHECK(diag("li r1, 99999999999999999999999") ==
          "t.s:1:8: error: li: imm = 99999999999999999999999 is outside [-2147483648, 2147483647] [field-range]");
    CHECK(diag("sync 0x, 0") == "t.s:1:7: error: '0x' is not a number (trailing characters after the digits) "
                                "[number-syntax]");
    CHECK(diag("loop 2, 0x1g") == "t.s:1:12: error: '0x1g' is not a number (trailing characters after the digits) "
                                  "[number-syntax]");
    CHECK(diag("li r1, --1") == "t.s:1:8: error: '-' is not a number (no digits) [number-syntax]");
    CHECK(diag("li r1, -0x10") == "t.s:1:8: error: '-0x10': a hex number takes no sign [number-syntax]");
    CHECK(diag("li r1, +1") == "t.s:1:8: error: imm: a '+' sign is not accepted [sign-not-allowed]");
    CHECK(diag("li r16, 0") == "t.s:1:4: error: rd: expected r0..r15 or a .reg alias, got 'r16' [register-syntax]");
    CHECK(diag("  mov r1, r2") == "t.s:1:3: error: unknown mnemonic 'mov' [known-mnemonic]");
    CHECK(diag("addi r1, r2") == "t.s:1:12: error: addi takes 3 operands; expected ',' [operand-count]");
    CHECK(diag("halt r1") == "t.s:1:6: error: unexpected 'r1' after the operands (expected wait(eN), signal(eN) or "
                             "the end of the line) [trailing-garbage]");
    CHECK(diag("nop wait(e16)") == "t.s:1:10: error: expected e0..e15 or an .event alias, got 'e16' [event-syntax]");
    CHECK(diag("nop wait(e1) wait(e2)") == "t.s:1:14: error: wait is given twice [event-action-unique]");
    CHECK(diag("loop 2, nowhere\nhalt") == "t.s:1:9: error: label 'nowhere' is not defined [known-label]");
    CHECK(diag("back: nop\nloop 2, back") ==
          "t.s:2:9: error: the loop body ends at label 'back', which must follow the loop [label-after-loop]");
    CHECK(diag("a: nop\na: nop") == "t.s:2:1: error: label 'a' is already defined [label-unique]");
    CHECK(diag(".reg x = r1\n.reg x = r2") == "t.s:2:6: error: alias 'x' is already defined [alias-unique]");
    CHECK(diag(".macro x") == "t.s:1:1: error: unknown directive '.macro' (.reg, .event) [known-directive]");
    CHECK(diag(".event go = r1") == "t.s:1:13: error: expected e0..e15, got 'r1' [event-syntax]");
    CHECK(diag("dma.load r1, dram, r2, 16") ==
          "t.s:1:14: error: region: expected weights, scratch, input or output, got 'dram' [region-syntax]");
    CHECK(diag("dma.move r1, r2, 24") ==
          "t.s:1:18: error: dma.move: bytes = 24 is not a multiple of 16 [field-alignment]");
    CHECK(diag("dma.move r1, r2, 0") == "t.s:1:18: error: dma.move: bytes = 0 is outside [16, 1048576] [field-range]");
    CHECK(diag("dma.fill r1, 128, 16") == "t.s:1:14: error: dma.fill: value = 128 is outside [-128, 127] [field-range]");
    CHECK(diag("dma.fill r1, 0, -16") == "t.s:1:17: error: bytes is unsigned; '-16' has a sign [sign-not-allowed]");
}

TEST_CASE("disassembler errors name the word") {
    const std::vector<Word> words = {0, Word{63} << 58};
    const auto r = disassemble(words, "p.bin");
    CHECK_RULE(r, "known-opcode");
    CHECK(r.error().input == "p.bin:word 1");
}
