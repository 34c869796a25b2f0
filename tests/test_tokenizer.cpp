// Tokenizer parity with the Python reference libraries (tiktoken, tokenizers, sentencepiece) on
// the fixtures of tests/data/tokenizers (see its README.md: golden.json was computed by
// tools/fixtures/make_fixtures.py), plus decoding, streaming, UTF-8 repair, pre-tokenisation
// corner cases and long inputs.

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
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
Q_DECLARE_METATYPE(std::vector<std::string>)

namespace QTest {
template <>
inline char* toString(const std::string& s) {
    return toPrettyUnicode(QString::fromStdString(s));
}
template <>
inline char* toString(const std::optional<int32_t>& id) {
    return qstrdup(id ? QByteArray::number(*id).constData() : "nullopt");
}
}  // namespace QTest

namespace {

const fs::path kDataDir = fs::path(MTDESK_TEST_DATA_DIR) / "tokenizers";

// The four fixtures: name used in golden.json -> directory.
const std::vector<std::pair<std::string, std::string>> kFixtures = {
    {"tiktoken", "tiktoken"},
    {"hf", "hf"},
    {"hf_gpt2", "hf-gpt2"},
    {"sentencepiece", "sentencepiece"},
};

json g_golden;
std::map<std::string, std::unique_ptr<Tokenizer>> g_tokenizers;

const Tokenizer& tok(const std::string& name) {
    return *g_tokenizers.at(name);
}

Ids to_ids(const json& j) {
    return j.get<Ids>();
}

std::string from_hex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

QByteArray show(const Ids& ids) {
    QByteArray out = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ", ";
        out += QByteArray::number(ids[i]);
    }
    return out + "]";
}

// Compares id lists with a readable failure message.
void compare_ids(const Ids& actual, const Ids& expected) {
    if (actual != expected) {
        QFAIL(("got      " + show(actual) + "\nexpected " + show(expected)).constData());
    }
}

std::string stream_decode(const Tokenizer& t, const Ids& ids) {
    StreamingDecoder decoder(t);
    std::string out;
    for (const int32_t id : ids)
        out += decoder.push(id);
    out += decoder.finish();
    return out;
}

