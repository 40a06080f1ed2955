#pragma once
// The vnpu parameter-table formats: ONE row per field, from which the encoder (emitters, test helpers), the decoder
// with its validation (the simulator), the generated text of docs/vnpu.md "Parameter tables" and the ISA hash
// (package::isa_hash) derive. No other file states a table's offset, width or range.
//
// Layouts (all little endian, in LMEM):
//   rq_header_layout   vec.rq's 16-byte header (zp, min, max, rounding)
//   rq_channel_layout  vec.rq's 16-byte entry per channel, at 16 + 16 c (bias, multiplier, right shift, reserved)
//   ew_layout          vec.ew's 48-byte block (12 int32 words)
// Field kinds: `integer` (range-checked), `rounding` (a RoundingCode), `multiplier` + the `right_shift` row after it
// (one numeric::QuantizedMultiplier stored as (multiplier, t = 31 - shift): valid when 0 with t = 31, or in
// [2^30, 2^31) with t in 1..62), `reserved` (every byte 0). Non-reserved fields are int32 (4 bytes) or uint8 (1).
// Contract: decode() refuses what check() refuses and check() is what encode() asserts, so a table an emitter writes
// is one the simulator reads back unchanged: decode(encode(x)) == x. Errors name the table's fault rule (`rq-table`,
// `ew-table`), the location (`channel 3`) and the field; checks run in the order reserved bytes, ranges, multiplier
// pairs, then the table's own cross-field rule (min <= max).
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <janus/core/error.hpp>
#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/rounding.hpp>

