#pragma once
// The ONNX ModelProto subset Janus imports, decoded from the protobuf wire format (onnx/wire.hpp).
//
// Contract: `parse_model(bytes, input)` either returns a `Model` whose every tensor holds exactly
// product(dims) * dtype_size bytes of little-endian data, or an `Error` naming `input`, the absolute byte offset of
// the offending field ("byte N") and a rule. The decoder is structural: it checks the wire format, field types,
// tensor element types, dims and data sizes, attribute kinds and the IR version; it does not check that names are
// defined or that ops exist (the graph importer does). It never reads out of bounds, and what it allocates is bounded
// by the input's size (issue 26): the decoded structures (nodes, attributes, strings, values, dims, tensor data) are
// charged as they are made against decode_budget(size) = 16 x size + 16 MiB bytes, and a file that needs more is
// refused (onnx-limit) before it is decoded further; dims are counted before they are stored (a packed dims field
// of a million entries is refused as a rank, not stored).
//
// Read: ModelProto {ir_version, producer_name, producer_version, graph, opset_import}; GraphProto {node, name,
// initializer, input, output, value_info}; NodeProto {input, output, name, op_type, domain, attribute};
// AttributeProto {name, type, f, i, s, t, floats, ints, strings}; TensorProto {dims, data_type, float_data,
// int32_data, int64_data, uint64_data, name, raw_data}; ValueInfoProto {name, type.tensor_type {elem_type, shape}}.
// Every other field is skipped. Refused, each with its rule:
//   onnx-external-data  tensors stored outside the file (data_location EXTERNAL or external_data entries)
//   onnx-tensor-type    element types core/dtype.hpp does not have (bool, float64, uint64, ...; names the type)
//   onnx-tensor-data    a data size that disagrees with dims, raw_data together with typed data, values in another
//                       type's field, out-of-range values in int32_data / uint64_data, segmented tensors
//   onnx-dims           negative dims, rank above max_rank (6), an element count above 2^40
//   onnx-attribute      graph, sparse-tensor and type-proto attributes (control flow), an unknown attribute type
//   onnx-ir-version     IR versions outside 3 .. 10
//   onnx-missing        a model without a graph or without an opset for the default domain
//   onnx-limit          a file whose decoded structures would need more than decode_budget(file size) bytes
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/core/file.hpp>
#include <janus/layout/shape.hpp>
#include <janus/numeric/range.hpp>
#include <janus/onnx/wire.hpp>

namespace janus::onnx {

/// TensorProto.DataType values (onnx.proto).
enum class ElemType : std::int32_t {
    undefined = 0,
    float32 = 1,
    uint8 = 2,
    int8 = 3,
    uint16 = 4,
    int16 = 5,
    int32 = 6,
    int64 = 7,
    string = 8,
    boolean = 9,
    float16 = 10,
    float64 = 11,
    uint32 = 12,
    uint64 = 13,
    complex64 = 14,
    complex128 = 15,
    bfloat16 = 16
};

inline std::string elem_type_name(std::int32_t t) {
    static constexpr std::string_view names[] = {
        "undefined", "float32", "uint8",   "int8",   "uint16", "int16",     "int32",      "int64",   "string",
        "bool",      "float16", "float64", "uint32", "uint64", "complex64", "complex128", "bfloat16"};
    if (t >= 0 && t < static_cast<std::int32_t>(std::size(names))) return std::string(names[t]);
    return "data type " + std::to_string(t);
}

/// TensorProto field numbers (onnx.proto): the decoder below and serialize_tensor use these names.
namespace tensor_field {
inline constexpr std::uint32_t dims = 1, data_type = 2, segment = 3, float_data = 4, int32_data = 5, string_data = 6,
                               int64_data = 7, name = 8, raw_data = 9, double_data = 10, uint64_data = 11,
                               external_data = 13, data_location = 14;
}  // namespace tensor_field

/// A constant tensor: an initializer, a Constant node's value or a tensor attribute.
struct Tensor {
    std::string name;
    DType dtype = DType::f32;
    std::vector<std::int64_t> dims;
    std::vector<std::uint8_t> data;  ///< little-endian, C order, product(dims) * dtype_size(dtype) bytes
    std::size_t position = 0;        ///< byte offset of the TensorProto in the file

