// docs/vnpu.md holds the instruction reference and the parameter tables generated from the instruction table and
// the layouts of vnpu/params.hpp (vnpu/reference.hpp); this fails when a row or a field changes and the doc was not
// regenerated (`janusc isa-doc --update docs/vnpu.md`).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <janus/vnpu/reference.hpp>

#include "../support/check_rule.hpp"

using namespace janus::vnpu;

TEST_CASE("docs/vnpu.md carries the current generated instruction reference") {
    std::ifstream f(std::string(JANUS_SOURCE_DIR) + "/docs/vnpu.md", std::ios::binary);
    REQUIRE(f);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string doc = ss.str();
    const auto spliced = splice_reference(doc, "docs/vnpu.md");
    REQUIRE(spliced.ok());
    CHECK_MESSAGE(*spliced == doc, "docs/vnpu.md is stale: run janusc isa-doc --update docs/vnpu.md");
}

TEST_CASE("the reference has one section per row, with every field's bits") {
    const std::string r = instruction_reference();
    for (const InstrInfo& row : instruction_table) {
        CHECK(r.find("\n### `" + std::string(row.mnemonic) + "`\n") != std::string::npos);
        for (const Field& f : row.operands())
            CHECK(r.find("| " + std::to_string(f.lo + f.width - 1) + (f.width > 1 ? ".." + std::to_string(f.lo) : "") +
                         " | " + std::string(f.name) + " |") != std::string::npos);
    }
    CHECK(r.find("| 44 | bytes |") == std::string::npos);  // sanity: the search above is specific
}

TEST_CASE("splice_reference: a document without both pairs of markers is refused with the rule") {
    CHECK_RULE(splice_reference("# no markers\n", "doc.md"), "reference-markers");
    const std::string instructions = std::string(reference_begin) + "\nold\n" + std::string(reference_end) + "\n";
    const std::string params = std::string(params_begin) + "\nold\n" + std::string(params_end) + "\n";
    CHECK_RULE(splice_reference("intro\n" + instructions + "tail\n", "doc.md"), "reference-markers");
    const auto s = splice_reference("intro\n" + params + "middle\n" + instructions + "tail\n", "doc.md");
    REQUIRE(s.ok());
    CHECK(*s == "intro\n" + param_reference() + "middle\n" + instruction_reference() + "tail\n");
}

TEST_CASE("the parameter-table reference has one row per field of every layout, with its bytes") {
    const std::string r = param_reference();
    for_each_param_layout([&](const auto& l) {
        CHECK(r.find("**" + std::string(l.name) + "**") != std::string::npos);
        for (const auto& f : l.fields) {
            const std::string bytes = f.width == 1 ? std::to_string(f.offset)
                                                   : std::to_string(f.offset) + ".." + std::to_string(f.offset + f.width - 1);
            CHECK(r.find("| " + bytes + " | " + std::string(f.name) + " |") != std::string::npos);
        }
    });
}
