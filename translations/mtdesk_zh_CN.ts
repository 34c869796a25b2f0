<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Directory with config.json, weights and tokenizer</source>
        <translation>包含 config.json、权重和分词器的目录</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Device and precision</source>
        <translation>设备与精度</translation>
    </message>
    <message>
        <source>Device:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <source>GPU precision tier:</source>
        <translation>GPU 精度档：</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>Sampling</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling</source>
        <translation>模型推荐的采样参数</translation>
    </message>
    <message>
        <source>Greedy (always the same output)</source>
        <translation>贪心解码（输出始终相同）</translation>
    </message>
    <message>
        <source>Custom:</source>
        <translation>自定义：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top-k (0 = off):</source>
        <translation>Top-k（0 = 关闭）：</translation>
    </message>
    <message>
        <source>Top-p (1 = off):</source>
        <translation>Top-p（1 = 关闭）：</translation>
    </message>
    <message>
        <source>Repetition penalty (1 = off):</source>
        <translation>重复惩罚（1 = 关闭）：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>随机种子：</translation>
    </message>
    <message>
        <source>The same seed gives the same translation; Random draws a new one each time.</source>
        <translation>相同的随机种子给出相同的译文；“随机”每次抽取新的种子。</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>Most tokens per line:</source>
        <translation>每行最多词元数：</translation>
    </message>
    <message>
        <source>Interface</source>
        <translation>界面</translation>
    </message>
    <message>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <source>Takes effect when mtdesk starts again.</source>
        <translation>重新启动 mtdesk 后生效。</translation>
    </message>
    <message>
        <source>General</source>
        <translation>常规</translation>
    </message>
    <message>
        <source>Glossary</source>
        <translation>术语表</translation>
    </message>
    <message>
        <source>Terms found in the source text (ignoring case, whole words) are given to the model with their required translation (HY-MT1.5&apos;s terminology prompt). A translation that lacks a term is noted in the status bar. An empty language applies to every language.</source>
        <translation>在原文中找到的术语（不区分大小写，按整词匹配）会连同指定译法一起交给模型（HY-MT1.5 的术语干预提示）。译文缺少某个术语时会在状态栏提示。语言留空表示适用于所有语言。</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Casing guard: brand names and acronyms keep the source&apos;s casing</source>
        <translation>大小写保护：品牌名和缩写保持原文的大小写</translation>
    </message>
    <message>
        <source>Words of the source such as iPhone, GitHub, macOS or NASA keep their exact casing where they appear in the translation.</source>
        <translation>原文中的 iPhone、GitHub、macOS、NASA 等词出现在译文中时保持原样的大小写。</translation>
    </message>
    <message>
        <source>Translate with</source>
        <translation>翻译方式</translation>
    </message>
    <message>
        <source>This computer (GPU / CPU)</source>
        <translation>本机（GPU / CPU）</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>OpenAI-compatible servers (vLLM, SGLang, TensorRT-LLM, mtdesk serve) translate instead of this computer.</source>
        <translation>由兼容 OpenAI 接口的服务器（vLLM、SGLang、TensorRT-LLM、mtdesk serve）代替本机进行翻译。</translation>
    </message>
    <message>
        <source>URLs (one per line):</source>
        <translation>地址（每行一个）：</translation>
    </message>
    <message>
        <source>http://gpu1:8000
http://gpu2:8000</source>
        <translation>http://gpu1:8000
http://gpu2:8000</translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation>模型名称：</translation>
    </message>
    <message>
        <source>The first model the servers list</source>
        <translation>服务器列出的第一个模型</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Requests in flight per server:</source>
        <translation>每台服务器的并发请求数：</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>CPU precision tier:</source>
        <translation>CPU 精度档：</translation>
    </message>
    <message>
        <source>GPU KV cache (tokens, all requests):</source>
        <translation>GPU KV 缓存（词元数，所有请求合计）：</translation>
    </message>
    <message>
        <source>GPU maximum batch:</source>
        <translation>GPU 最大批量：</translation>
    </message>
    <message>
        <source>GPU INT8 KV cache (half the memory per token)</source>
        <translation>GPU INT8 KV 缓存（每个词元内存减半）</translation>
    </message>
