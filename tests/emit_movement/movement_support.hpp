#pragma once
// Helpers of the data-movement emission tests: random tensors, packing a host tensor into a DramArray's bytes and
// back, and one emit -> simulate -> unpack run compared by the caller with ops::call<Op>.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/movement.hpp>
#include <janus/numeric/quant_params.hpp>
#include "support/compiled_sim.hpp"

#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

namespace mt {

using namespace janus;
using namespace janus::emit;

inline numeric::QuantParams quant(float s, std::int32_t zp) { return numeric::make_quant(DType::i8, s, zp).value(); }

inline Shape to_shape(const std::vector<std::int64_t>& v) {
    Shape s;
    for (auto d : v) s.push_back(d);
    return s;
}

/// A tensor of `shape` holding every int8 value in random order (uniform), quantized as `q`.
inline Tensor random_tensor(const std::vector<std::int64_t>& shape, std::optional<numeric::QuantParams> q,
                            std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<std::int8_t> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = static_cast<std::int8_t>(byte(rng));
    return Tensor::from<std::int8_t>(to_shape(shape), v, std::move(q));
}

/// Write t's elements (row-major) into `dram` at a's rows; other bytes keep what they hold.
inline void pack(std::vector<std::uint8_t>& dram, const DramArray& a, const Tensor& t) {
    const auto end = static_cast<std::size_t>(a.offset + a.bytes());
    if (dram.size() < end) dram.resize(end, 0x5a);
    const auto v = t.to_vector<std::int8_t>();
    const std::int64_t inner = a.inner();
    for (std::size_t e = 0; e < v.size(); ++e) {
        const auto i = static_cast<std::int64_t>(e);
        dram[static_cast<std::size_t>(a.offset + (i / inner) * a.pitch + i % inner)] = static_cast<std::uint8_t>(v[e]);
    }
}

/// a's elements (row-major) read back from `dram`.
inline std::vector<std::int8_t> unpack(const std::vector<std::uint8_t>& dram, const DramArray& a) {
    std::vector<std::int8_t> v(static_cast<std::size_t>(a.elements()));
    const std::int64_t inner = a.inner();
    for (std::size_t e = 0; e < v.size(); ++e) {
        const auto i = static_cast<std::int64_t>(e);
        v[e] = static_cast<std::int8_t>(dram[static_cast<std::size_t>(a.offset + (i / inner) * a.pitch + i % inner)]);
    }
    return v;
}

struct Outcome {
    std::vector<std::int8_t> got;
    std::vector<std::string> log;
    std::vector<vnpu::Instr> code;
    std::vector<std::uint8_t> weights;
    vnpu::sim::Report report;
};

using Mutation = std::function<void(std::vector<vnpu::Instr>&)>;

/// Emit with `lower(b)` (which must succeed), put each input tensor at its DramArray (padding bytes 0x5a, the
/// output region 0xee), run on the simulator (clean: no fault, no race, no leaked event; a mutated program only
/// without fault) and read y back.
template <class Lower>
Outcome run(const std::vector<std::pair<DramArray, Tensor>>& ins, const DramArray& y, Lower&& lower,
            const Mutation& mutate = {}) {
    Builder b("move");
    const Status st = lower(b);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    Outcome o;
    o.log = b.log();
    vnpu::sim::Machine m;
    m.dram[3].assign(static_cast<std::size_t>(y.offset + y.bytes() + 256), 0xee);
    for (const auto& in : ins) pack(m.dram[static_cast<std::size_t>(in.first.region)], in.first, in.second);
    for (auto& d : m.dram) d.resize(d.size() + 256, 0x33);  // slack: a mutated stride reads garbage, not a fault
    if (mutate) {
        auto p = b.finish();
        REQUIRE(p.ok());
        mutate(p->code);
        m.dram[0] = p->weights;
        o.report = janus_test::simulate(p->code, m);
        REQUIRE(!o.report.fault);
        o.code = p->code;
        o.weights = p->weights;
    } else {
        auto p = b.finish();
        REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
        o.code = p->code;
        o.weights = p->weights;
        m.dram[0] = p->weights;
        o.report = janus_test::simulate(p->code, m);
        INFO(janus_test::report_text(o.report, p->code));
        REQUIRE_MESSAGE(!o.report.fault, (o.report.fault ? o.report.fault->message() : std::string()));
        CHECK(o.report.races.empty());
    }
    o.got = unpack(m.dram[static_cast<std::size_t>(y.region)], y);
    return o;
}

/// The host reference: ops::call<Op> on the tensors with the output type of y.
template <class Op>
std::vector<std::int8_t> host(std::vector<Tensor> in, const typename Op::Attrs& a, const DramArray& y) {
    const auto r = ops::call<Op>(std::span<const Tensor>(in), a, y.type());
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
    return r->template to_vector<std::int8_t>();
}

inline bool has(const std::vector<std::string>& log, const std::string& part) {
    for (const auto& l : log)
        if (l.find(part) != std::string::npos) return true;
    return false;
}

inline int count(const std::vector<vnpu::Instr>& code, std::string_view mnemonic) {
    int n = 0;
    for (const auto& in : code) n += in.info->mnemonic == mnemonic;
    return n;
}

/// Instructions that wait on or signal an event.
inline int events(const std::vector<vnpu::Instr>& code) {
    int n = 0;
    for (const auto& in : code) n += in.wait.has_value() || in.signal.has_value();
    return n;
}

/// Check a refusal: the rule, and nothing left in the builder.
#define CHECK_REFUSED(builder, expr, rule)          \
    do {                                            \
        const std::size_t size_ = (builder).size(); \
        CHECK_RULE((expr), rule);                   \
        CHECK((builder).size() == size_);           \
        CHECK((builder).weights().empty());         \
        CHECK((builder).holders().empty());         \
        CHECK((builder).status().ok());             \
    } while (false)

}  // namespace mt
