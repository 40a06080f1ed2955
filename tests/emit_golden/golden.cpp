// Golden assembly of a few small kernels (tests/emit_golden/golden/*.s, README.md there): each kernel is emitted with
// the real lowering, rendered as text (a header naming the kernel and its parameters, the builder's debug log, the
// disassembled program, the weights region as a hex dump) and compared byte for byte with the committed file.
// Updating a golden is deliberate: only JANUS_UPDATE_GOLDEN=1 (re)writes the files; a missing one is a failure.
// For each kernel the test also requires: the same text from a second emission in a fresh builder (determinism),
// that the text re-assembles to exactly the emitted words (round trip), and that the program, run on the simulator,
// gives the host reference's bytes with no fault and no race (as tests/emit/ does).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/asm.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/emit_support.hpp"
#include "support/quant_plan.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

// ------------------------------------------------------------------------------------------------ golden machinery

const std::filesystem::path& golden_dir() {
    static const std::filesystem::path dir = std::filesystem::path(JANUS_SOURCE_DIR) / "tests/emit_golden/golden";
    return dir;
}

const std::string how_to_update =
    "if the new output is intended, regenerate the goldens deliberately and review the diff:\n"
    "    JANUS_UPDATE_GOLDEN=1 ctest --test-dir build/<preset> -R '^emit_golden$' -V\n"
    "    git diff tests/emit_golden/golden/";

bool update_requested() {
    const char* e = std::getenv("JANUS_UPDATE_GOLDEN");
    return e != nullptr && std::string_view(e) == "1";
}

/// A kernel of the golden set: its file name, what it is (the header), and how to emit it.
struct Kernel {
    std::string name;
    std::string about;  ///< lines of the header: the kernel and its parameters
    std::function<Status(Builder&)> emit;
};

/// The golden text of a program and its encoded words.
struct Rendered {
    std::string text;
    std::vector<vnpu::Word> words;
};

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string quant(float scale, std::int32_t zp) { return "scale " + num(scale) + " zp " + std::to_string(zp); }

std::string hex_dump(std::span<const std::uint8_t> bytes) {
    std::string s;
    char buf[24];
    for (std::size_t at = 0; at < bytes.size(); at += 16) {
        std::snprintf(buf, sizeof buf, "%04zx:", at);
        s += std::string("; ") + buf;
        for (std::size_t k = at; k < std::min(at + 16, bytes.size()); ++k) {
            std::snprintf(buf, sizeof buf, " %02x", static_cast<unsigned>(bytes[k]));
            s += buf;
        }
        s += "\n";
    }
    return s;
}

/// Emit `k` in a fresh builder and render its golden text.
Rendered render(const Kernel& k) {
    Builder b(k.name);
    const Status st = k.emit(b);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    const std::vector<std::string> log = b.log();
    auto p = b.finish();
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    Rendered r;
    for (const auto& in : p->code) {
        auto w = vnpu::encode(in, k.name);
        REQUIRE_MESSAGE(w.ok(), (w.ok() ? std::string() : w.error().message()));
        r.words.push_back(*w);
    }
    auto code = vnpu::disassemble(r.words, k.name);
    REQUIRE_MESSAGE(code.ok(), (code.ok() ? std::string() : code.error().message()));
    CHECK(*code == vnpu::print_program(p->code));  // the two printing paths agree

    std::string& s = r.text;
    s += "; janus emit golden: " + k.name + " (tests/emit_golden/golden.cpp; update: see README.md here)\n";
    std::size_t from = 0;
    while (from < k.about.size()) {
        const std::size_t end = std::min(k.about.find('\n', from), k.about.size());
        s += "; " + k.about.substr(from, end - from) + "\n";
        from = end + 1;
    }
    s += ";\n; debug log:\n";
    for (const auto& line : log) s += ";   " + line + "\n";
    s += ";\n; code: " + std::to_string(r.words.size()) + " instructions\n";
    s += *code;
    s += ";\n; weights region: " + std::to_string(p->weights.size()) + " bytes\n";
    s += hex_dump(p->weights);
    return r;
}

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> lines;
    std::size_t from = 0;
    while (true) {
        const std::size_t end = s.find('\n', from);
        if (end == std::string::npos) {
            lines.push_back(s.substr(from));
            return lines;
        }
        lines.push_back(s.substr(from, end - from));
        from = end + 1;
    }
}