    std::int64_t elements() const {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        return n;
    }
    /// The values as T (which must be the dtype's C++ type).
    template <class T>
    std::vector<T> values() const {
        JANUS_ASSERT(dtype_v<T> == dtype);
        std::vector<T> v(data.size() / sizeof(T));
        if (!v.empty()) std::memcpy(v.data(), data.data(), data.size());
        return v;
    }
    friend bool operator==(const Tensor&, const Tensor&) = default;
};

/// AttributeProto.AttributeType values.
enum class AttrType : std::int32_t {
    undefined = 0,
    f = 1,
    i = 2,
    s = 3,
    tensor = 4,
    graph = 5,
    floats = 6,
    ints = 7,
    strings = 8,
    tensors = 9,
    graphs = 10,
    sparse_tensor = 11,
    sparse_tensors = 12,
    type_proto = 13,
    type_protos = 14
};

/// The name ONNX's AttributeProto gives `t` (FLOAT, INTS, GRAPH, ...), lower case; "type N" outside the enum.
inline std::string attr_type_name(AttrType t) {
    static constexpr const char* names[] = {
        "undefined", "float",   "int",    "string",        "tensor",         "graph",      "floats",     "ints",
        "strings",   "tensors", "graphs", "sparse_tensor", "sparse_tensors", "type_proto", "type_protos"};
    const auto k = static_cast<std::int32_t>(t);
    return k >= 0 && k < static_cast<std::int32_t>(std::size(names)) ? names[k] : "type " + std::to_string(k);
}

struct Attribute {
    std::string name;
    AttrType type = AttrType::undefined;
    float f = 0;
    std::int64_t i = 0;
    std::string s;
    std::optional<Tensor> t;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
    std::size_t position = 0;
    friend bool operator==(const Attribute&, const Attribute&) = default;
};

/// One dimension of a value's declared shape: a number, a symbolic name, or unknown.
struct Dim {
    std::optional<std::int64_t> value;
    std::string param;
    friend bool operator==(const Dim&, const Dim&) = default;
};

/// A graph input, output or value_info: a name and, when declared, a tensor element type and shape.
struct ValueInfo {
    std::string name;
    std::int32_t elem_type = 0;  ///< 0 = not declared
    bool has_shape = false;
    std::vector<Dim> shape;
    std::size_t position = 0;
    friend bool operator==(const ValueInfo&, const ValueInfo&) = default;
};

struct Node {
    std::string name;
    std::string op_type;
    std::string domain;
    std::vector<std::string> inputs;  ///< "" marks an omitted optional input
    std::vector<std::string> outputs;
    std::vector<Attribute> attributes;
    std::size_t position = 0;

    const Attribute* attribute(std::string_view n) const {
        for (const Attribute& a : attributes)
            if (a.name == n) return &a;
        return nullptr;
    }
    friend bool operator==(const Node&, const Node&) = default;
};

struct Graph {
    std::string name;
    std::vector<Node> nodes;
    std::vector<Tensor> initializers;
    std::vector<ValueInfo> inputs, outputs, value_infos;
    friend bool operator==(const Graph&, const Graph&) = default;
};

struct OpsetImport {
    std::string domain;
    std::int64_t version = 0;
    friend bool operator==(const OpsetImport&, const OpsetImport&) = default;
};

struct Model {
    std::int64_t ir_version = 0;
    std::string producer_name, producer_version;
    std::vector<OpsetImport> opsets;
    Graph graph;

    /// The opset version imported for `domain` ("" and "ai.onnx" are the same domain), or 0.
    std::int64_t opset(std::string_view domain) const {
        const auto norm = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
        for (const OpsetImport& o : opsets)
            if (norm(o.domain) == norm(domain)) return o.version;
        return 0;
    }
    friend bool operator==(const Model&, const Model&) = default;
};

inline constexpr std::int64_t min_ir_version = 3, max_ir_version = 10;

/// The most a decoder may allocate for a serialized message of `size` bytes (see the header comment): a well-formed
/// model decodes into a few times its size (tensor data is copied once, typed values twice; a node of 60 wire bytes
/// is a 200-byte structure), while a file of small named attributes or empty nodes decodes into 40 times its size.
inline constexpr std::uint64_t decode_budget(std::uint64_t size) {
    return 16 * size + (std::uint64_t{16} << 20);
}

namespace detail {

using wire::Field;
using wire::WireType;

/// Decoding state: the file name for errors, and the bytes charged against the budget (see the header comment).
struct Decoder {
    std::string_view input;
    std::uint64_t budget = UINT64_MAX;
    mutable std::uint64_t used = 0;

    /// Charge `bytes` of decoded structure made at byte `at`; refused (onnx-limit) beyond the budget.
    Status charge(std::size_t at, std::uint64_t bytes) const {
        used += bytes;
        if (used <= budget) return ok_status();
        return error(at, "onnx-limit",
                     "decoding this file needs more than " + std::to_string(budget) +
                         " bytes of memory (16 times its size plus 16 MiB); a well-formed model does not");
    }

