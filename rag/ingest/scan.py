"""Ingest-time scan for chunks that read as instructions to a model (prompt injection).

Flagged chunks are shown on the Documents page; the owner may quarantine them, which keeps them out
of retrieval. The scan never changes text: it only labels, and quarantine stays a person's decision.

Help-centre text is full of second-person instructions ("you are now signed in", "send the data to
the server", "the proxy will act as a gateway"), so each pattern needs what makes a sentence an
attack on a model: instructions aimed at its own rules, a new identity for an AI, a request for
its prompt, or private data sent to an address or URL. A flag is a hint for a person to review,
not a verdict; the answer prompt treats every source as data whether flagged or not.

Text is matched as a reader sees it, not as it is encoded: format characters (zero-width spaces, soft
hyphens) dropped, compatibility forms (full-width letters) folded by NFKC, HTML entities decoded,
Latin look-alike Cyrillic and Greek letters read as Latin (`rag.text.fold.fold`), Markdown emphasis
inside a word removed, and line breaks read as spaces. Base64 runs that decode to text are scanned too.
Besides English, the phrasings of the same attacks in French, German, Spanish, Portuguese, Italian,
Russian, Chinese and Japanese are recognised. What it cannot catch is in the README (security).
"""

from __future__ import annotations

import base64
import binascii
import html
import re

from rag.text.fold import fold, strip_format

_S = r"[^.!?;\n]"  # within one sentence (or clause: a semicolon ends one too)
_C = r"[^。！？\n]"  # within one CJK sentence
_EN_QUALIFIER = r"(previous|prior|above|earlier|preceding|original|initial|all|any|system|your|developer)"
_EN_RULES = r"(instructions?|prompts?|rules|directions|guidelines|directives|orders|commands)"


def _lang(verbs: str, qualifiers: str, nouns: str) -> str:
    """Verb ... qualifier ... noun, or qualifier ... noun ... verb (German and Japanese put the verb last)."""
    return (
        rf"(?:\b{verbs}\b{_S}{{0,40}}\b{qualifiers}\b{_S}{{0,25}}\b{nouns}"
        rf"|\b{qualifiers}\b{_S}{{0,25}}\b{nouns}{_S}{{0,30}}\b{verbs}\b)"
    )


_IGNORE = [
    rf"\b(ignore|disregard|forget|override|bypass)\b{_S}{{0,40}}\b{_EN_QUALIFIER}\b{_S}{{0,20}}\b{_EN_RULES}\b",
    r"\b(ignore|disregard|forget)\s+(everything|anything|all)\s+"
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
    _lang(
        r"(ignore[zsr]?|ignorer|oublie[zsr]?|oublier|ne tien[st] pas compte|ne tenez pas compte"
        r"|faites abstraction|fais abstraction)",
        r"(précédent\w*|ci-dessus|antérieur\w*|initia\w*|du système|tes|vos|toutes les|tous les)",
        r"(instructions?|consignes?|directives?|règles|indications|ordres)",
    ),
    _lang(
        r"(ignorier\w*|vergiss|vergessen sie|vergiss alle|missachte\w*|übergeh\w*|verwirf|verwerfen sie)",
        r"(vorherig\w*|bisherig\w*|obig\w*|vorig\w*|alle|deine|ihre|früher\w*|vorangegangen\w*|ursprünglich\w*|system\w*)",
        r"(anweisungen|instruktionen|befehle|regeln|vorgaben|anordnungen|richtlinien)",
    ),
    _lang(
        r"(ignora\w*|olvid\w*|descarta\w*|haz caso omiso|no hagas caso|no sigas|desobedece\w*)",
        r"(anteriores|previas|de arriba|todas|tus|sus|iniciales|del sistema|originales)",
        r"(instrucciones|indicaciones|reglas|directrices|órdenes|normas)",
    ),
    _lang(
        r"(ignor\w*|esque[çc]\w*|desconsider\w*|despreze\w*|não sigas?|nao siga)",
        r"(anteriores|prévias|previas|acima|todas|suas|tuas|iniciais|do sistema|originais)",
        r"(instruções|instrucoes|orientações|orientacoes|regras|diretrizes|comandos)",
    ),
    _lang(
        r"(ignor\w*|dimentic\w*|trascura\w*|non considerare|non tenere conto|non seguire)",
        r"(precedenti|sopra|di sopra|tutte|tue|sue|iniziali|del sistema|originali)",
        r"(istruzioni|indicazioni|regole|direttive|comandi)",
    ),
    _lang(
        r"(игнорируй\w*|проигнорируй\w*|забудь\w*|не обращай внимания|не учитывай\w*|отбрось\w*|не следуй\w*)",
        r"(предыдущ\w*|прежн\w*|все|вышеуказанн\w*|выше|твои|ваши|системн\w*|изначальн\w*|исходн\w*)",
        r"(инструкци\w*|указани\w*|правил\w*|команд\w*|директив\w*)",
    ),
    rf"(忽略|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|不要遵循|抛开|拋開|丢弃|丟棄){_C}{{0,10}}(之前|以上|上面|前面|先前|所有|一切|原来|原來|原有|系统|系統){_C}{{0,10}}(指令|指示|提示|规则|規則|说明|說明|要求)",
    rf"(以前|前|上記|これまで|先ほど|すべて|全て|今まで|元|システム)の?{_C}{{0,8}}(指示|命令|ルール|指令|プロンプト|制約){_C}{{0,6}}(無視|忘れ|従わな)",
    rf"(無視|忘れ){_C}{{0,4}}(以前|前|上記|これまで|すべて|全て)の?(指示|命令|ルール|指令|プロンプト)",
]


