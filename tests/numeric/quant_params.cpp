// quant_params.hpp: validation errors (untrusted model data), uint8 -> int8 exactness, the quantization axis moving
// with the tensor (seeds A10, B12), and the golden text of str() and Error::message().
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/numeric/quant_params.hpp>
#include <support/numeric_reference.hpp>

namespace {

namespace num = janus::numeric;
using janus::Dims;
using janus::DType;
using janus::Shape;

constexpr float finf = std::numeric_limits<float>::infinity();
constexpr float fnan = std::numeric_limits<float>::quiet_NaN();

/// The real value of stored value q in channel c.
double real_value(const num::QuantParams& p, std::int32_t q, std::size_t c = 0) {
    return static_cast<double>(p.scale(c)) * (static_cast<double>(q) - static_cast<double>(p.zero_point(c)));
}

}  // namespace

TEST_CASE("Error::message() is 'input:position: error: detail [rule]', the position omitted when empty") {
    const auto e = janus::make_error("model.onnx", "byte 1043", "tensor-in-bounds", "tensor data ends past the file");
    CHECK(e.message() == "model.onnx:byte 1043: error: tensor data ends past the file [tensor-in-bounds]");
    const auto f = janus::make_error("Conv.scale", "", "scale-positive-finite", "scale must be > 0");
    CHECK(f.message() == "Conv.scale: error: scale must be > 0 [scale-positive-finite]");
    CHECK(e == janus::Error{"model.onnx", "byte 1043", "tensor-in-bounds", "tensor data ends past the file"});
    CHECK_FALSE(e == f);
}

TEST_CASE("an unsupported error prints 'unsupported:' and keeps its kind and detail when wrapped in its context") {
    const auto u = janus::make_unsupported("Resize", "", "antialias-unsupported", "Resize antialias 1",
                                           "Janus implements antialias 0");
    CHECK(u.unsupported());
    CHECK(u.message() ==
          "Resize: unsupported: Resize antialias 1; Janus implements antialias 0 [antialias-unsupported]");
    const auto uw = u.within("m.onnx", "node 'r' (Resize)");
    CHECK(uw.unsupported());
    CHECK(uw.message() ==
          "m.onnx:node 'r' (Resize): unsupported: Resize antialias 1; Janus implements antialias 0 "
          "[antialias-unsupported]");
    // a malformed error stays malformed; its detail becomes its cause
    const auto e = janus::make_error("Conv.scale", "", "scale-positive-finite", "scale must be > 0");
    const auto ew = e.within("m.onnx", "node 'c' (Conv)");
    CHECK_FALSE(ew.unsupported());
    CHECK(ew.message() == "m.onnx:node 'c' (Conv): error: Conv.scale: scale must be > 0 [scale-positive-finite]");
    CHECK(janus::make_unsupported("m.onnx", "", "onnx-op", "Einsum", "").message() ==
          "m.onnx: unsupported: Einsum [onnx-op]");
}

TEST_CASE("make_quant accepts finite positive scales and zero points inside the storage range") {
    const auto q = num::make_quant(DType::i8, 0.05f, -3);
    REQUIRE(q.ok());
    CHECK(q->per_tensor());
    CHECK(q->channels() == 1);
    CHECK(q->scale() == 0.05f);
    CHECK(q->zero_point() == -3);
    for (auto zp : {-128, 127}) CHECK(num::make_quant(DType::i8, 1.0f, zp).ok());
    for (auto zp : {0, 255}) CHECK(num::make_quant(DType::u8, 1.0f, zp).ok());
    for (auto zp : {janus::reference::i32_min, 0, janus::reference::i32_max})
        CHECK(num::make_quant(DType::i32, 1.0f, zp).ok());  // int32 (bias) zero points are not restricted
    CHECK(num::make_quant(DType::i8, std::numeric_limits<float>::denorm_min(), 0).ok());
    CHECK(num::make_quant(DType::i8, std::numeric_limits<float>::max(), 0).ok());
}

TEST_CASE("make_quant refuses a scale that is zero, negative, NaN or infinite [scale-positive-finite]") {
    for (float s : {0.0f, -0.0f, -1.0f, -std::numeric_limits<float>::denorm_min(), fnan, finf, -finf}) {
        CAPTURE(s);
        const auto q = num::make_quant(DType::i8, s, 0, "conv1.w");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().rule == "scale-positive-finite");
        CHECK(q.error().input == "conv1.w");
        CHECK(q.error().position.empty());
    }
    CHECK(num::make_quant(DType::i8, -1e-10f, 0, "conv1.w").error().message() ==
          "conv1.w: error: scale must be finite and > 0, got -1.00000001e-10 [scale-positive-finite]");
    CHECK(num::make_quant(DType::u8, 0.0f, 0, "x").error().message() ==
          "x: error: scale must be finite and > 0, got 0 [scale-positive-finite]");
}

