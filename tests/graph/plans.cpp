// One planning entry (ops::Planned, docs/ARCHITECTURE.md "Plans"): every op with a built-in NPU lowering decides its
// kernel in a typed plan through O::plan(in, attrs, out, rounding), which the host kernel and the emitter both read,
// unless it only moves bytes (its index map is the whole definition). A new lowering of an op without a plan, or a
// plan entry with another signature, fails here. The registry's entries are keyed by the op types' own names.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <janus/graph/lower.hpp>
#include <janus/ops/registry.hpp>

namespace plans_test {

using namespace janus;

TEST_CASE("every op with a built-in NPU lowering plans through its one entry, or only moves bytes") {
    std::set<std::string> lowered;
    for (const graph::OpLowering& e : graph::lower_detail::builtin_lowerings()) lowered.insert(std::string(e.op));
    const std::set<std::string> movement = {"Requantize", "Flatten", "Reshape", "Squeeze",
                                            "Unsqueeze",  "Transpose", "Slice",  "Expand"};
    std::size_t found = 0, planned = 0;
    ops::for_each_op([&](auto tag) {
        using O = typename decltype(tag)::type;
        const std::string name(O::name.view());
        if (!lowered.count(name)) return;
        ++found;
        planned += ops::Planned<O> ? 1 : 0;
        // rule: a lowered op that decides anything has a plan; a pure data-movement op has none to restate
        CHECK_MESSAGE(ops::Planned<O> != (movement.count(name) == 1), name);
    });
    CHECK(found == lowered.size());  // every entry names an op of the registry
    CHECK(planned == lowered.size() - movement.size());
    MESSAGE(planned << " of " << found << " lowered ops plan through O::plan(in, attrs, out, rounding)");
}

TEST_CASE("plan_with: the lowering's entry from untrusted attributes checks arity and attributes first") {
    const auto q = numeric::make_quant(DType::i8, 0.1f, 0).value();
    const ops::TensorType x{DType::i8, Shape{1, 16, 8, 8}, q};
    const ops::TensorType y{DType::i8, Shape{1, 16, 4, 4}, q};
    const ops::AttrMap good{{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                            {"strides", std::vector<std::int64_t>{2, 2}}};
    const auto p = ops::plan_with<ops::MaxPool>(std::span(&x, 1), good, y, numeric::Rounding::round_double);
    REQUIRE(p.ok());
    CHECK(p->out_shape == y.shape);
    const ops::AttrMap unknown{{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"dilation", std::int64_t{2}}};
    const auto bad = ops::plan_with<ops::MaxPool>(std::span(&x, 1), unknown, y, numeric::Rounding::round_double);
    REQUIRE(!bad.ok());
    CHECK(bad.error().rule == "known-attribute");
    const ops::TensorType two[2] = {x, x};
    const auto arity = ops::plan_with<ops::MaxPool>(two, good, y, numeric::Rounding::round_double);
    REQUIRE(!arity.ok());
    CHECK(arity.error().rule == "input-count");
}

}  // namespace plans_test
