""" "Ignore your instructions" in each covered language, built from its words instead of listed as examples.

An attack on a model's rules has three parts: a verb of setting aside (ignore, oublie, vergiss), the rules
(instructions, consignes, Anweisungen) and a word that points at the rules the model already has (previous,
précédentes, oben, "you were given"). Documentation uses any two of them all the time ("ignore the cache",
"the previous step", "the rules above"); all three together, within one clause, read as the attack. Each
`Lexicon` lists a language's words for the three parts, and `ignore_patterns` puts them together in every
order the language writes them: verb first with the qualifier before the noun ("ignore all previous
instructions") or after it ("oublie les consignes précédentes", "ignore the instructions above"), and verb
last ("die obigen Anweisungen ignorieren", "previous instructions must be ignored"). An instruction split
over two sentences ("Ignore them. The previous instructions, I mean.") is the verb with at most a pronoun
(`objects`) ending one sentence and the rules, qualified, opening the next; a verb with its own object
("Ignore the cache. The system prompt field is optional.") is no split instruction.

Words are regular expressions, lower case (readings are lower-cased before matching).
"""

from __future__ import annotations

from dataclasses import dataclass

S = r"[^.!?;\n]"  # within one sentence (or clause: a semicolon ends one too)
C = r"[^。！？\n]"  # within one CJK sentence


@dataclass(frozen=True)
class Lexicon:
    """One language's words for the three parts of "ignore your instructions".

    `before`: qualifiers written before the noun ("previous", "all", "tes"); `after`: those written after
    it ("above", "you were given", "précédentes"); `last`: the verb forms that end a clause ("ignorieren",
    "ignored"), for the verb-last orders (None: the language does not put the verb last).
    """

    verbs: str
    before: str
    nouns: str
    after: str
    last: str | None = None
    objects: str = ""  # the pronouns that may follow the verb at the end of a sentence ("ignore them.")
    spaced: bool = True  # words are delimited by spaces (`\b` applies); False for Chinese and Japanese

    @property
    def trigger(self) -> str:
        """The verbs alone: every order holds one, and searching for them first is a fraction of the cost."""
        b = r"\b" if self.spaced else ""
        return f"{b}({self.verbs}{'|' + self.last if self.last else ''}){b}"


ENGLISH = Lexicon(
    verbs=r"(ignore|disregard|forget|override|bypass|discard|abandon|neglect|pay no (attention|heed) to|set aside"
    r"|throw (out|away))",
    before=r"(previous|prior|above|earlier|preceding|foregoing|former|original|initial|all|any|system|your|developer)",
    nouns=r"(instructions?|prompts?|rules|directions|guidelines|guidance|directives|orders|commands|constraints"
    r"|restrictions)",
    after=r"(above|before|so far|until now|up to (now|this point)|(that |which )?you (were|have been|got) given"
    r"|(that |which )?(were )?given (to )?you|(given|provided|stated|written|listed) (above|before|earlier|previously)"
    r"|(that |which )?you (received|have received|got)|from (the |your )?(system|developer|operator|creators?))",
    # The passive with a modal only: "all rules are ignored in strict mode" is documentation.
    last=r"(must|should|shall|are to|can|may|will) (now )?be (ignored|disregarded|forgotten|overridden|discarded"
    r"|set aside)",
    objects=r"(it|them|this|that|these|those|everything|all|all of (it|them|this|that))",
)

FRENCH = Lexicon(
    verbs=r"(ignore[zsr]?|oublie[zsr]?|ne tien[st] pas compte|ne tenez pas compte|faites abstraction|fais abstraction"
    r"|laisse[zr]? de côté|écarte[zr]?|passe[zr]? outre)",
    before=r"(précédent\w*|antérieur\w*|initia\w*|tes|vos|toutes les|tous les|les premières)",
    nouns=r"(instructions?|consignes?|directives?|règles|indications|ordres)",
    after=r"(précédent\w*|ci-dessus|plus haut|antérieur\w*|initia\w*|d'avant|du système|reçu\w*"
    r"|qu'on (t'a|vous a) donn\w*|que (l'on|je) (t'ai|vous ai|t'a|vous a) donn\w*)",
    objects=r"(-les|-le|-la|tout|cela|ça|tout cela)",
)

GERMAN = Lexicon(
    verbs=r"(ignorier\w*|vergiss|vergessen sie|missachte\w*|übergeh\w*|verwirf|verwerfen sie|übergehen sie)",
    before=r"(vorherig\w*|bisherig\w*|obig\w*|vorig\w*|alle|deine|ihre|früher\w*|vorangegangen\w*|ursprünglich\w*"
    r"|system\w*)",
    nouns=r"(anweisungen|instruktionen|befehle|regeln|vorgaben|anordnungen|richtlinien)",
    after=r"(oben|von oben|davor|zuvor|bisher|von vorhin|des systems|die (du|sie) (erhalten|bekommen) (hast|haben))",
    last=r"(ignorieren|ignoriert|vergessen|missachten|missachtet|verwerfen|verworfen|übergehen)",
    objects=r"(sie|es|alles|das|dies|alles davon)",
)

SPANISH = Lexicon(
    verbs=r"(ignora\w*|olvid\w*|descarta\w*|haz caso omiso( de)?|no hagas caso( de| a)?|no sigas|desobedece\w*"
    r"|pasa por alto|omite)",
    before=r"(anteriores|previas|todas|tus|sus|iniciales|originales|primeras)",
    nouns=r"(instrucciones|indicaciones|reglas|directrices|órdenes|normas)",
    after=r"(anteriores|previas|de arriba|de antes|iniciales|del sistema|originales|recibidas"
    r"|que (te|le|se te) (dieron|han dado|dio|ha dado))",
    objects=r"(todo|eso|esto|todo eso)",
)

