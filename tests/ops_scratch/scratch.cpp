// Kernel scratch within its charged bound (issue 26: the memory budget of a run covers what the host kernels
// allocate while they run, not only the values). Rule: a host kernel allocates at most
// ops::kernel_scratch_bound(inputs, output) bytes besides its output (ops/op.hpp); graph::reference_run_bytes charges
// that bound of the largest node to --max-memory. This executable counts every byte allocated through operator new
// (it replaces the global allocation functions: that is why it is an executable of its own) and checks the peak
// that one kernel call adds, for large tensors of every kernel family (the per-element factor), for every fixture
// model and for the ONNX node tests when they are installed (the fixed allowance).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/onnx/model.hpp>
#include <janus/ops/dispatch.hpp>

namespace scratch_test {

std::atomic<std::int64_t> live{0}, peak{0};

void* track(std::size_t n, std::size_t align) {
    const std::size_t head = std::max<std::size_t>(align, 16);  // the size, in front of the block
    void* raw = std::aligned_alloc(head, (n + 2 * head - 1) / head * head);
    if (!raw) throw std::bad_alloc();
    std::memcpy(raw, &n, sizeof n);
    const std::int64_t now = live += static_cast<std::int64_t>(n);
    std::int64_t p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    return static_cast<char*>(raw) + head;
}

void untrack(void* q, std::size_t align) noexcept {
    if (!q) return;
    char* raw = static_cast<char*>(q) - std::max<std::size_t>(align, 16);
    std::size_t n = 0;
    std::memcpy(&n, raw, sizeof n);
    live -= static_cast<std::int64_t>(n);
    std::free(raw);
}

}  // namespace scratch_test

