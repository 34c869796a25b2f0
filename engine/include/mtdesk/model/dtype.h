#pragma once
// Element types of tensors stored in model files.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mtdesk {

/// Storage dtype of a tensor, named as in the safetensors header ("F32", "BF16", ...).
enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

/// Bytes per element of `t`.
std::size_t dtype_size(DType t) noexcept;
/// safetensors spelling of `t` ("BF16").
std::string_view dtype_name(DType t) noexcept;
/// Parses a safetensors dtype string; nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// IEEE binary16 -> binary32 (exact).
float fp16_to_fp32(uint16_t h) noexcept;
/// bfloat16 -> binary32 (exact: bf16 is the top half of an fp32).
inline float bf16_to_fp32(uint16_t b) noexcept {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

/// Converts `n` elements of dtype `src_type` at `src` to fp32 at `dst`.
/// Throws mtdesk::Error for non-float dtypes.
void convert_to_fp32(DType src_type, const void* src, float* dst, std::size_t n);

}  // namespace mtdesk
