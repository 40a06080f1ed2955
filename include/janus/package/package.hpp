#pragma once
// The Janus package (.jpk): a compiled model for the Janus virtual NPU, its writer and its validating reader.
// docs/package.md is the specification (every byte, every rule); this header is its one implementation.
//
// Contract:
//   - write_package(p) returns the canonical bytes of `p`, or an Error when `p` breaks a rule of the format (the
//     rules the reader applies; nothing is produced). Same package in, same bytes out: no time, path, locale,
//     address or uninitialized byte enters the file, every padding byte is 0 (seed D8).
//   - read_package(bytes, name) returns the package or ONE Error: input = `name`, position = "byte N" (the file
//     offset of the offending field), a kebab-case rule, and a sentence naming the section and the item. It never
//     crashes, never reads outside `bytes`, and allocates only after checking a count against the bytes that remain.
//     It accepts canonical files only: read_package(b) succeeds => write_package(result) == b. Every byte of a file
//     is covered by a checksum or by a must-be-zero rule, so a corrupted package is an error, never another model.
//   - The layout is defined ONCE: each structure has one `transfer(ar, x)` function run by the writer (Sink) and by
//     the reader (Source); its content rules (`ar.require`) are in the same function, so the writer refuses exactly
//     what the reader refuses. Field offsets the reader reports are measured from those functions (Locate).
//   - Toolchain identity (seed D3): the header carries the Janus version and isa_hash(), a hash of the whole vnpu
//     instruction table and parameter-table layouts. A package with another hash is refused (rule
//     package-toolchain) unless the caller turns the check off (ReadOptions::check_toolchain; `inspect` does, and
//     reports the mismatch).
//   - Buffer kinds (seed C5): inputs and final outputs are I/O descriptors placed in the input / output regions;
//     persistent state (kept across runs, zeroed once at load) and scratch (no contents promised between runs) are
//     buffers of the scratch region, and state never shares a byte with anything; constants (weights, bias, LUTs,
//     parameter tables) are buffers of the weights region.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/core/size.hpp>
#include <janus/package/checksum.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/version.hpp>
#include <janus/vnpu/isa.hpp>
#include <janus/vnpu/params.hpp>

