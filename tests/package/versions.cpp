// Format versions (docs/package.md "Versions"): this build writes version 3 and reads versions 1 to 3. A file of an
// older compatible version is read as it is and writes back to the same bytes; a newer one is refused naming both
// versions (tests/package/bad/newer_version.jpk). tests/package/v1/qdq_float_middle.jpk was written by the last
// version-1 Janus (`janusc compile tests/onnx/fixtures/qdq_float_middle.onnx`, before the placement section);
// tests/package/v2/qdq_softmax_head.jpk by the last version-2 Janus (`janusc compile
// tests/onnx/fixtures/qdq_softmax_head.onnx`, before the numerics section).
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

const std::string v2_path =
    (std::filesystem::path(JANUS_SOURCE_DIR) / "tests/package/v2/qdq_softmax_head.jpk").string();

std::vector<std::uint8_t> bytes_at(const std::string& path) {
    auto b = read_file(path, "file-readable");
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? std::string() : b.error().message()));
    return std::move(*b);
}
std::vector<std::uint8_t> v1_bytes() { return bytes_at(v1_path); }


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
    CHECK(text->find("rounding: double (not recorded: format version 1)") != std::string::npos);
}

TEST_CASE("a version-2 package is read as it is: a placement record, no numerics record, rounding double") {
    const auto bytes = bytes_at(v2_path);
    const auto p = read_package(bytes, "v2.jpk");  // the instruction set is this build's: it may run
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    CHECK(p->format_version == 2);
    CHECK(p->placement.has_value());
    CHECK_FALSE(p->rounding.has_value());
    CHECK(effective_rounding(*p) == numeric::Rounding::round_double);
    const auto again = write_package(*p);
    REQUIRE(again.ok());
    CHECK(*again == bytes);
    const auto text = inspect(bytes, "v2.jpk");
    REQUIRE(text.ok());
    CHECK(text->find("format version 2,") != std::string::npos);
    CHECK(text->find("rounding: double (not recorded: format version 2)") != std::string::npos);
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

TEST_CASE("this build writes version 3; a record a version does not know cannot be written into its file") {
    Package p = testing::sample();
    CHECK(p.format_version == format::version);
    CHECK(format::version == 3);
    p.rounding = numeric::Rounding::round_half_even;
    const auto v3 = write_package(p);
    REQUIRE(v3.ok());
    const auto v3_back = read_package(*v3, "v3.jpk");
    REQUIRE(v3_back.ok());
    CHECK(*v3_back == p);
    p.format_version = 2;  // a numerics record in a version-2 file
    const auto no_numerics = write_package(p);
    REQUIRE_FALSE(no_numerics.ok());
    CHECK(no_numerics.error().rule == "section-unknown");
    p.rounding.reset();
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
    p.format_version = 4;  // a version this build does not know is not written either
    const auto v4 = write_package(p);
    REQUIRE_FALSE(v4.ok());
    CHECK(v4.error().rule == "package-version");
}

}  // namespace versions_test