def _you_are_now(phrase: str, article: str, nouns: str, unbound: str) -> str:
    """ "you are now" + (article, one word) + an AI noun, or + a promise of no limits anywhere in the sentence.

    The noun must follow at once: "vous êtes maintenant prêt à utiliser l'assistant" is a welcome.
    """
    return rf"\b{phrase}\s*[,—–-]?\s*({article}\s+)?(\w+\s+)?{nouns}\b|\b{phrase}\b{_S}{{0,30}}{unbound}"


_ROLE = [
    rf"\byou are now\b{_S}{{0,30}}\b(an? (ai|assistant|model|chatbot|bot)|dan|jailbr\w*|unrestricted|unfiltered"
    r"|uncensored|in developer mode|no longer)\b",
    rf"\byou are no longer\b{_S}{{0,30}}\b(bound|restricted|limited|required|an? (ai|assistant|model))\b",
    rf"\bfrom now on,? you\b{_S}{{0,25}}\b(answer|respond|reply|say|act|pretend|speak|only|must not|never)\b",
    r"(^|[.!?:]\s+|\byou (will|must|should|shall|now|are to) )"
    r"(act|pretend|behave|role-?play) (as|like|to be) (an?|the|my)\b",
    r"\b(new|updated|revised|real|actual|override|true) (system )?(instructions?|rules|prompt|task|directives?)\s*:",
    _you_are_now(
        r"(tu es|vous êtes|t'es)\s+(maintenant|désormais|dorénavant|à présent)",
        r"(une?|l')",
        r"(ia|ai|assistant\w*|modèle|chatbot|bot|robot|dan)",
        r"(sans (restrictions?|filtres?|censure|limites?)|en mode développeur)",
    ),
    _you_are_now(
        r"(du bist|sie sind)\s+(jetzt|nun|ab sofort|von nun an|ab jetzt)",
        r"(eine?|der|die|das)",
        r"(ki|ai|assistent\w*|modell|chatbot|bot|roboter|dan)",
        r"(ohne (einschränkungen|filter|zensur|regeln)|im entwicklermodus)",
    ),
    _you_are_now(
        r"(ahora eres|ahora es usted|a partir de ahora,? eres|desde ahora,? eres|ya no eres)",
        r"(una?|el|la)",
        r"(ia|ai|asistente|modelo|chatbot|bot|robot|dan)",
        r"(sin (restricciones|filtros|censura|límites)|en modo desarrollador)",
    ),
    _you_are_now(
        r"(agora você é|você agora é|agora tu és|a partir de agora,? (você|tu) é|agora voce e)",
        r"(uma?|o|a)",
        r"(ia|ai|assistente|modelo|chatbot|bot|robô|robo|dan)",
        r"(sem (restrições|filtros|censura|limites)|no modo desenvolvedor)",
    ),
    _you_are_now(
        r"(ora sei|adesso sei|da ora in poi,? sei|d'ora in poi,? sei|ora lei è|non sei più)",
        r"(una?|un'|l')",
        r"(ia|ai|assistente|modello|chatbot|bot|robot|dan)",
        r"(senza (restrizioni|filtri|censura|limiti)|in modalità sviluppatore)",
    ),
    r"(теперь ты|ты теперь|отныне ты|с этого момента ты|теперь вы|вы теперь)\s*[,—–-]?\s*(\w+\s+)?"
    r"(ии|ai|ассистент\w*|модель|чат-?бот\w*|dan)(?!\w)"
    rf"|(теперь ты|ты теперь|отныне ты|с этого момента ты|теперь вы|вы теперь){_S}{{0,30}}"
    r"(без ограничений|без фильтров|без цензуры|в режиме разработчика)",
    rf"(你现在是|現在你是|现在你是|你現在是|从现在起你是|從現在起你是|从现在开始你是|從現在開始你是|你不再是){_C}{{0,10}}(ai|人工智能|助手|机器人|機器人|模型|dan|没有限制|沒有限制|不受限制|无限制|無限制)",
    rf"((あなたは|君は|お前は)(今から|これから|今日から|もう)|(今から|これから|今日から)(あなたは|君は|お前は)){_C}{{0,15}}(ai|アシスタント|モデル|ボット|dan|制限のない|無制限|制限なし)",
]