TEST_CASE("make_quant refuses a zero point outside the int8 [-128, 127] or uint8 [0, 255] range "
          "[zero-point-in-range]") {
    struct Case {
        DType dtype;
        std::int32_t zp;
    };
    for (const Case& c : {Case{DType::i8, -129}, Case{DType::i8, 128}, Case{DType::i8, janus::reference::i32_min},
                          Case{DType::u8, -1}, Case{DType::u8, 256}, Case{DType::u8, janus::reference::i32_max}}) {
        CAPTURE(c.zp);
        const auto q = num::make_quant(c.dtype, 1.0f, c.zp, "act");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().rule == "zero-point-in-range");
    }
    CHECK(num::make_quant(DType::u8, 1.0f, 256, "act").error().message() ==
          "act: error: zero point 256 is outside the uint8 range [0, 255] [zero-point-in-range]");
    CHECK(num::make_quant(DType::i8, 1.0f, 128, "act").error().message() ==
          "act: error: zero point 128 is outside the int8 range [-128, 127] [zero-point-in-range]");
}

TEST_CASE("make_quant refuses float32 and int64 storage [quantized-dtype]") {
    for (auto d : {DType::f32, DType::i64}) {
        const auto q = num::make_quant(d, 1.0f, 0, "t");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().rule == "quantized-dtype");
    }
    CHECK(num::make_quant(DType::f32, 1.0f, 0, "t").error().message() ==
          "t: error: float32 cannot be quantized (int8, uint8 or int32) [quantized-dtype]");
}

TEST_CASE("make_quant_per_axis normalizes a negative axis and checks one (scale, zero point) per channel") {
    const Shape shape{4, 3};
    const auto last = num::make_quant_per_axis(DType::i8, {0.5f, 0.25f, 0.125f}, {0, 1, -1}, -1, shape, "w");
    REQUIRE(last.ok());
    CHECK(last->axis == 1);
    CHECK(last->channels() == 3);
    CHECK(last->scale(2) == 0.125f);
    CHECK(last->zero_point(1) == 1);
    const auto first = num::make_quant_per_axis(DType::i8, {1, 2, 3, 4}, {}, -2, shape, "w");
    REQUIRE(first.ok());
    CHECK(first->axis == 0);
    CHECK(first->zero_points == std::vector<std::int32_t>{0, 0, 0, 0});  // ONNX: zero points default to 0
    CHECK(num::check_quant_fits(*first, shape).ok());
}

TEST_CASE("make_quant_per_axis errors name the rule, the tensor and the channel") {
    const Shape shape{4, 3};
    SUBCASE("axis outside [-rank, rank) [axis-in-range]") {
        for (std::int64_t axis : {std::int64_t{2}, std::int64_t{-3}, std::int64_t{100},
                                  std::numeric_limits<std::int64_t>::min()}) {
            const auto q = num::make_quant_per_axis(DType::i8, {1, 1, 1}, {}, axis, shape, "w");
            REQUIRE_FALSE(q.ok());
            CHECK(q.error().rule == "axis-in-range");
            CHECK(q.error().input == "w.axis");
        }
        CHECK(num::make_quant_per_axis(DType::i8, {1, 1, 1}, {}, 2, shape, "w").error().message() ==
              "w.axis: error: axis 2 is outside [-2, 2) for rank 2 [axis-in-range]");
    }
    SUBCASE("channel count differs from the axis extent [channels-match-extent]") {
        const auto q = num::make_quant_per_axis(DType::i8, {1, 1}, {}, 1, shape, "w");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().message() == "w:axis 1: error: 2 scales for an axis of extent 3 [channels-match-extent]");
    }
    SUBCASE("scales and zero points of different lengths [scale-zero-point-same-length]") {
        const auto q = num::make_quant_per_axis(DType::i8, {1, 1, 1}, {0, 0}, 1, shape, "w");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().message() == "w: error: 3 scales but 2 zero points [scale-zero-point-same-length]");
        CHECK(num::make_quant_per_axis(DType::i8, {}, {}, 1, shape, "w").error().rule ==
              "scale-zero-point-same-length");
    }
    SUBCASE("a bad channel is named by its index") {
        const auto s = num::make_quant_per_axis(DType::i8, {1, fnan, 1}, {}, 1, shape, "w");
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().message() ==
              "w:channel 1: error: scale must be finite and > 0, got nan [scale-positive-finite]");
        const auto z = num::make_quant_per_axis(DType::u8, {1, 1, 1}, {0, 255, -1}, 1, shape, "w");
        REQUIRE_FALSE(z.ok());
        CHECK(z.error().position == "channel 2");
        CHECK(z.error().rule == "zero-point-in-range");
    }
}

