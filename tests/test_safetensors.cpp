// dtype conversions, safetensors parsing (every malformed-header case), memory mapping and
// sharded tensor sets. The files are written by the test itself into a temporary directory.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "mtdesk/model/dtype.h"
#include "mtdesk/model/safetensors.h"

using namespace mtdesk;
using json = nlohmann::json;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)

namespace {

// ---- A tiny safetensors writer ----------------------------------------------------------------

struct Tensor {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
    std::string bytes;  // raw little-endian data
};

std::string u64le(uint64_t v) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &v, 8);
    return s;
}

/// 8-byte length + header text + data, with no checks at all (for malformed files).
std::string raw_file(const std::string& header, const std::string& data = {}) {
    return u64le(header.size()) + header + data;
}

/// A well-formed file: tensors laid out one after the other. `pad_to` pads the header with
/// spaces to a multiple of that many bytes (1 = no padding, to get unaligned data).
std::string make_file(const std::vector<Tensor>& tensors, const json& metadata = nullptr,
                      std::size_t pad_to = 8) {
    json header = json::object();
    std::string data;
    for (const Tensor& t : tensors) {
        header[t.name] = {{"dtype", t.dtype},
                          {"shape", t.shape},
                          {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
        data += t.bytes;
    }
    if (!metadata.is_null()) header["__metadata__"] = metadata;
    std::string text = header.dump();
    while (text.size() % pad_to != 0)
        text += ' ';
    return raw_file(text, data);
}

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

uint16_t fp32_to_bf16_trunc(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
}

/// Independent reference for binary16 -> double.
double fp16_reference(uint16_t h) {
    const int sign = (h >> 15) & 1;
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    double v;
    if (exponent == 0) {
        v = std::ldexp(mantissa, -24);
    } else if (exponent == 31) {
        v = mantissa ? NAN : INFINITY;
    } else {
        v = std::ldexp(1024 + mantissa, exponent - 25);
    }
    return sign ? -v : v;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
    QFile f(QString::fromStdString(path.string()));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes.data(), static_cast<qint64>(bytes.size())),
             static_cast<qint64>(bytes.size()));
}

std::string f32_bytes(std::size_t n, float start = 0.0f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = start + static_cast<float>(i);
    return bytes_of(v);
}

/// Runs `fn`, expects a FileError (of exactly UnsupportedError when `unsupported`) whose what()
/// starts with "<file>: " and contains `word`.
template <typename Fn>
void expect_file_error(Fn fn, const std::string& file, const std::string& word,
                       bool unsupported = false) {
    try {
        fn();
    } catch (const UnsupportedError& e) {
        const std::string what = e.what();
        QVERIFY2(unsupported, ("unexpected UnsupportedError: " + what).c_str());
        QVERIFY2(what.find(file) != std::string::npos, what.c_str());
        QVERIFY2(what.find(word) != std::string::npos, what.c_str());
        return;
    } catch (const FileError& e) {
        const std::string what = e.what();
        QVERIFY2(!unsupported, ("expected UnsupportedError, got FileError: " + what).c_str());
        QVERIFY2(what.find(file) != std::string::npos, what.c_str());
        QVERIFY2(what.find(word) != std::string::npos, what.c_str());
        QVERIFY2(e.file().find(file) != std::string::npos, what.c_str());
        return;
    } catch (const std::exception& e) {
        QFAIL((std::string("wrong exception type: ") + e.what()).c_str());
    }
    QFAIL(("no exception; expected one mentioning '" + word + "'").c_str());
}

std::span<const std::byte> as_span(const std::string& s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

  private slots:
    // ---- dtype ----
    void dtypeNames_data();
    void dtypeNames();
    void fp16Exhaustive();
    void fp16Values_data();
    void fp16Values();
    void bf16Values();
    void convertUnaligned();
    void convertRejectsIntegers();

    // ---- single files ----
    void roundTrip_data();
    void roundTrip();
    void unalignedData();
    void scalarAndEmptyTensors();
    void metadata();
    void badInput_data();
    void badInput();
    void absurdHeaderLength();
    void mappedFile();
    void emptyFile();

    // ---- tensor sets ----
    void singleFileSet();
    void shardedSet();
    void singleFileWinsOverIndex();
    void badSet_data();
    void badSet();
};

