// The ONNX reader (onnx/wire.hpp, onnx/model.hpp): every fixture decodes to exactly what the protobuf library reads
// from the same bytes (tests/onnx/fixtures/*.txt, written by scripts/make_onnx_models.py); hand-encoded messages
// cover packed and unpacked repeated fields and the IR-1 attribute form; every malformed file in tests/onnx/bad/
// gets its exact error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <janus/onnx/model.hpp>
#include <janus/package/checksum.hpp>

#include "onnx_bytes.hpp"
#include "support/text_file.hpp"
#include "support/expected_errors.hpp"

namespace {

using namespace janus;
namespace fs = std::filesystem;

/// FNV-1a 64 of a tensor's bytes (package/checksum.hpp), as the Python summary prints it.
std::uint64_t fnv1a64(const std::vector<std::uint8_t>& data) {
    return package::fnv1a64(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

std::string bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    char s[16];
    std::snprintf(s, sizeof s, "0x%08" PRIx32, b);
    return s;
}

template <class V>
std::string list(const V& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

std::string tensor_line(const onnx::Tensor& t) {
    char h[32];
    std::snprintf(h, sizeof h, "%016" PRIx64, fnv1a64(t.data));
    return std::string(dtype_name(t.dtype)) + " " + list(t.dims) + " fnv=" + h;
}

std::string value_info(const char* kind, const onnx::ValueInfo& v) {
    std::string s = std::string(kind) + " " + v.name + " " + onnx::elem_type_name(v.elem_type) + " ";
    if (!v.has_shape) return s + "?";
    s += "[";
    for (std::size_t i = 0; i < v.shape.size(); ++i) {
        const auto& d = v.shape[i];
        s += (i ? "," : "") + (d.value ? std::to_string(*d.value) : d.param.empty() ? "?" : d.param);
    }
    return s + "]";
}

/// The same text as scripts/make_onnx_models.py's summary(), from Janus's decoder.
std::string summary(const onnx::Model& m) {
    std::string s = "model ir_version=" + std::to_string(m.ir_version) + " producer=" + m.producer_name + " " +
                    m.producer_version + "\nopsets";
    for (const auto& o : m.opsets)
        s += " " + (o.domain.empty() ? std::string("ai.onnx") : o.domain) + ":" + std::to_string(o.version);
    s += "\ngraph " + m.graph.name + "\n";
    for (const auto& v : m.graph.inputs) s += value_info("input", v) + "\n";
    for (const auto& v : m.graph.outputs) s += value_info("output", v) + "\n";
    for (const auto& v : m.graph.value_infos) s += value_info("value_info", v) + "\n";
    for (const auto& t : m.graph.initializers) s += "initializer " + t.name + " " + tensor_line(t) + "\n";
    for (const auto& n : m.graph.nodes) {
        s +=
            "node " + n.name + " " + (n.domain.empty() ? std::string("ai.onnx") : n.domain) + "." + n.op_type + " in=[";
        for (std::size_t i = 0; i < n.inputs.size(); ++i) s += (i ? "," : "") + n.inputs[i];
        s += "] out=[";
        for (std::size_t i = 0; i < n.outputs.size(); ++i) s += (i ? "," : "") + n.outputs[i];
        s += "]";
        for (const auto& a : n.attributes) {
            s += " " + a.name + "=";
            switch (a.type) {
                case onnx::AttrType::f:
                    s += "f:" + bits(a.f);
                    break;
                case onnx::AttrType::i:
                    s += "i:" + std::to_string(a.i);
                    break;
                case onnx::AttrType::s:
                    s += "s:" + a.s;
                    break;
                case onnx::AttrType::ints:
                    s += "ints:" + list(a.ints);
                    break;
                case onnx::AttrType::floats: {
                    s += "floats:[";
                    for (std::size_t i = 0; i < a.floats.size(); ++i) s += (i ? "," : "") + bits(a.floats[i]);
                    s += "]";
                    break;
                }
                case onnx::AttrType::tensor:
                    s += "t:" + tensor_line(*a.t);
                    break;
                default:
                    s += "?";
                    break;
            }
        }
        s += "\n";
    }
    return s;
}

/// The error of decoding `path` as a model (or, for .pb files, as a TensorProto); nullopt when it decodes.
std::optional<Error> decode_error(const std::string& path, bool tensor) {
    auto bytes = onnx::read_bytes(path);
    if (!bytes.ok()) return bytes.error();
    if (tensor) {
        auto t = onnx::parse_tensor(*bytes, path);
        return t.ok() ? std::nullopt : std::optional<Error>(t.error());
    }
    auto m = onnx::parse_model(*bytes, path);
    return m.ok() ? std::nullopt : std::optional<Error>(m.error());
}

}  // namespace

TEST_CASE("every fixture decodes to what the protobuf library reads from the same bytes") {
    int checked = 0;
    for (const auto& e : fs::directory_iterator("onnx/fixtures")) {
        if (e.path().extension() != ".onnx") continue;
        CAPTURE(e.path().string());
        const auto m = onnx::read_model_file(e.path().string());
        REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message()));
        auto expected_path = e.path();
        expected_path.replace_extension(".txt");
        CHECK(summary(*m) == janus_test::read_text(expected_path));
        // Decoding is a pure function of the bytes.
        const auto again = onnx::read_model_file(e.path().string());
        CHECK(*again == *m);
        ++checked;
    }
    CHECK(checked == 11);
}

