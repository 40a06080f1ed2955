// The package format (janus/package/package.hpp, docs/package.md): checksum and hash vectors, the toolchain
// identity, the fixed layouts, round trips, determinism (seed D8), the golden bytes and inspect text of the two test
// packages (tests/package/golden/, rewritten only with JANUS_UPDATE_GOLDEN=1) and the toolchain check (seed D3).
#include <doctest/doctest.h>

#include <unistd.h>

#include <clocale>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <locale>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <janus/package/file.hpp>
#include <janus/package/package.hpp>
#include <janus/version.hpp>

#include "../support/check_rule.hpp"
#include "craft.hpp"
#include "sample.hpp"
#include "../support/text_file.hpp"

using namespace janus;
using namespace janus::package;
using Bytes = std::vector<std::uint8_t>;

namespace {

const std::filesystem::path golden_dir = std::filesystem::path(JANUS_SOURCE_DIR) / "tests/package/golden";

/// Compare `data` with the golden file `name`, or (JANUS_UPDATE_GOLDEN=1) write it.
void golden(const std::string& name, const Bytes& data) {
    const auto path = golden_dir / name;
    if (janus_test::update_golden_requested()) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
        REQUIRE(out.good());
        MESSAGE("JANUS_UPDATE_GOLDEN=1: wrote " << path.string());
        return;
    }
    REQUIRE_MESSAGE(std::filesystem::exists(path), path.string() << " is missing (never created silently); "
                                                                    "JANUS_UPDATE_GOLDEN=1 writes it");
    const Bytes want = janus_test::read_bytes(path);
    if (want == data) return;
    std::size_t i = 0;
    while (i < want.size() && i < data.size() && want[i] == data[i]) ++i;
    FAIL_CHECK(path.string() << " differs from what the writer produces, first at byte " << i << " (" << want.size()
                             << " vs " << data.size() << " bytes). If the change is intended, rewrite "
                             << "it with JANUS_UPDATE_GOLDEN=1 and review the diff (tests/package/golden/README.md)");
}
Bytes text_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

TEST_CASE("checksum and hash test vectors") {
    const std::string_view digits = "123456789";
    const Bytes b(digits.begin(), digits.end());
    CHECK(crc32c(b) == 0xE3069283u);
    CHECK(crc32c(Bytes{}) == 0u);
    CHECK(fnv1a64("") == 0xCBF29CE484222325ull);
    CHECK(fnv1a64("a") == 0xAF63DC4C8601EC8Cull);
    CHECK(fnv1a64("foobar") == 0x85944171F73967E8ull);
    static_assert(crc32c(std::span<const std::uint8_t>{}) == 0);
}

