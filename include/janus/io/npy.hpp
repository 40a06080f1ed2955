#pragma once
// Reading and writing NumPy .npy files (the format of numpy.save, documented in numpy's `numpy.lib.format`).
//
// Contract:
//   - `NpyArray` holds an element type, a shape (C order; a 0-d array has shape {} and one element) and the data as
//     little-endian bytes, exactly product(shape) * dtype_size(dtype) of them.
//   - `read_npy(bytes, input_name)` accepts format versions 1.0, 2.0 and 3.0 and the dtypes of core/dtype.hpp: int8
//     ('|i1', '<i1', 'i1'), uint8 ('|u1', ...), int16, uint16, int32, uint32, int64, float16 and float32,
//     little-endian ('<i4') or big-endian ('>i4', converted to little-endian). The header is a Python dict literal with exactly the keys 'descr', 'fortran_order' and
//     'shape', in any order, single or double quotes, optional trailing comma and whitespace. Anything else is an
//     `Error` (tier 3, core/error.hpp), never a crash or an out-of-bounds read: bad magic, unknown version, a header
//     length past the end of the file, a syntax error in the header, unknown / duplicate / missing keys, another
//     dtype (bool, uint64, float64, structured, a multi-byte type without byte order), fortran_order True, negative or
//     overflowing dimensions, a total size that overflows, data shorter or longer than the shape says. The error's
//     position is "byte N", the offset in the file of the offending byte (for the header text: of the offending
//     character); its rule is a short `npy-...` name. The declared size is checked against the bytes present before
//     anything is allocated.
//   - `write_npy(array)` returns exactly the bytes numpy.save (numpy >= 1.24) writes for the same array: version 1.0
//     (2.0 only if the header does not fit 65535 bytes), the header `{'descr': '<i4', 'fortran_order': False,
//     'shape': (2, 3), }` followed by numpy's growth padding (21 - len(str(shape[0])) spaces when the rank is > 0),
//     padded with spaces and a final '\n' so that the data starts at a multiple of 64 bytes. Deterministic.
//     The array must be valid (`check_npy_array`); this is an internal invariant (JANUS_ASSERT) here.
//   - `read_npy_file(path)` reads a whole file; `write_npy_file(path, array)` validates the array and writes it
//     atomically (core/file.hpp: a temporary file in the target's directory, flushed and renamed over the target;
//     on any failure the temporary is removed and an existing target is left untouched). Errors name the path.
//   - `describe_type(array)` is the array's type as text: "int8[1,3,32,32]", "float32[]" for a 0-d array.
// Rules: npy-magic, npy-truncated, npy-version, npy-header-length, npy-header-syntax, npy-header-value,
// npy-unknown-key, npy-duplicate-key, npy-missing-key, npy-dtype, npy-c-order, npy-dim-range, npy-size-overflow,
// npy-data-size; npy-read and npy-write for the file functions (position empty).
// Stricter than numpy on purpose: a multi-byte descr without '<' or '>' ('i4', '=i4', '|i4': numpy reads the host's
// order), bytes after the data, a duplicate key (Python keeps the last) and escape sequences or Python 2 forms (3L)
// in the header are errors.
// POSIX (open, fsync, rename) is used for the file functions.
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/core/file.hpp>
#include <janus/core/size.hpp>

