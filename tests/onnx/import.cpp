// The ONNX importer (graph/import_onnx.hpp): every fixture imports to a verified graph whose text form is pinned
// by a golden file (tests/onnx/golden/<fixture>.ir, rewritten only with JANUS_UPDATE_GOLDEN=1).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>

#include "kernels.hpp"
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
    CHECK(n == 11);
}

TEST_CASE("graph outputs that are a Constant node's output or an Identity of a graph input keep their names") {
    {
        const auto g = import_file("onnx/edge/constant_output.onnx");
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
        REQUIRE(g->outputs.size() == 1);
        CHECK(g->value(g->outputs[0]).name == "values");
        const auto out = graph::run_reference(*g, {}, janus_tools::kernel_by_name);
        REQUIRE(out.ok());
        CHECK(out->at(0).to_vector<float>() == std::vector<float>{0.5f, -1.0f, 2.0f, 3.25f, 0.0f, -7.5f});
    }
    {
        const auto g = import_file("onnx/edge/identity_of_input.onnx");
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
        REQUIRE(g->outputs.size() == 1);
        CHECK(g->value(g->outputs[0]).name == "y");
        const std::vector<float> x{1.0f, -2.0f, 3.5f, 0.25f};
        const Tensor in = Tensor::from<float>(Shape{1, 4}, x);
        const auto out = graph::run_reference(*g, std::span<const Tensor>(&in, 1), janus_tools::kernel_by_name);
        REQUIRE(out.ok());
        CHECK(out->at(0).to_vector<float>() == x);
    }
}

TEST_CASE("every model in onnx/bad_import is refused with its exact error") {
    janus_test::check_expected_errors("onnx/bad_import", [](const std::string& path) -> std::optional<Error> {
        const auto g = import_file(path);
        if (g.ok()) return std::nullopt;
        return g.error();
    });
}