// ---------------------------------------------------------------------------------------------

void TestSafetensors::dtypeNames_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("size");
    QTest::newRow("F32") << int(DType::F32) << "F32" << 4;
    QTest::newRow("F16") << int(DType::F16) << "F16" << 2;
    QTest::newRow("BF16") << int(DType::BF16) << "BF16" << 2;
    QTest::newRow("F64") << int(DType::F64) << "F64" << 8;
    QTest::newRow("I64") << int(DType::I64) << "I64" << 8;
    QTest::newRow("I32") << int(DType::I32) << "I32" << 4;
    QTest::newRow("I16") << int(DType::I16) << "I16" << 2;
    QTest::newRow("I8") << int(DType::I8) << "I8" << 1;
    QTest::newRow("U8") << int(DType::U8) << "U8" << 1;
    QTest::newRow("BOOL") << int(DType::Bool) << "BOOL" << 1;
}

void TestSafetensors::dtypeNames() {
    QFETCH(int, dtype);
    QFETCH(QString, name);
    QFETCH(int, size);
    const auto t = static_cast<DType>(dtype);
    QCOMPARE(QString::fromUtf8(dtype_name(t).data(), int(dtype_name(t).size())), name);
    QCOMPARE(int(dtype_size(t)), size);
    const auto parsed = parse_dtype(name.toStdString());
    QVERIFY(parsed.has_value());
    QCOMPARE(int(*parsed), dtype);
    QVERIFY(!parse_dtype(name.toLower().toStdString()).has_value());  // case-sensitive
    QVERIFY(!parse_dtype("F8_E4M3").has_value());
    QVERIFY(!parse_dtype("").has_value());
}

void TestSafetensors::fp16Exhaustive() {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float got = fp16_to_fp32(static_cast<uint16_t>(h));
        const double want = fp16_reference(static_cast<uint16_t>(h));
        if (std::isnan(want)) {
            QVERIFY2(std::isnan(got), qPrintable(QString::number(h, 16)));
            // The NaN payload (and quiet bit) is kept in the top mantissa bits.
            uint32_t bits;
            std::memcpy(&bits, &got, 4);
            QCOMPARE((bits >> 13) & 0x3ffu, h & 0x3ffu);
            QCOMPARE(bits >> 31, (h >> 15) & 1u);
        } else {
            QVERIFY2(static_cast<double>(got) == want, qPrintable(QString::number(h, 16)));
            QCOMPARE(std::signbit(got), bool(h & 0x8000));
        }
    }
}

void TestSafetensors::fp16Values_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<double>("value");
    QTest::newRow("+0") << 0x0000 << 0.0;
    QTest::newRow("1") << 0x3c00 << 1.0;
    QTest::newRow("-2") << 0xc000 << -2.0;
    QTest::newRow("1/3") << 0x3555 << 0.333251953125;
    QTest::newRow("max") << 0x7bff << 65504.0;
    QTest::newRow("min normal") << 0x0400 << std::ldexp(1.0, -14);
    QTest::newRow("min subnormal") << 0x0001 << std::ldexp(1.0, -24);
    QTest::newRow("max subnormal") << 0x03ff << std::ldexp(1023.0, -24);
    QTest::newRow("-subnormal") << 0x8200 << -std::ldexp(512.0, -24);
    QTest::newRow("+inf") << 0x7c00 << double(INFINITY);
    QTest::newRow("-inf") << 0xfc00 << -double(INFINITY);
}

void TestSafetensors::fp16Values() {
    QFETCH(int, bits);
    QFETCH(double, value);
    QCOMPARE(static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(bits))), value);
}

