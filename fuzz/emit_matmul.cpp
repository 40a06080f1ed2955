// Fuzz target: differential verification of the MatMul lowering (emit/matmul.hpp). The input chooses the shape, the
// quantization, the tile caps and the data; the target emits the kernel, runs it on the simulator and compares with
// ops::call<ops::MatMul>.
//
// Input: bytes 0..2 M (1..64), K (1..320), N (1..200) as (byte % range) + 1 with K = byte * 5 / 4 + 1; byte 3 A's zero
// point; byte 4 per-column weight scales if odd; bytes 5..6 the A and output scale exponents; bytes 7..8 M and N tile
// caps (0 = none); the rest seeds the data.
// Properties (a __builtin_trap() when broken): whenever the host kernel accepts the problem, the lowering succeeds,
// the simulated run ends at HALT with no fault and no race, and Y equals the host's bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <janus/emit/matmul.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "emit_matmul: property broken: %s\n", what);
        __builtin_trap();
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const auto at = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
    const std::int64_t M = at(0) % 64 + 1, K = at(1) * 5 / 4 + 1, N = at(2) % 200 + 1;
    const std::int64_t Kp = (K + 15) / 16 * 16, Np = (N + 15) / 16 * 16;
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 9; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    const auto next = [&] { return static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24); };
    std::vector<std::int8_t> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(K * N));
    for (auto& v : a) v = next();
    for (auto& v : w) v = next();
    const auto qa = numeric::make_quant(DType::i8, std::ldexp(1.0f, (at(5) % 12) - 10), static_cast<std::int8_t>(at(3)));
    std::vector<float> scales(static_cast<std::size_t>(N));
    for (std::size_t i = 0; i < scales.size(); ++i) scales[i] = std::ldexp(1.0f + static_cast<float>((i * 7 + at(4)) % 16) / 16, -6);
    const auto qb = at(4) % 2 ? numeric::make_quant_per_axis(DType::i8, scales, std::vector<std::int32_t>(scales.size(), 0), 1, Shape{K, N})
                              : numeric::make_quant(DType::i8, scales[0], 0);
    const auto qy = numeric::make_quant(DType::i8, std::ldexp(1.0f, (at(6) % 16) - 8), 0);
    if (!qa.ok() || !qb.ok() || !qy.ok()) return 0;
    const ops::TensorType types[2] = {{DType::i8, Shape{M, K}, *qa}, {DType::i8, Shape{K, N}, *qb}};
    const ops::TensorType out{DType::i8, Shape{M, N}, *qy};
    const auto host = ops::call<ops::MatMul>({Tensor::from<std::int8_t>(Shape{M, K}, a, *qa), Tensor::from<std::int8_t>(Shape{K, N}, w, *qb)},
                                             {}, out);
    if (!host.ok()) return 0;  // a problem the host refuses (no multiplier for the ratio) is not the lowering's
    const auto plan = ops::MatMul::plan(types, out);
    check(plan.ok(), "plan");
    emit::Builder b("fuzz");
    const emit::MatmulOptions opt{16 * (at(8) % 8), at(7) % 16};
    check(emit::lower_matmul(b, *plan, {2, 0, M, K, Kp}, w, K, N, {3, 0, M, N, Np}, opt).ok(), "lowering accepted");
    auto p = b.finish();
    check(p.ok(), "finish");
    vnpu::sim::Machine m;
    m.dram[0] = p->weights;
    m.dram[2].assign(static_cast<std::size_t>(M * Kp), 0x77);
    for (std::int64_t r = 0; r < M; ++r)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(r * Kp)], &a[static_cast<std::size_t>(r * K)], static_cast<std::size_t>(K));
    m.dram[3].resize(static_cast<std::size_t>(M * Np));
    const auto r = vnpu::sim::run(p->code, m);
    check(!r.fault, "no fault");
    check(r.races.empty(), "no race");
    const auto want = host->to_vector<std::int8_t>();
    for (std::int64_t i = 0; i < M; ++i)
        check(std::memcmp(&m.dram[3][static_cast<std::size_t>(i * Np)], &want[static_cast<std::size_t>(i * N)], static_cast<std::size_t>(N)) == 0,
              "bit-exact against the host kernel");
    return 0;
}
