#pragma once
// Element types Janus kernels read and write. One table: name, size, integer range.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace janus {

enum class DType : std::uint8_t { i8, u8, i32, i64, f32 };

//                      dtype       C++ type       name       bytes
template <DType D> struct dtype_traits;
template <> struct dtype_traits<DType::i8>  { using type = std::int8_t;   static constexpr std::string_view name = "int8";    };
template <> struct dtype_traits<DType::u8>  { using type = std::uint8_t;  static constexpr std::string_view name = "uint8";   };
template <> struct dtype_traits<DType::i32> { using type = std::int32_t;  static constexpr std::string_view name = "int32";   };
template <> struct dtype_traits<DType::i64> { using type = std::int64_t;  static constexpr std::string_view name = "int64";   };
template <> struct dtype_traits<DType::f32> { using type = float;         static constexpr std::string_view name = "float32"; };

template <class T> struct dtype_of;
template <> struct dtype_of<std::int8_t>   { static constexpr DType value = DType::i8;  };
template <> struct dtype_of<std::uint8_t>  { static constexpr DType value = DType::u8;  };
template <> struct dtype_of<std::int32_t>  { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t>  { static constexpr DType value = DType::i64; };
template <> struct dtype_of<float>         { static constexpr DType value = DType::f32; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

/// Call `f(std::type_identity<T>{})` with the C++ type of `d`.
template <class F>
constexpr decltype(auto) visit_dtype(DType d, F&& f) {
    switch (d) {
        case DType::i8: return f(std::type_identity<std::int8_t>{});
        case DType::u8: return f(std::type_identity<std::uint8_t>{});
        case DType::i32: return f(std::type_identity<std::int32_t>{});
        case DType::i64: return f(std::type_identity<std::int64_t>{});
        case DType::f32: break;
    }
    return f(std::type_identity<float>{});
}

constexpr std::size_t dtype_size(DType d) {
    return visit_dtype(d, [](auto t) { return sizeof(typename decltype(t)::type); });
}
constexpr std::string_view dtype_name(DType d) {
    return visit_dtype(d, [](auto t) { return dtype_traits<dtype_v<typename decltype(t)::type>>::name; });
}
constexpr bool is_quantized_storage(DType d) { return d == DType::i8 || d == DType::u8; }

/// Integer range of a quantized storage type, as int32.
constexpr std::int32_t qmin(DType d) { return d == DType::u8 ? 0 : -128; }
constexpr std::int32_t qmax(DType d) { return d == DType::u8 ? 255 : 127; }

}  // namespace janus