namespace janus::package {

// ============================================================================================ toolchain identity

/// FNV-1a 64 over every row of `table`: mnemonic, opcode, unit, each operand field (name, lo, width, kind, scale),
/// the fixed bits (lo, width, value), sem, cost and func; then over each parameter-table layout of vnpu/params.hpp:
/// its name, fault rule, size, field count, each field (name, offset, width, kind, min, max) and its cross-field
/// rule. Any change to an encoding, to a table layout or to what a row executes changes the hash; the `semantics`
/// sentence and a field's `meaning` (documentation) do not enter it. `layouts...` replace the build's layouts (tests).
template <class... Layouts>
constexpr std::uint64_t isa_hash(std::span<const vnpu::InstrInfo> table, const Layouts&... layouts) {
    Fnv1a64 f;
    f.text("janus-vnpu-isa").integer(table.size());
    for (const vnpu::InstrInfo& r : table) {
        f.text(r.mnemonic).integer(r.opcode).integer(static_cast<std::uint64_t>(r.unit));
        f.integer(static_cast<std::uint64_t>(r.n_fields));
        for (const vnpu::Field& x : r.operands()) {
            f.text(x.name).integer(x.lo).integer(x.width).integer(static_cast<std::uint64_t>(x.kind));
            f.integer(static_cast<std::uint64_t>(x.scale));
        }
        f.integer(r.fixed.lo).integer(r.fixed.width).integer(r.fixed.value);
        f.integer(static_cast<std::uint64_t>(r.sem)).integer(static_cast<std::uint64_t>(r.cost));
        f.integer(static_cast<std::uint64_t>(r.func));
    }
    const auto layout = [&](const auto& l) {
        f.text(l.name).text(l.fault).integer(l.size).integer(l.fields.size());
        for (const auto& x : l.fields) {
            f.text(x.name).integer(x.offset).integer(x.width).integer(static_cast<std::uint64_t>(x.kind));
            f.integer(static_cast<std::uint64_t>(x.min)).integer(static_cast<std::uint64_t>(x.max));
        }
        f.text(l.consistent_text);
    };
    if constexpr (sizeof...(Layouts) == 0) vnpu::for_each_param_layout(layout);
    else (layout(layouts), ...);
    return f.value();
}
/// The hash of this build's vnpu::instruction_table.
inline constexpr std::uint64_t current_isa_hash = isa_hash(vnpu::instruction_table);
constexpr std::uint64_t isa_hash() { return current_isa_hash; }

// ============================================================================================ the model in memory

/// DRAM regions (vnpu::region_names order).
inline constexpr int region_weights = 0, region_scratch = 1, region_input = 2, region_output = 3;

/// What a named buffer holds. The value is the byte stored in the file.
enum class BufferKind : std::uint8_t {
    scratch = 1,   ///< scratch region: temporaries, no contents promised between runs; may share bytes with scratch
    state = 2,     ///< scratch region: persistent state, zeroed at load and kept across runs; shares no byte
    weights = 3,   ///< weights region: weight tensors (packed tiles)
    bias = 4,      ///< weights region: int32 biases
    lut = 5,       ///< weights region: 256-byte lookup tables (a multiple of 256 bytes)
    rq_table = 6,  ///< weights region: vec.rq requantization table, 16 + 16 x channels bytes
    ew_table = 7,  ///< weights region: vec.ew parameter block, 48 bytes
    constant = 8,  ///< weights region: any other constant
};
inline constexpr std::uint8_t buffer_kind_count = 8;

constexpr bool buffer_kind_valid(std::uint8_t code) { return code >= 1 && code <= buffer_kind_count; }
constexpr std::string_view buffer_kind_name(BufferKind k) {
    constexpr std::array<std::string_view, 9> names = {"?",   "scratch",  "state",    "weights", "bias",
                                                       "lut", "rq-table", "ew-table", "constant"};
    const auto i = static_cast<std::uint8_t>(k);
    return names[buffer_kind_valid(i) ? i : 0];
}
constexpr int buffer_region(BufferKind k) {
    return k == BufferKind::scratch || k == BufferKind::state ? region_scratch : region_weights;
}

/// Quantization at the package boundary: real = scale * (stored - zero_point). No entry: not quantized; one entry:
/// per-tensor (axis 0); n > 1 entries: per-axis along `axis`, n == shape[axis].
struct Quantization {
    std::vector<float> scales;
    std::vector<std::int32_t> zero_points;  ///< as many as scales
    std::int32_t axis = 0;
    friend bool operator==(const Quantization&, const Quantization&) = default;
};

/// One model input or output: its ONNX identity (name, dtype at the boundary, logical shape, quantization) and its
/// placement in the input (inputs) or output (outputs) region: element (i0, .., in-1) of `storage` type lives at
/// byte offset + sum(ik * strides[k]) (seed B4: the logical shape and the physical layout are separate).
/// Example: an NCHW int8 tensor stored NHWC with channels padded to 16: shape {1, C, H, W},
/// strides {H*W*Cp, 1, W*Cp, Cp}, Cp = round16(C).
struct IoDesc {
    std::string name;
    DType dtype = DType::i8;            ///< the dtype at the package boundary (what the ONNX model declares)
    DType storage = DType::i8;          ///< the element type in DRAM
    std::vector<std::int64_t> shape;    ///< logical dims (rank <= 8)
    std::vector<std::int64_t> strides;  ///< bytes per step of each logical axis (as many as shape)
    Quantization quant;
    std::uint64_t offset = 0;  ///< first byte in the region (a multiple of 16)
    std::uint64_t size = 0;    ///< bytes reserved (covers every element, padding included)
    friend bool operator==(const IoDesc&, const IoDesc&) = default;
};

/// A named DRAM buffer that is not an I/O tensor: its region follows from its kind (buffer_region).
struct Buffer {
    std::string name;
    BufferKind kind = BufferKind::scratch;
    std::uint64_t offset = 0;  ///< a multiple of 16
    std::uint64_t size = 0;
    friend bool operator==(const Buffer&, const Buffer&) = default;
};

/// Instructions [first, last) were emitted for ONNX node `node` (possibly unnamed) of type `op_type`.
struct DebugEntry {
    std::uint32_t first = 0, last = 0;
    std::string node, op_type;
    friend bool operator==(const DebugEntry&, const DebugEntry&) = default;
};

/// The host part of a model (section 6; docs/package.md "Section 6: host"): the nodes the NPU does not run, as
/// graph IR text (docs/janusc.md "IR text form"). The first `prologue` nodes run before the program, the others
/// after it. This layer checks the bytes only; graph/compile.hpp (host_plan) parses the text and ties its values to
/// the I/O descriptors, which then describe the NPU program's own inputs and outputs.
struct HostSection {
    std::uint32_t prologue = 0;
    std::string graph;
    friend bool operator==(const HostSection&, const HostSection&) = default;
};

/// Where one NPU segment after the first starts (section 7; docs/package.md "Section 7: segments"). A program of
/// several segments runs one segment at a time, each ending with halt, with host nodes between them: before segment
/// s the host runs host graph nodes [previous nodes_before, nodes_before) and places program inputs
/// [first_input, next first_input); segment s writes program outputs [first_output, next first_output). Segment 0
/// starts at pc 0 after the host section's prologue, with inputs and outputs from index 0.
struct SegmentStart {
    std::uint32_t entry = 0;         ///< pc of the segment's first instruction
    std::uint32_t nodes_before = 0;  ///< host graph nodes that run before it (a count from the graph's first node)
    std::uint32_t first_input = 0;   ///< its first program input (io index)
    std::uint32_t first_output = 0;  ///< its first program output (io index)
    friend bool operator==(const SegmentStart&, const SegmentStart&) = default;
};

/// One host node of the placement record: which node, why it runs on the host (the lowering's rule and sentence),
/// and whether it is a quantized node the NPU's types would allow (what `janusc --strict` refuses).
struct HostNode {
    std::uint32_t index = 0;  ///< its position among the compiled graph's nodes
    std::string node, op_type, rule, why;
    bool quantized = false;
    friend bool operator==(const HostNode&, const HostNode&) = default;
};

/// Where the compiled graph's nodes run (section 8, format version 2): `nodes` in all, the host ones listed with
/// their reasons in graph order; every other node runs on the NPU.
struct PlacementRecord {
    std::uint32_t nodes = 0;
    std::vector<HostNode> host;
    friend bool operator==(const PlacementRecord&, const PlacementRecord&) = default;
};

/// A section this version does not interpret, kept byte for byte (written with the optional flag).
struct ExtraSection {
    std::uint32_t kind = 0;  ///< > the last kind its format version knows (format::known_kinds_of), increasing
    std::vector<std::uint8_t> bytes;
    friend bool operator==(const ExtraSection&, const ExtraSection&) = default;
};

/// Who wrote the package (seed D3). Defaults to this build.
struct Toolchain {
    std::string version{version_string()};  ///< 1..31 printable ASCII characters
    std::uint64_t isa_hash = current_isa_hash;
    friend bool operator==(const Toolchain&, const Toolchain&) = default;
};

struct Package {
    Toolchain toolchain;
    std::vector<vnpu::Word> code;                                        ///< instruction words; the last one is halt
    std::vector<std::uint8_t> weights;                                   ///< region 0's image (a multiple of 16 bytes)
    std::uint64_t scratch_bytes = 0, input_bytes = 0, output_bytes = 0;  ///< sizes of regions 1..3 (multiples of 16)
    std::vector<IoDesc> inputs, outputs;
    std::vector<Buffer> buffers;
    std::vector<DebugEntry> debug;  ///< sorted, non-overlapping
    std::optional<HostSection> host;  ///< present when the model runs nodes on the host (beyond boundary conversions)
    std::vector<SegmentStart> segments;  ///< segments 1.. of the program (section 7); empty: one segment
    std::optional<PlacementRecord> placement;  ///< section 8: written by graph::compile_package (format version 2)
    /// Section 9 (format version 3): the rounding the package was compiled with. Its program's requantization
    /// tables carry it already; the host nodes (host section) must run with it too. See effective_rounding.
    std::optional<numeric::Rounding> rounding;
    std::vector<ExtraSection> extra;
    /// The file's format version: format::version when written by this build, or an older version it reads
    /// (docs/package.md "Versions"), kept so that a read package writes back to the same bytes.
    std::uint32_t format_version = 3;
    friend bool operator==(const Package&, const Package&) = default;
};

/// The rounding the package's kernels use: its numerics record, or round_double for a package written before format
/// version 3 (the only rounding Janus compiled with then; not numeric::default_rounding_mode, which may change).
inline numeric::Rounding effective_rounding(const Package& p) {
    return p.rounding.value_or(numeric::Rounding::round_double);
}

/// Size of DRAM region 0..3 (weights: the image's size).
inline std::uint64_t region_size(const Package& p, int region) {
    switch (region) {
        case region_weights:
            return p.weights.size();
        case region_scratch:
            return p.scratch_bytes;
        case region_input:
            return p.input_bytes;
        case region_output:
            return p.output_bytes;
        default:
            return 0;
    }
}

// ============================================================================================ the file format

namespace format {

inline constexpr std::array<std::uint8_t, 8> magic = {'J', 'A', 'N', 'U', 'S', 'P', 'K', 'G'};
/// The format version this build writes, and the oldest it reads (docs/package.md "Versions": version 2 adds the
/// placement section, version 3 the numerics section; an older file is read as it is, without them).
inline constexpr std::uint32_t version = 3;
inline constexpr std::uint32_t oldest_version = 1;
inline constexpr std::uint32_t header_size = 96;
inline constexpr std::uint32_t entry_size = 32;
inline constexpr std::uint32_t alignment = 64;  ///< of every section (versions 1 to 3)
inline constexpr std::uint32_t max_sections = 64;
inline constexpr std::uint32_t flag_optional = 1;  ///< section flag: a reader that does not know the kind may skip it
inline constexpr std::size_t max_rank = 8;
inline constexpr std::size_t max_name = 4096;            ///< bytes of a name
inline constexpr std::uint64_t max_region = 1ull << 32;  ///< DRAM offsets are 32-bit register values
inline constexpr std::int64_t max_extent = 1ll << 32;    ///< of a dim and of a stride

/// Section kinds this version knows, in the order they must appear (each at most once): 1..5 are required, 6 (host)
/// is present only when the model has host nodes, 7 (segments) only when host nodes run between NPU segments, 8
/// (placement, from format version 2) when the package was compiled from a graph, 9 (numerics, from format version
/// 3) when it records its rounding (graph::compile_package always does). A known kind is never optional: a
/// reader that does not know the host or segments section refuses the package (section-unknown) instead of running
/// half of the model.
enum class Kind : std::uint32_t {
    code = 1, weights = 2, memory = 3, io = 4, debug = 5, host = 6, segments = 7, placement = 8, numerics = 9
};
inline constexpr std::uint32_t required_kinds = 5;
inline constexpr std::uint32_t known_kinds = 9;
/// The last section kind format version `v` knows (1: 7; 2: 8; 3: 9).
constexpr std::uint32_t known_kinds_of(std::uint32_t v) { return v >= 3 ? 9 : v >= 2 ? 8 : 7; }

inline std::string section_name(std::uint32_t kind) {
    constexpr std::array<std::string_view, 10> names = {"",      "code", "weights",  "memory",    "io",
                                                        "debug", "host", "segments", "placement", "numerics"};
    if (kind >= 1 && kind <= known_kinds) return std::string(names[kind]);
    return "kind " + std::to_string(kind);
}

/// dtype codes in the file: ONNX TensorProto.DataType values (core/dtype.hpp's table), one byte.
static_assert(
    [] {
        for (DType d : all_dtypes)
            if (dtype_onnx_code(d) < 1 || dtype_onnx_code(d) > 255) return false;
        return true;
    }(),
    "a package stores a dtype's ONNX code in one byte");
/// "ONNX codes 1 float32, 2 uint8, ...", in code order: the bad-dtype message.
inline std::string dtype_codes_text() {
    std::string s = "ONNX codes";
    for (int c = 0; c < 256; ++c)
        if (const auto d = dtype_from_onnx_code(c))
            s += (s.size() > 10 ? ", " : " ") + std::to_string(c) + " " + std::string(dtype_name(*d));
    return s;
}

/// The fixed 96-byte header.
struct Header {
    std::array<std::uint8_t, 8> magic{};
    std::uint32_t version = 0;
    std::uint32_t header_size = 0;
    std::uint64_t file_size = 0;
    std::uint64_t table_offset = 0;
    std::uint32_t section_count = 0;
    std::uint32_t table_crc = 0;  ///< CRC-32C of the section table
    std::uint64_t isa_hash = 0;
    std::array<std::uint8_t, 32> toolchain{};  ///< Janus version, ASCII, NUL-padded
    std::array<std::uint8_t, 12> reserved{};
    std::uint32_t header_crc = 0;  ///< CRC-32C of every header byte before this field
};

/// The part of the header every format version keeps: magic, version, header size.
template <class Ar, class H>
Status transfer_preamble(Ar& ar, H& h) {
    JANUS_CHECK(ar.fixed(h.magic, "magic"));
    JANUS_CHECK(ar.template num<std::uint32_t>(h.version, "format version"));
    return ar.template num<std::uint32_t>(h.header_size, "header size");
}
template <class Ar, class H>
Status transfer_header(Ar& ar, H& h) {
    JANUS_CHECK(transfer_preamble(ar, h));
    JANUS_CHECK(ar.template num<std::uint64_t>(h.file_size, "file size"));
    JANUS_CHECK(ar.template num<std::uint64_t>(h.table_offset, "section table offset"));
    JANUS_CHECK(ar.template num<std::uint32_t>(h.section_count, "section count"));
    JANUS_CHECK(ar.template num<std::uint32_t>(h.table_crc, "section table checksum"));
    JANUS_CHECK(ar.template num<std::uint64_t>(h.isa_hash, "isa hash"));
    JANUS_CHECK(ar.fixed(h.toolchain, "toolchain version"));
    JANUS_CHECK(ar.fixed(h.reserved, "reserved"));
    return ar.template num<std::uint32_t>(h.header_crc, "header checksum");
}

/// One 32-byte entry of the section table.
struct Entry {
    std::uint32_t kind = 0;
    std::uint32_t flags = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::uint32_t alignment = 0;
    std::uint32_t crc = 0;  ///< CRC-32C of the section's bytes
};
template <class Ar, class E>
Status transfer_entry(Ar& ar, E& e) {
    JANUS_CHECK(ar.template num<std::uint32_t>(e.kind, "kind"));
    JANUS_CHECK(ar.template num<std::uint32_t>(e.flags, "flags"));
    JANUS_CHECK(ar.template num<std::uint64_t>(e.offset, "offset"));
    JANUS_CHECK(ar.template num<std::uint64_t>(e.length, "length"));
    JANUS_CHECK(ar.template num<std::uint32_t>(e.alignment, "alignment"));
    return ar.template num<std::uint32_t>(e.crc, "checksum");
}

}  // namespace format

// ============================================================================================ archives

namespace detail {

inline std::string hex(std::uint64_t v, int digits = 16) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s = "0x";
    for (int i = digits - 1; i >= 0; --i) s += d[(v >> (4 * i)) & 0xF];
    return s;
}
inline std::string dec(std::uint64_t v) { return std::to_string(v); }
constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
/// Saturating arithmetic: the result is UINT64_MAX when the exact one does not fit.
constexpr std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
    return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}