void TestSafetensors::bf16Values() {
    QCOMPARE(bf16_to_fp32(0x3f80), 1.0f);
    QCOMPARE(bf16_to_fp32(0xc040), -3.0f);
    QCOMPARE(bf16_to_fp32(0x0001), std::ldexp(1.0f, -133));  // subnormal
    QVERIFY(std::isinf(bf16_to_fp32(0x7f80)));
    QVERIFY(std::isnan(bf16_to_fp32(0x7fc0)));
    QVERIFY(std::signbit(bf16_to_fp32(0x8000)));
}

void TestSafetensors::convertUnaligned() {
    // Sources inside mapped files are not aligned: convert must not assume it.
    const std::vector<float> values = {1.5f, -2.25f, 1e-30f, 65504.0f};
    std::string buf = "x";
    buf += bytes_of(values);
    std::vector<float> out(values.size());
    convert_to_fp32(DType::F32, buf.data() + 1, out.data(), out.size());
    QCOMPARE(out, values);

    const std::vector<uint16_t> halves = {0x3c00, 0xc000, 0x0001, 0x7bff};
    buf = "x" + bytes_of(halves);
    convert_to_fp32(DType::F16, buf.data() + 1, out.data(), out.size());
    QCOMPARE(out, (std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24), 65504.0f}));

    std::vector<uint16_t> b16;
    for (float v : values)
        b16.push_back(fp32_to_bf16_trunc(v));
    buf = "x" + bytes_of(b16);
    convert_to_fp32(DType::BF16, buf.data() + 1, out.data(), out.size());
    for (std::size_t i = 0; i < values.size(); ++i)
        QCOMPARE(out[i], bf16_to_fp32(b16[i]));

    convert_to_fp32(DType::F16, nullptr, nullptr, 0);  // empty: no access
}

void TestSafetensors::convertRejectsIntegers() {
    const int32_t v = 7;
    float out = 0;
    for (DType t : {DType::I32, DType::I64, DType::U8, DType::Bool, DType::I8, DType::I16}) {
        bool threw = false;
        try {
            convert_to_fp32(t, &v, &out, 1);
        } catch (const Error& e) {
            threw = std::string(e.what()).find(std::string(dtype_name(t))) != std::string::npos;
        }
        QVERIFY(threw);
    }
}

// ---------------------------------------------------------------------------------------------

void TestSafetensors::roundTrip_data() {
    QTest::addColumn<QString>("dtype");
    QTest::newRow("F32") << "F32";
    QTest::newRow("F16") << "F16";
    QTest::newRow("BF16") << "BF16";
}

void TestSafetensors::roundTrip() {
    QFETCH(QString, dtype);
    const std::string dt = dtype.toStdString();
    // Values exactly representable in every one of the three types.
    const std::vector<float> values = {0.0f, 1.0f, -1.5f, 0.25f, 3.0f, -0.125f, 96.0f, -7.0f};
    std::string bytes;
    if (dt == "F32") {
        bytes = bytes_of(values);
    } else if (dt == "BF16") {
        std::vector<uint16_t> b;
        for (float v : values)
            b.push_back(fp32_to_bf16_trunc(v));
        bytes = bytes_of(b);
    } else {
        // fp16 of the same values, written by hand.
        const std::vector<uint16_t> h = {0x0000, 0x3c00, 0xbe00, 0x3400,
                                         0x4200, 0xb000, 0x5600, 0xc700};
        bytes = bytes_of(h);
    }
    const std::string second = f32_bytes(3, 10.0f);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const fs::path path = fs::path(tmp.path().toStdString()) / "model.safetensors";
    write_bytes(path, make_file({{"model.layers.0.w", dt, {2, 4}, bytes},
                                 {"model.norm.weight", "F32", {3}, second}}));

    const SafetensorsFile file(path);
    QCOMPARE(file.path(), path);
    QCOMPARE(file.tensors().size(), std::size_t(2));
    const TensorView& t = file.tensors()[0];  // data-offset order
    QCOMPARE(t.name, std::string("model.layers.0.w"));
    QCOMPARE(std::string(dtype_name(t.dtype)), dt);
    QCOMPARE(t.shape, (std::vector<int64_t>{2, 4}));
    QCOMPARE(t.numel(), int64_t(8));
    QCOMPARE(t.nbytes, bytes.size());
    QCOMPARE(t.file, path.string());
    QVERIFY(std::memcmp(t.data, bytes.data(), bytes.size()) == 0);
    QCOMPARE(t.to_fp32(), values);
    QCOMPARE(file.tensors()[1].to_fp32(), (std::vector<float>{10.0f, 11.0f, 12.0f}));

    // parse() on the same bytes gives the same views, pointing into the given buffer.
    const std::string whole = make_file({{"model.layers.0.w", dt, {2, 4}, bytes}});
    const auto views = SafetensorsFile::parse(as_span(whole), "mem");
    QCOMPARE(views.size(), std::size_t(1));
    QCOMPARE(views[0].to_fp32(), values);
    QVERIFY(views[0].data >= reinterpret_cast<const std::byte*>(whole.data()));
    QCOMPARE(views[0].file, std::string("mem"));
}

