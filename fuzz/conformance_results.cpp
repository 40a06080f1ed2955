// Fuzz target: the result lines of janusc conform (graph/conformance.hpp), which janusc support reads.
//
// Input: any bytes, parsed as result lines. Seeds: tests/conformance/expected.txt cut into pieces, and malformed lines
// (one rule each).
// Properties (a __builtin_trap() when broken):
//   1. parse_conformance returns the results or a well-formed Error: input and detail non-empty, rule
//      conformance-line, position "line N" with N at most the number of lines begun;
//   2. the lines are canonical: joining every result's line() parses to the same results and to the input text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <janus/graph/conformance.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "conformance_results: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto r = janus::graph::parse_conformance(text, "fuzz.txt");
    if (!r.ok()) {
        const auto& e = r.error();
        check(!e.input.empty() && !e.detail.empty() && e.rule == "conformance-line", "error form");
        check(e.position.rfind("line ", 0) == 0, "error position is a line");
        std::size_t begun = 1;
        for (char c : text) begun += c == '\n';
        check(std::stoull(e.position.substr(5)) <= begun, "error line inside the input");
        return 0;
    }
    std::string again;
    for (const auto& x : *r) again += x.line() + "\n";
    check(again == text, "the lines are canonical: line() gives the input back");
    const auto r2 = janus::graph::parse_conformance(again, "fuzz.txt");
    check(r2.ok() && *r2 == *r, "parse(line()) gives the same results");
    return 0;
}
