#pragma once
// The protobuf wire format, read without a protobuf library: bounds-checked, allocation-free, positions exact.
//
// Contract: a `WireReader` walks the fields of one message held in a byte span. Every value it returns lies inside
// that span; every malformed input (truncated varint, varint longer than 10 bytes or above 64 bits, a length past
// the end of the message, field number 0, a group or an unknown wire type) is an `Error` whose position is the
// absolute byte offset in the file ("byte N") of the offending field, and whose rule is one of
//   wire-varint, wire-length, wire-field-number, wire-type, wire-packed
// Nothing here knows ONNX: onnx/model.hpp decodes the messages it needs on top of it. The `put_*` functions write
// the same format (varints, keys, length-delimited fields) for the messages janusc writes. Unknown fields are
// skipped, as protobuf requires. Repeated scalars may come packed (one length-delimited field) or unpacked (one field per value);
// `append_*` accepts both, as every protobuf parser must.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/core/error.hpp>

namespace janus::onnx::wire {

enum class WireType : std::uint8_t { varint = 0, fixed64 = 1, bytes = 2, fixed32 = 5 };

/// One field of a message: its number, wire type, absolute byte offset of its key, and its value.
struct Field {
    std::uint32_t number = 0;
    WireType type = WireType::varint;
    std::size_t position = 0;             ///< absolute offset of the field's key in the file
    std::uint64_t scalar = 0;             ///< varint, fixed64 or fixed32 value (raw bits)
    std::span<const std::uint8_t> bytes;  ///< length-delimited payload
    std::size_t bytes_position = 0;       ///< absolute offset of the payload's first byte

    /// The payload as text (protobuf `string` and `bytes` are both length-delimited).
    std::string_view text() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
    std::int64_t as_int64() const { return static_cast<std::int64_t>(scalar); }
    /// A varint holding an int32 (protobuf sign-extends negative int32 to 64 bits): the low 32 bits.
    std::int32_t as_int32() const { return static_cast<std::int32_t>(static_cast<std::uint32_t>(scalar)); }
    float as_float() const {
        const auto bits = static_cast<std::uint32_t>(scalar);
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
};

inline std::string byte_position(std::size_t offset) { return "byte " + std::to_string(offset); }

inline std::string_view wire_type_name(WireType t) {
    switch (t) {
        case WireType::varint:
            return "varint";
        case WireType::fixed64:
            return "fixed64";
        case WireType::bytes:
            return "length-delimited";
        case WireType::fixed32:
            return "fixed32";
    }
    return "?";
}

/// Reads one varint at `p` (absolute offset `base + i`); advances `i`.
inline Result<std::uint64_t> read_varint(std::span<const std::uint8_t> p, std::size_t& i, std::size_t base,
                                         std::string_view input) {
    const std::size_t start = i;
    std::uint64_t v = 0;
    for (int k = 0;; ++k) {
        if (i >= p.size())
            return make_error(std::string(input), byte_position(base + start), "wire-varint",
                              "the varint is cut off by the end of its message");
        const std::uint8_t b = p[i++];
        if (k == 9 && b > 1)  // the 10th byte may only hold bit 63: anything more is over 64 bits or an 11th byte
            return make_error(std::string(input), byte_position(base + start), "wire-varint",
                              "the varint does not fit in 64 bits");
        v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * k);
        if ((b & 0x80) == 0) return v;
    }
}

/// The fields of one message, in file order.
class WireReader {
public:
    /// `bytes` is the message; `base` its absolute offset in the file named `input`.
    WireReader(std::span<const std::uint8_t> bytes, std::size_t base, std::string_view input)
        : p_(bytes), base_(base), input_(input) {}

    bool done() const { return i_ >= p_.size(); }

    /// The next field. Call only while !done().
    Result<Field> next() {
        Field f;
        f.position = base_ + i_;
        JANUS_TRY(const std::uint64_t key, read_varint(p_, i_, base_, input_));
        const std::uint64_t number = key >> 3;
        if (number == 0 || number > 536870911)
            return make_error(std::string(input_), byte_position(f.position), "wire-field-number",
                              "field number " + std::to_string(number) + " is outside 1 .. 2^29-1");
        f.number = static_cast<std::uint32_t>(number);
        switch (key & 7) {
            case 0: {
                f.type = WireType::varint;
                JANUS_TRY(f.scalar, read_varint(p_, i_, base_, input_));
                return f;
            }
            case 1:
                return fixed(f, WireType::fixed64, 8);
            case 5:
                return fixed(f, WireType::fixed32, 4);
            case 2: {
                f.type = WireType::bytes;
                const std::size_t at = i_;
                JANUS_TRY(const std::uint64_t n, read_varint(p_, i_, base_, input_));
                if (n > p_.size() - i_)
                    return make_error(std::string(input_), byte_position(base_ + at), "wire-length",
                                      "field " + std::to_string(f.number) + " declares " + std::to_string(n) +
                                          " bytes but its message has " + std::to_string(p_.size() - i_) + " left");
                f.bytes = p_.subspan(i_, static_cast<std::size_t>(n));
                f.bytes_position = base_ + i_;
                i_ += static_cast<std::size_t>(n);
                return f;
            }
            default:
                return make_error(std::string(input_), byte_position(f.position), "wire-type",
                                  "field " + std::to_string(f.number) + " has wire type " + std::to_string(key & 7) +
                                      ((key & 7) == 3 || (key & 7) == 4 ? " (a protobuf group, not used by ONNX)"
                                                                        : " (not a protobuf wire type)"));
        }
    }

private:
    Result<Field> fixed(Field f, WireType t, std::size_t n) {
        f.type = t;
        if (p_.size() - i_ < n)
            return make_error(std::string(input_), byte_position(f.position), "wire-length",
                              "the " + std::string(wire_type_name(t)) + " value of field " + std::to_string(f.number) +
                                  " is cut off by the end of its message");
        for (std::size_t k = 0; k < n; ++k) f.scalar |= static_cast<std::uint64_t>(p_[i_ + k]) << (8 * k);
        i_ += n;
        return f;
    }

