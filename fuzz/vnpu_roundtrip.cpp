// Fuzz target: random VALID instructions through the text path: print -> assemble -> encode must equal the direct
// encoding (vnpu/isa.hpp and vnpu/asm.hpp share one table; this checks that they agree on every field).
//
// Input: records of 1 + 8 * max_fields + 2 bytes: row index (byte % rows), per operand 8 little-endian bytes
// mapped into the field's range (min + value % span, on the field's alignment; bytes 0xFF... pick the maximum),
// then wait and signal bytes (>= 16: none, else the event). Short records read zeros.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <janus/vnpu/asm.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "vnpu_roundtrip: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus::vnpu;
    constexpr std::size_t record = 1 + 8 * max_fields + 2;
    std::size_t at = 0;
    auto u8 = [&]() -> std::uint8_t { return at < size ? data[at++] : 0; };
    std::vector<Instr> prog;
    do {
        Instr in;
        in.info = &instruction_table[u8() % instruction_table.size()];
        for (int k = 0; k < max_fields; ++k) {
            std::uint64_t v = 0;
            for (int b = 0; b < 8; ++b) v |= static_cast<std::uint64_t>(u8()) << (8 * b);
            if (k >= in.info->n_fields) continue;
            const Field& f = in.info->fields[static_cast<std::size_t>(k)];
            const auto steps = static_cast<std::uint64_t>(f.max() - f.min()) / static_cast<std::uint64_t>(f.scale) + 1;
            const std::uint64_t pick = v == ~std::uint64_t{0} ? steps - 1 : v % steps;
            in.operands[static_cast<std::size_t>(k)] = f.min() + static_cast<std::int64_t>(pick) * f.scale;
        }
        if (const int w = u8(); w < 16) in.wait = w;
        if (const int s = u8(); s < 16) in.signal = s;
        prog.push_back(in);
    } while (at + record <= size);
    const std::string text = print_program(prog);
    const auto parsed = assemble(text, "rt.s");
    check(parsed.ok(), "printed valid instructions assemble");
    check(*parsed == prog, "assemble(print(i)) == i");
    for (std::size_t i = 0; i < prog.size(); ++i) {
        const auto direct = encode(prog[i]);
        const auto via_text = encode((*parsed)[i]);
        check(direct.ok() && via_text.ok() && *direct == *via_text, "same words through the text");
        const auto back = decode(*direct);
        check(back.ok() && *back == prog[i], "decode(encode(i)) == i");
    }
    return 0;
}