namespace janus::vnpu {

/// The rounding-mode number of the parameter tables (numeric/rounding.hpp's three modes).
enum class RoundingCode : std::int32_t { round_double = 0, round_single = 1, round_half_even = 2 };
inline constexpr std::array<std::string_view, 3> rounding_code_names = {"round_double", "round_single",
                                                                        "round_half_even"};

/// The table code of a rounding mode (a plan's numeric::Rounding).
constexpr std::int32_t rounding_code(numeric::Rounding r) {
    switch (r) {
        case numeric::Rounding::round_single: return static_cast<std::int32_t>(RoundingCode::round_single);
        case numeric::Rounding::round_half_even: return static_cast<std::int32_t>(RoundingCode::round_half_even);
        case numeric::Rounding::round_double: break;
    }
    return static_cast<std::int32_t>(RoundingCode::round_double);
}

/// Call f(R{}) with the rounding mode of a VALID code (decode() has checked it).
template <class F>
constexpr decltype(auto) with_rounding(std::int32_t code, F&& f) {
    if (code == 0) return f(numeric::round_double{});
    if (code == 1) return f(numeric::round_single{});
    return f(numeric::round_half_even{});
}

// ---------------------------------------------------------------------------------------------- the structures
/// vec.rq's header. `rounding` is a RoundingCode.
struct RqHeader {
    std::int32_t zp = 0, min = -128, max = 127, rounding = 0;
    friend bool operator==(const RqHeader&, const RqHeader&) = default;
};
/// One channel of vec.rq's table: bias, then the multiplier stored as (multiplier, right_shift = 31 - shift).
struct RqChannel {
    std::int32_t bias = 0, multiplier = 0, right_shift = 31;
    friend bool operator==(const RqChannel&, const RqChannel&) = default;
};
/// vec.ew's block: the fields of ops::BinaryQuantPlan, each multiplier as (mult, shift = 31 - exponent).
struct EwParams {
    std::int32_t zp_a = 0, zp_b = 0, zp_out = 0, left_shift = 0;
    std::int32_t mult_a = 0, shift_a = 31, mult_b = 0, shift_b = 31, mult_out = 0, shift_out = 31;
    std::int32_t acc_limit = 0, rounding = 0;
    friend bool operator==(const EwParams&, const EwParams&) = default;
};

/// A multiplier as stored (mantissa, total right shift t) and back.
constexpr numeric::QuantizedMultiplier stored_multiplier(std::int32_t mult, std::int32_t t) {
    return {mult, static_cast<std::int32_t>(31 - t)};
}
constexpr std::int32_t stored_right_shift(const numeric::QuantizedMultiplier& q) { return 31 - q.shift; }

// ---------------------------------------------------------------------------------------------- the layouts
enum class ParamKind : std::uint8_t { integer, rounding, multiplier, right_shift, reserved };

template <class S>
struct ParamField {
    std::string_view name;
    std::uint8_t offset = 0;  ///< first byte
    std::uint8_t width = 4;   ///< bytes: 4 (int32), 1 (uint8) or any (reserved)
    ParamKind kind = ParamKind::integer;
    std::int64_t min = 0, max = 0;       ///< valid values (multiplier: its mantissa's hull; see the header comment)
    std::int32_t S::*member = nullptr;   ///< null for reserved bytes
    std::string_view meaning;            ///< documentation only: not part of the ISA hash
};

template <class S, std::size_t N>
struct ParamLayout {
    std::string_view name;       ///< as docs/vnpu.md names it
    std::string_view fault;      ///< the simulator's fault rule
    std::uint8_t size = 0;       ///< bytes
    std::array<ParamField<S>, N> fields;
    bool (*consistent)(const S&) = nullptr;  ///< a cross-field rule, or null
    std::string_view consistent_text;        ///< that rule, stated
    std::string_view placement;              ///< where the table lives (documentation only)
};

namespace param_detail {
inline constexpr std::int64_t i32_lo = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int64_t i32_hi = std::numeric_limits<std::int32_t>::max();
template <class S>
constexpr ParamField<S> i32(std::string_view n, int at, std::int32_t S::*m, std::string_view text,
                            std::int64_t lo = i32_lo, std::int64_t hi = i32_hi) {
    return {n, static_cast<std::uint8_t>(at), 4, ParamKind::integer, lo, hi, m, text};
}
template <class S>
constexpr ParamField<S> rounding(int at, std::int32_t S::*m) {
    return {"rounding", static_cast<std::uint8_t>(at), 4, ParamKind::rounding, 0, 2, m,
            "0 `round_double`, 1 `round_single`, 2 `round_half_even` (numeric/rounding.hpp)"};
}
template <class S>
constexpr ParamField<S> mult(std::string_view n, int at, std::int32_t S::*m, std::string_view text) {
    return {n, static_cast<std::uint8_t>(at), 4, ParamKind::multiplier, 0, i32_hi, m, text};
}
template <class S>
constexpr ParamField<S> shift(std::string_view n, int at, int width, std::int32_t S::*m, std::string_view text) {
    return {n, static_cast<std::uint8_t>(at), static_cast<std::uint8_t>(width), ParamKind::right_shift, 1, 62, m, text};
}
inline constexpr std::string_view mult_text = "multiplier mantissa: 0, or in [2^30, 2^31)";
inline constexpr std::string_view shift_text = "t = 31 - shift, the total right shift: 1..62 (31 when the multiplier is 0)";
}  // namespace param_detail

// clang-format off
inline constexpr ParamLayout<RqHeader, 4> rq_header_layout{
    "requantization header", "rq-table", 16, {{
        param_detail::i32<RqHeader>("zp", 0, &RqHeader::zp, "output zero point (added after the multiply, 32-bit wrap-around)"),
        param_detail::i32<RqHeader>("min", 4, &RqHeader::min, "activation min (a fused ReLU is min = zero point)", -128, 127),
        param_detail::i32<RqHeader>("max", 8, &RqHeader::max, "activation max", -128, 127),
        param_detail::rounding<RqHeader>(12, &RqHeader::rounding),
    }},
    [](const RqHeader& h) { return h.min <= h.max; }, "min <= max", "vec.rq's table at rp, bytes 0..15"};

inline constexpr ParamLayout<RqChannel, 4> rq_channel_layout{
    "requantization channel entry", "rq-table", 16, {{
        param_detail::i32<RqChannel>("bias", 0, &RqChannel::bias, "added to the accumulator (32-bit wrap-around)"),
        param_detail::mult<RqChannel>("multiplier", 4, &RqChannel::multiplier, param_detail::mult_text),
        param_detail::shift<RqChannel>("right_shift", 8, 1, &RqChannel::right_shift, param_detail::shift_text),
        ParamField<RqChannel>{"reserved", 9, 7, ParamKind::reserved, 0, 0, nullptr, "reserved, 0"},
    }},
    nullptr, "", "vec.rq's table, channel c < channels at 16 + 16 c"};

inline constexpr ParamLayout<EwParams, 12> ew_layout{
    "elementwise block", "ew-table", 48, {{
        param_detail::i32<EwParams>("zp_a", 0, &EwParams::zp_a, "zero point of input a"),
        param_detail::i32<EwParams>("zp_b", 4, &EwParams::zp_b, "zero point of input b"),
        param_detail::i32<EwParams>("zp_out", 8, &EwParams::zp_out, "output zero point"),
        param_detail::i32<EwParams>("left_shift", 12, &EwParams::left_shift, "add, sub: inputs shifted left before their rescale", 0, 30),
        param_detail::mult<EwParams>("mult_a", 16, &EwParams::mult_a, "input a's rescale (add, sub, min, max): mantissa 0 or in [2^30, 2^31)"),
        param_detail::shift<EwParams>("shift_a", 20, 4, &EwParams::shift_a, param_detail::shift_text),
        param_detail::mult<EwParams>("mult_b", 24, &EwParams::mult_b, "input b's rescale (add, sub, min, max)"),
        param_detail::shift<EwParams>("shift_b", 28, 4, &EwParams::shift_b, param_detail::shift_text),
        param_detail::mult<EwParams>("mult_out", 32, &EwParams::mult_out, "output rescale (add, sub, mul)"),
        param_detail::shift<EwParams>("shift_out", 36, 4, &EwParams::shift_out, param_detail::shift_text),
        param_detail::i32<EwParams>("acc_limit", 40, &EwParams::acc_limit, "add, sub, mul: the combined value is clamped to [-acc_limit, acc_limit]"),
        param_detail::rounding<EwParams>(44, &EwParams::rounding),
    }},
    nullptr, "", "vec.ew.*'s block at rp"};
// clang-format on

/// Bytes of a vec.rq table of `channels` channels.
constexpr std::int64_t rq_table_bytes(std::int64_t channels) {
    return rq_header_layout.size + rq_channel_layout.size * channels;
}

namespace param_detail {
template <class S, std::size_t N>
constexpr bool consistent(const ParamLayout<S, N>& l) {
    std::uint64_t used = 0;
    for (std::size_t i = 0; i < N; ++i) {
        const ParamField<S>& f = l.fields[i];
        if (f.width == 0 || f.offset + f.width > l.size || l.size > 64) return false;
        const std::uint64_t bits = ((std::uint64_t{1} << f.width) - 1) << f.offset;
        if ((used & bits) != 0) return false;  // no overlap
        used |= bits;
        if (f.kind == ParamKind::reserved) {
            if (f.member != nullptr) return false;
            continue;
        }
        if (f.member == nullptr || (f.width != 4 && f.width != 1) || f.min > f.max) return false;
        if (f.width == 1 && (f.min < 0 || f.max > 255)) return false;
        // a multiplier is followed by its right shift
        if (f.kind == ParamKind::multiplier && (i + 1 == N || l.fields[i + 1].kind != ParamKind::right_shift))
            return false;
        if (f.kind == ParamKind::right_shift && (i == 0 || l.fields[i - 1].kind != ParamKind::multiplier))
            return false;
    }
    return used == (l.size == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << l.size) - 1);  // every byte described
}
static_assert(consistent(rq_header_layout) && consistent(rq_channel_layout) && consistent(ew_layout),
              "vnpu parameter layouts: a field leaves its table, overlaps another, leaves a byte undescribed, or a "
              "multiplier row is not followed by its right_shift row");

template <class S>
std::string bytes_text(const ParamField<S>& f) {
    return f.width == 1 ? "byte " + std::to_string(f.offset)
                        : "bytes " + std::to_string(f.offset) + ".." + std::to_string(f.offset + f.width - 1);
}
inline std::string prefix(const std::string& where) { return where.empty() ? std::string() : where + ": "; }
}  // namespace param_detail

