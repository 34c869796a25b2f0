// The on-disk cache of quantised weights: round trips, file names, corrupt / truncated / foreign
// files ignored and rebuilt, keys that follow the weights files, atomic writes.

#include <QTest>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/quant/quant_cache.h"
#include "mtdesk/quant/quantize.h"
#include "test_files.h"

using namespace mtdesk;
namespace fs = std::filesystem;
using mtdesk::test::read_file;
using mtdesk::test::write_file;

namespace {

std::vector<float> weights(int n, int k, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 0.05f);
    std::vector<float> w(static_cast<std::size_t>(n) * k);
    for (float& v : w)
        v = d(rng);
    return w;
}

bool same(const QuantizedTensor& a, const QuantizedTensor& b) {
    if (a.index() != b.index()) return false;
    if (const auto* x = std::get_if<QuantizedInt8>(&a)) {
        const auto& y = std::get<QuantizedInt8>(b);
        return x->n == y.n && x->k == y.k && x->q == y.q && x->scales == y.scales;
    }
    const auto& x = std::get<QuantizedInt4>(a);
    const auto& y = std::get<QuantizedInt4>(b);
    return x.n == y.n && x.k == y.k && x.group == y.group && x.k_padded == y.k_padded &&
           x.packed == y.packed && x.scales == y.scales;
}

// Files in `dir` (names only), sorted.
std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A stand-in safetensors file: 8-byte header length, JSON header, `data_bytes` of data.
void write_shard(const fs::path& path, const std::string& header, std::size_t data_bytes,
                 char fill) {
    std::string s(8, '\0');
    const uint64_t len = header.size();
    std::memcpy(s.data(), &len, 8);
    s += header;
    s += std::string(data_bytes, fill);
    write_file(path, s);
}

const std::string kKey = "0123456789abcdef-int8-v1";

}  // namespace

class TestQuantCache : public QObject {
    Q_OBJECT

    mtdesk::test::CaseDirs dirs_;

  private slots:
    void initTestCase() { QVERIFY(dirs_.valid()); }

    void roundTripBothKinds() {
        const QuantCache cache(dirs_.fresh() / "quantized");
        const std::vector<float> w = weights(9, 200, 1);
        const QuantizedTensor q8 = quantize_int8(w, 9, 200);
        const QuantizedTensor q4 = quantize_int4(w, 9, 200);
        QVERIFY(!cache.load(kKey, "model.layers.0.mlp.up_proj.weight"));
        cache.store(kKey, "model.layers.0.mlp.up_proj.weight", q8);
        cache.store(kKey, "model.layers.0.mlp.down_proj.weight", q4);
        const auto back8 = cache.load(kKey, "model.layers.0.mlp.up_proj.weight");
        const auto back4 = cache.load(kKey, "model.layers.0.mlp.down_proj.weight");
        QVERIFY(back8 && same(*back8, q8));
        QVERIFY(back4 && same(*back4, q4));
        QVERIFY(!cache.load("fedcba9876543210-int8-v1", "model.layers.0.mlp.up_proj.weight"));
        // A newer store replaces the entry.
        const QuantizedTensor other = quantize_int8(weights(9, 200, 2), 9, 200);
        cache.store(kKey, "model.layers.0.mlp.up_proj.weight", other);
        QVERIFY(same(*cache.load(kKey, "model.layers.0.mlp.up_proj.weight"), other));
        QVERIFY(!same(other, q8));
    }

    // Names map to distinct files inside the entry directory, whatever they contain.
    void fileNames() {
        const fs::path root = dirs_.fresh() / "q";
        const QuantCache cache(root);
        const QuantizedTensor t = quantize_int8(weights(2, 3, 3), 2, 3);
        const std::vector<std::string> names = {"a/b", "a%2Fb", "../escape",          ".",
                                                "..",  "x y",   std::string(300, 'n')};
        for (const std::string& name : names) {
            const fs::path p = cache.tensor_path(kKey, name);
            QCOMPARE(p.parent_path(), root / kKey);
            cache.store(kKey, name, t);
        }
        QCOMPARE(listing(root / kKey).size(), names.size());
        for (const std::string& name : names)
            QVERIFY(cache.load(kKey, name));
        QVERIFY(!fs::exists(root / "escape.qt"));
        QVERIFY_THROWS_EXCEPTION(Error, cache.tensor_path("../up", "w"));
        QVERIFY_THROWS_EXCEPTION(Error, cache.tensor_path("ABC", "w"));
        QVERIFY_THROWS_EXCEPTION(Error, cache.tensor_path(kKey, ""));
        QVERIFY(!cache.load("../up", "w"));
    }

