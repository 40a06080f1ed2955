// Malformed packages (tests/package/bad/*.jpk) and the exact error each one gets (tests/package/bad/expected.txt).
//
// Each file is made by a recipe below from the sample or minimal package (tests/package/sample.hpp): a change of the
// header or the section table through craft::Image (then resealed, so that the change reaches the rule it targets
// rather than a checksum), a byte patch, or a package with invalid contents serialized with the content rules off
// (craft::unchecked: valid layout and checksums). The files are committed so that other readers can be tested
// against them; the test requires that each file is still what its recipe makes (JANUS_UPDATE_GOLDEN=1 rewrites
// them), that expected.txt lists every file and nothing else, and that reading each one gives exactly the listed
// message. expected.txt is written by hand and never rewritten by a test.
// For every recipe that mutates a package, the writer must refuse the package with exactly the reader's error: the
// content rules are one definition (package.hpp's transfer functions).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <janus/package/package.hpp>

#include "craft.hpp"
#include "sample.hpp"
#include "../support/text_file.hpp"

using namespace janus;
using namespace janus::package;
using Bytes = std::vector<std::uint8_t>;

namespace {

const std::filesystem::path bad_dir = std::filesystem::path(JANUS_SOURCE_DIR) / "tests/package/bad";

Bytes sample_bytes() { return write_package(testing::sample()).value(); }
Bytes minimal_bytes() { return write_package(testing::minimal()).value(); }
Bytes prefix(Bytes b, std::size_t n) {
    b.resize(n);
    return b;
}

/// Change the header / table of `b` through an Image; reseal unless asked not to.
Bytes edit(Bytes b, const std::function<void(craft::Image&, Bytes&)>& f, bool seal = true) {
    craft::Image im = craft::parse(b).value();
    f(im, b);
    craft::store(im, b);
    if (seal) craft::reseal(b);
    return b;
}
/// The section of kind `k` in `b`.
format::Entry section(const Bytes& b, std::uint32_t k) {
    const craft::Image im = craft::parse(b).value();
    for (const auto& e : im.entries)
        if (e.kind == k) return e;
    FAIL("no section of kind " << k);
    return {};
}
std::uint32_t kind(format::Kind k) { return static_cast<std::uint32_t>(k); }

struct Recipe {
    std::string name;
    std::function<Bytes()> make;
    std::function<void(Package&)> mutate;  ///< set for content recipes: `make` serializes the mutated sample
};

Recipe bytes(std::string name, std::function<Bytes()> make) { return {std::move(name), std::move(make), {}}; }
Recipe header(std::string name, std::function<void(format::Header&)> f) {
    return {std::move(name), [f] { return edit(sample_bytes(), [&](craft::Image& im, Bytes&) { f(im.header); }); }, {}};
}
Recipe table(std::string name, std::function<void(std::vector<format::Entry>&)> f) {
    return {
        std::move(name), [f] { return edit(sample_bytes(), [&](craft::Image& im, Bytes&) { f(im.entries); }); }, {}};
}
Recipe content(std::string name, std::function<void(Package&)> f) {
    return {std::move(name),
            [f] {
                Package p = testing::sample();
                f(p);
                return craft::unchecked(p).value();
            },
            f};
}

const std::vector<Recipe>& recipes() {
    static const std::vector<Recipe> all = {
        // ---- header
        bytes("not_a_package",
              [] {
                  Bytes b = sample_bytes();
                  const char zip[] = "PK\x03\x04";
                  std::copy(zip, zip + 4, b.begin());
                  return b;
              }),
        bytes("empty", [] { return Bytes{}; }),
        bytes("truncated_magic", [] { return prefix(sample_bytes(), 5); }),
        header("newer_version", [](format::Header& h) { h.version = format::version + 1; }),
        header("version_zero", [](format::Header& h) { h.version = 0; }),
        header("header_size", [](format::Header& h) { h.header_size = 128; }),
        bytes("truncated_header", [] { return prefix(sample_bytes(), 60); }),
        bytes("header_corrupted",  // the file size changed, the header checksum not recomputed
              [] {
                  return edit(
                      sample_bytes(), [](craft::Image& im, Bytes&) { ++im.header.file_size; }, false);
              }),
        bytes("truncated_file",
              [] {
                  Bytes b = sample_bytes();
                  b.pop_back();
                  return b;
              }),
        bytes("extended_file",
              [] {
                  Bytes b = sample_bytes();
                  b.push_back(0);
                  return b;
              }),
        header("table_offset", [](format::Header& h) { h.table_offset = 128; }),
        header("too_many_sections", [](format::Header& h) { h.section_count = 65; }),
        bytes("table_past_end",
              [] { return edit(minimal_bytes(), [](craft::Image& im, Bytes&) { im.header.section_count = 20; }); }),
        bytes("table_corrupted",  // a table byte changed, the table checksum not recomputed
              [] {
                  Bytes b = sample_bytes();
                  b[format::header_size + format::entry_size + format::entry_field("offset")] ^= 0x40;
                  return b;
              }),
        header("toolchain_mismatch", [](format::Header& h) { h.isa_hash = 0x0123456789abcdefull; }),
        header("toolchain_version_chars", [](format::Header& h) { h.toolchain[2] = 0x07; }),
        header("toolchain_version_tail", [](format::Header& h) { h.toolchain[20] = 'x'; }),
        header("header_reserved", [](format::Header& h) { h.reserved[3] = 1; }),
        // ---- section table
        table("section_flags", [](auto& e) { e[0].flags = 4; }),
        table("section_kind_zero", [](auto& e) { e[5].kind = 0; }),
        table("section_required_optional", [](auto& e) { e[2].flags = format::flag_optional; }),
        table("section_unknown", [](auto& e) { e[5].flags = 0; }),
        table("section_duplicate", [](auto& e) { e[4].kind = kind(format::Kind::io); }),
        table("section_order",
              [](auto& e) {
                  e[1].kind = kind(format::Kind::memory);
                  e[2].kind = kind(format::Kind::weights);
              }),
        table("section_alignment", [](auto& e) { e[0].alignment = 16; }),
        table("section_overflow", [](auto& e) { e[5].length = std::numeric_limits<std::uint64_t>::max() - 1000; }),
        table("section_bounds", [](auto& e) { ++e[5].length; }),
        table("section_misaligned", [](auto& e) { ++e[0].offset; }),
        table("section_overlaps_table", [](auto& e) { e[0].offset -= format::alignment; }),
        table("section_overlap", [](auto& e) { e[2].offset -= format::alignment; }),
        bytes("section_gap",  // the extra section moved 64 bytes further, the file grown to hold it
              [] {
                  Bytes b = sample_bytes();
                  const format::Entry x = section(b, 4096);
                  b.insert(b.begin() + static_cast<std::ptrdiff_t>(x.offset), format::alignment, 0);
                  return edit(b, [](craft::Image& im, Bytes& bb) {
                      im.entries[5].offset += format::alignment;
                      im.header.file_size = bb.size();
                  });
              }),
        bytes("padding_nonzero",  // a padding byte after the code section (not covered by a checksum)
              [] {
                  Bytes b = sample_bytes();
                  const format::Entry c = section(b, kind(format::Kind::code));
                  b[c.offset + c.length + 6] = 0x5A;
                  return b;
              }),
        bytes("section_corrupted",
              [] {
                  Bytes b = sample_bytes();
                  b[section(b, kind(format::Kind::weights)).offset + 10] ^= 0x01;
                  return b;
              }),
        bytes("section_missing",  // the minimal package's table without its last (debug) entry, zeroed
              [] {
                  return edit(minimal_bytes(), [](craft::Image& im, Bytes& b) {
                      --im.header.section_count;
                      im.entries.pop_back();
                      const std::size_t at = format::header_size + im.entries.size() * format::entry_size;
                      std::fill(b.begin() + static_cast<std::ptrdiff_t>(at),
                                b.begin() + static_cast<std::ptrdiff_t>(at + format::entry_size), 0);
                  });
              }),
        bytes("trailing_bytes",
              [] {
                  Bytes b = sample_bytes();
                  b.resize(b.size() + format::alignment, 0);
                  return edit(b, [](craft::Image& im, Bytes& bb) { im.header.file_size = bb.size(); });
              }),
        // ---- code
        content("code_empty", [](Package& p) { p.code.clear(); }),
        content("code_reserved_bits", [](Package& p) { p.code[2] |= std::uint64_t{1} << 40; }),
        content("code_event_flag", [](Package& p) { p.code[1] |= std::uint64_t{5} << 53; }),
        content("code_unknown_opcode", [](Package& p) { p.code[0] = std::uint64_t{63} << 58; }),
        content("code_no_halt", [](Package& p) { p.code.back() = 0; }),
        bytes("code_length",  // the code section grown by 4 (zero) padding bytes
              [] { return edit(sample_bytes(), [](craft::Image& im, Bytes&) { im.entries[0].length += 4; }); }),
        // ---- weights and memory
        content("weights_length", [](Package& p) { p.weights.resize(456); }),
        content("region_size", [](Package& p) { p.scratch_bytes = 100; }),
        bytes("count_bounds",  // the buffer count (after the three u64 region sizes) made huge
              [] {
                  Bytes b = sample_bytes();
                  b[section(b, kind(format::Kind::memory)).offset + 24 + 3] = 0x01;
                  craft::reseal(b);
                  return b;
              }),
        content("buffer_kind", [](Package& p) { p.buffers[2].kind = static_cast<BufferKind>(9); }),
        content("buffer_alignment", [](Package& p) { p.buffers[0].offset = 8; }),
        content("buffer_size", [](Package& p) { p.buffers[0].size = 200; }),
        content("buffer_bounds", [](Package& p) { p.buffers[5].offset = 448; }),
        content("buffer_name_unique", [](Package& p) { p.buffers[8].name = "t0"; }),
        content("buffer_overlap", [](Package& p) { p.buffers[6].size = 80; }),
        content("name_empty", [](Package& p) { p.buffers[1].name.clear(); }),
        content("name_chars", [](Package& p) { p.inputs[1].name = "ma\tsk"; }),
        content("name_length", [](Package& p) { p.debug[0].node.assign(5000, 'n'); }),
        // ---- io
        content("io_dtype", [](Package& p) { p.inputs[0].dtype = static_cast<DType>(9); }),
        bytes("io_rank",  // input 0's rank byte: after the input count, the name ("image") and the two dtype bytes
              [] {
                  Bytes b = sample_bytes();
                  b[section(b, kind(format::Kind::io)).offset + 4 + 4 + 5 + 2] = 9;
                  craft::reseal(b);
                  return b;
              }),
        content("io_dim", [](Package& p) { p.inputs[0].shape[1] = -3; }),
        content("io_stride", [](Package& p) { p.inputs[0].strides[0] = -256; }),
        content("io_scale", [](Package& p) { p.outputs[1].quant.scales[1] = std::nanf(""); }),
        content("io_zero_point", [](Package& p) { p.outputs[1].quant.zero_points[2] = 128; }),
        content("io_quant_axis", [](Package& p) { p.outputs[1].quant.axis = 2; }),
        content("io_quantization",
                [](Package& p) {
                    p.inputs[1].dtype = p.inputs[1].storage = DType::f32;
                    p.inputs[1].quant = {{1.0f}, {0}, 0};
                }),
        content("io_conversion", [](Package& p) { p.outputs[0].quant = {}; }),
        content("io_alias", [](Package& p) { p.inputs[0].strides[3] = 2; }),
        content("io_size", [](Package& p) { p.outputs[0].size = 8; }),
        content("io_alignment", [](Package& p) { p.inputs[1].offset = 264; }),
        content("io_bounds", [](Package& p) { p.outputs[2].size = 32; }),
        content("io_overlap", [](Package& p) { p.outputs[2].offset = 64; }),
        content("io_name_unique", [](Package& p) { p.outputs[0].name = "mask"; }),
        // ---- debug
        content("debug_range", [](Package& p) { p.debug[3].last = 14; }),
        content("debug_order", [](Package& p) { p.debug[2].first = 9; }),
        // ---- host
        content("host_empty",
                [](Package& p) {
                    p.host = HostSection{0, ""};
                }),
        content("host_text_chars",
                [](Package& p) {
                    p.host = HostSection{0, "graph g {\n\x01}\n"};
                }),
        bytes("host_optional",  // the host section (entry 5, before the extra one) marked optional
              [] {
                  Package p = testing::sample();
                  p.host = HostSection{0, "graph g {\n}\n"};
                  return edit(write_package(p).value(),
                              [](craft::Image& im, Bytes&) { im.entries[5].flags = format::flag_optional; });
              }),
        // ---- segments
        content("segments_host",
                [](Package& p) {
                    p.segments = {{1, 0, 0, 0}};
                }),
        content("segments_entry",
                [](Package& p) {
                    p.host = HostSection{0, "graph g {\n}\n"};
                    p.segments = {{3, 0, 0, 0}, {3, 0, 0, 0}};
                }),
        content("segments_order",
                [](Package& p) {
                    p.host = HostSection{2, "graph g {\n}\n"};
                    p.segments = {{1, 1, 0, 0}};
                }),
        content("segments_io",
                [](Package& p) {
                    p.host = HostSection{0, "graph g {\n}\n"};
                    p.segments = {{1, 0, 0, 7}};
                }),
        bytes("segments_empty",  // a segments section whose record count is 0 (its one record left as trailing bytes)
              [] {
                  Package p = testing::sample();
                  p.host = HostSection{0, "graph g {\n}\n"};
                  p.segments = {{1, 0, 0, 0}};
                  Bytes b = write_package(p).value();
                  b[section(b, kind(format::Kind::segments)).offset] = 0;
                  craft::reseal(b);
                  return b;
              }),
        // ---- placement (format version 2)
        content("placement_count",
                [](Package& p) {
                    p.placement = PlacementRecord{1, {{0, "a", "Softmax", "lower-op", "why", true},
                                                      {1, "b", "Relu", "lower-op", "why", true}}};
                }),
        content("placement_index",
                [](Package& p) {
                    p.placement = PlacementRecord{3, {{1, "a", "Softmax", "lower-op", "why", true},
                                                      {1, "b", "Relu", "lower-op", "why", true}}};
                }),
        content("placement_rule_empty",
                [](Package& p) {
                    p.placement = PlacementRecord{3, {{1, "a", "Softmax", "", "why", true}}};
                }),
        bytes("placement_flag",  // the quantized flag of the one host node is 2 (after nodes, count and index)
              [] {
                  Package p = testing::sample();
                  p.placement = PlacementRecord{2, {{0, "a", "Softmax", "lower-op", "why", true}}};
                  Bytes b = write_package(p).value();
                  b[section(b, kind(format::Kind::placement)).offset + 12] = 2;
                  craft::reseal(b);
                  return b;
              }),
        bytes("placement_in_version_1",  // a version-1 header over a package with a placement section (kind 8)
              [] {
                  Package p = testing::sample();
                  p.placement = PlacementRecord{2, {}};
                  return edit(write_package(p).value(), [](craft::Image& im, Bytes&) { im.header.version = 1; });
              }),
        // ---- numerics (format version 3)
        bytes("numerics_rounding",  // rounding code 3 (0 double, 1 single, 2 half-even)
              [] {
                  Package p = testing::sample();
                  p.rounding = numeric::Rounding::round_single;
                  Bytes b = write_package(p).value();
                  b[section(b, kind(format::Kind::numerics)).offset] = 3;
                  craft::reseal(b);
                  return b;
              }),
        bytes("numerics_in_version_2",  // a version-2 header over a package with a numerics section (kind 9)
              [] {
                  Package p = testing::sample();
                  p.rounding = numeric::Rounding::round_half_even;
                  return edit(write_package(p).value(), [](craft::Image& im, Bytes&) { im.header.version = 2; });
              }),
        // ---- section contents vs lengths
        bytes("section_truncated",  // the memory section cut by 4 bytes, inside the last buffer's size field
              [] { return edit(sample_bytes(), [](craft::Image& im, Bytes&) { im.entries[2].length -= 4; }); }),
        bytes("section_trailing",  // the io section grown by 4 (zero) padding bytes
              [] { return edit(sample_bytes(), [](craft::Image& im, Bytes&) { im.entries[3].length += 4; }); }),
    };
    return all;
}

/// expected.txt: one message per file (its input name is the file name); '#' lines are comments.
std::map<std::string, std::string> expected_messages() {
    std::map<std::string, std::string> m;
    std::ifstream in(bad_dir / "expected.txt");
    REQUIRE_MESSAGE(in.good(), (bad_dir / "expected.txt").string() << " is missing");
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const std::string file = line.substr(0, line.find(':'));
        CHECK_MESSAGE(m.emplace(file, line).second, file << " is listed twice");
    }
    return m;
}

}  // namespace