TEST_CASE("tensor values: raw_data and typed fields decode to the same little-endian bytes") {
    const auto m = onnx::read_model_file("onnx/fixtures/qop_conv_matmul.onnx");
    REQUIRE(m.ok());
    std::map<std::string, const onnx::Tensor*> by_name;
    for (const auto& t : m->graph.initializers) by_name[t.name] = &t;
    REQUIRE(by_name.count("bias") == 1);  // typed int32_data
    CHECK(by_name["bias"]->values<std::int32_t>().size() == 4);
    CHECK(by_name["x_zp"]->values<std::uint8_t>() == std::vector<std::uint8_t>{128});
    CHECK(by_name["x_s"]->values<float>() == std::vector<float>{0.02f});
    CHECK(by_name["x_s"]->dims.empty());
    CHECK(m->opset("") == 13);
    CHECK(m->opset("ai.onnx") == 13);
    CHECK(m->opset("com.microsoft") == 0);
}

TEST_CASE("hand-encoded tensors: packed and unpacked repeated fields, negative int32, IR-1 attributes") {
    using namespace ob;
    SUBCASE("dims and int64_data unpacked, float_data unpacked fixed32") {
        const auto t = onnx::parse_tensor(
            cat(varint_field(1, 2), varint_field(1, 2), varint_field(2, 1), fixed32_field(4, 1.0f),
                fixed32_field(4, -2.5f), fixed32_field(4, 0.f), fixed32_field(4, 3.f), bytes_field(8, "t")),
            "t.pb");
        REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message()));
        CHECK(t->dims == std::vector<std::int64_t>{2, 2});
        CHECK(t->values<float>() == std::vector<float>{1.0f, -2.5f, 0.f, 3.f});
    }
    SUBCASE("int8 in packed int32_data with negative values (10-byte sign-extended varints)") {
        const auto t = onnx::parse_tensor(
            cat(packed_varints(1, {3}), varint_field(2, 3), packed_varints(5, {-128, 0, 127})), "t.pb");
        REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message()));
        CHECK(t->values<std::int8_t>() == std::vector<std::int8_t>{-128, 0, 127});
    }
    SUBCASE("int64 packed and unpacked mixed in one field") {
        const auto t = onnx::parse_tensor(cat(packed_varints(1, {3}), varint_field(2, 7), packed_varints(7, {-1, 5}),
                                              varint_field(7, static_cast<std::uint64_t>(std::int64_t{-9}))),
                                          "t.pb");
        REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message()));
        CHECK(t->values<std::int64_t>() == std::vector<std::int64_t>{-1, 5, -9});
    }
    SUBCASE("int16, uint16 and float16 bits in int32_data, uint32 in uint64_data, at their extremes") {
        const auto i16 = onnx::parse_tensor(
            cat(packed_varints(1, {2}), varint_field(2, 5), packed_varints(5, {-32768, 32767})), "t.pb");
        REQUIRE_MESSAGE(i16.ok(), (i16.ok() ? "" : i16.error().message()));
        CHECK(i16->values<std::int16_t>() == std::vector<std::int16_t>{-32768, 32767});
        const auto u16 =
            onnx::parse_tensor(cat(packed_varints(1, {2}), varint_field(2, 4), packed_varints(5, {0, 65535})), "t.pb");
        REQUIRE(u16.ok());
        CHECK(u16->values<std::uint16_t>() == std::vector<std::uint16_t>{0, 65535});
        const auto f16 = onnx::parse_tensor(
            cat(packed_varints(1, {3}), varint_field(2, 10), packed_varints(5, {0x3c00, 0xfc00, 0x0001})), "t.pb");
        REQUIRE(f16.ok());
        CHECK(f16->values<float16>() ==
              std::vector<float16>{float16(1.0f), float16::from_bits(0xfc00), float16::from_bits(1)});
        const auto u32 = onnx::parse_tensor(
            cat(packed_varints(1, {2}), varint_field(2, 12), packed_varints(11, {0, 4294967295})), "t.pb");
        REQUIRE_MESSAGE(u32.ok(), (u32.ok() ? "" : u32.error().message()));
        CHECK(u32->values<std::uint32_t>() == std::vector<std::uint32_t>{0, 4294967295u});
        // one past each range is refused with the value's index
        const auto over = onnx::parse_tensor(
            cat(packed_varints(1, {2}), varint_field(2, 12), packed_varints(11, {1, 4294967296})), "t.pb");
        REQUIRE_FALSE(over.ok());
        CHECK(over.error().rule == "onnx-tensor-data");
        CHECK(over.error().message().find("value 1 is 4294967296, outside uint32") != std::string::npos);
        const auto neg =
            onnx::parse_tensor(cat(packed_varints(1, {1}), varint_field(2, 5), packed_varints(5, {-32769})), "t.pb");
        REQUIRE_FALSE(neg.ok());
        CHECK(neg.error().message().find("value 0 is -32769, outside int16") != std::string::npos);
    }
    SUBCASE("a 0-d tensor holds one element") {
        const auto t = onnx::parse_tensor(cat(varint_field(2, 6), packed_varints(5, {-7})), "t.pb");
        REQUIRE(t.ok());
        CHECK(t->dims.empty());
        CHECK(t->values<std::int32_t>() == std::vector<std::int32_t>{-7});
    }
    SUBCASE("an attribute without a type field takes the kind of its one value (IR version 1)") {
        const auto attr = bytes_field(5, cat(bytes_field(1, "axis"), varint_field(3, 2)));
        const auto node =
            bytes_field(1, cat(bytes_field(1, "x"), bytes_field(2, "y"), bytes_field(4, "Softmax"), attr));
        const auto m = onnx::parse_model(minimal_model(node), "m.onnx");
        REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message()));
        const auto* a = m->graph.nodes.at(0).attribute("axis");
        REQUIRE(a != nullptr);
        CHECK(a->type == onnx::AttrType::i);
        CHECK(a->i == 2);
    }
    SUBCASE("unknown fields are skipped, whatever their wire type") {
        const auto t = onnx::parse_tensor(cat(varint_field(2, 1), varint_field(99, 5), fixed32_field(98, 1.f),
                                              fixed64_field(97, 7), bytes_field(96, "zz"), fixed32_field(4, 4.f)),
                                          "t.pb");
        REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message()));
        CHECK(t->values<float>() == std::vector<float>{4.f});
    }
}

