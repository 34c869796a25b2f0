"""The translation prompt and chat template of HY-MT1.5, as mtdesk's engine builds them.

Mirrors engine/translate/prompt.cpp (build_translation_prompt, PromptStyle::HyMt15, plain
translation) and the Hunyuan chat template (engine/tokenizer/chat_template.h): training,
evaluation and the engine must build exactly the same token sequence.
"""

from __future__ import annotations

# code -> (English name, Chinese name); the table of engine/translate/languages.cpp.
LANGUAGES = {
    "zh": ("Chinese", "中文"),
    "en": ("English", "英语"),
    "fr": ("French", "法语"),
    "pt": ("Portuguese", "葡萄牙语"),
    "es": ("Spanish", "西班牙语"),
    "ja": ("Japanese", "日语"),
    "tr": ("Turkish", "土耳其语"),
    "ru": ("Russian", "俄语"),
    "ar": ("Arabic", "阿拉伯语"),
    "ko": ("Korean", "韩语"),
    "th": ("Thai", "泰语"),
    "it": ("Italian", "意大利语"),
    "de": ("German", "德语"),
    "vi": ("Vietnamese", "越南语"),
    "ms": ("Malay", "马来语"),
    "id": ("Indonesian", "印尼语"),
    "tl": ("Filipino", "菲律宾语"),
    "hi": ("Hindi", "印地语"),
    "zh-Hant": ("Traditional Chinese", "繁体中文"),
    "pl": ("Polish", "波兰语"),
    "cs": ("Czech", "捷克语"),
    "nl": ("Dutch", "荷兰语"),
    "km": ("Khmer", "高棉语"),
    "my": ("Burmese", "缅甸语"),
    "fa": ("Persian", "波斯语"),
    "gu": ("Gujarati", "古吉拉特语"),
    "ur": ("Urdu", "乌尔都语"),
    "te": ("Telugu", "泰卢固语"),
    "mr": ("Marathi", "马拉地语"),
    "he": ("Hebrew", "希伯来语"),
    "bn": ("Bengali", "孟加拉语"),
    "ta": ("Tamil", "泰米尔语"),
    "uk": ("Ukrainian", "乌克兰语"),
    "bo": ("Tibetan", "藏语"),
    "kk": ("Kazakh", "哈萨克语"),
    "mn": ("Mongolian", "蒙古语"),
    "ug": ("Uyghur", "维吾尔语"),
    "yue": ("Cantonese", "粤语"),
}
CHINESE = {"zh", "zh-Hant", "yue"}

# The special tokens of the Hunyuan chat template.
BOS = "<|startoftext|>"      # starts a turn
USER_END = "<|extra_0|>"     # ends the user turn: the assistant's answer follows
SYSTEM_END = "<|extra_4|>"   # ends a system turn
EOS = "<|eos|>"              # ends the answer
PAD = "<|pad|>"
SPECIAL_TOKENS = [BOS, USER_END, SYSTEM_END, EOS, PAD]

# tokenizer_config.json's chat_template: the published Hunyuan-MT / HY-MT1.5 template, verbatim.
CHAT_TEMPLATE = (
    "{% set ns = namespace(has_head=true) %}{% set loop_messages = messages %}"
    "{% for message in loop_messages %}{% set content = message['content'] %}"
    "{% if loop.index0 == 0 %}{% if content == '' %}{% set ns.has_head = false %}"
    "{% elif message['role'] == 'system' %}"
    "{% set content = '<|startoftext|>' + content + '<|extra_4|>' %}{% endif %}{% endif %}"
    "{% if message['role'] == 'user' %}{% if loop.index0 == 1 and ns.has_head %}"
    "{% set content = content + '<|extra_0|>' %}"
    "{% else %}{% set content = '<|startoftext|>' + content + '<|extra_0|>' %}{% endif %}"
    "{% elif message['role'] == 'assistant' %}{% set content = content + '<|eos|>' %}{% endif %}"
    "{{ content }}{% endfor %}"
)


def translation_prompt(source_lang: str, target_lang: str, text: str) -> str:
    """The HY-MT1.5 user message for translating `text` from source_lang into target_lang."""
    english_name, chinese_name = LANGUAGES[target_lang]
    if source_lang in CHINESE or target_lang in CHINESE:
        return f"将以下文本翻译为{chinese_name}，注意只需要输出翻译后的结果，不要额外解释：\n\n{text}"
    return f"Translate the following segment into {english_name}, without additional explanation.\n\n{text}"


class PromptEncoder:
    """Token ids of prompts and training examples for a SentencePiece model whose special
    tokens are control symbols (never produced from text, so user text that happens to contain
    "<|eos|>" stays text)."""

    def __init__(self, sp):
        self.sp = sp
        self.ids = {t: sp.piece_to_id(t) for t in SPECIAL_TOKENS}
        for t, i in self.ids.items():
            if sp.id_to_piece(i) != t:
                raise ValueError(f"the tokenizer has no {t} token")
        self.bos, self.user_end, self.eos, self.pad = (
            self.ids[BOS], self.ids[USER_END], self.ids[EOS], self.ids[PAD])

    def prompt_ids(self, user_messages: list[str], num_threads: int = 0) -> list[list[int]]:
        """[<|startoftext|>] + encode(user) + [<|extra_0|>]: ready for the answer."""
        enc = self.sp.encode(user_messages, num_threads=num_threads) if user_messages else []
        return [[self.bos] + e + [self.user_end] for e in enc]

    def answer_ids(self, answers: list[str], num_threads: int = 0) -> list[list[int]]:
        """encode(answer) + [<|eos|>]."""
        enc = self.sp.encode(answers, num_threads=num_threads) if answers else []
        return [e + [self.eos] for e in enc]

    def decode(self, ids: list[int]) -> str:
        """Text of generated ids, up to the first <|eos|> (control tokens give no text)."""
        if self.eos in ids:
            ids = ids[: ids.index(self.eos)]
        return self.sp.decode(ids)


def render_chat(user_message: str) -> str:
    """The chat template rendered for one user turn (text form, for checks and docs)."""
    return BOS + user_message + USER_END


if __name__ == "__main__":
    print(repr(translation_prompt("en", "zh", "Open the file")))
    print(repr(translation_prompt("zh", "en", "打开文件")))
    print(repr(translation_prompt("en", "de", "Open the file")))
    try:
        import jinja2
        t = jinja2.Environment().from_string(CHAT_TEMPLATE)
        msg = translation_prompt("en", "de", "Open the file")
        assert t.render(messages=[{"role": "user", "content": msg}]) == render_chat(msg)
        print("chat template: ok")
    except ImportError:
        pass