void TestSafetensors::unalignedData() {
    const std::vector<float> values = {1.0f, 2.0f, 3.0f};
    for (std::size_t pad : {std::size_t(1), std::size_t(3)}) {
        const std::string bytes = make_file({{"a", "F32", {3}, bytes_of(values)}}, nullptr, pad);
        const auto views = SafetensorsFile::parse(as_span(bytes), "x.safetensors");
        QCOMPARE(views.at(0).to_fp32(), values);
    }
}

void TestSafetensors::scalarAndEmptyTensors() {
    const std::string bytes =
        make_file({{"scalar", "F32", {}, f32_bytes(1, 5.0f)},
                   {"empty", "F16", {0, 4}, ""},
                   {"also_empty", "BF16", {3, 0}, ""},
                   {"ints", "I64", {2}, bytes_of(std::vector<int64_t>{1, -1})}});
    const auto views = SafetensorsFile::parse(as_span(bytes), "x.safetensors");
    QCOMPARE(views.size(), std::size_t(4));
    for (const TensorView& v : views) {
        if (v.name == "scalar") {
            QCOMPARE(v.numel(), int64_t(1));
            QCOMPARE(v.to_fp32(), std::vector<float>{5.0f});
        } else if (v.name == "ints") {
            QCOMPARE(v.nbytes, std::size_t(16));
            QVERIFY_THROWS_EXCEPTION(FileError, v.to_fp32());
        } else {
            QCOMPARE(v.numel(), int64_t(0));
            QCOMPARE(v.nbytes, std::size_t(0));
            QVERIFY(v.to_fp32().empty());
        }
    }
}

void TestSafetensors::metadata() {
    const std::string bytes =
        make_file({{"a", "F32", {1}, f32_bytes(1)}}, json{{"format", "pt"}, {"note", "x"}});
    std::map<std::string, std::string> meta;
    SafetensorsFile::parse(as_span(bytes), "m.safetensors", &meta);
    QCOMPARE(meta.size(), std::size_t(2));
    QCOMPARE(meta["format"], std::string("pt"));

    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "m.safetensors";
    write_bytes(path, bytes);
    QCOMPARE(SafetensorsFile(path).metadata().at("note"), std::string("x"));

    // Null metadata is allowed (the reference implementation's Option<HashMap>).
    const std::string null_meta =
        raw_file(R"({"__metadata__":null,"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                 f32_bytes(1));
    QCOMPARE(SafetensorsFile::parse(as_span(null_meta), "m").size(), std::size_t(1));
}