namespace janus::io {

namespace detail {

/// Number of elements of `shape` (1 for rank 0), or nullopt when a dimension is negative or when
/// product(nonzero dimensions) * elem_size does not fit in int64 (numpy refuses such shapes even when one
/// dimension is 0; so does Janus, so that callers may multiply dimensions freely).
inline std::optional<std::uint64_t> checked_element_count(std::span<const std::int64_t> shape, std::size_t elem_size) {
    // The policy's one loop (core/size.hpp) with the .npy format's own bounds: any rank, 2^63 - 1 bytes. A Tensor
    // made from the array applies Janus's policy on top (io/tensor_npy.hpp).
    const auto e = static_cast<std::int64_t>(elem_size);
    const auto r = janus::size_detail::scan_size(shape, e, static_cast<std::size_t>(-1),
                                                 std::numeric_limits<std::int64_t>::max() / e);
    if (r.fault != janus::size_detail::SizeFault::none) return std::nullopt;
    return static_cast<std::uint64_t>(r.size.elements);
}

/// "1 byte", "24 bytes".
inline std::string byte_count(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

/// Little-endian store / load of one element (host order independent).
template <class T>
void store_le(T v, std::uint8_t* out) {
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(out, &v, sizeof(T));
    } else {
        std::uint8_t tmp[sizeof(T)];
        std::memcpy(tmp, &v, sizeof(T));
        for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = tmp[sizeof(T) - 1 - i];
    }
}
template <class T>
T load_le(const std::uint8_t* in) {
    T v;
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, in, sizeof(T));
    } else {
        std::uint8_t tmp[sizeof(T)];
        for (std::size_t i = 0; i < sizeof(T); ++i) tmp[i] = in[sizeof(T) - 1 - i];
        std::memcpy(&v, tmp, sizeof(T));
    }
    return v;
}

}  // namespace detail

struct NpyArray {
    DType dtype = DType::f32;
    std::vector<std::int64_t> shape;  // {} for a 0-d array
    std::vector<std::uint8_t> data;   // little-endian, C order

    /// product(shape) (1 for a 0-d array). The array must be valid (check_npy_array).
    std::int64_t element_count() const {
        const auto n = detail::checked_element_count(shape, dtype_size(dtype));
        JANUS_ASSERT(n.has_value());
        return n ? static_cast<std::int64_t>(*n) : 0;
    }

    /// An array of C++ element type T (int8_t, uint8_t, int32_t, int64_t, float) from its values in C order.
    template <class T>
    static NpyArray from(std::vector<std::int64_t> shape, const std::vector<T>& values) {
        NpyArray a{dtype_v<T>, std::move(shape), {}};
        JANUS_ASSERT(static_cast<std::uint64_t>(a.element_count()) == values.size());
        a.data.resize(values.size() * sizeof(T));
        for (std::size_t i = 0; i < values.size(); ++i) detail::store_le(values[i], a.data.data() + i * sizeof(T));
        return a;
    }

    /// The elements in C order; T must be the C++ type of `dtype`.
    template <class T>
    std::vector<T> values() const {
        JANUS_ASSERT(dtype_v<T> == dtype);
        std::vector<T> out(data.size() / sizeof(T));
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = detail::load_le<T>(data.data() + i * sizeof(T));
        return out;
    }

    friend bool operator==(const NpyArray&, const NpyArray&) = default;
};

/// "int8[1,3,32,32]"; "float32[]" for a 0-d array.
inline std::string describe_type(DType dtype, std::span<const std::int64_t> shape) {
    std::string s(dtype_name(dtype));
    s += '[';
    std::string dims;
    for (std::size_t i = 0; i < shape.size() && dims.size() <= echo_cap; ++i) {  // echo caps what it repeats
        if (i > 0) dims += ',';
        dims += std::to_string(shape[i]);
    }
    if (dims.size() > echo_cap) dims = echo(dims) + " of " + std::to_string(shape.size()) + " dims";
    s += dims + ']';
    return s;
}
inline std::string describe_type(const NpyArray& a) { return describe_type(a.dtype, a.shape); }

/// The descr numpy writes for `dtype` ("|i1", "|u1", "<i4", "<i8", "<f4"): '|' for one byte, else '<'.
inline std::string npy_descr(DType dtype) {
    return (dtype_size(dtype) == 1 ? "|" : "<") + std::string(dtype_npy_code(dtype));
}

