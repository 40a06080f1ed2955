#pragma once
// Shared by the reduction lowering tests (emit/reduce.hpp): emit -> simulate -> compare with ops::call<Op> bit for
// bit on the same row-major tensor (rows of the innermost axis at a 16-B pitch in DRAM).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/reduce.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

namespace rt {

using namespace janus;
using namespace janus::emit;

inline numeric::QuantParams quant(float s, std::int32_t zp) { return numeric::make_quant(DType::i8, s, zp).value(); }

inline ops::ReduceAttrs attrs(std::vector<std::int64_t> axes, std::int64_t keepdims, std::int64_t noop = 0) {
    ops::ReduceAttrs a;
    a.axes = std::move(axes);
    a.keepdims = keepdims;
    a.noop_with_empty_axes = noop;
    return a;
}

inline std::int64_t pitch_of(const Shape& s) {
    return round16(s.size() == 0 ? 1 : std::max<std::int64_t>(1, s[s.size() - 1]));
}
inline std::int64_t rows_of(const Shape& s) {
    std::int64_t n = 1;
    for (int k = 0; k + 1 < s.size(); ++k) n *= s[k];
    return n;
}

/// What one run gives: the host's and the vnpu's outputs (row-major), the debug log and the report.
struct Outcome {
    std::vector<std::int8_t> want, got;
    std::vector<std::string> log;
    vnpu::sim::Report report;
};

/// uniform: every int8 value; extreme: mostly `edge` (95%), else uniform.
enum class Data { uniform, extreme };

using Lower = std::function<Status(Builder&, const ops::ReducePlan&, const DramRows&, const DramRows&)>;
using Mutate = std::function<void(std::vector<vnpu::Instr>&)>;
using PlanEdit = std::function<void(ops::ReducePlan&)>;

/// Emit a reduction `Op` of an int8 tensor of shape `shape`, run it and return both outputs. qo: the output's
/// quantization (max / min: the inferred one when empty). `edit` changes the plan handed to the lowering (not the
/// host's); `mutate` changes the emitted program.
template <class Op>
Outcome run(const Shape& shape, const ops::ReduceAttrs& a, numeric::QuantParams qi,
            std::optional<numeric::QuantParams> qo, std::uint32_t seed, const Lower& lower, Data data = Data::uniform,
            std::int8_t edge = 0, const PlanEdit& edit = {}, const Mutate& mutate = {}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127), percent(0, 99);
    std::vector<std::int8_t> x(static_cast<std::size_t>(element_count(shape)));
    for (auto& v : x) v = static_cast<std::int8_t>(data == Data::extreme && percent(rng) < 95 ? edge : byte(rng));
    const Tensor tx = Tensor::from<std::int8_t>(shape, x, qi);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = Op::infer(std::span<const ops::TensorType>(&tin, 1), a);
    REQUIRE_MESSAGE(inferred.ok(), (inferred.ok() ? std::string() : inferred.error().message()));
    const ops::TensorType out{DType::i8, inferred->shape, qo ? qo : inferred->quant};
    const auto host = ops::call<Op>({tx}, a, out);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    auto plan = Op::plan(std::span(&tin, 1), a, out, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    if (edit) edit(*plan);
    Outcome o;
    o.want = host->template to_vector<std::int8_t>();

    const Shape& ys = out.shape;
    const std::int64_t Px = pitch_of(shape), Py = pitch_of(ys), Cx = shape.size() ? shape[shape.size() - 1] : 1;
    const std::int64_t Cy = ys.size() ? ys[ys.size() - 1] : 1;
    Builder b("reduce");
    const DramRows X{2, 0, shape, Px}, Y{3, 0, ys, Py};
    const Status st = lower(b, *plan, X, Y);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    o.log = b.log();
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(rows_of(shape) * Px), 0x5a);  // padding lanes hold anything
    for (std::int64_t r = 0; r < rows_of(shape); ++r)
        for (std::int64_t c = 0; c < Cx; ++c)
            m.dram[2][static_cast<std::size_t>(r * Px + c)] =
                static_cast<std::uint8_t>(x[static_cast<std::size_t>(r * Cx + c)]);
    m.dram[3].assign(static_cast<std::size_t>(rows_of(ys) * Py), 0xee);
    o.report = et::run(b, m, mutate);
    o.got.resize(o.want.size());
    for (std::int64_t r = 0; r < rows_of(ys); ++r)
        for (std::int64_t c = 0; c < Cy; ++c)
            o.got[static_cast<std::size_t>(r * Cy + c)] =
                static_cast<std::int8_t>(m.dram[3][static_cast<std::size_t>(r * Py + c)]);
    return o;
}