void TestSafetensors::badInput_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<QString>("word");
    QTest::addColumn<bool>("unsupported");

    const std::string t4 = f32_bytes(4);  // 16 bytes of data
    auto entry = [](const std::string& fields) { return R"({"t":{)" + fields + "}}"; };

    QTest::newRow("empty file") << std::string() << "truncated" << false;
    QTest::newRow("bytes appended after the last tensor")
        << raw_file(entry(R"("dtype":"F32","shape":[4],"data_offsets":[0,16])"), t4 + "junk")
        << "4 bytes after the last tensor" << false;
    QTest::newRow("a hole before a tensor")
        << raw_file(entry(R"("dtype":"F32","shape":[3],"data_offsets":[4,16])"), t4)
        << "bytes 0 to 4 of the data buffer belong to no tensor" << false;
    QTest::newRow("5 bytes") << std::string("\x10\0\0\0\0", 5) << "truncated" << false;
    QTest::newRow("header length past the end")
        << (u64le(1000) + R"({"a":1})") << "past the end" << false;
    QTest::newRow("header length huge") << u64le(~uint64_t{0}) << "past the end" << false;
    QTest::newRow("zero-length header") << raw_file("") << "not valid JSON" << false;
    QTest::newRow("malformed JSON")
        << raw_file(R"({"t":{"dtype":"F32",)") << "not valid JSON" << false;
    QTest::newRow("trailing garbage") << raw_file(R"({} x)") << "not valid JSON" << false;
    QTest::newRow("invalid UTF-8 name")
        << raw_file("{\"\xff\xfe\":{}}") << "not valid JSON" << false;
    QTest::newRow("header is an array") << raw_file("[1,2]") << "not a JSON object" << false;
    QTest::newRow("header is a string") << raw_file(R"("x")") << "not a JSON object" << false;
    QTest::newRow("nested too deeply")
        << raw_file(std::string(5000, '[') + std::string(5000, ']')) << "nested" << false;
    QTest::newRow("deep inside an entry")
        << raw_file(R"({"t":)" + std::string(100, '[') + std::string(100, ']') + "}") << "nested"
        << false;
    QTest::newRow("entry not an object") << raw_file(R"({"t":5})") << "not a JSON object" << false;
    QTest::newRow("missing dtype")
        << raw_file(entry(R"("shape":[4],"data_offsets":[0,16])"), t4) << "no dtype" << false;
    QTest::newRow("dtype not a string")
        << raw_file(entry(R"("dtype":4,"shape":[4],"data_offsets":[0,16])"), t4) << "dtype"
        << false;
    QTest::newRow("missing shape")
        << raw_file(entry(R"("dtype":"F32","data_offsets":[0,16])"), t4) << "no shape" << false;
    QTest::newRow("missing data_offsets")
        << raw_file(entry(R"("dtype":"F32","shape":[4])"), t4) << "no data_offsets" << false;
    QTest::newRow("unknown dtype")
        << raw_file(entry(R"("dtype":"F17","shape":[4],"data_offsets":[0,16])"), t4)
        << "unknown dtype" << false;
    QTest::newRow("lower-case dtype")
        << raw_file(entry(R"("dtype":"f32","shape":[4],"data_offsets":[0,16])"), t4)
        << "unknown dtype" << false;
    QTest::newRow("fp8 dtype")
        << raw_file(entry(R"("dtype":"F8_E4M3","shape":[16],"data_offsets":[0,16])"), t4)
        << "F8_E4M3" << true;
    QTest::newRow("shape not an array")
        << raw_file(entry(R"("dtype":"F32","shape":4,"data_offsets":[0,16])"), t4) << "not an array"
        << false;
    QTest::newRow("negative dimension")
        << raw_file(entry(R"("dtype":"F32","shape":[-4],"data_offsets":[0,16])"), t4) << "negative"
        << false;
    QTest::newRow("fractional dimension")
        << raw_file(entry(R"("dtype":"F32","shape":[1.5],"data_offsets":[0,16])"), t4)
        << "non-integer" << false;
    QTest::newRow("shape product overflows")
        << raw_file(
               entry(R"("dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,16])"),
               t4)
        << "overflow" << false;
    QTest::newRow("bytes overflow")
        << raw_file(entry(R"("dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,16])"),
                    t4)
        << "overflow" << false;
    QTest::newRow("dimension beyond int64")
        << raw_file(entry(R"("dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,16])"),
                    t4)
        << "overflow" << false;
    QTest::newRow("data_offsets of three")
        << raw_file(entry(R"("dtype":"F32","shape":[4],"data_offsets":[0,8,16])"), t4)
        << "[begin, end]" << false;
    QTest::newRow("data_offsets not an array")
        << raw_file(entry(R"("dtype":"F32","shape":[4],"data_offsets":16)"), t4) << "[begin, end]"
        << false;
    QTest::newRow("negative offset")
        << raw_file(entry(R"("dtype":"F32","shape":[4],"data_offsets":[-16,0])"), t4)
        << "non-negative" << false;
    QTest::newRow("begin after end")
        << raw_file(entry(R"("dtype":"F32","shape":[0],"data_offsets":[16,0])"), t4)
        << "begin > end" << false;
    QTest::newRow("end past the data")
        << raw_file(entry(R"("dtype":"F32","shape":[5],"data_offsets":[0,20])"), t4)
        << "past the end of the file" << false;
    QTest::newRow("end far past the data")
        << raw_file(
               entry(
                   R"("dtype":"F32","shape":[4],"data_offsets":[18446744073709551599,18446744073709551615])"),
               t4)
        << "past the end of the file" << false;
    QTest::newRow("size mismatch")
        << raw_file(entry(R"("dtype":"F32","shape":[3],"data_offsets":[0,16])"), t4)
        << "size mismatch" << false;
    QTest::newRow("size mismatch bf16")
        << raw_file(entry(R"("dtype":"BF16","shape":[4],"data_offsets":[0,16])"), t4)
        << "size mismatch" << false;
    QTest::newRow("overlapping tensors")
        << raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                    t4)
        << "overlap" << false;
    QTest::newRow("same range twice")
        << raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})",
                    t4)
        << "overlap" << false;
    QTest::newRow("contained tensor")
        << raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                    R"("b":{"dtype":"F16","shape":[2],"data_offsets":[8,12]}})",
                    t4)
        << "overlap" << false;
    QTest::newRow("duplicate name")
        << raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                    t4)
        << "twice" << false;
    QTest::newRow("metadata not an object")
        << raw_file(R"({"__metadata__":["x"]})") << "__metadata__" << false;
    QTest::newRow("metadata value not a string")
        << raw_file(R"({"__metadata__":{"format":1}})") << "__metadata__" << false;
}