TEST_CASE("every bad file is what its recipe makes") {
    std::set<std::string> names;
    for (const Recipe& r : recipes()) {
        CAPTURE(r.name);
        REQUIRE(names.insert(r.name).second);
        const Bytes made = r.make();
        const auto path = bad_dir / (r.name + ".jpk");
        if (janus_test::update_golden_requested()) {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out.write(reinterpret_cast<const char*>(made.data()), static_cast<std::streamsize>(made.size()));
            REQUIRE(out.good());
            continue;
        }
        REQUIRE_MESSAGE(std::filesystem::exists(path),
                        path.string() << " is missing; JANUS_UPDATE_GOLDEN=1 writes the bad files from their recipes");
        CHECK_MESSAGE(janus_test::read_bytes(path) == made,
                      path.string() << " is not what its recipe makes (rewrite it deliberately "
                                       "with JANUS_UPDATE_GOLDEN=1 and review expected.txt)");
    }
}

TEST_CASE("every bad file gets exactly its expected error") {
    const auto expected = expected_messages();
    std::set<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(bad_dir))
        if (e.path().extension() == ".jpk") files.insert(e.path().filename().string());
    std::set<std::string> listed;
    for (const auto& [file, _] : expected) listed.insert(file);
    CHECK_MESSAGE(files == listed, "the .jpk files of tests/package/bad/ and the files expected.txt lists differ");
    CHECK(files.size() == recipes().size());
    for (const std::string& file : files) {
        CAPTURE(file);
        const Bytes b = janus_test::read_bytes(bad_dir / file);
        const auto r = read_package(b, file);
        REQUIRE_FALSE(r.ok());
        const auto want = expected.find(file);
        if (want != expected.end()) CHECK(r.error().message() == want->second);
        CHECK(r.error().position.rfind("byte ", 0) == 0);
    }
}

