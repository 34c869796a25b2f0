// Chat templates: recognition from tokenizer_config.json / chat_template.jinja by their markers,
// and render() output equal to what the Jinja template renders for [system?, user] followed by
// the generation point.
//
// Expected strings: the fixtures' goldens (golden.json "chat", rendered by
// tools/fixtures/make_fixtures.py with jinja2 the way transformers' apply_chat_template does) for
// the real Hunyuan-MT template and for Qwen2-Instruct's ChatML template. The Qwen2.5- and
// Qwen3-style templates below were written for this test and rendered once with jinja2 3.1.6 in
// the same environment as transformers (ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, add_generation_prompt=True); the strings are pasted here.

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mtdesk/error.h"
#include "mtdesk/tokenizer/chat_template.h"
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

using mtdesk::test::write_file;

namespace {

const fs::path kDataDir = fs::path(MTDESK_TEST_DATA_DIR) / "tokenizers";

const char* const k_qwen25 = R"TPL({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query." }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "<|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)TPL";
const char* const k_qwen3 = R"TPL({%- if messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == "user" or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %})TPL";
const char* const k_quoted =
    R"TPL({% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "<|im_start|>system\nYou're a \"careful\" translator.<|im_end|>\n" }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})TPL";
const char* const k_hunyuan_formatted = R"TPL({% set ns = namespace(has_head=true) %}
{% set loop_messages = messages %}
{% for message in loop_messages %}
    {% set content = message['content'] %}
    {% if loop.index0 == 0 %}
        {% if content == '' %}
            {% set ns.has_head = false %}
            {% elif message['role'] == 'system' %}
            {% set content = '<|startoftext|>' + content + '<|extra_4|>' %}
        {% endif %}
    {% endif %}
    {% if message['role'] == 'user' %}
        {% if loop.index0 == 1 and ns.has_head %}
            {% set content = content + '<|extra_0|>' %}
        {% else %}
            {% set content = '<|startoftext|>' + content + '<|extra_0|>' %}
        {% endif %}
    {% elif message['role'] == 'assistant' %}
        {% set content = content + '<|eos|>' %}
    {% endif %}
    {{ content }}
{% endfor %})TPL";

// Llama 3's header markers: not a template mtdesk implements.
const char* const k_llama3 =
    R"TPL({% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %})TPL";

// The render() arguments of the rows below, by index: user text and system message.
const std::vector<std::pair<std::string, std::string>> kCases = {
    {"Translate into German:\n\nGood morning", ""},
    {"翻译成英文：\n\n早上好", "你是一个翻译。"},
    {"x", ""},
};

struct RenderRow {
    const char* name;
    const char* jinja;
    int case_index;
    const char* expected;
};

