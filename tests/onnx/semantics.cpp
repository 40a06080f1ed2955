// The reference engine on imported models against ONNX semantics (DequantizeLinear, the float op in float64,
// QuantizeLinear: scripts/make_onnx_models.py run_onnx_semantics, an independent numpy implementation). The bound:
// a quantized output may differ by a few steps of its scale, because Janus accumulates exactly in int32 and
// requantizes with a 31-bit fixed-point multiplier where ONNX rounds the float64 value once; each differing step of
// an intermediate tensor can move later ones. The measured maxima are printed and pinned below.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/io/tensor_npy.hpp>

#include "kernels.hpp"

namespace {

using namespace janus;

struct Case {
    const char* name;
    int inputs;
    double max_steps;  ///< the bound, in steps of the quantization that the output dequantizes (or absolute)
};

}  // namespace

TEST_CASE("the reference engine agrees with ONNX semantics on the QDQ fixtures, within the documented bound") {
    // qdq_float_tail ends in a float Softmax: its bound is absolute.
    const Case cases[] = {{"qdq_conv_relu", 1, 1},     {"qdq_uint8_add_sigmoid", 2, 1}, {"qdq_float_tail", 1, 1e-6},
                          {"mobilenet_v2_tiny", 1, 2}, {"qdq_conv_bn", 1, 1},           {"qdq_conv_relu_shared", 1, 1},
                          {"qdq_unet_tiny", 1, 1},     {"qdq_float_middle", 1, 2},      {"qdq_softmax_head", 1, 2}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        const std::string base = std::string("onnx/fixtures/") + c.name;
        const auto m = onnx::read_model_file(base + ".onnx");
        REQUIRE(m.ok());
        const auto g = graph::import_onnx(*m, base + ".onnx");
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
        std::vector<Tensor> in;
        for (int k = 0; k < c.inputs; ++k) {
            const auto a = io::read_npy_file(base + ".in" + std::to_string(k) + ".npy");
            REQUIRE(a.ok());
            in.push_back(io::to_tensor(*a).value());
        }
        const auto out = graph::run_reference(*g, in, janus_tools::kernel_by_name);
        REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().message()));
        const auto want = io::read_npy_file(base + ".out0.npy");
        REQUIRE(want.ok());
        const auto got = (*out)[0].to_vector<float>();
        const auto exp = want->values<float>();
        REQUIRE(got.size() == exp.size());
        // the output's step: the scale of the quantized value its DequantizeLinear reads (1 for a float output)
        double step = 1;
        for (const auto& n : g->nodes)
            if (n.outputs[0] == g->outputs[0] && n.op == "DequantizeLinear")
                step = g->value(n.inputs[0]).type.quant->scale();
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - exp[i]) / step);
        std::printf("%-24s %zu outputs, max difference %.4g %s\n", c.name, got.size(), worst,
                    step == 1 ? "(absolute)" : "steps");
        CHECK(worst <= c.max_steps);
    }
}

TEST_CASE("ConvInteger and MatMulInteger (integer_ops): the reference engine equals ONNX semantics exactly") {
    // int8 and uint8 inputs; zero points per tensor, per output channel, per row and per column, and omitted;
    // every output is int32 and must be equal, not close.
    const std::string base = "onnx/fixtures/integer_ops";
    const auto m = onnx::read_model_file(base + ".onnx");
    REQUIRE(m.ok());
    const auto g = graph::import_onnx(*m, base + ".onnx");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
    std::vector<Tensor> in;
    for (std::size_t k = 0; k < g->inputs.size(); ++k) {
        const auto a = io::read_npy_file(base + ".in" + std::to_string(k) + ".npy");
        REQUIRE(a.ok());
        in.push_back(io::to_tensor(*a).value());
        CHECK(in.back().dtype == g->value(g->inputs[k]).type.dtype);
    }
    const auto out = graph::run_reference(*g, in, janus_tools::kernel_by_name);
    REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().message()));
    REQUIRE(out->size() == 5);
    std::size_t values = 0;
    for (std::size_t k = 0; k < out->size(); ++k) {
        CAPTURE(k);
        const auto want = io::read_npy_file(base + ".out" + std::to_string(k) + ".npy");
        REQUIRE(want.ok());
        const Tensor& got = (*out)[k];
        REQUIRE(got.dtype == DType::i32);
        CHECK(got.shape() == io::to_tensor(*want).value().shape());
        CHECK(got.to_vector<std::int32_t>() == want->values<std::int32_t>());
        values += static_cast<std::size_t>(got.elements());
    }
    CHECK(values == 48 + 24 + 27 + 24 + 4);
}
