// Fuzz target: differential verification of the elementwise lowerings (emit/elementwise.hpp). The input chooses the
// op, the element count, the quantization parameters, the tile size and the data; the target emits the kernel,
// runs it on the simulator and compares with the host kernel (ops::call).
//
// Input: byte 0 op (0..4 binary Add Sub Mul Min Max, 5.. unary Relu Sigmoid Tanh Abs Neg HardSwish Gelu), bytes 1..2
// element count (1..4096), bytes 3..8 three (scale exponent, zero point) pairs, byte 9 tile (16 B steps; 0 = free
// LMEM), the rest seeds the data.
// Properties (a __builtin_trap() when broken): whenever the host kernel accepts the parameters, the lowering
// succeeds, the simulated run ends at HALT with no fault and no race, and its output equals the host's bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {
using namespace janus;

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "emit_elementwise: property broken: %s\n", what);
        __builtin_trap();
    }
}

struct Input {
    const std::uint8_t* data;
    std::size_t size;
    std::uint8_t at(std::size_t i) const { return i < size ? data[i] : 0; }
};

/// Emit with `lower`, run, and compare with `want`.
template <class Lower>
void verify(std::int64_t n, const std::vector<std::vector<std::int8_t>>& ins, const std::vector<std::int8_t>& want,
            Lower&& lower) {
    const std::int64_t padded = (n + 15) / 16 * 16;
    vnpu::sim::Machine m;
    m.dram[2].resize(static_cast<std::size_t>(padded) * ins.size());
    for (std::size_t k = 0; k < ins.size(); ++k)
        std::memcpy(m.dram[2].data() + k * static_cast<std::size_t>(padded), ins[k].data(), ins[k].size());
    m.dram[3].resize(static_cast<std::size_t>(padded));
    emit::Builder b("fuzz");
    check(lower(b, static_cast<std::uint32_t>(padded)).ok(), "lowering accepted what the host kernel accepted");
    auto p = b.finish();
    check(p.ok(), "finish");
    m.dram[0] = p->weights;
    const auto r = vnpu::sim::run(p->code, m);
    check(!r.fault, "no fault");
    check(r.races.empty(), "no race");
    check(std::memcmp(m.dram[3].data(), want.data(), want.size()) == 0, "bit-exact against the host kernel");
}

template <class Op, expr::BinOp Kind>
void binary(std::int64_t n, const numeric::QuantParams (&q)[3], std::int64_t tile, const std::vector<std::int8_t>& a,
            const std::vector<std::int8_t>& c) {
    const auto host = ops::call<Op>({Tensor::from<std::int8_t>(Shape{n}, a, q[0]), Tensor::from<std::int8_t>(Shape{n}, c, q[1])},
                                    {}, ops::TensorType{DType::i8, Shape{n}, q[2]});
    if (!host.ok()) return;  // parameters the host refuses (a ratio no multiplier holds) are not the lowering's
    const auto plan = ops::plan_binary_quant<Kind>(q[0], q[1], q[2], "fuzz");
    check(plan.ok(), "plan");
    verify(n, {a, c}, host->template to_vector<std::int8_t>(), [&](emit::Builder& b, std::uint32_t padded) {
        return emit::lower_binary<Kind>(b, *plan, {2, 0, n}, {2, padded, n}, {3, 0, n}, {tile});
    });
}

template <class Op>
void unary(std::int64_t n, const numeric::QuantParams (&q)[3], std::int64_t tile, const std::vector<std::int8_t>& a) {
    const auto host = ops::call<Op>({Tensor::from<std::int8_t>(Shape{n}, a, q[0])}, typename Op::Attrs{}, ops::TensorType{DType::i8, Shape{n}, q[2]});
    if (!host.ok()) return;
    const auto table = Op::table(q[0], q[2], typename Op::Attrs{});
    verify(n, {a}, host->template to_vector<std::int8_t>(), [&](emit::Builder& b, std::uint32_t) {
        return emit::lower_lut(b, *table, {2, 0, n}, {3, 0, n}, {tile});
    });
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const Input in{data, size};
    const int op = in.at(0) % 12;
    const std::int64_t n = 1 + ((in.at(1) | in.at(2) << 8) % 4096);
    numeric::QuantParams q[3];
    for (int k = 0; k < 3; ++k) {
        const float scale = std::ldexp(1.0f + static_cast<float>(in.at(3 + 2 * k) & 15) / 16.0f, (in.at(3 + 2 * k) >> 4) - 10);
        auto p = numeric::make_quant(DType::i8, scale, static_cast<std::int8_t>(in.at(4 + 2 * k)));
        if (!p.ok()) return 0;
        q[k] = *p;
    }
    const std::int64_t tile = 16 * static_cast<std::int64_t>(in.at(9));
    std::vector<std::int8_t> a(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 10; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    for (auto& v : a) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
    for (auto& v : c) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
    switch (op) {
        case 0: binary<ops::Add, expr::BinOp::add>(n, q, tile, a, c); break;
        case 1: binary<ops::Sub, expr::BinOp::sub>(n, q, tile, a, c); break;
        case 2: binary<ops::Mul, expr::BinOp::mul>(n, q, tile, a, c); break;
        case 3: binary<ops::Min, expr::BinOp::min>(n, q, tile, a, c); break;
        case 4: binary<ops::Max, expr::BinOp::max>(n, q, tile, a, c); break;
        case 5: unary<ops::Relu>(n, q, tile, a); break;
        case 6: unary<ops::Sigmoid>(n, q, tile, a); break;
        case 7: unary<ops::Tanh>(n, q, tile, a); break;
        case 8: unary<ops::Abs>(n, q, tile, a); break;
        case 9: unary<ops::Neg>(n, q, tile, a); break;
        case 10: unary<ops::HardSwish>(n, q, tile, a); break;
        default: unary<ops::Gelu>(n, q, tile, a); break;
    }
    return 0;
}
