// io/npy.hpp: round trips for every dtype and rank, numpy's own files (tests/io/golden_npy, made by
// make_golden_npy.py) read back and re-written byte for byte, the header forms a Python literal may take, the
// version 2.0 switch, array validation, and the atomic file writer. Malformed files: npy_bad.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <janus/io/npy.hpp>

#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::io;
namespace fs = std::filesystem;

namespace {

const fs::path golden_dir = fs::path(JANUS_SOURCE_DIR) / "tests/io/golden_npy";

std::vector<std::uint8_t> file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot open " << p.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> to_bytes(std::string_view s) { return {s.begin(), s.end()}; }

/// A fresh, empty directory under the system temp directory, removed with everything in it at scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        static std::atomic<int> n{0};
        path = fs::temp_directory_path() / ("janus_npy_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

template <class T>
std::vector<T> sample_values(std::size_t n) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            v[i] = static_cast<T>(i) * 0.75f - 3.0f;
        } else if constexpr (std::is_same_v<T, float16>) {
            v[i] = float16::from_bits(static_cast<std::uint16_t>(0x9e37u * (i + 1)));  // every kind of bit pattern
        } else {
            // Walks over the type's whole range, extremes included.
            const std::uint64_t bits = 0x9e3779b97f4a7c15ull * (i + 1);
            v[i] = static_cast<T>(bits >> (64 - 8 * sizeof(T)));
            if (i == 0) v[i] = std::numeric_limits<T>::min();
            if (i == 1) v[i] = std::numeric_limits<T>::max();
        }
    }
    return v;
}

std::int64_t product(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

template <class T>
void round_trip_all_shapes() {
    const std::vector<std::vector<std::int64_t>> shapes = {{}, {5}, {2, 3, 1, 4}, {0}, {3, 0, 2}, {1, 3, 32, 32}};
    for (const auto& shape : shapes) {
        CAPTURE(describe_type(dtype_v<T>, shape));
        const auto values = sample_values<T>(static_cast<std::size_t>(product(shape)));
        const NpyArray a = NpyArray::from<T>(shape, values);
        CHECK(a.data.size() == values.size() * sizeof(T));
        CHECK(a.element_count() == product(shape));
        const auto bytes = write_npy(a);
        // Version 1.0, data 64-aligned, header ends in '\n'.
        CHECK(bytes[6] == 1);
        const std::size_t data_at = 10 + (bytes[8] | (bytes[9] << 8));
        CHECK(data_at % 64 == 0);
        CHECK(bytes[data_at - 1] == '\n');
        CHECK(bytes.size() == data_at + a.data.size());
        const auto back = read_npy(bytes, "round-trip");
        REQUIRE(back.ok());
        CHECK(*back == a);
        CHECK(back->values<T>() == values);
    }
}

}  // namespace

TEST_CASE("npy: round trip of every dtype for 0-d, 1-d, 4-d and zero-size shapes") {
    round_trip_all_shapes<std::int8_t>();
    round_trip_all_shapes<std::uint8_t>();
    round_trip_all_shapes<std::int32_t>();
    round_trip_all_shapes<std::int64_t>();
    round_trip_all_shapes<float>();
    round_trip_all_shapes<std::int16_t>();
    round_trip_all_shapes<std::uint16_t>();
    round_trip_all_shapes<std::uint32_t>();
    round_trip_all_shapes<float16>();
}

TEST_CASE("npy: NpyArray::from stores little-endian bytes in C order") {
    const NpyArray a = NpyArray::from<std::int32_t>({2}, {0x01020304, -2});
    CHECK(a.dtype == DType::i32);
    CHECK(a.data == std::vector<std::uint8_t>{0x04, 0x03, 0x02, 0x01, 0xfe, 0xff, 0xff, 0xff});
    const NpyArray f = NpyArray::from<float>({}, {1.0f});
    CHECK(f.data == std::vector<std::uint8_t>{0x00, 0x00, 0x80, 0x3f});
    CHECK(f.element_count() == 1);
}

TEST_CASE("npy: describe_type") {
    CHECK(describe_type(DType::i8, std::vector<std::int64_t>{1, 3, 32, 32}) == "int8[1,3,32,32]");
    CHECK(describe_type(NpyArray::from<float>({}, {2.5f})) == "float32[]");
    CHECK(describe_type(NpyArray::from<std::uint8_t>({0}, {})) == "uint8[0]");
    CHECK(describe_type(NpyArray::from<std::int64_t>({2, 1}, {1, 2})) == "int64[2,1]");
}