</context>
<context>
    <name>mtdesk::app::JobQueue</name>
    <message>
        <source>Unknown target language &quot;%1&quot;.</source>
        <translation>未知的目标语言“%1”。</translation>
    </message>
    <message>
        <source>Unknown source language &quot;%1&quot;.</source>
        <translation>未知的源语言“%1”。</translation>
    </message>
    <message>
        <source>The source and the target language are the same (%1).</source>
        <translation>源语言与目标语言相同（%1）。</translation>
    </message>
    <message>
        <source>%1: a segment could not be translated: %2</source>
        <translation>%1：有一个片段无法翻译：%2</translation>
    </message>
    <message>
        <source>%1: the translation engine stopped (retry to go on)</source>
        <translation>%1：翻译引擎已停止（重试以继续）</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::DocumentQueueModel</name>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>%1 (detected) → %2</source>
        <translation>%1（检测）→ %2</translation>
    </message>
    <message>
        <source>Detect → %1</source>
        <translation>检测 → %1</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>Writing…</source>
        <translation>正在写入…</translation>
    </message>
    <message>
        <source>Translating</source>
        <translation>正在翻译</translation>
    </message>
    <message>
        <source>Done → %1</source>
        <translation>完成 → %1</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>Queued (waiting for the model)</source>
        <translation>排队中（等待模型）</translation>
    </message>
    <message>
        <source>%1
→ %2</source>
        <translation>%1