TEST_CASE("the writer refuses a package with exactly the reader's error") {
    int n = 0;
    for (const Recipe& r : recipes()) {
        if (!r.mutate) continue;
        CAPTURE(r.name);
        Package p = testing::sample();
        r.mutate(p);
        const auto written = write_package(p, r.name);
        const auto read = read_package(r.make(), r.name);
        REQUIRE_FALSE(written.ok());
        REQUIRE_FALSE(read.ok());
        CHECK(written.error() == read.error());
        ++n;
    }
    CHECK(n >= 30);
}

TEST_CASE("every rule of docs/package.md is raised by a bad file or is documented as writer-only") {
    std::ifstream in(std::filesystem::path(JANUS_SOURCE_DIR) / "docs/package.md");
    REQUIRE(in.good());
    // rule rows of the validation table: "| `rule` | ..."
    std::set<std::string> documented, writer_only;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::size_t end = line.find('`', 3);
        const std::string rule = line.substr(3, end - 3);
        if (rule.find(' ') != std::string::npos) continue;
        documented.insert(rule);
        if (line.find("(writer only)") != std::string::npos) writer_only.insert(rule);
    }
    std::set<std::string> raised;
    for (const auto& [file, message] : expected_messages()) {
        const std::size_t open = message.rfind('[');
        raised.insert(message.substr(open + 1, message.size() - open - 2));
    }
    CHECK(documented.size() >= 50);
    for (const std::string& rule : documented) {
        CAPTURE(rule);
        CHECK(raised.count(rule) + writer_only.count(rule) == 1);
    }
    for (const std::string& rule : raised) {
        CAPTURE(rule);
        CHECK(documented.count(rule) == 1);
    }
}