TEST_CASE("serialize_tensor: protobuf's own bytes, and a round trip through parse_tensor for every dtype") {
    onnx::Tensor t;
    t.name = "x";
    t.dtype = DType::i8;
    t.dims = {2, 300};
    t.data.assign(600, 0);
    t.data[0] = 1, t.data[599] = 0xff;
    const auto bytes = onnx::serialize_tensor(t);
    // dims 2 and 300 (unpacked varints, as proto2 writes them), data_type INT8 = 3, name "x", raw_data of 600 bytes
    const std::vector<std::uint8_t> head{0x08, 0x02, 0x08, 0xac, 0x02, 0x10, 0x03, 0x42, 0x01, 'x', 0x4a, 0xd8, 0x04};
    REQUIRE(bytes.size() == head.size() + 600);
    CHECK(std::equal(head.begin(), head.end(), bytes.begin()));
    CHECK(bytes[head.size()] == 1);
    CHECK(bytes.back() == 0xff);
    for (const DType d : all_dtypes) {
        CAPTURE(dtype_name(d));
        for (const std::vector<std::int64_t>& dims :
             {std::vector<std::int64_t>{}, std::vector<std::int64_t>{0}, std::vector<std::int64_t>{3, 1, 2}}) {
            onnx::Tensor u;
            u.dtype = d;
            u.dims = dims;
            u.name = dims.empty() ? "" : "t";
            std::int64_t n = 1;
            for (auto e : dims) n *= e;
            u.data.resize(static_cast<std::size_t>(n) * dtype_size(d));
            for (std::size_t i = 0; i < u.data.size(); ++i) u.data[i] = static_cast<std::uint8_t>(i * 37 + 5);
            const auto back = onnx::parse_tensor(onnx::serialize_tensor(u), "t.pb");
            REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().message()));
            CHECK(*back == u);
        }
    }
}

