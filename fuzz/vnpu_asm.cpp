// Fuzz target: the vnpu assembler (vnpu/asm.hpp) on arbitrary text.
//
// Input: any bytes, taken as assembly text. Properties (a __builtin_trap() when broken):
//   1. assemble() returns instructions or a well-formed Error whose position is "line:col" (it never crashes or
//      hangs);
//   2. accepted text prints to canonical text that assembles to the same instructions, and printing those again
//      gives the same text (the canonical form is a fixed point);
//   3. the words of accepted text disassemble to that canonical text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include <janus/vnpu/asm.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "vnpu_asm: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus::vnpu;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto r = assemble(text, "fuzz.s");
    if (!r.ok()) {
        const auto& e = r.error();
        check(e.input == "fuzz.s" && !e.rule.empty() && !e.detail.empty(), "error form");
        check(e.position.find(':') != std::string::npos, "error position is line:col");
        return 0;
    }
    const std::string canon = print_program(*r);
    const auto again = assemble(canon, "canon.s");
    check(again.ok() && *again == *r, "canonical text assembles to the same instructions");
    check(print_program(*again) == canon, "canonical text is a fixed point");
    const auto words = assemble_words(text, "fuzz.s");
    check(words.ok(), "accepted text encodes");
    const auto dis = disassemble(*words);
    check(dis.ok() && *dis == canon, "words disassemble to the canonical text");
    return 0;
}