// ------------------------------------------------------------------------------------------- numpy's own files

namespace {

struct Golden {
    const char* file;
    NpyArray expected;
    const char* same_bytes_as;  // the file write_npy must reproduce (itself for little-endian version 1.0 files)
};

std::vector<float> floats_from_bits(std::initializer_list<std::uint32_t> bits) {
    std::vector<float> v;
    for (auto b : bits) v.push_back(std::bit_cast<float>(b));
    return v;
}

std::vector<Golden> goldens() {
    std::vector<std::int32_t> i32_4d(24);
    for (std::size_t i = 0; i < 24; ++i)
        i32_4d[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) * 1000003 - 12000000);
    i32_4d[0] = std::numeric_limits<std::int32_t>::min();
    i32_4d[23] = std::numeric_limits<std::int32_t>::max();
    const auto i32_2x3 = NpyArray::from<std::int32_t>({2, 3}, {-2147483647 - 1, -1, 0, 1, 65536, 2147483647});
    const auto i64_3 = NpyArray::from<std::int64_t>(
        {3}, {std::numeric_limits<std::int64_t>::min(), -2, std::numeric_limits<std::int64_t>::max()});
    // 1.5, -0.0, inf, -inf, numpy's NaN, the smallest subnormal.
    const auto f32_2x3 = NpyArray::from<float>(
        {2, 3}, floats_from_bits({0x3fc00000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00000001u}));
    const auto i32_1x2x3x4 = NpyArray::from<std::int32_t>({1, 2, 3, 4}, i32_4d);
    const auto f16_2x3 = NpyArray::from<float16>(
        {2, 3}, {float16::from_bits(0x3e00), float16::from_bits(0x8000), float16::from_bits(0x7c00),
                 float16::from_bits(0xfc00), float16::from_bits(0x7e00), float16::from_bits(0x0001)});
    const auto u16_3 = NpyArray::from<std::uint16_t>({3}, {0, 1, 65535});
    std::vector<std::int64_t> rank32(31, 1);
    rank32.push_back(2);
    return {
        {"i8_2x3.npy", NpyArray::from<std::int8_t>({2, 3}, {-128, -1, 0, 1, 42, 127}), "i8_2x3.npy"},
        {"u8_5.npy", NpyArray::from<std::uint8_t>({5}, {0, 1, 127, 128, 255}), "u8_5.npy"},
        {"i32_2x3.npy", i32_2x3, "i32_2x3.npy"},
        {"i32_1x2x3x4.npy", i32_1x2x3x4, "i32_1x2x3x4.npy"},
        {"i64_3.npy", i64_3, "i64_3.npy"},
        {"i64_scalar.npy", NpyArray::from<std::int64_t>({}, {-1234567890123}), "i64_scalar.npy"},
        {"f32_2x3.npy", f32_2x3, "f32_2x3.npy"},
        {"f32_scalar.npy", NpyArray::from<float>({}, {3.25f}), "f32_scalar.npy"},
        {"f32_0x3.npy", NpyArray::from<float>({0, 3}, {}), "f32_0x3.npy"},
        {"u8_rank32.npy", NpyArray::from<std::uint8_t>(rank32, {7, 9}), "u8_rank32.npy"},
        {"u8_pad64_empty.npy", NpyArray::from<std::uint8_t>({0, 1, 1, 1, 1, 1, 1, 1, 10, 10, 10, 10, 10}, {}),
         "u8_pad64_empty.npy"},
        {"i32_2x3_be.npy", i32_2x3, "i32_2x3.npy"},
        {"i64_3_be.npy", i64_3, "i64_3.npy"},
        {"f32_2x3_be.npy", f32_2x3, "f32_2x3.npy"},
        {"i32_1x2x3x4_v2.npy", i32_1x2x3x4, "i32_1x2x3x4.npy"},
        {"i32_1x2x3x4_v3.npy", i32_1x2x3x4, "i32_1x2x3x4.npy"},
        {"i16_3.npy", NpyArray::from<std::int16_t>({3}, {-32768, -2, 32767}), "i16_3.npy"},
        {"u16_3.npy", u16_3, "u16_3.npy"},
        {"u16_3_be.npy", u16_3, "u16_3.npy"},
        {"u32_3.npy", NpyArray::from<std::uint32_t>({3}, {0, 2147483648u, 4294967295u}), "u32_3.npy"},
        {"f16_2x3.npy", f16_2x3, "f16_2x3.npy"},
        {"f16_2x3_be.npy", f16_2x3, "f16_2x3.npy"},
    };
}

}  // namespace