TEST_CASE("isa_hash covers every encoding and execution property of every row, not its documentation") {
    static_assert(isa_hash() == isa_hash(vnpu::instruction_table), "computed at compile time");
    auto table = vnpu::instruction_table;
    const std::uint64_t h = isa_hash(table);
    CHECK(h == current_isa_hash);
    std::set<std::uint64_t> seen{h};
    int changes = 0;
    const auto differs = [&](auto&& change) {
        auto t = vnpu::instruction_table;
        change(t);
        const std::uint64_t x = isa_hash(t);
        CHECK(x != h);
        seen.insert(x);
        ++changes;
    };
    for (std::size_t i = 0; i < table.size(); ++i) {
        CAPTURE(table[i].mnemonic);
        differs([&](auto& t) { t[i].mnemonic = "renamed"; });
        differs([&](auto& t) { t[i].opcode ^= 1; });
        differs([&](auto& t) { t[i].unit = static_cast<vnpu::Unit>((static_cast<int>(t[i].unit) + 1) % 5); });
        differs([&](auto& t) { t[i].fixed.value ^= 1; });
        differs([&](auto& t) { t[i].fixed.lo ^= 1; });
        differs([&](auto& t) { t[i].sem = static_cast<vnpu::Sem>(static_cast<int>(t[i].sem) ^ 1); });
        differs([&](auto& t) { t[i].cost = static_cast<vnpu::Cost>(static_cast<int>(t[i].cost) ^ 1); });
        differs([&](auto& t) { t[i].func += 1; });
        for (int k = 0; k < table[i].n_fields; ++k) {
            const auto f = static_cast<std::size_t>(k);
            differs([&](auto& t) { t[i].fields[f].name = "other"; });
            differs([&](auto& t) { t[i].fields[f].lo += 1; });
            differs([&](auto& t) { t[i].fields[f].width -= 1; });
            differs([&](auto& t) {
                t[i].fields[f].kind = static_cast<vnpu::FieldKind>((static_cast<int>(t[i].fields[f].kind) + 1) % 7);
            });
            differs([&](auto& t) { t[i].fields[f].scale *= 2; });
        }
        if (table[i].n_fields > 0) differs([&](auto& t) { t[i].n_fields -= 1; });
        auto t = vnpu::instruction_table;
        t[i].semantics = "another sentence";
        CHECK(isa_hash(t) == h);
    }
    auto swapped = vnpu::instruction_table;
    std::swap(swapped[0], swapped[1]);
    CHECK(isa_hash(swapped) != h);
    CHECK(isa_hash(std::span(vnpu::instruction_table).first(vnpu::instruction_table.size() - 1)) != h);
    CHECK(seen.size() == static_cast<std::size_t>(changes) + 1);  // no two changes collide either
}

namespace {
std::uint64_t hash_with(const decltype(vnpu::rq_header_layout)& l) {
    return isa_hash(vnpu::instruction_table, l, vnpu::rq_channel_layout, vnpu::ew_layout);
}
std::uint64_t hash_with(const decltype(vnpu::rq_channel_layout)& l) {
    return isa_hash(vnpu::instruction_table, vnpu::rq_header_layout, l, vnpu::ew_layout);
}
std::uint64_t hash_with(const decltype(vnpu::ew_layout)& l) {
    return isa_hash(vnpu::instruction_table, vnpu::rq_header_layout, vnpu::rq_channel_layout, l);
}
}  // namespace

TEST_CASE("isa_hash covers every field of every parameter-table layout (vnpu/params.hpp), not its meaning text") {
    const std::uint64_t h = isa_hash();
    CHECK(h == isa_hash(vnpu::instruction_table, vnpu::rq_header_layout, vnpu::rq_channel_layout, vnpu::ew_layout));
    CHECK(isa_hash(vnpu::instruction_table, vnpu::rq_channel_layout, vnpu::rq_header_layout, vnpu::ew_layout) != h);
    std::set<std::uint64_t> seen{h};
    int changes = 0;
    const auto differs = [&](std::uint64_t x) {
        CHECK(x != h);
        seen.insert(x);
        ++changes;
    };
    const auto every_change = [&](const auto& layout) {
        CAPTURE(layout.name);
        for (std::size_t i = 0; i < layout.fields.size(); ++i) {
            CAPTURE(layout.fields[i].name);
            auto l = layout;
            l.fields[i].name = "other";
            differs(hash_with(l));
            l = layout;
            l.fields[i].offset += 1;
            differs(hash_with(l));
            l = layout;
            l.fields[i].width -= 1;
            differs(hash_with(l));
            l = layout;
            l.fields[i].kind = static_cast<vnpu::ParamKind>((static_cast<int>(l.fields[i].kind) + 1) % 5);
            differs(hash_with(l));
            l = layout;
            l.fields[i].min -= 1;
            differs(hash_with(l));
            l = layout;
            l.fields[i].max += 1;
            differs(hash_with(l));
            l = layout;
            l.fields[i].meaning = "another sentence";
            CHECK(hash_with(l) == h);
        }
        auto l = layout;
        l.size += 16;
        differs(hash_with(l));
        l = layout;
        l.fault = "other-table";
        differs(hash_with(l));
        l = layout;
        l.consistent_text = "another rule";
        differs(hash_with(l));
    };
    every_change(vnpu::rq_header_layout);
    every_change(vnpu::rq_channel_layout);
    every_change(vnpu::ew_layout);
    CHECK(seen.size() == static_cast<std::size_t>(changes) + 1);  // no two changes collide either
}