    Error error(std::size_t at, std::string rule, std::string detail) const {
        return make_error(std::string(input), wire::byte_position(at), std::move(rule), std::move(detail));
    }
    /// Valid ONNX that Janus does not read: `subject` names the element and what it has.
    Error unsupported(std::size_t at, std::string rule, std::string subject, std::string why) const {
        return make_unsupported(std::string(input), wire::byte_position(at), std::move(rule), std::move(subject),
                                std::move(why));
    }
    Status expect(const Field& f, WireType t, std::string_view what) const {
        if (f.type != t) return wire::wrong_type(f, input, what, t);
        return ok_status();
    }
    Result<std::string> text(const Field& f, std::string_view what) const {
        JANUS_CHECK(expect(f, WireType::bytes, what));
        JANUS_CHECK(charge(f.position, sizeof(std::string) + f.bytes.size()));
        return std::string(f.text());
    }
    /// A name (graph, node, value, tensor, attribute, op type, domain): text without control characters (rule
    /// onnx-name; core/error.hpp control_char_at).
    Result<std::string> name(const Field& f, std::string_view what) const {
        JANUS_TRY(std::string s, text(f, what));
        if (const std::size_t i = control_char_at(s); i != std::string_view::npos)
            return error(f.bytes_position + i, "onnx-name",
                         std::string(what) + " has the control character 0x" +
                             "0123456789abcdef"[static_cast<unsigned char>(s[i]) >> 4] +
                             "0123456789abcdef"[static_cast<unsigned char>(s[i]) & 15] + " at index " +
                             std::to_string(i) + "; names are text without control characters");
        return s;
    }
    Result<std::int64_t> int64(const Field& f, std::string_view what) const {
        JANUS_CHECK(expect(f, WireType::varint, what));
        return f.as_int64();
    }

    /// Calls `on(field)` for every field of the message `bytes` at absolute offset `base`; stops at the first error.
    template <class On>
    Status fields(std::span<const std::uint8_t> bytes, std::size_t base, On&& on) const {
        wire::WireReader r(bytes, base, input);
        while (!r.done()) {
            JANUS_TRY(const Field f, r.next());
            JANUS_CHECK(on(f));
        }
        return ok_status();
    }

