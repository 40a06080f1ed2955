// A small quantized CNN emitted whole for the Janus virtual NPU, from the same op definitions the host reference
// kernels run: Conv 3x3/2 (3 -> 16) -> Relu -> depthwise 3x3 -> Conv 1x1 (16 -> 32) -> MaxPool 2x2/2 ->
// GlobalAveragePool -> fully connected 32 -> 10. Seven kernels in one program, chained through the DRAM scratch
// region in NHWC. The program prints each kernel's strategy (the emitter's debug log), the simulated cycles per unit,
// and checks the 10 logits equal the host reference byte for byte (exit status 1 if not, or on a fault or a race).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/emit/pool.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/matmul.hpp>
#include <janus/ops/pool.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

using namespace janus;

namespace {

std::uint32_t state = 2024;
std::int8_t next() { return static_cast<std::int8_t>((state = state * 1103515245u + 12345u) >> 24); }
std::vector<std::int8_t> bytes(std::int64_t n) {
    std::vector<std::int8_t> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = next();
    return v;
}
numeric::QuantParams q8(float s, std::int32_t z) { return numeric::make_quant(DType::i8, s, z).value(); }
/// An output scale that keeps about 3 standard deviations of a K-term int8 dot product inside int8.
float dot_scale(float sx, float sw, std::int64_t k) {
    return sx * sw * 74.0f * 74.0f * std::sqrt(static_cast<float>(k)) * 3.0f / 127.0f;
}
numeric::QuantParams per_channel(std::int64_t n, float s, const Shape& shape) {
    std::vector<float> sc(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = s * (0.75f + 0.5f * static_cast<float>(i % 5) / 4);
    return numeric::make_quant_per_axis(DType::i8, sc, std::vector<std::int32_t>(sc.size(), 0), 0, shape).value();
}
[[noreturn]] void fail(const Error& e) {
    std::printf("%s\n", e.message().c_str());
    std::exit(2);
}
template <class T>
T need(Result<T> r) {
    if (!r) fail(r.error());
    return std::move(*r);
}
void need(const Status& s) {
    if (!s) fail(s.error());
}

}  // namespace

int main() {
    // ---- the network's constants and quantization
    const auto qx = q8(0.04f, -5);
    const Tensor x = Tensor::from<std::int8_t>(Shape{1, 3, 16, 16}, bytes(3 * 16 * 16), qx);
    const Tensor w1 =
        Tensor::from<std::int8_t>(Shape{16, 3, 3, 3}, bytes(16 * 27), per_channel(16, 0.02f, {16, 3, 3, 3}));
    const auto q1 = q8(dot_scale(0.04f, 0.02f, 27), -10);
    const Tensor w2 =
        Tensor::from<std::int8_t>(Shape{16, 1, 3, 3}, bytes(16 * 9), per_channel(16, 0.03f, {16, 1, 3, 3}));
    const auto q2 = q8(dot_scale(q1.scale(), 0.03f, 9) / 2, 3);  // after Relu: about half the spread
    const Tensor w3 =
        Tensor::from<std::int8_t>(Shape{32, 16, 1, 1}, bytes(32 * 16), per_channel(32, 0.02f, {32, 16, 1, 1}));
    const auto q3 = q8(dot_scale(q2.scale(), 0.02f, 16), -2);
    const auto q5 = q8(q3.scale() / 4, 0);  // the average of 16 values spreads less
    const Tensor w6 = Tensor::from<std::int8_t>(Shape{32, 10}, bytes(320), q8(0.02f, 0));
    const auto q6 = q8(dot_scale(q5.scale(), 0.02f, 32), 1);

    // ---- host reference: the op definitions' kernels, NCHW
    ops::Conv::Attrs c1;
    c1.strides = {2, 2}, c1.pads = {1, 1, 1, 1};
    ops::Conv::Attrs dw;
    dw.group = 16, dw.pads = {1, 1, 1, 1};
    ops::MaxPool::Attrs mp;
    mp.kernel_shape = {2, 2}, mp.strides = {2, 2};
    const auto y1 = need(ops::call<ops::Conv>({x, w1}, c1, ops::TensorType{DType::i8, Shape{1, 16, 8, 8}, q1}));
    const auto y2 = need(ops::call<ops::Relu>({y1}, {}, ops::TensorType{DType::i8, Shape{1, 16, 8, 8}, q1}));
    const auto y3 = need(ops::call<ops::Conv>({y2, w2}, dw, ops::TensorType{DType::i8, Shape{1, 16, 8, 8}, q2}));
    const auto y4 = need(ops::call<ops::Conv>({y3, w3}, {}, ops::TensorType{DType::i8, Shape{1, 32, 8, 8}, q3}));
    const auto y5 = need(ops::call<ops::MaxPool>({y4}, mp, ops::TensorType{DType::i8, Shape{1, 32, 4, 4}, q3}));
    const auto y6 =
        need(ops::call<ops::GlobalAveragePool>({y5}, {}, ops::TensorType{DType::i8, Shape{1, 32, 1, 1}, q5}));
    const Tensor y6m = Tensor::from<std::int8_t>(Shape{1, 32}, y6.to_vector<std::int8_t>(), q5);
    const auto y7 = need(ops::call<ops::MatMul>({y6m, w6}, {}, ops::TensorType{DType::i8, Shape{1, 10}, q6}));

    // ---- the NPU program: the same definitions lowered, NHWC in DRAM (input, scratch, output regions)
    using emit::DramImage;
    const DramImage X{2, 0, 16, 16, 3, 16}, A1{1, 0, 8, 8, 16, 16}, A2{1, 1024, 8, 8, 16, 16},
        A3{1, 2048, 8, 8, 16, 16}, A4{1, 3072, 8, 8, 32, 32}, A5{1, 5120, 4, 4, 32, 32}, A6{1, 5632, 1, 1, 32, 32};
    const emit::DramMatrix F{1, 5632, 1, 32, 32}, Y{3, 0, 1, 10, 16};
    const auto tx = ops::type_of(x);
    emit::Builder b("convnet");
    const auto rounding = janus::numeric::default_rounding_mode;
    const ops::TensorType conv1[2] = {tx, ops::type_of(w1)};
    need(emit::lower_conv(b, need(ops::Conv::plan(conv1, c1, ops::type_of(y1), rounding)), X,
                          w1.to_vector<std::int8_t>(), {}, A1));
    need(emit::lower_lut(b, *need(ops::Relu::plan(std::array{ops::type_of(y1)}, ops::NoAttrs{}, ops::type_of(y2), rounding)),
                         emit::DramTensor{1, 0, 8 * 8 * 16},
                         emit::DramTensor{1, 1024, 8 * 8 * 16}));
    const ops::TensorType conv2[2] = {ops::type_of(y2), ops::type_of(w2)};
    need(emit::lower_depthwise(b, need(ops::Conv::plan(conv2, dw, ops::type_of(y3), rounding)), A2,
                               w2.to_vector<std::int8_t>(), {}, A3));
    const ops::TensorType conv3[2] = {ops::type_of(y3), ops::type_of(w3)};
    need(emit::lower_conv(b, need(ops::Conv::plan(conv3, {}, ops::type_of(y4), rounding)), A3,
                          w3.to_vector<std::int8_t>(), {}, A4));
    need(emit::lower_max_pool(b, need(ops::MaxPool::plan(std::array{ops::type_of(y4)}, mp, ops::type_of(y5), rounding)),
                              A4, A5));
    need(emit::lower_global_average_pool(
        b, need(ops::GlobalAveragePool::plan(std::array{ops::type_of(y5)}, {}, ops::type_of(y6), rounding)), A5, A6));
    const ops::TensorType fc[2] = {ops::type_of(y6m), ops::type_of(w6)};
    need(emit::lower_matmul(b, need(ops::MatMul::plan(fc, {}, ops::type_of(y7), rounding)), F,
                            w6.to_vector<std::int8_t>(), 32, 10, Y));
    const auto program = need(b.finish());

    vnpu::sim::Machine m;
    m.dram[0] = program.weights;
    m.dram[1].resize(5632 + 32);
    m.dram[2].assign(16 * 16 * 16, 0);
    const auto xv = x.to_vector<std::int8_t>();
    for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t i = 0; i < 256; ++i)
            m.dram[2][static_cast<std::size_t>(i * 16 + c)] =
                static_cast<std::uint8_t>(xv[static_cast<std::size_t>(c * 256 + i)]);
    m.dram[3].resize(16);
    const auto report = vnpu::sim::run(program.code, m);

    std::printf("a 7-kernel CNN on 16x16x3 int8, emitted whole for the vnpu\n");
    std::printf("emitted: %zu instructions, %zu B of constants\n", program.code.size(), program.weights.size());
    for (const auto& line : b.log()) std::printf("  log: %s\n", line.c_str());
    std::printf("%s", vnpu::sim::format_report(report, program.code).c_str());
    if (report.fault || !report.races.empty()) return 1;
    const auto want = y7.to_vector<std::int8_t>();
    std::string logits;
    for (const auto v : want) logits += " " + std::to_string(v);
    const bool same = std::memcmp(m.dram[3].data(), want.data(), want.size()) == 0;
    std::printf("host logits:%s\nNPU logits %s the host reference\n", logits.c_str(), same ? "equal" : "DIFFER FROM");
    return same ? 0 : 1;
}
