"""Questions that name their subject and ask one kind of thing about it.

Consumer-health questions come in a few kinds (the MedQuAD question types): what a condition
is, its symptoms, causes, treatments, inheritance, frequency, genetic changes, tests, research,
outlook, risk, prevention, stages, complications, support. Each asks about one named subject
("the symptoms of X", "Is X inherited?"), and each is answered with whole sentences of a
document about that subject - or not at all when no held document is about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_S = r"(?P<subject>.+?)"
_END = r"\s*[?.!]*\s*$"
# (kind, pattern); the first match wins, so the specific kinds come before "information".
_KINDS: tuple[tuple[str, str], ...] = (
    ("symptoms", rf"^what are (?:the )?(?:signs and )?symptoms of {_S}{_END}"),
    ("treatment", rf"^what (?:are|is) (?:the )?treatments? for {_S}{_END}"),
    ("treatment", rf"^how (?:to|is|are|can|do you) (?:treat|manage) {_S}(?: treated)?{_END}"),
    ("causes", rf"^what (?:causes|are (?:the )?causes of|is the cause of) {_S}{_END}"),
    ("genetic changes", rf"^what are (?:the )?genetic changes related to {_S}{_END}"),
    ("inheritance", rf"^(?:is|are) {_S} inherited{_END}"),
    ("frequency", rf"^how many people are affected by {_S}{_END}"),
    ("exams and tests", rf"^how (?:to|do you|is|are) diagnose(?:d)? {_S}{_END}"),
    ("exams and tests", rf"^how (?:is|are) {_S} diagnosed{_END}"),
    (
        "exams and tests",
        rf"^what (?:are|is) (?:the )?(?:tests?|exams?)(?: and tests?)?"
        rf" (?:for|to diagnose) {_S}{_END}",
    ),
    (
        "research",
        rf"^what research (?:\(or clinical trials\) )?is being done for {_S}{_END}",
    ),
    ("outlook", rf"^what is (?:the )?(?:outlook|prognosis) for {_S}{_END}"),
    ("considerations", rf"^what (?:are|is) (?:the )?(?:special )?considerations for {_S}{_END}"),
    ("susceptibility", rf"^who is at risk for {_S}{_END}"),
    ("prevention", rf"^how (?:to|can i|can you|can one|can) prevent {_S}{_END}"),
    ("stages", rf"^what are (?:the )?stages of {_S}{_END}"),
    ("complications", rf"^what are (?:the )?complications of {_S}{_END}"),
    ("support", rf"^where to find support for (?:people with )?{_S}{_END}"),
    ("treatment", rf"^what to do for {_S}{_END}"),
    # "What is X used for?" asks what X is: its defining sentence says what it is for.
    ("information", rf"^what (?:is|are) {_S} (?:used|taken|given|prescribed|good) for{_END}"),
    ("information", rf"^what (?:is|are)(?: \((?:is|are)\))? {_S}{_END}"),
)
_PATTERNS = tuple((kind, re.compile(p, re.IGNORECASE)) for kind, p in _KINDS)
# A subject is a noun phrase: no article first ("What is the name of ..." asks a fact), no
# verb or relative word inside, and short.
_NOT_A_SUBJECT = re.compile(
    r"^(?:the|a|an|this|that|these|those|it|they|there)\b"
    r"|\b(?:who|whom|whose|which|that|where|when|did|does|do|was|were|has|had|is|are)\b",
    re.IGNORECASE,
)
_MAX_SUBJECT_WORDS = 10
_POSSESSIVE_RE = re.compile(r"^(?P<owner>.+?)['\u2019]s? (?P<owned>.+)$")


def _asks_of_owner(subject: str) -> bool:
    """Whether "X's Y" asks a fact Y of X ("Pell Armand's peak flow"), not a named condition.

    An eponym ("Parkinson's disease") has a one-word owner and a one-word head noun; a
    person's or place's attribute has a longer name or a longer attribute.
    """
    match = _POSSESSIVE_RE.match(subject)
    if match is None:
        return False
    return len(match.group("owner").split()) >= 2 or len(match.group("owned").split()) >= 2


# Words a sentence answering each kind usually holds (the defining "is a", the figure, the
# inheritance pattern...). A sentence of the subject's document holding them ranks higher.
CUES: dict[str, re.Pattern[str]] = {
    kind: re.compile(pattern, re.IGNORECASE)
    for kind, pattern in {
        "information": r"\b(?:is|are)\s+(?:a|an|one|any|the|group|rare|common|type|kind)\b"
        r"|\brefers? to\b|\bis (?:also )?(?:called|known as)\b",
        "frequency": r"\d|\bpercent\b|\bone in\b|\b(?:million|thousand|hundred)\b|\bprevalen"
        r"|\bincidence\b",
        "inheritance": r"\binherit|\bautosomal\b|\b[XY]-linked\b|\brecessive\b|\bdominant\b"
        r"|\bde novo\b|\bnew mutation|\bsporadic\b|\bmitochondrial\b",
        "genetic changes": r"\bmutations?\b|\bgenes?\b|\bvariants?\b|\bchromosom|\bdeletion",
        "symptoms": r"\bsymptoms?\b|\bsigns?\b|\binclud|\bcharacteri[sz]ed by\b|\bexperience",
        "treatment": r"\btreat|\btherap|\bmedication|\bsurgery\b|\bdrugs?\b|\bmanag",
        "causes": r"\bcaus|\bdue to\b|\bresults? from\b|\bmutation|\btrigger",
        "exams and tests": r"\bdiagnos|\btests?\b|\bexam|\bscan|\bimaging\b|\bbiopsy\b",
        "research": r"\bresearch|\bstud(?:y|ies)\b|\btrials?\b|\binvestigat",
        "outlook": r"\boutlook\b|\bprognosis\b|\bsurviv|\blife expectancy\b|\brecover",
        "considerations": r"\bconsider|\bimportant\b|\bshould\b",
        "susceptibility": r"\brisk\b|\bmore likely\b|\bmost common\b|\boccurs? (?:in|among)\b",
        "prevention": r"\bprevent|\breduc|\bavoid",
        "stages": r"\bstages?\b",
        "complications": r"\bcomplication|\blead to\b|\bcan cause\b",
        "support": r"\bsupport\b|\borgani[sz]ation|\bgroups?\b|\bresources?\b",
    }.items()
}


# Kinds whose cue words say the kind itself, not only a sentence's shape ("is a", a digit).
_SAYING_KINDS = frozenset(
    """frequency inheritance outlook complications stages causes research susceptibility
    prevention support""".split()
)


def kind_cues(noun: str) -> tuple[re.Pattern[str], ...]:
    """The cue words of the kinds a noun of a question names: other words notes say it with.

    "outlook" and "prognosis" name the outlook kind, whose sentences say "survival" or
    "life expectancy"; "changes" (genetic changes) the kind whose sentences say "mutation";
    "complications" the kind that says "can lead to". A noun names a kind when it is a word
    of the kind's name or one of its cue words; only kinds whose cues say the kind count
    (not "information", whose cue is any "is a").
    """
    lowered = noun.lower()
    found = []
    for kind in sorted(_SAYING_KINDS | {"genetic changes"}):
        cue = CUES[kind]
        named = any(
            lowered.rstrip("s") == word.rstrip("s") for word in kind.split() if len(word) > 3
        )
        if named or cue.search(lowered):
            found.append(cue)
    return tuple(found)


@dataclass(frozen=True)
class AskedSubject:
    """The subject a question names and the kind of thing it asks about it."""

    kind: str
    subject: str


def asked_subject(question: str) -> AskedSubject | None:
    """The named subject and question kind ("symptoms", "inheritance"...), or None.

    Only questions of the consumer-health kinds count, and only when the subject reads as a
    noun phrase: "What is the name of the river ...?" asks a fact, not what a thing is.
    """
    text = " ".join(question.strip().split())
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        subject = next((g for g in match.groups() if g), "").strip(" ,;:")
        if not subject or _NOT_A_SUBJECT.search(subject) or _asks_of_owner(subject):
            return None
        if len(subject.split()) > _MAX_SUBJECT_WORDS:
            return None
        return AskedSubject(kind=kind, subject=subject)
    return None