// A row name: "<tokenizer>.<mode>/<index>".
QByteArray row_name(const std::string& tokenizer, const char* mode, std::size_t index) {
    return QByteArray::fromStdString(tokenizer) + "." + mode + "/" +
           QByteArray::number(static_cast<qulonglong>(index)).rightJustified(3, '0');
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        std::ifstream in(kDataDir / "golden.json");
        QVERIFY(in.good());
        g_golden = json::parse(in);
        for (const auto& [name, dir] : kFixtures) {
            g_tokenizers[name] = load_tokenizer(kDataDir / dir);
        }
    }

    // ---- loading ----------------------------------------------------------------------------

    void loads_each_format() {
        QCOMPARE(tok("tiktoken").kind(), TokenizerKind::Tiktoken);
        QCOMPARE(tok("hf").kind(), TokenizerKind::HfTokenizerJson);
        QCOMPARE(tok("hf_gpt2").kind(), TokenizerKind::HfTokenizerJson);
        QCOMPARE(tok("sentencepiece").kind(), TokenizerKind::SentencePiece);
        const json& info = g_golden["tokenizers"];
        QCOMPARE(tok("tiktoken").vocab_size(), info["tiktoken"]["n_vocab"].get<int>());
        QCOMPARE(tok("hf").vocab_size(), info["hf"]["vocab_size_with_added"].get<int>());
        QCOMPARE(tok("hf_gpt2").vocab_size(), info["hf_gpt2"]["vocab_size_with_added"].get<int>());
        QCOMPARE(tok("sentencepiece").vocab_size(), info["sentencepiece"]["vocab_size"].get<int>());
    }

    void special_tokens_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<int>("id");
        for (const char* name : {"tiktoken", "hf", "hf_gpt2"}) {
            for (const auto& [text, id] : g_golden["tokenizers"][name]["special_tokens"].items()) {
                QTest::newRow((std::string(name) + " " + text).c_str())
                    << std::string(name) << text << id.get<int>();
            }
        }
        QTest::newRow("sentencepiece <s>")
            << std::string("sentencepiece") << std::string("<s>") << 1;
        QTest::newRow("sentencepiece </s>")
            << std::string("sentencepiece") << std::string("</s>") << 2;
    }
    void special_tokens() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, text);
        QFETCH(int, id);
        const Tokenizer& t = tok(tokenizer);
        QCOMPARE(t.token_id(text), std::optional<int32_t>(id));
        QVERIFY(t.is_special(id));
        QCOMPARE(t.token_bytes(id), text);
        // Without special parsing the text is ordinary text; with it, exactly the one id.
        if (tokenizer != "sentencepiece") {
            QCOMPARE(t.encode(text, true), Ids{id});
            QVERIFY(t.encode(text, false) != Ids{id});
        }
        // skip_special drops it, otherwise it is its text.
        const Ids ids{id};
        QCOMPARE(t.decode(ids, true), std::string());
        QCOMPARE(t.decode(ids, false), text);
    }

    void ordinary_tokens_are_not_special() {
        for (const auto& [name, dir] : kFixtures) {
            const Tokenizer& t = tok(name);
            QVERIFY2(!t.is_special(0), name.c_str());
            QVERIFY(!t.is_special(-1));
            QVERIFY(!t.is_special(t.vocab_size()));
            QVERIFY_THROWS_EXCEPTION(Error, t.token_bytes(-1));
            QVERIFY_THROWS_EXCEPTION(Error, t.token_bytes(t.vocab_size()));
            const Ids bad{t.vocab_size()};
            QVERIFY_THROWS_EXCEPTION(Error, t.decode(bad));
            StreamingDecoder decoder(t);
            QVERIFY_THROWS_EXCEPTION(Error, decoder.push(-5));
        }
        // The byte tokens of the fixtures (tiktoken: rank = byte value; SentencePiece: <0x41>).
        QCOMPARE(tok("tiktoken").token_bytes(0x41), std::string("A"));
        QCOMPARE(tok("tiktoken").token_id("A"), std::optional<int32_t>(0x41));
        QCOMPARE(tok("sentencepiece").token_bytes(3 + 0xE4), std::string("\xE4"));
        QCOMPARE(tok("sentencepiece").token_id("<0xE4>"), std::optional<int32_t>(3 + 0xE4));
        // HF ids are looked up in the byte-level alphabet ("Ġ" = space) and in plain bytes.
        QCOMPARE(tok("hf_gpt2").token_id("\xC4\xA0"), std::optional<int32_t>(220));
        QCOMPARE(tok("hf_gpt2").token_id(" "), std::optional<int32_t>(220));
        QCOMPARE(tok("hf_gpt2").token_bytes(220), std::string(" "));
        QCOMPARE(tok("hf").token_id("no such token"), std::nullopt);
    }

    // ---- encode parity ------------------------------------------------------------------------

    void encode_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<bool>("parse_special");
        QTest::addColumn<Ids>("expected");
        const json& texts = g_golden["texts"];
        struct Mode {
            const char* tokenizer;
            const char* mode;
            const json& golden;
            bool parse_special;
        };
        const std::vector<Mode> modes = {
            {"tiktoken", "ordinary", g_golden["tiktoken"]["ordinary"], false},
            {"tiktoken", "special", g_golden["tiktoken"]["special"], true},
            {"hf", "special", g_golden["hf"], true},
            {"hf", "ordinary", g_golden["hf_ordinary"], false},
            {"hf_gpt2", "special", g_golden["hf_gpt2"], true},
            {"hf_gpt2", "ordinary", g_golden["hf_gpt2_ordinary"], false},
            {"sentencepiece", "ordinary", g_golden["sentencepiece"], false},
        };
        for (const Mode& m : modes) {
            QCOMPARE(m.golden.size(), texts.size());
            for (std::size_t i = 0; i < texts.size(); ++i) {
                QTest::newRow(row_name(m.tokenizer, m.mode, i).constData())
                    << std::string(m.tokenizer) << texts[i].get<std::string>() << m.parse_special
                    << to_ids(m.golden[i]);
            }
        }
    }
    void encode() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, text);
        QFETCH(bool, parse_special);
        QFETCH(Ids, expected);
        compare_ids(tok(tokenizer).encode(text, parse_special), expected);
    }

    // ---- decode parity, round trip, streaming ---------------------------------------------------

    void decode_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<Ids>("ids");
        QTest::addColumn<std::string>("expected");
        QTest::addColumn<bool>("roundtrip");
        const json& texts = g_golden["texts"];
        const std::map<std::string, const json*> ordinary = {
            {"tiktoken", &g_golden["tiktoken"]["ordinary"]},
            {"hf", &g_golden["hf_ordinary"]},
            {"hf_gpt2", &g_golden["hf_gpt2_ordinary"]},
            {"sentencepiece", &g_golden["sentencepiece"]},
        };
        for (const auto& [name, dir] : kFixtures) {
            const json& decoded = g_golden["decode"][name];
            const json& roundtrip = g_golden["decode"]["roundtrip"][name];
            for (std::size_t i = 0; i < texts.size(); ++i) {
                QTest::newRow(row_name(name, "decode", i).constData())
                    << name << texts[i].get<std::string>() << to_ids((*ordinary.at(name))[i])
                    << decoded[i].get<std::string>() << roundtrip[i].get<bool>();
            }
        }
    }
    void decode() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, text);
        QFETCH(Ids, ids);
        QFETCH(std::string, expected);
        QFETCH(bool, roundtrip);
        const Tokenizer& t = tok(tokenizer);
        QCOMPARE(t.decode(ids, false), expected);
        QCOMPARE(t.decode(ids, true), expected);
        // Our own ids decode back to the text (the reference libraries' round-trip flag says
        // where normalisation makes that impossible: NFC for "hf").
        const Ids own = t.encode(text);
        if (roundtrip) QCOMPARE(t.decode(own), text);
        // Streaming gives the same text, token by token.
        QCOMPARE(stream_decode(t, own), t.decode(own));
    }

    void invalid_utf8_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("bytes");
        QTest::addColumn<std::string>("replaced");
        QTest::addColumn<Ids>("expected");
        for (const json& c : g_golden["invalid_utf8"]) {
            for (const auto& [name, dir] : kFixtures) {
                QTest::newRow((name + ": " + c["name"].get<std::string>()).c_str())
                    << name << from_hex(c["hex"]) << c["replaced"].get<std::string>()
                    << to_ids(c[name]);
            }
        }
    }
    void invalid_utf8() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, bytes);
        QFETCH(std::string, replaced);
        QFETCH(Ids, expected);
        const Tokenizer& t = tok(tokenizer);
        QCOMPARE(sanitize_utf8(bytes), replaced);
        compare_ids(t.encode(bytes), expected);
        compare_ids(t.encode(bytes, true), t.encode(replaced, true));
        QCOMPARE(t.decode(expected), replaced);
        QCOMPARE(stream_decode(t, expected), replaced);
    }

    // Streaming equals decode on arbitrary id sequences too, where tokens split and break UTF-8
    // sequences anywhere and special tokens are interleaved.
    void streaming_random_ids_data() {
        QTest::addColumn<std::string>("tokenizer");
        for (const auto& [name, dir] : kFixtures)
            QTest::newRow(name.c_str()) << name;
    }
    void streaming_random_ids() {
        QFETCH(std::string, tokenizer);
        const Tokenizer& t = tok(tokenizer);
        std::mt19937 rng(1234);
        for (int round = 0; round < 300; ++round) {
            std::uniform_int_distribution<int32_t> pick(0, t.vocab_size() - 1);
            std::uniform_int_distribution<int> length(0, 40);
            Ids ids(static_cast<std::size_t>(length(rng)));
            for (int32_t& id : ids)
                id = pick(rng);
            QCOMPARE(stream_decode(t, ids), t.decode(ids));
        }
        // Every id alone and all of them in a row.
        Ids all(static_cast<std::size_t>(t.vocab_size()));
        for (int32_t i = 0; i < t.vocab_size(); ++i)
            all[static_cast<std::size_t>(i)] = i;
        QCOMPARE(stream_decode(t, all), t.decode(all));
        std::reverse(all.begin(), all.end());
        QCOMPARE(stream_decode(t, all), t.decode(all));
    }

    void streaming_holds_back_partial_characters() {
        // tiktoken ranks 0..255 are the single bytes: feed "中" (E4 B8 AD) byte by byte.
        const Tokenizer& t = tok("tiktoken");
        StreamingDecoder decoder(t);
        QCOMPARE(decoder.push(0xE4), std::string());
        QCOMPARE(decoder.push(0xB8), std::string());
        QCOMPARE(decoder.push(803), std::string());  // <|eos|>: special, nothing
        QCOMPARE(decoder.push(0xAD), std::string("中"));
        QCOMPARE(decoder.push('a'), std::string("a"));
        QCOMPARE(decoder.push(0xF0), std::string());
        QCOMPARE(decoder.push('b'), std::string("\xEF\xBF\xBD"
                                                "b"));  // can no longer complete
        QCOMPARE(decoder.push(0xE2), std::string());
        QCOMPARE(decoder.push(0x82), std::string());
        QCOMPARE(decoder.finish(), std::string("\xEF\xBF\xBD"));  // one maximal subpart
        QCOMPARE(decoder.finish(), std::string());
    }

    void sentencepiece_drops_the_dummy_prefix_once() {
        // SentencePiece's decoder removes the space of a leading "▁" of the first ordinary token
        // only; control tokens before it do not count, byte pieces and <unk> do.
        const Tokenizer& t = tok("sentencepiece");
        const int32_t ws = t.token_id("\xE2\x96\x81").value();  // "▁"
        const int32_t hello = t.encode("Hello").front();
        QCOMPARE(t.token_bytes(ws), std::string(" "));
        const Ids a{ws, ws};
        QCOMPARE(t.decode(a), std::string(" "));
        const Ids b{1, ws};
        QCOMPARE(t.decode(b), std::string());
        QCOMPARE(t.decode(b, false), std::string("<s>"));
        const Ids c{3 + 0x20, ws};
        QCOMPARE(t.decode(c), std::string("  "));
        const Ids d{0, ws};
        QCOMPARE(t.decode(d), std::string(" \xE2\x81\x87  "));
        QCOMPARE(t.decode(t.encode("Hello")), std::string("Hello"));
        QVERIFY(t.token_bytes(hello).starts_with(' '));
    }

    // ---- UTF-8 repair ----------------------------------------------------------------------

    void sanitize_data() {
        QTest::addColumn<std::string>("input");
        QTest::addColumn<std::string>("expected");
        const std::string r = "\xEF\xBF\xBD";
        // Expected values follow the Unicode "maximal subpart" practice (Python's
        // errors="replace"): a lead byte plus the continuation bytes that still fit is one
        // U+FFFD; a byte that can never start or continue a sequence is one U+FFFD each.
        QTest::newRow("empty") << std::string() << std::string();
        QTest::newRow("ascii") << std::string("abc") << std::string("abc");
        QTest::newRow("nul") << std::string("a\0b", 3) << std::string("a\0b", 3);
        QTest::newRow("4-byte") << std::string("\xF0\x9F\x98\x80")
                                << std::string("\xF0\x9F\x98\x80");
        QTest::newRow("max code point")
            << std::string("\xF4\x8F\xBF\xBF") << std::string("\xF4\x8F\xBF\xBF");
        QTest::newRow("E2 82 41") << std::string("\xE2\x82\x41") << r + "A";
        QTest::newRow("E2 41") << std::string("\xE2\x41") << r + "A";
        QTest::newRow("F0 9F 98 at end") << std::string("\xF0\x9F\x98") << r;
        QTest::newRow("F0 9F 41 42") << std::string("\xF0\x9F\x41\x42") << r + "AB";
        QTest::newRow("E0 9F 80") << std::string("\xE0\x9F\x80") << r + r + r;
        QTest::newRow("F4 8F 41") << std::string("\xF4\x8F\x41") << r + "A";
        QTest::newRow("C2 C2 A9") << std::string("\xC2\xC2\xA9") << r + "\xC2\xA9";
        QTest::newRow("80 80 80 80 80") << std::string("\x80\x80\x80\x80\x80") << r + r + r + r + r;
        QTest::newRow("E1 80 E1 80 80")
            << std::string("\xE1\x80\xE1\x80\x80") << r + "\xE1\x80\x80";
    }
    void sanitize() {
        QFETCH(std::string, input);
        QFETCH(std::string, expected);
        QCOMPARE(sanitize_utf8(input), expected);
    }

    // ---- pre-tokenisation corner cases ---------------------------------------------------------

    // `\s+(?!\S)` must leave the last white-space character of a run to the word that follows
    // (backtracking), however long the run. The expected split is derived by hand from the
    // pattern semantics (leftmost-first alternation, greedy with backtracking), the same for
    // tiktoken's fancy_regex and tokenizers' onig: pieces are BPE'd independently, so the ids of
    // the whole text are the concatenation of the ids of its expected pieces.
    void whitespace_runs_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<std::string>>("pieces");
        for (const int n : {1, 2, 3, 17, 1000, 20000}) {
            const std::string run(static_cast<std::size_t>(n), ' ');
            for (const char* name : {"tiktoken", "hf", "hf_gpt2"}) {
                const QByteArray row = QByteArray(name) + " spaces " + QByteArray::number(n);
                // "x<run>y": x, <run minus one>, " y"
                std::vector<std::string> pieces = {"x"};
                if (n > 1) pieces.push_back(run.substr(1));
                pieces.push_back(" y");
                QTest::newRow((row + " between words").constData())
                    << std::string(name) << "x" + run + "y" << pieces;
                // "<run>" alone and at the end: one piece (the lookahead succeeds at the end).
                QTest::newRow((row + " alone").constData())
                    << std::string(name) << run << std::vector<std::string>{run};
                QTest::newRow((row + " at the end").constData())
                    << std::string(name) << "x" + run << std::vector<std::string>{"x", run};
                // "<run>!": the run minus one, then " !" (punctuation takes an optional space).
                std::vector<std::string> punct;
                if (n > 1) punct.push_back(run.substr(1));
                punct.push_back(" !");
                QTest::newRow((row + " before punctuation").constData())
                    << std::string(name) << run + "!" << punct;
            }
            // Hunyuan / Qwen pattern: white space ending in a newline is one `\s*[\r\n]+` piece,
            // and the spaces after it go with the next word as before.
            for (const char* name : {"tiktoken", "hf"}) {
                const QByteArray row = QByteArray(name) + " newline " + QByteArray::number(n);
                std::vector<std::string> pieces = {"x", run + "\n"};
                if (n > 1) pieces.push_back(run.substr(1));
                pieces.push_back(" y");
                QTest::newRow(row.constData())
                    << std::string(name) << "x" + run + "\n" + run + "y" << pieces;
            }
        }
    }
    void whitespace_runs() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, text);
        QFETCH(std::vector<std::string>, pieces);
        const Tokenizer& t = tok(tokenizer);
        Ids expected;
        for (const std::string& piece : pieces) {
            const Ids ids = t.encode(piece);
            expected.insert(expected.end(), ids.begin(), ids.end());
        }
        compare_ids(t.encode(text), expected);
        QCOMPARE(t.decode(t.encode(text)), text);
    }

    // ---- long inputs ----------------------------------------------------------------------------

    // 100 KB of one repeated character: one huge pre-tokenised piece for letters and white space.
    // tiktoken's and tokenizers' merge loops are quadratic there; ours must not be.
    void long_repeated_character_data() {
        QTest::addColumn<std::string>("tokenizer");
        QTest::addColumn<std::string>("unit");
        const std::vector<std::pair<const char*, std::string>> units = {
            {"a", "a"},    {"space", " "}, {"newline", "\n"}, {"digit", "7"}, {"cjk", "中"},
            {"bang", "!"}, {"emoji", "😀"}, {"crlf", "\r\n"},  {"tab", "\t"},  {"nbsp", "\xC2\xA0"},
        };
        for (const auto& [name, dir] : kFixtures) {
            for (const auto& [label, unit] : units) {
                QTest::newRow((name + " " + label).c_str()) << name << unit;
            }
        }
    }
    void long_repeated_character() {
        QFETCH(std::string, tokenizer);
        QFETCH(std::string, unit);
        const Tokenizer& t = tok(tokenizer);
        std::string text;
        while (text.size() < 100 * 1024)
            text += unit;
        QElapsedTimer timer;
        timer.start();
        const Ids ids = t.encode(text);
        const qint64 encode_ms = timer.elapsed();
        QVERIFY(!ids.empty());
        QCOMPARE(t.decode(ids), text);
        // Generous bound for an unoptimised build on a loaded machine; a quadratic merge of
        // 100 K symbols takes minutes.
        QVERIFY2(encode_ms < 20000, qPrintable(QString("encode took %1 ms").arg(encode_ms)));
    }

    void long_mixed_text_round_trips() {
        // All golden texts, 30 times over (about 200 KB): round trip and streaming.
        std::string text;
        for (int k = 0; k < 30; ++k) {
            for (const json& s : g_golden["texts"])
                text += s.get<std::string>() + "\n\n";
        }
        for (const auto& [name, dir] : kFixtures) {
            const Tokenizer& t = tok(name);
            const Ids ids = t.encode(text);
            if (name != "hf") QCOMPARE(t.decode(ids), text);  // hf normalises to NFC
            QCOMPARE(stream_decode(t, ids), t.decode(ids));
        }
    }

    // ---- concurrency ----------------------------------------------------------------------------

    void concurrent_encode_is_consistent() {
        const json& texts = g_golden["texts"];
        for (const auto& [name, dir] : kFixtures) {
            const Tokenizer& t = tok(name);
            std::vector<Ids> expected;
            for (const json& s : texts)
                expected.push_back(t.encode(s.get<std::string>(), true));
            std::atomic<int> mismatches{0};
            std::vector<std::thread> threads;
            for (int k = 0; k < 4; ++k) {
                threads.emplace_back([&, k] {
                    for (int round = 0; round < 5; ++round) {
                        for (std::size_t i = 0; i < texts.size(); ++i) {
                            const std::size_t j =
                                (i + static_cast<std::size_t>(k) * 17) % texts.size();
                            if (t.encode(texts[j].get<std::string>(), true) != expected[j]) {
                                ++mismatches;
                            }
                        }
                    }
                });
            }
            for (std::thread& th : threads)
                th.join();
            QCOMPARE(mismatches.load(), 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