/// "line N: expected ... / actual ..." for the first line where the texts differ.
std::string first_difference(const std::string& want, const std::string& got) {
    const auto a = split_lines(want), b = split_lines(got);
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    const auto show = [](const std::vector<std::string>& v, std::size_t k) {
        return k < v.size() ? "'" + v[k] + "'" : std::string("<end of file>");
    };
    const auto count = [](const std::vector<std::string>& v) {
        return std::to_string(v.size() - (v.back().empty() ? 1 : 0));  // a final '\n' ends the last line
    };
    return "first difference at line " + std::to_string(i + 1) + " (the golden has " + count(a) +
           " lines, the emitted text " + count(b) + ")\n    expected: " + show(a, i) + "\n    actual:   " + show(b, i);
}

/// Compare `text` with the committed golden `name`.s, or rewrite it under JANUS_UPDATE_GOLDEN=1.
void compare_golden(const std::string& name, const std::string& text) {
    const std::filesystem::path path = golden_dir() / (name + ".s");
    std::string want;
    bool present = false;
    if (std::ifstream in(path, std::ios::binary); in) {
        want.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        present = true;
    }
    if (update_requested()) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        REQUIRE_MESSAGE(out.good(), "JANUS_UPDATE_GOLDEN=1: could not write " << path.string());
        const std::string what = !present ? " (new)" : want == text ? " (unchanged)" : " (CHANGED)";
        MESSAGE("JANUS_UPDATE_GOLDEN=1: wrote " << path.string() << what);
        return;
    }
    if (!present)
        FAIL_CHECK("golden file " << path.string() << " is missing (it is never created silently);\n" << how_to_update);
    else if (want != text)
        FAIL_CHECK("the emitted assembly of '" << name << "' differs from its golden " << path.string() << "\n"
                                               << first_difference(want, text) << "\n"
                                               << how_to_update);
}

/// The golden checks of one kernel: determinism, the committed text, and the round trip through the assembler.
void check_golden(const Kernel& k) {
    CAPTURE(k.name);
    const Rendered first = render(k), second = render(k);
    CHECK_MESSAGE(first.text == second.text, "two emissions in fresh builders differ:\n"
                                                 << first_difference(first.text, second.text));
    compare_golden(k.name, first.text);
    auto words = vnpu::assemble_words(first.text, k.name + ".s");
    REQUIRE_MESSAGE(words.ok(), (words.ok() ? std::string() : words.error().message()));
    CHECK(*words == first.words);
}

// ------------------------------------------------------------------------------------------------ data

/// Bytes from the raw mt19937 stream (specified by the standard, unlike the distributions): the same on every
/// standard library, so weights that end up in a golden do not depend on it.
std::vector<std::int8_t> bytes(std::int64_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::int8_t> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<std::int8_t>(static_cast<std::uint8_t>(rng() >> 24));
    return v;
}

numeric::QuantParams q8(float scale, std::int32_t zp) { return numeric::make_quant(DType::i8, scale, zp).value(); }

void put(std::vector<std::uint8_t>& region, std::size_t at, const std::vector<std::int8_t>& v, std::size_t size) {
    if (region.size() < size) region.resize(size);
    std::memcpy(region.data() + at, v.data(), v.size());
}

std::vector<std::int8_t> get(const std::vector<std::uint8_t>& region, std::size_t at, std::size_t n) {
    std::vector<std::int8_t> v(n);
    std::memcpy(v.data(), region.data() + at, n);
    return v;
}

int saturated(const std::vector<std::int8_t>& v) {
    int n = 0;
    for (const auto x : v) n += (x == -128 || x == 127);
    return n;
}

