// Systematic corruption: every byte of a valid package is covered by a checksum or a must-be-zero rule, so EVERY
// change of one byte (each of its 8 single-bit flips, and its complement), every truncation and every extension is
// an error, never a crash and never another model. The rule is the one that covers the byte:
//   bytes 0..7 (magic) package-magic; 8..11 (version) package-version(-newer) or header-truncated; 12..15
//   header-size; 16..95 header-checksum; the section table section-table-checksum; padding padding-nonzero; section
//   bytes section-checksum. Truncated below 96 bytes: header-truncated; otherwise file-size.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <janus/package/package.hpp>

#include "craft.hpp"
#include "sample.hpp"

using namespace janus;
using namespace janus::package;
using Bytes = std::vector<std::uint8_t>;

namespace {

/// The rule that must catch a change of byte `i` of the valid package `b` to `v`.
std::string rule_for(const Bytes& b, std::size_t i, std::uint8_t v) {
    if (i < 8) return "package-magic";
    if (i < 12) {  // the version: a larger one is a newer format, one below the oldest does not exist, and another
                   // version this build reads leaves the header checksum to catch the change
        std::uint32_t version = 0;
        for (std::size_t k = 0; k < 4; ++k) version |= std::uint32_t{k + 8 == i ? v : b[k + 8]} << (8 * k);
        if (version > format::version) return "package-version-newer";
        return version < format::oldest_version ? "package-version" : "header-checksum";
    }
    if (i < 16) return "header-size";
    if (i < format::header_size) return "header-checksum";
    const auto im = craft::parse(b).value();
    if (i < format::header_size + im.entries.size() * format::entry_size) return "section-table-checksum";
    for (const auto& e : im.entries) {
        if (i < e.offset) return "padding-nonzero";
        if (i < e.offset + e.length) return "section-checksum";
    }
    return "?";
}

void corrupt_everywhere(const Bytes& b) {
    REQUIRE(read_package(b, "p").ok());
    std::size_t cases = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        for (const std::uint8_t mask : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF}) {
            Bytes c = b;
            c[i] ^= mask;
            const auto r = read_package(c, "p");
            ++cases;
            if (r.ok()) {
                FAIL_CHECK("byte " << i << " ^ " << int{mask} << " is read as a package");
                continue;
            }
            const std::string want = rule_for(b, i, c[i]);
            if (r.error().rule != want)
                FAIL_CHECK("byte " << i << " ^ " << int{mask} << ": " << r.error().message() << " (expected rule "
                                   << want << ")");
        }
    }
    for (std::size_t n = 0; n < b.size(); ++n) {
        const auto r = read_package(std::span(b).first(n), "p");
        ++cases;
        REQUIRE_FALSE(r.ok());
        const char* want = n < format::header_size ? "header-truncated" : "file-size";
        if (r.error().rule != want) FAIL_CHECK("truncated to " << n << ": " << r.error().message());
    }
    for (const std::uint8_t extra : {0x00, 0x5A}) {
        Bytes c = b;
        c.push_back(extra);
        const auto r = read_package(c, "p");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().rule == "file-size");
    }
    MESSAGE(cases << " corrupted variants of a " << b.size() << "-byte package, all refused");
    CHECK(cases == 10 * b.size());
}

}  // namespace

TEST_CASE("every single-byte change, truncation and extension of the minimal package is refused by its rule") {
    corrupt_everywhere(write_package(testing::minimal()).value());
}

TEST_CASE("every single-byte change, truncation and extension of the sample package is refused by its rule") {
    corrupt_everywhere(write_package(testing::sample()).value());
}

TEST_CASE("resealed single-byte changes: read fails cleanly, or succeeds only on a canonical different package") {
    // With the checksums recomputed, a changed byte reaches the structural and content rules. Either the reader
    // refuses it (a well-formed error) or the bytes are a valid package whose canonical form they are: the change
    // is then a different model, never a misread one.
    const Bytes b = write_package(testing::sample()).value();
    int refused = 0, accepted = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        for (const std::uint8_t mask : {0x01, 0x80, 0xFF}) {
            Bytes c = b;
            c[i] ^= mask;
            craft::reseal(c);
            if (c == b) continue;  // a checksum field, recomputed by reseal
            const auto r = read_package(c, "p");
            if (!r.ok()) {
                ++refused;
                const Error& e = r.error();
                if (e.input != "p" || e.position.rfind("byte ", 0) != 0 || e.rule.empty() || e.detail.empty())
                    FAIL_CHECK("byte " << i << " ^ " << int{mask} << ": malformed error " << e.message());
                continue;
            }
            ++accepted;
            const auto again = write_package(*r);
            if (!again.ok() || *again != c) FAIL_CHECK("byte " << i << " ^ " << int{mask} << " is not canonical");
            if (*r == testing::sample()) FAIL_CHECK("byte " << i << " ^ " << int{mask} << " reads as the original");
        }
    }
    MESSAGE(refused << " refused, " << accepted << " accepted as other valid packages");
    CHECK(refused > accepted);
    CHECK(accepted > 0);  // weights bytes, names, scales... are free to change
}