void TestSafetensors::badInput() {
    QFETCH(std::string, bytes);
    QFETCH(QString, word);
    QFETCH(bool, unsupported);
    const std::string name = "model-00002-of-00002.safetensors";

    // In memory, through parse().
    expect_file_error([&] { (void)SafetensorsFile::parse(as_span(bytes), name); }, name,
                      word.toStdString(), unsupported);
    if (QTest::currentTestFailed()) return;

    // On disk, through the mapping constructor.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const fs::path path = fs::path(tmp.path().toStdString()) / name;
    write_bytes(path, bytes);
    expect_file_error([&] { SafetensorsFile file(path); }, path.string(), word.toStdString(),
                      unsupported);
}

void TestSafetensors::absurdHeaderLength() {
    // A header length inside the file but over the 100 MB limit. The file is sparse.
    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "huge.safetensors";
    QFile f(QString::fromStdString(path.string()));
    QVERIFY(f.open(QIODevice::WriteOnly));
    const std::string len = u64le(100'000'001);
    f.write(len.data(), 8);
    QVERIFY(f.resize(100'000'016));
    f.close();
    expect_file_error([&] { SafetensorsFile file(path); }, "huge.safetensors", "absurdly large");
}

void TestSafetensors::mappedFile() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write_bytes(dir / "f.bin", "hello");
    const MappedFile m(dir / "f.bin");
    QCOMPARE(m.size(), std::size_t(5));
    QVERIFY(std::memcmp(m.data(), "hello", 5) == 0);
    QCOMPARE(m.path(), dir / "f.bin");

    expect_file_error([&] { MappedFile missing(dir / "nope.safetensors"); }, "nope.safetensors",
                      "does not exist");
    expect_file_error([&] { MappedFile d(dir); }, dir.string(), "directory");
}