constexpr std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b ? std::numeric_limits<std::uint64_t>::max()
                                                                       : a * b;
}
/// `s` with control characters and bytes >= 0x7F shown as \xNN (for messages).
inline std::string printable(std::string_view s) {
    if (s.size() > echo_cap) return printable(s.substr(0, echo_cap)) + echo(s.substr(echo_cap), 0);  // echo's marker
    std::string out;
    for (const char c : s) {
        const auto b = static_cast<std::uint8_t>(c);
        if (b < 0x20 || b >= 0x7F)
            out += "\\x" + hex(b, 2).substr(2);
        else
            out += c;
    }
    return out;
}
inline std::string shortest(float v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

/// What both archives share: the input's name, the part being read ("header", "io section"), error construction.
class Archive {
public:
    Archive(std::string input, std::string where, bool validate)
        : input_(std::move(input)), where_(std::move(where)), validate_(validate) {}
    Error fail(std::uint64_t at, std::string_view rule, const std::string& detail) const {
        return make_error(input_, "byte " + dec(at), std::string(rule), where_ + ": " + detail);
    }
    /// A content rule: an Error unless `ok` (a Sink built with validate = false lets everything through).
    template <class F>
    Status require(bool ok, std::uint64_t at, std::string_view rule, F&& detail) const {
        if (ok || !validate_) return ok_status();
        return fail(at, rule, detail());
    }

protected:
    std::string input_, where_;
    bool validate_ = true;
};

/// Writes fields at a cursor of `out` (overwriting or appending).
class Sink : public Archive {
public:
    static constexpr bool reading = false;
    Sink(std::vector<std::uint8_t>& out, std::size_t at, std::string input, std::string where, bool validate)
        : Archive(std::move(input), std::move(where), validate), out_(out), at_(at) {}
    std::size_t pos() const { return at_; }

    template <class Wire, class T>
    Status num(const T& v, std::string_view) {
        const auto u = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Wire>>(static_cast<Wire>(v)));
        for (std::size_t i = 0; i < sizeof(Wire); ++i) put(static_cast<std::uint8_t>(u >> (8 * i)));
        return ok_status();
    }
    Status f32(const float& v, std::string_view what) {
        return num<std::uint32_t>(std::bit_cast<std::uint32_t>(v), what);
    }
    template <std::size_t N>
    Status fixed(const std::array<std::uint8_t, N>& a, std::string_view) {
        for (const std::uint8_t b : a) put(b);
        return ok_status();
    }
    Status tail(const std::vector<std::uint8_t>& v, std::string_view) {
        for (const std::uint8_t b : v) put(b);
        return ok_status();
    }
    Status tail(const std::string& v, std::string_view) {
        for (const char c : v) put(static_cast<std::uint8_t>(c));
        return ok_status();
    }
    Status str(const std::string& s, const std::string& what) {
        JANUS_CHECK(require(s.size() <= format::max_name, at_, "name-length", [&] {
            return what + " is " + dec(s.size()) + " bytes long; names have at most " + dec(format::max_name);
        }));
        JANUS_CHECK(num<std::uint32_t>(s.size(), what));
        for (const char c : s) put(static_cast<std::uint8_t>(c));
        return ok_status();
    }
    /// Writes v.size() as a u32 count.
    template <class V>
    Result<std::size_t> count(const V& v, std::size_t, const std::string& what) {
        if (v.size() > std::numeric_limits<std::uint32_t>::max())
            return fail(at_, "count-bounds", what + " count " + dec(v.size()) + " does not fit 32 bits");
        JANUS_CHECK(num<std::uint32_t>(v.size(), what));
        return v.size();
    }

private:
    void put(std::uint8_t b) {
        if (at_ < out_.size())
            out_[at_] = b;
        else
            out_.push_back(b);
        ++at_;
    }
    std::vector<std::uint8_t>& out_;
    std::size_t at_;
};

/// Reads fields from bytes [begin, end) of `file`; positions are file offsets.
class Source : public Archive {
public:
    static constexpr bool reading = true;
    Source(std::span<const std::uint8_t> file, std::size_t begin, std::size_t end, std::string input, std::string where,
           std::string truncated_rule, std::string end_name)
        : Archive(std::move(input), std::move(where), true),
          file_(file),
          at_(begin),
          end_(end),
          truncated_rule_(std::move(truncated_rule)),
          end_name_(std::move(end_name)) {}
    std::size_t pos() const { return at_; }
    std::size_t remaining() const { return end_ - at_; }

    template <class Wire, class T>
    Status num(T& v, std::string_view what) {
        JANUS_CHECK(need(sizeof(Wire), what));
        std::uint64_t u = 0;
        for (std::size_t i = 0; i < sizeof(Wire); ++i) u |= std::uint64_t{file_[at_ + i]} << (8 * i);
        at_ += sizeof(Wire);
        v = static_cast<T>(static_cast<Wire>(static_cast<std::make_unsigned_t<Wire>>(u)));
        return ok_status();
    }
    Status f32(float& v, std::string_view what) {
        std::uint32_t bits = 0;
        JANUS_CHECK(num<std::uint32_t>(bits, what));
        v = std::bit_cast<float>(bits);
        return ok_status();
    }
    template <std::size_t N>
    Status fixed(std::array<std::uint8_t, N>& a, std::string_view what) {
        JANUS_CHECK(need(N, what));
        std::copy_n(file_.begin() + static_cast<std::ptrdiff_t>(at_), N, a.begin());
        at_ += N;
        return ok_status();
    }
    Status tail(std::vector<std::uint8_t>& v, std::string_view) {
        v.assign(file_.begin() + static_cast<std::ptrdiff_t>(at_), file_.begin() + static_cast<std::ptrdiff_t>(end_));
        at_ = end_;
        return ok_status();
    }
    Status tail(std::string& v, std::string_view) {
        v.assign(reinterpret_cast<const char*>(file_.data()) + at_, end_ - at_);
        at_ = end_;
        return ok_status();
    }
    Status str(std::string& s, const std::string& what) {
        const std::size_t at = at_;
        std::uint32_t n = 0;
        JANUS_CHECK(num<std::uint32_t>(n, what + " length"));
        JANUS_CHECK(require(n <= format::max_name, at, "name-length", [&] {
            return what + " is " + dec(n) + " bytes long; names have at most " + dec(format::max_name);
        }));
        if (n > remaining())
            return fail(
                at, "count-bounds",
                what + " is " + dec(n) + " bytes long, but only " + dec(remaining()) + " bytes remain in the section");
        s.assign(reinterpret_cast<const char*>(file_.data()) + at_, n);
        at_ += n;
        return ok_status();
    }
    /// Reads a u32 count of items of at least `min_item` bytes each and sizes `v` after checking that they fit.
    template <class V>
    Result<std::size_t> count(V& v, std::size_t min_item, const std::string& what) {
        const std::size_t at = at_;
        std::uint32_t n = 0;
        JANUS_CHECK(num<std::uint32_t>(n, what + " count"));
        if (n > remaining() / min_item)
            return fail(at, "count-bounds",
                        what + " count " + dec(n) + " needs at least " + dec(sat_mul(n, min_item)) +
                            " bytes, but only " + dec(remaining()) + " remain in the section");
        v.resize(n);
        return std::size_t{n};
    }

private:
    Status need(std::size_t n, std::string_view what) const {
        if (remaining() >= n) return ok_status();
        return fail(at_, truncated_rule_,
                    std::string(what) + " needs " + dec(n) + " bytes at byte " + dec(at_) + ", but " + end_name_ +
                        " ends at byte " + dec(end_));
    }
    std::span<const std::uint8_t> file_;
    std::size_t at_, end_;
    std::string truncated_rule_, end_name_;
};

/// Records the offset of every field a fixed-layout transfer visits (the header, a table entry).
class Locate {
public:
    static constexpr bool reading = false;
    template <class Wire, class T>
    Status num(const T&, std::string_view what) {
        return mark(what, sizeof(Wire));
    }
    template <std::size_t N>
    Status fixed(const std::array<std::uint8_t, N>&, std::string_view what) {
        return mark(what, N);
    }
    std::size_t at(std::string_view what) const {
        for (const auto& [name, at] : marks_)
            if (name == what) return at;
        JANUS_ASSERT(false && "Locate::at: no such field");
        return 0;
    }
    std::size_t size() const { return pos_; }

private:
    Status mark(std::string_view what, std::size_t n) {
        marks_.emplace_back(what, pos_);
        pos_ += n;
        return ok_status();
    }
    std::vector<std::pair<std::string_view, std::size_t>> marks_;
    std::size_t pos_ = 0;
};

inline const Locate& header_layout() {
    static const Locate l = [] {
        Locate x;
        const format::Header h{};
        (void)format::transfer_header(x, h);
        return x;
    }();
    return l;
}
inline const Locate& entry_layout() {
    static const Locate l = [] {
        Locate x;
        const format::Entry e{};
        (void)format::transfer_entry(x, e);
        return x;
    }();
    return l;
}

}  // namespace detail

namespace format {
/// Offset of a header field (by its transfer name: "file size", "isa hash", ...) and of an entry field.
inline std::size_t header_field(std::string_view name) { return detail::header_layout().at(name); }
inline std::size_t entry_field(std::string_view name) { return detail::entry_layout().at(name); }
}  // namespace format

// ============================================================================================ section contents

namespace detail {

/// A name: u32 length + bytes; no control characters; non-empty unless allowed.
template <class Ar, class S>
Status transfer_name(Ar& ar, S& s, const std::string& what, bool allow_empty) {
    const std::size_t at = ar.pos();
    JANUS_CHECK(ar.str(s, what));
    JANUS_CHECK(ar.require(allow_empty || !s.empty(), at, "name-empty", [&] { return what + " is empty"; }));
    const std::size_t i = control_char_at(s);
    return ar.require(i == std::string_view::npos, at + 4 + (i == std::string_view::npos ? 0 : i), "name-chars", [&] {
        return what + " '" + printable(s) + "' has the control character " + hex(static_cast<std::uint8_t>(s[i]), 2) +
               " at index " + dec(i) + "; names are text without control characters";
    });
}

/// A dtype: one byte, an ONNX TensorProto.DataType code.
template <class Ar, class D>
Status transfer_dtype(Ar& ar, D& d, const std::string& what) {
    const std::size_t at = ar.pos();
    std::uint8_t code = 0;
    if constexpr (!Ar::reading) code = static_cast<std::uint8_t>(dtype_onnx_code(d));
    JANUS_CHECK(ar.template num<std::uint8_t>(code, what));
    const auto dt = dtype_from_onnx_code(code);
    JANUS_CHECK(ar.require(dt.has_value(), at, "io-dtype", [&] {
        return what + " code " + dec(code) +
               " is not a package dtype (" + format::dtype_codes_text() + ")";
    }));
    if constexpr (Ar::reading) d = *dt;
    return ok_status();
}

struct Named {
    std::string_view name;
    std::size_t at;
};
/// The first repeated name in file order: (earlier, later), or nothing.
inline std::optional<std::pair<Named, Named>> find_duplicate(std::vector<Named> v) {
    std::sort(v.begin(), v.end(),
              [](const Named& a, const Named& b) { return a.name != b.name ? a.name < b.name : a.at < b.at; });
    std::optional<std::pair<Named, Named>> best;
    for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i].name == v[i - 1].name && (!best || v[i].at < best->second.at)) best = std::pair{v[i - 1], v[i]};
    return best;
}