→ %2</translation>
    </message>
    <message>
        <source>Estimated from the rate so far</source>
        <translation>按目前的速度估算</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Segments</source>
        <translation>片段</translation>
    </message>
    <message>
        <source>Elapsed</source>
        <translation>已用时间</translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation>剩余时间</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: expect a poor translation.</source>
        <translation>此模型只学过英语与%1之间的翻译：译文质量可能很差。</translation>
    </message>
    <message>
        <source>%1 (in %2)</source>
        <translation>%1（位于 %2）</translation>
    </message>
    <message numerus="yes">
        <source>, %n segments may have lost placeholders or markup</source>
        <translation>
            <numerusform>，%n 个片段可能丢失了占位符或标记</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n entries marked fuzzy for review</source>
        <translation>
            <numerusform>，%n 个条目已标记为 fuzzy 待审核</numerusform>
        </translation>
    </message>
    <message>
        <source>These segments&apos; placeholders or markup differ from the source; check them in the translation:</source>
        <translation>以下片段的占位符或标记与原文不一致，请在译文中检查：</translation>
    </message>
    <message>
        <source>lost %1</source>
        <translation>丢失 %1</translation>
    </message>
    <message>
        <source>added %1</source>
        <translation>多出 %1</translation>
    </message>
    <message>
        <source>segment %1: %2</source>
        <translation>片段 %1：%2</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>另有 %n 个</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n entries are marked fuzzy with the source text kept: the translation was empty, or changed placeholders or line breaks.</source>
        <translation>
            <numerusform>%n 个条目已标记为 fuzzy 并保留原文：译文为空，或改变了占位符或换行。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::DocumentQueueView</name>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开所在文件夹</translation>
    </message>
    <message>
        <source>Remove from the queue</source>
        <translation>从队列中移除</translation>
    </message>
    <message>
        <source>Drop documents or folders on the window, or use “Add files…”. Each is translated into a new file next to it.</source>
        <translation>将文档或文件夹拖到窗口上，或使用“添加文件…”。每个文档都会翻译成旁边的一个新文件。</translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <source>Choose documents to translate into the target language</source>
        <translation>选择要翻译成目标语言的文档</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Translate every supported document in a folder and its subfolders</source>
        <translation>翻译某个文件夹及其子文件夹中所有支持的文档</translation>
    </message>
    <message>
        <source>Clear finished</source>
        <translation>清除已结束项</translation>
    </message>
    <message>
        <source>Remove the done, failed and cancelled rows (not their files)</source>
        <translation>移除已完成、失败和已取消的行（不删除文件）</translation>
    </message>
    <message>
        <source>Elapsed</source>
        <translation>已用时间</translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation>剩余时间</translation>
    </message>
    <message>
        <source>Detect → %1</source>
        <translation>检测 → %1</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>New documents: %1</source>
        <translation>新文档：%1</translation>
    </message>
    <message>
        <source>Translate documents</source>
        <translation>翻译文档</translation>
    </message>
    <message>
        <source>Translate a folder</source>
        <translation>翻译文件夹</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>All files</source>
        <translation>所有文件</translation>
    </message>
    <message>
        <source>Could not open %1: no file manager answered</source>
        <translation>无法打开 %1：没有文件管理器响应</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::GlossaryModel</name>
    <message>
        <source>Any language</source>
        <translation>任意语言</translation>
    </message>
    <message>
        <source>Source language</source>
        <translation>源语言</translation>
    </message>
    <message>
        <source>Target language</source>
        <translation>目标语言</translation>
    </message>
    <message>
        <source>Source term</source>
        <translation>源术语</translation>
    </message>
    <message>
        <source>Target term</source>
        <translation>目标术语</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::LanguagePicker</name>
    <message>
        <source>Detect language</source>
        <translation>检测语言</translation>
    </message>
    <message>
        <source>Type a code or a name</source>
        <translation>输入代码或名称</translation>
    </message>
    <message>
        <source>Detect: %1</source>
        <translation>检测：%1</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::LivePanel</name>
    <message>
        <source>%1 %4 · p50 %2 · p95 %3</source>
        <translation>%1 %4 · p50 %2 · p95 %3</translation>
    </message>
    <message>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <source>%1 B</source>
        <translation>%1 B</translation>
    </message>
    <message>
        <source>VRAM</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批量</translation>
    </message>
    <message>
        <source>First token</source>
        <translation>首个词元</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Time to first token (ms)</source>
        <translation>首个词元用时（毫秒）</translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation>每秒词元数</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source> (mtdesk: %1)</source>
        <translation>（mtdesk：%1）</translation>
    </message>
    <message numerus="yes">
        <source>%n waiting</source>
        <translation>
            <numerusform>%n 个等待中</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n decoding</source>
        <translation>
            <numerusform>%n 个解码中</numerusform>
        </translation>
    </message>
    <message>
        <source>ms</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>进行中</translation>
    </message>
    <message numerus="yes">
        <source>%n request(s)</source>
        <translation>
            <numerusform>%n 个请求</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 of %2 answering</source>
        <translation>%2 台中 %1 台可用</translation>
    </message>
    <message numerus="yes">
        <source> · %n retried</source>
        <translation>
            <numerusform> · 重试 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <source>p50 %1 · p95 %2 ms</source>
        <translation>p50 %1 · p95 %2 毫秒</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 词元/秒</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::MainWindow</name>
    <message>
        <source>mtdesk</source>
        <translation>mtdesk</translation>
    </message>
    <message>
        <source>Choose model directory…</source>
        <translation>选择模型目录…</translation>
    </message>
    <message>
        <source>Source language: type a code or a name in any script</source>
        <translation>源语言：可输入代码或任意文字的名称</translation>
    </message>
    <message>
        <source>Target language: type a code or a name in any script</source>
        <translation>目标语言：可输入代码或任意文字的名称</translation>
    </message>
    <message>
        <source>Swap languages and texts (Ctrl+Shift+S)</source>
        <translation>交换语言和文本（Ctrl+Shift+S）</translation>
    </message>
    <message>
        <source>Type or paste text to translate</source>
        <translation>输入或粘贴要翻译的文本</translation>
    </message>
    <message>
        <source>Translation</source>
        <translation>译文</translation>
    </message>
    <message>
        <source>Translate</source>
        <translation>翻译</translation>
    </message>
    <message>
        <source>Translate now (Ctrl+Enter)</source>
        <translation>立即翻译（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the translation (Ctrl+Shift+C)</source>
        <translation>复制译文（Ctrl+Shift+C）</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>实时</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Model directory…</source>
        <translation>模型目录(&amp;M)…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Translate</source>
        <translation>翻译(&amp;T)</translation>
    </message>
    <message>
        <source>Translate &amp;now</source>
        <translation>立即翻译(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Swap languages</source>
        <translation>交换语言(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Copy translation</source>
        <translation>复制译文(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Live panel</source>
        <translation>实时面板(&amp;L)</translation>
    </message>
    <message>
        <source>La&amp;rger text</source>
        <translation>放大文字(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Smaller text</source>
        <translation>缩小文字(&amp;S)</translation>
    </message>
    <message>
        <source>Default text si&amp;ze</source>
        <translation>默认文字大小(&amp;Z)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About mtdesk</source>
        <translation>关于 mtdesk(&amp;A)</translation>
    </message>
    <message>
        <source>About mtdesk</source>
        <translation>关于 mtdesk</translation>
    </message>
    <message>
        <source>&lt;h3&gt;mtdesk %1&lt;/h3&gt;&lt;p&gt;Private, offline translation with Hunyuan-MT and HY-MT1.5 models on your own computer.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;mtdesk %1&lt;/h3&gt;&lt;p&gt;在你自己的电脑上使用混元翻译模型（Hunyuan-MT、HY-MT1.5）进行私密的离线翻译。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>No translation model yet. Choose a model directory (with config.json, the weights and the tokenizer).</source>
        <translation>还没有翻译模型。请选择一个模型目录（包含 config.json、权重和分词器）。</translation>
    </message>
    <message numerus="yes">
        <source>%n characters</source>
        <translation>
            <numerusform>%n 个字符</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 ms to first token · %2 tokens/s</source>
        <translation>首个词元 %1 毫秒 · 每秒 %2 个词元</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>Translation copied</source>
        <translation>译文已复制</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>The model could not be loaded</source>
        <translation>无法加载模型</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>无法加载模型：%1</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>Translating…</source>
        <translation>正在翻译…</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>Translate &amp;documents…</source>
        <translation>翻译文档(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Documents</source>
        <translation>文档(&amp;D)</translation>
    </message>
    <message numerus="yes">
        <source>%n documents queued</source>
        <translation>
            <numerusform>已加入 %n 个文档</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing new to translate there: no supported documents, or already queued</source>
        <translation>那里没有需要翻译的新内容：没有支持的文档，或已在队列中</translation>
    </message>
    <message>
        <source>Glossary terms not in the translation: %1</source>
        <translation>译文中缺少的术语：%1</translation>
    </message>
    <message>
        <source>Connecting to the servers…</source>
        <translation>正在连接服务器…</translation>
    </message>
    <message>
        <source>The servers cannot be used</source>
        <translation>无法使用服务器</translation>
    </message>
    <message>
        <source>The servers cannot be used: %1</source>
        <translation>无法使用服务器：%1</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: %2 → %3 is outside that, so expect a poor translation.</source>
        <translation>此模型只学过英语与%1之间的翻译：%2 → %3 不在其中，译文质量可能很差。</translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: %2 is outside that, so expect a poor translation.</source>
        <translation>此模型只学过英语与%1之间的翻译：%2 不在其中，译文质量可能很差。</translation>
    </message>
    <message numerus="yes">
        <source>Translating documents (%n to go)…</source>
        <translation>
            <numerusform>正在翻译文档（还剩 %n 个）…</numerusform>
        </translation>
    </message>
    <message>
        <source>The source and the target language are both %1, so there is nothing to translate. Choose another target language.</source>
        <translation>源语言和目标语言都是%1，无需翻译。请选择其他目标语言。</translation>
    </message>
    <message>
        <source>The text is already in %1 (detected), so it is shown unchanged. Choose its language as the source if it was detected wrongly.</source>
        <translation>检测到文本已是%1，因此按原样显示。如果检测有误，请将其实际语言选为源语言。</translation>
    </message>
    <message>
        <source>Unchanged lines, as translated before</source>
        <translation>各行未改动，沿用之前的译文</translation>
    </message>
    <message>
        <source>Servers ready: model %1</source>
        <translation>服务器已就绪：模型 %1</translation>
    </message>
    <message>
        <source>Model %1 loaded</source>
        <translation>模型 %1 已加载</translation>
    </message>
    <message>
        <source>Choose a model directory</source>
        <translation>选择模型目录</translation>
    </message>
    <message>
        <source>Not a usable model</source>
        <translation>不是可用的模型</translation>
    </message>
    <message>
        <source>%1 cannot be used as the model directory.</source>
        <translation>%1 不能用作模型目录。</translation>
    </message>
    <message>
        <source>Server settings…</source>
        <translation>服务器设置…</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::SettingsDialog</name>
    <message>
        <source>tiktoken tokenizer</source>
        <translation>tiktoken 分词器</translation>
    </message>
    <message>
        <source>tokenizer.json tokenizer</source>
        <translation>tokenizer.json 分词器</translation>
    </message>
    <message>
        <source>SentencePiece tokenizer</source>
        <translation>SentencePiece 分词器</translation>
    </message>
    <message>
        <source>%1 B parameters</source>
        <translation>%1 B 参数</translation>
    </message>
    <message>
        <source>%1 M parameters</source>
        <translation>%1 M 参数</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Choose a model directory</source>
        <translation>选择模型目录</translation>
    </message>
    <message>
        <source>No model chosen.</source>
        <translation>未选择模型。</translation>
    </message>
    <message>
        <source>No model chosen: the bundled demo model is used.</source>
        <translation>未选择模型：使用自带的演示模型。</translation>
    </message>
    <message>
        <source>%1 (GPU)</source>
        <translation>%1（GPU）</translation>
    </message>
    <message>
        <source>Automatic (CPU: no GPU found)</source>
        <translation>自动（CPU：未找到 GPU）</translation>
    </message>
    <message>
        <source>Automatic (the first GPU)</source>
        <translation>自动（第一块 GPU）</translation>
    </message>
    <message>
        <source>GPU %1: %2 (%3 free of %4)</source>
        <translation>GPU %1：%2（可用 %3，共 %4）</translation>
    </message>
    <message>
        <source>The memory each precision tier needs for this model, with the context and batch above, next to the chosen GPU&apos;s free memory.</source>
        <translation>该模型在各精度档位下所需的显存（按上面的上下文和批大小计算），以及所选 GPU 的可用显存。</translation>
    </message>
    <message>
        <source>%1 — does not fit</source>
        <translation>%1 — 放不下</translation>
    </message>
    <message>
        <source>Row %1 has no source term.</source>
        <translation>第 %1 行没有源术语。</translation>
    </message>
    <message>
        <source>Row %1 has no target term.</source>
        <translation>第 %1 行没有目标术语。</translation>
    </message>
    <message>
        <source>%1: cannot be read: %2</source>
        <translation>%1：无法读取：%2</translation>
    </message>
    <message numerus="yes">
        <source>%n new term(s) from %1.</source>
        <translation>
            <numerusform>从 %1 新增了 %n 个术语。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: cannot be written: %2</source>
        <translation>%1：无法写入：%2</translation>
    </message>
    <message numerus="yes">
        <source>%n term(s) written to %1.</source>
        <translation>
            <numerusform>已将 %n 个术语写入 %1。</numerusform>
        </translation>
    </message>
    <message>
        <source>Import a glossary</source>
        <translation>导入术语表</translation>
    </message>
    <message>
        <source>Export the glossary</source>
        <translation>导出术语表</translation>
    </message>
    <message>
        <source>Enter at least one server URL.</source>
        <translation>请至少输入一个服务器地址。</translation>
    </message>
    <message numerus="yes">
        <source>Asking %n server(s)…</source>
        <translation>
            <numerusform>正在询问 %n 台服务器…</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2 ms, models: %3</source>
        <translation>%1：%2 毫秒，模型：%3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Glossaries</source>
        <translation>术语表</translation>
    </message>
    <message>
        <source>All files</source>
        <translation>所有文件</translation>
    </message>
    <message>
        <source>Tab-separated values</source>
        <translation>制表符分隔值</translation>
    </message>
    <message>
        <source>Comma-separated values</source>
        <translation>逗号分隔值</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling</source>
        <translation>模型推荐的采样参数</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling (greedy)</source>
        <translation>模型推荐的采样参数（贪心解码）</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling (temperature %1, top-k %2, top-p %3, repetition penalty %4)</source>
        <translation>模型推荐的采样参数（温度 %1，Top-k %2，Top-p %3，重复惩罚 %4）</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>No GPU found (or this build has no CUDA engine): the CPU engine runs the model in the CPU tier chosen. The GPU rows show what each tier would need.</source>
        <translation>未找到 GPU（或此版本没有 CUDA 引擎）：CPU 引擎以所选的 CPU 精度档运行模型。GPU 各行显示每个精度档所需的内存。</translation>
    </message>
    <message>
        <source>%1 (CPU)</source>
        <translation>%1（CPU）</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>fp32 when it fits in memory, else int8, else int4</source>
        <translation>内存足够时用 fp32，否则 int8，再否则 int4</translation>
    </message>
    <message>
        <source>Automatic: fp32 when it fits in memory, else int8, else int4</source>
        <translation>自动：内存足够时用 fp32，否则 int8，再否则 int4</translation>
    </message>
    <message>
        <source>%1
In use for this session only (given on the command line).</source>
        <translation>%1
仅在本次会话中使用（由命令行指定）。</translation>
    </message>
    <message>
        <source>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s %1 positions.</source>
        <translation>仅 GPU 引擎使用此项。CPU 引擎一次翻译一个请求，可容纳模型的 %1 个位置。</translation>
    </message>
    <message>
        <source>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s own positions.</source>
        <translation>仅 GPU 引擎使用此项。CPU 引擎一次翻译一个请求，可容纳模型本身的位置数。</translation>
    </message>
    <message>
        <source>More than a batch can use: %1 requests × the model&apos;s %2 positions = %3 tokens. The rest is memory taken for nothing.</source>
        <translation>超出一个批次所能使用的量：%1 个请求 × 模型的 %2 个位置 = %3 个词元。多出的部分只会白占内存。</translation>
    </message>
    <message>
        <source>One request holds at most the model&apos;s %1 positions; the rest serves the other requests of a batch.</source>
        <translation>单个请求最多占用模型的 %1 个位置；其余部分供同一批次的其他请求使用。</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::TranslationController</name>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>fp32 (CPU)</source>
        <translation>fp32（CPU）</translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation>正在加载模型</translation>
    </message>
    <message>
        <source>Unknown target language &quot;%1&quot;.</source>
        <translation>未知的目标语言“%1”。</translation>
    </message>
    <message>
        <source>The GPU engine could not load the model (%1); using the CPU instead.</source>
        <translation>GPU 引擎无法加载模型（%1）；改用 CPU。</translation>
    </message>
    <message>
        <source>No server given.</source>
        <translation>未指定服务器。</translation>
    </message>
    <message>
        <source>No server lists a model (%1).</source>
        <translation>没有服务器列出模型（%1）。</translation>
    </message>
    <message>
        <source>Connecting to the servers</source>
        <translation>正在连接服务器</translation>
    </message>
    <message>
        <source>%1 (CPU)</source>
        <translation>%1（CPU）</translation>
    </message>
    <message>
        <source>Not translated: %1</source>
        <translation>未翻译：%1</translation>
    </message>
    <message>
        <source>remote: not connected</source>
        <translation>远程：未连接</translation>
    </message>
    <message>
        <source>remote: %1 (not connected)</source>
        <translation>远程：%1（未连接）</translation>
    </message>
</context>
</TS>