TEST_CASE("to_int8 is exact: every uint8 value keeps its real value, scale*(v-zp) == scale*((v-128)-(zp-128))") {
    long mismatches = 0;
    for (float scale : {1.0f, 0.0039215689f, 1e-30f, 3e30f}) {
        for (std::int32_t zp = 0; zp <= 255; ++zp) {
            const auto u = num::make_quant(DType::u8, scale, zp);
            REQUIRE(u.ok());
            const num::QuantParams s = u->to_int8();
            REQUIRE(s.dtype == DType::i8);
            REQUIRE(num::make_quant(DType::i8, s.scale(), s.zero_point()).ok());  // still valid int8 parameters
            for (std::int32_t v = 0; v <= 255; ++v) {
                const std::int32_t v8 = v - 128;  // the int8 storage of v
                if (v8 < -128 || v8 > 127 || real_value(*u, v) != real_value(s, v8)) ++mismatches;
            }
        }
    }
    CHECK(mismatches == 0);
}

TEST_CASE("to_int8 shifts every per-axis uint8 zero point by 128 and keeps scales and axis; int8 and int32 are "
          "unchanged") {
    const auto u = num::make_quant_per_axis(DType::u8, {0.5f, 2.0f}, {0, 255}, 0, Shape{2, 5}, "w");
    REQUIRE(u.ok());
    const auto s = u->to_int8();
    CHECK(s.dtype == DType::i8);
    CHECK(s.zero_points == std::vector<std::int32_t>{-128, 127});
    CHECK(s.scales == u->scales);
    CHECK(s.axis == 0);
    const auto i8 = num::make_quant(DType::i8, 0.5f, -7);
    CHECK(i8->to_int8() == *i8);
    const auto i32 = num::make_quant(DType::i32, 0.5f, 1000);
    CHECK(i32->to_int8() == *i32);
}

TEST_CASE("transposed moves the quantization axis with the tensor: output axis j is input axis perm[j]") {
    const auto nchw = num::make_quant_per_axis(DType::i8, {1, 2, 3}, {}, 1, Shape{2, 3, 5, 7}, "act");
    REQUIRE(nchw.ok());
    const auto nhwc = num::transposed(*nchw, Dims{0, 2, 3, 1});
    CHECK(nhwc.axis == 3);
    CHECK(num::check_quant_fits(nhwc, Shape{2, 5, 7, 3}).ok());
    CHECK_FALSE(num::check_quant_fits(*nchw, Shape{2, 5, 7, 3}).ok());  // the old axis no longer fits (seed A10)
    // Seed B12: weights [out=3, in=4] quantized per output channel move to the right operand as [in, out].
    const auto w = num::make_quant_per_axis(DType::i8, {1, 2, 3}, {}, 0, Shape{3, 4}, "fc.w");
    CHECK(num::transposed(*w, Dims{1, 0}).axis == 1);
    // Per-tensor parameters do not change.
    const auto t = num::make_quant(DType::i8, 0.5f, 1);
    CHECK(num::transposed(*t, Dims{1, 0}) == *t);
}

