// Fuzz target: the package reader (janus/package/package.hpp), on raw bytes or on mutations of generated packages.
//
// Input: byte 0 selects the mode.
//   even  raw: bytes 1.. are a package file.
//   odd   structured: bytes 1.. drive a generator that builds a package (program from the instruction table,
//         weights, regions, buffers of every kind, inputs and outputs with layouts and quantization, a debug map,
//         a host section, a segments section, extra sections; mostly valid, sometimes not). The package is
//         written, then up to 4 mutations (offset, xor) change its bytes. The checksums are then recomputed
//         (unless bit 1 of byte 0 is set), so that a mutation reaches the structural and content rules instead of
//         stopping at a checksum. The result is read as in raw mode.
// Properties (a __builtin_trap() when broken):
//   1. read_package (toolchain check off) returns a package or a well-formed Error: the input's name, position
//      "byte N" with N <= size, non-empty rule and detail.
//   2. on success the bytes are canonical: write_package(result) reproduces them exactly, and reading those gives an
//      equal package; inspect() succeeds; with the toolchain check on, the read succeeds exactly when the isa hash is
//      this build's, and fails with package-toolchain otherwise.
//   3. structured: write_package refuses the generated package with a well-formed error, or its bytes read back as
//      an equal package.
//   4. an accepted package with a host section: graph::host_plan returns a plan that covers the program's inputs
//      and outputs with one increasing node count per segment, or an error whose input names the host or segments
//      section.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/package/package.hpp>

#include "../tests/package/craft.hpp"

namespace {

using namespace janus;
using namespace janus::package;
using Bytes = std::vector<std::uint8_t>;

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "package_reader: property broken: %s\n", what);
        __builtin_trap();
    }
}

void check_error(const Error& e, std::string_view name, std::size_t size) {
    check(e.input == name && !e.rule.empty() && !e.detail.empty(), "well-formed error");
    check(e.position.rfind("byte ", 0) == 0, "error position is 'byte N'");
    std::uint64_t at = 0;
    const char* b = e.position.data() + 5;
    const auto [p, ec] = std::from_chars(b, e.position.data() + e.position.size(), at);
    check(ec == std::errc{} && p == e.position.data() + e.position.size() && at <= size, "error position in the file");
}

void check_bytes(std::span<const std::uint8_t> bytes) {
    const auto r = read_package(bytes, "fuzz", ReadOptions{.check_toolchain = false});
    if (!r.ok()) {
        check_error(r.error(), "fuzz", bytes.size());
        return;
    }
    const auto again = write_package(*r);
    check(again.ok(), "an accepted package can be written");
    check(again->size() == bytes.size() && std::equal(again->begin(), again->end(), bytes.begin()),
          "write_package(read_package(b)) == b");
    const auto reread = read_package(*again, "fuzz", ReadOptions{.check_toolchain = false});
    check(reread.ok() && *reread == *r, "re-read equal");
    check(inspect(bytes, "fuzz").ok(), "inspect succeeds on an accepted package");
    if (r->host) {  // the host section's graph: a plan or a well-formed error naming the section
        const auto h = graph::host_plan(*r, "fuzz");
        check(h.ok() || ((h.error().input.rfind("fuzz host section", 0) == 0 ||
                          h.error().input.rfind("fuzz segments section", 0) == 0) &&
                         !h.error().rule.empty()),
              "host_plan gives a plan or an error naming the host or segments section");
        if (h.ok()) {
            check(h->nodes_before.size() == r->segments.size() + 1 &&
                      std::is_sorted(h->nodes_before.begin(), h->nodes_before.end()) &&
                      h->nodes_before.back() <= h->graph.nodes.size(),
                  "a host plan has one node count per segment, increasing, within the graph");
            check(h->program_inputs.size() == r->inputs.size() && h->program_outputs.size() == r->outputs.size(),
                  "a host plan covers the program's inputs and outputs");
        }
    }
    const auto strict = read_package(bytes, "fuzz");
    if (r->toolchain.isa_hash == isa_hash())
        check(strict.ok() && *strict == *r, "toolchain check passes");
    else
        check(!strict.ok() && strict.error().rule == "package-toolchain", "toolchain check refuses another ISA");
}

