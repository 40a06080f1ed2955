// A valid package that asks for more memory than it holds (issue 26): tests/hostile/package_regions_12g.jpk, a
// program of one halt whose scratch, input and output regions are 4 GiB each. The reader accepts it (every region
// is within the format's 2^32 bytes); janusc run and inspect must refuse it by their memory budget (memory-limit,
// exit 2) before they allocate anything: tests/janusc/cli_test.sh runs them on this file and bounds their peak RSS.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include <janus/package/package.hpp>

#include "sample.hpp"
#include "../support/text_file.hpp"

using namespace janus;
using namespace janus::package;

TEST_CASE("tests/hostile/package_regions_12g.jpk: a small valid package asking for 3 x 4 GiB of regions") {
    Package p = testing::minimal();
    p.scratch_bytes = p.input_bytes = p.output_bytes = format::max_region;
    const auto made = write_package(p, "package_regions_12g");
    REQUIRE_MESSAGE(made.ok(), made.error().message());
    const auto path = std::filesystem::path(JANUS_SOURCE_DIR) / "tests/hostile/package_regions_12g.jpk";
    if (janus_test::update_golden_requested()) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(made->data()), static_cast<std::streamsize>(made->size()));
        REQUIRE(out.good());
    }
    REQUIRE_MESSAGE(std::filesystem::exists(path), path.string() << " is missing; JANUS_UPDATE_GOLDEN=1 writes it");
    CHECK(janus_test::read_bytes(path) == *made);
    CHECK(made->size() < 1024);
    const auto back = read_package(*made, "package_regions_12g.jpk");
    REQUIRE_MESSAGE(back.ok(), back.error().message());
    CHECK(back->scratch_bytes + back->input_bytes + back->output_bytes == 3 * (std::uint64_t{1} << 32));
}
