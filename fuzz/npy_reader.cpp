// Fuzz target: the .npy reader and writer (io/npy.hpp) on arbitrary bytes.
//
// Input: any bytes, read as a whole .npy file.
// Properties (a __builtin_trap() when broken):
//   1. read_npy returns an array or a well-formed Error: the input name, a position "byte N" with N <= the input
//      size, an "npy-" rule and a non-empty detail;
//   2. an accepted array has exactly product(shape) * dtype_size bytes of data (counted here with overflow checks)
//      and no negative dimension, and its data is the tail of the input, as is or (big-endian files) with each
//      element's bytes reversed;
//   3. write_npy(array) is a file that read_npy accepts and that gives the same dtype, shape and data, whose data
//      starts at a multiple of 64 after a header ending in '\n', and that write_npy reproduces (a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <janus/io/npy.hpp>

namespace {
void check(bool ok, const char* what, const janus::io::NpyArray* a) {
    if (!ok) {
        std::fprintf(stderr, "npy_reader: %s broken", what);
        if (a != nullptr) {
            std::fprintf(stderr, " for %s (%zu data bytes)", janus::io::describe_type(*a).c_str(), a->data.size());
        }
        std::fprintf(stderr, "\n");
        __builtin_trap();
    }
}

bool data_is_input_tail(const janus::io::NpyArray& a, const std::uint8_t* in, std::size_t size) {
    const std::size_t n = a.data.size();
    const std::size_t elem = janus::dtype_size(a.dtype);
    const std::uint8_t* tail = in + (size - n);
    bool same = true;
    bool reversed = true;
    for (std::size_t i = 0; i < n; ++i) {
        same = same && a.data[i] == tail[i];
        const std::size_t element = i / elem * elem;
        reversed = reversed && a.data[i] == tail[element + (elem - 1 - (i - element))];
    }
    return same || reversed;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus::io;
    const auto r = read_npy({data, size}, "fuzz");
    if (!r.ok()) {
        const janus::Error& e = r.error();
        check(e.input == "fuzz" && !e.detail.empty() && e.rule.rfind("npy-", 0) == 0, "error form", nullptr);
        check(e.position.rfind("byte ", 0) == 0 && e.position.size() > 5 && std::stoull(e.position.substr(5)) <= size,
              "error position inside the input", nullptr);
        return 0;
    }
    const NpyArray& a = *r;
    // Counted independently of the reader: saturating at 2^64 with the compiler's overflow builtins.
    std::uint64_t count = 1;
    bool saturated = false;
    for (const std::int64_t d : a.shape) {
        check(d >= 0, "non-negative dimensions", &a);
        saturated = saturated || __builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count);
    }
    std::uint64_t bytes_expected = 0;
    saturated = saturated || __builtin_mul_overflow(count, janus::dtype_size(a.dtype), &bytes_expected);
    check(!saturated && bytes_expected == a.data.size(), "data size == product(shape) * dtype size", &a);
    check(a.data.size() <= size && data_is_input_tail(a, data, size), "data is the input's tail", &a);

    const std::vector<std::uint8_t> bytes = write_npy(a);
    const std::size_t header_end = bytes.size() - a.data.size();
    check(header_end % 64 == 0 && bytes[header_end - 1] == '\n', "data 64-aligned after '\\n'", &a);
    const auto again = read_npy(bytes, "rewritten");
    check(again.ok(), "write_npy output is readable", &a);
    check(again->dtype == a.dtype && again->shape == a.shape && again->data == a.data, "re-read equals", &a);
    check(write_npy(*again) == bytes, "write_npy fixed point", &a);
    return 0;
}
