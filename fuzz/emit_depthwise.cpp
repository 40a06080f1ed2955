// Fuzz target: differential verification of the depthwise lowering (emit/depthwise.hpp) against ops::call<ops::Conv>
// with group = C (NCHW on the host, NHWC on the vnpu).
//
// Input: bytes 0..4 C (1..48), H (1..12), W (1..20), kh (1..5), kw (1..5); bytes 5..8 pads top, left, bottom, right
// (0..kernel extent); byte 9 the input zero point; byte 10 bias on if odd; byte 11 the output scale exponent; the rest
// seeds the data.
// Properties (a __builtin_trap() when broken): whenever the host kernel accepts the problem, the lowering succeeds,
// the simulated run ends at HALT with no fault and no race, and the output equals the host's bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <janus/emit/depthwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "emit_depthwise: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const auto at = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
    const std::int64_t C = at(0) % 48 + 1, H = at(1) % 12 + 1, W = at(2) % 20 + 1, kh = at(3) % 5 + 1, kw = at(4) % 5 + 1;
    const std::array<std::int64_t, 4> pads = {at(5) % kh, at(6) % kw, at(7) % kh, at(8) % kw};
    const std::int64_t Ho = H + pads[0] + pads[2] - kh + 1, Wo = W + pads[1] + pads[3] - kw + 1;
    if (Ho < 1 || Wo < 1) return 0;
    const std::int64_t Cp = (C + 15) / 16 * 16;
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 12; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    const auto next = [&] { return static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24); };
    std::vector<std::int8_t> img(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(C * kh * kw));
    for (auto& v : img) v = next();
    for (auto& v : w) v = next();
    std::vector<std::int32_t> bias;
    if (at(10) % 2)
        for (std::int64_t c = 0; c < C; ++c) bias.push_back(next() * 37);
    std::vector<float> sw(static_cast<std::size_t>(C));
    for (std::size_t c = 0; c < sw.size(); ++c) sw[c] = std::ldexp(1.0f + static_cast<float>(c % 8) / 8, -6);
    const auto qx = numeric::make_quant(DType::i8, 0.03f, static_cast<std::int8_t>(at(9)));
    const auto qw = numeric::make_quant_per_axis(DType::i8, sw, std::vector<std::int32_t>(sw.size(), 0), 0, Shape{C, 1, kh, kw});
    const auto qy = numeric::make_quant(DType::i8, std::ldexp(1.0f, at(11) % 10 - 6), 1);
    if (!qx.ok() || !qw.ok() || !qy.ok()) return 0;
    std::vector<Tensor> ins{Tensor::from<std::int8_t>(Shape{1, C, H, W}, img, *qx), Tensor::from<std::int8_t>(Shape{C, 1, kh, kw}, w, *qw)};
    if (!bias.empty()) ins.push_back(Tensor::from<std::int32_t>(Shape{C}, bias));
    ops::Conv::Attrs attrs;
    attrs.group = C;
    attrs.pads = {pads[0], pads[1], pads[2], pads[3]};
    const ops::TensorType out{DType::i8, Shape{1, C, Ho, Wo}, *qy};
    const auto host = ops::call<ops::Conv>(std::span<const Tensor>(ins), attrs, out);
    if (!host.ok()) return 0;  // a problem the host refuses is not the lowering's
    const auto plan = ops::plan_conv_quant(ops::type_of(ins[0]), ops::type_of(ins[1]), out, C, false, "fuzz");
    check(plan.ok(), "plan");
    emit::Builder b("fuzz");
    const emit::DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    check(emit::lower_depthwise(b, *plan, X, w, kh, kw, pads, bias, Y).ok(), "lowering accepted");
    auto p = b.finish();
    check(p.ok(), "finish");
    vnpu::sim::Machine m;
    m.dram[0] = p->weights;
    m.dram[2].assign(static_cast<std::size_t>(H * W * Cp), 0x44);
    for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t i = 0; i < H * W; ++i)
            m.dram[2][static_cast<std::size_t>(i * Cp + c)] = static_cast<std::uint8_t>(img[static_cast<std::size_t>(c * H * W + i)]);
    m.dram[3].resize(static_cast<std::size_t>(Ho * Wo * Cp));
    const auto r = vnpu::sim::run(p->code, m);
    check(!r.fault, "no fault");
    check(r.races.empty(), "no race");
    const auto want = host->to_vector<std::int8_t>();
    for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t i = 0; i < Ho * Wo; ++i)
            check(static_cast<std::int8_t>(m.dram[3][static_cast<std::size_t>(i * Cp + c)]) == want[static_cast<std::size_t>(c * Ho * Wo + i)],
                  "bit-exact against the host kernel");
    return 0;
}