/// Run kernel `k` (a Conv lowering from x to y, NHWC at channel pitch 16, padding channels 0x33) on the simulator
/// and require the host's ops::call<Conv> output, bit for bit, mostly unsaturated.
void check_conv_run(const Kernel& k, const std::vector<Tensor>& ins, const ops::Conv::Attrs& at,
                    const ops::TensorType& ty, const std::vector<std::int8_t>& x, const DramImage& X,
                    const DramImage& Y) {
    const auto host = ops::call<ops::Conv>(std::span<const Tensor>(ins), at, ty);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->to_vector<std::int8_t>();
    CHECK(saturated(want) * 4 < static_cast<int>(want.size()));
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, X.c, X.h * X.w, X.cpitch, 0x33);
    m.dram[3].resize(static_cast<std::size_t>(Y.h * Y.w * Y.cpitch));
    Builder b(k.name);
    REQUIRE(k.emit(b).ok());
    et::run_clean(b, m);
    CHECK(et::from_nhwc(m.dram[3], Y.c, Y.h * Y.w, Y.cpitch) == want);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------- elementwise

TEST_CASE("golden add_100: Add of 100 elements on vec.ew.add, 4 tiles of 32 B, double buffered") {
    const std::int64_t n = 100;
    const float sa = 0.1f, sb = 0.05f, so = 0.12f;
    const std::int32_t za = 5, zb = -5, zo = 1;
    const auto plan = janus_test::binary_plan<expr::BinOp::add>(q8(sa, za), q8(sb, zb), q8(so, zo), janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const DramTensor A{2, 0, n}, B{2, 112, n}, O{3, 0, n};
    const Kernel k{"add_100",
                   "Add: out = a + b, " + std::to_string(n) + " int8 elements, vec.ew.add, tiles of at most 32 B\n" +
                       "  a: " + quant(sa, za) + ", b: " + quant(sb, zb) + ", out: " + quant(so, zo) +
                       ", rounding double\n" + "  DRAM: a at input+0, b at input+112, out at output+0",
                   [&](Builder& b) { return lower_binary<expr::BinOp::add>(b, *plan, A, B, O, StreamOptions{32}); }};
    check_golden(k);

    const auto a = bytes(n, 1), c = bytes(n, 2);
    const auto host = ops::call<ops::Add>(
        {Tensor::from<std::int8_t>(Shape{n}, a, q8(sa, za)), Tensor::from<std::int8_t>(Shape{n}, c, q8(sb, zb))}, {},
        ops::TensorType{DType::i8, Shape{n}, q8(so, zo)});
    REQUIRE(host.ok());
    vnpu::sim::Machine m;
    put(m.dram[2], 0, a, 224);
    put(m.dram[2], 112, c, 224);
    m.dram[3].resize(112);
    Builder b(k.name);
    REQUIRE(k.emit(b).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], 0, n) == host->to_vector<std::int8_t>());
}

TEST_CASE("golden mul_100_half_even: Mul of 100 elements on vec.ew.mul, rounding half_even in the block") {
    const std::int64_t n = 100;
    const float sa = 0.1f, sb = 0.3f, so = 0.07f;
    const std::int32_t za = 1, zb = -7, zo = 2;
    const auto plan = janus_test::binary_plan<expr::BinOp::mul>(q8(sa, za), q8(sb, zb), q8(so, zo), numeric::Rounding::round_half_even);
    REQUIRE(plan.ok());
    const DramTensor A{2, 0, n}, B{2, 112, n}, O{3, 0, n};
    const Kernel k{
        "mul_100_half_even",
        "Mul: out = a * b, " + std::to_string(n) + " int8 elements, vec.ew.mul, one tile\n" + "  a: " + quant(sa, za) +
            ", b: " + quant(sb, zb) + ", out: " + quant(so, zo) + ", rounding half_even\n" +
            "  DRAM: a at input+0, b at input+112, out at output+0",
        [&](Builder& b) { return lower_binary<expr::BinOp::mul>(b, *plan, A, B, O); }};
    check_golden(k);

    const auto a = bytes(n, 3), c = bytes(n, 4);
    const Tensor ins[2] = {Tensor::from<std::int8_t>(Shape{n}, a, q8(sa, za)),
                           Tensor::from<std::int8_t>(Shape{n}, c, q8(sb, zb))};
    Tensor y = Tensor::zeros(DType::i8, Shape{n}, q8(so, zo));
    REQUIRE(ops::run_map(
                ops::binary_quant_expr<expr::BinOp::mul, std::int8_t, std::int8_t>(*plan),
                std::span<const Tensor>(ins), y, ops::MapOptions{}, "golden")
                .ok());
    vnpu::sim::Machine m;
    put(m.dram[2], 0, a, 224);
    put(m.dram[2], 112, c, 224);
    m.dram[3].resize(112);
    Builder b(k.name);
    REQUIRE(k.emit(b).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], 0, n) == y.to_vector<std::int8_t>());
}