TEST_CASE("fixed layouts: a 96-byte header ending with its checksum, 32-byte table entries") {
    CHECK(detail::header_layout().size() == format::header_size);
    CHECK(detail::entry_layout().size() == format::entry_size);
    CHECK(format::header_field("magic") == 0);
    CHECK(format::header_field("format version") == 8);
    CHECK(format::header_field("header size") == 12);
    CHECK(format::header_field("file size") == 16);
    CHECK(format::header_field("section table offset") == 24);
    CHECK(format::header_field("section count") == 32);
    CHECK(format::header_field("section table checksum") == 36);
    CHECK(format::header_field("isa hash") == 40);
    CHECK(format::header_field("toolchain version") == 48);
    CHECK(format::header_field("reserved") == 80);
    CHECK(format::header_field("header checksum") == 92);
    CHECK(format::entry_field("kind") == 0);
    CHECK(format::entry_field("flags") == 4);
    CHECK(format::entry_field("offset") == 8);
    CHECK(format::entry_field("length") == 16);
    CHECK(format::entry_field("alignment") == 24);
    CHECK(format::entry_field("checksum") == 28);
    // the smallest items, which bound a count by the bytes that remain
    CHECK(detail::io_min_bytes() == 31);
}

TEST_CASE("round trip: write -> read gives the same package, and the bytes are canonical") {
    for (const Package& p : {testing::minimal(), testing::sample()}) {
        const auto b = write_package(p);
        REQUIRE(b.ok());
        const auto r = read_package(*b, "pkg");
        REQUIRE_MESSAGE(r.ok(), r.error().message());
        CHECK(*r == p);
        CHECK(write_package(*r).value() == *b);
        // the header and table say what the writer did
        const auto im = craft::parse(*b).value();
        CHECK(im.header.file_size == b->size());
        CHECK(im.header.section_count == 5 + p.extra.size());
        for (const auto& e : im.entries) {
            CHECK(e.offset % format::alignment == 0);
            CHECK(e.alignment == format::alignment);
        }
    }
}

TEST_CASE("round trip of a package built from real emitted instructions, in every field's extreme") {
    Package p = testing::sample();
    p.inputs[0].shape = {0, 3, 4, 4};  // an empty tensor: any strides, any size
    p.inputs[0].strides = {0, 0, 0, 0};
    p.inputs[0].size = 0;
    p.outputs[1].quant.scales = {1e-30f, 3.4e38f, 1.0f};
    p.outputs[1].quant.zero_points = {-128, 127, 0};
    p.inputs.push_back({"u8.per_axis",
                        DType::f32,
                        DType::u8,
                        {2, 1, 1, 1, 1, 1, 1, 2},
                        {16, 0, 0, 0, 0, 0, 0, 1},
                        {{0.5f, 0.25f}, {0, 255}, 0},
                        0,
                        0});
    p.inputs.back().quant.axis = 0;
    p.inputs.back().offset = 272;
    p.inputs.back().size = 32;
    p.input_bytes = 304;
    p.debug.back().node = "n\xc3\xa9 \xe2\x9c\x93";  // UTF-8 is allowed, control characters are not
    p.extra.push_back({0xFFFFFFFFu, {}});
    p.toolchain.version = std::string(31, '~');
    const auto b = write_package(p);
    REQUIRE_MESSAGE(b.ok(), b.error().message());
    const auto r = read_package(*b, "pkg");
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    CHECK(*r == p);
    CHECK(write_package(*r).value() == *b);
}