void TestSafetensors::emptyFile() {
    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "empty.safetensors";
    write_bytes(path, "");
    const MappedFile m(path);
    QCOMPARE(m.size(), std::size_t(0));
    QVERIFY(m.data() == nullptr);
    expect_file_error([&] { SafetensorsFile f(path); }, "empty.safetensors", "truncated");
}

// ---------------------------------------------------------------------------------------------

void TestSafetensors::singleFileSet() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write_bytes(dir / "model.safetensors", make_file({{"a", "F32", {2}, f32_bytes(2)},
                                                      {"b", "F16", {3}, std::string(6, '\0')}}));
    const TensorSet set(dir);
    QCOMPARE(set.all().size(), std::size_t(2));
    QCOMPARE(set.files().size(), std::size_t(1));
    QCOMPARE(set.source(), dir / "model.safetensors");
    QCOMPARE(set.total_bytes(), std::size_t(14));
    QVERIFY(set.find("a") != nullptr);
    QVERIFY(set.find("c") == nullptr);
    QCOMPARE(set.at("b").shape, std::vector<int64_t>{3});
    expect_file_error([&] { (void)set.at("missing.weight"); }, dir.string(), "missing.weight");
}

void TestSafetensors::shardedSet() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const std::string s1 = "model-00001-of-00002.safetensors";
    const std::string s2 = "model-00002-of-00002.safetensors";
    write_bytes(dir / s1,
                make_file({{"model.embed_tokens.weight", "BF16", {4, 2}, std::string(16, 'x')},
                           {"model.layers.0.w", "F32", {2}, f32_bytes(2)}}));
    write_bytes(dir / s2, make_file({{"model.norm.weight", "F32", {2}, f32_bytes(2, 7.0f)},
                                     {"lm_head.weight", "F16", {4, 2}, std::string(16, 'y')}}));
    const json index = {{"metadata", {{"total_size", 56}}},
                        {"weight_map",
                         {{"model.embed_tokens.weight", s1},
                          {"model.layers.0.w", "./" + s1},  // same file, spelled differently
                          {"model.norm.weight", s2},
                          {"lm_head.weight", s2}}}};
    write_bytes(dir / "model.safetensors.index.json", index.dump(2));

    const TensorSet set(dir);
    QCOMPARE(set.all().size(), std::size_t(4));
    QCOMPARE(set.files().size(), std::size_t(2));
    QCOMPARE(set.source(), dir / "model.safetensors.index.json");
    QCOMPARE(set.total_bytes(), std::size_t(16 + 8 + 8 + 16));
    QCOMPARE(set.at("model.norm.weight").to_fp32(), (std::vector<float>{7.0f, 8.0f}));
    QCOMPARE(set.at("model.norm.weight").file, (dir / s2).string());
    QCOMPARE(set.at("model.embed_tokens.weight").file, (dir / s1).string());
}

void TestSafetensors::singleFileWinsOverIndex() {
    // transformers looks for model.safetensors first; a stale index is then not read at all.
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write_bytes(dir / "model.safetensors", make_file({{"a", "F32", {1}, f32_bytes(1)}}));
    write_bytes(dir / "model.safetensors.index.json", "{ not json");
    const TensorSet set(dir);
    QCOMPARE(set.all().size(), std::size_t(1));
}

