#pragma once
// A minimal protobuf encoder for the ONNX reader tests: hand-built messages with exactly the encoding a test needs
// (packed or unpacked, typed or raw, malformed on purpose). Field numbers are onnx.proto's.
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ob {

using Bytes = std::vector<std::uint8_t>;

inline void put_varint(Bytes& b, std::uint64_t v) {
    while (v >= 0x80) {
        b.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    b.push_back(static_cast<std::uint8_t>(v));
}
inline Bytes key(std::uint32_t number, int type) {
    Bytes b;
    put_varint(b, (std::uint64_t{number} << 3) | static_cast<std::uint64_t>(type));
    return b;
}
inline Bytes varint_field(std::uint32_t n, std::uint64_t v) {
    Bytes b = key(n, 0);
    put_varint(b, v);
    return b;
}
inline Bytes fixed32_field(std::uint32_t n, float f) {
    Bytes b = key(n, 5);
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
    return b;
}
inline Bytes fixed64_field(std::uint32_t n, std::uint64_t x) {
    Bytes b = key(n, 1);
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
    return b;
}
inline Bytes bytes_field(std::uint32_t n, const Bytes& payload) {
    Bytes b = key(n, 2);
    put_varint(b, payload.size());
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}
inline Bytes bytes_field(std::uint32_t n, std::string_view s) { return bytes_field(n, Bytes(s.begin(), s.end())); }
inline Bytes packed_varints(std::uint32_t n, std::initializer_list<std::int64_t> vs) {
    Bytes p;
    for (auto v : vs) put_varint(p, static_cast<std::uint64_t>(v));
    return bytes_field(n, p);
}
template <class... B>
Bytes cat(const B&... parts) {
    Bytes r;
    (r.insert(r.end(), parts.begin(), parts.end()), ...);
    return r;
}
/// A ModelProto (ir_version 7, opset 13) whose graph holds `graph_fields` (e.g. one encoded node, field 1).
inline Bytes minimal_model(const Bytes& graph_fields) {
    return cat(varint_field(1, 7), bytes_field(7, graph_fields), bytes_field(8, varint_field(2, 13)));
}

}  // namespace ob