TEST_CASE("golden sigmoid_100: Sigmoid of 100 elements on lut.apply with the op's own table") {
    const std::int64_t n = 100;
    const float si = 0.05f, so = 1.0f / 256;
    const std::int32_t zi = -10, zo = -128;
    const auto table = janus_test::quant_plan<ops::Sigmoid>({q8(si, zi)}, q8(so, zo), janus::numeric::Rounding::round_double, ops::NoAttrs{}).value();
    REQUIRE(table != nullptr);
    const DramTensor X{2, 0, n}, O{3, 0, n};
    const Kernel k{"sigmoid_100",
                   "Sigmoid: out = 1 / (1 + exp(-x)), " + std::to_string(n) + " int8 elements, lut.apply, one tile\n" +
                       "  x: " + quant(si, zi) + ", out: " + quant(so, zo) + " (the table is the weights region)\n" +
                       "  DRAM: x at input+0, out at output+0",
                   [&](Builder& b) { return lower_lut(b, *table, X, O); }};
    check_golden(k);

    const auto x = bytes(n, 5);
    const auto host = ops::call<ops::Sigmoid>({Tensor::from<std::int8_t>(Shape{n}, x, q8(si, zi))}, {},
                                              ops::TensorType{DType::i8, Shape{n}, q8(so, zo)});
    REQUIRE(host.ok());
    vnpu::sim::Machine m;
    put(m.dram[2], 0, x, 112);
    m.dram[3].resize(112);
    Builder b(k.name);
    REQUIRE(k.emit(b).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], 0, n) == host->to_vector<std::int8_t>());
}

// ---------------------------------------------------------------------------------------------------- matmul

namespace {

/// Emit-and-run one matmul-form kernel (MatMul, or Gemm when `bias` is given) and compare Y with `want`.
void run_matmul(const Kernel& k, const std::vector<std::int8_t>& a, std::int64_t M, std::int64_t K, std::int64_t N,
                const DramMatrix& A, const DramMatrix& Y, const std::vector<std::int8_t>& want) {
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(M * A.pitch), 0x5a);  // A's padding columns hold anything
    for (std::int64_t r = 0; r < M; ++r)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(r * A.pitch)], &a[static_cast<std::size_t>(r * K)],
                    static_cast<std::size_t>(K));
    m.dram[3].resize(static_cast<std::size_t>(M * Y.pitch));
    Builder b(k.name);
    REQUIRE(k.emit(b).ok());
    et::run_clean(b, m);
    std::vector<std::int8_t> got(static_cast<std::size_t>(M * N));
    for (std::int64_t r = 0; r < M; ++r)
        std::memcpy(&got[static_cast<std::size_t>(r * N)], &m.dram[3][static_cast<std::size_t>(r * Y.pitch)],
                    static_cast<std::size_t>(N));
    CHECK(got == want);
    CHECK(saturated(want) * 4 < static_cast<int>(want.size()));  // the data is not all clamped
}

}  // namespace