const std::vector<RenderRow> kRenderRows = {
    {"qwen25", k_qwen25, 0,
     "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
     "assistant.<|im_end|>\n<|im_start|>user\nTranslate into German:\n\nGood "
     "morning<|im_end|>\n<|im_start|>assistant\n"},
    {"qwen25", k_qwen25, 1,
     "<|im_start|>system\n你是一个翻译。<|im_end|>\n<|im_start|>user\n翻译成英文：\n\n早上好<|im_"
     "end|>\n<|im_start|>assistant\n"},
    {"qwen25", k_qwen25, 2,
     "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
     "assistant.<|im_end|>\n<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"},
    {"qwen3", k_qwen3, 0,
     "<|im_start|>user\nTranslate into German:\n\nGood morning<|im_end|>\n<|im_start|>assistant\n"},
    {"qwen3", k_qwen3, 1,
     "<|im_start|>system\n你是一个翻译。<|im_end|>\n<|im_start|>user\n翻译成英文：\n\n早上好<|im_"
     "end|>\n<|im_start|>assistant\n"},
    {"qwen3", k_qwen3, 2, "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"},
    {"quoted", k_quoted, 0,
     "<|im_start|>system\nYou're a \"careful\" translator.<|im_end|>\n<|im_start|>user\nTranslate "
     "into German:\n\nGood morning<|im_end|>\n<|im_start|>assistant\n"},
    {"quoted", k_quoted, 1,
     "<|im_start|>system\n你是一个翻译。<|im_end|>\n<|im_start|>user\n翻译成英文：\n\n早上好<|im_"
     "end|>\n<|im_start|>assistant\n"},
    {"quoted", k_quoted, 2,
     "<|im_start|>system\nYou're a \"careful\" "
     "translator.<|im_end|>\n<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"},
};

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

    mtdesk::test::CaseDirs dirs_;

    fs::path fresh_dir() { return dirs_.fresh(); }

  private slots:
    void initTestCase() { QVERIFY(dirs_.valid()); }

    // The fixtures' goldens: text and ids.
    void fixture_goldens_data() {
        QTest::addColumn<std::string>("fixture");
        QTest::addColumn<std::string>("side");
        QTest::addColumn<std::string>("user");
        QTest::addColumn<std::string>("system");
        QTest::addColumn<std::string>("expected");
        QTest::addColumn<Ids>("ids");
        std::ifstream in(kDataDir / "golden.json");
        const json golden = json::parse(in);
        int index = 0;
        for (const json& chat : golden["chat"]) {
            const json& messages = chat["messages"];
            // render() covers [system?, user]; the multi-turn conversation is not its business.
            if (messages.size() > 2 || messages.back()["role"] != "user") {
                ++index;
                continue;
            }
            const std::string user = messages.back()["content"];
            const std::string system = messages.size() == 2 ? messages[0]["content"] : "";
            const QByteArray row = QByteArray::number(index++);
            QTest::newRow(("hunyuan/" + row).constData())
                << std::string("tiktoken") << std::string("tiktoken") << user << system
                << chat["tiktoken"]["text"].get<std::string>()
                << chat["tiktoken"]["ids"].get<Ids>();
            // An empty system message is "no system message" for render(); the ChatML template
            // renders an explicitly empty one, which render() cannot ask for.
            if (messages.size() == 2 && system.empty()) continue;
            QTest::newRow(("chatml/" + row).constData())
                << std::string("hf") << std::string("hf") << user << system
                << chat["hf"]["text"].get<std::string>() << chat["hf"]["ids"].get<Ids>();
        }
    }
    void fixture_goldens() {
        QFETCH(std::string, fixture);
        QFETCH(std::string, side);
        QFETCH(std::string, user);
        QFETCH(std::string, system);
        QFETCH(std::string, expected);
        QFETCH(Ids, ids);
        const ChatTemplate t = ChatTemplate::from_model_dir(kDataDir / fixture);
        QCOMPARE(t.kind, side == "tiktoken" ? ChatTemplateKind::Hunyuan : ChatTemplateKind::ChatML);
        const std::string prompt = t.render(user, system);
        QCOMPARE(prompt, expected);
        const auto tokenizer = load_tokenizer(kDataDir / fixture);
        QCOMPARE(tokenizer->encode(prompt, true), ids);
        for (const std::string& stop : t.stop_tokens()) {
            const std::optional<int32_t> id = tokenizer->token_id(stop);
            QVERIFY2(id && tokenizer->is_special(*id), stop.c_str());
        }
    }

    void chatml_default_system() {
        QCOMPARE(ChatTemplate::from_model_dir(kDataDir / "hf").default_system,
                 std::string("You are a helpful assistant."));
    }

    void rendered_templates_data() {
        QTest::addColumn<std::string>("jinja");
        QTest::addColumn<std::string>("user");
        QTest::addColumn<std::string>("system");
        QTest::addColumn<std::string>("expected");
        for (const RenderRow& row : kRenderRows) {
            const auto& [user, system] = kCases[static_cast<std::size_t>(row.case_index)];
            QTest::newRow((std::string(row.name) + "/" + std::to_string(row.case_index)).c_str())
                << std::string(row.jinja) << user << system << std::string(row.expected);
        }
    }
    void rendered_templates() {
        QFETCH(std::string, jinja);
        QFETCH(std::string, user);
        QFETCH(std::string, system);
        QFETCH(std::string, expected);
        const ChatTemplate t = ChatTemplate::recognise(jinja, "test template");
        QCOMPARE(t.kind, ChatTemplateKind::ChatML);
        QCOMPARE(t.render(user, system), expected);
        QCOMPARE(t.stop_tokens(), std::vector<std::string>{"<|im_end|>"});
    }

    void hunyuan_render() {
        // Hand-derived from the Hunyuan-MT template (see the fixture's tokenizer_config.json):
        // with a system message, the user turn after it only gains '<|extra_0|>'.
        const ChatTemplate t = ChatTemplate::recognise(k_hunyuan_formatted, "chat_template.jinja");
        QCOMPARE(t.kind, ChatTemplateKind::Hunyuan);
        QCOMPARE(t.render("u"), std::string("<|startoftext|>u<|extra_0|>"));
        QCOMPARE(t.render("u", "s"), std::string("<|startoftext|>s<|extra_4|>u<|extra_0|>"));
        QCOMPARE(t.render("", "s"), std::string("<|startoftext|>s<|extra_4|><|extra_0|>"));
        QCOMPARE(t.render(""), std::string("<|startoftext|><|extra_0|>"));
        QCOMPARE(t.stop_tokens(), std::vector<std::string>{"<|eos|>"});
        // A default-constructed template is Hunyuan's.
        QCOMPARE(ChatTemplate{}.render("u"), std::string("<|startoftext|>u<|extra_0|>"));
    }

    void hunyuan_v2_render() {
        // HY-MT1.5-1.8B's template (abridged to its turn structure): bos_token, the system prompt
        // and '<｜hy_place▁holder▁no▁3｜>' when there is one, '<｜hy_User｜>' + content, and the
        // generation prompt '<｜hy_Assistant｜>'. Expected strings derived by hand from it.
        const std::string jinja =
            "{{- bos_token }}{{- ns.system_prompt }}{%- if ns.system_prompt != '' %}"
            "{{- '<｜hy_place▁holder▁no▁3｜>' }}{%- endif %}{%- for message in messages %}"
            "{%- if message['role'] == 'user' %}{{- '<｜hy_User｜>'}}{{- message.content }}"
            "{%- elif message['role'] == 'assistant' %}{{- '<｜hy_Assistant｜>' + "
            "message.content + '<｜hy_place▁holder▁no▁2｜>' }}{%- endif %}{%- endfor %}"
            "{%- if add_generation_prompt %}{{- '<｜hy_Assistant｜>' }}{%- endif %}";
        const ChatTemplate t = ChatTemplate::recognise(jinja, "tokenizer_config.json");
        QCOMPARE(t.kind, ChatTemplateKind::HunyuanV2);
        QCOMPARE(t.render("u"),
                 std::string("<｜hy_begin▁of▁sentence｜><｜hy_User｜>u<｜hy_Assistant｜>"));
        QCOMPARE(t.render("u", "s"), std::string("<｜hy_begin▁of▁sentence｜>s<｜hy_place▁holder▁no▁"
                                                 "3｜><｜hy_User｜>u<｜hy_Assistant｜>"));
        QCOMPARE(t.stop_tokens(), std::vector<std::string>{"<｜hy_place▁holder▁no▁2｜>"});
        QCOMPARE(chat_template_name(t.kind), std::string_view("Hunyuan V2"));
    }

    void unknown_template_is_unsupported() {
        try {
            ChatTemplate::recognise(k_llama3, "some/dir/tokenizer_config.json");
            QFAIL("no exception");
        } catch (const UnsupportedError& e) {
            QCOMPARE(e.file(), std::string("some/dir/tokenizer_config.json"));
            QVERIFY(std::string(e.what()).find("unsupported chat template") != std::string::npos);
        }
        const fs::path dir = fresh_dir();
        write_file(dir / "tokenizer_config.json", json{{"chat_template", k_llama3}}.dump());
        try {
            ChatTemplate::from_model_dir(dir);
            QFAIL("no exception");
        } catch (const UnsupportedError& e) {
            QVERIFY(e.file().ends_with("tokenizer_config.json"));
        }
    }

    void from_model_dir_sources() {
        // No tokenizer_config.json, or one without a chat_template: Hunyuan's, assumed.
        const fs::path empty = fresh_dir();
        QCOMPARE(ChatTemplate::from_model_dir(empty).kind, ChatTemplateKind::Hunyuan);
        QVERIFY(ChatTemplate::from_model_dir(empty).assumed);
        QCOMPARE(ChatTemplate::from_model_dir(kDataDir / "hf-gpt2").kind,
                 ChatTemplateKind::Hunyuan);
        QVERIFY(ChatTemplate::from_model_dir(kDataDir / "hf-gpt2").assumed);
        write_file(empty / "tokenizer_config.json", json{{"chat_template", json::array()}}.dump());
        QVERIFY(ChatTemplate::from_model_dir(empty).assumed);
        // A template of the model's own, Hunyuan's included, is not assumed.
        write_file(empty / "tokenizer_config.json",
                   json{{"chat_template", k_hunyuan_formatted}}.dump());
        QCOMPARE(ChatTemplate::from_model_dir(empty).kind, ChatTemplateKind::Hunyuan);
        QVERIFY(!ChatTemplate::from_model_dir(empty).assumed);

        // chat_template.jinja takes precedence over tokenizer_config.json.
        const fs::path both = fresh_dir();
        write_file(both / "tokenizer_config.json", json{{"chat_template", k_qwen3}}.dump());
        QCOMPARE(ChatTemplate::from_model_dir(both).kind, ChatTemplateKind::ChatML);
        QVERIFY(!ChatTemplate::from_model_dir(both).assumed);
        write_file(both / "chat_template.jinja", k_hunyuan_formatted);
        QCOMPARE(ChatTemplate::from_model_dir(both).kind, ChatTemplateKind::Hunyuan);
        QVERIFY(!ChatTemplate::from_model_dir(both).assumed);
        write_file(both / "chat_template.jinja", k_llama3);
        try {
            ChatTemplate::from_model_dir(both);
            QFAIL("no exception");
        } catch (const UnsupportedError& e) {
            QVERIFY(e.file().ends_with("chat_template.jinja"));
        }

        // A list of named templates: "default" is used.
        const fs::path list = fresh_dir();
        json config;
        config["chat_template"] = json::array({{{"name", "tool_use"}, {"template", k_llama3}},
                                               {{"name", "default"}, {"template", k_qwen25}}});
        write_file(list / "tokenizer_config.json", config.dump());
        const ChatTemplate t = ChatTemplate::from_model_dir(list);
        QCOMPARE(t.kind, ChatTemplateKind::ChatML);
        QCOMPARE(
            t.default_system,
            std::string("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."));
    }

    void malformed_config_data() {
        QTest::addColumn<std::string>("content");
        QTest::addColumn<std::string>("problem");
        QTest::newRow("malformed JSON")
            << std::string("{\"chat_template\": ") << std::string("malformed JSON");
        QTest::newRow("not an object")
            << std::string("\"text\"") << std::string("expected a JSON object");
        QTest::newRow("template is a number")
            << std::string(R"({"chat_template": 3})") << std::string("chat_template is neither");
        QTest::newRow("list entry without template")
            << std::string(R"({"chat_template": [{"name": "default"}]})")
            << std::string("without a template string");
    }
    void malformed_config() {
        QFETCH(std::string, content);
        QFETCH(std::string, problem);
        const fs::path dir = fresh_dir();
        write_file(dir / "tokenizer_config.json", content);
        try {
            ChatTemplate::from_model_dir(dir);
            QFAIL("no exception");
        } catch (const FileError& e) {
            QVERIFY(e.file().ends_with("tokenizer_config.json"));
            QVERIFY2(e.problem().find(problem) != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