TEST_CASE("determinism: the same package gives the same bytes, whatever the locale, the copy or the directory") {
    const Bytes first = write_package(testing::sample()).value();
    const std::string text = inspect(first, "a").value();
    // another object with the same value, built in another order
    Package q;
    const Package s = testing::sample();
    q.extra = s.extra;
    q.debug = s.debug;
    q.outputs = s.outputs;
    q.inputs = s.inputs;
    q.buffers = s.buffers;
    q.output_bytes = s.output_bytes;
    q.input_bytes = s.input_bytes;
    q.scratch_bytes = s.scratch_bytes;
    q.weights = s.weights;
    q.code = s.code;
    CHECK(write_package(q).value() == first);
    // a C++ global locale with a ',' decimal point and digit grouping, and the C locale of the environment
    struct Comma : std::numpunct<char> {
        char do_decimal_point() const override { return ','; }
        char do_thousands_sep() const override { return '.'; }
        std::string do_grouping() const override { return "\3"; }
    };
    const std::locale saved = std::locale::global(std::locale(std::locale::classic(), new Comma));
    const char* c_locale = std::setlocale(LC_ALL, "");
    const std::string c_saved = c_locale ? c_locale : "C";
    for (const char* name : {"de_DE.UTF-8", "fr_FR.UTF-8", "C.UTF-8"})
        if (std::setlocale(LC_ALL, name) != nullptr) break;
    CHECK(write_package(testing::sample()).value() == first);
    CHECK(inspect(first, "a").value() == text);
    CHECK(describe(testing::sample()).value() == text);
    std::setlocale(LC_ALL, c_saved.c_str());
    std::locale::global(saved);
    // inspect's text names no file
    CHECK(inspect(first, "/some/where/else.jpk").value() == text);
    // files written in two directories
    const auto root =
        std::filesystem::temp_directory_path() / ("janus_package_determinism_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "x" / "y");
    REQUIRE(write_package_file((root / "a.jpk").string(), testing::sample()).ok());
    REQUIRE(write_package_file((root / "x" / "y" / "b.jpk").string(), testing::sample()).ok());
    CHECK(janus_test::read_bytes(root / "a.jpk") == first);
    CHECK(janus_test::read_bytes(root / "x" / "y" / "b.jpk") == first);
    std::filesystem::remove_all(root);
}

TEST_CASE("golden bytes and inspect text of the test packages") {
    const Bytes minimal = write_package(testing::minimal()).value();
    const Bytes sample = write_package(testing::sample()).value();
    golden("minimal.jpk", minimal);
    golden("sample.jpk", sample);
    golden("minimal.txt", text_bytes(inspect(minimal, "minimal.jpk").value()));
    golden("sample.txt", text_bytes(inspect(sample, "sample.jpk").value()));
    // the goldens read back as the packages
    if (!janus_test::update_golden_requested()) {
        CHECK(read_package(janus_test::read_bytes(golden_dir / "sample.jpk"), "sample.jpk").value() ==
              testing::sample());
        CHECK(read_package(janus_test::read_bytes(golden_dir / "minimal.jpk"), "minimal.jpk").value() ==
              testing::minimal());
    }
    std::set<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(golden_dir)) files.insert(e.path().filename().string());
    CHECK(files == std::set<std::string>{"README.md", "minimal.jpk", "minimal.txt", "sample.jpk", "sample.txt"});
}