/// Bytes of the input, then zeros.
struct Stream {
    const std::uint8_t* data;
    std::size_t size, at = 0;
    std::uint8_t byte() { return at < size ? data[at++] : 0; }
    std::uint32_t u16() { return byte() | std::uint32_t{byte()} << 8; }
    bool chance(int in_256) { return byte() < in_256; }
};

Package generate(Stream& in) {
    Package p;
    const int n_code = in.byte() % 12;
    for (int i = 0; i < n_code; ++i) {
        const vnpu::InstrInfo& row = vnpu::instruction_table[in.byte() % vnpu::instruction_table.size()];
        vnpu::Instr ins;
        ins.info = &row;
        for (int k = 0; k < row.n_fields; ++k) {
            const vnpu::Field& f = row.fields[static_cast<std::size_t>(k)];
            ins.operands[static_cast<std::size_t>(k)] = std::min(f.max(), f.min() + (in.byte() % 4) * f.scale);
        }
        if (in.chance(40)) ins.wait = in.byte() % 16;
        if (in.chance(40)) ins.signal = in.byte() % 16;
        if (const auto w = vnpu::encode(ins); w.ok()) p.code.push_back(*w);
    }
    if (!in.chance(16)) p.code.push_back(vnpu::Word{1} << 58);  // halt, usually
    p.weights.resize(std::size_t{16} * (in.byte() % 40));
    for (std::size_t i = 0; i < p.weights.size(); ++i) p.weights[i] = static_cast<std::uint8_t>(i * 131 + in.size);
    p.scratch_bytes = 16u * (in.byte() % 32);
    const int n_buffers = in.byte() % 6;
    for (int i = 0; i < n_buffers; ++i) {
        Buffer b;
        b.name = "b" + std::to_string(in.byte() % 8);
        const std::uint8_t k = in.byte();
        b.kind = static_cast<BufferKind>(k == 255 ? 9 : 1 + k % 8);
        switch (b.kind) {
            case BufferKind::lut:
                b.size = 256u * (1 + in.byte() % 2);
                break;
            case BufferKind::rq_table:
                b.size = 16u + 16u * (1 + in.byte() % 3);
                break;
            case BufferKind::ew_table:
                b.size = 48;
                break;
            case BufferKind::bias:
                b.size = 4u * (1 + in.byte() % 8);
                break;
            default:
                b.size = 1u + in.byte() % 64;
                break;
        }
        b.offset = 16u * (in.byte() % 24);
        p.buffers.push_back(b);
    }
    for (const bool input : {true, false}) {
        auto& list = input ? p.inputs : p.outputs;
        std::uint64_t at = 0;
        const int n = in.byte() % 3;
        for (int i = 0; i < n; ++i) {
            IoDesc d;
            d.name = (input ? "x" : "y") + std::to_string(in.byte() % 4);
            constexpr DType storages[] = {DType::i8, DType::u8, DType::i32, DType::f32, DType::i64};
            d.storage = storages[in.byte() % 5];
            const int conv = in.byte() % 3;
            d.dtype = conv == 1 ? DType::f32 : conv == 2 && d.storage == DType::i32 ? DType::i64 : d.storage;
            const std::size_t rank = in.byte() % 5;
            for (std::size_t k = 0; k < rank; ++k) d.shape.push_back(in.chance(8) ? 0 : 1 + in.byte() % 6);
            // row-major strides, the innermost extent padded to 16 bytes when asked, sometimes one stride off
            const auto esize = static_cast<std::int64_t>(dtype_size(d.storage));
            const bool padded = in.chance(100);
            d.strides.assign(rank, 0);
            std::int64_t step = esize;
            for (std::size_t k = rank; k-- > 0;) {
                d.strides[k] = step;
                step *= d.shape[k] == 0 ? 1 : d.shape[k];
                if (k + 1 == rank && padded) step = (step + 15) / 16 * 16;
            }
            if (rank > 0 && in.chance(12)) d.strides[in.byte() % rank] = in.byte() % 9;
            d.size = static_cast<std::uint64_t>((step + 15) / 16 * 16);
            const int q = in.byte() % 3;
            if (q == 1 || (q == 2 && rank == 0)) {
                d.quant = {{0.5f + static_cast<float>(in.byte()) / 64.0f}, {in.byte() % 7 - 3}, 0};
            } else if (q == 2) {
                d.quant.axis = static_cast<std::int32_t>(in.byte() % rank);
                const auto c = static_cast<std::size_t>(d.shape[static_cast<std::size_t>(d.quant.axis)]);
                for (std::size_t j = 0; j < c; ++j) {
                    d.quant.scales.push_back(static_cast<float>(1 + in.byte()) / 128.0f);
                    d.quant.zero_points.push_back(d.storage == DType::u8 ? in.byte() : 0);
                }
            }
            d.offset = at + 16u * (in.chance(20) ? in.byte() % 3 : 0);
            at = d.offset + d.size;
            list.push_back(d);
        }
        (input ? p.input_bytes : p.output_bytes) = at + 16u * (in.byte() % 3);
    }
    for (std::uint32_t i = 0, first = 0, n = in.byte() % 4; i < n; ++i) {
        first += in.byte() % 3;
        const std::uint32_t last = first + 1 + in.byte() % 3;
        p.debug.push_back(
            {first, last, in.chance(60) ? "" : "n" + std::to_string(i), "Op" + std::to_string(in.byte() % 3)});
        first = last;
    }
    if (in.chance(48)) {  // a host section: one of a few graphs, its prologue count and sometimes a stray byte
        static constexpr const char* graphs[] = {
            "graph h {\n  input %y: int8[4] q(int8 s=0.5 zp=0)\n  %d: float32[4] = DequantizeLinear(%y)\n"
            "  output %d\n}\n",
            "graph h {\n  input %x: float32[4]\n  %q: int8[4] q(int8 s=0.5 zp=0) = QuantizeLinear(%x) "
            "{dtype=\"int8\", scale=[0.5f], zero_point=[0]}\n  output %q\n}\n",
            "graph h {\n}\n", ""};
        HostSection h{in.byte() % 3u, graphs[in.byte() % 4]};
        if (in.chance(30) && !h.graph.empty()) h.graph[in.byte() % h.graph.size()] = static_cast<char>(in.byte());
        p.host = std::move(h);
    }
    if (in.chance(40)) {  // a segments section (with or without a host section), mostly well-formed
        const int n = in.byte() % 3;
        std::uint32_t entry = 0, nodes = p.host ? p.host->prologue : 0, first_in = 0, first_out = 0;
        for (int i = 0; i < n; ++i) {
            entry += in.byte() % 4;
            nodes += in.byte() % 2;
            first_in += in.byte() % 2;
            first_out += in.byte() % 2;
            p.segments.push_back({entry, nodes, first_in, first_out});
        }
    }
    if (in.chance(64)) p.extra.push_back({8u + in.byte(), Bytes(in.byte() % 20, in.byte())});
    if (in.chance(8)) p.toolchain.isa_hash ^= 1;
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t mode = data[0];
    if ((mode & 1) == 0) {
        check_bytes(std::span(data + 1, size - 1));
        return 0;
    }
    Stream in{data + 1, size - 1};
    const Package p = generate(in);
    const auto w = write_package(p, "generated");
    if (!w.ok()) {
        check_error(w.error(), "generated", SIZE_MAX);
        return 0;
    }
    const auto r = read_package(*w, "generated", ReadOptions{.check_toolchain = false});
    check(r.ok() && *r == p, "a written package reads back equal");
    Bytes b = *w;
    for (int m = in.byte() % 5; m > 0; --m) {
        const std::size_t at = in.u16() % b.size();
        b[at] ^= in.byte();
    }
    if ((mode & 2) == 0) craft::reseal(b);
    check_bytes(b);
    return 0;
}
