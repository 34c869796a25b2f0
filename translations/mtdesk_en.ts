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
        <source>The same seed gives the same translation; Random draws a new one each time.</source>
        <translation>The same seed gives the same translation; Random draws a new one each time.</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>Random</translation>
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
    <message>
        <source>General</source>
        <translation>General</translation>
    </message>
    <message>
        <source>Glossary</source>
        <translation>Glossary</translation>
    </message>
    <message>
        <source>Terms found in the source text (ignoring case, whole words) are given to the model with their required translation (HY-MT1.5&apos;s terminology prompt). A translation that lacks a term is noted in the status bar. An empty language applies to every language.</source>
        <translation>Terms found in the source text (ignoring case, whole words) are given to the model with their required translation (HY-MT1.5&apos;s terminology prompt). A translation that lacks a term is noted in the status bar. An empty language applies to every language.</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Add</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Remove</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>Import…</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Export…</translation>
    </message>
    <message>
        <source>Casing guard: brand names and acronyms keep the source&apos;s casing</source>
        <translation>Casing guard: brand names and acronyms keep the source&apos;s casing</translation>
    </message>
    <message>
        <source>Words of the source such as iPhone, GitHub, macOS or NASA keep their exact casing where they appear in the translation.</source>
        <translation>Words of the source such as iPhone, GitHub, macOS or NASA keep their exact casing where they appear in the translation.</translation>
    </message>
    <message>
        <source>Translate with</source>
        <translation>Translate with</translation>
    </message>
    <message>
        <source>This computer (GPU / CPU)</source>
        <translation>This computer (GPU / CPU)</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>Servers</translation>
    </message>
    <message>
        <source>OpenAI-compatible servers (vLLM, SGLang, TensorRT-LLM, mtdesk serve) translate instead of this computer.</source>
        <translation>OpenAI-compatible servers (vLLM, SGLang, TensorRT-LLM, mtdesk serve) translate instead of this computer.</translation>
    </message>
    <message>
        <source>URLs (one per line):</source>
        <translation>URLs (one per line):</translation>
    </message>
    <message>
        <source>http://gpu1:8000
http://gpu2:8000</source>
        <translation>http://gpu1:8000
http://gpu2:8000</translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation>Model name:</translation>
    </message>
    <message>
        <source>The first model the servers list</source>
        <translation>The first model the servers list</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API key:</translation>
    </message>
    <message>
        <source>None</source>
        <translation>None</translation>
    </message>
    <message>
        <source>Requests in flight per server:</source>
        <translation>Requests in flight per server:</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>Test connection</translation>
    </message>
    <message>
        <source>CPU precision tier:</source>
        <translation>CPU precision tier:</translation>
    </message>
    <message>
        <source>GPU KV cache (tokens, all requests):</source>
        <translation>GPU KV cache (tokens, all requests):</translation>
    </message>
    <message>
        <source>GPU maximum batch:</source>
        <translation>GPU maximum batch:</translation>
    </message>
    <message>
        <source>GPU INT8 KV cache (half the memory per token)</source>
        <translation>GPU INT8 KV cache (half the memory per token)</translation>
    </message>
</context>
<context>
    <name>mtdesk::app::JobQueue</name>
    <message>
        <source>Unknown target language &quot;%1&quot;.</source>
        <translation>Unknown target language &quot;%1&quot;.</translation>
    </message>
    <message>
        <source>Unknown source language &quot;%1&quot;.</source>
        <translation>Unknown source language &quot;%1&quot;.</translation>
    </message>
    <message>
        <source>The source and the target language are the same (%1).</source>
        <translation>The source and the target language are the same (%1).</translation>
    </message>
    <message>
        <source>%1: a segment could not be translated: %2</source>
        <translation>%1: a segment could not be translated: %2</translation>
    </message>
    <message>
        <source>%1: the translation engine stopped (retry to go on)</source>
        <translation>%1: the translation engine stopped (retry to go on)</translation>
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
        <translation>%1 (detected) → %2</translation>
    </message>
    <message>
        <source>Detect → %1</source>
        <translation>Detect → %1</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>Queued</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>Reading…</translation>
    </message>
    <message>
        <source>Writing…</source>
        <translation>Writing…</translation>
    </message>
    <message>
        <source>Translating</source>
        <translation>Translating</translation>
    </message>
    <message>
        <source>Done → %1</source>
        <translation>Done → %1</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>Failed: %1</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>Cancelled</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>Queued (waiting for the model)</source>
        <translation>Queued (waiting for the model)</translation>
    </message>
    <message>
        <source>%1
→ %2</source>
        <translation>%1