TEST_CASE("transposed, squeezed and unsqueezed keep the axis on the same extent, for every permutation and "
          "random squeezes and unsqueezes") {
    janus::reference::BiasedRng rng(0x5EED0201);
    long bad = 0;
    for (int iter = 0; iter < 2000; ++iter) {
        const int rank = static_cast<int>(rng.uniform(1, janus::max_rank));
        Shape shape;
        for (int i = 0; i < rank; ++i) shape.push_back(10 + i);  // distinct extents identify the axes
        const int axis = static_cast<int>(rng.uniform(0, rank - 1));
        std::vector<float> scales(static_cast<std::size_t>(shape[axis]), 0.5f);
        const auto q = num::make_quant_per_axis(DType::i8, scales, {}, axis, shape, "t");
        REQUIRE(q.ok());
        // a random permutation (Fisher-Yates)
        Dims perm = Dims::filled(rank, 0);
        for (int i = 0; i < rank; ++i) perm[i] = i;
        for (int i = rank - 1; i > 0; --i) std::swap(perm[i], perm[static_cast<int>(rng.uniform(0, i))]);
        Shape out;
        for (int j = 0; j < rank; ++j) out.push_back(shape[static_cast<int>(perm[j])]);
        const auto t = num::transposed(*q, perm);
        bad += (t.axis && out[*t.axis] == shape[axis] && num::check_quant_fits(t, out).ok()) ? 0 : 1;
        // unsqueeze at random sorted output positions
        const int n_new = static_cast<int>(rng.uniform(0, janus::max_rank - rank));
        Dims inserted;
        Shape grown = shape;
        for (int k = 0; k < n_new; ++k) {
            const std::int64_t pos =
                rng.uniform(inserted.empty() ? 0 : inserted[inserted.size() - 1] + 1, grown.size());
            if (pos > grown.size()) break;
            inserted.push_back(pos);
            grown.insert(static_cast<int>(pos), 1);
        }
        const auto u = num::unsqueezed(*q, inserted);
        bad += (u.axis && grown[*u.axis] == shape[axis] && num::check_quant_fits(u, grown).ok()) ? 0 : 1;
        // squeeze those unit axes again: back to the original axis
        const auto s = num::squeezed(u, inserted);
        bad += (s.ok() && s->axis == axis) ? 0 : 1;
    }
    CHECK(bad == 0);
}

TEST_CASE("squeezed shifts the axis past removed axes and refuses to remove the quantization axis "
          "[keep-quantization-axis]") {
    const auto q = num::make_quant_per_axis(DType::i8, {1, 2, 3}, {}, 1, Shape{1, 3, 1, 4}, "act");
    REQUIRE(q.ok());
    CHECK(num::squeezed(*q, Dims{0, 2})->axis == 0);
    CHECK(num::squeezed(*q, Dims{2})->axis == 1);
    CHECK(num::squeezed(*q, Dims{})->axis == 1);
    const auto bad = num::squeezed(*q, Dims{0, 1}, "Squeeze.input");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message() ==
          "Squeeze.input:axis 1: error: cannot remove the per-axis quantization axis [keep-quantization-axis]");
    const auto t = num::make_quant(DType::u8, 0.5f, 3);
    CHECK(*num::squeezed(*t, Dims{0}) == *t);
}

TEST_CASE("unsqueezed counts inserted output positions at or before the moving axis") {
    const auto q = num::make_quant_per_axis(DType::i8, {1, 2, 3}, {}, 1, Shape{2, 3}, "act");
    REQUIRE(q.ok());
    CHECK(num::unsqueezed(*q, Dims{0, 2}).axis == 3);  // [new, 2, new, 3]
    CHECK(num::unsqueezed(*q, Dims{1}).axis == 2);     // [2, new, 3]
    CHECK(num::unsqueezed(*q, Dims{2}).axis == 1);     // [2, 3, new]
    CHECK(num::unsqueezed(*q, Dims{0, 1}).axis == 3);  // [new, new, 2, 3]
    CHECK(num::unsqueezed(*q, Dims{}).axis == 1);
}

TEST_CASE("str() golden text: 'dtype s=scale zp=zp' per tensor, 'dtype axis=a s=[...] zp=[...]' per axis, "
          "scales printed with %.9g") {
    CHECK(num::make_quant(DType::i8, 0.05f, -3)->str() == "int8 s=0.0500000007 zp=-3");
    CHECK(num::make_quant(DType::u8, 0.25f, 128)->str() == "uint8 s=0.25 zp=128");
    CHECK(num::make_quant(DType::i32, 1e-6f, 0)->str() == "int32 s=9.99999997e-07 zp=0");
    CHECK(num::make_quant_per_axis(DType::i8, {0.5f, 0.25f, 3.0f}, {0, -1, 2}, -1, Shape{8, 3}, "w")->str() ==
          "int8 axis=1 s=[0.5,0.25,3] zp=[0,-1,2]");
    CHECK(num::make_quant_per_axis(DType::u8, {1.0f}, {}, 0, Shape{1}, "w")->str() == "uint8 axis=0 s=[1] zp=[0]");
}
