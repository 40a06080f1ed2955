#pragma once
// The two hashes of the package format (docs/package.md "Checksums and hashes"), both constexpr and
// byte-order independent (they consume bytes, never host words):
//   crc32c   CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF): the
//            checksum of the header, the section table and every section. It detects every error burst of up to
//            32 bits, hence every change confined to one byte or to four consecutive bytes.
//            crc32c("123456789") == 0xE3069283.
//   Fnv1a64  FNV-1a, 64 bits (offset basis 0xCBF29CE484222325, prime 0x100000001B3): the toolchain identity hash
//            (package::isa_hash). fnv1a64("a") == 0xAF63DC4C8601EC8C.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace janus::package {

namespace detail {
inline constexpr std::array<std::uint32_t, 256> crc32c_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}();
}  // namespace detail

/// CRC-32C of `bytes`.
constexpr std::uint32_t crc32c(std::span<const std::uint8_t> bytes) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (const std::uint8_t b : bytes) c = detail::crc32c_table[(c ^ b) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/// FNV-1a 64 over a stream of bytes; integers are fed as 8 little-endian bytes, strings as their length (an
/// integer) followed by their bytes, so that no two different sequences of values feed the same bytes.
class Fnv1a64 {
public:
    constexpr Fnv1a64& byte(std::uint8_t b) {
        h_ = (h_ ^ b) * 0x100000001B3ull;
        return *this;
    }
    constexpr Fnv1a64& integer(std::uint64_t v) {
        for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
        return *this;
    }
    constexpr Fnv1a64& text(std::string_view s) {
        integer(s.size());
        for (const char c : s) byte(static_cast<std::uint8_t>(c));
        return *this;
    }
    constexpr std::uint64_t value() const { return h_; }

private:
    std::uint64_t h_ = 0xCBF29CE484222325ull;
};

/// FNV-1a 64 of raw bytes (no length prefix).
constexpr std::uint64_t fnv1a64(std::string_view bytes) {
    Fnv1a64 f;
    for (const char c : bytes) f.byte(static_cast<std::uint8_t>(c));
    return f.value();
}

}  // namespace janus::package