→ %2</translation>
    </message>
    <message>
        <source>Estimated from the rate so far</source>
        <translation>Estimated from the rate so far</translation>
    </message>
    <message>
        <source>File</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>Languages</translation>
    </message>
    <message>
        <source>Segments</source>
        <translation>Segments</translation>
    </message>
    <message>
        <source>Elapsed</source>
        <translation>Elapsed</translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation>Remaining</translation>
    </message>
    <message>
        <source>State</source>
        <translation>State</translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: expect a poor translation.</source>
        <translation>This model was trained to translate between English and %1 only: expect a poor translation.</translation>
    </message>
    <message>
        <source>%1 (in %2)</source>
        <translation>%1 (in %2)</translation>
    </message>
    <message numerus="yes">
        <source>, %n segments may have lost placeholders or markup</source>
        <translation>
            <numerusform>, %n segment may have lost placeholders or markup</numerusform>
            <numerusform>, %n segments may have lost placeholders or markup</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n entries marked fuzzy for review</source>
        <translation>
            <numerusform>, %n entry marked fuzzy for review</numerusform>
            <numerusform>, %n entries marked fuzzy for review</numerusform>
        </translation>
    </message>
    <message>
        <source>These segments&apos; placeholders or markup differ from the source; check them in the translation:</source>
        <translation>These segments&apos; placeholders or markup differ from the source; check them in the translation:</translation>
    </message>
    <message>
        <source>lost %1</source>
        <translation>lost %1</translation>
    </message>
    <message>
        <source>added %1</source>
        <translation>added %1</translation>
    </message>
    <message>
        <source>segment %1: %2</source>
        <translation>segment %1: %2</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>and %n more</numerusform>
            <numerusform>and %n more</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n entries are marked fuzzy with the source text kept: the translation was empty, or changed placeholders or line breaks.</source>
        <translation>
            <numerusform>%n entry is marked fuzzy with the source text kept: the translation was empty, or changed placeholders or line breaks.</numerusform>
            <numerusform>%n entries are marked fuzzy with the source text kept: the translation was empty, or changed placeholders or line breaks.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::DocumentQueueView</name>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Retry</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>Open folder</translation>
    </message>
    <message>
        <source>Remove from the queue</source>
        <translation>Remove from the queue</translation>
    </message>
    <message>
        <source>Drop documents or folders on the window, or use “Add files…”. Each is translated into a new file next to it.</source>
        <translation>Drop documents or folders on the window, or use “Add files…”. Each is translated into a new file next to it.</translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation>Add files…</translation>
    </message>
    <message>
        <source>Choose documents to translate into the target language</source>
        <translation>Choose documents to translate into the target language</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>Add folder…</translation>
    </message>
    <message>
        <source>Translate every supported document in a folder and its subfolders</source>
        <translation>Translate every supported document in a folder and its subfolders</translation>
    </message>
    <message>
        <source>Clear finished</source>
        <translation>Clear finished</translation>
    </message>
    <message>
        <source>Remove the done, failed and cancelled rows (not their files)</source>
        <translation>Remove the done, failed and cancelled rows (not their files)</translation>
    </message>
    <message>
        <source>Elapsed</source>
        <translation>Elapsed</translation>
    </message>
    <message>
        <source>Remaining</source>
        <translation>Remaining</translation>
    </message>
    <message>
        <source>Detect → %1</source>
        <translation>Detect → %1</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>New documents: %1</source>
        <translation>New documents: %1</translation>
    </message>
    <message>
        <source>Translate documents</source>
        <translation>Translate documents</translation>
    </message>
    <message>
        <source>Translate a folder</source>
        <translation>Translate a folder</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>Documents</translation>
    </message>
    <message>
        <source>All files</source>
        <translation>All files</translation>
    </message>
    <message>
        <source>Could not open %1: no file manager answered</source>
        <translation>Could not open %1: no file manager answered</translation>
    </message>
