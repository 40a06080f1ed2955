#pragma once
// Shared by the emission fuzz targets (fuzz/emit_diff.cpp, fuzz/emit_diff_data.cpp): the property check, a clean
// refusal, a clean run, and the three comparisons (contiguous tensors, NHWC images, tensors stored as rows of their
// innermost axis). Whenever the host kernel accepts a problem, the lowering must succeed (or refuse by one of the
// rules the caller allows, leaving the builder untouched), the simulated run must end at HALT with no fault and no
// race, and the output must equal the host's bytes; a broken property is a __builtin_trap().
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/depthwise.hpp>
#include <janus/emit/stream.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace emit_fuzz {
inline void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "emit fuzz: property broken: %s\n", what);
        __builtin_trap();
    }
}
using namespace janus;

struct Input {
    const std::uint8_t* data;
    std::size_t size;
    std::uint8_t at(std::size_t i) const { return i < size ? data[i] : 0; }
};

using Rules = std::vector<std::string>;

/// Run `lower(b)` on the fresh builder `b`: true when it succeeds. A refusal must name one of `allowed` (rules the
/// lowering's header documents for problems the host runs), with an input and a sentence, and leave `b` unchanged.
template <class Lower>
bool lowered(emit::Builder& b, Lower&& lower, const Rules& allowed) {
    const Status st = lower(b);
#ifdef JANUS_FUZZ_TRACE  // which problems reach the lowering, and how it answers
    std::fprintf(stderr, "emit_diff: %s\n", st.ok() ? "lowered" : st.error().message().c_str());
#endif
    if (st.ok()) return true;
    const Error& e = st.error();
    const bool documented = std::find(allowed.begin(), allowed.end(), e.rule) != allowed.end();
    if (!documented) std::fprintf(stderr, "emit_diff: refused: %s\n", e.message().c_str());
    check(documented, "the lowering accepts what the host kernel accepts, or refuses by a documented rule");
    check(!e.input.empty() && !e.detail.empty(), "a refusal names its input and says why");
    check(b.size() == 0 && b.weights().empty() && b.holders().empty() && b.status().ok(),
          "a refusal leaves the builder unchanged");
    return false;
}

/// Finish `b` and run it on `m` (region 0: its constants): it must end at HALT with no fault and no race.
inline void run_program(emit::Builder& b, vnpu::sim::Machine& m) {
    auto p = b.finish();
    check(p.ok(), "finish");
    m.dram[0] = p->weights;
    const auto r = vnpu::sim::run(p->code, m);
    check(!r.fault, "no fault");
    check(r.races.empty(), "no race");
}

std::int64_t round16(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 15) / 16 * 16; }

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
    lowered(b, [&](emit::Builder& bb) { return lower(bb, static_cast<std::uint32_t>(padded)); }, {});
    run_program(b, m);
    check(std::memcmp(m.dram[3].data(), want.data(), want.size()) == 0, "bit-exact against the host kernel");
}

/// Run `lower` on a machine holding the NCHW image `img` as NHWC at x's pitch (padding channels hold 0x44), and
/// compare y (NHWC at its pitch) with the host's NCHW `want`. `scratch`: bytes of DRAM region 1. `allowed`: the
/// rules by which the lowering may refuse the problem.
template <class Lower>
void verify_image(const std::vector<std::int8_t>& img, const emit::DramImage& x, const emit::DramImage& y,
                  const std::vector<std::int8_t>& want, Lower&& lower, std::int64_t scratch = 0,
                  const Rules& allowed = {}) {
    emit::Builder b("fuzz");
    if (!lowered(b, lower, allowed)) return;
    vnpu::sim::Machine m;
    m.dram[1].assign(static_cast<std::size_t>(scratch), 0x55);
    m.dram[2].assign(static_cast<std::size_t>(x.h * x.w * x.cpitch), 0x44);
    for (std::int64_t c = 0; c < x.c; ++c)
        for (std::int64_t i = 0; i < x.h * x.w; ++i)
            m.dram[2][static_cast<std::size_t>(i * x.cpitch + c)] =
                static_cast<std::uint8_t>(img[static_cast<std::size_t>(c * x.h * x.w + i)]);
    m.dram[3].resize(static_cast<std::size_t>(y.h * y.w * y.cpitch));
    run_program(b, m);
    for (std::int64_t c = 0; c < y.c; ++c)
        for (std::int64_t i = 0; i < y.h * y.w; ++i)
            check(static_cast<std::int8_t>(m.dram[3][static_cast<std::size_t>(i * y.cpitch + c)]) ==
                      want[static_cast<std::size_t>(c * y.h * y.w + i)],
                  "bit-exact against the host kernel");
}

/// The family's data: FNV-1a of data[from..) seeds an LCG.
struct Stream {
    std::uint32_t x = 2166136261u;
    Stream(const Input& in, std::size_t from) {
        for (std::size_t i = from; i < in.size; ++i) x = (x ^ in.data[i]) * 16777619u;
    }
    std::vector<std::int8_t> bytes(std::int64_t n) {
        std::vector<std::int8_t> v(static_cast<std::size_t>(n));
        for (auto& e : v) e = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
        return v;
    }
};

inline std::optional<numeric::QuantParams> quant(float scale, std::uint8_t zp) {
    auto q = numeric::make_quant(DType::i8, scale, static_cast<std::int8_t>(zp));
    return q.ok() ? std::optional{*q} : std::nullopt;
}

/// A scale ratio from one byte: (1 + low 3 bits / 8) x 2^(bits 3..5 - 4).
inline float ratio(std::uint8_t b) { return std::ldexp(1.0f + static_cast<float>(b & 7) / 8, (b >> 3) % 8 - 4); }

}  // namespace emit_fuzz
