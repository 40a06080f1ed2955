// One definition, two kernels: a quantized Add followed by a Sigmoid, run by the host reference kernels and emitted
// for the Janus virtual NPU from the same op definitions, then simulated. The program prints the emitted code's
// size, the simulated cycles per unit, the emitter's debug log, and checks the two results are equal byte for byte
// (exit status 1 if not, or if the simulator reports a fault or a race).
#include <cstdio>
#include <cstring>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

using namespace janus;

int main() {
    const std::int64_t n = 56 * 56 * 24;  // a MobileNetV2 residual add
    const auto qa = numeric::make_quant(DType::i8, 0.08f, -4).value();
    const auto qb = numeric::make_quant(DType::i8, 0.05f, 9).value();
    const auto qs = numeric::make_quant(DType::i8, 0.12f, 0).value();
    const auto qo = numeric::make_quant(DType::i8, 1.0f / 256, -128).value();  // sigmoid's [0, 1)
    std::vector<std::int8_t> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    std::uint32_t x = 12345;
    for (auto& v : a) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
    for (auto& v : b) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);

    // Host reference: the op definitions' kernels.
    const auto sum =
        ops::call<ops::Add>({Tensor::from<std::int8_t>(Shape{n}, a, qa), Tensor::from<std::int8_t>(Shape{n}, b, qb)},
                            {}, ops::TensorType{DType::i8, Shape{n}, qs});
    const auto host = sum ? ops::call<ops::Sigmoid>({*sum}, {}, ops::TensorType{DType::i8, Shape{n}, qo}) : sum;
    if (!host) {
        std::printf("%s\n", host.error().message().c_str());
        return 1;
    }

    // NPU: the same definitions lowered (Add's plan -> vec.ew.add, Sigmoid's table -> lut.apply), through DRAM
    // regions input (a, b), scratch (the sum) and output.
    const emit::DramTensor A{2, 0, n}, B{2, static_cast<std::uint32_t>(A.padded()), n}, S{1, 0, n}, O{3, 0, n};
    emit::Builder builder("add_sigmoid");
    const auto rounding = janus::numeric::default_rounding_mode;  // what ops::call's default OpContext uses
    const ops::TensorType ta{DType::i8, Shape{n}, qa}, tb{DType::i8, Shape{n}, qb};
    const ops::TensorType ts{DType::i8, Shape{n}, qs}, to{DType::i8, Shape{n}, qo};
    const auto plan = ops::Add::plan(std::array{ta, tb}, {}, ts, rounding);
    Status st = plan ? emit::lower_binary<ops::Add::kind>(builder, *plan, A, B, S) : Status(plan.error());
    const auto table = ops::Sigmoid::plan(std::array{ts}, ops::NoAttrs{}, to, rounding);
    if (st) st = table ? emit::lower_lut(builder, **table, S, O) : Status(table.error());
    auto program = st ? builder.finish() : Result<emit::Program>(st.error());
    if (!program) {
        std::printf("%s\n", program.error().message().c_str());
        return 1;
    }
    vnpu::sim::Machine m;
    m.dram[0] = program->weights;
    m.dram[1].resize(static_cast<std::size_t>(S.padded()));
    m.dram[2].resize(static_cast<std::size_t>(2 * A.padded()));
    std::memcpy(m.dram[2].data(), a.data(), a.size());
    std::memcpy(m.dram[2].data() + B.offset, b.data(), b.size());
    m.dram[3].resize(static_cast<std::size_t>(O.padded()));
    const auto report = vnpu::sim::run(program->code, m);

    std::printf("Add + Sigmoid on %lld int8 elements\n", static_cast<long long>(n));
    std::printf("emitted: %zu instructions, %zu B of constants\n", program->code.size(), program->weights.size());
    for (const auto& line : builder.log()) std::printf("  log: %s\n", line.c_str());
    std::printf("%s", vnpu::sim::format_report(report, program->code).c_str());
    if (report.fault || !report.races.empty()) return 1;
    const auto want = host->to_vector<std::int8_t>();
    const bool same = std::memcmp(m.dram[3].data(), want.data(), want.size()) == 0;
    std::printf("NPU output %s the host reference (%lld bytes)\n", same ? "equals" : "DIFFERS FROM",
                static_cast<long long>(n));
    return same ? 0 : 1;
}
