// Tokenizer files written by the test into a QTemporaryDir: every kind of malformed input must
// give a FileError (or UnsupportedError) whose message names the file and the problem, and
// tokenizer.json variants built from the hf-gpt2 fixture exercise the components the fixtures do
// not (added-token flags, Split behaviors, other normalizers, ignore_merges, add_prefix_space).

#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "mtdesk/tokenizer/tokenizer.h"

using namespace mtdesk;
using json = nlohmann::json;
namespace fs = std::filesystem;
using Ids = std::vector<int32_t>;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(Ids)

namespace QTest {
template <>
inline char* toString(const std::string& s) {
    return toPrettyUnicode(QString::fromStdString(s));
}
}  // namespace QTest

#include "test_files.h"

using mtdesk::test::read_file;
using mtdesk::test::write_file;

namespace {

const fs::path kDataDir = fs::path(MTDESK_TEST_DATA_DIR) / "tokenizers";

json read_json(const fs::path& path) {
    return json::parse(read_file(path));
}

// A tiktoken file with the 256 single bytes (rank = byte) and then `extra` lines.
std::string byte_ranks(const std::string& extra = {}) {
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (int b = 0; b < 256; ++b) {
        out += alphabet[b >> 2];
        out += alphabet[(b & 3) << 4];
        out += "== " + std::to_string(b) + "\n";
    }
    return out + extra;
}

json added_token(int id, const std::string& content, bool special) {
    return {{"id", id},        {"content", content},     {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", !special}, {"special", special}};
}

// Runs `load` and checks that it throws a FileError (or the subclass `Unsupported`) whose
// message contains every one of `needles`.
template <class E = FileError>
void expect_error(const std::function<void()>& load, const std::vector<std::string>& needles) {
    try {
        load();
    } catch (const E& e) {
        const std::string message = e.what();
        for (const std::string& needle : needles) {
            QVERIFY2(message.find(needle) != std::string::npos,
                     qPrintable(QString::fromStdString("'" + needle + "' not in: " + message)));
        }
        return;
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("wrong exception type: ") + e.what()));
    }
    QFAIL("no exception");
}

struct VariantRow {
    const char* variant;
    const char* text;
    Ids ids;
};

// Expected ids computed with the Python tokenizers library 0.23.3 (the version golden.json
// names) on the same variants of hf-gpt2/tokenizer.json as make_variant() builds.
const std::vector<VariantRow> kVariantRows = {
    {"added_flags", "a [MASK] b", {64, 903, 293}},
    {"added_flags", "x  [MASK]", {87, 903}},
    {"added_flags", "<sep>   y", {904, 88}},
    {"added_flags",
     "cat concat cat's _cat cat",
     {905, 297, 292, 66, 281, 220, 905, 502, 220, 62, 66, 281, 220, 905}},
    {"added_flags",
     "cafe\xcc\x81"
     " caf\xc3\xa9"
     " caf\xc3\xa9"
     "s xcaf\xc3\xa9"
     "",
     {906, 220, 906, 220, 906, 82, 220, 87, 906}},
    {"added_flags", "[MASK]<sep> cat", {903, 904, 905}},
    {"added_flags", "  [MASK]  <sep>  ", {903, 274, 904}},
    {"added_flags",
     "gato cat\xcc\x81"
     " cat\xc3\xa9"
     "",
     {70, 281, 78, 297, 281, 136, 223, 297, 281, 474}},
    {"split_string_Removed",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_string_Removed", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_string_Removed", "a-b--c---d", {64, 65, 66, 67}},
    {"split_string_Removed", "", {}},
    {"split_string_Removed", "-", {}},
    {"split_string_Removed", "x- -y", {87, 220, 88}},
    {"split_regex_Removed",
     "hello world, how are you?",
     {287, 851, 777, 75, 67, 11, 71, 366, 326, 68, 88, 810, 30}},
    {"split_regex_Removed", "  two  spaces  ", {83, 86, 78, 82, 79, 412, 303}},
    {"split_regex_Removed", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_regex_Removed", "", {}},
    {"split_regex_Removed", "-", {12}},
    {"split_regex_Removed", "x- -y", {87, 12, 12, 88}},
    {"split_string_Isolated",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_string_Isolated", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_string_Isolated", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_string_Isolated", "", {}},
    {"split_string_Isolated", "-", {12}},
    {"split_string_Isolated", "x- -y", {87, 12, 220, 12, 88}},
    {"split_regex_Isolated",
     "hello world, how are you?",
     {287, 851, 220, 777, 75, 67, 11, 220, 71, 366, 220, 326, 68, 220, 88, 810, 30}},
    {"split_regex_Isolated", "  two  spaces  ", {274, 83, 86, 78, 274, 82, 79, 412, 303, 274}},
    {"split_regex_Isolated", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_regex_Isolated", "", {}},
    {"split_regex_Isolated", "-", {12}},
    {"split_regex_Isolated", "x- -y", {87, 12, 220, 12, 88}},
    {"split_string_MergedWithPrevious",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_string_MergedWithPrevious", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_string_MergedWithPrevious", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_string_MergedWithPrevious", "", {}},
    {"split_string_MergedWithPrevious", "-", {12}},
    {"split_string_MergedWithPrevious", "x- -y", {87, 12, 220, 12, 88}},
    {"split_regex_MergedWithPrevious",
     "hello world, how are you?",
     {287, 851, 220, 777, 75, 67, 11, 220, 71, 366, 220, 326, 68, 220, 88, 810, 30}},
    {"split_regex_MergedWithPrevious",
     "  two  spaces  ",
     {274, 83, 86, 78, 274, 82, 79, 412, 303, 274}},
    {"split_regex_MergedWithPrevious", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_regex_MergedWithPrevious", "", {}},
    {"split_regex_MergedWithPrevious", "-", {12}},
    {"split_regex_MergedWithPrevious", "x- -y", {87, 12, 220, 12, 88}},
    {"split_string_MergedWithNext",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_string_MergedWithNext", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_string_MergedWithNext", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_string_MergedWithNext", "", {}},
    {"split_string_MergedWithNext", "-", {12}},
    {"split_string_MergedWithNext", "x- -y", {87, 12, 220, 12, 88}},
    {"split_regex_MergedWithNext",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_regex_MergedWithNext", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_regex_MergedWithNext", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_regex_MergedWithNext", "", {}},
    {"split_regex_MergedWithNext", "-", {12}},
    {"split_regex_MergedWithNext", "x- -y", {87, 12, 220, 12, 88}},
    {"split_string_Contiguous",
     "hello world, how are you?",
     {287, 851, 799, 75, 67, 11, 359, 366, 289, 339, 624, 810, 30}},
    {"split_string_Contiguous", "  two  spaces  ", {274, 83, 86, 78, 220, 868, 303, 274}},
    {"split_string_Contiguous", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_string_Contiguous", "", {}},
    {"split_string_Contiguous", "-", {12}},
    {"split_string_Contiguous", "x- -y", {87, 12, 220, 12, 88}},
    {"split_regex_Contiguous",
     "hello world, how are you?",
     {287, 851, 220, 777, 75, 67, 11, 220, 71, 366, 220, 326, 68, 220, 88, 810, 30}},
    {"split_regex_Contiguous", "  two  spaces  ", {274, 83, 86, 78, 274, 82, 79, 412, 303, 274}},
    {"split_regex_Contiguous", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_regex_Contiguous", "", {}},
    {"split_regex_Contiguous", "-", {12}},
    {"split_regex_Contiguous", "x- -y", {87, 12, 220, 12, 88}},
    {"split_invert",
     "hello world, how are you?",
     {287, 851, 220, 777, 75, 67, 11, 220, 71, 366, 220, 326, 68, 220, 88, 810, 30}},
    {"split_invert", "  two  spaces  ", {274, 83, 86, 78, 274, 82, 79, 412, 303, 274}},
    {"split_invert", "a-b--c---d", {64, 12, 65, 12, 12, 66, 12, 12, 12, 67}},
    {"split_invert", "", {}},
    {"split_invert", "-", {12}},
    {"split_invert", "x- -y", {87, 12, 220, 12, 88}},
    {"split_removed_invert",
     "hello world, how are you?",
     {287, 851, 777, 75, 67, 71, 366, 326, 68, 88, 810}},
    {"split_removed_invert", "  two  spaces  ", {83, 86, 78, 82, 79, 412, 303}},
    {"split_removed_invert", "a-b--c---d", {64, 65, 66, 67}},
    {"split_removed_invert", "", {}},
    {"split_removed_invert", "-", {}},
    {"split_removed_invert", "x- -y", {87, 88}},
    {"prefix_space", "hi<|im_start|>there", {359, 72, 901, 279, 585, 68}},
    {"prefix_space", " x", {220, 87}},
    {"prefix_space", "x", {220, 87}},
    {"prefix_space", "<|im_end|>y", {902, 624}},
    {"ignore_merges", "hello world", {287, 851, 799, 75, 67}},
    {"ignore_merges", "Hello, world!", {663, 851, 11, 799, 75, 67, 0}},
    {"nfd",
     "caf\xc3\xa9"
     "",
     {742, 69, 68, 136, 223}},
    {"nfd",
     "\xc3\x85"
     " \xce\xa9"
     "",
     {32, 136, 232, 394, 102}},
    {"nfkc",
     "\xef\xac\x81"
     " \xe2\x91\xa0"
     " \xef\xbc\xa1"
     "",
     {69, 72, 453, 464}},
    {"nfkc",
     "\xef\xbd\xb6"
     "\xef\xbe\x80"
     "\xef\xbd\xb6"
     "\xef\xbe\x85"
     "",
     {321, 104, 321, 123, 321, 104, 375, 232}},
};

json make_variant(const std::string& name) {
    json t = read_json(kDataDir / "hf-gpt2" / "tokenizer.json");
    auto added = [](int id, const std::string& content) {
        json a = added_token(id, content, false);
        a["normalized"] = false;
        return a;
    };
    if (name == "added_flags") {
        t["normalizer"] = {{"type", "NFC"}};
        json mask = added(903, "[MASK]");
        mask["lstrip"] = true;
        mask["special"] = true;
        json sep = added(904, "<sep>");
        sep["rstrip"] = true;
        sep["special"] = true;
        json cat = added(905, "cat");
        cat["single_word"] = true;
        cat["normalized"] = true;
        json cafe = added(906, "caf\xC3\xA9");
        cafe["normalized"] = true;
        for (const json& a : {mask, sep, cat, cafe})
            t["added_tokens"].push_back(a);
    } else if (name.starts_with("split_")) {
        json pattern;
        std::string behavior;
        bool invert = false;
        if (name.starts_with("split_string_")) {
            pattern = {{"String", "-"}};
            behavior = name.substr(13);
        } else if (name.starts_with("split_regex_")) {
            pattern = {{"Regex", "\\s+"}};
            behavior = name.substr(12);
        } else {
            pattern = {{"Regex", "[a-z]+"}};
            behavior = name == "split_invert" ? "Isolated" : "Removed";
            invert = true;
        }
        t["pre_tokenizer"] = {
            {"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}},
              {{"type", "ByteLevel"},
               {"add_prefix_space", false},
               {"trim_offsets", false},
               {"use_regex", false}}}}};
    } else if (name == "prefix_space") {
        t["pre_tokenizer"]["add_prefix_space"] = true;
    } else if (name == "ignore_merges") {
        t["model"]["ignore_merges"] = true;
    } else if (name == "nfd") {
        t["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFD"}}}}};
    } else if (name == "nfkc") {
        t["normalizer"] = {{"type", "NFKC"}};
    }
    return t;
}

}  // namespace

class TestTokenizerFiles : public QObject {
    Q_OBJECT

    mtdesk::test::CaseDirs dirs_;

    fs::path fresh_dir() { return dirs_.fresh(); }

  private slots:
    void initTestCase() { QVERIFY(dirs_.valid()); }

    // ---- tiktoken -----------------------------------------------------------------------------

    void tiktoken_malformed_data() {
        QTest::addColumn<std::string>("content");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("invalid base64 character")
            << byte_ranks("!!!! 256\n") << std::string("line 257: invalid base64 '!!!!'");
        QTest::newRow("base64 of wrong length")
            << byte_ranks("QUJD= 256\n") << std::string("line 257: invalid base64");
        QTest::newRow("base64 padding in the middle")
            << byte_ranks("QQ==QUJD 256\n") << std::string("line 257: invalid base64");
        QTest::newRow("duplicate rank") << byte_ranks("QUI= 256\nQUM= 256\n")
                                        << std::string(
                                               "line 258: duplicate rank 256 (already used "
                                               "on line 257)");
        QTest::newRow("duplicate token") << byte_ranks("QUI= 256\nQUI= 257\n")
                                         << std::string("line 258: duplicate token 'QUI='");
        QTest::newRow("gap in ranks") << byte_ranks("QUI= 256\nQUM= 258\n")
                                      << std::string("gap in ranks: rank 257 is missing");
        QTest::newRow("rank not a number")
            << byte_ranks("QUI= two\n") << std::string("line 257: invalid rank 'two'");
        QTest::newRow("negative rank")
            << byte_ranks("QUI= -1\n") << std::string("line 257: invalid rank '-1'");
        QTest::newRow("huge rank") << byte_ranks("QUI= 99999999999\n")
                                   << std::string("line 257: invalid rank '99999999999'");
        QTest::newRow("three fields") << byte_ranks("QUI= 256 x\n")
                                      << std::string("line 257: expected '<base64 token> <rank>'");
        QTest::newRow("one field") << byte_ranks("QUI=\n") << std::string("line 257: expected");
        QTest::newRow("empty file") << std::string() << std::string("no tokens");
        QTest::newRow("blank lines only") << std::string("\n\n  \n") << std::string("no tokens");
        QTest::newRow("missing byte")
            << std::string("QQ== 0\n") << std::string("byte 0x00 has no token");
        QTest::newRow("binary garbage")
            << std::string("\x00\xff\xfe garbage\n", 14) << std::string("line 1:");
    }
    void tiktoken_malformed() {
        QFETCH(std::string, content);
        QFETCH(std::string, problem);
        const fs::path dir = fresh_dir();
        write_file(dir / "hy.tiktoken", content);
        expect_error([&] { load_tokenizer(dir); }, {"hy.tiktoken", problem});
    }

    void tiktoken_accepts_crlf_and_blank_lines() {
        const fs::path dir = fresh_dir();
        std::string content = byte_ranks("QUI= 256\n");
        std::string crlf;
        for (const char c : content) {
            if (c == '\n')
                crlf += "\r\n\r\n";
            else
                crlf += c;
        }
        write_file(dir / "hy.tiktoken", crlf);
        const auto t = load_tokenizer(dir);
        QCOMPARE(t->encode("AB"), Ids{256});
        QCOMPARE(t->vocab_size(), 257 + 210);
    }

    void tiktoken_hunyuan_special_tokens_without_config() {
        // Without tokenizer_config.json the special tokens follow Hunyuan's convention: numbered
        // right after the ranks.
        const fs::path dir = fresh_dir();
        write_file(dir / "hy.tiktoken", byte_ranks());
        const auto t = load_tokenizer(dir);
        QCOMPARE(t->vocab_size(), 256 + 5 + 205);
        const std::vector<std::pair<std::string, int>> expected = {
            {"<|endoftext|>", 256}, {"<|startoftext|>", 257}, {"<|bos|>", 258},
            {"<|eos|>", 259},       {"<|pad|>", 260},         {"<|extra_0|>", 261},
            {"<|extra_4|>", 265},   {"<|extra_204|>", 465}};
        for (const auto& [text, id] : expected) {
            QCOMPARE(t->token_id(text).value_or(-1), id);
            QVERIFY(t->is_special(id));
        }
        QCOMPARE(t->encode("a<|eos|>", true), (Ids{'a', 259}));
        QCOMPARE(t->encode("<|extra_205|>", true).size(), std::string("<|extra_205|>").size());
        // A tokenizer_config.json without added_tokens_decoder changes nothing.
        write_file(dir / "tokenizer_config.json", R"({"eos_token": "<|eos|>"})");
        QCOMPARE(load_tokenizer(dir)->token_id("<|eos|>").value_or(-1), 259);
    }

    void tiktoken_config_errors_data() {
        QTest::addColumn<std::string>("config");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("malformed JSON")
            << std::string("{\"added_tokens_decoder\": {") << std::string("malformed JSON");
        QTest::newRow("not an object")
            << std::string("[1, 2]") << std::string("expected a JSON object");
        QTest::newRow("decoder not an object") << std::string(R"({"added_tokens_decoder": 5})")
                                               << std::string(
                                                      "added_tokens_decoder is not an "
                                                      "object");
        QTest::newRow("id collides with a rank")
            << std::string(R"({"added_tokens_decoder": {"65": {"content": "<|x|>"}}})")
            << std::string("'<|x|>' has id 65, which collides with rank 65 of hy.tiktoken");
        QTest::newRow("id not a number")
            << std::string(R"({"added_tokens_decoder": {"abc": {"content": "<|x|>"}}})")
            << std::string("invalid id 'abc'");
        QTest::newRow("no content")
            << std::string(R"({"added_tokens_decoder": {"300": {"special": true}}})")
            << std::string("token 300 has no content");
        QTest::newRow("empty content")
            << std::string(R"({"added_tokens_decoder": {"300": {"content": ""}}})")
            << std::string("token id 300 has empty text");
        QTest::newRow("same text twice")
            << std::string(R"({"added_tokens_decoder": {"300": {"content": "<|x|>"},)"
                           R"( "301": {"content": "<|x|>"}}})")
            << std::string("'<|x|>' is defined twice");
        QTest::newRow("id too large")
            << std::string(R"({"added_tokens_decoder": {"99999999999": {"content": "<|x|>"}}})")
            << std::string("invalid token id 99999999999");
    }
    void tiktoken_config_errors() {
        QFETCH(std::string, config);
        QFETCH(std::string, problem);
        const fs::path dir = fresh_dir();
        write_file(dir / "hy.tiktoken", byte_ranks());
        write_file(dir / "tokenizer_config.json", config);
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer_config.json", problem});
    }

    void tiktoken_vocab_limit() {
        const fs::path dir = kDataDir / "tiktoken";
        QCOMPARE(load_tokenizer(dir, 1010)->vocab_size(), 1010);
        expect_error([&] { load_tokenizer(dir, 1009); },
                     {"tokenizer_config.json",
                      "token id 1009 ('<|extra_204|>') does not fit the "
                      "model's vocabulary of 1009"});
        expect_error([&] { load_tokenizer(dir, 700); },
                     {"hy.tiktoken", "800 ranks do not fit the model's vocabulary of 700"});
        // Hunyuan's convention: the specials are defined by the .tiktoken file itself.
        const fs::path own = fresh_dir();
        write_file(own / "hy.tiktoken", byte_ranks());
        expect_error([&] { load_tokenizer(own, 300); },
                     {"hy.tiktoken", "token id 465 ('<|extra_204|>') does not fit"});
    }

    // ---- finding the tokenizer --------------------------------------------------------------

    void finds_the_tokenizer_file() {
        expect_error([&] { load_tokenizer(fresh_dir()); },
                     {"no tokenizer found", "hy.tiktoken", "tokenizer.json", "tokenizer.model"});
        expect_error([&] { load_tokenizer(fresh_dir() / "missing"); },
                     {"missing", "does not exist"});
        const fs::path file_dir = fresh_dir();
        write_file(file_dir / "plain", "x");
        expect_error([&] { load_tokenizer(file_dir / "plain"); }, {"plain", "is not a directory"});

        // Any single *.tiktoken file; several of them are ambiguous.
        const fs::path one = fresh_dir();
        write_file(one / "qwen.tiktoken", byte_ranks());
        QCOMPARE(load_tokenizer(one)->kind(), TokenizerKind::Tiktoken);
        write_file(one / "other.tiktoken", byte_ranks());
        expect_error([&] { load_tokenizer(one); },
                     {"several .tiktoken files (other.tiktoken, qwen.tiktoken)"});
        write_file(one / "hy.tiktoken", byte_ranks());
        QCOMPARE(load_tokenizer(one)->kind(), TokenizerKind::Tiktoken);

        // Order of preference: tiktoken, tokenizer.json, tokenizer.model.
        const fs::path all = fresh_dir();
        fs::copy_file(kDataDir / "sentencepiece" / "tokenizer.model", all / "tokenizer.model");
        QCOMPARE(load_tokenizer(all)->kind(), TokenizerKind::SentencePiece);
        fs::copy_file(kDataDir / "hf" / "tokenizer.json", all / "tokenizer.json");
        QCOMPARE(load_tokenizer(all)->kind(), TokenizerKind::HfTokenizerJson);
        write_file(all / "hy.tiktoken", byte_ranks());
        QCOMPARE(load_tokenizer(all)->kind(), TokenizerKind::Tiktoken);
    }

    // ---- tokenizer.json ---------------------------------------------------------------------

    void hf_malformed_data() {
        QTest::addColumn<std::string>("change");
        QTest::addColumn<bool>("unsupported");
        QTest::addColumn<std::string>("problem");
        auto row = [](const char* name, const char* change, bool unsupported, const char* problem) {
            QTest::newRow(name) << std::string(change) << unsupported << std::string(problem);
        };
        row("malformed JSON", "truncate", false, "malformed JSON");
        row("padded with NUL bytes", "nul padding", false, "a NUL byte at byte");
        row("not an object", "array", false, "expected a JSON object");
        row("no model", "no model", false, "no 'model' object");
        row("WordPiece model", "wordpiece", true, "model type 'WordPiece' is not supported");
        row("Unigram model", "unigram", true, "model type 'Unigram' is not supported");
        row("byte fallback", "byte_fallback", true, "byte_fallback");
        row("dropout", "dropout", true, "dropout");
        row("subword prefix", "prefix", true, "continuing_subword_prefix");
        row("Metaspace pre-tokenizer", "metaspace", true, "pre-tokenizer 'Metaspace'");
        row("Whitespace in a Sequence", "whitespace", true, "pre-tokenizer 'Whitespace'");
        row("no pre-tokenizer", "no pretokenizer", true, "no ByteLevel step");
        row("Lowercase normalizer", "lowercase", true, "normalizer 'Lowercase'");
        row("WordPiece decoder", "wordpiece decoder", true, "decoder 'WordPiece'");
        row("no decoder", "no decoder", true, "no decoder");
        row("Split behavior", "split behavior", true, "Split behavior 'Sideways'");
        row("invalid regex", "bad regex", false, "invalid regular expression '(unclosed'");
        row("merge of unknown token", "merge unknown", false, "'zzzq' is not in the vocabulary");
        row("merge with two spaces", "merge spaces", false,
            "not two tokens separated by one space");
        row("merge of wrong shape", "merge shape", false, "merge 0 is neither");
        row("vocab id not a number", "vocab id", false, "the id of 'a' is not an integer");
        row("vocab id negative", "vocab negative", false, "invalid id -3 for 'a'");
        row("two tokens with one id", "vocab duplicate", false, "id 66 is used by both");
        row("added token id collides with the vocabulary", "added collides", false,
            "added token '<|endoftext|>' is given id 65, but it gets id 900");
        row("added token beyond the next id", "added gap", false,
            "added token '<|im_start|>' is given id 905, but it gets id 901");
        row("added token without content", "added no content", false, "has no content");
        row("added token with empty content", "added empty", false, "has empty content");
        row("added token flag not a boolean", "added flag", false, "'lstrip' is not a boolean");
        row("unk_token not in vocab", "unk", false, "unk_token '<unk>' is not in the vocabulary");
        row("vocab not an object", "vocab array", false, "model.vocab is missing or not an object");
    }
    void hf_malformed() {
        QFETCH(std::string, change);
        QFETCH(bool, unsupported);
        QFETCH(std::string, problem);
        json t = read_json(kDataDir / "hf-gpt2" / "tokenizer.json");
        std::string text;
        if (change == "truncate") {
            text = t.dump().substr(0, 1000);
        } else if (change == "nul padding") {
            text = t.dump() + std::string(64, '\0') + "garbage";
        } else if (change == "array") {
            text = "[]";
        } else {
            if (change == "no model") t.erase("model");
            if (change == "wordpiece") t["model"]["type"] = "WordPiece";
            if (change == "unigram") t["model"] = {{"type", "Unigram"}, {"vocab", json::array()}};
            if (change == "byte_fallback") t["model"]["byte_fallback"] = true;
            if (change == "dropout") t["model"]["dropout"] = 0.1;
            if (change == "prefix") t["model"]["continuing_subword_prefix"] = "##";
            if (change == "metaspace") t["pre_tokenizer"] = {{"type", "Metaspace"}};
            if (change == "whitespace") {
                t["pre_tokenizer"] = {{"type", "Sequence"},
                                      {"pretokenizers", {{{"type", "Whitespace"}}}}};
            }
            if (change == "no pretokenizer") t["pre_tokenizer"] = nullptr;
            if (change == "lowercase") t["normalizer"] = {{"type", "Lowercase"}};
            if (change == "wordpiece decoder") t["decoder"] = {{"type", "WordPiece"}};
            if (change == "no decoder") t["decoder"] = nullptr;
            if (change == "split behavior" || change == "bad regex") {
                t["pre_tokenizer"] = {
                    {"type", "Sequence"},
                    {"pretokenizers",
                     {{{"type", "Split"},
                       {"pattern", {{"Regex", change == "bad regex" ? "(unclosed" : "x"}}},
                       {"behavior", change == "bad regex" ? "Isolated" : "Sideways"}},
                      {{"type", "ByteLevel"}, {"use_regex", false}}}}};
            }
            if (change == "merge unknown") t["model"]["merges"].push_back("zzzq a");
            if (change == "merge spaces") t["model"]["merges"].push_back("a b c");
            if (change == "merge shape") t["model"]["merges"][0] = json::array({"a"});
            if (change == "vocab id") t["model"]["vocab"]["a"] = "x";
            if (change == "vocab negative") t["model"]["vocab"]["a"] = -3;
            if (change == "vocab duplicate") t["model"]["vocab"]["a"] = 66;
            if (change == "added collides") t["added_tokens"][0]["id"] = 65;
            if (change == "added gap") t["added_tokens"][1]["id"] = 905;
            if (change == "added no content") t["added_tokens"][0].erase("content");
            if (change == "added empty") t["added_tokens"][0]["content"] = "";
            if (change == "added flag") t["added_tokens"][0]["lstrip"] = "yes";
            if (change == "unk") t["model"]["unk_token"] = "<unk>";
            if (change == "vocab array") t["model"]["vocab"] = json::array();
            text = t.dump();
        }
        const fs::path dir = fresh_dir();
        write_file(dir / "tokenizer.json", text);
        if (unsupported) {
            expect_error<UnsupportedError>([&] { load_tokenizer(dir); },
                                           {"tokenizer.json", problem});
        } else {
            expect_error([&] { load_tokenizer(dir); }, {"tokenizer.json", problem});
        }
    }

    void hf_config_added_tokens() {
        // tokenizer_config.json's added_tokens_decoder adds what tokenizer.json lacks; a
        // contradiction is an error naming tokenizer_config.json.
        const fs::path dir = fresh_dir();
        fs::copy_file(kDataDir / "hf-gpt2" / "tokenizer.json", dir / "tokenizer.json");
        json config = read_json(kDataDir / "hf-gpt2" / "tokenizer_config.json");
        config["added_tokens_decoder"]["903"] = {{"content", "<|extra|>"}, {"special", true}};
        write_file(dir / "tokenizer_config.json", config.dump());
        auto t = load_tokenizer(dir);
        QCOMPARE(t->vocab_size(), 904);
        QCOMPARE(t->encode("a<|extra|>", true), (Ids{64, 903}));
        QVERIFY(t->is_special(903));
        expect_error([&] { load_tokenizer(dir, 903); },
                     {"tokenizer_config.json",
                      "token id 903 ('<|extra|>') does not fit the "
                      "model's vocabulary of 903"});
        config["added_tokens_decoder"]["901"]["content"] = "<|other|>";
        write_file(dir / "tokenizer_config.json", config.dump());
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer_config.json",
                                                    "token 901 is not '<|im_start|>' as in "
                                                    "tokenizer.json"});
        write_file(dir / "tokenizer_config.json", "{]");
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer_config.json", "malformed JSON"});
    }

    void hf_vocab_limit() {
        QCOMPARE(load_tokenizer(kDataDir / "hf", 903)->vocab_size(), 903);
        expect_error([&] { load_tokenizer(kDataDir / "hf", 902); },
                     {"tokenizer.json",
                      "token id 902 ('<|im_end|>') does not fit the model's "
                      "vocabulary of 902"});
    }

    void hf_variants_data() {
        QTest::addColumn<std::string>("variant");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<Ids>("expected");
        std::map<std::string, int> seen;
        for (const VariantRow& row : kVariantRows) {
            const std::string name =
                std::string(row.variant) + "/" + std::to_string(seen[row.variant]++);
            QTest::newRow(name.c_str())
                << std::string(row.variant) << std::string(row.text) << row.ids;
        }
    }
    void hf_variants() {
        QFETCH(std::string, variant);
        QFETCH(std::string, text);
        QFETCH(Ids, expected);
        const fs::path dir = fresh_dir();
        write_file(dir / "tokenizer.json", make_variant(variant).dump());
        const auto t = load_tokenizer(dir);
        QCOMPARE(t->encode(text, true), expected);
    }

    // ---- SentencePiece ----------------------------------------------------------------------

    void sentencepiece_malformed() {
        const fs::path dir = fresh_dir();
        write_file(dir / "tokenizer.model", "this is not a protobuf");
        expect_error([&] { load_tokenizer(dir); },
                     {"tokenizer.model", "not a SentencePiece model (its bytes do not parse"});
        try {  // in words, not the library's source location
            load_tokenizer(dir);
        } catch (const FileError& e) {
            QVERIFY2(std::string(e.what()).find(".cc(") == std::string::npos, e.what());
        }
        write_file(dir / "tokenizer.model", "");
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer.model"});
        // Truncated real model.
        const std::string real = read_file(kDataDir / "sentencepiece" / "tokenizer.model");
        write_file(dir / "tokenizer.model", real.substr(0, real.size() / 2));
        expect_error([&] { load_tokenizer(dir); },
                     {"tokenizer.model", "not a SentencePiece model"});
        expect_error([&] { load_tokenizer(kDataDir / "sentencepiece", 1000); },
                     {"tokenizer.model", "1024 pieces do not fit the model's vocabulary of 1000"});
        QCOMPARE(load_tokenizer(kDataDir / "sentencepiece", 1024)->vocab_size(), 1024);
    }

    // ---- tokenizer_config.json's model_max_length, as transformers reads it ------------------

    void model_max_length_data() {
        QTest::addColumn<QString>("config");  // "" = no tokenizer_config.json
        QTest::addColumn<int>("expected");    // 0 = none
        QTest::newRow("no config") << "" << 0;
        QTest::newRow("not given") << R"({"bos_token": "<s>"})" << 0;
        QTest::newRow("256") << R"({"model_max_length": 256})" << 256;
        QTest::newRow("transformers' sentinel")
            << R"({"model_max_length": 1000000000000000019884624838656})" << 0;
        QTest::newRow("1e30") << R"({"model_max_length": 1e30})" << 0;
        QTest::newRow("10^9") << R"({"model_max_length": 1000000000})" << 0;
        QTest::newRow("zero") << R"({"model_max_length": 0})" << 0;
        QTest::newRow("a string") << R"({"model_max_length": "256"})" << 0;
    }
    void model_max_length() {
        QFETCH(QString, config);
        QFETCH(int, expected);
        const fs::path dir = fresh_dir();
        fs::copy_file(kDataDir / "sentencepiece" / "tokenizer.model", dir / "tokenizer.model");
        if (!config.isEmpty()) write_file(dir / "tokenizer_config.json", config.toStdString());
        const std::optional<int> got = load_tokenizer(dir)->model_max_length();
        QCOMPARE(got, expected ? std::optional<int>(expected) : std::nullopt);
    }

    // ---- any tokenizer file: a regular file of a sane size ----------------------------------

    void files_must_be_regular_and_bounded() {
        const fs::path dir = fresh_dir();
        const fs::path model = dir / "tokenizer.model";
        // A FIFO would block the read for ever, a device never end: refused before reading.
        QCOMPARE(::mkfifo(model.c_str(), 0600), 0);
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer.model", "not a regular file"});
        fs::remove(model);
        fs::create_symlink("/dev/zero", model);
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer.model", "not a regular file"});
        fs::remove(model);
        // Larger than any tokenizer (SentencePiece aborts the process past 2 GiB): refused by
        // its size, without reading it (the file is sparse).
        write_file(model, "");
        fs::resize_file(model, std::uintmax_t{300} << 20);
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer.model", "300.0 MiB", "256 MiB"});
        fs::remove(model);
        // A symlink loop: the system's reason, not "does not exist".
        fs::create_symlink("tokenizer.json", dir / "tokenizer.json");
        expect_error([&] { load_tokenizer(dir); }, {"tokenizer.json", "cannot be read"});
    }
};

QTEST_APPLESS_MAIN(TestTokenizerFiles)
#include "test_tokenizer_files.moc"
