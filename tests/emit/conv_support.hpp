#pragma once
// Helpers of the convolution emission tests: the emitters take the op's own plan (ops::Conv::plan), so a test states
// its window as the op's attributes and the weights' kernel extents, never as a second description of the geometry.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <janus/numeric/quant_params.hpp>
#include <janus/ops/conv.hpp>

namespace et {

/// A quantized Conv on the host, the side an emitted convolution is compared with: its operands' types, its output
/// type (the inferred shape, quantized as `qy`) and its int8 codes.
struct HostConv {
    std::vector<janus::ops::TensorType> types;
    janus::ops::TensorType out;
    std::vector<std::int8_t> codes;
};
inline HostConv host_conv(const std::vector<janus::Tensor>& ins, const janus::ops::Conv::Attrs& at,
                          const janus::numeric::QuantParams& qy) {
    HostConv h;
    for (const auto& t : ins) h.types.push_back(janus::ops::type_of(t));
    const auto shape = janus::ops::Conv::infer(h.types, at);
    REQUIRE_MESSAGE(shape.ok(), (shape.ok() ? std::string() : shape.error().message()));
    h.out = janus::ops::TensorType{janus::DType::i8, shape->shape, qy};
    const auto y = janus::ops::call<janus::ops::Conv>(std::span<const janus::Tensor>(ins), at, h.out);
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? std::string() : y.error().message()));
    h.codes = y->to_vector<std::int8_t>();
    return h;
}

/// A 2-D convolution window of a test: the weights' kernel extents and Conv's attributes.
struct ConvSpec {
    std::int64_t kh = 1, kw = 1;
    janus::ops::Conv::Attrs a;
};

/// Kernel kh x kw, strides (sh, sw), dilations (dh, dw), pads {top, left, bottom, right} (ONNX's order), groups.
inline ConvSpec conv_spec(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t dh,
                          std::int64_t dw, std::array<std::int64_t, 4> pads, std::int64_t groups = 1) {
    ConvSpec s{kh, kw, {}};
    s.a.strides = {sh, sw};
    s.a.dilations = {dh, dw};
    s.a.pads = {pads[0], pads[1], pads[2], pads[3]};
    s.a.group = groups;
    return s;
}

/// Square strides and dilations.
inline ConvSpec window(std::int64_t kh, std::int64_t kw, std::int64_t s, std::array<std::int64_t, 4> pads,
                       std::int64_t groups = 1, std::int64_t d = 1) {
    return conv_spec(kh, kw, s, s, d, d, pads, groups);
}

/// Conv's plan for int8 operands x [1, C, H, W] and w [Co, C / group, kh, kw] (per-tensor scales, zero points 0),
/// the output of the inferred shape: the plans of the refusal tests.
inline janus::ops::ConvPlan conv_plan(std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t Co,
                                      const ConvSpec& k) {
    using namespace janus;
    const auto q = [](float s) { return numeric::make_quant(DType::i8, s, 0).value(); };
    const ops::TensorType types[2] = {{DType::i8, Shape{1, C, H, W}, q(0.04f)},
                                      {DType::i8, Shape{Co, C / k.a.group, k.kh, k.kw}, q(0.02f)}};
    const auto shape = ops::Conv::infer(types, k.a);
    REQUIRE_MESSAGE(shape.ok(), (shape.ok() ? std::string() : shape.error().message()));
    const auto plan = ops::Conv::plan(types, k.a, ops::TensorType{DType::i8, shape->shape, q(0.5f)},
                                      numeric::default_rounding_mode);
    REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? std::string() : plan.error().message()));
    return *plan;
}

}  // namespace et