struct Placed {
    int region;
    std::uint64_t offset, end;
    bool exclusive;    ///< may share no byte with anything
    std::string what;  ///< for messages
    std::size_t at;    ///< file offset of its offset field
};
/// A pair of placements sharing bytes where one of them is exclusive, or nothing. Sweeps each region by offset,
/// keeping the placement that reaches furthest: every violating pair makes some reported pair exist.
inline std::optional<std::pair<Placed, Placed>> find_overlap(std::vector<Placed> v) {
    std::erase_if(v, [](const Placed& p) { return p.end <= p.offset; });
    std::stable_sort(v.begin(), v.end(), [](const Placed& a, const Placed& b) {
        return a.region != b.region ? a.region < b.region : a.offset != b.offset ? a.offset < b.offset : a.end < b.end;
    });
    for (std::size_t i = 1, far = 0; i < v.size(); ++i) {
        if (v[i].region != v[far].region) {
            far = i;
            continue;
        }
        if (v[i].offset < v[far].end && (v[i].exclusive || v[far].exclusive)) return std::pair{v[far], v[i]};
        if (v[i].end > v[far].end) far = i;
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------- code
template <class Ar, class P>
Status transfer_code(Ar& ar, P& p) {
    if constexpr (Ar::reading) {
        if (ar.remaining() % 8 != 0)
            return ar.fail(ar.pos(), "code-length",
                           dec(ar.remaining()) + " bytes is not a whole number of 8-byte instruction words");
        p.code.resize(ar.remaining() / 8);
    }
    JANUS_CHECK(ar.require(!p.code.empty(), ar.pos(), "code-empty",
                           [] { return std::string("the program has no instruction; it must end with halt"); }));
    for (std::size_t i = 0; i < p.code.size(); ++i) {
        const std::size_t at = ar.pos();
        JANUS_CHECK(ar.template num<std::uint64_t>(p.code[i], "instruction word"));
        const auto in = vnpu::decode(p.code[i]);
        JANUS_CHECK(ar.require(in.ok(), at, in.ok() ? "" : in.error().rule,
                               [&] { return "word " + dec(i) + ": " + in.error().detail; }));
        if (i + 1 == p.code.size())
            JANUS_CHECK(ar.require(!in.ok() || in->info->sem == vnpu::Sem::halt, at, "code-halt", [&] {
                return "the last word (" + dec(i) + ") is '" + vnpu::print(*in) + "'; a program ends with halt";
            }));
    }
    return ok_status();
}

// ---------------------------------------------------------------------------------------------- weights
template <class Ar, class P>
Status transfer_weights(Ar& ar, P& p) {
    const std::size_t at = ar.pos();
    JANUS_CHECK(ar.tail(p.weights, "weights"));
    JANUS_CHECK(ar.require(p.weights.size() % 16 == 0, at, "weights-length", [&] {
        return "the weights image is " + dec(p.weights.size()) + " bytes; it is a multiple of 16";
    }));
    return ar.require(p.weights.size() <= format::max_region, at, "region-size", [&] {
        return "the weights image is " + dec(p.weights.size()) + " bytes; a region holds at most 2^32";
    });
}

// ---------------------------------------------------------------------------------------------- memory
inline std::string buffer_size_rule(BufferKind k) {
    switch (k) {
        case BufferKind::bias:
            return "a positive multiple of 4 (int32 values)";
        case BufferKind::lut:
            return "a positive multiple of 256 (256-byte tables)";
        case BufferKind::rq_table:
            return std::to_string(vnpu::rq_header_layout.size) + " + " + std::to_string(vnpu::rq_channel_layout.size) +
                   " x channels, channels >= 1";
        case BufferKind::ew_table:
            return std::to_string(vnpu::ew_layout.size) + " (one vec.ew parameter block)";
        default:
            return "positive";
    }
}
constexpr bool buffer_size_ok(BufferKind k, std::uint64_t n) {
    switch (k) {
        case BufferKind::bias:
            return n > 0 && n % 4 == 0;
        case BufferKind::lut:
            return n > 0 && n % 256 == 0;
        case BufferKind::rq_table:  // vnpu/params.hpp
            return n >= static_cast<std::uint64_t>(vnpu::rq_table_bytes(1)) &&
                   (n - vnpu::rq_header_layout.size) % vnpu::rq_channel_layout.size == 0;
        case BufferKind::ew_table:
            return n == vnpu::ew_layout.size;
        default:
            return n > 0;
    }
}

template <class Ar, class B>
Status transfer_buffer(Ar& ar, B& b, std::size_t i, const Package& sizes, std::vector<Named>& names,
                       std::vector<Placed>& placed) {
    const std::size_t name_at = ar.pos();
    JANUS_CHECK(transfer_name(ar, b.name, "buffer " + dec(i) + " name", false));
    const std::string who = "buffer " + dec(i) + " '" + printable(b.name) + "'";
    const std::size_t kind_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint8_t>(b.kind, "buffer kind"));
    const auto code = static_cast<std::uint8_t>(b.kind);
    JANUS_CHECK(ar.require(buffer_kind_valid(code), kind_at, "buffer-kind",
                           [&] { return who + ": kind " + dec(code) + " is not a buffer kind (1..8)"; }));
    const std::size_t offset_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint64_t>(b.offset, "buffer offset"));
    const std::size_t size_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint64_t>(b.size, "buffer size"));
    const int region = buffer_region(b.kind);
    const std::string rname(vnpu::region_names[static_cast<std::size_t>(region)]);
    JANUS_CHECK(ar.require(b.offset % 16 == 0, offset_at, "buffer-alignment",
                           [&] { return who + ": offset " + dec(b.offset) + " is not a multiple of 16"; }));
    JANUS_CHECK(ar.require(buffer_size_ok(b.kind, b.size), size_at, "buffer-size", [&] {
        return who + ": a " + std::string(buffer_kind_name(b.kind)) + " buffer of " + dec(b.size) +
               " bytes; its size is " + buffer_size_rule(b.kind);
    }));
    const std::uint64_t limit = region_size(sizes, region), end = sat_add(b.offset, b.size);
    JANUS_CHECK(ar.require(end <= limit, b.offset > limit ? offset_at : size_at, "buffer-bounds", [&] {
        return who + ": bytes " + dec(b.offset) + " + " + dec(b.size) + " leave the " + rname + " region (" +
               dec(limit) + " bytes)";
    }));
    names.push_back({b.name, name_at});
    placed.push_back({region, b.offset, end, b.kind == BufferKind::state,
                      std::string(buffer_kind_name(b.kind)) + " buffer '" + printable(b.name) + "'", offset_at});
    return ok_status();
}

template <class Ar, class P>
Status transfer_memory(Ar& ar, P& p) {
    const std::array<std::pair<int, decltype(&p.scratch_bytes)>, 3> regions = {
        std::pair{region_scratch, &p.scratch_bytes}, std::pair{region_input, &p.input_bytes},
        std::pair{region_output, &p.output_bytes}};
    for (const auto& [r, field] : regions) {
        const std::size_t at = ar.pos();
        const std::string rname(vnpu::region_names[static_cast<std::size_t>(r)]);
        JANUS_CHECK(ar.template num<std::uint64_t>(*field, rname + " region size"));
        const std::uint64_t v = *field;
        JANUS_CHECK(ar.require(v % 16 == 0 && v <= format::max_region, at, "region-size", [&] {
            return "the " + rname + " region is " + dec(v) + " bytes; a region size is a multiple of 16, at most 2^32";
        }));
    }
    static const std::size_t min_buffer = [] {
        std::vector<std::uint8_t> out;
        Sink s(out, 0, "", "", false);
        std::vector<Named> n;
        std::vector<Placed> pl;
        const Buffer b{};
        (void)transfer_buffer(s, b, 0, Package{}, n, pl);
        return out.size();
    }();
    JANUS_TRY(const std::size_t n, ar.count(p.buffers, min_buffer, "buffer"));
    std::vector<Named> names;
    std::vector<Placed> placed;
    for (std::size_t i = 0; i < n; ++i) JANUS_CHECK(transfer_buffer(ar, p.buffers[i], i, p, names, placed));
    if (const auto d = find_duplicate(names))
        JANUS_CHECK(ar.require(false, d->second.at, "buffer-name-unique", [&] {
            return "buffer name '" + printable(d->second.name) + "' is also the name of the buffer at byte " +
                   dec(d->first.at);
        }));
    if (const auto o = find_overlap(std::move(placed)))
        JANUS_CHECK(ar.require(false, o->second.at, "buffer-overlap", [&] {
            const auto& [a, b] = *o;
            return b.what + " (bytes " + dec(b.offset) + ".." + dec(b.end - 1) + " of the " +
                   std::string(vnpu::region_names[static_cast<std::size_t>(b.region)]) + " region) overlaps " + a.what +
                   " (bytes " + dec(a.offset) + ".." + dec(a.end - 1) +
                   "); persistent state shares no byte with another buffer";
        }));
    return ok_status();
}

// ---------------------------------------------------------------------------------------------- io
/// The I/O boundary conversions a host performs: none; quantize / dequantize float32 over int8, uint8 or int32
/// storage; widen / narrow int64 over int32 storage.
constexpr bool conversion_ok(DType boundary, DType storage, bool quantized) {
    if (boundary == storage) return true;
    if (boundary == DType::f32)
        return quantized && (storage == DType::i8 || storage == DType::u8 || storage == DType::i32);
    if ((boundary == DType::u8 && storage == DType::i8) || (boundary == DType::i8 && storage == DType::u8))
        return quantized;  // the same real values: codes and zero point shifted by 128
    return boundary == DType::i64 && storage == DType::i32 && !quantized;
}

