// Pooling against a plain reference written differently: per output, walk the kernel positions, test each input
// coordinate against the input and the padded range, and compute sums / maxima / counts in double (quantized:
// dequantize, average in double, quantize). Random geometries cover every switch (auto_pad, pads, strides,
// dilations, ceil_mode, count_include_pad) on 1-D and 2-D inputs; also scalar (OpContext{.simd=false}) vs SIMD
// bit identity. The measured bounds are the ones docs/numerics.md "Pooling" states.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/pool.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

struct Geo {
    Shape in;
    std::vector<std::int64_t> k, s, d, pads;
    std::int64_t ceil = 0, cip = 0;
    std::string auto_pad = "NOTSET";
};

Geo random_geo(std::mt19937& g) {
    auto u = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
    Geo r;
    const int spatial = u(1, 2);
    r.in = {u(1, 2), u(1, 3)};
    for (int a = 0; a < spatial; ++a) r.in.push_back(u(1, 7));
    const char* modes[] = {"NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    r.auto_pad = modes[u(0, 5)];
    std::vector<std::int64_t> pb, pe;
    for (int a = 0; a < spatial; ++a) {
        r.k.push_back(u(1, 3));
        r.s.push_back(u(1, 3));
        r.d.push_back(u(1, 2));
        pb.push_back(u(0, static_cast<int>(r.k.back()) - 1));
        pe.push_back(u(0, static_cast<int>(r.k.back()) - 1));
    }
    if (r.auto_pad == "NOTSET") {
        r.pads = pb;
        r.pads.insert(r.pads.end(), pe.begin(), pe.end());
    }
    r.ceil = u(0, 1);
    r.cip = u(0, 1);
    return r;
}

AveragePoolAttrs avg_attrs(const Geo& g) {
    AveragePoolAttrs a;
    a.auto_pad = g.auto_pad;
    a.kernel_shape = g.k;
    a.strides = g.s;
    a.dilations = g.d;
    a.pads = g.pads;
    a.ceil_mode = g.ceil;
    a.count_include_pad = g.cip;
    return a;
}
MaxPoolAttrs max_attrs(const Geo& g) {
    MaxPoolAttrs a;
    a.auto_pad = g.auto_pad;
    a.kernel_shape = g.k;
    a.strides = g.s;
    a.dilations = g.d;
    a.pads = g.pads;
    a.ceil_mode = g.ceil;
    return a;
}

/// The reference's own geometry: explicit pads from auto_pad (SAME: total = max(0, (ceil(L/s)-1) s + e - L)) and
/// output extents by the ONNX formulas, written per axis without the window primitive.
struct RefGeo {
    std::vector<std::int64_t> pb, pe, out;
};
RefGeo ref_geo(const Geo& g) {
    RefGeo r;
    const int sp = g.in.size() - 2;
    for (int a = 0; a < sp; ++a) {
        const std::int64_t L = g.in[2 + a], k = g.k[a], s = g.s[a], d = g.d[a], e = (k - 1) * d + 1;
        std::int64_t b = 0, en = 0, o = 0;
        if (g.auto_pad == "SAME_UPPER" || g.auto_pad == "SAME_LOWER") {
            o = (L + s - 1) / s;
            const std::int64_t total = std::max<std::int64_t>(0, (o - 1) * s + e - L);
            b = g.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            en = total - b;
        } else {
            if (g.auto_pad == "NOTSET") b = g.pads[a], en = g.pads[sp + a];
            const double span = static_cast<double>(L + b + en - e);
            if (span < 0) return {};  // no window fits
            o = static_cast<std::int64_t>(g.ceil ? std::ceil(span / s) : std::floor(span / s)) + 1;
            if (g.ceil && (o - 1) * s >= L + b) --o;
        }
        r.pb.push_back(b);
        r.pe.push_back(en);
        r.out.push_back(o);
    }
    return r;
}

enum class Red { sum, max };
/// Per output (row-major over N, C, O..): the in-range values, the padded-range count, the valid count.
struct Window {
    std::vector<double> vals;
    std::int64_t padded = 0, valid = 0;
};
std::vector<Window> ref_windows(const Geo& g, const RefGeo& r, const std::vector<double>& x) {
    const int sp = g.in.size() - 2;
    std::vector<Window> out;
    std::int64_t outs = g.in[0] * g.in[1];
    for (auto o : r.out) outs *= o;
    std::vector<std::int64_t> o(static_cast<std::size_t>(sp), 0);
    for (std::int64_t n = 0; n < g.in[0]; ++n)
        for (std::int64_t c = 0; c < g.in[1]; ++c) {
            std::fill(o.begin(), o.end(), 0);
            for (;;) {
                Window w;
                // every kernel position (odometer over j)
                std::vector<std::int64_t> j(static_cast<std::size_t>(sp), 0);
                for (;;) {
                    bool in_input = true, in_padded = true;
                    std::int64_t flat = n * g.in[1] + c;
                    for (int a = 0; a < sp; ++a) {
                        const std::int64_t i = o[a] * g.s[a] - r.pb[a] + j[a] * g.d[a];
                        in_input = in_input && i >= 0 && i < g.in[2 + a];
                        in_padded = in_padded && i >= -r.pb[a] && i < g.in[2 + a] + r.pe[a];
                        flat = flat * g.in[2 + a] + i;
                    }
                    if (in_input) w.vals.push_back(x[static_cast<std::size_t>(flat)]), ++w.valid;
                    if (in_padded) ++w.padded;
                    int a = sp - 1;
                    for (; a >= 0; --a) {
                        if (++j[a] < g.k[a]) break;
                        j[a] = 0;
                    }
                    if (a < 0) break;
                }
                out.push_back(w);
                int a = sp - 1;
                for (; a >= 0; --a) {
                    if (++o[a] < r.out[a]) break;
                    o[a] = 0;
                }
                if (a < 0) break;
            }
        }
    (void)outs;
    return out;
}

bool any_empty(const std::vector<Window>& w) {
    return std::any_of(w.begin(), w.end(), [](const Window& v) { return v.valid == 0; });
}

template <class T>
std::vector<std::byte> bytes(const Tensor& t) {
    const auto v = t.to_vector<T>();
    std::vector<std::byte> b(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

}  // namespace

TEST_CASE("float AveragePool and MaxPool match the double reference on random geometries; scalar == SIMD bitwise") {
    std::mt19937 g(1234);
    std::uniform_real_distribution<float> val(-10.0f, 10.0f);
    int ran = 0, refused = 0;
    double worst_rel = 0;
    for (int iter = 0; iter < 400; ++iter) {
        const Geo geo = random_geo(g);
        std::vector<float> xf(static_cast<std::size_t>(element_count(geo.in)));
        for (auto& v : xf) v = val(g);
        const Tensor x = Tensor::from<float>(geo.in, xf);
        const RefGeo rg = ref_geo(geo);
        auto ya = call<AveragePool>({x}, avg_attrs(geo));
        auto ym = call<MaxPool>({x}, max_attrs(geo));
        if (rg.out.empty()) {  // no window fits the padded input
            REQUIRE_FALSE(ya.ok());
            CHECK(ya.error().rule == "window-fits-padded-input");
            ++refused;
            continue;
        }
        const auto w = ref_windows(geo, rg, std::vector<double>(xf.begin(), xf.end()));
        if (any_empty(w)) {
            REQUIRE_FALSE(ya.ok());
            CHECK(ya.error().rule == "window-holds-input");
            REQUIRE_FALSE(ym.ok());
            ++refused;
            continue;
        }
        REQUIRE(ya.ok());
        REQUIRE(ym.ok());
        Shape os = {geo.in[0], geo.in[1]};
        for (auto o : rg.out) os.push_back(o);
        CHECK(ya->shape() == os);
        const auto a = ya->to_vector<float>(), m = ym->to_vector<float>();
        REQUIRE(a.size() == w.size());
        for (std::size_t i = 0; i < w.size(); ++i) {
            double sum = 0, mag = 0, mx = -std::numeric_limits<double>::infinity();
            for (double v : w[i].vals) sum += v, mag += std::fabs(v), mx = std::max(mx, v);
            const double count = static_cast<double>(geo.cip ? w[i].padded : w[i].valid);
            const double ref = sum / count;
            // float: each of the volume-1 additions and the division rounds once: |err| <= volume * 2^-24 * sum|x|
            const double bound = (static_cast<double>(w[i].vals.size()) + 1) * 0x1p-24 * mag / count;
            CHECK(std::fabs(a[i] - ref) <= bound);
            if (mag > 0) worst_rel = std::max(worst_rel, std::fabs(a[i] - ref) / (mag / count));
            CHECK(static_cast<double>(m[i]) == mx);  // a selection: exact
        }
        // scalar == SIMD, bit for bit
        auto sa = call<AveragePool>({x}, avg_attrs(geo), std::nullopt, OpContext{false});
        auto sm = call<MaxPool>({x}, max_attrs(geo), std::nullopt, OpContext{false});
        REQUIRE(sa.ok());
        REQUIRE(sm.ok());
        CHECK(bytes<float>(*sa) == bytes<float>(*ya));
        CHECK(bytes<float>(*sm) == bytes<float>(*ym));
        ++ran;
    }
    MESSAGE("float pools: " << ran << " geometries run, " << refused << " refused; worst |err| / (sum|x| / count) = "
                            << worst_rel);
    CHECK(ran > 150);
    CHECK(refused > 0);
}

TEST_CASE("quantized AveragePool is within 1/2 LSB (+2^-10) of the exact dequantize-average-quantize result") {
    std::mt19937 g(99);
    int ran = 0;
    double worst = 0;
    std::int64_t off_by_one = 0, off_non_tie = 0, total = 0;
    for (int iter = 0; iter < 300; ++iter) {
        const Geo geo = random_geo(g);
        const RefGeo rg = ref_geo(geo);
        if (rg.out.empty()) continue;
        const bool u8 = iter % 2 == 1;
        const DType dt = u8 ? DType::u8 : DType::i8;
        const std::int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
        std::uniform_int_distribution<int> qv(lo, hi);
        std::uniform_real_distribution<float> sc(0.01f, 1.0f);
        const float s_in = sc(g), s_out = iter % 3 == 0 ? s_in : sc(g);
        const std::int32_t zp_in = qv(g), zp_out = std::uniform_int_distribution<int>(lo / 2, hi / 2)(g);
        const auto qi = numeric::make_quant(dt, s_in, zp_in).value();
        const auto qo = numeric::make_quant(dt, s_out, zp_out).value();
        const std::int64_t n = element_count(geo.in);
        std::vector<std::int32_t> xq(static_cast<std::size_t>(n));
        for (auto& v : xq) v = qv(g);
        Tensor x = u8 ? Tensor::from<std::uint8_t>(geo.in, std::vector<std::uint8_t>(xq.begin(), xq.end()), qi)
                      : Tensor::from<std::int8_t>(geo.in, std::vector<std::int8_t>(xq.begin(), xq.end()), qi);
        std::vector<double> real(xq.size());
        for (std::size_t i = 0; i < xq.size(); ++i) real[i] = static_cast<double>(s_in) * (xq[i] - zp_in);
        const auto w = ref_windows(geo, rg, real);
        if (any_empty(w)) continue;
        Shape os = {geo.in[0], geo.in[1]};
        for (auto o : rg.out) os.push_back(o);
        const TensorType out{dt, os, qo};
        auto y = call<AveragePool>({x}, avg_attrs(geo), out);
        REQUIRE(y.ok());
        auto ys = call<AveragePool>({x}, avg_attrs(geo), out, OpContext{false});
        REQUIRE(ys.ok());
        std::vector<std::int32_t> got;
        if (u8) {
            for (auto v : y->to_vector<std::uint8_t>()) got.push_back(v);
            CHECK(bytes<std::uint8_t>(*ys) == bytes<std::uint8_t>(*y));
        } else {
            for (auto v : y->to_vector<std::int8_t>()) got.push_back(v);
            CHECK(bytes<std::int8_t>(*ys) == bytes<std::int8_t>(*y));
        }
        for (std::size_t i = 0; i < w.size(); ++i) {
            double sum = 0;
            for (double v : w[i].vals) sum += v;
            const double count = static_cast<double>(geo.cip ? w[i].padded : w[i].valid);
            // exact real average -> output units, clamped to the storage range (saturation is exact)
            const double t = std::clamp(sum / count / s_out + zp_out, static_cast<double>(lo), static_cast<double>(hi));
            const double err = std::fabs(got[i] - t);
            worst = std::max(worst, err);
            CHECK(err <= 0.5 + 1e-3);  // 1/2 + 2^-(S+1) + multiplier error, S >= 10 for these kernels
            const double nearest = std::clamp(std::nearbyint(sum / count / s_out) + zp_out, static_cast<double>(lo),
                                              static_cast<double>(hi));
            const double unclamped = sum / count / s_out;
            const bool tie = std::fabs(unclamped - std::floor(unclamped) - 0.5) < 1e-9;
            off_by_one += got[i] != nearest;
            off_non_tie += got[i] != nearest && !tie;
            ++total;
        }
        ++ran;
    }
    MESSAGE("quantized AveragePool: " << ran << " geometries, " << total << " outputs; worst |q - exact| = " << worst
                                      << " LSB; differs from round-half-even(exact) in " << off_by_one << " outputs ("
                                      << off_non_tie << " of them not exact ties)");
    CHECK(ran > 100);
    CHECK(off_non_tie == 0);  // only exact ties may round away from round-half-even
}

TEST_CASE("quantized MaxPool equals the max of the stored values, requantized within 1 LSB when quantizations differ") {
    std::mt19937 g(7);
    int ran = 0;
    double worst = 0;
    for (int iter = 0; iter < 300; ++iter) {
        const Geo geo = random_geo(g);
        const RefGeo rg = ref_geo(geo);
        if (rg.out.empty()) continue;
        const bool u8 = iter % 2 == 0;
        const DType dt = u8 ? DType::u8 : DType::i8;
        const std::int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
        std::uniform_int_distribution<int> qv(lo, hi);
        const float s_in = std::uniform_real_distribution<float>(0.01f, 1.0f)(g);
        const bool same = iter % 3 != 0;
        const float s_out = same ? s_in : std::uniform_real_distribution<float>(0.01f, 1.0f)(g);
        const std::int32_t zp_in = qv(g), zp_out = same ? zp_in : qv(g);
        const auto qi = numeric::make_quant(dt, s_in, zp_in).value();
        const auto qo = numeric::make_quant(dt, s_out, zp_out).value();
        std::vector<std::int32_t> xq(static_cast<std::size_t>(element_count(geo.in)));
        for (auto& v : xq) v = qv(g);
        Tensor x = u8 ? Tensor::from<std::uint8_t>(geo.in, std::vector<std::uint8_t>(xq.begin(), xq.end()), qi)
                      : Tensor::from<std::int8_t>(geo.in, std::vector<std::int8_t>(xq.begin(), xq.end()), qi);
        const auto w = ref_windows(geo, rg, std::vector<double>(xq.begin(), xq.end()));
        if (any_empty(w)) continue;
        Shape os = {geo.in[0], geo.in[1]};
        for (auto o : rg.out) os.push_back(o);
        auto y = call<MaxPool>({x}, max_attrs(geo), TensorType{dt, os, qo});
        auto ys = call<MaxPool>({x}, max_attrs(geo), TensorType{dt, os, qo}, OpContext{false});
        REQUIRE(y.ok());
        REQUIRE(ys.ok());
        std::vector<std::int32_t> got;
        if (u8) for (auto v : y->to_vector<std::uint8_t>()) got.push_back(v);
        else for (auto v : y->to_vector<std::int8_t>()) got.push_back(v);
        if (u8) CHECK(bytes<std::uint8_t>(*ys) == bytes<std::uint8_t>(*y));
        else CHECK(bytes<std::int8_t>(*ys) == bytes<std::int8_t>(*y));
        for (std::size_t i = 0; i < w.size(); ++i) {
            const double mq = *std::max_element(w[i].vals.begin(), w[i].vals.end());
            if (same) {
                CHECK(got[i] == static_cast<std::int32_t>(mq));  // a pure selection
            } else {
                const double t = std::clamp(static_cast<double>(s_in) * (mq - zp_in) / s_out + zp_out,
                                            static_cast<double>(lo), static_cast<double>(hi));
                worst = std::max(worst, std::fabs(got[i] - t));
                CHECK(std::fabs(got[i] - t) <= 0.75 + 1e-6);
            }
        }
        ++ran;
    }
    MESSAGE("quantized MaxPool: " << ran << " geometries; worst requantized |q - exact| = " << worst << " LSB");
    CHECK(ran > 100);
}

TEST_CASE("Global pools equal AveragePool / MaxPool with the whole spatial extent as kernel") {
    std::mt19937 g(5);
    for (int iter = 0; iter < 50; ++iter) {
        Shape in{std::uniform_int_distribution<int>(1, 2)(g), std::uniform_int_distribution<int>(1, 3)(g)};
        std::vector<std::int64_t> k;
        const int sp = std::uniform_int_distribution<int>(1, 3)(g);
        for (int a = 0; a < sp; ++a) in.push_back(std::uniform_int_distribution<int>(1, 5)(g)), k.push_back(in[2 + a]);
        std::vector<float> xf(static_cast<std::size_t>(element_count(in)));
        for (auto& v : xf) v = std::uniform_real_distribution<float>(-3, 3)(g);
        const Tensor x = Tensor::from<float>(in, xf);
        AveragePoolAttrs a;
        a.kernel_shape = k;
        MaxPoolAttrs m;
        m.kernel_shape = k;
        CHECK(bytes<float>(call<GlobalAveragePool>({x}).value()) == bytes<float>(call<AveragePool>({x}, a).value()));
        CHECK(bytes<float>(call<GlobalMaxPool>({x}).value()) == bytes<float>(call<MaxPool>({x}, m).value()));
    }
}
