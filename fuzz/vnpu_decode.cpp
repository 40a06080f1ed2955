// Fuzz target: the vnpu instruction decoder (vnpu/isa.hpp) on arbitrary bytes.
//
// Input: any bytes, read as little-endian 64-bit instruction words (a trailing partial word is zero-padded).
// Properties (a __builtin_trap() when broken), per word:
//   1. decode() returns an instruction or a well-formed Error (input, rule and detail non-empty);
//   2. an accepted word re-encodes to the same 64 bits (encode(decode(w)) == w), and its canonical text is non-empty
//      and starts with its mnemonic.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <janus/vnpu/isa.hpp>

namespace {
void check(bool ok, const char* what, janus::vnpu::Word w) {
    if (!ok) {
        std::fprintf(stderr, "vnpu_decode: %s broken for word 0x%016llx\n", what, static_cast<unsigned long long>(w));
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus::vnpu;
    for (std::size_t at = 0; at < size; at += 8) {
        Word w = 0;
        for (std::size_t b = 0; b < 8 && at + b < size; ++b) w |= static_cast<Word>(data[at + b]) << (8 * b);
        const auto d = decode(w, "fuzz");
        if (!d.ok()) {
            check(!d.error().input.empty() && !d.error().rule.empty() && !d.error().detail.empty(), "error form", w);
            continue;
        }
        const auto again = encode(*d);
        check(again.ok() && *again == w, "encode(decode(w)) == w", w);
        const std::string text = print(*d);
        check(text.rfind(std::string(d->info->mnemonic), 0) == 0, "text starts with the mnemonic", w);
    }
    return 0;
}