    Result<Tensor> tensor(const Field& msg, const std::string& where) const {
        JANUS_CHECK(expect(msg, WireType::bytes, where));
        JANUS_CHECK(charge(msg.position, sizeof(Tensor)));
        Tensor t;
        t.position = msg.position;
        std::int32_t data_type = 0;
        bool has_type = false, has_raw = false, external = false;
        std::vector<std::int64_t> ints;     // int32_data or int64_data
        std::vector<std::uint32_t> floats;  // float_data bits
        std::span<const std::uint8_t> raw;
        std::size_t raw_at = 0, typed_at = 0, type_at = msg.position;
        int typed_field = 0;
        std::size_t rank = 0;  // dims counted before they are stored: at most max_rank + 1 are kept
        JANUS_CHECK(fields(msg.bytes, msg.bytes_position, [&](const Field& f) -> Status {
            switch (f.number) {
                case tensor_field::dims: {
                    const std::size_t n = wire::varint_count(f);
                    rank += n;
                    if (rank > static_cast<std::size_t>(max_rank)) return ok_status();  // refused below, by rank
                    return wire::append_varints(f, t.dims, input, where + ".dims");
                }
                case tensor_field::data_type: {
                    JANUS_TRY(const std::int64_t v, int64(f, where + ".data_type"));
                    data_type = static_cast<std::int32_t>(v);
                    has_type = true;
                    type_at = f.position;
                    return ok_status();
                }
                case tensor_field::segment:
                    return error(f.position, "onnx-tensor-data",
                                 where + " is segmented (TensorProto.segment); Janus reads whole tensors only");
                case tensor_field::float_data:
                case tensor_field::int32_data:
                case tensor_field::int64_data:
                case tensor_field::uint64_data:
                    if (typed_field != 0 && typed_field != static_cast<int>(f.number))
                        return error(f.position, "onnx-tensor-data",
                                     where + " holds values in two typed fields (" + std::to_string(typed_field) +
                                         " and " + std::to_string(f.number) + ")");
                    typed_field = static_cast<int>(f.number);
                    typed_at = f.position;
                    JANUS_CHECK(charge(f.position, f.number == tensor_field::float_data ? 4 * wire::fixed32_count(f)
                                                                                        : 8 * wire::varint_count(f)));
                    if (f.number == tensor_field::float_data)
                        return wire::append_fixed32(f, floats, input, where + ".float_data");
                    return wire::append_varints(f, ints, input,
                                                where + (f.number == tensor_field::int32_data   ? ".int32_data"
                                                         : f.number == tensor_field::int64_data ? ".int64_data"
                                                                                                : ".uint64_data"));
                case tensor_field::string_data:
                case tensor_field::double_data:
                    typed_field = static_cast<int>(f.number);
                    typed_at = f.position;
                    return ok_status();  // string or double data: refused below by the element type
                case tensor_field::name: {
                    JANUS_TRY(t.name, name(f, where + ".name"));
                    return ok_status();
                }
                case tensor_field::raw_data:
                    JANUS_CHECK(expect(f, WireType::bytes, where + ".raw_data"));
                    raw = f.bytes;
                    raw_at = f.position;
                    has_raw = true;
                    return ok_status();
                case tensor_field::external_data:
                    external = true;
                    return ok_status();
                case tensor_field::data_location: {
                    JANUS_TRY(const std::int64_t v, int64(f, where + ".data_location"));
                    if (v != 0) external = true;
                    return ok_status();
                }
                default:
                    return ok_status();
            }
        }));
        const std::string label = where + (t.name.empty() ? "" : " '" + echo(t.name) + "'");
        if (external)
            return unsupported(msg.position, "onnx-external-data", label + " with external data",
                               "Janus reads self-contained models only (re-save the model with all tensors inside it)");
        if (!has_type || data_type == 0) return error(type_at, "onnx-tensor-type", label + " has no data_type");
        const auto dt = dtype_from_onnx_code(data_type);
        if (!dt)
            return unsupported(type_at, "onnx-tensor-type", label + " type " + elem_type_name(data_type),
                               "Janus supports " + dtype_list());
        t.dtype = *dt;
        if (rank > static_cast<std::size_t>(max_rank))
            return unsupported(msg.position, "onnx-dims", label + " of rank " + std::to_string(rank),
                               "Janus supports rank <= " + std::to_string(max_rank));
        // The shape and size policy (core/size.hpp, checked_size): a zero dim does not exempt the others.
        const std::size_t esize = dtype_size(t.dtype);
        const auto size = checked_size(t.dims, static_cast<std::int64_t>(esize), label, "onnx-dims");
        if (!size.ok())
            return error(msg.position, "onnx-dims", label + " " + size.error().position + ": " + size.error().detail);
        const std::int64_t n = size->elements;
        const auto expected = static_cast<std::uint64_t>(size->bytes);
        if (has_raw && typed_field != 0)
            return error(typed_at, "onnx-tensor-data", label + " holds both raw_data and typed data");
        if (has_raw) {
            if (raw.size() != expected)
                return error(raw_at, "onnx-tensor-data",
                             label + " raw_data holds " + std::to_string(raw.size()) + " bytes; its dims and " +
                                 std::string(dtype_name(t.dtype)) + " need " + std::to_string(expected));
            JANUS_CHECK(charge(raw_at, raw.size()));
            t.data.assign(raw.begin(), raw.end());
            return t;
        }
        // onnx.proto: float_data for float, int64_data for int64, uint64_data for uint32 (and uint64), int32_data for
        // the other integers and for float16 (its bits as an integer in [0, 65535]).
        const int want_field = t.dtype == DType::f32   ? 4
                               : t.dtype == DType::i64 ? 7
                               : t.dtype == DType::u32 ? 11
                                                       : 5;
        static constexpr std::string_view field_names[] = {
            "", "", "", "", "float_data", "int32_data", "", "int64_data", "", "", "", "uint64_data"};
        if (typed_field != 0 && typed_field != want_field)
            return error(typed_at, "onnx-tensor-data",
                         label + " is " + std::string(dtype_name(t.dtype)) + " but its values are in field " +
                             std::to_string(typed_field) + "; " + std::string(dtype_name(t.dtype)) +
                             " values belong in " + std::string(field_names[want_field]));
        const std::size_t count = want_field == 4 ? floats.size() : ints.size();
        if (count != static_cast<std::uint64_t>(n))
            return error(typed_field != 0 ? typed_at : msg.position, "onnx-tensor-data",
                         label + " holds " + std::to_string(count) + " values; its dims need " + std::to_string(n));
        JANUS_CHECK(charge(msg.position, expected));
        t.data.resize(static_cast<std::size_t>(expected));
        for (std::size_t k = 0; k < count; ++k) {
            std::uint8_t* out = t.data.data() + k * esize;
            if (want_field == 4) {
                std::memcpy(out, &floats[k], 4);
                continue;
            }
            const std::int64_t v = ints[k];
            if (t.dtype == DType::i64) {
                std::memcpy(out, &v, 8);
                continue;
            }
            // int32_data: a varint holding an int32 (sign-extended), uint64_data one holding a uint32; each value must
            // be in its type's range (float16: its bits, 0 to 65535). Stored as the type's little-endian bytes.
            const numeric::Interval range = t.dtype == DType::f16 ? numeric::Interval{0, 65535}
                                                                  : numeric::Interval::of(t.dtype);
            if (!range.contains(v))
                return error(typed_at, "onnx-tensor-data",
                             label + " value " + std::to_string(k) + " is " + std::to_string(v) + ", outside " +
                                 std::string(dtype_name(t.dtype)) +
                                 (t.dtype == DType::f16 ? " bits [0, 65535]" : ""));
            const auto u = static_cast<std::uint64_t>(v);
            for (std::size_t b = 0; b < esize; ++b) out[b] = static_cast<std::uint8_t>(u >> (8 * b));
        }
        return t;
    }