/// Is `a` a well-formed array: no negative dimension, a total size that fits int64 bytes, and exactly
/// product(shape) * dtype_size bytes of data. Errors name `input` (rules npy-dim-range, npy-size-overflow,
/// npy-data-size).
inline Status check_npy_array(const NpyArray& a, std::string_view input) {
    for (std::size_t i = 0; i < a.shape.size(); ++i) {
        if (a.shape[i] < 0) {
            return make_error(std::string(input), "axis " + std::to_string(i), "npy-dim-range",
                              "dimension " + std::to_string(a.shape[i]) + " is negative; dimensions must be >= 0");
        }
    }
    const std::size_t elem = dtype_size(a.dtype);
    const auto n = detail::checked_element_count(a.shape, elem);
    if (!n) {
        return make_error(std::string(input), "", "npy-size-overflow",
                          "the shape of " + describe_type(a) + " has more than 2^63 - 1 bytes of data");
    }
    if (*n * elem != a.data.size()) {
        return make_error(std::string(input), "", "npy-data-size",
                          describe_type(a) + " needs " + detail::byte_count(*n * elem) +
                              " of data but the array holds " + detail::byte_count(a.data.size()));
    }
    return ok_status();
}

namespace detail {

constexpr std::uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

inline std::string hex_byte(std::uint8_t b) {
    constexpr char digits[] = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

/// `s` between single quotes for a message: printable ASCII as is, anything else (and \ and ') as \xNN; long
/// strings are cut after 40 characters with "...".
inline std::string quote_text(std::string_view s) {
    constexpr char digits[] = "0123456789abcdef";
    std::string out = "'";
    const std::size_t shown = s.size() > 40 ? 40 : s.size();
    for (std::size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    if (shown < s.size()) out += "...";
    out += '\'';
    return out;
}

/// "int32[2,3]", or "int32 of rank 40" when the list of dimensions would make a message too long.
inline std::string short_type(DType dtype, std::span<const std::int64_t> shape) {
    std::string s = describe_type(dtype, shape);
    if (s.size() > 80) s = std::string(dtype_name(dtype)) + " of rank " + std::to_string(shape.size());
    return s;
}

/// Parses the header dict of a .npy file. Positions in errors are file offsets (base + index in the text).
class NpyHeaderParser {
public:
    struct Header {
        DType dtype = DType::f32;
        bool big_endian = false;
        std::vector<std::int64_t> shape;
        std::uint64_t element_count = 0;
    };

    NpyHeaderParser(std::string_view text, std::size_t base, const std::string& input)
        : text_(text), base_(base), input_(input) {}

    Result<Header> parse() {
        Header h;
        skip_ws();
        if (eof())
            return error(pos_, "npy-header-syntax", "the header is empty; expected a Python dict such as " + example);
        if (text_[pos_] != '{') {
            return error(pos_, "npy-header-syntax",
                         "expected '{' to start the header dict, found " + found() +
                             "; the header is a Python dict such as " + example);
        }
        ++pos_;
        bool seen[3] = {false, false, false};
        std::size_t shape_at = 0;
        for (;;) {
            skip_ws();
            if (eof())
                return error(pos_, "npy-header-syntax", "the header ends inside the dict; expected a key or '}'");
            if (text_[pos_] == '}') break;
            if (text_[pos_] != '\'' && text_[pos_] != '"') {
                return error(pos_, "npy-header-syntax",
                             "expected a quoted key or '}' in the header dict, found " + found());
            }
            const std::size_t key_at = pos_;
            JANUS_TRY(const std::string key, parse_string());
            int index = -1;
            for (int k = 0; k < 3; ++k) {
                if (key == keys[k]) index = k;
            }
            if (index < 0) {
                return error(key_at, "npy-unknown-key",
                             "unknown header key " + quote_text(key) +
                                 "; a .npy header has exactly the keys 'descr', 'fortran_order' and 'shape'");
            }
            if (seen[index]) {
                return error(key_at, "npy-duplicate-key",
                             "the key '" + std::string(keys[index]) + "' appears twice in the header; keep one");
            }
            seen[index] = true;
            skip_ws();
            if (eof() || text_[pos_] != ':') {
                return error(pos_, "npy-header-syntax",
                             "expected ':' after the key '" + std::string(keys[index]) + "', found " + found());
            }
            ++pos_;
            skip_ws();
            if (index == 0) {
                JANUS_CHECK(parse_descr(h));
            } else if (index == 1) {
                JANUS_CHECK(parse_fortran_order());
            } else {
                shape_at = pos_;
                JANUS_CHECK(parse_shape(h));
            }
            skip_ws();
            if (eof()) return error(pos_, "npy-header-syntax", "the header ends inside the dict; expected ',' or '}'");
            if (text_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (text_[pos_] == '}') break;
            return error(pos_, "npy-header-syntax",
                         "expected ',' or '}' after the value of '" + std::string(keys[index]) + "', found " + found());
        }
        const std::size_t close_at = pos_;
        ++pos_;
        skip_ws();
        if (!eof()) {
            return error(pos_, "npy-header-syntax",
                         "unexpected " + found() + " after the header dict; only spaces and newlines may follow '}'");
        }
        for (int k = 0; k < 3; ++k) {
            if (!seen[k]) {
                return error(close_at, "npy-missing-key",
                             "the header has no '" + std::string(keys[k]) +
                                 "' key; a .npy header has exactly the keys 'descr', 'fortran_order' and 'shape'");
            }
        }
        const std::size_t elem = dtype_size(h.dtype);
        const auto n = checked_element_count(h.shape, elem);
        if (!n) {
            bool has_zero = false;
            for (const std::int64_t d : h.shape) has_zero = has_zero || d == 0;
            return error(shape_at, "npy-size-overflow",
                         "the dimensions of " + short_type(h.dtype, h.shape) + " multiply to more than 2^63 - 1 bytes" +
                             (has_zero ? " (zero dimensions aside)" : "") + "; the header is corrupt");
        }
        h.element_count = *n;
        return h;
    }

private:
    static constexpr std::string_view keys[3] = {"descr", "fortran_order", "shape"};
    inline static const std::string example = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    inline static const std::string supported = "Janus reads " + dtype_list() + " arrays";

    bool eof() const { return pos_ >= text_.size(); }
    static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static bool is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c); }
    void skip_ws() {
        while (!eof() && is_ws(text_[pos_])) ++pos_;
    }

    /// The character at pos_ for a message: 'x', byte 0xNN, or "the end of the header".
    std::string found() const {
        if (eof()) return "the end of the header";
        const auto c = static_cast<unsigned char>(text_[pos_]);
        if (c == '\'') return "\"'\"";
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        return "byte " + hex_byte(c);
    }

    Error error(std::size_t at, std::string rule, std::string detail) const {
        return make_error(input_, "byte " + std::to_string(base_ + at), std::move(rule), std::move(detail));
    }
    /// A valid .npy Janus does not read (a numpy dtype it lacks, Fortran order).
    Error unsupported(std::size_t at, std::string rule, std::string subject, std::string why) const {
        return make_unsupported(input_, "byte " + std::to_string(base_ + at), std::move(rule), std::move(subject),
                                std::move(why));
    }

    /// A quoted string at pos_ (the caller checked the quote). No escapes, no line breaks.
    Result<std::string> parse_string() {
        const std::size_t start = pos_;
        const char quote = text_[pos_++];
        for (; !eof(); ++pos_) {
            const char c = text_[pos_];
            if (c == quote) {
                ++pos_;
                return std::string(text_.substr(start + 1, pos_ - start - 2));
            }
            if (c == '\\') {
                return error(pos_, "npy-header-syntax",
                             "escape sequences are not supported in header strings; write the characters themselves");
            }
            if (c == '\n' || c == '\r') break;
        }
        return error(start, "npy-header-syntax", "the string that starts here is not closed on its line");
    }

    Status parse_descr(Header& h) {
        if (!eof() && text_[pos_] == '[') {
            return error(pos_, "npy-dtype",
                         "structured dtypes (a list of fields) are not supported; " + std::string(supported));
        }
        if (eof() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
            return error(pos_, "npy-header-value",
                         "the value of 'descr' must be a quoted dtype string such as '<f4', found " + found());
        }
        const std::size_t at = pos_;
        JANUS_TRY(const std::string descr, parse_string());
        std::string_view code = descr;
        char order = 0;
        if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
            order = code[0];
            code.remove_prefix(1);
        }
        std::optional<DType> dt;
        for (DType d : all_dtypes)
            if (dtype_npy_code(d) == code) dt = d;
        if (!dt) {
            // numpy types Janus has no dtype for, named in the message.
            struct Known {
                std::string_view code;
                std::string_view name;
            };
            static constexpr Known known[] = {
                {"b1", "bool"},       {"u8", "uint64"},     {"f8", "float64"},  {"c8", "complex64"},
                {"c16", "complex128"}, {"f16", "float128"}, {"O", "Python object"},
            };
            std::string name;
            for (const Known& k : known)
                if (k.code == code) name = k.name;
            if (!code.empty() && (code[0] == 'U' || code[0] == 'S'))
                name = code[0] == 'U' ? "unicode string" : "byte string";
            if (!name.empty())  // a numpy type: valid, but not one of Janus's
                return unsupported(at, "npy-dtype", "dtype " + quote_text(descr) + " (" + name + ")",
                                   supported + "; convert it with a.astype(...)");
            return error(at, "npy-dtype",
                         "unknown dtype " + quote_text(descr) + "; " + supported + "; convert it with a.astype(...)");
        }
        h.dtype = *dt;
        if (dtype_size(h.dtype) > 1) {
            if (order == '|') {
                return error(at, "npy-dtype",
                             "the dtype " + quote_text(descr) + " says '|' (byte order not applicable) for a " +
                                 std::to_string(dtype_size(h.dtype)) + "-byte type; write '<" + std::string(code) +
                                 "' (little-endian) or '>" + std::string(code) + "' (big-endian)");
            }
            if (order != '<' && order != '>') {
                return error(at, "npy-dtype",
                             "the dtype " + quote_text(descr) + " does not state its byte order; write '<" +
                                 std::string(code) + "' (little-endian) or '>" + std::string(code) + "' (big-endian)");
            }
            h.big_endian = order == '>';
        }
        return ok_status();
    }

    Status parse_fortran_order() {
        const std::size_t at = pos_;
        while (!eof() && is_ident(text_[pos_])) ++pos_;
        const std::string_view word = text_.substr(at, pos_ - at);
        if (word == "False") return ok_status();
        if (word == "True") {
            return unsupported(at, "npy-c-order", "Fortran (column-major) order",
                               "Janus reads C-order arrays only: save np.ascontiguousarray(a) instead");
        }
        const std::string what = word.empty() ? (pos_ = at, found()) : quote_text(word);
        return error(at, "npy-header-value", "the value of 'fortran_order' must be True or False, found " + what);
    }

    Status parse_shape(Header& h) {
        if (eof() || text_[pos_] != '(') {
            return error(
                pos_, "npy-header-value",
                "the value of 'shape' must be a tuple of dimensions such as (2, 3), (3,) or (), found " + found());
        }
        const std::size_t open_at = pos_;
        ++pos_;
        skip_ws();
        if (!eof() && text_[pos_] == ')') {
            ++pos_;
            return ok_status();
        }
        for (;;) {
            skip_ws();
            JANUS_TRY(const std::int64_t d, parse_dim());
            h.shape.push_back(d);
            skip_ws();
            if (eof())
                return error(pos_, "npy-header-syntax", "the header ends inside the shape tuple; expected ',' or ')'");
            if (text_[pos_] == ',') {
                ++pos_;
                skip_ws();
                if (!eof() && text_[pos_] == ')') {
                    ++pos_;
                    return ok_status();
                }
                continue;
            }
            if (text_[pos_] == ')') {
                if (h.shape.size() == 1) {
                    return error(open_at, "npy-header-value",
                                 "(" + std::to_string(d) +
                                     ") is a number, not a tuple; a one-dimensional shape is written (" +
                                     std::to_string(d) + ",)");
                }
                ++pos_;
                return ok_status();
            }
            return error(pos_, "npy-header-syntax", "expected ',' or ')' in the shape tuple, found " + found());
        }
    }

    Result<std::int64_t> parse_dim() {
        const std::size_t at = pos_;
        const bool negative = !eof() && text_[pos_] == '-';
        if (negative) ++pos_;
        if (eof() || !is_digit(text_[pos_])) {
            return error(pos_, "npy-header-syntax",
                         "expected a dimension (a non-negative integer) in the shape tuple, found " + found());
        }
        const std::size_t digits_at = pos_;
        constexpr std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        std::uint64_t value = 0;
        bool overflow = false;
        bool nonzero = false;
        for (; !eof() && is_digit(text_[pos_]); ++pos_) {
            const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
            nonzero = nonzero || digit != 0;
            if (!overflow && value > (limit - digit) / 10) overflow = true;
            if (!overflow) value = value * 10 + digit;
        }
        const std::string_view literal = text_.substr(at, pos_ - at);
        if (text_[digits_at] == '0' && nonzero) {
            return error(
                digits_at, "npy-header-syntax",
                "the dimension " + quote_text(literal) + " has a leading zero, which a Python integer may not have");
        }
        if (overflow) {
            return error(at, "npy-dim-range",
                         "the dimension " + quote_text(literal) + " does not fit in a signed 64-bit integer");
        }
        if (negative && value != 0) {
            return error(at, "npy-dim-range",
                         "the dimension " + std::string(literal) + " is negative; dimensions must be >= 0");
        }
        return static_cast<std::int64_t>(value);
    }

    std::string_view text_;
    std::size_t base_;
    const std::string& input_;
    std::size_t pos_ = 0;
};

}  // namespace detail