/// The rules a table's values obey (everything decode() checks but the reserved bytes). `where` locates the table
/// in messages ("channel 3"); the error's rule is the layout's fault rule.
template <class S, std::size_t N>
Status check(const ParamLayout<S, N>& l, const S& s, const std::string& what, const std::string& where = "") {
    using param_detail::prefix;
    for (const ParamField<S>& f : l.fields) {
        if (f.kind == ParamKind::reserved || f.kind == ParamKind::multiplier || f.kind == ParamKind::right_shift)
            continue;
        const std::int64_t v = s.*f.member;
        if (v < f.min || v > f.max)
            return make_error(what, std::string(f.name), std::string(l.fault),
                              prefix(where) + std::string(f.name) + " = " + std::to_string(v) + " (" +
                                  param_detail::bytes_text(f) + ") is outside [" + std::to_string(f.min) + ", " +
                                  std::to_string(f.max) + "]");
    }
    for (std::size_t i = 0; i < N; ++i) {
        const ParamField<S>& f = l.fields[i];
        if (f.kind != ParamKind::multiplier) continue;
        const ParamField<S>& t = l.fields[i + 1];
        const std::int32_t m = s.*f.member, r = s.*t.member;
        if (r < t.min || r > t.max || !numeric::is_valid(stored_multiplier(m, r)))
            return make_error(what, std::string(f.name), std::string(l.fault),
                              prefix(where) + "(" + std::string(f.name) + " " + std::to_string(m) + ", " +
                                  std::string(t.name) + " " + std::to_string(r) +
                                  ") is not a valid multiplier (0 with t = 31, or [2^30, 2^31) with t in 1..62)");
    }
    if (l.consistent != nullptr && !l.consistent(s))
        return make_error(what, "", std::string(l.fault), prefix(where) + "the fields break " +
                                                              std::string(l.consistent_text));
    return ok_status();
}