void TestSafetensors::badSet_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("word");
    QTest::newRow("no weights") << "none"
                                << ""
                                << "no model.safetensors";
    QTest::newRow("only .bin weights") << "bin"
                                       << ""
                                       << "PyTorch";
    QTest::newRow("missing shard") << "missing_shard"
                                   << "model-00002-of-00002.safetensors"
                                   << "does not exist";
    QTest::newRow("tensor absent from its shard") << "absent"
                                                  << "model-00002-of-00002.safetensors"
                                                  << "not in this file";
    QTest::newRow("tensor in two shards") << "twice"
                                          << "model-00002-of-00002.safetensors"
                                          << "also in";
    QTest::newRow("malformed index") << "bad_json"
                                     << "model.safetensors.index.json"
                                     << "not valid JSON";
    QTest::newRow("index without weight_map") << "no_map"
                                              << "model.safetensors.index.json"
                                              << "weight_map";
    QTest::newRow("weight_map value not a string") << "map_value"
                                                   << "model.safetensors.index.json"
                                                   << "not a file name";
    QTest::newRow("shard outside the directory") << "escape"
                                                 << "model.safetensors.index.json"
                                                 << "outside";
    QTest::newRow("shard name longer than any path") << "long_name"
                                                     << "model.safetensors.index.json"
                                                     << "names a file of 100000 bytes";
    QTest::newRow("truncated shard") << "truncated_shard"
                                     << "model-00001-of-00002.safetensors"
                                     << "truncated";
    QTest::newRow("bad single file") << "bad_single"
                                     << "model.safetensors"
                                     << "past the end";
}

void TestSafetensors::badSet() {
    QFETCH(QString, kind);
    QFETCH(QString, file);
    QFETCH(QString, word);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const std::string s1 = "model-00001-of-00002.safetensors";
    const std::string s2 = "model-00002-of-00002.safetensors";
    json map = {{"a", s1}, {"b", s2}};
    const std::string shard1 = make_file({{"a", "F32", {1}, f32_bytes(1)}});
    std::string shard2 = make_file({{"b", "F32", {1}, f32_bytes(1)}});
    bool write_index = true;
    bool write_shard1 = true;
    bool write_shard2 = true;
    std::string index_text;

    if (kind == "none") {
        write_index = write_shard1 = write_shard2 = false;
    } else if (kind == "bin") {
        write_index = write_shard1 = write_shard2 = false;
        write_bytes(dir / "pytorch_model.bin", "PK");
    } else if (kind == "missing_shard") {
        write_shard2 = false;
    } else if (kind == "absent") {
        shard2 = make_file({{"c", "F32", {1}, f32_bytes(1)}});
    } else if (kind == "twice") {
        shard2 = make_file({{"a", "F32", {1}, f32_bytes(1)}, {"b", "F32", {1}, f32_bytes(1)}});
    } else if (kind == "bad_json") {
        index_text = R"({"weight_map": {"a": )";
    } else if (kind == "no_map") {
        index_text = R"({"metadata": {}})";
    } else if (kind == "map_value") {
        map["b"] = 2;
    } else if (kind == "escape") {
        map["b"] = "../" + s2;
    } else if (kind == "long_name") {
        map["b"] = std::string(100000, 'x');
    } else if (kind == "truncated_shard") {
        write_bytes(dir / s1, shard1.substr(0, 20));
        write_shard1 = false;
    } else if (kind == "bad_single") {
        write_index = write_shard1 = write_shard2 = false;
        write_bytes(dir / "model.safetensors", shard1.substr(0, shard1.size() - 2));
    }
    if (write_shard1) write_bytes(dir / s1, shard1);
    if (write_shard2) write_bytes(dir / s2, shard2);
    if (write_index) {
        if (index_text.empty()) index_text = json{{"weight_map", map}}.dump();
        write_bytes(dir / "model.safetensors.index.json", index_text);
    }
    const std::string expected_file = file.isEmpty() ? dir.string() : file.toStdString();
    expect_file_error([&] { TensorSet set(dir); }, expected_file, word.toStdString());
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