TEST_CASE("npy: numpy's files read to the expected arrays and write_npy reproduces numpy's bytes") {
    const auto all = goldens();
    std::size_t files_in_dir = 0;
    for (const auto& e : fs::directory_iterator(golden_dir)) files_in_dir += e.path().extension() == ".npy";
    CHECK_MESSAGE(files_in_dir == all.size(), "every file in tests/io/golden_npy has an expectation here");
    for (const Golden& g : all) {
        CAPTURE(g.file);
        const auto bytes = file_bytes(golden_dir / g.file);
        const auto a = read_npy(bytes, g.file);
        REQUIRE_MESSAGE(a.ok(), a.error().message());
        CHECK(describe_type(*a) == describe_type(g.expected));
        CHECK(*a == g.expected);
        CHECK(write_npy(*a) == file_bytes(golden_dir / g.same_bytes_as));
    }
}

TEST_CASE("npy: a version 1.0 golden read through read_npy_file, and the reference header text") {
    const auto a = read_npy_file((golden_dir / "i32_2x3.npy").string());
    REQUIRE(a.ok());
    CHECK(a->values<std::int32_t>() == std::vector<std::int32_t>{-2147483647 - 1, -1, 0, 1, 65536, 2147483647});
    // The header as numpy 1.24 writes it: dict, 20 spaces of growth room ("2" is one digit of 21), padding, '\n'.
    const auto bytes = write_npy(*a);
    const std::string header(bytes.begin() + 10, bytes.begin() + 128);
    const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(header == dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n");
    CHECK(bytes[8] == 118);
    CHECK(bytes[9] == 0);
}

// --------------------------------------------------------------------------------------- header literal forms

namespace {

/// A version 1.0 file with exactly this header text (no padding added) and data.
std::vector<std::uint8_t> npy_v1(std::string_view header, std::vector<std::uint8_t> data) {
    std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.push_back(static_cast<std::uint8_t>(header.size() & 0xff));
    out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

}  // namespace

TEST_CASE("npy: the header is a Python literal: quotes, key order, commas, whitespace, tuple forms") {
    const std::vector<std::uint8_t> six_i32 = NpyArray::from<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).data;
    const NpyArray expected_2x3 = NpyArray::from<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    const std::vector<std::string> accepted_2x3 = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n",
        R"({"descr": "<i4", "fortran_order": False, "shape": (2, 3)})",
        "{'shape': (2,3,), 'descr': '<i4', 'fortran_order': False}",
        "{'fortran_order':False,'shape':(2,3),'descr':'<i4',}",
        " \t{ 'descr' : '<i4' ,\n  'fortran_order' : False ,\r\n\t'shape' : ( 2 , 3 , ) , }   \n\n",
        "{\"descr\": '<i4', 'fortran_order': False, 'shape': (2,\n 3)}",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3),\f}",
    };
    for (const auto& h : accepted_2x3) {
        CAPTURE(h);
        const auto a = read_npy(npy_v1(h, six_i32), "header");
        REQUIRE_MESSAGE(a.ok(), a.error().message());
        CHECK(*a == expected_2x3);
    }
    struct Case {
        std::string header;
        NpyArray expected;
    };
    const std::vector<Case> other = {
        {"{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", NpyArray::from<std::int8_t>({3}, {-1, 2, -3})},
        {"{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }", NpyArray::from<std::int8_t>({3}, {-1, 2, -3})},
        {"{'descr': 'i1', 'fortran_order': False, 'shape': (3,), }", NpyArray::from<std::int8_t>({3}, {-1, 2, -3})},
        {"{'descr': '>i1', 'fortran_order': False, 'shape': (3,), }", NpyArray::from<std::int8_t>({3}, {-1, 2, -3})},
        {"{'descr': 'u1', 'fortran_order': False, 'shape': (3, ), }", NpyArray::from<std::uint8_t>({3}, {255, 2, 253})},
        {"{'descr': '<u1', 'fortran_order': False, 'shape': ( 3 ,) }",
         NpyArray::from<std::uint8_t>({3}, {255, 2, 253})},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (), }", NpyArray::from<std::uint8_t>({}, {7})},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': ( ), }", NpyArray::from<std::uint8_t>({}, {7})},
        // Python's -0 is 0: an empty array.
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-0, 4), }", NpyArray::from<float>({0, 4}, {})},
        // Python accepts 00 (only a nonzero integer may not have leading zeros).
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 00), }", NpyArray::from<float>({4, 0}, {})},
    };
    for (const auto& c : other) {
        CAPTURE(c.header);
        const auto a = read_npy(npy_v1(c.header, c.expected.data), "header");
        REQUIRE_MESSAGE(a.ok(), a.error().message());
        CHECK(*a == c.expected);
    }
}