_REVEAL = [
    r"\b(reveal|print|show|repeat|output|leak|disclose|display|share|tell me|give me|what (is|are|were)|dump"
    rf"|write out)\b{_S}{{0,30}}"
    r"\b((your|the) (system|initial|original|hidden|secret|full|developer) (prompt|instructions|message|rules)"
    r"|system prompt|your (prompt|instructions|rules)|hidden instructions|instructions you were given)",
    rf"\brepeat\b{_S}{{0,20}}\b(everything|all|the text|the words)\b{_S}{{0,20}}\b(above|before|verbatim)\b",
    rf"\b(révèle\w*|affiche\w*|montre\w*|donne\w*|répète\w*|imprime\w*|divulgue\w*|dis-moi|écri\w*)\b{_S}{{0,30}}"
    r"(prompt (du )?système|invite (du )?système|instructions (du )?système|consignes (du )?système|prompt initial"
    r"|instructions initiales|tes instructions|vos instructions)",
    rf"\b(zeig\w*|gib|geben sie|nenn\w*|verrat\w*|wiederhol\w*|druck\w*|offenbar\w*|ausgeben|gib aus)\b{_S}{{0,30}}"
    r"(system-?prompt|systemanweisung\w*|systemnachricht|ursprünglichen anweisungen|deine anweisungen"
    r"|ihre anweisungen)",
    rf"(system-?prompt|systemanweisung\w*){_S}{{0,30}}\b(zeigen|ausgeben|verraten|wiederholen|nennen|offenbaren)\b",
    rf"\b(revela\w*|muestra\w*|muéstra\w*|imprim\w*|repite\w*|dime|comparte\w*|escribe\w*)\b{_S}{{0,30}}"
    r"(prompt del sistema|indicaciones del sistema|instrucciones del sistema|instrucciones iniciales"
    r"|mensaje del sistema|tus instrucciones)",
    rf"\b(revel\w*|mostr\w*|imprim\w*|repit\w*|diga|diz|compartilh\w*|escrev\w*)\b{_S}{{0,30}}"
    r"(prompt do sistema|instruções do sistema|instrucoes do sistema|instruções iniciais|mensagem do sistema"
    r"|suas instruções)",
    rf"\b(rivel\w*|mostr\w*|stamp\w*|ripet\w*|dimmi|condivid\w*|scriv\w*)\b{_S}{{0,30}}"
    r"(prompt di sistema|istruzioni di sistema|istruzioni iniziali|messaggio di sistema|tue istruzioni)",
    rf"(покажи\w*|выведи\w*|раскрой\w*|повтори\w*|напечатай\w*|скажи\w*|открой\w*|сообщи\w*){_S}{{0,30}}"
    r"(системн\w* (промпт|подсказк\w*|инструкци\w*|сообщени\w*)|свой промпт|твой промпт|исходные инструкции"
    r"|твои инструкции)",
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

_PATTERNS: dict[str, re.Pattern[str]] = {
    # Readings are lower-cased, so the patterns are too (none uses an upper-case escape like \S): matching
    # without re.I is a third faster.
    name: re.compile("|".join(f"(?:{p})" for p in parts).lower(), re.M)
    for name, parts in {
        "ignore-instructions": _IGNORE,
        "role-change": _ROLE,
        "reveal-prompt": _REVEAL,
        "exfiltrate": _EXFILTRATE,
        "fake-role-tag": _FAKE_TAG,
    }.items()
}
_EMPHASIS_IN_WORD = re.compile(r"(?<=\w)\*+(?=\w)")  # `ig**nore**`; an intraword `_` is no emphasis
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_MAX_DEPTH = 2  # base64 inside base64 is decoded once more, no further


def scan_text(text: str) -> tuple[str, ...]:
    """Names of the injection patterns found in `text` (empty when it reads as plain content)."""
    found = _found(text, 0)
    return tuple(name for name in _PATTERNS if name in found)


def _found(text: str, depth: int) -> set[str]:
    found: set[str] = set()
    for variant in _readings(text):
        found |= {name for name, pattern in _PATTERNS.items() if pattern.search(variant)}
    if depth < _MAX_DEPTH:
        for decoded in _decoded_runs(text):
            found |= _found(decoded, depth + 1)
    return found


def _readings(text: str) -> tuple[str, ...]:
    """The forms a pattern is matched against: lines kept (for `^system:`), lines joined, look-alikes read as Latin.

    The look-alike form is separate because it turns real Cyrillic and Greek words into nonsense; the
    others keep them for the Russian patterns.
    """
    plain = strip_format(html.unescape(text))
    plain = _EMPHASIS_IN_WORD.sub("", plain).lower()
    joined = " ".join(plain.split()).lower()
    # Usually the last two are equal (no look-alikes): match once.
    return tuple(dict.fromkeys((plain, joined, " ".join(fold(plain).split()).lower())))


def _decoded_runs(text: str) -> list[str]:
    """Base64-looking runs of `text` that decode to readable UTF-8 (standard or URL-safe alphabet)."""
    out = []
    for run in _BASE64_RUN.findall(text):
        body = run.rstrip("=")
        padded = body + "=" * (-len(body) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
        if decoded and printable >= 0.95 * len(decoded):
            out.append(decoded)
    return out
