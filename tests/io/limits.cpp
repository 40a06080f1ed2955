// Resource limits of file reading and of the tensor conversions (issue 26): core/file.hpp read_file refuses devices
// and files above its cap; core/limits.hpp charge_memory's boundary; .npy / .pb arrays become tensors only within
// the size policy (core/size.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <janus/core/file.hpp>
#include <janus/core/limits.hpp>
#include <janus/io/tensor_npy.hpp>
#include <janus/io/tensor_pb.hpp>

#include "support/check_rule.hpp"

using namespace janus;

TEST_CASE("file-kind: read_file refuses a device instead of reading it until memory runs out") {
    const auto r = read_file("/dev/zero", "file-readable", "a model");
    CHECK_RULE(r, "file-kind");
    CHECK(r.error().detail == "this is a device, not a model");
}

TEST_CASE("file-size-limit: read_file refuses a file above its cap, at the exact boundary") {
    const auto path = std::filesystem::temp_directory_path() / ("janus_limits_" + std::to_string(::getpid()));
    {
        std::ofstream out(path, std::ios::binary);
        out << std::string(100, 'x');
    }
    CHECK(read_file(path.string(), "file-readable", "a file", 100).value().size() == 100);
    const auto r = read_file(path.string(), "file-readable", "a file", 99);
    CHECK_RULE(r, "file-size-limit");
    CHECK(r.error().detail.find("larger than the limit of 99 bytes") != std::string::npos);
    // a sparse file of 2^33 bytes is refused before anything is read (the default cap is 1 GiB)
    std::filesystem::resize_file(path, std::uint64_t{1} << 33);
    CHECK_RULE(read_file(path.string(), "file-readable"), "file-size-limit");
    std::filesystem::remove(path);
}

TEST_CASE("memory-limit: charge_memory refuses above the budget, and names it") {
    CHECK(charge_memory(1024, 1024, "m.onnx", "the inputs").ok());
    const auto r = charge_memory(std::uint64_t{1} << 42, default_max_memory, "m.onnx", "the synthesized inputs");
    CHECK_RULE(r, "memory-limit");
    CHECK(r.error().message() ==
          "m.onnx: error: the synthesized inputs need 4398046511104 bytes (4 TiB), more than the memory budget of "
          "1073741824 bytes (1 GiB) (janusc --max-memory) [memory-limit]");
    CHECK(byte_size_text(1000) == "1000 bytes");
}

TEST_CASE("elements-at-most-2^40: a valid .npy array or TensorProto outside the size policy is not a tensor") {
    // numpy's rule (2^63 - 1 bytes, zero dims aside) accepts [0, 2^41]; Janus's policy does not
    const io::NpyArray a{DType::i8, {0, std::int64_t{1} << 41}, {}};
    CHECK(io::check_npy_array(a, "a.npy").ok());
    CHECK_RULE(io::to_tensor(a, "a.npy"), "elements-at-most-2^40");
    CHECK_RULE(io::to_tensor(io::NpyArray{DType::i8, std::vector<std::int64_t>(7, 1), {1}}, "r.npy"), "rank-at-most-6");
    CHECK(io::to_tensor(io::NpyArray{DType::i8, {0, 3}, {}}).value().shape() == Shape{0, 3});
    onnx::Tensor t;
    t.dtype = DType::f32;
    t.dims = {0, std::int64_t{1} << 62, std::int64_t{1} << 62};
    CHECK_RULE(io::to_tensor(t, "t.pb"), "elements-at-most-2^40");
}