template <class Ar, class D>
Status transfer_io(Ar& ar, D& d, const std::string& what, std::uint64_t region_bytes, int region,
                   std::vector<Named>& names, std::vector<Placed>& placed) {
    const std::size_t name_at = ar.pos();
    JANUS_CHECK(transfer_name(ar, d.name, what + " name", false));
    const std::string who = what + " '" + printable(d.name) + "'";
    const std::size_t dtype_at = ar.pos();
    JANUS_CHECK(transfer_dtype(ar, d.dtype, who + " dtype"));
    JANUS_CHECK(transfer_dtype(ar, d.storage, who + " storage dtype"));
    // rank: shape and strides have as many entries (a structural fact, enforced even when not validating)
    const std::size_t rank_at = ar.pos();
    if constexpr (!Ar::reading)
        if (d.strides.size() != d.shape.size())
            return ar.fail(rank_at, "io-strides",
                           who + ": " + dec(d.strides.size()) + " strides for " + dec(d.shape.size()) + " dims");
    std::uint8_t rank = 0;
    if constexpr (!Ar::reading) {
        if (d.shape.size() > format::max_rank)
            return ar.fail(rank_at, "io-rank",
                           who + ": rank " + dec(d.shape.size()) + "; the rank is at most " + dec(format::max_rank));
        rank = static_cast<std::uint8_t>(d.shape.size());
    }
    JANUS_CHECK(ar.template num<std::uint8_t>(rank, "rank"));
    if constexpr (Ar::reading) {
        if (rank > format::max_rank)
            return ar.fail(rank_at, "io-rank",
                           who + ": rank " + dec(rank) + "; the rank is at most " + dec(format::max_rank));
        d.shape.resize(rank);
        d.strides.resize(rank);
    }
    const std::size_t offset_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint64_t>(d.offset, "offset"));
    const std::size_t size_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint64_t>(d.size, "size"));
    std::array<std::size_t, format::max_rank> stride_at{};
    for (std::size_t k = 0; k < rank; ++k) {
        const std::size_t at = ar.pos();
        JANUS_CHECK(ar.template num<std::int64_t>(d.shape[k], "dim"));
        JANUS_CHECK(ar.require(d.shape[k] >= 0 && d.shape[k] <= format::max_extent, at, "io-dim", [&] {
            return who + ": dim " + dec(k) + " is " + std::to_string(d.shape[k]) + "; a dim is in [0, 2^32]";
        }));
    }
    {  // the size policy (core/size.hpp) over the dims, with the format's rank bound: zero dims do not exempt others
        const std::span<const std::int64_t> dims(d.shape.data(), rank);
        const auto scan = janus::size_detail::scan_size(dims, 1, format::max_rank, max_elements);
        JANUS_CHECK(ar.require(scan.fault == janus::size_detail::SizeFault::none, dtype_at, "io-dim", [&] {
            return who + ": its dims multiply to more than 2^40 elements (a zero dim does not exempt the others)";
        }));
    }
    for (std::size_t k = 0; k < rank; ++k) {
        stride_at[k] = ar.pos();
        JANUS_CHECK(ar.template num<std::int64_t>(d.strides[k], "stride"));
        JANUS_CHECK(ar.require(d.strides[k] >= 0 && d.strides[k] <= format::max_extent, stride_at[k], "io-stride", [&] {
            return who + ": stride " + dec(k) + " is " + std::to_string(d.strides[k]) +
                   "; a stride is in [0, 2^32] bytes";
        }));
    }
    // quantization: one count for scales and zero points
    auto& q = d.quant;
    const std::size_t quant_at = ar.pos();
    if constexpr (!Ar::reading)
        if (q.zero_points.size() != q.scales.size())
            return ar.fail(
                quant_at, "io-quant-count",
                who + ": " + dec(q.scales.size()) + " scales but " + dec(q.zero_points.size()) + " zero points");
    JANUS_TRY(const std::size_t nq, ar.count(q.scales, 8, "quantization entry"));
    if constexpr (Ar::reading) q.zero_points.resize(nq);
    const bool quantizable = d.storage == DType::i8 || d.storage == DType::u8 || d.storage == DType::i32;
    JANUS_CHECK(ar.require(nq == 0 || quantizable, quant_at, "io-quantization", [&] {
        return who + ": quantization over " + std::string(dtype_name(d.storage)) +
               " storage; only int8, uint8 and int32 storage is quantized";
    }));
    const std::size_t axis_at = ar.pos();
    JANUS_CHECK(ar.template num<std::int32_t>(q.axis, "quantization axis"));
    for (std::size_t j = 0; j < nq; ++j) {
        const std::size_t at = ar.pos();
        JANUS_CHECK(ar.f32(q.scales[j], "scale"));
        const float s = q.scales[j];
        JANUS_CHECK(ar.require(std::isfinite(s) && s > 0.0f, at, "io-scale", [&] {
            return who + ": scale " + dec(j) + " is " + shortest(s) + "; a scale is finite and positive";
        }));
    }
    const bool narrow = d.storage == DType::i8 || d.storage == DType::u8;
    for (std::size_t j = 0; j < nq; ++j) {
        const std::size_t at = ar.pos();
        JANUS_CHECK(ar.template num<std::int32_t>(q.zero_points[j], "zero point"));
        const std::int32_t z = q.zero_points[j];
        JANUS_CHECK(
            ar.require(narrow ? z >= qmin(d.storage) && z <= qmax(d.storage) : z == 0, at, "io-zero-point", [&] {
                return who + ": zero point " + dec(j) + " is " + std::to_string(z) + "; over " +
                       std::string(dtype_name(d.storage)) + " storage it is " +
                       (narrow ? "in [" + std::to_string(qmin(d.storage)) + ", " + std::to_string(qmax(d.storage)) + "]"
                               : std::string("0"));
            }));
    }
    const bool axis_ok = nq <= 1 ? q.axis == 0
                                 : q.axis >= 0 && static_cast<std::size_t>(q.axis) < rank &&
                                       static_cast<std::uint64_t>(d.shape[static_cast<std::size_t>(q.axis)]) == nq;
    JANUS_CHECK(ar.require(axis_ok, axis_at, "io-quant-axis", [&] {
        if (nq <= 1)
            return who + ": axis " + std::to_string(q.axis) + " with " + dec(nq) +
                   " quantization entries; per-tensor (or no) quantization has axis 0";
        return who + ": " + dec(nq) + " per-axis entries along axis " + std::to_string(q.axis) +
               "; the axis must exist and have that many elements";
    }));
    JANUS_CHECK(ar.require(conversion_ok(d.dtype, d.storage, nq > 0), dtype_at, "io-dtype-conversion", [&] {
        return who + ": a " + std::string(dtype_name(d.dtype)) + " tensor stored as " +
               std::string(dtype_name(d.storage)) + (nq > 0 ? "" : " without quantization") +
               "; the boundary converts float32 <-> quantized int8/uint8/int32, uint8 <-> quantized int8 and "
               "int64 <-> int32 only";
    }));
    // layout: the axes sorted by stride must nest (no two elements share a byte) inside `size` bytes
    const bool empty = std::any_of(d.shape.begin(), d.shape.begin() + rank, [](std::int64_t x) { return x == 0; });
    if (!empty) {
        std::array<std::size_t, format::max_rank> order{};
        std::size_t m = 0;
        for (std::size_t k = 0; k < rank; ++k)
            if (d.shape[k] > 1) order[m++] = k;
        std::stable_sort(order.begin(), order.begin() + m,
                         [&](std::size_t a, std::size_t b) { return d.strides[a] < d.strides[b]; });
        std::uint64_t span = dtype_size(d.storage);
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t k = order[j];
            const auto stride = static_cast<std::uint64_t>(d.strides[k]);
            JANUS_CHECK(ar.require(stride >= span, stride_at[k], "io-layout", [&] {
                return who + ": axis " + dec(k) + " (" + std::to_string(d.shape[k]) + " elements) steps " +
                       dec(stride) + " bytes, but the axes of smaller stride already span " + dec(span) +
                       " bytes: two elements would share bytes";
            }));
            span = sat_add(span, sat_mul(static_cast<std::uint64_t>(d.shape[k]) - 1, stride));
        }
        JANUS_CHECK(ar.require(span <= d.size, size_at, "io-layout", [&] {
            return who + ": its elements span " + dec(span) + " bytes, more than its size of " + dec(d.size);
        }));
    }
    const std::string rname(vnpu::region_names[static_cast<std::size_t>(region)]);
    JANUS_CHECK(ar.require(d.offset % 16 == 0, offset_at, "io-alignment",
                           [&] { return who + ": offset " + dec(d.offset) + " is not a multiple of 16"; }));
    const std::uint64_t end = sat_add(d.offset, d.size);
    JANUS_CHECK(ar.require(end <= region_bytes, d.offset > region_bytes ? offset_at : size_at, "io-bounds", [&] {
        return who + ": bytes " + dec(d.offset) + " + " + dec(d.size) + " leave the " + rname + " region (" +
               dec(region_bytes) + " bytes)";
    }));
    names.push_back({d.name, name_at});
    placed.push_back({region, d.offset, end, true, what + " '" + printable(d.name) + "'", offset_at});
    return ok_status();
}

inline std::size_t io_min_bytes();

template <class Ar, class P>
Status transfer_io_section(Ar& ar, P& p) {
    std::vector<Named> names;
    for (const bool in : {true, false}) {
        auto& list = in ? p.inputs : p.outputs;
        const std::string what = in ? "input" : "output";
        const int region = in ? region_input : region_output;
        JANUS_TRY(const std::size_t n, ar.count(list, io_min_bytes(), what));
        std::vector<Placed> placed;
        for (std::size_t i = 0; i < n; ++i)
            JANUS_CHECK(transfer_io(ar, list[i], what + " " + dec(i), in ? p.input_bytes : p.output_bytes, region,
                                    names, placed));
        if (const auto o = find_overlap(std::move(placed)))
            JANUS_CHECK(ar.require(false, o->second.at, "io-overlap", [&] {
                const auto& [a, b] = *o;
                return b.what + " (bytes " + dec(b.offset) + ".." + dec(b.end - 1) + ") overlaps " + a.what +
                       " (bytes " + dec(a.offset) + ".." + dec(a.end - 1) + ")";
            }));
    }
    if (const auto d = find_duplicate(names))
        JANUS_CHECK(ar.require(false, d->second.at, "io-name-unique", [&] {
            return "the name '" + printable(d->second.name) + "' is also the name of the input or output at byte " +
                   dec(d->first.at);
        }));
    return ok_status();
}

inline std::size_t io_min_bytes() {
    static const std::size_t n = [] {
        std::vector<std::uint8_t> out;
        Sink s(out, 0, "", "", false);
        std::vector<Named> names;
        std::vector<Placed> placed;
        const IoDesc d{};
        (void)transfer_io(s, d, "", 0, 0, names, placed);
        return out.size();
    }();
    return n;
}

// ---------------------------------------------------------------------------------------------- debug
template <class Ar, class E>
Status transfer_debug_entry(Ar& ar, E& e, std::size_t i, std::uint64_t words, std::uint32_t& prev_last) {
    const std::string who = "entry " + dec(i);
    const std::size_t first_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint32_t>(e.first, "first instruction"));
    const std::size_t last_at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint32_t>(e.last, "last instruction"));
    JANUS_CHECK(
        ar.require(e.first < e.last && e.last <= words, e.first < e.last ? last_at : first_at, "debug-range", [&] {
            return who + ": instructions [" + dec(e.first) + ", " + dec(e.last) +
                   ") is not a non-empty range inside the program (" + dec(words) + " words)";
        }));
    JANUS_CHECK(ar.require(e.first >= prev_last, first_at, "debug-order", [&] {
        return who + ": instructions [" + dec(e.first) + ", " + dec(e.last) +
               ") start before the previous entry ends (" + dec(prev_last) + "); entries are sorted and do not overlap";
    }));
    prev_last = e.last;
    JANUS_CHECK(transfer_name(ar, e.node, who + " node name", true));
    return transfer_name(ar, e.op_type, who + " op type", false);
}

template <class Ar, class P>
Status transfer_debug(Ar& ar, P& p) {
    static const std::size_t min_entry = [] {
        std::vector<std::uint8_t> out;
        Sink s(out, 0, "", "", false);
        std::uint32_t prev = 0;
        const DebugEntry e{};
        (void)transfer_debug_entry(s, e, 0, 0, prev);
        return out.size();
    }();
    JANUS_TRY(const std::size_t n, ar.count(p.debug, min_entry, "debug entry"));
    std::uint32_t prev_last = 0;
    for (std::size_t i = 0; i < n; ++i) JANUS_CHECK(transfer_debug_entry(ar, p.debug[i], i, p.code.size(), prev_last));
    return ok_status();
}

