#pragma once
// Element types Janus tensors hold. One table: C++ type, name, ONNX code, numpy code (sizes follow from the type).
// Which ops take which dtypes is the ops' business (ops/op.hpp classify_input_kinds); most kernels take float32 and
// quantized int8/uint8, and the plain-integer and float16 kernels are opt-in per op.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <janus/core/error.hpp>
#include <janus/core/float16.hpp>

namespace janus {

/// The element types. New types are appended: the numeric value is never stored (files store onnx_code).
enum class DType : std::uint8_t { i8, u8, i32, i64, f32, i16, u16, u32, f16 };
inline constexpr DType all_dtypes[] = {DType::i8,  DType::u8,  DType::i16, DType::u16, DType::i32,
                                       DType::u32, DType::i64, DType::f16, DType::f32};

// One row per dtype: its C++ type, its name, its ONNX TensorProto.DataType code (also the package's dtype code) and
// its numpy type code (the .npy descr without the byte order).
//                       dtype         C++ type        name                       onnx                  npy
template <DType D> struct dtype_traits;
template <> struct dtype_traits<DType::i8>  { using type = std::int8_t;   static constexpr std::string_view name = "int8";    static constexpr int onnx_code = 3;  static constexpr std::string_view npy = "i1"; };
template <> struct dtype_traits<DType::u8>  { using type = std::uint8_t;  static constexpr std::string_view name = "uint8";   static constexpr int onnx_code = 2;  static constexpr std::string_view npy = "u1"; };
template <> struct dtype_traits<DType::i16> { using type = std::int16_t;  static constexpr std::string_view name = "int16";   static constexpr int onnx_code = 5;  static constexpr std::string_view npy = "i2"; };
template <> struct dtype_traits<DType::u16> { using type = std::uint16_t; static constexpr std::string_view name = "uint16";  static constexpr int onnx_code = 4;  static constexpr std::string_view npy = "u2"; };
template <> struct dtype_traits<DType::i32> { using type = std::int32_t;  static constexpr std::string_view name = "int32";   static constexpr int onnx_code = 6;  static constexpr std::string_view npy = "i4"; };
template <> struct dtype_traits<DType::u32> { using type = std::uint32_t; static constexpr std::string_view name = "uint32";  static constexpr int onnx_code = 12; static constexpr std::string_view npy = "u4"; };
template <> struct dtype_traits<DType::i64> { using type = std::int64_t;  static constexpr std::string_view name = "int64";   static constexpr int onnx_code = 7;  static constexpr std::string_view npy = "i8"; };
template <> struct dtype_traits<DType::f16> { using type = float16;       static constexpr std::string_view name = "float16"; static constexpr int onnx_code = 10; static constexpr std::string_view npy = "f2"; };
template <> struct dtype_traits<DType::f32> { using type = float;         static constexpr std::string_view name = "float32"; static constexpr int onnx_code = 1;  static constexpr std::string_view npy = "f4"; };

template <class T> struct dtype_of;
template <> struct dtype_of<std::int8_t>   { static constexpr DType value = DType::i8;  };
template <> struct dtype_of<std::uint8_t>  { static constexpr DType value = DType::u8;  };
template <> struct dtype_of<std::int16_t>  { static constexpr DType value = DType::i16; };
template <> struct dtype_of<std::uint16_t> { static constexpr DType value = DType::u16; };
template <> struct dtype_of<std::int32_t>  { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<std::int64_t>  { static constexpr DType value = DType::i64; };
template <> struct dtype_of<float16>       { static constexpr DType value = DType::f16; };
template <> struct dtype_of<float>         { static constexpr DType value = DType::f32; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

/// True for the enumerators above (a DType read from outside, e.g. a cast byte, may be none of them).
constexpr bool is_valid_dtype(DType d) { return static_cast<std::size_t>(d) < std::size(all_dtypes); }

/// Call `f(std::type_identity<T>{})` with the C++ type of integer dtype `d` (int8 ... int64); `d` must be one
/// (callers classify first: ops/op.hpp classify_input_kinds), so no float branch is ever instantiated.
template <class F>
constexpr decltype(auto) visit_int_dtype(DType d, F&& f) {
    switch (d) {
        case DType::u8: return f(std::type_identity<std::uint8_t>{});
        case DType::i16: return f(std::type_identity<std::int16_t>{});
        case DType::u16: return f(std::type_identity<std::uint16_t>{});
        case DType::i32: return f(std::type_identity<std::int32_t>{});
        case DType::u32: return f(std::type_identity<std::uint32_t>{});
        case DType::i64: return f(std::type_identity<std::int64_t>{});
        default: break;
    }
    JANUS_ASSERT(d == DType::i8);
    return f(std::type_identity<std::int8_t>{});
}

/// Call `f(std::type_identity<T>{})` with the C++ type of `d` (float32 for a value that is no dtype).
template <class F>
constexpr decltype(auto) visit_dtype(DType d, F&& f) {
    if (d == DType::f16) return f(std::type_identity<float16>{});
    if (d == DType::f32 || !is_valid_dtype(d)) return f(std::type_identity<float>{});
    return visit_int_dtype(d, f);
}

constexpr std::size_t dtype_size(DType d) {
    return visit_dtype(d, [](auto t) { return sizeof(typename decltype(t)::type); });
}
constexpr std::string_view dtype_name(DType d) {
    return visit_dtype(d, [](auto t) { return dtype_traits<dtype_v<typename decltype(t)::type>>::name; });
}
/// The ONNX code of `d`; 0 (ONNX's UNDEFINED) for a value that is not a dtype.
constexpr int dtype_onnx_code(DType d) {
    if (!is_valid_dtype(d)) return 0;
    return visit_dtype(d, [](auto t) { return dtype_traits<dtype_v<typename decltype(t)::type>>::onnx_code; });
}
constexpr std::string_view dtype_npy_code(DType d) {
    return visit_dtype(d, [](auto t) { return dtype_traits<dtype_v<typename decltype(t)::type>>::npy; });
}
/// The dtype whose ONNX TensorProto.DataType code is `code`, if Janus has one.
constexpr std::optional<DType> dtype_from_onnx_code(std::int64_t code) {
    for (DType d : all_dtypes)
        if (dtype_onnx_code(d) == code) return d;
    return std::nullopt;
}
constexpr bool is_float_dtype(DType d) { return d == DType::f32 || d == DType::f16; }
/// The names of every dtype, for messages: "int8, uint8, ..., float32".
inline std::string dtype_list() {
    std::string s;
    for (DType d : all_dtypes) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
    return s;
}
constexpr bool is_quantized_storage(DType d) { return d == DType::i8 || d == DType::u8; }

/// Integer range of a quantized storage type, as int32.
constexpr std::int32_t qmin(DType d) { return d == DType::u8 ? 0 : -128; }
constexpr std::int32_t qmax(DType d) { return d == DType::u8 ? 255 : 127; }

}  // namespace janus