void* operator new(std::size_t n) { return scratch_test::track(n, 16); }
void* operator new[](std::size_t n) { return scratch_test::track(n, 16); }
void* operator new(std::size_t n, std::align_val_t a) { return scratch_test::track(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return scratch_test::track(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { scratch_test::untrack(p, 16); }
void operator delete[](void* p) noexcept { scratch_test::untrack(p, 16); }
void operator delete(void* p, std::size_t) noexcept { scratch_test::untrack(p, 16); }
void operator delete[](void* p, std::size_t) noexcept { scratch_test::untrack(p, 16); }
void operator delete(void* p, std::align_val_t a) noexcept { scratch_test::untrack(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::align_val_t a) noexcept { scratch_test::untrack(p, static_cast<std::size_t>(a)); }
void operator delete(void* p, std::size_t, std::align_val_t a) noexcept {
    scratch_test::untrack(p, static_cast<std::size_t>(a));
}
void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept {
    scratch_test::untrack(p, static_cast<std::size_t>(a));
}

namespace scratch_test {

using janus::DType;
using janus::Shape;
using janus::ops::AttrMap;
using janus::Tensor;
using janus::ops::TensorType;
using V = std::vector<std::int64_t>;

/// What one kernel call allocated beyond its output, and its bound.
struct Use {
    std::int64_t scratch = 0;
    std::uint64_t bound = 0;
    std::int64_t elements = 0;  // of its inputs and output
};

std::string worst_line;  // the largest scratch / bound ratio seen, for the log
double worst_ratio = 0;

Use measure(std::string_view op, std::span<const Tensor> in, const AttrMap& attrs,
            const std::optional<TensorType>& out, janus::Result<Tensor>& r, const janus::ops::OpContext& ctx = {}) {
    const std::int64_t base = live.load();
    peak.store(base);
    r = janus::ops::call_by_name(op, in, attrs, out, ctx);
    Use u;
    u.scratch = peak.load() - base;
    std::vector<TensorType> types;
    for (const Tensor& t : in) types.push_back(janus::ops::type_of(t)), u.elements += t.elements();
    if (r.ok()) {
        bool fresh = r->storage != nullptr;  // a view of an input (Reshape) allocated no output
        for (const Tensor& t : in) fresh = fresh && t.storage != r->storage;
        if (fresh) u.scratch -= static_cast<std::int64_t>(r->storage->size());
        u.elements += r->elements();
        u.bound = janus::ops::kernel_scratch_bound(types, janus::ops::type_of(*r));
    }
    const double ratio = u.bound ? static_cast<double>(u.scratch) / static_cast<double>(u.bound) : 0;
    if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst_line = std::string(op) + ": " + std::to_string(u.scratch) + " B for " + std::to_string(u.elements) +
                     " elements, bound " + std::to_string(u.bound) + " B";
    }
    return u;
}

std::uint64_t rng = 0x243F6A8885A308D3ull;
std::uint8_t next_byte() {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return static_cast<std::uint8_t>(rng >> 24);
}

janus::numeric::QuantParams q8(float s, std::int32_t zp) { return {DType::i8, {s}, {zp}, std::nullopt}; }

/// A tensor of random bytes (floats: in [-1, 1)).
Tensor random(DType d, Shape s, std::optional<janus::numeric::QuantParams> q = std::nullopt) {
    Tensor t = Tensor::zeros(d, s, std::move(q));
    auto& bytes = *t.storage;
    if (d == DType::f32) {
        for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
            const float f = static_cast<float>(next_byte()) / 128.0f - 1.0f;
            std::memcpy(bytes.data() + i, &f, 4);
        }
    } else {
        for (auto& b : bytes) b = static_cast<std::byte>(next_byte());
    }
    return t;
}

/// Run `op` on `in` (output type: its inference, given quantization `out_q` when it has none) and check its scratch
/// against the bound and, the tensors being large, against the per-element term alone.
void check(std::string_view op, std::vector<Tensor> in, AttrMap attrs,
           std::optional<janus::numeric::QuantParams> out_q = std::nullopt) {
    std::vector<TensorType> types;
    for (const Tensor& t : in) types.push_back(janus::ops::type_of(t));
    auto inferred = janus::ops::infer_by_name(op, types, attrs);
    REQUIRE_MESSAGE(inferred.ok(), op << ": " << (inferred.ok() ? "" : inferred.error().message()));
    TensorType out = *inferred;
    if (!out.quant && out_q) out.quant = out_q;
    janus::Result<Tensor> r = janus::make_error("", "", "", "");
    const Use u = measure(op, in, attrs, out, r);
    REQUIRE_MESSAGE(r.ok(), op << ": " << (r.ok() ? "" : r.error().message()));
    MESSAGE(op, ": ", u.scratch, " B besides the output for ", u.elements, " elements (",
            static_cast<double>(u.scratch) / static_cast<double>(u.elements), " B each), bound ", u.bound, " B");
    CHECK(u.scratch >= 0);
    CHECK(static_cast<std::uint64_t>(u.scratch) <= u.bound);
    // large tensors: the per-element term alone covers the kernel (the fixed allowance is for small ones)
    CHECK(static_cast<std::uint64_t>(u.scratch) <=
          janus::ops::kernel_scratch_per_element * static_cast<std::uint64_t>(u.elements));
}

}  // namespace scratch_test

TEST_CASE("kernel scratch: every kernel family on large tensors stays within ops::kernel_scratch_bound") {
    using namespace scratch_test;
    const auto qx = q8(0.05f, 3), qw = q8(0.01f, 0), qy = q8(0.1f, -5);
    const janus::numeric::QuantParams qb{DType::i32, {0.0005f}, {0}, std::nullopt};
    // contractions (the accumulator and the packed weights are the per-element terms)
    check("Conv", {random(DType::i8, Shape{1, 32, 64, 64}, qx), random(DType::i8, Shape{64, 32, 3, 3}, qw),
                   random(DType::i32, Shape{64}, qb)},
          {{"pads", V{1, 1, 1, 1}}}, qy);
    check("Conv", {random(DType::i8, Shape{1, 64, 64, 64}, qx), random(DType::i8, Shape{64, 1, 3, 3}, qw)},
          {{"pads", V{1, 1, 1, 1}}, {"group", std::int64_t{64}}}, qy);
    check("ConvTranspose", {random(DType::i8, Shape{1, 32, 32, 32}, qx), random(DType::i8, Shape{32, 16, 4, 4}, qw)},
          {{"strides", V{2, 2}}}, qy);
    check("MatMul", {random(DType::i8, Shape{4, 128, 256}, qx), random(DType::i8, Shape{256, 192}, qw)}, {}, qy);
    check("Gemm", {random(DType::i8, Shape{512, 256}, qx), random(DType::i8, Shape{256, 256}, qw)}, {}, qy);
    check("MatMulInteger", {random(DType::i8, Shape{512, 256}, qx), random(DType::i8, Shape{256, 256}, qw)}, {});
    check("Conv", {random(DType::f32, Shape{1, 16, 64, 64}), random(DType::f32, Shape{32, 16, 3, 3})},
          {{"pads", V{1, 1, 1, 1}}});
    check("MatMul", {random(DType::f32, Shape{256, 256}), random(DType::f32, Shape{256, 256})}, {});
    // windows (count tensors, accumulators)
    for (const std::int64_t include_pad : {0, 1})
        check("AveragePool", {random(DType::i8, Shape{1, 32, 128, 128}, qx)},
              {{"kernel_shape", V{3, 3}}, {"pads", V{1, 1, 1, 1}}, {"count_include_pad", include_pad}}, qy);
    check("AveragePool", {random(DType::f32, Shape{1, 32, 128, 128})},
          {{"kernel_shape", V{3, 3}}, {"pads", V{1, 1, 1, 1}}});
    check("MaxPool", {random(DType::i8, Shape{1, 32, 128, 128}, qx)}, {{"kernel_shape", V{3, 3}}, {"pads", V{1, 1, 1, 1}}});
    check("GlobalAveragePool", {random(DType::i8, Shape{1, 64, 64, 64}, qx)}, {}, qy);
    check("Resize", {random(DType::i8, Shape{1, 16, 64, 64}, qx)},
          {{"scales", std::vector<float>{1, 1, 2, 2}}, {"mode", std::string("linear")}}, qy);
    // reductions and normalizations
    check("ReduceMean", {random(DType::i8, Shape{64, 64, 64}, qx)}, {{"axes", V{1}}}, qy);
    check("ReduceSum", {random(DType::f32, Shape{64, 64, 64})}, {{"axes", V{0, 2}}});
    check("ArgMax", {random(DType::f32, Shape{64, 64, 64})}, {{"axis", std::int64_t{1}}});
    check("Softmax", {random(DType::i8, Shape{256, 1024}, qx)}, {{"axis", std::int64_t{-1}}},
          janus::numeric::QuantParams{DType::i8, {1.0f / 256}, {-128}, std::nullopt});
    check("Softmax", {random(DType::f32, Shape{256, 1024})}, {{"axis", std::int64_t{-1}}});
    check("LayerNormalization", {random(DType::f32, Shape{256, 1024}), random(DType::f32, Shape{1024}),
                                 random(DType::f32, Shape{1024})},
          {{"axis", std::int64_t{-1}}});
    check("BatchNormalization",
          {random(DType::f32, Shape{1, 64, 64, 64}), random(DType::f32, Shape{64}), random(DType::f32, Shape{64}),
           random(DType::f32, Shape{64}), Tensor::from(Shape{64}, std::vector<float>(64, 1.0f))},
          {});
    check("InstanceNormalization",
          {random(DType::f32, Shape{1, 64, 64, 64}), random(DType::f32, Shape{64}), random(DType::f32, Shape{64})},
          {});
    // elementwise, movement, quantization
    check("Add", {random(DType::i8, Shape{1, 64, 64, 64}, qx), random(DType::i8, Shape{1, 64, 1, 1}, qw)}, {}, qy);
    check("Mul", {random(DType::i8, Shape{1, 64, 64, 64}, qx), random(DType::i8, Shape{1, 64, 64, 64}, qw)}, {}, qy);
    check("Sigmoid", {random(DType::i8, Shape{1, 64, 64, 64}, qx)}, {},
          janus::numeric::QuantParams{DType::i8, {1.0f / 256}, {-128}, std::nullopt});
    check("Exp", {random(DType::f32, Shape{1, 64, 64, 64})}, {});
    check("Concat", {random(DType::i8, Shape{1, 32, 64, 64}, qx), random(DType::i8, Shape{1, 32, 64, 64}, qx)},
          {{"axis", std::int64_t{1}}});
    check("Pad", {random(DType::i8, Shape{1, 32, 64, 64}, qx)}, {{"pads", V{0, 0, 2, 2, 0, 0, 2, 2}}});
    check("Transpose", {random(DType::i8, Shape{1, 32, 64, 64}, qx)}, {{"perm", V{0, 2, 3, 1}}});
    check("Expand", {random(DType::i8, Shape{1, 32, 1, 64}, qx)}, {{"shape", V{1, 32, 64, 64}}});
    check("QuantizeLinear", {random(DType::f32, Shape{1, 64, 64, 64})},
          {{"scale", std::vector<float>{0.05f}}, {"zero_point", V{3}}, {"dtype", std::string("int8")}});
    check("DequantizeLinear", {random(DType::i8, Shape{1, 64, 64, 64}, qx)}, {});
    MESSAGE("largest share of the bound: ", worst_line);
}

TEST_CASE("kernel scratch: every node of the fixture models and of the ONNX node tests stays within its bound") {
    using namespace scratch_test;
    std::vector<std::filesystem::path> models;
    for (const auto& e : std::filesystem::directory_iterator("onnx/fixtures"))
        if (e.path().extension() == ".onnx") models.push_back(e.path());
    const std::filesystem::path node_tests = "/usr/share/libonnx-testdata/data/node";
    const std::size_t fixtures = models.size();
    std::sort(models.begin(), models.end());  // a deterministic order (and log)
    if (std::filesystem::is_directory(node_tests))
        for (const auto& e : std::filesystem::directory_iterator(node_tests))
            if (std::filesystem::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
    std::sort(models.begin() + static_cast<std::ptrdiff_t>(fixtures), models.end());
    REQUIRE(fixtures >= 10);
    std::size_t nodes = 0;
    static std::vector<std::string> failures;
    failures.clear();
    for (const auto& path : models) {
        auto m = janus::onnx::read_model_file(path.string());
        if (!m) continue;  // a node test Janus does not read (janusc conform lists them)
        auto g = janus::graph::import_onnx(*m, path.string());
        if (!g) continue;
        static std::string where;
        where = path.string();
        const auto kernel = [](std::string_view op, std::span<const Tensor> in, const AttrMap& attrs,
                               std::optional<TensorType> out, const janus::ops::OpContext& ctx) {
            janus::Result<Tensor> r = janus::make_error("", "", "", "");
            const Use u = measure(op, in, attrs, out, r, ctx);
            if (r.ok() && (u.scratch < 0 || static_cast<std::uint64_t>(u.scratch) > u.bound))
                failures.push_back(where + " " + std::string(op) + ": " + std::to_string(u.scratch) + " B, bound " +
                                   std::to_string(u.bound));
            return r;
        };
        auto out = janus::graph::run_reference(*g, janus::graph::seeded_inputs(*g, 7), +kernel);
        nodes += g->nodes.size();
        (void)out;  // a run that fails (a node test with inputs Janus refuses) still measured the nodes before it
    }
    MESSAGE(models.size(), " models (", fixtures, " fixtures), ", nodes, " nodes; largest share of the bound: ",
            worst_line);
    for (const auto& f : failures) FAIL_CHECK(f);
    CHECK(nodes > 100);
}