    // Every way a file can be damaged is "not cached"; storing again rebuilds the entry.
    void corruptFilesAreIgnored() {
        const QuantCache cache(dirs_.fresh());
        const QuantizedTensor t = quantize_int4(weights(4, 300, 5), 4, 300);
        cache.store(kKey, "w", t);
        const fs::path path = cache.tensor_path(kKey, "w");
        const std::string good = read_file(path);
        QVERIFY(good.size() > 64);
        QVERIFY(cache.load(kKey, "w"));

        std::vector<std::pair<const char*, std::string>> bad;
        std::string s = good;
        s[s.size() / 2] ^= 0x10;  // a flipped bit in the values
        bad.emplace_back("flipped value bit", s);
        s = good;
        s[s.size() - 1] ^= 0x01;  // in the last scale
        bad.emplace_back("flipped scale bit", s);
        s = good;
        s[0] = 'X';
        bad.emplace_back("magic", s);
        s = good;
        s[8] = 99;  // format version
        bad.emplace_back("version", s);
        s = good;
        s[19] = 0x40;  // n becomes 2^30 + 4: the sizes no longer match the file
        bad.emplace_back("huge n", s);
        bad.emplace_back("truncated by one byte", good.substr(0, good.size() - 1));
        bad.emplace_back("truncated header", good.substr(0, 30));
        bad.emplace_back("one byte too many", good + "x");
        bad.emplace_back("empty", "");
        for (const auto& [what, bytes] : bad) {
            write_file(path, bytes);
            QVERIFY2(!cache.load(kKey, "w"), what);
            // load_or_make rebuilds it, and the rebuilt entry is good again.
            int made = 0;
            const QuantizedTensor again = cache.load_or_make(kKey, "w", [&] {
                ++made;
                return t;
            });
            QCOMPARE(made, 1);
            QVERIFY(same(again, t));
            QCOMPARE(read_file(path), good);
            const QuantizedTensor cached = cache.load_or_make(kKey, "w", [&] {
                ++made;
                return t;
            });
            QCOMPARE(made, 1);  // served from the cache
            QVERIFY(same(cached, t));
        }
        // A file written for one name is not served for another (e.g. after a rename).
        fs::copy_file(path, cache.tensor_path(kKey, "v"));
        QVERIFY(!cache.load(kKey, "v"));
        // A directory where the file should be is not a tensor.
        fs::create_directories(cache.tensor_path(kKey, "dir"));
        QVERIFY(!cache.load(kKey, "dir"));
    }