    Result<Attribute> attribute(const Field& msg, const std::string& where) const {
        JANUS_CHECK(expect(msg, WireType::bytes, where));
        JANUS_CHECK(charge(msg.position, sizeof(Attribute)));
        Attribute a;
        a.position = msg.position;
        std::int32_t type = 0;
        std::size_t type_at = msg.position;
        std::uint32_t seen = 0;  // bit per value field present
        std::vector<std::uint32_t> float_bits;
        JANUS_CHECK(fields(msg.bytes, msg.bytes_position, [&](const Field& f) -> Status {
            switch (f.number) {
                case 1: {
                    JANUS_TRY(a.name, name(f, where + ".name"));
                    return ok_status();
                }
                case 20: {
                    JANUS_TRY(const std::int64_t v, int64(f, where + ".type"));
                    type = static_cast<std::int32_t>(v);
                    type_at = f.position;
                    return ok_status();
                }
                case 2:
                    JANUS_CHECK(expect(f, WireType::fixed32, where + ".f"));
                    a.f = f.as_float();
                    seen |= 1u << 1;
                    return ok_status();
                case 3: {
                    JANUS_TRY(a.i, int64(f, where + ".i"));
                    seen |= 1u << 2;
                    return ok_status();
                }
                case 4: {
                    JANUS_TRY(a.s, text(f, where + ".s"));
                    seen |= 1u << 3;
                    return ok_status();
                }
                case 5: {
                    JANUS_TRY(a.t, tensor(f, where + ".t"));
                    seen |= 1u << 4;
                    return ok_status();
                }
                case 7:
                    seen |= 1u << 6;
                    JANUS_CHECK(charge(f.position, 8 * wire::fixed32_count(f)));  // the bits, then the floats
                    return wire::append_fixed32(f, float_bits, input, where + ".floats");
                case 8:
                    seen |= 1u << 7;
                    JANUS_CHECK(charge(f.position, 8 * wire::varint_count(f)));
                    return wire::append_varints(f, a.ints, input, where + ".ints");
                case 9: {
                    JANUS_TRY(std::string s, text(f, where + ".strings"));
                    a.strings.push_back(std::move(s));
                    seen |= 1u << 8;
                    return ok_status();
                }
                case 6:
                    seen |= 1u << 5;
                    return ok_status();  // g
                case 10:
                    seen |= 1u << 9;
                    return ok_status();  // tensors
                case 11:
                    seen |= 1u << 10;
                    return ok_status();  // graphs
                case 22:
                    seen |= 1u << 11;
                    return ok_status();  // sparse_tensor
                case 23:
                    seen |= 1u << 12;
                    return ok_status();  // sparse_tensors
                case 14:
                    seen |= 1u << 13;
                    return ok_status();  // tp
                case 15:
                    seen |= 1u << 14;
                    return ok_status();  // type_protos
                default:
                    return ok_status();
            }
        }));
        for (std::uint32_t b : float_bits) {
            float x;
            std::memcpy(&x, &b, 4);
            a.floats.push_back(x);
        }
        const std::string label = where + " '" + echo(a.name) + "'";
        if (a.name.empty()) return error(msg.position, "onnx-attribute", where + " has no name");
        if (type == 0) {  // IR version 1 style: the one value field present decides (bit k = AttrType k)
            if (seen == 0 || (seen & (seen - 1)) != 0)
                return error(msg.position, "onnx-attribute", label + " has no type and not exactly one value");
            type = std::countr_zero(seen);
        }
        a.type = static_cast<AttrType>(type);
        switch (a.type) {
            case AttrType::f:
            case AttrType::i:
            case AttrType::s:
            case AttrType::floats:
            case AttrType::ints:
            case AttrType::strings:
                return a;
            case AttrType::tensor:
                if (!a.t) return error(type_at, "onnx-attribute", label + " is a tensor attribute without a tensor");
                return a;
            case AttrType::graph:
            case AttrType::graphs:
                return unsupported(msg.position, "onnx-attribute", label + " of type " + attr_type_name(a.type),
                                   "Janus imports straight-line graphs only (no control flow)");
            case AttrType::tensors:
            case AttrType::sparse_tensor:
            case AttrType::sparse_tensors:
            case AttrType::type_proto:
            case AttrType::type_protos:
            case AttrType::undefined:
                break;
        }
        if (type >= 0 && type <= static_cast<std::int32_t>(AttrType::type_protos))
            return unsupported(type_at, "onnx-attribute", label + " of type " + attr_type_name(a.type),
                               "Janus reads float, int, string, tensor, floats, ints and strings attributes");
        return error(type_at, "onnx-attribute",
                     label + " has attribute type " + std::to_string(type) + ", which ONNX does not define");
    }

