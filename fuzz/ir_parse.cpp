// Fuzz target: the graph IR text parser (graph/parse.hpp) on arbitrary text.
//
// Input: any bytes, parsed as IR text. Seeds: the golden texts of tests/graph/text/ (imported fixtures, constants in
// hex) and the malformed texts of tests/graph/bad_ir/.
// Properties (a __builtin_trap() when broken):
//   1. parse returns a graph or a well-formed Error (input, rule and detail non-empty);
//   2. a parsed graph passes verify(), and printing is canonical: print(parse(print(g))) == print(g).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <janus/graph/parse.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "ir_parse: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto g = graph::parse(text, "fuzz.ir");
    if (!g.ok()) {
        check(!g.error().input.empty() && !g.error().rule.empty() && !g.error().detail.empty(), "error form");
        return 0;
    }
    check(graph::verify(*g).ok(), "a parsed graph verifies");
    const std::string once = graph::print(*g);
    const auto again = graph::parse(once, "fuzz.ir");
    check(again.ok(), "printed text parses");
    check(graph::print(*again) == once, "print(parse(print(g))) == print(g)");
    return 0;
}
