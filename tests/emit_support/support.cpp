// The emission support table (emit/support.hpp): docs/emit_support.md is its generated form and must not be stale;
// every rule the table names is raised by an emit header; every test it names exists and contains the rule's name
// and runs the op's host reference; and the table's levels agree with what the entry names.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <janus/emit/support.hpp>

using namespace janus;
using namespace janus::emit;

namespace {

const std::filesystem::path root{JANUS_SOURCE_DIR};

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// Every `"lower-..."` rule name the table mentions (the text before ':' of each "; "-separated item).
std::vector<std::string> rules_of(std::string_view refused) {
    std::vector<std::string> r;
    std::size_t from = 0;
    while (from < refused.size()) {
        std::size_t end = refused.find("; ", from);
        if (end == std::string_view::npos) end = refused.size();
        const std::string_view item = refused.substr(from, end - from);
        const std::string_view head = item.substr(0, item.find(':'));
        // "lower-a, lower-b, lower-c: as MatMul" names several
        std::size_t at = 0;
        while ((at = head.find("lower-", at)) != std::string_view::npos) {
            std::size_t stop = at;
            while (stop < head.size() && head[stop] != ',' && head[stop] != ' ') ++stop;
            r.emplace_back(head.substr(at, stop - at));
            at = stop;
        }
        from = end + 2;
    }
    return r;
}

}  // namespace

TEST_CASE("docs/emit_support.md is the generated form of emit::op_support") {
    const auto path = root / "docs" / "emit_support.md";
    const std::string text = support_markdown();
    const char* update = std::getenv("JANUS_UPDATE_GOLDEN");
    if (update && std::string(update) == "1") {
        std::ofstream(path, std::ios::binary) << text;
        MESSAGE("JANUS_UPDATE_GOLDEN=1: wrote " << path.string());
    }
    REQUIRE_MESSAGE(std::filesystem::exists(path), path.string() << " is missing");
    CHECK_MESSAGE(slurp(path) == text, path.string()
                                           << " is stale: regenerate it with JANUS_UPDATE_GOLDEN=1 ctest --test-dir "
                                              "build/<preset> -R '^emit_support$' and review the diff");
}

TEST_CASE("every rule the support table names is raised by an emit header") {
    std::string headers;
    for (const auto& e : std::filesystem::directory_iterator(root / "include" / "janus" / "emit"))
        if (e.path().filename() != "support.hpp") headers += slurp(e.path());
    int rules = 0;
    for (const auto& s : op_support)
        for (const auto& rule : rules_of(s.refused)) {
            CAPTURE(s.op);
            // literally, or built as "lower-" + op + "-<kind>" by a family of lowerings (emit/movement.hpp)
            const std::size_t dash = rule.find('-', 6);  // lower-<op>-<kind>: the dash after <op>
            const std::string kind = dash == std::string::npos ? rule : rule.substr(dash);
            const bool raised = headers.find("\"" + rule + "\"") != std::string::npos ||
                                headers.find("+ \"" + kind + "\"") != std::string::npos;
            CHECK_MESSAGE(raised, rule << " is raised nowhere");
            ++rules;
        }
    CHECK(rules >= 20);
}

TEST_CASE("every lowered or partial entry names an existing differential test that exercises its lowering") {
    for (const auto& s : op_support) {
        CAPTURE(s.op);
        if (s.level == Support::host || s.level == Support::not_yet) {
            CHECK(s.lowering.empty());
            CHECK_FALSE(s.refused.empty());  // the reason, or how it would lower
            continue;
        }
        const auto path = root / "tests" / std::string(s.test);
        REQUIRE_MESSAGE(std::filesystem::exists(path), path.string());
        std::string test;  // a file, or every file of a directory
        if (std::filesystem::is_directory(path))
            for (const auto& e : std::filesystem::directory_iterator(path)) test += slurp(e.path());
        else
            test = slurp(path);
        // the entry point (the text up to the first space or '<' or '(') is called by the test
        std::string_view entry = s.lowering.substr(0, s.lowering.find_first_of(" <("));
        CHECK_MESSAGE(test.find(std::string(entry)) != std::string::npos, entry << " is not called by " << s.test);
        bool runs_host = false;  // ops::Op followed by '>', ',' or "::" (a template argument or a member)
        for (const char* next : {">", ",", "::"})
            runs_host = runs_host || test.find("ops::" + std::string(s.op) + next) != std::string::npos;
        CHECK_MESSAGE(runs_host,
                      s.test << " does not run ops::" << s.op << " (the host reference the lowering is compared with)");
        if (s.level == Support::partial) CHECK_FALSE(s.refused.empty());
    }
}

TEST_CASE("find_support and the levels") {
    REQUIRE(find_support("Conv") != nullptr);
    CHECK(find_support("Conv")->level == Support::lowered);
    CHECK(find_support("Softmax")->level == Support::host);
    CHECK(find_support("NoSuchOp") == nullptr);
    CHECK(support_name(Support::not_yet) == "not lowered yet");
    const auto r = rules_of("lower-a, lower-b: x; not lowered yet: y; lower-c: z");
    CHECK(r == std::vector<std::string>{"lower-a", "lower-b", "lower-c"});
}