inline Lower sum(ReduceTiles t = {}) {
    return [t](Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y) {
        return lower_reduce_sum(b, p, x, y, t);
    };
}
inline Lower mean(ReduceTiles t = {}) {
    return [t](Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y) {
        return lower_reduce_mean(b, p, x, y, t);
    };
}
inline Lower max(ReduceTiles t = {}) {
    return [t](Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y) {
        return lower_reduce_max(b, p, x, y, t);
    };
}
inline Lower min(ReduceTiles t = {}) {
    return [t](Builder& b, const ops::ReducePlan& p, const DramRows& x, const DramRows& y) {
        return lower_reduce_min(b, p, x, y, t);
    };
}

inline bool has(const std::vector<std::string>& log, const std::string& part) {
    for (const auto& l : log)
        if (l.find(part) != std::string::npos) return true;
    return false;
}

/// The outer spatial matrix for one op (NHWC, axes {1, 2}): C, sizes, keepdims, zero points, scale ratios.
/// Returns the number of runs.
template <class Op>
int outer_spatial(const Lower& lower, std::uint32_t seed) {
    const std::array<std::int64_t, 2> sizes[] = {{1, 1}, {3, 5}, {7, 7}};
    int runs = 0;
    for (const std::int64_t C : {1, 13, 16, 40})
        for (const auto& hw : sizes)
            for (const std::int64_t keep : {0, 1})
                for (const std::int32_t zp : {-128, 127})
                    for (const float ratio : {0.3f, 1.0f, 50.0f}) {  // s_in / s_out
                        CAPTURE(C);
                        CAPTURE(hw[0]);
                        CAPTURE(hw[1]);
                        CAPTURE(keep);
                        CAPTURE(zp);
                        CAPTURE(ratio);
                        const auto qi = quant(0.05f, zp), qo = quant(0.05f / ratio, zp == 127 ? -20 : 20);
                        const auto o = run<Op>(Shape{1, hw[0], hw[1], C}, attrs({1, 2}, keep), qi, qo, ++seed, lower);
                        CHECK(o.got == o.want);
                        ++runs;
                    }
    return runs;
}

/// The [K1, R, K2] block forms for one op: one axis of several, batches, 2-D, unit axes and the identity.
template <class Op>
void outer_forms(const Lower& lower, std::uint32_t seed) {
    struct Case {
        Shape shape;
        std::vector<std::int64_t> axes;
        std::int64_t noop;
        const char* form;
    };
    const Case cases[] = {
        {Shape{1, 6, 5, 13}, {1}, 0, "[1, 6, 5]"},           // over H: pixel r at stride W
        {Shape{1, 6, 5, 40}, {2}, 0, "[6, 5, 1]"},           // over W: 6 jobs
        {Shape{4, 3, 40}, {-2}, 0, "[4, 3, 1]"},             // a negative axis
        {Shape{2, 3, 4, 16}, {1}, 0, "[2, 3, 4]"},           // kept, reduced, kept
        {Shape{37, 20}, {0}, 0, "[1, 37, 1]"},               // a 2-D [rows, cols] matrix over its rows
        {Shape{2, 1, 3, 1, 13}, {1, 2, 3}, 0, "[2, 3, 1]"},  // unit axes on both sides
        {Shape{1, 5, 16}, {0}, 0, "[1, 1, 5]"},              // only a unit axis: one element per output
        {Shape{3, 4, 13}, {}, 1, "[1, 1, 12]"},              // the identity reduction (noop_with_empty_axes)
    };
    for (const auto& c : cases)
        for (const std::int64_t keep : {0, 1}) {
            CAPTURE(c.shape.str());
            CAPTURE(keep);
            const auto o =
                run<Op>(c.shape, attrs(c.axes, keep, c.noop), quant(0.1f, 7), quant(0.07f, -9), ++seed, lower);
            CHECK(o.got == o.want);
            CHECK(has(o.log, std::string("outer axes as ") + c.form));
        }
}

/// Forced tiles of 1, 2, 3, 64 pixels and forced chunks of 16 and 48 B (strided loads) over H of 9 x 5 x 13.
template <class Op>
void outer_tiles(const std::function<Lower(ReduceTiles)>& lower, std::uint32_t seed) {
    const Shape s{1, 9, 5, 13};  // 9 pixels of 5 x 16 B
    for (const std::int64_t tile : {1, 2, 3, 64})
        for (const std::int64_t width : {0, 16, 48})
            for (const std::int64_t keep : {0, 1}) {
                CAPTURE(tile);
                CAPTURE(width);
                CAPTURE(keep);
                const auto o = run<Op>(s, attrs({1}, keep), quant(0.1f, -128), quant(0.3f, 11), ++seed,
                                       lower(ReduceTiles{tile, width}));
                CHECK(o.got == o.want);
                const std::int64_t chunks = width == 0 ? 1 : (80 + width - 1) / width;
                CHECK(has(o.log, std::to_string(chunks) + " job(s)"));
                CHECK(has(o.log,
                          std::to_string((9 + std::min<std::int64_t>(tile, 9) - 1) / std::min<std::int64_t>(tile, 9)) +
                              " tile(s)"));
            }
}

}  // namespace rt