TEST_CASE("every malformed file in onnx/bad gets its exact error") {
    janus_test::check_expected_errors(
        "onnx/bad", [](const std::string& path) { return decode_error(path, path.ends_with(".pb")); });
}

TEST_CASE("onnx-limit: what the decoder allocates is bounded by the file's size (issue 26)") {
    using namespace ob;
    // a node of n small named attributes (7 wire bytes each, about 260 bytes decoded): 16 x the size + 16 MiB holds
    // 2,000 of them, not 150,000
    const auto model_with = [](std::size_t n) {
        Bytes node = bytes_field(4, "Relu");
        const Bytes attr = bytes_field(5, cat(bytes_field(1, "a"), varint_field(3, 1)));
        for (std::size_t k = 0; k < n; ++k) node.insert(node.end(), attr.begin(), attr.end());
        return cat(varint_field(1, 7), bytes_field(7, bytes_field(1, node)), bytes_field(8, varint_field(2, 13)));
    };
    const Bytes small = model_with(2000);
    const auto ok = onnx::parse_model(small, "small.onnx");
    REQUIRE_MESSAGE(ok.ok(), ok.error().message());
    CHECK(ok->graph.nodes.at(0).attributes.size() == 2000);
    const Bytes big = model_with(150000);
    const auto refused = onnx::parse_model(big, "big.onnx");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().rule == "onnx-limit");
    CHECK(refused.error().detail.find("16 times its size plus 16 MiB") != std::string::npos);
    CHECK(onnx::decode_budget(big.size()) == 16 * big.size() + (std::uint64_t{16} << 20));
}

TEST_CASE("onnx-dims: dims are counted before they are stored, and a zero dim does not exempt the others") {
    using namespace ob;
    Bytes dims;
    for (int k = 0; k < 100000; ++k) put_varint(dims, 1);
    const Bytes t = cat(bytes_field(1, dims), varint_field(2, 3));
    const auto r = onnx::parse_tensor(t, "t.pb");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "onnx-dims");
    CHECK(r.error().detail.find("of rank 100000") != std::string::npos);
    const Bytes huge = cat(packed_varints(1, {0, std::int64_t{1} << 62, std::int64_t{1} << 62}), varint_field(2, 1),
                           bytes_field(9, Bytes{}));
    const auto h = onnx::parse_tensor(huge, "h.pb");
    REQUIRE_FALSE(h.ok());
    CHECK(h.error().rule == "onnx-dims");
    CHECK(h.error().detail.find("axis 1: element count exceeds 2^40") != std::string::npos);
}