    Result<Node> node(const Field& msg, const std::string& where) const {
        JANUS_CHECK(expect(msg, WireType::bytes, where));
        JANUS_CHECK(charge(msg.position, sizeof(Node)));
        Node n;
        n.position = msg.position;
        JANUS_CHECK(fields(msg.bytes, msg.bytes_position, [&](const Field& f) -> Status {
            switch (f.number) {
                case 1:
                case 2: {
                    JANUS_TRY(std::string s, name(f, where + (f.number == 1 ? ".input" : ".output")));
                    (f.number == 1 ? n.inputs : n.outputs).push_back(std::move(s));
                    return ok_status();
                }
                case 3: {
                    JANUS_TRY(n.name, name(f, where + ".name"));
                    return ok_status();
                }
                case 4: {
                    JANUS_TRY(n.op_type, name(f, where + ".op_type"));
                    return ok_status();
                }
                case 7: {
                    JANUS_TRY(n.domain, name(f, where + ".domain"));
                    return ok_status();
                }
                case 5: {
                    JANUS_TRY(Attribute a,
                              attribute(f, where + ".attribute[" + std::to_string(n.attributes.size()) + "]"));
                    n.attributes.push_back(std::move(a));
                    return ok_status();
                }
                default:
                    return ok_status();
            }
        }));
        if (n.op_type.empty()) return error(msg.position, "onnx-missing", where + " has no op_type");
        return n;
    }

    Result<ValueInfo> value_info(const Field& msg, const std::string& where) const {
        JANUS_CHECK(expect(msg, WireType::bytes, where));
        JANUS_CHECK(charge(msg.position, sizeof(ValueInfo)));
        ValueInfo v;
        v.position = msg.position;
        JANUS_CHECK(fields(msg.bytes, msg.bytes_position, [&](const Field& f) -> Status {
            if (f.number == 1) {
                JANUS_TRY(v.name, name(f, where + ".name"));
                return ok_status();
            }
            if (f.number != 2) return ok_status();
            JANUS_CHECK(expect(f, WireType::bytes, where + ".type"));
            return fields(f.bytes, f.bytes_position, [&](const Field& tf) -> Status {
                if (tf.number != 1) return ok_status();  // sequence, map, optional, sparse: elem_type stays 0
                JANUS_CHECK(expect(tf, WireType::bytes, where + ".type.tensor_type"));
                return fields(tf.bytes, tf.bytes_position, [&](const Field& g) -> Status {
                    if (g.number == 1) {
                        JANUS_TRY(const std::int64_t e, int64(g, where + ".type.tensor_type.elem_type"));
                        v.elem_type = static_cast<std::int32_t>(e);
                        return ok_status();
                    }
                    if (g.number != 2) return ok_status();
                    JANUS_CHECK(expect(g, WireType::bytes, where + ".type.tensor_type.shape"));
                    v.has_shape = true;
                    return fields(g.bytes, g.bytes_position, [&](const Field& d) -> Status {
                        if (d.number != 1) return ok_status();
                        JANUS_CHECK(expect(d, WireType::bytes, where + ".shape.dim"));
                        if (v.shape.size() == static_cast<std::size_t>(max_rank))
                            return unsupported(d.position, "onnx-dims",
                                               where + " '" + echo(v.name) + "' of rank above " + std::to_string(max_rank),
                                               "Janus supports rank <= " + std::to_string(max_rank));
                        JANUS_CHECK(charge(d.position, sizeof(Dim)));
                        Dim dim;
                        JANUS_CHECK(fields(d.bytes, d.bytes_position, [&](const Field& x) -> Status {
                            if (x.number == 1) {
                                JANUS_TRY(const std::int64_t dv, int64(x, where + ".shape.dim.dim_value"));
                                if (dv < 0)
                                    return error(x.position, "onnx-dims",
                                                 where + " '" + echo(v.name) + "' has a negative dim " + std::to_string(dv));
                                dim.value = dv;
                            } else if (x.number == 2) {
                                JANUS_TRY(dim.param, text(x, where + ".shape.dim.dim_param"));
                            }
                            return ok_status();
                        }));
                        v.shape.push_back(std::move(dim));
                        return ok_status();
                    });
                });
            });
        }));
        if (v.name.empty()) return error(msg.position, "onnx-missing", where + " has no name");
        // The size policy over the declared dims (a symbolic one counts as 1: it may be anything at run time).
        std::vector<std::int64_t> known;
        for (const Dim& d : v.shape) known.push_back(d.value.value_or(1));
        if (const auto size = checked_size(known, 1, where, "onnx-dims"); !size.ok())
            return error(msg.position, "onnx-dims",
                         where + " '" + v.name + "' " + size.error().position + ": " + size.error().detail);
        return v;
    }