TEST_CASE("npy: big-endian data is converted to little-endian") {
    // 0x01020304 and -2 as big-endian int32; 1.0f as big-endian float32; -3 as big-endian int64.
    const auto i32 = read_npy(npy_v1("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                                     {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe}),
                              "be");
    REQUIRE(i32.ok());
    CHECK(i32->values<std::int32_t>() == std::vector<std::int32_t>{0x01020304, -2});
    const auto f32 =
        read_npy(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (), }", {0x3f, 0x80, 0, 0}), "be");
    REQUIRE(f32.ok());
    CHECK(f32->values<float>() == std::vector<float>{1.0f});
    const auto i64 = read_npy(npy_v1("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }",
                                     {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd}),
                              "be");
    REQUIRE(i64.ok());
    CHECK(i64->values<std::int64_t>() == std::vector<std::int64_t>{-3});
    // Written back, it is little-endian.
    CHECK(write_npy(*i32) == write_npy(NpyArray::from<std::int32_t>({2}, {0x01020304, -2})));
}

TEST_CASE("npy: the writer switches to version 2.0 exactly when the version 1.0 header would pass 65535 bytes") {
    // numpy's rule, written out independently: header = dict + growth spaces + padding + '\n', where the padding is
    // 1..64 spaces so that magic (6) + version (2) + length field (2 or 4) + header is a multiple of 64.
    auto expected_header_size = [](std::size_t rank, std::size_t length_field) {
        const std::size_t dict = std::string("{'descr': '|u1', 'fortran_order': False, 'shape': (").size() + 3 * rank -
                                 2 + std::string("), }").size() + 20;
        const std::size_t unpadded = 8 + length_field + dict + 1;
        return dict + 1 + (64 - unpadded % 64);
    };
    std::size_t last_v1 = 0;
    std::size_t first_v2 = 0;
    for (std::size_t rank = 21806; rank <= 21830; ++rank) {  // the switch is at 21818
        const NpyArray a{DType::u8, std::vector<std::int64_t>(rank, 1), {42}};
        const auto bytes = write_npy(a);
        const std::uint8_t version = bytes[6];
        REQUIRE((version == 1 || version == 2));
        const std::size_t field = version == 1 ? 2 : 4;
        std::size_t length = 0;
        for (std::size_t i = 0; i < field; ++i) length |= static_cast<std::size_t>(bytes[8 + i]) << (8 * i);
        CHECK(length == expected_header_size(rank, field));
        CHECK((8 + field + length) % 64 == 0);
        if (version == 1) {
            CHECK(first_v2 == 0);  // never back to 1.0 after a 2.0
            last_v1 = rank;
        } else {
            CHECK(expected_header_size(rank, 2) > 65535);
            if (first_v2 == 0) first_v2 = rank;
        }
        const auto back = read_npy(bytes, "rank");
        REQUIRE(back.ok());
        CHECK(*back == a);
    }
    CHECK(last_v1 > 0);
    CHECK(first_v2 == last_v1 + 1);
    CHECK(expected_header_size(last_v1, 2) <= 65535);
}

TEST_CASE("npy: check_npy_array refuses arrays the writer cannot describe") {
    CHECK(check_npy_array(NpyArray::from<float>({2, 2}, {1, 2, 3, 4}), "a").ok());
    const NpyArray negative{DType::i8, {2, -1}, {}};
    CHECK(check_npy_array(negative, "a").error().message() ==
          "a:axis 1: error: dimension -1 is negative; dimensions must be >= 0 [npy-dim-range]");
    const NpyArray short_data{DType::i32, {2}, {1, 2, 3}};
    CHECK(check_npy_array(short_data, "out.npy").error().message() ==
          "out.npy: error: int32[2] needs 8 bytes of data but the array holds 3 bytes [npy-data-size]");
    const NpyArray huge{DType::i64, {std::int64_t{1} << 31, std::int64_t{1} << 31, 0}, {}};
    CHECK_RULE(check_npy_array(huge, "h"), "npy-size-overflow");
    const NpyArray just_fits{DType::u8, {std::numeric_limits<std::int64_t>::max(), 0}, {}};
    CHECK(check_npy_array(just_fits, "h").ok());
    const NpyArray just_over{DType::i32, {std::int64_t{1} << 61, 0}, {}};
    CHECK_RULE(check_npy_array(just_over, "h"), "npy-size-overflow");
}

// --------------------------------------------------------------------------------------------------- files

TEST_CASE("npy: write_npy_file / read_npy_file round trip and replacement of an existing file") {
    TempDir dir;
    const std::string path = (dir.path / "x.npy").string();
    const auto a = NpyArray::from<std::int8_t>({1, 3}, {1, -2, 3});
    REQUIRE(write_npy_file(path, a).ok());
    CHECK(file_bytes(path) == write_npy(a));
    const auto b = NpyArray::from<float>({2, 2}, {0.5f, 1.5f, -2.0f, 8.0f});
    REQUIRE(write_npy_file(path, b).ok());
    const auto back = read_npy_file(path);
    REQUIRE(back.ok());
    CHECK(*back == b);
    CHECK(dir.entries() == std::vector<std::string>{"x.npy"});  // no temporary left behind
}

TEST_CASE("npy: writing into a directory that does not exist fails, names the path and creates nothing") {
    TempDir dir;
    const std::string path = (dir.path / "missing" / "out.npy").string();
    const auto st = write_npy_file(path, NpyArray::from<std::uint8_t>({1}, {1}));
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message() == path + ": error: cannot create a temporary file in the directory '" +
                                      (dir.path / "missing").string() + "': No such file or directory [npy-write]");
    CHECK(dir.entries().empty());
}