TEST_CASE("toolchain identity: another instruction set is refused, naming both hashes; inspect still reads it") {
    Package p = testing::sample();
    p.toolchain = {"0.0.9", 0x1122334455667788ull};
    const Bytes b = write_package(p).value();
    const auto r = read_package(b, "old.jpk");
    CHECK_RULE(r, "package-toolchain");
    CHECK(r.error().position == "byte 40");
    CHECK(r.error().detail.find("0x1122334455667788") != std::string::npos);
    CHECK(r.error().detail.find(detail::hex(isa_hash())) != std::string::npos);
    CHECK(r.error().detail.find("Janus 0.0.9") != std::string::npos);
    const auto lenient = read_package(b, "old.jpk", ReadOptions{.check_toolchain = false});
    REQUIRE(lenient.ok());
    CHECK(*lenient == p);
    CHECK(write_package(*lenient).value() == b);  // an old package is kept byte for byte
    const std::string text = inspect(b, "old.jpk").value();
    CHECK(text.find("MISMATCH") != std::string::npos);
    CHECK(inspect(write_package(testing::sample()).value(), "new.jpk").value().find("MISMATCH") == std::string::npos);
    // the Janus version alone is not the identity: same instruction set, another version reads
    Package v = testing::sample();
    v.toolchain.version = "9.9.9-dev";
    const auto rv = read_package(write_package(v).value(), "v.jpk");
    REQUIRE(rv.ok());
    CHECK(rv->toolchain.version == "9.9.9-dev");
    // a default package carries this build's identity
    CHECK(Package{}.toolchain.version == version_string());
    CHECK(Package{}.toolchain.isa_hash == isa_hash());
}

TEST_CASE("the writer refuses what the format cannot hold") {
    Package p = testing::sample();
    p.toolchain.version = "";
    CHECK_RULE(write_package(p), "toolchain-version");
    p.toolchain.version = std::string(32, '1');
    CHECK_RULE(write_package(p), "toolchain-version");
    p = testing::sample();
    p.extra.push_back({4096, {}});  // not increasing
    CHECK_RULE(write_package(p), "section-order");
    p.extra = {{5, {}}};  // a known kind
    CHECK_RULE(write_package(p), "section-order");
    p.extra = {{6, {}}};  // the host section's kind
    CHECK_RULE(write_package(p), "section-order");
    p.extra = {{7, {}}};  // the segments section's kind
    CHECK_RULE(write_package(p), "section-order");
    p.extra.assign(60, ExtraSection{});
    for (std::size_t i = 0; i < p.extra.size(); ++i) p.extra[i].kind = static_cast<std::uint32_t>(100 + i);
    CHECK_RULE(write_package(p), "section-count");
    p = testing::sample();
    p.inputs[0].strides.pop_back();
    CHECK_RULE(write_package(p), "io-strides");
    CHECK_FALSE(craft::unchecked(p).has_value());  // a structural fact, even unchecked
    p = testing::sample();
    p.outputs[1].quant.zero_points.pop_back();
    CHECK_RULE(write_package(p), "io-quant-count");
    p = testing::sample();
    p.inputs[0].shape.assign(9, 1);
    p.inputs[0].strides.assign(9, 1);
    CHECK_RULE(write_package(p), "io-rank");
    // each error names the writer's input and a byte
    const auto e = write_package(p, "out.jpk");
    CHECK(e.error().input == "out.jpk");
    CHECK(e.error().position.rfind("byte ", 0) == 0);
}