    Result<Graph> graph(const Field& msg) const {
        JANUS_CHECK(expect(msg, WireType::bytes, "model.graph"));
        Graph g;
        JANUS_CHECK(fields(msg.bytes, msg.bytes_position, [&](const Field& f) -> Status {
            const auto idx = [](const auto& v) { return "[" + std::to_string(v.size()) + "]"; };
            switch (f.number) {
                case 1: {
                    JANUS_TRY(Node n, node(f, "graph.node" + idx(g.nodes)));
                    g.nodes.push_back(std::move(n));
                    return ok_status();
                }
                case 2: {
                    JANUS_TRY(g.name, name(f, "graph.name"));
                    return ok_status();
                }
                case 5: {
                    JANUS_TRY(Tensor t, tensor(f, "graph.initializer" + idx(g.initializers)));
                    g.initializers.push_back(std::move(t));
                    return ok_status();
                }
                case 11:
                case 12:
                case 13: {
                    auto& list = f.number == 11 ? g.inputs : f.number == 12 ? g.outputs : g.value_infos;
                    const char* what = f.number == 11   ? "graph.input"
                                       : f.number == 12 ? "graph.output"
                                                        : "graph.value_info";
                    JANUS_TRY(ValueInfo v, value_info(f, what + idx(list)));
                    list.push_back(std::move(v));
                    return ok_status();
                }
                case 15:
                    return error(f.position, "onnx-tensor-data",
                                 "graph.sparse_initializer: Janus does not read sparse tensors");
                default:
                    return ok_status();
            }
        }));
        return g;
    }
};

}  // namespace detail

/// Decode a serialized ModelProto (see the header comment for what is read and refused).
inline Result<Model> parse_model(std::span<const std::uint8_t> bytes, std::string_view input) {
    const detail::Decoder d{input, decode_budget(bytes.size())};
    Model m;
    bool has_graph = false, has_ir = false;
    std::size_t ir_at = 0;
    JANUS_CHECK(d.fields(bytes, 0, [&](const wire::Field& f) -> Status {
        switch (f.number) {
            case 1: {
                JANUS_TRY(m.ir_version, d.int64(f, "model.ir_version"));
                has_ir = true;
                ir_at = f.position;
                return ok_status();
            }
            case 2: {
                JANUS_TRY(m.producer_name, d.text(f, "model.producer_name"));
                return ok_status();
            }
            case 3: {
                JANUS_TRY(m.producer_version, d.text(f, "model.producer_version"));
                return ok_status();
            }
            case 7: {
                if (has_graph) return d.error(f.position, "onnx-missing", "the model has two graphs");
                JANUS_TRY(m.graph, d.graph(f));
                has_graph = true;
                return ok_status();
            }
            case 8: {
                JANUS_CHECK(d.expect(f, wire::WireType::bytes, "model.opset_import"));
                JANUS_CHECK(d.charge(f.position, sizeof(OpsetImport)));
                OpsetImport o;
                JANUS_CHECK(d.fields(f.bytes, f.bytes_position, [&](const wire::Field& x) -> Status {
                    if (x.number == 1) {
                        JANUS_TRY(o.domain, d.text(x, "model.opset_import.domain"));
                    } else if (x.number == 2) {
                        JANUS_TRY(o.version, d.int64(x, "model.opset_import.version"));
                    }
                    return ok_status();
                }));
                m.opsets.push_back(std::move(o));
                return ok_status();
            }
            default:
                return ok_status();
        }
    }));
    if (!has_ir) return d.error(0, "onnx-ir-version", "the model has no ir_version (is this an ONNX model?)");
    if (m.ir_version < 1)
        return d.error(ir_at, "onnx-ir-version",
                       "IR version " + std::to_string(m.ir_version) + " (versions start at 1)");
    if (m.ir_version < min_ir_version || m.ir_version > max_ir_version)
        return d.unsupported(
            ir_at, "onnx-ir-version", "IR version " + std::to_string(m.ir_version),
            "Janus reads IR versions " + std::to_string(min_ir_version) + " .. " + std::to_string(max_ir_version));
    if (!has_graph) return d.error(0, "onnx-missing", "the model has no graph");
    if (m.opset("") == 0) {
        std::string domains;
        for (const OpsetImport& o : m.opsets) domains += (domains.empty() ? "'" : ", '") + o.domain + "'";
        if (domains.empty()) return d.error(0, "onnx-missing", "the model imports no opset");
        return d.unsupported(0, "onnx-missing", "opset_import of " + domains + " only",
                             "Janus reads models of the default domain (ai.onnx)");
    }
    return m;
}

/// Decode one serialized TensorProto (the files of the ONNX node tests, input_N.pb / output_N.pb).
inline Result<Tensor> parse_tensor(std::span<const std::uint8_t> bytes, std::string_view input) {
    const detail::Decoder d{input, decode_budget(bytes.size())};
    wire::Field whole;
    whole.type = wire::WireType::bytes;
    whole.bytes = bytes;
    return d.tensor(whole, "tensor");
}

/// Encode `t` as a TensorProto: dims (one field each, as onnx.proto's proto2 `repeated int64` is written), data_type,
/// name (when not empty) and raw_data, in field-number order: the bytes the onnx Python package writes for the same
/// tensor (tests/janusc compares with a file it wrote). The result decodes back to `t` with parse_tensor
/// (tests/onnx/reader.cpp and the onnx_reader fuzzer check it).
inline std::vector<std::uint8_t> serialize_tensor(const Tensor& t) {
    std::vector<std::uint8_t> out;
    for (const std::int64_t d : t.dims) wire::put_varint_field(out, tensor_field::dims, d);
    wire::put_varint_field(out, tensor_field::data_type, dtype_onnx_code(t.dtype));
    if (!t.name.empty())
        wire::put_bytes_field(out, tensor_field::name,
                              {reinterpret_cast<const std::uint8_t*>(t.name.data()), t.name.size()});
    wire::put_bytes_field(out, tensor_field::raw_data, t.data);
    return out;
}

/// The (domain, op_type) of every node of the model's main graph, read from the wire format alone: every other field,
/// and everything `parse_model` refuses beyond the wire format (types, control flow, sizes), is skipped. `janusc
/// conform` uses it to tell a model of ops Janus imports, refused for its contents, from a model of other ops.
/// Errors: the wire rules, and onnx-missing for a model without a graph or a node without an op_type.
inline Result<std::vector<std::pair<std::string, std::string>>> scan_op_types(std::span<const std::uint8_t> bytes,
                                                                               std::string_view input) {
    const detail::Decoder d{input};
    std::vector<std::pair<std::string, std::string>> ops;
    bool has_graph = false;
    JANUS_CHECK(d.fields(bytes, 0, [&](const wire::Field& f) -> Status {
        if (f.number != 7) return ok_status();
        JANUS_CHECK(d.expect(f, wire::WireType::bytes, "model.graph"));
        has_graph = true;
        return d.fields(f.bytes, f.bytes_position, [&](const wire::Field& g) -> Status {
            if (g.number != 1) return ok_status();
            JANUS_CHECK(d.expect(g, wire::WireType::bytes, "graph.node"));
            std::pair<std::string, std::string> op;
            JANUS_CHECK(d.fields(g.bytes, g.bytes_position, [&](const wire::Field& n) -> Status {
                if (n.number == 4) {
                    JANUS_TRY(op.second, d.text(n, "node.op_type"));
                } else if (n.number == 7) {
                    JANUS_TRY(op.first, d.text(n, "node.domain"));
                }
                return ok_status();
            }));
            if (op.second.empty()) return d.error(g.position, "onnx-missing", "a node has no op_type");
            ops.push_back(std::move(op));
            return ok_status();
        });
    }));
    if (!has_graph) return d.error(0, "onnx-missing", "the model has no graph");
    return ops;
}

/// Read a file into memory; errors name the path (rule file-readable; file-size-limit above `max_bytes`).
inline Result<std::vector<std::uint8_t>> read_bytes(const std::string& path,
                                                    std::uint64_t max_bytes = default_max_memory) {
    return read_file(path, "file-readable", "an ONNX file", max_bytes);
}

inline Result<Model> read_model_file(const std::string& path, std::uint64_t max_bytes = default_max_memory) {
    JANUS_TRY(const auto bytes, read_bytes(path, max_bytes));
    return parse_model(bytes, path);
}

}  // namespace janus::onnx
