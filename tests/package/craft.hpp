#pragma once
// Crafting malformed packages for tests and the fuzzer (never used by the reader). Everything goes through the
// layout definitions of janus/package/package.hpp (the transfer functions), so no field offset is restated here:
//   unchecked(p)      the canonical bytes of `p` with the content rules off (invalid contents, valid checksums)
//   parse / store     the header and the section table of an image as structs, and back (checksums untouched)
//   reseal(bytes)     recompute every checksum that the header and table let one find: each section's (when its
//                     range is inside the file), the table's and the header's, so that a deliberate change reaches
//                     the rule it targets instead of stopping at a checksum
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <janus/package/package.hpp>

namespace janus::package::craft {

inline std::optional<std::vector<std::uint8_t>> unchecked(const Package& p) {
    auto r = detail::serialize(p, "craft", false);
    if (!r.ok()) return std::nullopt;
    return std::move(r).value();
}

struct Image {
    format::Header header;
    std::vector<format::Entry> entries;  ///< the entries that lie inside the file
};

/// The header and table of `b` (nothing when the header is not all there).
inline std::optional<Image> parse(std::span<const std::uint8_t> b) {
    if (b.size() < format::header_size) return std::nullopt;
    Image im;
    detail::Source hs(b, 0, format::header_size, "craft", "header", "header-truncated", "the header");
    if (!format::transfer_header(hs, im.header).ok()) return std::nullopt;
    for (std::uint64_t i = 0; i < im.header.section_count; ++i) {
        const std::uint64_t at = format::header_size + i * format::entry_size;
        if (at + format::entry_size > b.size()) break;
        detail::Source ts(b, at, at + format::entry_size, "craft", "table", "section-table-bounds", "the entry");
        if (!format::transfer_entry(ts, im.entries.emplace_back()).ok()) return std::nullopt;
    }
    return im;
}

/// Write `im`'s header and entries over the first bytes of `b` (which must hold them).
inline void store(const Image& im, std::vector<std::uint8_t>& b) {
    detail::Sink hs(b, 0, "craft", "header", false);
    (void)format::transfer_header(hs, im.header);
    detail::Sink ts(b, format::header_size, "craft", "table", false);
    for (const format::Entry& e : im.entries) (void)format::transfer_entry(ts, e);
}

inline void reseal(std::vector<std::uint8_t>& b) {
    auto im = parse(b);
    if (!im) return;
    for (format::Entry& e : im->entries)
        if (e.offset <= b.size() && e.length <= b.size() - e.offset)
            e.crc = crc32c(std::span<const std::uint8_t>(b).subspan(e.offset, e.length));
    store(*im, b);
    const std::uint64_t table = std::uint64_t{im->header.section_count} * format::entry_size;
    if (table <= b.size() - format::header_size)
        im->header.table_crc = crc32c(std::span<const std::uint8_t>(b).subspan(format::header_size, table));
    store(*im, b);
    im->header.header_crc = crc32c(std::span<const std::uint8_t>(b).first(format::header_field("header checksum")));
    store(*im, b);
}

}  // namespace janus::package::craft
