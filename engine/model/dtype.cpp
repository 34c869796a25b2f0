// Element types of tensors stored in model files: sizes, names, fp16/bf16 -> fp32.

#include "mtdesk/model/dtype.h"

#include <cstring>
#include <string>

#include "mtdesk/error.h"

namespace mtdesk {

std::size_t dtype_size(DType t) noexcept {
    switch (t) {
        case DType::F64:
        case DType::I64:
            return 8;
        case DType::F32:
        case DType::I32:
            return 4;
        case DType::F16:
        case DType::BF16:
        case DType::I16:
            return 2;
        case DType::I8:
        case DType::U8:
        case DType::Bool:
            return 1;
    }
    return 0;
}

std::string_view dtype_name(DType t) noexcept {
    switch (t) {
        case DType::F32:
            return "F32";
        case DType::F16:
            return "F16";
        case DType::BF16:
            return "BF16";
        case DType::F64:
            return "F64";
        case DType::I64:
            return "I64";
        case DType::I32:
            return "I32";
        case DType::I16:
            return "I16";
        case DType::I8:
            return "I8";
        case DType::U8:
            return "U8";
        case DType::Bool:
            return "BOOL";
    }
    return "?";
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
    static constexpr struct {
        std::string_view name;
        DType type;
    } kTable[] = {
        {"F32", DType::F32}, {"F16", DType::F16},   {"BF16", DType::BF16}, {"F64", DType::F64},
        {"I64", DType::I64}, {"I32", DType::I32},   {"I16", DType::I16},   {"I8", DType::I8},
        {"U8", DType::U8},   {"BOOL", DType::Bool},
    };
    for (const auto& entry : kTable) {
        if (entry.name == name) return entry.type;
    }
    return std::nullopt;
}

float fp16_to_fp32(uint16_t h) noexcept {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1fu) {
        // Inf / NaN: all-ones exponent, mantissa (NaN payload) kept in the top bits.
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
        // Normal: rebias 15 -> 127.
        bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;  // +-0
    } else {
        // Subnormal half: value = mantissa * 2^-24. Normalise it; every half subnormal is an
        // fp32 normal, so this is exact.
        int shift = 0;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            ++shift;
        }
        mantissa &= 0x3ffu;
        exponent = static_cast<uint32_t>(127 - 15 + 1 - shift);
        bits = sign | (exponent << 23) | (mantissa << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

void convert_to_fp32(DType src_type, const void* src, float* dst, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(src);
    switch (src_type) {
        case DType::F32:
            if (n != 0) std::memcpy(dst, src, n * sizeof(float));
            return;
        case DType::F16:
            for (std::size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, bytes + 2 * i, sizeof h);  // source may be unaligned
                dst[i] = fp16_to_fp32(h);
            }
            return;
        case DType::BF16:
            for (std::size_t i = 0; i < n; ++i) {
                uint16_t b;
                std::memcpy(&b, bytes + 2 * i, sizeof b);
                dst[i] = bf16_to_fp32(b);
            }
            return;
        default:
            break;
    }
    throw Error("cannot convert a " + std::string(dtype_name(src_type)) +
                " tensor to fp32: only F32, F16 and BF16 are floating-point weight types");
}

}  // namespace mtdesk
