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
        <source>Context (KV cache) tokens:</source>
        <translation>上下文（KV 缓存）词元数：</translation>
    </message>
    <message>
        <source>Maximum batch:</source>
        <translation>最大批量：</translation>
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
        <source>&amp;Larger text</source>
        <translation>放大文字(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Smaller text</source>
        <translation>缩小文字(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Default text size</source>
        <translation>默认文字大小(&amp;D)</translation>
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
        <source>CPU (fp32)</source>
        <translation>CPU（fp32）</translation>
    </message>
    <message>
        <source>The memory each precision tier needs for this model, with the context and batch above.</source>
        <translation>此模型在各精度档下所需的内存（按上面的上下文和批量计算）。</translation>
    </message>
    <message>
        <source>GPU engine not available in this build: the CPU engine runs the model in fp32. The GPU rows show what each tier would need.</source>
        <translation>此版本未包含 GPU 引擎：模型由 CPU 引擎以 fp32 运行。GPU 各行显示的是各精度档所需的显存。</translation>
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
        <source>fp32 (CPU)</source>
        <translation>fp32（CPU）</translation>
    </message>
    <message>
        <source>%1 (GPU)</source>
        <translation>%1（GPU）</translation>
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
</context>
</TS>