/// Write `s` into out[0 .. l.size) (reserved bytes 0). Precondition: check(l, s) passes (asserted).
template <class S, std::size_t N>
void encode(const ParamLayout<S, N>& l, const S& s, std::span<std::uint8_t> out) {
    JANUS_ASSERT(out.size() >= l.size && check(l, s, "encode").ok());
    for (const ParamField<S>& f : l.fields) {
        if (f.kind == ParamKind::reserved) {
            std::memset(out.data() + f.offset, 0, f.width);
            continue;
        }
        const auto v = static_cast<std::uint32_t>(s.*f.member);
        for (int b = 0; b < f.width; ++b)
            out[f.offset + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(v >> (8 * b));
    }
}
/// Read and validate one table from `in` (at least l.size bytes). Rule: the layout's fault rule.
template <class S, std::size_t N>
Result<S> decode(const ParamLayout<S, N>& l, std::span<const std::uint8_t> in, const std::string& what,
                 const std::string& where = "") {
    JANUS_ASSERT(in.size() >= l.size);
    S s{};
    for (const ParamField<S>& f : l.fields) {
        if (f.kind == ParamKind::reserved) {
            for (int b = f.offset; b < f.offset + f.width; ++b)
                if (in[static_cast<std::size_t>(b)] != 0)
                    return make_error(what, std::string(f.name), std::string(l.fault),
                                      param_detail::prefix(where) + "reserved byte " + std::to_string(b) + " is " +
                                          std::to_string(in[static_cast<std::size_t>(b)]) + ", must be 0");
            continue;
        }
        std::uint32_t v = 0;
        for (int b = 0; b < f.width; ++b) v |= std::uint32_t{in[f.offset + static_cast<std::size_t>(b)]} << (8 * b);
        s.*f.member = static_cast<std::int32_t>(v);  // int32: two's complement; uint8: 0..255
    }
    JANUS_CHECK(check(l, s, what, where));
    return s;
}

/// Visit every layout, in a fixed order (the ISA hash, the generated documentation).
template <class F>
constexpr void for_each_param_layout(F&& f) {
    f(rq_header_layout);
    f(rq_channel_layout);
    f(ew_layout);
}

}  // namespace janus::vnpu