/// Parses a whole .npy file. `input_name` names the input in errors (usually the file's path).
inline Result<NpyArray> read_npy(std::span<const std::uint8_t> bytes, std::string_view input_name) {
    const std::string input(input_name);
    const std::size_t size = bytes.size();
    auto at = [](std::size_t offset) { return "byte " + std::to_string(offset); };
    if (size == 0) {
        return make_error(input, at(0), "npy-magic",
                          "the file is empty; a .npy file starts with the magic string \\x93NUMPY");
    }
    for (std::size_t i = 0; i < 6 && i < size; ++i) {
        if (bytes[i] != detail::npy_magic[i]) {
            return make_error(input, at(i), "npy-magic",
                              "not a .npy file: it does not start with the magic string \\x93NUMPY (byte " +
                                  std::to_string(i) + " is " + detail::hex_byte(bytes[i]) + ", expected " +
                                  detail::hex_byte(detail::npy_magic[i]) + ")");
        }
    }
    if (size < 8) {
        return make_error(input, at(size), "npy-truncated",
                          "the file ends after " + std::to_string(size) +
                              " bytes, inside the .npy preamble (magic string, version, header length)");
    }
    const unsigned major = bytes[6];
    const unsigned minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0) {
        return make_error(input, at(major < 1 || major > 3 ? 6 : 7), "npy-version",
                          "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                              "; Janus reads versions 1.0, 2.0 and 3.0");
    }
    const std::size_t length_size = major == 1 ? 2 : 4;
    const std::size_t header_at = 8 + length_size;
    if (size < header_at) {
        return make_error(input, at(size), "npy-truncated",
                          "the file ends after " + std::to_string(size) + " bytes, inside the " +
                              std::to_string(length_size) + "-byte header length of a version " +
                              std::to_string(major) + ".0 file");
    }
    std::uint64_t header_length = 0;
    for (std::size_t i = 0; i < length_size; ++i) header_length |= static_cast<std::uint64_t>(bytes[8 + i]) << (8 * i);
    if (header_length > size - header_at) {
        return make_error(input, at(8), "npy-header-length",
                          "the header length field says " + detail::byte_count(header_length) +
                              " but the file has only " + detail::byte_count(size - header_at) +
                              " after it; it is truncated or corrupt");
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + header_at),
                                static_cast<std::size_t>(header_length));
    JANUS_TRY(auto header, detail::NpyHeaderParser(text, header_at, input).parse());

    const std::size_t data_at = header_at + static_cast<std::size_t>(header_length);
    const std::size_t elem = dtype_size(header.dtype);
    const std::uint64_t found = size - data_at;
    // element_count * elem fits int64 (checked by the parser).
    const std::uint64_t expected = header.element_count * elem;
    if (found != expected) {
        std::string message = "the header declares " + detail::short_type(header.dtype, header.shape) + ", which is " +
                              detail::byte_count(expected) + " of data, but the file has " + detail::byte_count(found) +
                              " after the header";
        if (found < expected) {
            message += "; it is truncated";
        } else if (found - expected == 1) {
            message += "; its last byte does not belong to the array";
        } else {
            message += "; its last " + std::to_string(found - expected) + " bytes do not belong to the array";
        }
        return make_error(input, at(data_at), "npy-data-size", std::move(message));
    }

    NpyArray a{header.dtype, std::move(header.shape), {}};
    a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_at), bytes.end());
    if (header.big_endian) {
        for (std::size_t i = 0; i + elem <= a.data.size(); i += elem) {
            for (std::size_t lo = i, hi = i + elem - 1; lo < hi; ++lo, --hi) std::swap(a.data[lo], a.data[hi]);
        }
    }
    return a;
}