TEST_CASE("the host section: written only when present, between debug and the extra sections, never optional") {
    Package p = testing::minimal();
    const Bytes without = write_package(p).value();
    p.host = HostSection{1, "graph g {\n  input %x: int8[1] q(int8 s=1 zp=0)\n  output %x\n}\n"};
    p.extra = {{10, {4, 5}}};
    const Bytes with = write_package(p).value();
    const craft::Image im = craft::parse(with).value();
    REQUIRE(im.entries.size() == 7);
    CHECK(im.entries[5].kind == static_cast<std::uint32_t>(format::Kind::host));
    CHECK(im.entries[5].flags == 0);
    CHECK(im.entries[6].kind == 10);
    // u32 prologue, then the text to the section's end
    CHECK(im.entries[5].length == 4 + p.host->graph.size());
    CHECK(with[im.entries[5].offset] == 1);
    const auto r = read_package(with, "h.jpk");
    REQUIRE(r.ok());
    CHECK(*r == p);
    CHECK(craft::parse(without).value().entries.size() == 5);
    CHECK_FALSE(read_package(without, "m.jpk")->host.has_value());
    const auto text = inspect(with, "h.jpk");
    REQUIRE(text.ok());
    CHECK(text->find("\n  host   ") != std::string::npos);
    CHECK(text->find("host section: " + std::to_string(p.host->graph.size()) +
                     " bytes of graph text, 4 lines; the first 1 nodes run before the program") != std::string::npos);
    // a reader that does not know the kind must refuse the package: the writer never marks it optional, and a
    // package that does is refused like any known section marked optional
    Bytes flagged = with;
    craft::Image fl = craft::parse(flagged).value();
    fl.entries[5].flags = format::flag_optional;
    craft::store(fl, flagged);
    craft::reseal(flagged);
    CHECK_RULE(read_package(flagged, "f.jpk"), "section-flags");
    // contents: text present, printable characters and line feeds only (the writer refuses what the reader would)
    p.host->graph.clear();
    CHECK_RULE(write_package(p), "host-empty");
    p.host->graph = "graph g {\r\n}\n";
    CHECK_RULE(write_package(p), "host-text-chars");
    CHECK_RULE(read_package(craft::unchecked(p).value(), "c.jpk"), "host-text-chars");
}

TEST_CASE("extra sections are kept byte for byte") {
    Package p = testing::minimal();
    p.extra = {{10, {1, 2, 3}}, {70000, Bytes(100, 0xEE)}};
    const Bytes b = write_package(p).value();
    const auto r = read_package(b, "x.jpk");
    REQUIRE(r.ok());
    CHECK(r->extra == p.extra);
    // kind 8 is the placement section from format version 2 on; in a version-1 file it is an extra section
    p.format_version = 1;
    p.extra = {{8, {1, 2, 3}}};
    const Bytes v1 = write_package(p).value();
    const auto r1 = read_package(v1, "v1.jpk");
    REQUIRE(r1.ok());
    CHECK(r1->extra == p.extra);
    CHECK_FALSE(r1->placement.has_value());
    p.format_version = 2;  // the same kind in a version-2 package is a known section, never optional
    CHECK_RULE(write_package(p), "section-order");
    // kind 9 is the numerics section from format version 3 on; in a version-2 file it is an extra section
    p.extra = {{9, {4, 5, 6}}};
    const Bytes v2 = write_package(p).value();
    const auto r2 = read_package(v2, "v2.jpk");
    REQUIRE(r2.ok());
    CHECK(r2->extra == p.extra);
    CHECK_FALSE(r2->rounding.has_value());
    p.format_version = 3;
    CHECK_RULE(write_package(p), "section-order");
}

TEST_CASE("the fuzz seeds of fuzz/make_seeds.py: valid_ files are valid packages, bad_ files are not") {
    // The seed generator has its own small writer of the format; this keeps it honest.
    const auto dir = std::filesystem::path(JANUS_SOURCE_DIR) / "fuzz/corpus/package_reader";
    REQUIRE(std::filesystem::is_directory(dir));
    int valid = 0, bad = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        const Bytes b = janus_test::read_bytes(e.path());
        CAPTURE(name);
        REQUIRE_FALSE(b.empty());
        const auto r = read_package(std::span(b).subspan(1), name);
        if (name.rfind("valid_", 0) == 0) {
            CHECK(b[0] % 2 == 0);
            REQUIRE_MESSAGE(r.ok(), r.error().message());
            CHECK(write_package(*r).value() == Bytes(b.begin() + 1, b.end()));
            ++valid;
        } else if (name.rfind("bad_", 0) == 0) {
            CHECK(b[0] % 2 == 0);
            CHECK_FALSE(r.ok());
            ++bad;
        }
    }
    CHECK(valid >= 5);
    CHECK(bad >= 10);
}