PORTUGUESE = Lexicon(
    verbs=r"(ignor\w*|esque[çc]\w*|desconsider\w*|despreze\w*|não sigas?|nao siga|descart\w*)",
    before=r"(anteriores|prévias|previas|todas|suas|tuas|iniciais|originais|primeiras)",
    nouns=r"(instruções|instrucoes|orientações|orientacoes|regras|diretrizes|comandos)",
    after=r"(anteriores|prévias|previas|acima|de antes|iniciais|do sistema|originais|recebidas"
    r"|que (te|lhe) (deram|foram dadas|dei))",
    objects=r"(-as|-os|tudo|isso|isto|tudo isso)",
)

ITALIAN = Lexicon(
    verbs=r"(ignor\w*|dimentic\w*|trascura\w*|non considerare|non tenere conto( di| delle)?|non seguire|scarta\w*)",
    before=r"(precedenti|tutte|tue|sue|iniziali|originali|prime)",
    nouns=r"(istruzioni|indicazioni|regole|direttive|comandi)",
    after=r"(precedenti|sopra|di sopra|qui sopra|di prima|iniziali|del sistema|originali|ricevute"
    r"|che ti (hanno|sono state|ho) dat\w*)",
    objects=r"(tutto|questo|ciò|tutto questo)",
)

RUSSIAN = Lexicon(
    verbs=r"(игнорируй\w*|проигнорируй\w*|забудь\w*|не обращай внимания( на)?|не учитывай\w*|отбрось\w*"
    r"|не следуй\w*|отмени\w*)",
    before=r"(предыдущ\w*|прежн\w*|все|вышеуказанн\w*|вышеприведённ\w*|выше|твои|ваши|системн\w*|изначальн\w*"
    r"|исходн\w*|данные тебе)",
    nouns=r"(инструкци\w*|указани\w*|правил\w*|команд\w*|директив\w*)",
    after=r"(выше|ранее|предыдущ\w*|прежн\w*|системы|(которые )?(тебе|вам) (дали|даны|были даны))",
    last=r"(игнорируй\w*|проигнорируй\w*|забудь\w*|отбрось\w*|не учитывай\w*)",
    objects=r"(их|это|всё|все|все это|всё это)",
)

CHINESE = Lexicon(
    verbs=r"(忽略|忽视|忽視|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|不要遵循|不再遵守|抛开|拋開|丢弃|丟棄|跳过|跳過)",
    before=r"(之前|以上|上面|前面|先前|此前|上述|前述|所有|一切|原来|原來|原有|原始|系统|系統|你收到的|给你的|給你的)",
    nouns=r"(指令|指示|提示|规则|規則|说明|說明|要求|命令)",
    after=r"(之前|以上|上面|前面|先前|此前|上述|前述|所有|一切|原来|原來|原有|原始|系统|系統|你收到的|给你的|給你的)",
    last=r"(忽略|忽视|忽視|无视|無視|忘记|忘記|忘掉|抛开|拋開|丢弃|丟棄)",
    objects=r"(它们|它們|这些|這些|那些|一切|吧)",
    spaced=False,
)

LATIN_AND_CYRILLIC = (ENGLISH, FRENCH, GERMAN, SPANISH, PORTUGUESE, ITALIAN, RUSSIAN)


def mixed(lexicons: tuple[Lexicon, ...]) -> Lexicon:
    """One lexicon whose every part is any of `lexicons`' words for it: a sentence may take its verb from one
    language and its rules from another ("Ignora todas las previous instructions"), as code-switched text does."""

    def union(parts: list[str | None]) -> str | None:
        present = [p for p in parts if p]
        return "(" + "|".join(present) + ")" if present else None

    fields = ("verbs", "before", "nouns", "after", "last", "objects")
    return Lexicon(**{f: union([getattr(lex, f) for lex in lexicons]) or "" for f in fields})


# Languages written with spaces between words, combined in any mix; Chinese keeps its own spaceless lexicon.
SPACED = mixed(LATIN_AND_CYRILLIC)


def ignore_patterns(lex: Lexicon) -> list[str]:
    """The orders `lex`'s three parts may come in, each within one sentence and close together."""
    gap, b = (S, r"\b") if lex.spaced else (C, "")
    verb, before, noun, after = (rf"{b}{w}{b}" for w in (lex.verbs, lex.before, lex.nouns, lex.after))
    space, end = (r"[\s-]*", r"\s*[.!?;]+\s*") if lex.spaced else ("", r"[。！？；.!?]+\s*")
    orders = [
        rf"{verb}{gap}{{0,40}}{before}{gap}{{0,25}}{noun}",  # ignore all previous instructions
        rf"{verb}{gap}{{0,30}}{noun}{gap}{{0,15}}{after}",  # oublie les consignes précédentes
        # ignore them. the previous instructions, i mean. / ignore them. the instructions above.
        rf"{verb}({space}{lex.objects})?{b}{end}{gap}{{0,12}}({before}{gap}{{0,25}}{noun}|{noun}{gap}{{0,15}}{after})",
    ]
    if lex.last:
        last = f"{b}{lex.last}{b}"
        orders += [
            rf"{before}{gap}{{0,25}}{noun}{gap}{{0,30}}{last}",  # alle vorherigen Anweisungen ignorieren; 上述指示忽略
            rf"{noun}{gap}{{0,15}}{after}{gap}{{0,30}}{last}",  # die Anweisungen von oben ignorieren
        ]
    return orders