/// The bytes numpy.save writes for `a` (see the contract at the top). `a` must be valid (check_npy_array).
inline std::vector<std::uint8_t> write_npy(const NpyArray& a) {
    JANUS_ASSERT(check_npy_array(a, "write_npy").ok());
    std::string dict = "{'descr': '";
    dict += npy_descr(a.dtype);
    dict += "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < a.shape.size(); ++i) {
        if (i > 0) dict += ", ";
        dict += std::to_string(a.shape[i]);
    }
    if (a.shape.size() == 1) dict += ',';
    dict += "), }";
    if (!a.shape.empty()) {
        // numpy >= 1.24 leaves room to grow the first dimension in place up to 21 digits.
        const std::size_t digits = std::to_string(a.shape[0]).size();
        if (digits < 21) dict.append(21 - digits, ' ');
    }
    // The magic (6), version (2), length field and header (with its '\n') end on a multiple of 64; the padding is
    // 1..64 spaces (64 when already aligned, as numpy does).
    std::size_t length_size = 2;
    std::size_t padded = 0;
    for (;;) {
        const std::size_t with_newline = dict.size() + 1;
        padded = with_newline + 64 - (8 + length_size + with_newline) % 64;
        if (length_size == 2 && padded > 0xffff) {
            length_size = 4;
            continue;
        }
        break;
    }
    JANUS_ASSERT(padded <= 0xffffffffu);
    // Filled in place (g++ 12 reports a false -Wstringop-overflow for vector::insert into a reserved vector).
    const std::size_t header_at = 8 + length_size;
    std::vector<std::uint8_t> out(header_at + padded + a.data.size(), static_cast<std::uint8_t>(' '));
    for (std::size_t i = 0; i < 6; ++i) out[i] = detail::npy_magic[i];
    out[6] = length_size == 2 ? 1 : 2;
    out[7] = 0;
    for (std::size_t i = 0; i < length_size; ++i) out[8 + i] = static_cast<std::uint8_t>(padded >> (8 * i));
    for (std::size_t i = 0; i < dict.size(); ++i) out[header_at + i] = static_cast<std::uint8_t>(dict[i]);
    out[header_at + padded - 1] = static_cast<std::uint8_t>('\n');
    for (std::size_t i = 0; i < a.data.size(); ++i) out[header_at + padded + i] = a.data[i];
    return out;
}

/// Reads and parses the .npy file at `path`; errors name the path (rule npy-read when the file cannot be read).
inline Result<NpyArray> read_npy_file(const std::string& path, std::uint64_t max_bytes = default_max_memory) {
    JANUS_TRY(const auto bytes, read_file(path, "npy-read", "a .npy file", max_bytes));
    return read_npy(bytes, path);
}

/// Checks `a` (check_npy_array) and writes it as .npy to `path` atomically; errors name the path.
inline Status write_npy_file(const std::string& path, const NpyArray& a) {
    JANUS_CHECK(check_npy_array(a, path));
    const std::vector<std::uint8_t> bytes = write_npy(a);
    return write_file_atomic(path, bytes, "npy-write");
}

}  // namespace janus::io