    std::span<const std::uint8_t> p_;
    std::size_t base_ = 0;
    std::size_t i_ = 0;
    std::string_view input_;
};

/// A field of the wrong wire type for its number (e.g. a string where ONNX declares an int64).
inline Error wrong_type(const Field& f, std::string_view input, std::string_view what, WireType expected) {
    return make_error(std::string(input), byte_position(f.position), "wire-type",
                      std::string(what) + " (field " + std::to_string(f.number) + ") must be " +
                          std::string(wire_type_name(expected)) + ", not " + std::string(wire_type_name(f.type)));
}

/// Appends the varint values of a repeated field, packed (one length-delimited field) or unpacked (one varint).
/// Each value takes at least one byte of the file, so a hostile file cannot make the reader allocate without limit.
inline Status append_varints(const Field& f, std::vector<std::int64_t>& out, std::string_view input,
                             std::string_view what) {
    if (f.type == WireType::varint) {
        out.push_back(f.as_int64());
        return ok_status();
    }
    if (f.type != WireType::bytes) return wrong_type(f, input, what, WireType::varint);
    std::size_t i = 0;
    while (i < f.bytes.size()) {
        const std::size_t at = i;
        auto v = read_varint(f.bytes, i, f.bytes_position, input);
        if (!v.ok())
            return make_error(std::string(input), byte_position(f.bytes_position + at), "wire-packed",
                              "packed " + std::string(what) + ": " + v.error().detail);
        out.push_back(static_cast<std::int64_t>(*v));
    }
    return ok_status();
}

/// How many values a repeated varint field holds (1 unpacked; packed: the bytes that end a varint), counted without
/// storing them: decoders bound what they allocate before they append (onnx/model.hpp).
inline std::size_t varint_count(const Field& f) {
    if (f.type != WireType::bytes) return 1;
    std::size_t n = 0;
    for (const std::uint8_t b : f.bytes) n += (b & 0x80) == 0;
    return n;
}

/// How many values a repeated fixed32 field holds (1 unpacked; packed: whole 4-byte groups).
inline std::size_t fixed32_count(const Field& f) { return f.type == WireType::bytes ? f.bytes.size() / 4 : 1; }

/// Appends the fixed32 values (float bits) of a repeated field, packed or unpacked.
inline Status append_fixed32(const Field& f, std::vector<std::uint32_t>& out, std::string_view input,
                             std::string_view what) {
    if (f.type == WireType::fixed32) {
        out.push_back(static_cast<std::uint32_t>(f.scalar));
        return ok_status();
    }
    if (f.type != WireType::bytes) return wrong_type(f, input, what, WireType::fixed32);
    if (f.bytes.size() % 4 != 0)
        return make_error(
            std::string(input), byte_position(f.bytes_position), "wire-packed",
            "packed " + std::string(what) + " holds " + std::to_string(f.bytes.size()) + " bytes, not a multiple of 4");
    for (std::size_t i = 0; i < f.bytes.size(); i += 4) {
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(f.bytes[i + k]) << (8 * k);
        out.push_back(v);
    }
    return ok_status();
}

// ---- writing (the same wire format, for the messages janusc writes: TensorProto outputs) ----------------------

/// Append `v` as a varint.
inline void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

/// Append a field key: (number << 3) | wire type.
inline void put_key(std::vector<std::uint8_t>& out, std::uint32_t number, WireType type) {
    put_varint(out, (std::uint64_t{number} << 3) | static_cast<std::uint64_t>(type));
}

/// Append a varint field (an int64 or an int32 sign-extended to 64 bits, as protobuf writes them).
inline void put_varint_field(std::vector<std::uint8_t>& out, std::uint32_t number, std::int64_t v) {
    put_key(out, number, WireType::varint);
    put_varint(out, static_cast<std::uint64_t>(v));
}

/// Append a length-delimited field.
inline void put_bytes_field(std::vector<std::uint8_t>& out, std::uint32_t number, std::span<const std::uint8_t> b) {
    put_key(out, number, WireType::bytes);
    put_varint(out, b.size());
    out.insert(out.end(), b.begin(), b.end());
}

}  // namespace janus::onnx::wire