TEST_CASE("npy: a failed write leaves the existing file untouched and no temporary behind") {
    TempDir dir;
    const std::string path = (dir.path / "keep.npy").string();
    const auto old = NpyArray::from<std::int32_t>({2}, {11, 22});
    REQUIRE(write_npy_file(path, old).ok());
    const auto old_bytes = file_bytes(path);

    SUBCASE("an invalid array is refused before anything is written") {
        const NpyArray bad{DType::i32, {3}, {1, 2}};
        const auto st = write_npy_file(path, bad);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().message() ==
              path + ": error: int32[3] needs 12 bytes of data but the array holds 2 bytes [npy-data-size]");
    }
    SUBCASE("the file system refuses the data (file size limit): the write fails half way") {
        // RLIMIT_FSIZE applies to root too; with SIGXFSZ ignored, write() past it fails with EFBIG.
        struct rlimit saved {};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        auto* previous = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit small = saved;
        small.rlim_cur = 1000;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        const auto st = write_npy_file(path, NpyArray::from<std::int32_t>({1000}, std::vector<std::int32_t>(1000, 5)));
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, previous);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().input == path);
        CHECK(st.error().rule == "npy-write");
        CHECK(st.error().detail.find("cannot write the temporary file") == 0);
        CHECK(st.error().detail.find("File too large") != std::string::npos);
    }
    SUBCASE("the target is a directory: refused before a temporary is made") {
        const fs::path sub = dir.path / "sub.npy";
        fs::create_directory(sub);
        const auto st = write_npy_file(sub.string(), old);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().message() == sub.string() + ": error: this is a directory, not a file [npy-write]");
        CHECK(fs::is_directory(sub));
        CHECK(fs::is_empty(sub));
        fs::remove(sub);
    }
    CHECK(file_bytes(path) == old_bytes);
    CHECK(dir.entries() == std::vector<std::string>{"keep.npy"});
}

TEST_CASE("npy: read_npy_file names the path in its errors") {
    TempDir dir;
    const std::string missing = (dir.path / "nope.npy").string();
    CHECK(read_npy_file(missing).error().message() ==
          missing + ": error: cannot open the file: No such file or directory [npy-read]");
    CHECK(read_npy_file(dir.path.string()).error().message() ==
          dir.path.string() + ": error: this is a directory, not a .npy file [npy-read]");
    const std::string bad = (fs::path(JANUS_SOURCE_DIR) / "tests/io/bad_npy/bool.npy").string();
    const auto r = read_npy_file(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().input == bad);
    CHECK(r.error().rule == "npy-dtype");
}

TEST_CASE("npy: the writer is deterministic") {
    const auto a = NpyArray::from<std::int64_t>({2, 2}, {1, -1, 1LL << 40, -(1LL << 40)});
    CHECK(write_npy(a) == write_npy(a));
    CHECK(write_npy(a) == write_npy(*read_npy(write_npy(a), "again")));
    const auto bytes = write_npy(a);
    CHECK(to_bytes("\x93NUMPY") == std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 6));
}