// ---------------------------------------------------------------------------------------------- host
template <class Ar, class P>
Status transfer_host(Ar& ar, P& p) {
    if constexpr (Ar::reading) p.host.emplace();
    auto& h = *p.host;
    JANUS_CHECK(ar.template num<std::uint32_t>(h.prologue, "prologue node count"));
    const std::size_t at = ar.pos();
    JANUS_CHECK(ar.tail(h.graph, "graph text"));
    JANUS_CHECK(ar.require(!h.graph.empty(), at, "host-empty",
                           [] { return std::string("the host section has no graph text"); }));
    const auto bad = std::find_if(h.graph.begin(), h.graph.end(), [](char c) {
        const auto b = static_cast<std::uint8_t>(c);
        return (b < 0x20 && b != '\n') || b == 0x7F;
    });
    const auto i = static_cast<std::size_t>(bad - h.graph.begin());
    return ar.require(bad == h.graph.end(), at + i, "host-text-chars", [&] {
        return "graph text byte " + dec(i) + " is the control character " + hex(static_cast<std::uint8_t>(*bad), 2) +
               "; the text holds printable characters and line feeds only";
    });
}

// ---------------------------------------------------------------------------------------------- segments
template <class Ar, class P>
Status transfer_segments(Ar& ar, P& p) {
    const std::size_t start = ar.pos();
    JANUS_CHECK(ar.require(p.host.has_value(), start, "segments-host", [] {
        return std::string("a segments section without a host section: only host nodes run between segments");
    }));
    JANUS_TRY(const std::size_t n, ar.count(p.segments, 16, "segment"));
    JANUS_CHECK(ar.require(n > 0, start, "segments-empty", [] {
        return std::string("the segments section lists no segment (a one-segment program has no such section)");
    }));
    SegmentStart prev{0, p.host->prologue, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
        auto& g = p.segments[i];
        const std::string who = "segment " + dec(i + 1);
        const std::size_t entry_at = ar.pos();
        JANUS_CHECK(ar.template num<std::uint32_t>(g.entry, "entry pc"));
        JANUS_CHECK(ar.require(g.entry > prev.entry && g.entry < p.code.size(), entry_at, "segments-entry", [&] {
            return who + ": entry pc " + dec(g.entry) + " is not after the previous segment's (" + dec(prev.entry) +
                   ") and inside the program (" + dec(p.code.size()) + " words)";
        }));
        const std::size_t nodes_at = ar.pos();
        JANUS_CHECK(ar.template num<std::uint32_t>(g.nodes_before, "host nodes before"));
        JANUS_CHECK(ar.require(g.nodes_before >= prev.nodes_before, nodes_at, "segments-order", [&] {
            return who + ": " + dec(g.nodes_before) + " host nodes run before it, fewer than before the previous " +
                   "one (" + dec(prev.nodes_before) + ")";
        }));
        // the segment's first program input or output: not before the previous segment's, within the io counts
        const auto io_index = [&](auto& field, std::uint32_t previous, std::size_t count,
                                  const char* kind) -> Status {
            const std::size_t at = ar.pos();
            JANUS_CHECK(ar.template num<std::uint32_t>(field, std::string("first ") + kind));
            return ar.require(field >= previous && field <= count, at, "segments-io", [&] {
                return who + ": first " + kind + " " + dec(field) + " is before the previous segment's (" +
                       dec(previous) + ") or past the " + dec(count) + " program " + kind + "s";
            });
        };
        JANUS_CHECK(io_index(g.first_input, prev.first_input, p.inputs.size(), "input"));
        JANUS_CHECK(io_index(g.first_output, prev.first_output, p.outputs.size(), "output"));
        prev = g;
    }
    return ok_status();
}

// ---------------------------------------------------------------------------------------------- placement
template <class Ar, class H>
Status transfer_host_node(Ar& ar, H& h, std::size_t i, std::uint32_t nodes, std::int64_t& prev) {
    const std::string who = "host node " + dec(i);
    const std::size_t at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint32_t>(h.index, who + " index"));
    JANUS_CHECK(ar.require(h.index < nodes && static_cast<std::int64_t>(h.index) > prev, at, "placement-index", [&] {
        return who + ": node " + dec(h.index) + " is not after the previous host node's (" +
               (prev < 0 ? std::string("none") : dec(static_cast<std::uint64_t>(prev))) + ") and below the " +
               dec(nodes) + " nodes of the graph";
    }));
    prev = h.index;
    const std::size_t q_at = ar.pos();
    std::uint8_t q = h.quantized ? 1 : 0;
    JANUS_CHECK(ar.template num<std::uint8_t>(q, who + " quantized flag"));
    JANUS_CHECK(ar.require(q <= 1, q_at, "placement-flag",
                           [&] { return who + ": the quantized flag is " + dec(q) + ", not 0 or 1"; }));
    if constexpr (Ar::reading) h.quantized = q == 1;
    JANUS_CHECK(transfer_name(ar, h.node, who + " node name", true));
    JANUS_CHECK(transfer_name(ar, h.op_type, who + " op type", false));
    JANUS_CHECK(transfer_name(ar, h.rule, who + " rule", false));
    return transfer_name(ar, h.why, who + " reason", false);
}

template <class Ar, class P>
Status transfer_placement(Ar& ar, P& p) {
    static const std::size_t min_entry = [] {
        std::vector<std::uint8_t> out;
        Sink s(out, 0, "", "", false);
        std::int64_t prev = -1;
        const HostNode h{};
        (void)transfer_host_node(s, h, 0, 1, prev);
        return out.size();
    }();
    if constexpr (Ar::reading) p.placement.emplace();
    auto& r = *p.placement;
    JANUS_CHECK(ar.template num<std::uint32_t>(r.nodes, "node count"));
    const std::size_t at = ar.pos();
    JANUS_TRY(const std::size_t n, ar.count(r.host, min_entry, "host node"));
    JANUS_CHECK(ar.require(n <= r.nodes, at, "placement-count", [&] {
        return dec(n) + " host nodes listed; the graph has " + dec(r.nodes) + " nodes";
    }));
    std::int64_t prev = -1;
    for (std::size_t i = 0; i < n; ++i) JANUS_CHECK(transfer_host_node(ar, r.host[i], i, r.nodes, prev));
    return ok_status();
}

// ---------------------------------------------------------------------------------------------- numerics
/// Section 9: the rounding code (numeric::Rounding: 0 double, 1 single, 2 half-even) as a u32.
template <class Ar, class P>
Status transfer_numerics(Ar& ar, P& p) {
    if constexpr (Ar::reading) p.rounding.emplace();
    std::uint32_t code = static_cast<std::uint32_t>(*p.rounding);
    const std::size_t at = ar.pos();
    JANUS_CHECK(ar.template num<std::uint32_t>(code, "rounding"));
    JANUS_CHECK(ar.require(code < numeric::rounding_names.size(), at, "numerics-rounding", [&] {
        return "rounding code " + dec(code) + "; the codes are 0 double, 1 single, 2 half-even";
    }));
    if constexpr (Ar::reading) p.rounding = static_cast<numeric::Rounding>(code);
    return ok_status();
}

/// The content of a known section (kinds 1..9).
template <class Ar, class P>
Status transfer_section(Ar& ar, P& p, format::Kind kind) {
    switch (kind) {
        case format::Kind::code:
            return transfer_code(ar, p);
        case format::Kind::weights:
            return transfer_weights(ar, p);
        case format::Kind::memory:
            return transfer_memory(ar, p);
        case format::Kind::io:
            return transfer_io_section(ar, p);
        case format::Kind::debug:
            return transfer_debug(ar, p);
        case format::Kind::host:
            return transfer_host(ar, p);
        case format::Kind::segments:
            return transfer_segments(ar, p);
        case format::Kind::placement:
            return transfer_placement(ar, p);
        case format::Kind::numerics:
            return transfer_numerics(ar, p);
    }
    return ok_status();
}

inline std::string toolchain_problem(const std::string& v) {
    if (v.empty() || v.size() > 31) return "is " + dec(v.size()) + " characters long (1..31)";
    for (const char c : v)
        if (c < 0x21 || c > 0x7E) return "'" + printable(v) + "' has a character outside printable ASCII";
    return "";
}

/// The canonical bytes of `p`. With validate = false the content rules are not applied (to craft malformed
/// packages in tests); the layout, padding and checksums are the same.
inline Result<std::vector<std::uint8_t>> serialize(const Package& p, std::string_view name, bool validate) {
    using namespace format;
    const std::string input(name);
    const auto present = [&](std::uint32_t k) {
        return k <= required_kinds || (k == static_cast<std::uint32_t>(Kind::host) && p.host) ||
               (k == static_cast<std::uint32_t>(Kind::segments) && !p.segments.empty()) ||
               (k == static_cast<std::uint32_t>(Kind::placement) && p.placement) ||
               (k == static_cast<std::uint32_t>(Kind::numerics) && p.rounding);
    };
    std::size_t fixed = 0;
    for (std::uint32_t k = 1; k <= known_kinds; ++k) fixed += present(k) ? 1 : 0;
    const std::size_t count = fixed + p.extra.size();
    const Archive top(input, "header", validate);
    JANUS_CHECK(top.require(p.format_version >= oldest_version && p.format_version <= version,
                            header_field("format version"), "package-version", [&] {
                                return "format version " + dec(p.format_version) + "; this Janus writes versions " +
                                       dec(oldest_version) + " to " + dec(version);
                            }));
    JANUS_CHECK(top.require(!p.placement || known_kinds_of(p.format_version) >= 8,
                            header_field("format version"), "section-unknown", [&] {
                                return "format version " + dec(p.format_version) +
                                       " has no placement section (it came with version 2)";
                            }));
    JANUS_CHECK(top.require(!p.rounding || known_kinds_of(p.format_version) >= 9,
                            header_field("format version"), "section-unknown", [&] {
                                return "format version " + dec(p.format_version) +
                                       " has no numerics section (it came with version 3)";
                            }));
    JANUS_CHECK(top.require(count <= max_sections, header_field("section count"), "section-count",
                            [&] { return dec(count) + " sections; a package has at most " + dec(max_sections); }));
    const std::string problem = toolchain_problem(p.toolchain.version);
    JANUS_CHECK(top.require(problem.empty(), header_field("toolchain version"), "toolchain-version",
                            [&] { return "the toolchain version " + problem; }));
    for (std::size_t i = 0, prev = known_kinds_of(p.format_version); i < p.extra.size(); prev = p.extra[i++].kind) {
        const std::size_t at = header_size + (fixed + i) * entry_size + entry_field("kind");
        JANUS_CHECK(Archive(input, "section table", validate).require(p.extra[i].kind > prev, at, "section-order", [&] {
            return "extra section " + dec(i) + " has kind " + dec(p.extra[i].kind) +
                   "; extra kinds follow the known ones (1.." + dec(known_kinds_of(p.format_version)) +
                   ") in increasing order";
        }));
    }
    std::vector<std::uint8_t> out(header_size + count * entry_size, 0);
    std::vector<Entry> entries;
    const auto place = [&](std::uint32_t kind, std::uint32_t flags, auto&& body) -> Status {
        out.resize(align_up(out.size(), alignment), 0);
        const std::size_t begin = out.size();
        Sink s(out, begin, input, section_name(kind) + " section", validate);
        JANUS_CHECK(body(s));
        entries.push_back({kind, flags, begin, out.size() - begin, alignment,
                           crc32c(std::span<const std::uint8_t>(out).subspan(begin))});
        return ok_status();
    };
    for (std::uint32_t k = 1; k <= known_kinds; ++k)
        if (present(k))
            JANUS_CHECK(place(k, 0, [&](Sink& s) { return transfer_section(s, p, static_cast<Kind>(k)); }));
    for (const ExtraSection& x : p.extra)
        JANUS_CHECK(place(x.kind, flag_optional, [&](Sink& s) { return s.tail(x.bytes, "bytes"); }));
    Sink table(out, header_size, input, "section table", validate);
    for (const Entry& e : entries) JANUS_CHECK(transfer_entry(table, e));
    Header h;
    h.magic = magic;
    h.version = p.format_version;
    h.header_size = header_size;
    h.file_size = out.size();
    h.table_offset = header_size;
    h.section_count = static_cast<std::uint32_t>(count);
    h.table_crc = crc32c(std::span<const std::uint8_t>(out).subspan(header_size, count * entry_size));
    h.isa_hash = p.toolchain.isa_hash;
    std::copy_n(p.toolchain.version.begin(), std::min<std::size_t>(p.toolchain.version.size(), h.toolchain.size() - 1),
                h.toolchain.begin());
    const std::size_t crc_at = header_field("header checksum");
    for (int pass = 0; pass < 2; ++pass) {  // the checksum covers the header bytes before it
        Sink hs(out, 0, input, "header", validate);
        JANUS_CHECK(transfer_header(hs, h));
        JANUS_ASSERT(hs.pos() == header_size && crc_at + 4 == header_size);
        h.header_crc = crc32c(std::span<const std::uint8_t>(out).first(crc_at));
    }
    return out;
}

}  // namespace detail