    // The key follows the weights files: content, size, mtime, tier; not the order given.
    void keyFollowsTheShards() {
        const fs::path dir = dirs_.fresh();
        const fs::path a = dir / "model-00001-of-00002.safetensors";
        const fs::path b = dir / "model-00002-of-00002.safetensors";
        write_shard(a, R"({"x":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 3 << 20, 'a');
        write_shard(b, R"({"y":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 1000, 'b');
        const std::vector<fs::path> files = {a, b};
        const std::string k8 = QuantCache::model_key(files, Tier::INT8);
        QVERIFY(k8.ends_with("-int8-v1"));
        QCOMPARE(k8.size(), std::size_t(16 + 8));
        QCOMPARE(QuantCache::model_key(files, Tier::INT8), k8);  // stable
        const std::vector<fs::path> reversed = {b, a};
        QCOMPARE(QuantCache::model_key(reversed, Tier::INT8), k8);
        const std::string k4 = QuantCache::model_key(files, Tier::INT4);
        QVERIFY(k4.ends_with("-int4-v1"));
        QCOMPARE(k4.substr(0, 16) == k8.substr(0, 16), false);
        QCOMPARE(QuantCache(dir / "cache").entry_dir(k8), dir / "cache" / k8);  // a valid key

        // Same size, same mtime, different bytes near the start of shard b: new key.
        const auto mtime = fs::last_write_time(b);
        write_shard(b, R"({"y":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 1000, 'c');
        fs::last_write_time(b, mtime);
        const std::string changed = QuantCache::model_key(files, Tier::INT8);
        QVERIFY(changed != k8);
        // Same bytes, new mtime: new key.
        fs::last_write_time(b, mtime + std::chrono::seconds(5));
        const std::string touched = QuantCache::model_key(files, Tier::INT8);
        QVERIFY(touched != changed);
        // A different header in shard a (same data size): new key.
        const auto mtime_a = fs::last_write_time(a);
        write_shard(a, R"({"x":{"dtype":"F16 ","shape":[4],"data_offsets":[0,8]}})", 3 << 20, 'a');
        fs::last_write_time(a, mtime_a);
        QVERIFY(QuantCache::model_key(files, Tier::INT8) != touched);
        // The last MiB is covered too.
        const std::string before_tail = QuantCache::model_key(files, Tier::INT8);
        {
            std::string bytes = read_file(a);
            bytes[bytes.size() - 10] = 'z';
            write_file(a, bytes);
            fs::last_write_time(a, mtime_a);
        }
        QVERIFY(QuantCache::model_key(files, Tier::INT8) != before_tail);
        // One shard fewer: new key.
        QVERIFY(QuantCache::model_key(std::vector<fs::path>{a}, Tier::INT8) !=
                QuantCache::model_key(files, Tier::INT8));

        QVERIFY_THROWS_EXCEPTION(
            FileError, QuantCache::model_key(std::vector<fs::path>{dir / "missing"}, Tier::INT8));
        QVERIFY_THROWS_EXCEPTION(Error, QuantCache::model_key({}, Tier::INT8));
    }

    void defaultRoot() {
        const QByteArray old_xdg = qgetenv("XDG_CACHE_HOME"), old_home = qgetenv("HOME");
        const bool had_xdg = qEnvironmentVariableIsSet("XDG_CACHE_HOME");
        qputenv("XDG_CACHE_HOME", "/tmp/xdg-cache");
        QCOMPARE(QuantCache::default_root(), fs::path("/tmp/xdg-cache/mtdesk/quantized"));
        qputenv("XDG_CACHE_HOME", "relative/dir");  // ignored, as the XDG rules say
        qputenv("HOME", "/home/someone");
        QCOMPARE(QuantCache::default_root(), fs::path("/home/someone/.cache/mtdesk/quantized"));
        qunsetenv("XDG_CACHE_HOME");
        QCOMPARE(QuantCache::default_root(), fs::path("/home/someone/.cache/mtdesk/quantized"));
        qunsetenv("HOME");
        QVERIFY_THROWS_EXCEPTION(Error, QuantCache::default_root());
        qputenv("HOME", old_home);
        if (had_xdg) qputenv("XDG_CACHE_HOME", old_xdg);
    }

    // A store that fails leaves no temporary file behind and the previous entry intact.
    void atomicWrites() {
        const fs::path root = dirs_.fresh();
        const QuantCache cache(root);
        const QuantizedTensor small = quantize_int8(weights(2, 8, 1), 2, 8);
        const QuantizedTensor large = quantize_int8(weights(256, 1024, 2), 256, 1024);

        // 1. The final name is taken by a directory: the rename fails.
        fs::create_directories(cache.tensor_path(kKey, "blocked"));
        QVERIFY_THROWS_EXCEPTION(FileError, cache.store(kKey, "blocked", small));
        QCOMPARE(listing(root / kKey), std::vector<std::string>{"blocked.qt"});

        // 2. The disk "fills up" halfway through the write (file size limit): the write fails,
        //    the old entry still loads, nothing else is left.
        cache.store(kKey, "w", small);
        const std::string before = read_file(cache.tensor_path(kKey, "w"));
        struct rlimit old_limit {};
        QCOMPARE(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
        auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = old_limit;
        limit.rlim_cur = 64 * 1024;  // the large tensor is 256 KiB
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &limit), 0);
        bool threw = false;
        try {
            cache.store(kKey, "w", large);
        } catch (const FileError& e) {
            threw = true;
            QVERIFY2(QString(e.what()).contains(".qt"), e.what());  // names the file
        }
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
        std::signal(SIGXFSZ, old_handler);
        QVERIFY(threw);
        QCOMPARE(read_file(cache.tensor_path(kKey, "w")), before);
        QVERIFY(same(*cache.load(kKey, "w"), small));
        QCOMPARE(listing(root / kKey), (std::vector<std::string>{"blocked.qt", "w.qt"}));

        // load_or_make shrugs off a failing store and still returns the tensor.
        const QuantizedTensor made = cache.load_or_make(kKey, "blocked", [&] { return small; });
        QVERIFY(same(made, small));

        // Invalid tensors are refused before anything is written.
        QuantizedInt8 broken = std::get<QuantizedInt8>(small);
        broken.scales.pop_back();
        QVERIFY_THROWS_EXCEPTION(Error, cache.store(kKey, "broken", broken));
        QVERIFY(!fs::exists(cache.tensor_path(kKey, "broken")));
    }
};

QTEST_APPLESS_MAIN(TestQuantCache)
#include "test_quant_cache.moc"