</context>
<context>
    <name>mtdesk::ui::GlossaryModel</name>
    <message>
        <source>Any language</source>
        <translation>Any language</translation>
    </message>
    <message>
        <source>Source language</source>
        <translation>Source language</translation>
    </message>
    <message>
        <source>Target language</source>
        <translation>Target language</translation>
    </message>
    <message>
        <source>Source term</source>
        <translation>Source term</translation>
    </message>
    <message>
        <source>Target term</source>
        <translation>Target term</translation>
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
    <message>
        <source>Servers</source>
        <translation>Servers</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>Latency</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>Throughput</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>In flight</translation>
    </message>
    <message numerus="yes">
        <source>%n request(s)</source>
        <translation>
            <numerusform>%n request</numerusform>
            <numerusform>%n requests</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 of %2 answering</source>
        <translation>%1 of %2 answering</translation>
    </message>
    <message numerus="yes">
        <source> · %n retried</source>
        <translation>
            <numerusform> · %n retried</numerusform>
            <numerusform> · %n retried</numerusform>
        </translation>
    </message>
    <message>
        <source>p50 %1 · p95 %2 ms</source>
        <translation>p50 %1 · p95 %2 ms</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
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
        <source>La&amp;rger text</source>
        <translation>La&amp;rger text</translation>
    </message>
    <message>
        <source>&amp;Smaller text</source>
        <translation>&amp;Smaller text</translation>
    </message>
    <message>
        <source>Default text si&amp;ze</source>
        <translation>Default text si&amp;ze</translation>
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
    <message>
        <source>Documents</source>
        <translation>Documents</translation>
    </message>
    <message>
        <source>Translate &amp;documents…</source>
        <translation>Translate &amp;documents…</translation>
    </message>
    <message>
        <source>&amp;Documents</source>
        <translation>&amp;Documents</translation>
    </message>
    <message numerus="yes">
        <source>%n documents queued</source>
        <translation>
            <numerusform>%n document queued</numerusform>
            <numerusform>%n documents queued</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing new to translate there: no supported documents, or already queued</source>
        <translation>Nothing new to translate there: no supported documents, or already queued</translation>
    </message>
    <message>
        <source>Glossary terms not in the translation: %1</source>
        <translation>Glossary terms not in the translation: %1</translation>
    </message>
    <message>
        <source>Connecting to the servers…</source>
        <translation>Connecting to the servers…</translation>
    </message>
    <message>
        <source>The servers cannot be used</source>
        <translation>The servers cannot be used</translation>
    </message>
    <message>
        <source>The servers cannot be used: %1</source>
        <translation>The servers cannot be used: %1</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: %2 → %3 is outside that, so expect a poor translation.</source>
        <translation>This model was trained to translate between English and %1 only: %2 → %3 is outside that, so expect a poor translation.</translation>
    </message>
    <message>
        <source>This model was trained to translate between English and %1 only: %2 is outside that, so expect a poor translation.</source>
        <translation>This model was trained to translate between English and %1 only: %2 is outside that, so expect a poor translation.</translation>
    </message>
    <message numerus="yes">
        <source>Translating documents (%n to go)…</source>
        <translation>
            <numerusform>Translating documents (%n to go)…</numerusform>
            <numerusform>Translating documents (%n to go)…</numerusform>
        </translation>
    </message>
    <message>
        <source>The source and the target language are both %1, so there is nothing to translate. Choose another target language.</source>
        <translation>The source and the target language are both %1, so there is nothing to translate. Choose another target language.</translation>
    </message>
    <message>
        <source>The text is already in %1 (detected), so it is shown unchanged. Choose its language as the source if it was detected wrongly.</source>
        <translation>The text is already in %1 (detected), so it is shown unchanged. Choose its language as the source if it was detected wrongly.</translation>
    </message>
    <message>
        <source>Unchanged lines, as translated before</source>
        <translation>Unchanged lines, as translated before</translation>
    </message>
    <message>
        <source>Servers ready: model %1</source>
        <translation>Servers ready: model %1</translation>
    </message>
    <message>
        <source>Model %1 loaded</source>
        <translation>Model %1 loaded</translation>
    </message>
    <message>
        <source>Choose a model directory</source>
        <translation>Choose a model directory</translation>
    </message>
    <message>
        <source>Not a usable model</source>
        <translation>Not a usable model</translation>
    </message>
    <message>
        <source>%1 cannot be used as the model directory.</source>
        <translation>%1 cannot be used as the model directory.</translation>
    </message>
    <message>
        <source>Server settings…</source>
        <translation>Server settings…</translation>
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
        <source>%1 (GPU)</source>
        <translation>%1 (GPU)</translation>
    </message>
    <message>
        <source>Automatic (CPU: no GPU found)</source>
        <translation>Automatic (CPU: no GPU found)</translation>
    </message>
    <message>
        <source>Automatic (the first GPU)</source>
        <translation>Automatic (the first GPU)</translation>
    </message>
    <message>
        <source>GPU %1: %2 (%3 free of %4)</source>
        <translation>GPU %1: %2 (%3 free of %4)</translation>
    </message>
    <message>
        <source>The memory each precision tier needs for this model, with the context and batch above, next to the chosen GPU&apos;s free memory.</source>
        <translation>The memory each precision tier needs for this model, with the context and batch above, next to the chosen GPU&apos;s free memory.</translation>
    </message>
    <message>
        <source>%1 — does not fit</source>
        <translation>%1 — does not fit</translation>
    </message>
    <message>
        <source>Row %1 has no source term.</source>
        <translation>Row %1 has no source term.</translation>
    </message>
    <message>
        <source>Row %1 has no target term.</source>
        <translation>Row %1 has no target term.</translation>
    </message>
    <message>
        <source>%1: cannot be read: %2</source>
        <translation>%1: cannot be read: %2</translation>
    </message>
    <message numerus="yes">
        <source>%n new term(s) from %1.</source>
        <translation>
            <numerusform>%n new term from %1.</numerusform>
            <numerusform>%n new terms from %1.</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: cannot be written: %2</source>
        <translation>%1: cannot be written: %2</translation>
    </message>
    <message numerus="yes">
        <source>%n term(s) written to %1.</source>
        <translation>
            <numerusform>%n term written to %1.</numerusform>
            <numerusform>%n terms written to %1.</numerusform>
        </translation>
    </message>
    <message>
        <source>Import a glossary</source>
        <translation>Import a glossary</translation>
    </message>
    <message>
        <source>Export the glossary</source>
        <translation>Export the glossary</translation>
    </message>
    <message>
        <source>Enter at least one server URL.</source>
        <translation>Enter at least one server URL.</translation>
    </message>
    <message numerus="yes">
        <source>Asking %n server(s)…</source>
        <translation>
            <numerusform>Asking %n server…</numerusform>
            <numerusform>Asking %n servers…</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2 ms, models: %3</source>
        <translation>%1: %2 ms, models: %3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Glossaries</source>
        <translation>Glossaries</translation>
    </message>
    <message>
        <source>All files</source>
        <translation>All files</translation>
    </message>
    <message>
        <source>Tab-separated values</source>
        <translation>Tab-separated values</translation>
    </message>
    <message>
        <source>Comma-separated values</source>
        <translation>Comma-separated values</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling</source>
        <translation>The model&apos;s recommended sampling</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling (greedy)</source>
        <translation>The model&apos;s recommended sampling (greedy)</translation>
    </message>
    <message>
        <source>The model&apos;s recommended sampling (temperature %1, top-k %2, top-p %3, repetition penalty %4)</source>
        <translation>The model&apos;s recommended sampling (temperature %1, top-k %2, top-p %3, repetition penalty %4)</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>No GPU found (or this build has no CUDA engine): the CPU engine runs the model in the CPU tier chosen. The GPU rows show what each tier would need.</source>
        <translation>No GPU found (or this build has no CUDA engine): the CPU engine runs the model in the CPU tier chosen. The GPU rows show what each tier would need.</translation>
    </message>
    <message>
        <source>%1 (CPU)</source>
        <translation>%1 (CPU)</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Automatic</translation>
    </message>
    <message>
        <source>fp32 when it fits in memory, else int8, else int4</source>
        <translation>fp32 when it fits in memory, else int8, else int4</translation>
    </message>
    <message>
        <source>Automatic: fp32 when it fits in memory, else int8, else int4</source>
        <translation>Automatic: fp32 when it fits in memory, else int8, else int4</translation>
    </message>
    <message>
        <source>%1
