// Format versions (docs/package.md "Versions"): this build writes version 2 and reads versions 1 and 2. A file of an
// older compatible version is read as it is and writes back to the same bytes; a newer one is refused naming both
// versions (tests/package/bad/newer_version.jpk). tests/package/v1/qdq_float_middle.jpk was written by the last
// version-1 Janus (`janusc compile tests/onnx/fixtures/qdq_float_middle.onnx`, before the placement section).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/package/package.hpp>

#include "sample.hpp"

namespace versions_test {

using namespace janus;
using namespace janus::package;

const std::string v1_path =
    (std::filesystem::path(JANUS_SOURCE_DIR) / "tests/package/v1/qdq_float_middle.jpk").string();

std::vector<std::uint8_t> v1_bytes() {
    auto b = read_file(v1_path, "file-readable");
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? std::string() : b.error().message()));
    return std::move(*b);
}


TEST_CASE("a version-1 package is read as it is: no placement record, written back byte for byte") {
    const auto bytes = v1_bytes();
    const auto p = read_package(bytes, "v1.jpk", ReadOptions{.check_toolchain = false});
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    CHECK(p->format_version == 1);
    CHECK_FALSE(p->placement.has_value());
    CHECK(p->host.has_value());  // the sections version 1 knows are all there
    CHECK(p->segments.size() == 1);
    const auto again = write_package(*p);
    REQUIRE(again.ok());
    CHECK(*again == bytes);
    const auto text = inspect(bytes, "v1.jpk");
    REQUIRE(text.ok());
    CHECK(text->find("format version 1,") != std::string::npos);
    CHECK(text->find("placement: not recorded (format version 1)") != std::string::npos);
}

TEST_CASE("the version-1 package's instruction set is not this build's: it is read and shown, never run") {
    // The format version says how to read the file; the instruction-set hash says whether its words mean this
    // build's instructions (docs/package.md "Versions"). The parameter-table layouts entered the hash after it.
    const auto bytes = v1_bytes();
    const auto shown = read_package(bytes, "v1.jpk", ReadOptions{.check_toolchain = false});
    REQUIRE(shown.ok());
    CHECK(shown->toolchain.isa_hash == 0x4530912f8519ddd2ull);
    CHECK(shown->toolchain.isa_hash != current_isa_hash);
    const auto run = read_package(bytes, "v1.jpk");
    REQUIRE_FALSE(run.ok());
    CHECK(run.error().rule == "package-toolchain");
    CAPTURE(run.error().message());
    CHECK(run.error().message().find("0x4530912f8519ddd2") != std::string::npos);
    CHECK(run.error().message().find(detail::hex(current_isa_hash)) != std::string::npos);
}

TEST_CASE("this build writes version 2; a placement record cannot be written into a version-1 file") {
    Package p = testing::sample();
    CHECK(p.format_version == format::version);
    CHECK(format::version == 2);
    p.placement = PlacementRecord{4, {{2, "sm", "Softmax", "lower-op", "Softmax on int8 is not lowered", true}}};
    const auto v2 = write_package(p);
    REQUIRE(v2.ok());
    const auto back = read_package(*v2, "v2.jpk");
    REQUIRE(back.ok());
    CHECK(*back == p);
    p.format_version = 1;
    const auto refused = write_package(p);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().rule == "section-unknown");
    p.placement.reset();  // without it, the same package is a valid version-1 file
    const auto v1 = write_package(p);
    REQUIRE(v1.ok());
    const auto v1_back = read_package(*v1, "v1.jpk");
    REQUIRE(v1_back.ok());
    CHECK(v1_back->format_version == 1);
    p.format_version = 3;  // a version this build does not know is not written either
    const auto v3 = write_package(p);
    REQUIRE_FALSE(v3.ok());
    CHECK(v3.error().rule == "package-version");
}

}  // namespace versions_test
