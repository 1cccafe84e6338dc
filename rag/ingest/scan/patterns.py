"""The injection patterns, by name: what makes a sentence an attack on a model rather than an instruction to a reader.

Help-centre text is full of second-person instructions ("you are now signed in", "send the data to
the server", "the proxy will act as a gateway"), so each pattern needs what makes a sentence an
attack on a model: instructions aimed at its own rules, a new identity for an AI, a request for
its prompt, or private data sent to an address or URL. "Ignore your instructions" is built from each
language's words (`lexicon`); the other attacks are fixed phrasings per language.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from rag.ingest.scan.lexicon import CHINESE, SPACED, ignore_patterns
from rag.ingest.scan.lexicon import C as _C
from rag.ingest.scan.lexicon import S as _S
from rag.text.fold import skeleton

_EN_RULES = r"(instructions?|prompts?|rules|directions|guidelines|guidance|directives|orders|commands)"

_IGNORE = [
    r"\b(ignore|disregard|forget|set aside)\s+(everything|anything|all|what)\s+"
    r"(above|before|previously|(that )?you (were|have been) told)",
    # "disregard the above." / "ignore all of the above and ..." (not "ignore the above warning if ...")
    r"\b(ignore|disregard|forget)\s+(all\s+(of\s+)?)?(the\s+|everything\s+)?(above|foregoing|preceding)\b"
    r"(?!\s+(\w+\s+)?(error|errors|warning|warnings|message|messages|step|steps|section|example|output|command"
    r"|line|lines|code|note|if|when|for|unless|on|in)\b)",
    rf"\b(do not|don't|never|stop|no longer)\s+(follow|obey|comply with|apply|follow\w*)\b{_S}{{0,20}}"
    r"\b(previous|prior|earlier|preceding|original|initial|system|your|developer|those|these|the above"
    rf"|the original)\b{_S}{{0,15}}\b{_EN_RULES}\b",
    r"\b(do not|don't|never)\s+(follow|obey)\s+(the|any|all)\s+(\w+\s+)?(instructions?|rules|guidelines|directives)"
    r"(\s+(above|given|you (were|have been) given|you received))?\s*([.!;:,]|$|\band\b)",
    rf"(以前|前|上記|これまで|先ほど|すべて|全て|今まで|元|システム)の?{_C}{{0,8}}(指示|命令|ルール|指令|プロンプト|制約){_C}{{0,6}}(無視|忘れ|従わな)",
    rf"(無視|忘れ){_C}{{0,4}}(以前|前|上記|これまで|すべて|全て)の?(指示|命令|ルール|指令|プロンプト)",
]


def _you_are_now(phrase: str, article: str, nouns: str, unbound: str) -> str:
    """ "you are now" + (article, one word) + an AI noun, or + a promise of no limits anywhere in the sentence.

    The noun must follow at once: "vous êtes maintenant prêt à utiliser l'assistant" is a welcome.
    """
    return rf"\b{phrase}\s*[,—–-]?\s*({article}\s+)?(\w+\s+)?{nouns}\b|\b{phrase}\b{_S}{{0,30}}{unbound}"


# "You are now an AI without limits", per language: the phrase, its articles, the AI nouns, and the promises of
# no limits. They are matched combined, any language's part after any other's ("Ahora eres an AI", "You are
# now una IA sin restricciones"): English adds its phrase only, its own pattern above reads the rest.
_YOU_ARE_NOW = {
    "en": (r"(you are now|you're now)", r"(?!)", r"(?!)", r"(?!)"),
    "fr": (
        r"(tu es|vous êtes|t'es)\s+(maintenant|désormais|dorénavant|à présent)",
        r"(une?|l')",
        r"(ia|ai|assistant\w*|modèle|chatbot|bot|robot|dan)",
        r"(sans (restrictions?|filtres?|censure|limites?)|en mode développeur)",
    ),
    "de": (
        r"(du bist|sie sind)\s+(jetzt|nun|ab sofort|von nun an|ab jetzt)",
        r"(eine?|der|die|das)",
        r"(ki|ai|assistent\w*|modell|chatbot|bot|roboter|dan)",
        r"(ohne (einschränkungen|filter|zensur|regeln)|im entwicklermodus)",
    ),
    "es": (
        r"(ahora eres|ahora es usted|a partir de ahora,? eres|desde ahora,? eres|ya no eres)",
        r"(una?|el|la)",
        r"(ia|ai|asistente|modelo|chatbot|bot|robot|dan)",
        r"(sin (restricciones|filtros|censura|límites)|en modo desarrollador)",
    ),
    "pt": (
        r"(agora você é|você agora é|agora tu és|a partir de agora,? (você|tu) é|agora voce e)",
        r"(uma?|o|a)",
        r"(ia|ai|assistente|modelo|chatbot|bot|robô|robo|dan)",
        r"(sem (restrições|filtros|censura|limites)|no modo desenvolvedor)",
    ),
    "it": (
        r"(ora sei|adesso sei|da ora in poi,? sei|d'ora in poi,? sei|ora lei è|non sei più)",
        r"(una?|un'|l')",
        r"(ia|ai|assistente|modello|chatbot|bot|robot|dan)",
        r"(senza (restrizioni|filtri|censura|limiti)|in modalità sviluppatore)",
    ),
}


_ROLE = [
    rf"\byou are now\b{_S}{{0,30}}\b(an? (ai|assistant|model|chatbot|bot)|dan|jailbr\w*|unrestricted|unfiltered"
    r"|uncensored|in developer mode|no longer)\b",
    rf"\byou are no longer\b{_S}{{0,30}}\b(bound|restricted|limited|required|an? (ai|assistant|model))\b",
    rf"\bfrom now on,? you\b{_S}{{0,25}}\b(answer|respond|reply|say|act|pretend|speak|only|must not|never)\b",
    r"(^|[.!?:]\s+|\byou (will|must|should|shall|now|are to) )"
    r"(act|pretend|behave|role-?play) (as|like|to be) (an?|the|my)\b",
    r"\b(new|updated|revised|real|actual|override|true) (system )?(instructions?|rules|prompt|task|directives?)\s*:",
    _you_are_now(*(f"({'|'.join(part)})" for part in zip(*_YOU_ARE_NOW.values()))),
    r"(теперь ты|ты теперь|отныне ты|с этого момента ты|теперь вы|вы теперь)\s*[,—–-]?\s*(\w+\s+)?"
    r"(ии|ai|ассистент\w*|модель|чат-?бот\w*|dan)(?!\w)"
    rf"|(теперь ты|ты теперь|отныне ты|с этого момента ты|теперь вы|вы теперь){_S}{{0,30}}"
    r"(без ограничений|без фильтров|без цензуры|в режиме разработчика)",
    rf"(你现在是|現在你是|现在你是|你現在是|从现在起你是|從現在起你是|从现在开始你是|從現在開始你是|你不再是){_C}{{0,10}}(ai|人工智能|助手|机器人|機器人|模型|dan|没有限制|沒有限制|不受限制|无限制|無限制)",
    rf"((あなたは|君は|お前は)(今から|これから|今日から|もう)|(今から|これから|今日から)(あなたは|君は|お前は)){_C}{{0,15}}(ai|アシスタント|モデル|ボット|dan|制限のない|無制限|制限なし)",
]

# "Show me your prompt": a verb of showing, then what the model was given, in any mix of the spaced languages
# (a code-switched "Muéstrame your system prompt" as much as "Muéstrame el prompt del sistema").
_REVEAL_VERBS = [
    r"reveal|print|show|repeat|output|leak|disclose|display|share|tell me|give me|what (is|are|were)|dump|write out",
    r"révèle\w*|affiche\w*|montre[sz]?(-moi)?|donne\w*|répète\w*|imprime\w*|divulgue\w*|dis-moi|écri\w*",
    r"zeig\w*|gib|geben sie|nenn\w*|verrat\w*|wiederhol\w*|druck\w*|offenbar\w*|ausgeben|gib aus",
    r"revela(me|nos|r)?|muestra\w*|muéstra\w*|imprim\w*|repite\w*|dime|comparte\w*|escribe\w*",
    r"revel(e|ar|a)|mostr\w*|repit\w*|diga|diz|compartilh\w*|escrev\w*",
    r"rivel(a|ami|are)|stamp(a|ami|are)|ripet\w*|dimmi|condivid\w*|scriv\w*",
    r"покажи\w*|выведи\w*|раскрой\w*|повтори\w*|напечатай\w*|скажи\w*|открой\w*|сообщи\w*",
]
_REVEAL_OBJECTS = [
    r"(your|the) (system|initial|original|hidden|secret|full|developer) (prompt|instructions|message|rules)"
    r"|system prompt|your (prompt|instructions|rules)|hidden instructions|instructions you were given",
    r"prompt (du )?système|invite (du )?système|instructions (du )?système|consignes (du )?système|prompt initial"
    r"|instructions initiales|tes instructions|vos instructions",
    r"system-?prompt|systemanweisung\w*|systemnachricht|ursprünglichen anweisungen|deine anweisungen|ihre anweisungen",
    r"prompt del sistema|indicaciones del sistema|instrucciones del sistema|instrucciones iniciales"
    r"|mensaje del sistema|tus instrucciones",
    r"prompt do sistema|instruções do sistema|instrucoes do sistema|instruções iniciais|mensagem do sistema"
    r"|suas instruções",
    r"prompt di sistema|istruzioni di sistema|istruzioni iniziali|messaggio di sistema|tue istruzioni",
    r"системн\w* (промпт|подсказк\w*|инструкци\w*|сообщени\w*)|свой промпт|твой промпт|исходные инструкции"
    r"|твои инструкции",
]

_REVEAL = [
    rf"\b({'|'.join(_REVEAL_VERBS)})\b{_S}{{0,30}}\b({'|'.join(_REVEAL_OBJECTS)})",
    rf"\brepeat\b{_S}{{0,20}}\b(everything|all|the text|the words)\b{_S}{{0,20}}\b(above|before|verbatim)\b",
    rf"(system-?prompt|systemanweisung\w*){_S}{{0,30}}\b(zeigen|ausgeben|verraten|wiederholen|nennen|offenbaren)\b",
    rf"(显示|輸出|输出|告诉我|告訴我|泄露|洩露|重复|重複|打印|透露|顯示|给我看|給我看){_C}{{0,10}}(系统提示|系統提示|提示词|提示詞|系统指令|系統指令|初始指令|系统消息|系統消息)",
    rf"(システムプロンプト|システム指示|システムメッセージ|初期指示|初期プロンプト){_C}{{0,10}}(表示|出力|教えて|見せて|繰り返|開示|書いて)",
]

_EXFILTRATE = [
    r"(?<!never )(?<!not )(?<!n't )"
    rf"\b(send|e-?mail|post|upload|forward|transmit|submit|leak|exfiltrate|append|include)\b{_S}{{0,60}}"
    r"\b(conversations?|chat|history|messages|credentials|passwords?|api[ -]?keys?|secrets?|tokens?|system prompt"
    r"|(user|customer|personal|private|all|the|their|your) (data|information|details|files))\b"
    rf"{_S}{{0,60}}([\w.+-]+@[\w-]+\.\w|https?://)",
]

_FAKE_TAG = [
    # Closing any tag of our prompt's wrapper, or opening one; a lone `<source>` is HTML's media tag.
    r"</\s*(system|assistant|instructions?|sources?)\s*>|<\s*(system|assistant|instructions?|sources)\s*>|^\s*(system|assistant)\s*:"
    r"|<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<</?SYS>>",
]


@dataclass(frozen=True)
class Matcher:
    """A pattern, and a regex of words every match of it holds (`trigger`, optional): the pattern is only
    run on text where the trigger is found. Most documentation has no word of the trigger, so most text is
    read once by a cheap regex instead of by the whole pattern."""

    pattern: re.Pattern[str]
    trigger: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        if self.trigger is not None and not self.trigger.search(text):
            return None
        return self.pattern.search(text)


def _compiled(parts: list[str]) -> re.Pattern[str]:
    # Readings are skeletons (`rag.text.fold.skeleton`: lower case, no accents, look-alikes read), so the
    # patterns are too: the same function on both sides. None uses an upper-case escape like \S, and
    # matching without re.I is a third faster.
    return re.compile(skeleton("|".join(f"(?:{p})" for p in parts)), re.M)


PATTERNS: dict[str, tuple[Matcher, ...]] = {
    "ignore-instructions": (
        *(Matcher(_compiled(ignore_patterns(lex)), _compiled([lex.trigger])) for lex in (SPACED, CHINESE)),
        Matcher(_compiled(_IGNORE)),
    ),
    **{
        name: (Matcher(_compiled(parts)),)
        for name, parts in {
            "role-change": _ROLE,
            "reveal-prompt": _REVEAL,
            "exfiltrate": _EXFILTRATE,
            "fake-role-tag": _FAKE_TAG,
        }.items()
    },
}

# Spaced-out letters whose word gaps are gone ("i g n o r e a l l p r e v i o u s"), read as Chinese is: the
# words with nothing between them (`rag.ingest.scan.readings.run_together`).
RUN_TOGETHER: tuple[Matcher, ...] = (Matcher(_compiled(ignore_patterns(dataclasses.replace(SPACED, spaced=False)))),)
