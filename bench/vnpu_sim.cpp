// Simulator throughput (vnpu/sim/simulator.hpp), per second of HOST time:
//   SimMac    a loop of `mac.mma` (m x k x n per instruction): simulated int8 MACs per second (counter MAC/s;
//             the target is >= 1 G), race detector on (arg 1) and off (arg 0);
//   SimVecRq  a loop of `vec.rq` over 16 x 1024 int32 lanes: elements per second;
//   SimSeq    a loop of `addi`: SEQ instructions per second (the dispatch loop's overhead);
//   SimFc     examples/vnpu/fc.s end to end (3 DMA, 1 MAC, 1 VEC instruction): runs per second.
// Run: cmake --preset bench -DJANUS_WERROR=OFF && cmake --build --preset bench --target janus_bench_vnpu_sim
//      ./build/bench/janus_bench_vnpu_sim
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <janus/vnpu/asm.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {

using namespace janus;
using namespace janus::vnpu;

std::vector<Instr> program(const std::string& text) {
    auto p = assemble(text, "bench.s");
    if (!p.ok()) throw p.error();
    return *p;
}

void fill(std::vector<std::uint8_t>& v, std::uint32_t seed) {
    for (auto& b : v) b = static_cast<std::uint8_t>((seed = seed * 1103515245u + 12345u) >> 24);
}

void run_or_throw(benchmark::State& state, const std::vector<Instr>& prog, sim::Machine& m, const sim::Options& opt,
                  std::uint64_t& macs) {
    const sim::Report r = sim::run(prog, m, opt);
    if (r.fault) {
        state.SkipWithError(r.fault->message().c_str());
        return;
    }
    macs += r.macs;
}

void SimMac(benchmark::State& state, int M, int K, int N) {
    const int reps = 16;
    const auto prog = program("li r1, 0\nli r2, 0x10000\nli r3, 0x80000\nmac.cfg " + std::to_string(M) + ", " +
                              std::to_string(K) + ", " + std::to_string(N) + ", " + std::to_string(K) +
                              "\nloop " + std::to_string(reps) + ", 1\nmac.mma r3, r1, r2, -3\nhalt\n");
    sim::Machine m;
    fill(m.lmem, 1);
    sim::Options opt;
    opt.detect_races = state.range(0) != 0;
    std::uint64_t macs = 0;
    for (auto _ : state) run_or_throw(state, prog, m, opt, macs);
    state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(SimMac, m64_k512_n256, 64, 512, 256)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(SimMac, m16_k256_n256, 16, 256, 256)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(SimMac, m16_k64_n64, 16, 64, 64)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void SimVecRq(benchmark::State& state) {
    const int C = 1024, R = 16, reps = 16;
    const auto prog = program("li r1, 0x10000\nli r2, 0x80000\nli r3, 0x30000\nloop " + std::to_string(reps) +
                              ", 1\nvec.rq r1, r2, r3, " + std::to_string(C) + ", " + std::to_string(R) + "\nhalt\n");
    sim::Machine m;
    fill(m.acc, 2);
    std::vector<std::uint8_t>& t = m.lmem;
    std::memset(&t[0x30000], 0, 16 + 16 * C);
    const std::int32_t header[3] = {3, -128, 127};
    std::memcpy(&t[0x30000], header, sizeof header);
    for (int c = 0; c < C; ++c) {
        const std::int32_t e[2] = {c * 7 - 3000, (1 << 30) + c * 1000};
        std::memcpy(&t[0x30000 + 16 + 16 * static_cast<std::size_t>(c)], e, sizeof e);
        t[0x30000 + 16 + 16 * static_cast<std::size_t>(c) + 8] = static_cast<std::uint8_t>(31 + 8 + c % 4);
    }
    sim::Options opt;
    opt.detect_races = state.range(0) != 0;
    std::uint64_t macs = 0;
    for (auto _ : state) run_or_throw(state, prog, m, opt, macs);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * reps * C * R);
}
BENCHMARK(SimVecRq)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void SimSeq(benchmark::State& state) {
    const auto prog = program("li r1, 0\nloop 10000, 1\naddi r1, r1, 3\nhalt\n");
    sim::Machine m;
    std::uint64_t macs = 0;
    for (auto _ : state) run_or_throw(state, prog, m, sim::Options{}, macs);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 10003);
}
BENCHMARK(SimSeq)->Unit(benchmark::kMillisecond);

std::vector<std::uint8_t> read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void SimFc(benchmark::State& state) {
    const std::string dir = std::string(JANUS_SOURCE_DIR) + "/examples/vnpu/";
    const auto text = read(dir + "fc.s");
    const auto prog = program(std::string(text.begin(), text.end()));
    sim::Machine init;
    init.dram[0] = read(dir + "weights.bin");
    init.dram[2] = read(dir + "input.bin");
    init.dram[3].assign(512, 0);
    std::uint64_t macs = 0;
    for (auto _ : state) {
        sim::Machine m = init;
        run_or_throw(state, prog, m, sim::Options{}, macs);
    }
    state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsRate);
}
BENCHMARK(SimFc)->Unit(benchmark::kMicrosecond);

}  // namespace