TEST_CASE("golden matmul_20x40x24: MatMul with K and N padded, two N tiles of 16, per-column scales") {
    const std::int64_t M = 20, K = 40, N = 24;
    const float sa = 0.05f, sy = 0.4f;
    const std::int32_t za = -3, zy = 3;
    std::vector<float> sb(static_cast<std::size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) sb[static_cast<std::size_t>(n)] = 0.01f + 0.0005f * static_cast<float>(n);
    const ops::TensorType ta{DType::i8, Shape{M, K}, q8(sa, za)};
    const ops::TensorType tb{
        DType::i8, Shape{K, N},
        numeric::make_quant_per_axis(DType::i8, sb, std::vector<std::int32_t>(static_cast<std::size_t>(N), 0), 1,
                                     Shape{K, N})
            .value()};
    const ops::TensorType ty{DType::i8, Shape{M, N}, q8(sy, zy)};
    const ops::TensorType types[2] = {ta, tb};
    const auto plan = ops::MatMul::plan(types, {}, ty, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const auto w = bytes(K * N, 7);
    const DramMatrix A{2, 0, M, K, 48}, Y{3, 0, M, N, 32};
    const Kernel k{"matmul_20x40x24",
                   "MatMul: Y = A B, A " + std::to_string(M) + "x" + std::to_string(K) + " (activations), B " +
                       std::to_string(K) + "x" + std::to_string(N) +
                       " (weights, packed into the weights region), mac.mm + vec.rq\n" + "  MatmulOptions{max_n_tile " +
                       "16}: K padded to 48, N padded to 32 = two N tiles of 16\n" + "  A: " + quant(sa, za) +
                       ", B: per-column scales 0.01 + 0.0005 n, zp 0, Y: " + quant(sy, zy) + "\n" +
                       "  DRAM: A at input+0 (pitch 48), Y at output+0 (pitch 32); B = raw mt19937(7) bytes",
                   [&](Builder& b) {
                       return lower_matmul(b, *plan, A, w, K, N, Y, MatmulOptions{16, 0, {}, {}});
                   }};
    check_golden(k);

    const auto a = bytes(M * K, 8);
    const auto host = ops::call<ops::MatMul>(
        {Tensor::from<std::int8_t>(ta.shape, a, *ta.quant), Tensor::from<std::int8_t>(tb.shape, w, *tb.quant)}, {}, ty);
    REQUIRE(host.ok());
    run_matmul(k, a, M, K, N, A, Y, host->to_vector<std::int8_t>());
}

TEST_CASE("golden gemm_6x20x16_bias: Gemm with C as a per-column int32 bias entering the rq table") {
    const std::int64_t M = 6, K = 20, N = 16;
    const float sa = 0.05f, sy = 0.25f;
    const std::int32_t za = 20, zy = -4;
    std::vector<float> sb(static_cast<std::size_t>(N)), sc(static_cast<std::size_t>(N));
    std::vector<std::int32_t> c(static_cast<std::size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) {
        const auto i = static_cast<std::size_t>(n);
        sb[i] = 0.02f - 0.0007f * static_cast<float>(n);
        sc[i] = static_cast<float>(static_cast<double>(sa) * static_cast<double>(sb[i]));
        c[i] = static_cast<std::int32_t>((n * 7919) % 4001) - 2000;
    }
    const std::vector<std::int32_t> zeros(static_cast<std::size_t>(N), 0);
    const ops::TensorType ta{DType::i8, Shape{M, K}, q8(sa, za)};
    const ops::TensorType tb{DType::i8, Shape{K, N},
                             numeric::make_quant_per_axis(DType::i8, sb, zeros, 1, Shape{K, N}).value()};
    const ops::TensorType tc{DType::i32, Shape{N},
                             numeric::make_quant_per_axis(DType::i32, sc, zeros, 0, Shape{N}).value()};
    const ops::TensorType ty{DType::i8, Shape{M, N}, q8(sy, zy)};
    const ops::TensorType types[3] = {ta, tb, tc};
    const auto plan = ops::Gemm::plan(types, {}, ty, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const auto w = bytes(K * N, 9);
    const DramMatrix A{2, 0, M, K, 32}, Y{3, 0, M, N, 16};
    const Kernel k{"gemm_6x20x16_bias",
                   "Gemm: Y = A B + C, A " + std::to_string(M) + "x" + std::to_string(K) + ", B " + std::to_string(K) +
                       "x" + std::to_string(N) + ", C: " + std::to_string(N) +
                       " int32 (scale sa sb per column, the bias column of the rq table), mac.mm + vec.rq\n" +
                       "  A: " + quant(sa, za) + ", B: per-column scales 0.02 - 0.0007 n, zp 0, Y: " + quant(sy, zy) +
                       "\n" + "  C[n] = (7919 n mod 4001) - 2000; B = raw mt19937(9) bytes\n" +
                       "  DRAM: A at input+0 (pitch 32), Y at output+0 (pitch 16)",
                   [&](Builder& b) { return lower_matmul(b, *plan, A, w, K, N, Y, {}, c); }};
    check_golden(k);

    const auto a = bytes(M * K, 10);
    const auto host = ops::call<ops::Gemm>(
        {Tensor::from<std::int8_t>(ta.shape, a, *ta.quant), Tensor::from<std::int8_t>(tb.shape, w, *tb.quant),
         Tensor::from<std::int32_t>(tc.shape, c, *tc.quant)},
        {}, ty);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    run_matmul(k, a, M, K, N, A, Y, host->to_vector<std::int8_t>());
}

// ---------------------------------------------------------------------------------------------------- depthwise

TEST_CASE("golden depthwise_3x3_3x4x13: 3x3 depthwise on a 3x4 image of 13 channels, pads 1, with bias") {
    const std::int64_t C = 13, H = 3, W = 4, kh = 3, kw = 3, Cp = 16;
    const std::array<std::int64_t, 4> pads{1, 1, 1, 1};
    const std::int64_t Ho = H + pads[0] + pads[2] - kh + 1, Wo = W + pads[1] + pads[3] - kw + 1;
    const float sx = 0.04f, sy = 0.15f;
    const std::int32_t zx = -7, zy = -6;
    std::vector<float> sw(static_cast<std::size_t>(C));
    std::vector<std::int32_t> bias(static_cast<std::size_t>(C));
    for (std::int64_t c = 0; c < C; ++c) {
        sw[static_cast<std::size_t>(c)] = 0.01f + 0.001f * static_cast<float>(c);
        bias[static_cast<std::size_t>(c)] = static_cast<std::int32_t>(c * 300) - 1800;
    }
    const auto w = bytes(C * kh * kw, 11);
    const auto qx = q8(sx, zx);
    const auto qw =
        numeric::make_quant_per_axis(DType::i8, sw, std::vector<std::int32_t>(static_cast<std::size_t>(C), 0), 0,
                                     Shape{C, 1, kh, kw})
            .value();
    const ops::TensorType tx{DType::i8, Shape{1, C, H, W}, qx}, tw{DType::i8, Shape{C, 1, kh, kw}, qw},
        ty{DType::i8, Shape{1, C, Ho, Wo}, q8(sy, zy)};
    ops::Conv::Attrs at;
    at.group = C;
    at.pads = {pads[0], pads[1], pads[2], pads[3]};
    const ops::TensorType types[3] = {tx, tw, ops::TensorType{DType::i32, Shape{C}, std::nullopt}};
    const auto plan = ops::Conv::plan(types, at, ty, numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    const Kernel k{"depthwise_3x3_3x4x13",
                   "Conv (depthwise, group = C): " + std::to_string(H) + "x" + std::to_string(W) + "x" +
                       std::to_string(C) + " NHWC (channel pitch 16) -> " + std::to_string(Ho) + "x" +
                       std::to_string(Wo) + "x" + std::to_string(C) + ", 3x3 kernel, pads 1 1 1 1, stride 1\n" +
                       "  vec.mac per tap + vec.rq per row; x: " + quant(sx, zx) +
                       ", w: per-channel scales 0.01 + 0.001 c, zp 0, y: " + quant(sy, zy) + "\n" +
                       "  bias[c] = 300 c - 1800; w = raw mt19937(11) bytes (ONNX order C x 1 x 3 x 3)\n" +
                       "  DRAM: x at input+0, y at output+0",
                   [&](Builder& b) { return lower_depthwise(b, *plan, X, w, bias, Y); }};
    check_golden(k);

    const auto x = bytes(C * H * W, 12);
    const std::vector<Tensor> ins{Tensor::from<std::int8_t>(tx.shape, x, qx),
                                  Tensor::from<std::int8_t>(tw.shape, w, qw),
                                  Tensor::from<std::int32_t>(Shape{C}, bias)};
    check_conv_run(k, ins, at, ty, x, X, Y);
}

TEST_CASE("golden conv_3x3s2_5x5x3: 3x3 stride-2 conv on the MAC array, 3 -> 16 channels, pads 1, with bias") {
    const std::int64_t C = 3, H = 5, W = 5, Co = 16, Cp = 16, Ho = 3, Wo = 3;
    const float sx = 0.04f, sy = 0.12f;
    const std::int32_t zx = 5, zy = -3;
    std::vector<float> sw(static_cast<std::size_t>(Co));
    std::vector<std::int32_t> bias(static_cast<std::size_t>(Co));
    for (std::int64_t c = 0; c < Co; ++c) {
        sw[static_cast<std::size_t>(c)] = 0.01f + 0.0005f * static_cast<float>(c);
        bias[static_cast<std::size_t>(c)] = static_cast<std::int32_t>(c * 200) - 1500;
    }
    const auto w = bytes(Co * C * 9, 21);
    const auto qx = q8(sx, zx);
    const auto qw =
        numeric::make_quant_per_axis(DType::i8, sw, std::vector<std::int32_t>(sw.size(), 0), 0, Shape{Co, C, 3, 3})
            .value();
    const ops::TensorType tx{DType::i8, Shape{1, C, H, W}, qx}, tw{DType::i8, Shape{Co, C, 3, 3}, qw},
        ty{DType::i8, Shape{1, Co, Ho, Wo}, q8(sy, zy)};
    ops::Conv::Attrs at;
    at.pads = {1, 1, 1, 1};
    at.strides = {2, 2};
    const ops::TensorType types[3] = {tx, tw, ops::TensorType{DType::i32, Shape{Co}, std::nullopt}};
    const auto plan = ops::Conv::plan(types, at, ty, numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, Co, Cp};
    const Kernel k{"conv_3x3s2_5x5x3",
                   "Conv: 5x5x3 NHWC (channel pitch 16) -> 3x3x16, 3x3 kernel, stride 2, pads 1 1 1 1\n"
                   "  implicit im2col: 2 phase planes, one mac.mm / mac.mma per tap, vec.rq; x: " +
                       quant(sx, zx) + ", w: per-channel scales 0.01 + 0.0005 c, zp 0, y: " + quant(sy, zy) + "\n" +
                       "  bias[c] = 200 c - 1500; w = raw mt19937(21) bytes (ONNX order 16 x 3 x 3 x 3)\n" +
                       "  DRAM: x at input+0, y at output+0",
                   [&](Builder& b) { return lower_conv(b, *plan, X, w, bias, Y); }};
    check_golden(k);

    const auto x = bytes(C * H * W, 22);
    const std::vector<Tensor> ins{Tensor::from<std::int8_t>(tx.shape, x, qx),
                                  Tensor::from<std::int8_t>(tw.shape, w, qw),
                                  Tensor::from<std::int32_t>(Shape{Co}, bias)};
    check_conv_run(k, ins, at, ty, x, X, Y);
}

// ---------------------------------------------------------------------------------------------------- the set

TEST_CASE("every committed golden belongs to a kernel of this file (no stale golden is left behind)") {
    const std::set<std::string> kernels{"add_100",         "mul_100_half_even", "sigmoid_100",
                                        "matmul_20x40x24", "gemm_6x20x16_bias", "depthwise_3x3_3x4x13",
                                        "conv_3x3s2_5x5x3"};
    REQUIRE(std::filesystem::is_directory(golden_dir()));
    std::set<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(golden_dir()))
        if (e.path().extension() == ".s") files.insert(e.path().stem().string());
    std::string listed;
    for (const auto& f : files) listed += " " + f;
    CHECK_MESSAGE(files == kernels, "golden files:" << listed);
}
