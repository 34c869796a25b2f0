<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>Directory with config.json, weights and tokenizer</source>
        <translation>Directory with config.json, weights and tokenizer</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Browse…</translation>
    </message>
    <message>
        <source>Device and precision</source>
        <translation>Device and precision</translation>
    </message>
    <message>
        <source>Device:</source>
        <translation>Device:</translation>
    </message>
    <message>
        <source>GPU precision tier:</source>
        <translation>GPU precision tier:</translation>
    </message>
    <message>
        <source>Context (KV cache) tokens:</source>
        <translation>Context (KV cache) tokens:</translation>
    </message>
    <message>
        <source>Maximum batch:</source>
        <translation>Maximum batch:</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Precision</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>Weights</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV cache</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>Total</translation>
    </message>
    <message>
        <source>Sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling</source>
        <translation>The model&apos;s recommended sampling</translation>
    </message>
    <message>
        <source>Greedy (always the same output)</source>
        <translation>Greedy (always the same output)</translation>
    </message>
    <message>
        <source>Custom:</source>
        <translation>Custom:</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>Temperature:</translation>
    </message>
    <message>
        <source>Top-k (0 = off):</source>
        <translation>Top-k (0 = off):</translation>
    </message>
    <message>
        <source>Top-p (1 = off):</source>
        <translation>Top-p (1 = off):</translation>
    </message>
    <message>
        <source>Repetition penalty (1 = off):</source>
        <translation>Repetition penalty (1 = off):</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>Seed:</translation>
    </message>
    <message>
        <source>Most tokens per line:</source>
        <translation>Most tokens per line:</translation>
    </message>
    <message>
        <source>Interface</source>
        <translation>Interface</translation>
    </message>
    <message>
        <source>Language:</source>
        <translation>Language:</translation>
    </message>
    <message>
        <source>Takes effect when mtdesk starts again.</source>
        <translation>Takes effect when mtdesk starts again.</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::LanguagePicker</name>
    <message>
        <source>Detect language</source>
        <translation>Detect language</translation>
    </message>
    <message>
        <source>Type a code or a name</source>
        <translation>Type a code or a name</translation>
    </message>
    <message>
        <source>Detect: %1</source>
        <translation>Detect: %1</translation>
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
        <translation>VRAM</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Device</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Precision</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>RAM</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>Queue</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>Batch</translation>
    </message>
    <message>
        <source>First token</source>
        <translation>First token</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>Tokens/s</translation>
    </message>
    <message>
        <source>Time to first token (ms)</source>
        <translation>Time to first token (ms)</translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation>Tokens per second</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 of %2</translation>
    </message>
    <message>
        <source> (mtdesk: %1)</source>
        <translation> (mtdesk: %1)</translation>
    </message>
    <message numerus="yes">
        <source>%n waiting</source>
        <translation>
            <numerusform>%n waiting</numerusform>
            <numerusform>%n waiting</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n decoding</source>
        <translation>
            <numerusform>%n decoding</numerusform>
            <numerusform>%n decoding</numerusform>
        </translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>tok/s</translation>
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
        <translation>Choose model directory…</translation>
    </message>
    <message>
        <source>Source language: type a code or a name in any script</source>
        <translation>Source language: type a code or a name in any script</translation>
    </message>
    <message>
        <source>Target language: type a code or a name in any script</source>
        <translation>Target language: type a code or a name in any script</translation>
    </message>
    <message>
        <source>Swap languages and texts (Ctrl+Shift+S)</source>
        <translation>Swap languages and texts (Ctrl+Shift+S)</translation>
    </message>
    <message>
        <source>Type or paste text to translate</source>
        <translation>Type or paste text to translate</translation>
    </message>
    <message>
        <source>Translation</source>
        <translation>Translation</translation>
    </message>
    <message>
        <source>Translate</source>
        <translation>Translate</translation>
    </message>
    <message>
        <source>Translate now (Ctrl+Enter)</source>
        <translation>Translate now (Ctrl+Enter)</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <source>Copy the translation (Ctrl+Shift+C)</source>
        <translation>Copy the translation (Ctrl+Shift+C)</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>Live</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;File</translation>
    </message>
    <message>
        <source>&amp;Model directory…</source>
        <translation>&amp;Model directory…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>&amp;Settings…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quit</translation>
    </message>
    <message>
        <source>&amp;Translate</source>
        <translation>&amp;Translate</translation>
    </message>
    <message>
        <source>Translate &amp;now</source>
        <translation>Translate &amp;now</translation>
    </message>
    <message>
        <source>&amp;Swap languages</source>
        <translation>&amp;Swap languages</translation>
    </message>
    <message>
        <source>&amp;Copy translation</source>
        <translation>&amp;Copy translation</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;View</translation>
    </message>
    <message>
        <source>&amp;Live panel</source>
        <translation>&amp;Live panel</translation>
    </message>
    <message>
        <source>&amp;Larger text</source>
        <translation>&amp;Larger text</translation>
    </message>
    <message>
        <source>&amp;Smaller text</source>
        <translation>&amp;Smaller text</translation>
    </message>
    <message>
        <source>&amp;Default text size</source>
        <translation>&amp;Default text size</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Help</translation>
    </message>
    <message>
        <source>&amp;About mtdesk</source>
        <translation>&amp;About mtdesk</translation>
    </message>
    <message>
        <source>About mtdesk</source>
        <translation>About mtdesk</translation>
    </message>
    <message>
        <source>&lt;h3&gt;mtdesk %1&lt;/h3&gt;&lt;p&gt;Private, offline translation with Hunyuan-MT and HY-MT1.5 models on your own computer.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;mtdesk %1&lt;/h3&gt;&lt;p&gt;Private, offline translation with Hunyuan-MT and HY-MT1.5 models on your own computer.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>No translation model yet. Choose a model directory (with config.json, the weights and the tokenizer).</source>
        <translation>No translation model yet. Choose a model directory (with config.json, the weights and the tokenizer).</translation>
    </message>
    <message numerus="yes">
        <source>%n characters</source>
        <translation>
            <numerusform>%n character</numerusform>
            <numerusform>%n characters</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 ms to first token · %2 tokens/s</source>
        <translation>%1 ms to first token · %2 tokens/s</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>Error: %1</translation>
    </message>
    <message>
        <source>Translation copied</source>
        <translation>Translation copied</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Model: %1</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>Loading the model…</translation>
    </message>
    <message>
        <source>The model could not be loaded</source>
        <translation>The model could not be loaded</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>The model could not be loaded: %1</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>No model loaded</translation>
    </message>
    <message>
        <source>Translating…</source>
        <translation>Translating…</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>Ready</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::SettingsDialog</name>
    <message>
        <source>tiktoken tokenizer</source>
        <translation>tiktoken tokenizer</translation>
    </message>
    <message>
        <source>tokenizer.json tokenizer</source>
        <translation>tokenizer.json tokenizer</translation>
    </message>
    <message>
        <source>SentencePiece tokenizer</source>
        <translation>SentencePiece tokenizer</translation>
    </message>
    <message>
        <source>%1 B parameters</source>
        <translation>%1 B parameters</translation>
    </message>
    <message>
        <source>%1 M parameters</source>
        <translation>%1 M parameters</translation>
    </message>
    <message>
        <source>CPU (fp32)</source>
        <translation>CPU (fp32)</translation>
    </message>
    <message>
        <source>The memory each precision tier needs for this model, with the context and batch above.</source>
        <translation>The memory each precision tier needs for this model, with the context and batch above.</translation>
    </message>
    <message>
        <source>GPU engine not available in this build: the CPU engine runs the model in fp32. The GPU rows show what each tier would need.</source>
        <translation>GPU engine not available in this build: the CPU engine runs the model in fp32. The GPU rows show what each tier would need.</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>System language</translation>
    </message>
    <message>
        <source>Choose a model directory</source>
        <translation>Choose a model directory</translation>
    </message>
    <message>
        <source>No model chosen.</source>
        <translation>No model chosen.</translation>
    </message>
    <message>
        <source>No model chosen: the bundled demo model is used.</source>
        <translation>No model chosen: the bundled demo model is used.</translation>
    </message>
    <message>
        <source>fp32 (CPU)</source>
        <translation>fp32 (CPU)</translation>
    </message>
    <message>
        <source>%1 (GPU)</source>
        <translation>%1 (GPU)</translation>
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
        <translation>fp32 (CPU)</translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation>Loading the model</translation>
    </message>
    <message>
        <source>Unknown target language &quot;%1&quot;.</source>
        <translation>Unknown target language &quot;%1&quot;.</translation>
    </message>
</context>
</TS>