// ============================================================================================ writing and reading

/// The canonical bytes of `p`, or the first rule it breaks (input = `name`, position = where the field would be).
inline Result<std::vector<std::uint8_t>> write_package(const Package& p, std::string_view name = "package") {
    return detail::serialize(p, name, true);
}

struct ReadOptions {
    /// Refuse a package whose instruction-set hash is not this build's (rule package-toolchain). Off: read it anyway
    /// (to inspect it); its Toolchain is kept.
    bool check_toolchain = true;
};

/// Validate and decode a package (docs/package.md "Validation" lists every rule, in the order they are checked).
inline Result<Package> read_package(std::span<const std::uint8_t> file, std::string_view input_name,
                                    const ReadOptions& options = {}) {
    using namespace format;
    using detail::dec;
    using detail::hex;
    const std::string input(input_name);
    const auto header_at = [](std::string_view f) { return header_field(f); };
    detail::Source hs(file, 0, file.size(), input, "header", "header-truncated", "the file");

    // 1. the preamble: magic, version, header size
    const std::size_t have = std::min(file.size(), magic.size());
    if (!std::equal(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(have), magic.begin())) {
        std::string seen;
        for (std::size_t i = 0; i < have; ++i) seen += (i ? " " : "") + hex(file[i], 2).substr(2);
        return hs.fail(0, "package-magic", "not a Janus package: it starts with bytes " + seen + ", not \"JANUSPKG\"");
    }
    Header h;
    JANUS_CHECK(transfer_preamble(hs, h));
    if (h.version > format::version)
        return hs.fail(header_at("format version"), "package-version-newer",
                       "format version " + dec(h.version) + " was written by a newer Janus; this Janus (" +
                           std::string(version_string()) + ") reads format version " + dec(format::version));
    if (h.version < oldest_version)
        return hs.fail(header_at("format version"), "package-version",
                       "format version " + dec(h.version) + " does not exist (this Janus reads format versions " +
                           dec(oldest_version) + " to " + dec(format::version) + ")");
    if (h.header_size != header_size)
        return hs.fail(header_at("header size"), "header-size",
                       "the header size is " + dec(h.header_size) + " bytes; format version " + dec(h.version) +
                           " has a " + dec(header_size) + "-byte header");
    if (file.size() < header_size)
        return hs.fail(
            file.size(), "header-truncated",
            "the file ends at byte " + dec(file.size()) + ", inside the " + dec(header_size) + "-byte header");

    // 2. the rest of the header, once its checksum holds
    detail::Source full(file, 0, header_size, input, "header", "header-truncated", "the header");
    JANUS_CHECK(transfer_header(full, h));
    const std::size_t crc_at = header_at("header checksum");
    if (const std::uint32_t c = crc32c(file.first(crc_at)); c != h.header_crc)
        return hs.fail(crc_at, "header-checksum",
                       "the stored checksum is " + hex(h.header_crc, 8) + " but bytes 0.." + dec(crc_at - 1) +
                           " give " + hex(c, 8) + ": the header is corrupted");
    if (h.file_size != file.size())
        return hs.fail(header_at("file size"), "file-size",
                       "the header records a file of " + dec(h.file_size) + " bytes, but the file has " +
                           dec(file.size()) + " (truncated or extended)");
    if (h.table_offset != header_size)
        return hs.fail(header_at("section table offset"), "section-table-offset",
                       "the section table is at byte " + dec(h.table_offset) + "; it follows the header, at byte " +
                           dec(header_size));
    if (h.section_count > max_sections)
        return hs.fail(header_at("section count"), "section-count",
                       dec(h.section_count) + " sections; a package has at most " + dec(max_sections));
    const std::uint64_t table_end = header_size + std::uint64_t{h.section_count} * entry_size;
    if (table_end > file.size())
        return hs.fail(header_at("section count"), "section-table-bounds",
                       "a table of " + dec(h.section_count) + " entries ends at byte " + dec(table_end) +
                           ", past the end of the file (" + dec(file.size()) + " bytes)");
    const auto table_bytes = file.subspan(header_size, table_end - header_size);
    if (const std::uint32_t c = crc32c(table_bytes); c != h.table_crc)
        return hs.fail(header_at("section table checksum"), "section-table-checksum",
                       "the stored checksum is " + hex(h.table_crc, 8) + " but the table (bytes " + dec(header_size) +
                           ".." + dec(table_end - 1) + ") gives " + hex(c, 8) + ": the table is corrupted");
    const auto nul = std::find(h.toolchain.begin(), h.toolchain.end(), std::uint8_t{0});
    const std::string tool(h.toolchain.begin(), nul);
    if (const std::string problem = detail::toolchain_problem(tool); !problem.empty())
        return hs.fail(header_at("toolchain version"), "toolchain-version", "the toolchain version " + problem);
    if (const auto z = std::find_if(nul, h.toolchain.end(), [](std::uint8_t b) { return b != 0; });
        z != h.toolchain.end())
        return hs.fail(header_at("toolchain version") + static_cast<std::size_t>(z - h.toolchain.begin()),
                       "toolchain-version", "the toolchain version field has a non-zero byte after its end");
    if (options.check_toolchain && h.isa_hash != isa_hash())
        return hs.fail(header_at("isa hash"), "package-toolchain",
                       "the package was compiled by Janus " + tool + " for instruction set " + hex(h.isa_hash) +
                           "; this is Janus " + std::string(version_string()) + " with instruction set " +
                           hex(isa_hash()) + ": recompile the model with this toolchain");
    for (std::size_t i = 0; i < h.reserved.size(); ++i)
        if (h.reserved[i] != 0)
            return hs.fail(
                header_at("reserved") + i, "header-reserved",
                "reserved byte " + dec(header_at("reserved") + i) + " is " + hex(h.reserved[i], 2) + ", not 0");

    // 3. the section table: kinds, placement, padding, checksums
    Package p;
    p.toolchain = Toolchain{tool, h.isa_hash};
    p.format_version = h.version;
    const std::uint32_t kinds_known = known_kinds_of(h.version);
    const detail::Archive table(input, "section table", true), layout(input, "file layout", true);
    std::vector<Entry> entries(h.section_count);
    std::uint64_t prev_end = table_end;
    std::uint32_t prev_kind = 0;
    std::string prev_name = "header and section table";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::size_t base = header_size + i * entry_size;
        detail::Source ts(file, base, base + entry_size, input, "section table", "section-table-bounds", "the entry");
        Entry& e = entries[i];
        JANUS_CHECK(transfer_entry(ts, e));
        const auto at = [&](std::string_view f) { return base + entry_field(f); };
        const std::string name = section_name(e.kind);
        const std::string who = "entry " + dec(i) + " (" + name + ")";
        const bool known = e.kind >= 1 && e.kind <= kinds_known, optional = (e.flags & flag_optional) != 0;
        if ((e.flags & ~flag_optional) != 0)
            return ts.fail(at("flags"), "section-flags",
                           who + ": flags " + hex(e.flags, 8) + " set bits other than bit 0 (optional)");
        if (e.kind == 0) return ts.fail(at("kind"), "section-kind", who + ": section kind 0 is reserved");
        if (known && optional)
            return ts.fail(at("flags"), "section-flags",
                           who + ": the " + name +
                               (e.kind <= required_kinds
                                    ? " section is required; it cannot be marked optional"
                                    : " section holds part of the model; it cannot be marked optional (a reader "
                                      "that does not know it must refuse the package)"));
        if (!known && !optional)
            return ts.fail(at("kind"), "section-unknown",
                           who + ": section kind " + dec(e.kind) +
                               " is unknown to format version " + dec(h.version) +
                               " and not marked optional: the package needs a newer Janus");
        if (e.kind == prev_kind)
            return ts.fail(at("kind"), "section-duplicate", who + ": a second " + name + " section");
        if (e.kind < prev_kind)
            return ts.fail(at("kind"), "section-order",
                           who + ": kind " + dec(e.kind) + " follows kind " + dec(prev_kind) +
                               "; sections are listed in increasing kind order");
        if (e.alignment != alignment)
            return ts.fail(at("alignment"), "section-alignment",
                           who + ": alignment " + dec(e.alignment) + "; format version " + dec(h.version) +
                               " aligns every section to " +
                               dec(alignment) + " bytes");
        if (e.offset > std::numeric_limits<std::uint64_t>::max() - e.length)
            return ts.fail(at("length"), "section-overflow",
                           who + ": offset " + dec(e.offset) + " + length " + dec(e.length) + " overflows 64 bits");
        const std::uint64_t end = e.offset + e.length;
        if (end > file.size())
            return ts.fail(e.offset > file.size() ? at("offset") : at("length"), "section-bounds",
                           who + ": bytes " + dec(e.offset) + ".." + dec(end - 1) + " run past the end of the file (" +
                               dec(file.size()) + " bytes)");
        if (e.offset % e.alignment != 0)
            return ts.fail(at("offset"), "section-misaligned",
                           who + ": offset " + dec(e.offset) + " is not a multiple of " + dec(e.alignment));
        if (e.offset < prev_end)
            return ts.fail(at("offset"), "section-overlap",
                           who + ": it starts at byte " + dec(e.offset) + ", inside the " + prev_name +
                               " (which ends at byte " + dec(prev_end) + ")");
        if (e.offset != detail::align_up(prev_end, alignment))
            return ts.fail(at("offset"), "section-gap",
                           who + ": it starts at byte " + dec(e.offset) + ", but the " + prev_name + " ends at byte " +
                               dec(prev_end) + ": each section starts at the next multiple of " + dec(alignment) +
                               " (byte " + dec(detail::align_up(prev_end, alignment)) + ")");
        for (std::uint64_t k = prev_end; k < e.offset; ++k)
            if (file[k] != 0)
                return layout.fail(k, "padding-nonzero",
                                   "padding byte " + dec(k) + " (between the " + prev_name + " and the " + name +
                                       " section) is " + hex(file[k], 2) + ", not 0");
        if (const std::uint32_t c = crc32c(file.subspan(e.offset, e.length)); c != e.crc)
            return ts.fail(at("checksum"), "section-checksum",
                           who + ": the stored checksum is " + hex(e.crc, 8) + " but the section's " + dec(e.length) +
                               " bytes (from byte " + dec(e.offset) + ") give " + hex(c, 8) +
                               ": the section is corrupted");
        prev_end = end;
        prev_kind = e.kind;
        prev_name = name + " section";
    }
    for (std::uint32_t k = 1; k <= required_kinds; ++k)
        if (std::none_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.kind == k; }))
            return table.fail(header_at("section count"), "section-missing",
                              "the package has no " + section_name(k) +
                                  " section (format version " + dec(h.version) +
                                  " requires code, weights, memory, io and debug)");
    if (prev_end != file.size())
        return layout.fail(prev_end, "trailing-bytes",
                           dec(file.size() - prev_end) + " bytes follow the last section (from byte " + dec(prev_end) +
                               "); nothing may follow it");

    // 4. the contents, in kind order (a section may depend on the ones before it)
    for (const Entry& e : entries) {
        const std::string name = section_name(e.kind) + " section";
        detail::Source s(file, e.offset, e.offset + e.length, input, name, "section-truncated", "the section");
        if (e.kind <= kinds_known)
            JANUS_CHECK(detail::transfer_section(s, p, static_cast<Kind>(e.kind)));
        else
            JANUS_CHECK(s.tail(p.extra.emplace_back(ExtraSection{e.kind, {}}).bytes, "bytes"));
        if (s.remaining() != 0)
            return s.fail(s.pos(), "section-trailing",
                          "the content ends at byte " + dec(s.pos()) + ", but the section runs to byte " +
                              dec(e.offset + e.length) + " (" + dec(s.remaining()) + " bytes unaccounted for)");
    }
    return p;
}

