// The ONNX importer (graph/import_onnx.hpp): every fixture imports to a verified graph whose text form is pinned
// by a golden file (tests/onnx/golden/<fixture>.ir, rewritten only with JANUS_UPDATE_GOLDEN=1).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <janus/graph/import_onnx.hpp>

#include "support/text_file.hpp"
#include "support/expected_errors.hpp"

namespace {

namespace fs = std::filesystem;
using namespace janus;

Result<graph::Graph> import_file(const std::string& path) {
    JANUS_TRY(auto m, onnx::read_model_file(path));
    return graph::import_onnx(m, path);
}

}  // namespace

TEST_CASE("every fixture imports to a verified graph matching its golden text form") {
    const bool update = std::getenv("JANUS_UPDATE_GOLDEN") != nullptr;
    int n = 0;
    for (const auto& e : fs::directory_iterator("onnx/fixtures")) {
        if (e.path().extension() != ".onnx") continue;
        const std::string name = e.path().stem().string();
        CAPTURE(name);
        const auto g = import_file(e.path().string());
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
        CHECK(graph::verify(*g).ok());
        const std::string text = graph::print(*g, false);
        const fs::path golden = fs::path("onnx/golden") / (name + ".ir");
        if (update) {
            fs::create_directories(golden.parent_path());
            std::ofstream(golden, std::ios::binary) << text;
        } else {
            CHECK(text == janus_test::read_text(golden));
        }
        ++n;
    }
    CHECK(n == 9);
}

TEST_CASE("every model in onnx/bad_import is refused with its exact error") {
    janus_test::check_expected_errors("onnx/bad_import", [](const std::string& path) -> std::optional<Error> {
        const auto g = import_file(path);
        if (g.ok()) return std::nullopt;
        return g.error();
    });
}