In use for this session only (given on the command line).</source>
        <translation>%1
In use for this session only (given on the command line).</translation>
    </message>
    <message>
        <source>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s %1 positions.</source>
        <translation>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s %1 positions.</translation>
    </message>
    <message>
        <source>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s own positions.</source>
        <translation>Only the GPU engine uses this. The CPU engine translates one request at a time with room for the model&apos;s own positions.</translation>
    </message>
    <message>
        <source>More than a batch can use: %1 requests × the model&apos;s %2 positions = %3 tokens. The rest is memory taken for nothing.</source>
        <translation>More than a batch can use: %1 requests × the model&apos;s %2 positions = %3 tokens. The rest is memory taken for nothing.</translation>
    </message>
    <message>
        <source>One request holds at most the model&apos;s %1 positions; the rest serves the other requests of a batch.</source>
        <translation>One request holds at most the model&apos;s %1 positions; the rest serves the other requests of a batch.</translation>
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
    <message>
        <source>The GPU engine could not load the model (%1); using the CPU instead.</source>
        <translation>The GPU engine could not load the model (%1); using the CPU instead.</translation>
    </message>
    <message>
        <source>No server given.</source>
        <translation>No server given.</translation>
    </message>
    <message>
        <source>No server lists a model (%1).</source>
        <translation>No server lists a model (%1).</translation>
    </message>
    <message>
        <source>Connecting to the servers</source>
        <translation>Connecting to the servers</translation>
    </message>
    <message>
        <source>%1 (CPU)</source>
        <translation>%1 (CPU)</translation>
    </message>
    <message>
        <source>Not translated: %1</source>
        <translation>Not translated: %1</translation>
    </message>
    <message>
        <source>remote: not connected</source>
        <translation>remote: not connected</translation>
    </message>
    <message>
        <source>remote: %1 (not connected)</source>
        <translation>remote: %1 (not connected)</translation>
    </message>
</context>
</TS>