// ============================================================================================ inspection

/// "rounding: MODE", and why when the package does not record it (`janusc inspect` and inspect()).
inline std::string rounding_text(const Package& p) {
    return "rounding: " + std::string(numeric::rounding_name(effective_rounding(p))) +
           (p.rounding ? "\n" : " (not recorded: format version " + detail::dec(p.format_version) + ")\n");
}

/// "placement: N of T nodes on the NPU", then one line per host node, "  host node K (Op name): why [rule]": the text
/// `janusc compile`, `run --engine npu`, `verify` and `inspect` print (graph::placement_text).
inline std::string placement_text(const PlacementRecord& r) {
    std::string s = "placement: " + std::to_string(r.nodes - r.host.size()) + " of " + std::to_string(r.nodes) +
                    " nodes on the NPU\n";
    for (const HostNode& h : r.host)
        s += "  host node " + std::to_string(h.index) + " (" + h.op_type + (h.node.empty() ? "" : " " + h.node) +
             "): " + h.why + " [" + h.rule + "]" + (h.quantized ? " (quantized)" : "") + "\n";
    return s;
}

/// Deterministic text for `janusc inspect`: header, sections, regions and memory map, I/O, code size, debug map,
/// extra sections. Reads `file` without the toolchain check and states whether the toolchain matches.
inline Result<std::string> inspect(std::span<const std::uint8_t> file, std::string_view input_name) {
    using namespace format;
    using detail::dec;
    using detail::hex;
    JANUS_TRY(const Package p, read_package(file, input_name, ReadOptions{.check_toolchain = false}));
    detail::Source hs(file, 0, header_size, std::string(input_name), "header", "header-truncated", "the header");
    Header h;
    JANUS_CHECK(transfer_header(hs, h));
    const auto pad = [](std::string s, std::size_t w, bool right = false) {
        if (s.size() < w) s = right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
        return s;
    };
    std::string t;
    t += "Janus package, format version " + dec(h.version) + ", " + dec(file.size()) + " bytes\n";
    t += "toolchain: Janus " + p.toolchain.version + ", instruction set " + hex(p.toolchain.isa_hash);
    t += p.toolchain.isa_hash == isa_hash() ? " (matches this toolchain)\n"
                                            : " (MISMATCH: this toolchain is Janus " + std::string(version_string()) +
                                                  ", instruction set " + hex(isa_hash()) + "; the code cannot run)\n";
    t += "sections (" + dec(h.section_count) + "):\n";
    t += "  " + pad("kind", 21) + pad("offset", 10, true) + pad("length", 10, true) + "  crc32c\n";
    for (std::uint32_t i = 0; i < h.section_count; ++i) {
        detail::Source ts(file, header_size + i * entry_size, header_size + (i + 1) * entry_size,
                          std::string(input_name), "section table", "section-table-bounds", "the entry");
        Entry e;
        JANUS_CHECK(transfer_entry(ts, e));
        t += "  " + pad(section_name(e.kind) + ((e.flags & flag_optional) != 0 ? " (optional)" : ""), 21) +
             pad(dec(e.offset), 10, true) + pad(dec(e.length), 10, true) + "  " + hex(e.crc, 8) + "\n";
    }
    t += "memory map:\n";
    for (int r = 0; r < 4; ++r) {
        t += "  " + std::string(vnpu::region_names[static_cast<std::size_t>(r)]) + " (region " + dec(r) +
             "): " + dec(region_size(p, r)) + " bytes\n";
        struct Item {
            std::uint64_t offset, size;
            std::string kind, name;
        };
        std::vector<Item> items;
        for (const Buffer& b : p.buffers)
            if (buffer_region(b.kind) == r)
                items.push_back({b.offset, b.size, std::string(buffer_kind_name(b.kind)), b.name});
        for (const IoDesc& d : r == region_input ? p.inputs : r == region_output ? p.outputs : std::vector<IoDesc>{})
            items.push_back({d.offset, d.size, r == region_input ? "input" : "output", d.name});
        std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
            return std::tie(a.offset, a.size, a.kind, a.name) < std::tie(b.offset, b.size, b.kind, b.name);
        });
        for (const Item& it : items)
            t += "    [" + hex(it.offset, 8) + ", " + hex(it.offset + it.size, 8) + ")  " + pad(it.kind, 9) + " " +
                 it.name + " (" + dec(it.size) + " bytes)\n";
    }
    const auto list = [](const auto& v, const auto& show) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i == 8 && v.size() > 9) {
                s += ", ... (" + std::to_string(v.size()) + " in all)";
                break;
            }
            s += (i ? ", " : "") + show(v[i]);
        }
        return s + "]";
    };
    const auto i64 = [](std::int64_t x) { return std::to_string(x); };
    for (const bool in : {true, false}) {
        const auto& v = in ? p.inputs : p.outputs;
        t += std::string(in ? "inputs" : "outputs") + " (" + dec(v.size()) + "):\n";
        for (const IoDesc& d : v) {
            t += "  " + d.name + ": " + std::string(dtype_name(d.dtype)) + " " + list(d.shape, i64);
            t += ", stored " + std::string(dtype_name(d.storage)) + " at " + (in ? "input" : "output") + "+" +
                 hex(d.offset, 8) + " (" + dec(d.size) + " bytes), strides " + list(d.strides, i64) + " bytes\n";
            const auto& q = d.quant;
            if (q.scales.empty())
                t += "    not quantized\n";
            else if (q.scales.size() == 1)
                t += "    per-tensor: scale " + detail::shortest(q.scales[0]) + ", zero point " +
                     std::to_string(q.zero_points[0]) + "\n";
            else
                t += "    per-axis along axis " + std::to_string(q.axis) + ": scales " +
                     list(q.scales, detail::shortest) + ", zero points " +
                     list(q.zero_points, [](std::int32_t z) { return std::to_string(z); }) + "\n";
        }
    }
    t += "code: " + dec(p.code.size()) + " instructions (" + dec(8 * p.code.size()) + " bytes)\n";
    t += "debug map (" + dec(p.debug.size()) + "):\n";
    for (const DebugEntry& e : p.debug)
        t += "  [" + dec(e.first) + ", " + dec(e.last) + ") " + e.op_type + " '" + e.node + "'\n";
    if (p.host)
        t += "host section: " + dec(p.host->graph.size()) + " bytes of graph text, " +
             dec(static_cast<std::size_t>(std::count(p.host->graph.begin(), p.host->graph.end(), '\n'))) +
             " lines; the first " + dec(p.host->prologue) + " nodes run before the program" +
             (p.segments.empty() ? ", the rest after it\n" : "\n");
    if (!p.segments.empty()) {
        t += "segments (" + dec(p.segments.size() + 1) + "; each ends with halt, the host runs between them):\n";
        t += "  segment 0: from pc 0, inputs from 0, outputs from 0, after " + dec(p.host->prologue) + " host nodes\n";
        for (std::size_t i = 0; i < p.segments.size(); ++i) {
            const SegmentStart& g = p.segments[i];
            t += "  segment " + dec(i + 1) + ": from pc " + dec(g.entry) + ", inputs from " + dec(g.first_input) +
                 ", outputs from " + dec(g.first_output) + ", after " + dec(g.nodes_before) + " host nodes\n";
        }
    }
    t += p.placement ? placement_text(*p.placement) : "placement: not recorded (format version 1)\n";
    t += rounding_text(p);
    t += "extra sections (" + dec(p.extra.size()) + "):\n";
    for (const ExtraSection& x : p.extra) t += "  kind " + dec(x.kind) + ": " + dec(x.bytes.size()) + " bytes\n";
    return t;
}

/// inspect() of the canonical bytes of `p`.
inline Result<std::string> describe(const Package& p) {
    JANUS_TRY(const std::vector<std::uint8_t> bytes, write_package(p));
    return inspect(bytes, "package");
}

}  // namespace janus::package
