// Fuzz target: every registered op's shape/type inference and kernel, on random input types and attributes.
//
// Decodes an op (from ops::all_ops), 0-5 input tensor types (rank <= 4, float32 or int8/uint8 with
// random and sometimes invalid quantization), and 0-4 attributes (a name from the op's schema or a junk name, a
// random kind and value, including NaN, infinities and int64 extremes). Property (a __builtin_trap() when broken):
// inference returns a well-formed Error (non-empty input, rule, detail) or a valid type (rank <= 6, extents >= 0,
// quantization that fits the shape, within the size policy of core/size.hpp). Input extents are zero, one, small or
// huge (2^16 .. 2^40). It instantiates only the ops' inference, so it builds quickly; the kernels are
// fuzzed per family by their own targets.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <janus/ops/registry.hpp>

using namespace janus;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

struct Reader {
    const std::uint8_t* p;
    std::size_t n;
    std::size_t i = 0;
    std::uint8_t u8() { return i < n ? p[i++] : 0; }
    std::int64_t small(int lo, int hi) { return lo + static_cast<std::int64_t>(u8() % (hi - lo + 1)); }
    std::int64_t i64() {
        switch (u8() % 8) {
            case 0: return std::numeric_limits<std::int64_t>::max();
            case 1: return std::numeric_limits<std::int64_t>::min();
            case 2: return static_cast<std::int64_t>(u8()) << 33;
            default: return small(-9, 9);
        }
    }
    float f32() {
        switch (u8() % 10) {
            case 0: return std::numeric_limits<float>::quiet_NaN();
            case 1: return std::numeric_limits<float>::infinity();
            case 2: return -std::numeric_limits<float>::infinity();
            case 3: return 0.0f;
            default: return static_cast<float>(static_cast<std::int8_t>(u8())) / 16.0f;
        }
    }
};

bool well_formed(const Error& e) { return !e.input.empty() && !e.rule.empty() && !e.detail.empty(); }

ops::TensorType read_type(Reader& r, bool quantized, DType qdtype) {
    ops::TensorType t;
    const int rank = static_cast<int>(r.small(0, 4));
    for (int k = 0; k < rank; ++k) {
        // zero, one, small, and (issue 26) huge extents: 2^16 .. 2^40, next to zeros, so that inference meets shapes
        // at the size policy's edge (the caller drops inputs beyond it: every reader refuses those)
        const std::int64_t kind = r.small(0, 11);
        t.shape.push_back(kind == 0    ? r.small(0, 1)
                          : kind == 11 ? std::int64_t{1} << (16 + r.u8() % 4 * 8)
                                       : r.small(1, 5));
    }
    if (!quantized) {
        t.dtype = (r.u8() % 16 == 0) ? DType::i32 : DType::f32;
        return t;
    }
    // The mode byte: % 11 == 10 an unquantized int32 tensor (a bias), % 11 == 9 a float32 one (norm parameters),
    // % 11 == 3 per-channel on axis 0 (conv weights), % 5 == 0 per-channel on the last axis, else per-tensor.
    const std::uint8_t mode = r.u8();
    if (mode % 11 == 10 || mode % 11 == 9) {
        t.dtype = mode % 11 == 10 ? DType::i32 : DType::f32;
        return t;
    }
    t.dtype = qdtype;
    numeric::QuantParams q;
    q.dtype = qdtype;
    const float scales[] = {0.01f, 0.05f, 0.25f, 1.0f, 3.0f, 1e-6f, 0.0f, -1.0f};
    int axis = rank == 0 ? -1 : mode % 11 == 3 ? 0 : mode % 5 == 0 ? rank - 1 : -1;
    if (axis >= 0 && t.shape[static_cast<std::size_t>(axis)] > 64) axis = -1;  // a scale per channel of 2^16+: no
    const std::size_t channels = axis >= 0 ? static_cast<std::size_t>(t.shape[static_cast<std::size_t>(axis)]) : 1;
    for (std::size_t c = 0; c < channels; ++c) {
        q.scales.push_back(scales[r.u8() % (mode % 7 == 0 ? 8 : 6)]);
        q.zero_points.push_back(static_cast<std::int32_t>(qmin(qdtype) + r.u8() % 256));
    }
    if (axis >= 0) q.axis = axis;
    t.quant = q;
    return t;
}

ops::AttrValue read_value(Reader& r) {
    static const char* const strings[] = {
        "none",        "tanh",       "constant",   "reflect",          "edge",
        "int8",        "uint8",      "bogus",      "",                 "NOTSET",
        "SAME_UPPER",  "SAME_LOWER", "VALID",      "nearest",          "linear",
        "cubic",       "half_pixel", "asymmetric", "align_corners",    "pytorch_half_pixel",
        "tf_half_pixel_for_nn",      "tf_crop_and_resize",             "round_prefer_floor",
        "round_prefer_ceil",         "floor",      "ceil",             "stretch"};
    constexpr std::size_t n_strings = sizeof(strings) / sizeof(strings[0]);
    switch (r.u8() % 5) {
        case 0: return r.i64();
        case 1: return r.f32();
        case 2: return std::string(strings[r.u8() % n_strings]);
        case 3: {
            std::vector<std::int64_t> v(static_cast<std::size_t>(r.small(0, 8)));
            for (auto& x : v) x = r.u8() % 4 == 0 ? r.i64() : r.small(-5, 5);
            return v;
        }
        default: {
            std::vector<float> v(static_cast<std::size_t>(r.small(0, 4)));
            for (auto& x : v) x = r.f32();
            return v;
        }
    }
}



}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader r{data, size};
    const std::string_view name = ops::op_names[r.u8() % ops::op_count];
    const int n_inputs = static_cast<int>(r.small(0, 5));
    const bool quantized = r.u8() % 2 == 0;
    const DType qdtype = r.u8() % 2 ? DType::i8 : DType::u8;
    std::vector<ops::TensorType> types;
    for (int k = 0; k < n_inputs; ++k) {
        types.push_back(read_type(r, quantized, qdtype));
        if (!within_size_policy(types.back().shape.span())) return 0;  // no reader gives inference such a shape
    }

    std::vector<std::string_view> attr_names;
    ops::for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if (O::name.view() == name) attr_names = ops::attribute_names<O>();
    });
    ops::AttrMap attrs;
    const int n_attrs = static_cast<int>(r.small(0, 4));
    for (int k = 0; k < n_attrs; ++k) {
        const std::uint8_t pick = r.u8();
        std::string key = attr_names.empty() || pick >= 224 ? std::string("junk") + std::to_string(pick % 3)
                                                              : std::string(attr_names[pick % attr_names.size()]);
        attrs[key] = read_value(r);
    }

    const auto inferred = ops::infer_by_name(name, types, attrs);
    if (!inferred.ok()) {
        check(well_formed(inferred.error()));
        return 0;
    }
    const ops::TensorType& out = *inferred;
    check(out.shape.size() <= max_rank);
    for (auto d : out.shape) check(d >= 0);
    check(within_size_policy(out.shape.span()));  // ops::infer_with refuses an output beyond it (issue 26)
    if (out.quant) check(numeric::check_quant_fits(*out.quant, out.shape).ok());

    return 0;
}
