"""Evidence checks on a drafted answer: does what it stands on say what the question asks?

General checks of the evidence an answer stands on, not rules about a question's wording;
`_answering.evidence_check` applies them to every drafted answer:

- a short answer must be of the asked type: not a common word capitalised at a sentence
  start ("Start"), not a document's title standing in for its sentence's subject ("Gout:
  clinic notes"); either way the sentence it was read from answers instead;
- a question asking "how soon / how long / how many / what dose" needs a figure;
- what the answer stands on must mention what the question is about: its names (both
  subjects of a yes/no, each option of a comparison) and the held documents' titles it
  names.

Each was decided on the `tune` half of bench/tuning and checked on HotpotQA items 1-200
(docs/answers.md, "Evidence checks").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefrag.reasoners._attributes import said_attribute, says_word
from prefrag.reasoners._bridges import described_thing
from prefrag.reasoners._evidence import Evidence, Sentence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import FROM, Judge, Judged, plain
from prefrag.reasoners._qualifiers import uncovered_qualifier
from prefrag.reasoners._relations import joined_phrases, names_by_relation, relation_of
from prefrag.reasoners._text import NUMBER_WORDS, term_set
from prefrag.reasoners._verdicts import is_demonym
from prefrag.reasoners.base import AnswerDraft


def _lead_terms(evidence: Evidence, doc: int, count: int = 2) -> frozenset[str]:
    lead = [s for s in evidence.sentences if s.doc == doc][:count]
    return frozenset().union(*(s.terms for s in lead)) if lead else frozenset()


def common_word_span(draft: AnswerDraft, evidence: Evidence) -> bool:
    """Whether the short answer is a common word capitalised at a sentence start.

    One capitalised word the evidence also writes in lower case ("Start", "People",
    "Check") is a sentence's first word, not a name.
    """
    short = draft.short_answer.strip()
    if not short or " " in short or not short[:1].isupper() or not short.isalpha():
        return False
    return short.lower() in evidence.lower_case_words


_FUNCTION_WORDS = frozenset(
    "a an and the of in on at for to by with from or de la le van von".split()
)


def name_like(text: str) -> bool:
    """Whether every word of `text` but function words starts with a capital or a digit."""
    tokens = re.findall(r"[\w'-]+", text)
    return bool(tokens) and all(
        t[:1].isupper() or t[:1].isdigit() or t.lower() in _FUNCTION_WORDS for t in tokens
    )


def span_out_of_sentence(draft: AnswerDraft) -> bool:
    """Whether a short answer is a heading, not a name, and not in the sentence it came from.

    A document's title standing in for its sentence's subject ("Gout: clinic notes" for
    "Offer allopurinol to anyone with ...") says nothing the sentence does not say better.
    A heading has a colon, or lower-case words after a capitalised first one; a name
    ("Salt Hall") or a file's name ("tobias-wrenfield") has neither.
    """
    short = draft.short_answer.strip()
    if not short or not draft.rationale.startswith(FROM):
        return False
    if short.lower() in draft.rationale.removeprefix(FROM).lower():
        return False
    heading = ":" in short or (short[:1].isupper() and not name_like(short))
    return heading


_FILE_STEM = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)+")


def file_name_title(draft: AnswerDraft, evidence: Evidence) -> str | None:
    """The name a file-name title ("wenna-carrow") stands for, when it is the short answer.

    A note without a heading is titled by its file's name; that title stands in for "she"
    or "it" in the note's sentences and can be read out as a span, but a file name is no
    answer. Returns the name as the note writes it ("Wenna Carrow"), "" when the note never
    writes it capitalised (the sentence must answer instead), None when the short answer is
    no file-name title.
    """
    short = draft.short_answer.strip()
    if not _FILE_STEM.fullmatch(short) or short not in evidence.titles:
        return None
    return written_name(short, evidence.docs[evidence.titles.index(short)].page_content)


def written_name(stem: str, document: str) -> str:
    """The name a file-name title stands for as `document` writes it capitalised, or ""."""
    words = re.split(r"[-_.]", stem)
    written = re.compile(
        r"(?<![\w-])" + r"[\s-]+".join(re.escape(w) for w in words) + r"(?![\w-])", re.I
    )
    for match in written.finditer(document):
        parts = re.split(r"[\s-]+", match.group())
        if all(part[:1].isupper() or part[:1].isdigit() for part in parts):
            return match.group()
    return ""


_ASKS_FIGURE = re.compile(
    r"^\s*(?:how (?:soon|long|many|much|often|far|old|deep|high|tall|heavy)|what dose)\b", re.I
)
_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty"
    r"|forty|fifty|hundred|thousand|million|half|quarter|once|twice|daily|weekly|monthly"
    r"|yearly|annually|immediately)\b",
    re.I,
)


def figure_missing(judge: Judge, draft: AnswerDraft) -> bool:
    """Whether a question asking "how soon / how many / what dose" gets no figure at all."""
    return bool(_ASKS_FIGURE.match(judge.shape.text)) and not _FIGURE.search(draft.answer)


def _incidental(name: str, common: frozenset[str]) -> bool:
    """Whether a capitalised question span is not a subject to find in the answer.

    An acronym ("UTI": notes spell it out) or a lone initial ("H" of "H. pylori", which
    a note may leave to its heading), a figure or ordinal ("The 2011", "11th Album"),
    a nationality ("Australian") or one common word capitalised at a sentence start
    ("Aside"); `subjects` also leaves out a one-word span opening the question
    ("Considered").
    """
    if re.fullmatch(r"[A-Z0-9]{1,6}s?", name) or any(ch.isdigit() for ch in name):
        return True
    if is_demonym(name):
        return True
    return " " not in name.strip() and name.strip().lower() in common


def subjects(judge: Judge, evidence: Evidence) -> list[tuple[str, frozenset[str]]]:
    """What the question is about: its names, and the held documents' titles it names.

    Each is (how to say it, its terms). Comparisons and yes/no questions give their sides.
    An acronym ("UTI") is left out: notes often spell it out. A held document whose title
    the question holds in lower case ("Does rifampicin interact with levothyroxine?") is a
    subject too.
    """
    shape = judge.shape
    found: list[tuple[str, frozenset[str]]] = []
    if judge.sides:
        found = [(side, term_set(side)) for side in shape.candidates if term_set(side)]
    else:
        common = evidence.lower_case_words
        opening = shape.text.split()[0] if shape.text.split() else ""
        found = [
            (e, term_set(e) & judge.name_terms)
            for e in shape.entities
            if term_set(e) & judge.name_terms
            and not _incidental(e, common)
            and e.strip() != opening.strip(",;:")
        ]
    question = term_set(shape.text)
    for title, terms in zip(evidence.titles, evidence.title_terms, strict=True):
        if terms and terms <= question and not any(terms <= t for _, t in found):
            found.append((title, terms))
    return found


def unnamed_subject(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> str:
    """The subject of the question that what the answer stands on never mentions ("" if none).

    What the answer stands on: its own words, the sentence a span was read from, the
    section heading all its sentences stand under, the titles and lead sentences of the
    cited documents (a note names its subject in its title, a heading or its first lines,
    then says "it"), and the sentence that led to a bridged document; an answer citing
    several documents (two hops) counts their whole text. "How long is the River Pell?" is
    not answered by "The River Tamsin is 38 km long", whatever else the Tamsin's document
    says about the Pell; "Does A interact with B?" is not decided by a sentence about A alone.
    """
    cited = evidence.positions(draft.cited_ids)
    covered = term_set(f"{draft.answer} {draft.rationale.removeprefix(FROM)}")
    # Only a question about a thing it describes ("the engineer of X", "her birthplace")
    # is answered from a document that never names its subject: the first hop's names it.
    hops = described_thing(judge.shape.text) is not None or names_by_relation(judge.shape.text)
    own = _own_sentences(draft, evidence)
    if own:
        # A heading the answer's sentences all stand under ("## Ferndale clinic" over its
        # opening hours) names their subject.
        covered = covered | frozenset.intersection(*(s.section for s in own))
    link = judged[0].scored.link if judged else None
    if own and draft.rationale.startswith(FROM) and not hops and link is None:
        # A span read from one sentence is about that sentence's note: another cited note
        # naming the subject ("Vielmas") does not make the valley's figure the village's.
        cited = list(dict.fromkeys(s.doc for s in own))
    for sentence in own:
        covered = covered | _referred_terms(evidence, sentence)
    asked = term_set(judge.shape.text) - judge.name_terms
    named = subjects(judge, evidence)
    for doc in cited:
        covered = covered | evidence.title_terms[doc]
        if not _names_another(evidence, doc, asked, named):
            covered = covered | _lead_terms(evidence, doc)
        if len(cited) > 1 and hops:
            covered = covered | evidence.doc_terms[doc]
    if link is not None:
        covered = covered | link.terms | evidence.title_terms[link.doc]
        if hops:
            covered = covered | evidence.doc_terms[link.doc]
    return _unmentioned(named, covered, evidence)


def _names_another(
    evidence: Evidence,
    doc: int,
    asked: frozenset[str],
    named: list[tuple[str, frozenset[str]]],
) -> bool:
    """Whether a document is titled by the name of another thing than the question's.

    A note titled "Nether Gorrell" (or "Letitia Thurlow") says "it" or "she" of its own
    subject; a place or person its lead sentences mention on the way ("5 km downstream of
    Lanwith Wells", "her brother Warren") is not what its later sentences are about, so the
    lead does not stand for the question's names (`named`). A title naming one of them
    ("St Ronan's Church" for "St Ronan's") or sharing a word the question asks with
    besides its names ("Abbey of Saint-Gildric" for "the abbey church at Sainte-Aulde")
    names the asked thing itself.
    """
    title = evidence.titles[doc].strip()
    terms = evidence.title_terms[doc]
    if not terms or terms & asked:
        return False
    if any(not _unmentioned([subject], terms, evidence) for subject in named):
        return False
    if _FILE_STEM.fullmatch(title):
        # "nether-gorrell" names a place its note writes "Nether Gorrell";
        # "kilbrannock-parish-church" describes a thing its note writes in lower case.
        return bool(written_name(title, evidence.docs[doc].page_content))
    return name_like(title)


# A sentence opening with a pronoun ("Its owner from 1689 was ...") is about what the
# sentence before it names.
_ANAPHORA = re.compile(r"^\W*(?:it|its|he|his|she|her|they|their|this|these)\b", re.I)


def _referred_terms(evidence: Evidence, sentence: Sentence) -> frozenset[str]:
    """The terms of the sentence before `sentence` when it opens with a pronoun, else none."""
    before = evidence.sentence_before(sentence) if _ANAPHORA.match(sentence.text) else None
    return before.terms if before is not None else frozenset()


def _unmentioned(
    named: list[tuple[str, frozenset[str]]], covered: frozenset[str], evidence: Evidence
) -> str:
    """The first of the `named` subjects `covered` does not mention ("" if none).

    A name is mentioned when most of its terms are (`PARAMS.name_match`: "Livesey Hal"
    misspelt in a question is still "Livesey Hall"), or the word that tells it apart: a
    person by the surname ("Marrow fired ..."), a river by its own name, not "River".
    """
    for said, terms in named:
        telling = _telling_word(said, evidence)
        if telling and telling <= covered:
            continue
        if len(terms & covered) < PARAMS.name_match * len(terms):
            return said
    return ""


def _telling_word(name: str, evidence: Evidence) -> frozenset[str]:
    """The terms of the word of `name` that tells it apart from other things' names.

    Its last word (a person's surname: "Marrow fired ...", "Pell" of "River Pell"), unless
    the evidence also writes that word after another name ("Brack Tunnel" beside "Orrin
    Tunnel") or in lower case ("Quenby Canal" beside "a canal engineer"): a shared or
    common head noun tells nothing, and the name's rarest word in the evidence ("Orrin")
    does instead.
    """
    words = name.split()
    if not words:
        return frozenset()
    last = words[-1]
    own = {w.lower() for w in words}
    heads = re.finditer(rf"\b([A-Z][\w'\u2019-]*)\s+{re.escape(last)}\b", evidence.text)
    common = last.lower() in evidence.lower_case_words  # "canal engineer": a common noun
    if not common and not any(m.group(1).lower() not in own for m in heads):
        return term_set(last)
    best: frozenset[str] = frozenset()
    rarest = -1.0
    for word in words:
        terms = term_set(word)
        if terms and (weight := max(evidence.weight(t) for t in terms)) > rarest:
            best, rarest = terms, weight
    return best


# "what's" is "what is"; a possessor ("the practice's", "Orlenby's") is the subject, not
# the asked relation.
_CONTRACTION = re.compile(r"\b(what|who|which)['\u2019]s\b|\b(what)s\b", re.I)
_POSSESSOR = re.compile(r"\b[\w-]+(?:['\u2019]s|s['\u2019])(?=\s)", re.I)
_COPULA = frozenset({"is", "was", "are", "were"})
_YES_NO_OPENERS = frozenset("does do did can could is are should may will would".split())
_WH = frozenset({"what", "which", "who"})
_RELATIVES = frozenset({"who", "which", "that", "whose", "whom", "where"})
_PREPOSITIONS = frozenset("in at on of for from under over since by to during".split())
_FIGURE_WORD = re.compile(r"\d[\d,.]*")
# A participle opening a reduced relative clause ("related", "used", "linked").
_PARTICIPLE = re.compile(r"[a-z]{2,}(?<!e)ed|used")
# Prepositions whose phrase narrows the asked relation ("for a child", "in pregnancy").
_NARROWING = frozenset("for in during after".split())
# Words that narrow nothing by themselves ("for someone on X", "in these notes").
_ANYONE = frozenset("someone somebody anyone patient patients person people notes note".split())
# A time adverb after a stranded preposition ("used for today") narrows nothing.
_WHENEVER = frozenset("today now nowadays currently still then ever".split())
_DETERMINERS = frozenset("the a an this that these those its his her their our my your".split())
# Adverb particles of a phrasal verb ("come out", "wear off"): the word before is a verb.
_PARTICLES = frozenset("out off up down away back".split())
# Possessives of the asker or the person asked about ("in my arm", "in his leg").
_OWNERS = frozenset("my your his her their our".split())


@dataclass(frozen=True)
class Asked:
    """A word of the asked relation and the phrase it qualifies ("" when not a wh-phrase).

    `alternatives`: other words of which any one said will do (what a yes/no question's
    subject is "with": "a glass of milk", "aura" of "with aura stay on").
    """

    word: str
    phrase: str
    alternatives: tuple[str, ...] = ()


# Where a question's opening situation ends and what it asks begins ("she's on the pill,
# how long ...", "the man in the March log - what dose ...", "Seen in May. Who ...").
_CLAUSE_BREAK = re.compile(r"(?:[,;:.?!]|\s[-\u2013\u2014])\s+")
_ASKING = _WH | _YES_NO_OPENERS | frozenset("when where why how whose whom".split())


def asked_clause(question: str) -> str:
    """The part of `question` that asks, without the situation told before it.

    "She's on the pill and taking X for ringworm, how long after the course ...?" asks how
    long after the course; the ringworm, the March log the patient was found in, the month
    the dose was late are the asker's situation or how a bridge is found, not what the
    answer must say. The asking part opens with a wh-word or a yes/no opener (`_asks`)
    right after the last such break (a comma, a dash, a colon, a full stop); a question
    opening that way is whole.
    """
    first = re.match(r"\W*([\w']+)", question)
    if _asks(question) or (first and first.group(1).lower() in _PREPOSITIONS):
        return question  # "In pregnancy, is X safe?": the fronted phrase narrows the asking
    asking = question
    for match in _CLAUSE_BREAK.finditer(question):
        if _asks(question[match.end() :]):
            asking = question[match.end() :]  # the last break before an asking part
    return asking


def _asks(text: str) -> bool:
    """Whether `text` opens as a question: a wh-word or a yes/no opener.

    A preposition may come first ("up to how long", "at what age").
    """
    words = [w.lower() for w in re.findall(r"[\w']+", text)[:3]]
    if words and words[0] in _ASKING:
        return True
    lead = 2 if words[:2] == ["up", "to"] else 1
    return len(words) > lead and words[0] in _PREPOSITIONS | {"up"} and words[lead] in _ASKING


def _question_clause(question: str) -> tuple[list[str], int]:
    """The question's lower-cased words up to its first relative clause, and its wh-word's place.

    Only the asking part counts (`asked_clause`). A relative clause ("the film that he
    co-wrote") describes another thing on the way to the answer, not the asked relation; a
    leading preposition ("At what level ...?") puts the wh-word second.
    """
    text = _CONTRACTION.sub(
        lambda m: (m.group(1) or m.group(2)) + " is", asked_clause(question).replace("\u2019", "'")
    )
    text = joined_phrases(_POSSESSOR.sub(" ", text))  # "home town" is one relation word
    lowered = [t.lower() for t in re.findall(r"[\w][\w-]*", text)]
    start = 1 if lowered and lowered[0] in _PREPOSITIONS else 0
    relative = [i for i, t in enumerate(lowered) if i > start and t in _RELATIVES]
    return (lowered[: relative[0]] if relative else lowered), start


def _wh_phrase(main: list[str], start: int) -> tuple[list[str], int] | None:
    """After "what / which / who is [the]": the phrase's words and the place after them.

    The phrase ends at its first function word or at a participle ("the genetic changes
    *related* to X"). None when the clause does not open that way.
    """
    if not (len(main) > start + 1 and main[start] in _WH and main[start + 1] in _COPULA):
        return None
    j = start + 2
    while j < len(main) and main[j] in _DETERMINERS:
        j += 1
    phrase: list[str] = []
    while j < len(main) and term_set(main[j]):
        if phrase and _PARTICIPLE.fullmatch(main[j]):
            break
        phrase.append(main[j])
        j += 1
    return phrase, j


def relation_words(question: str, name_terms: frozenset[str] = frozenset()) -> list[Asked]:
    """The question's words that say which relation of its subject is asked.

    Read from the question's form, not from a word list:

    - "what / which / who is [the] <phrase>": the phrase's words up to the first function
      word ("the practice's *email* address", "the *maximum daily* dose of X", "who is
      *eligible* for X"); after "what / which", the phrase's last word is the kind of thing
      asked ("address", "dose"), which the answer is an instance of and need not repeat;
    - in a yes/no question, what something is "with" ("Does A interact with *B*?"), one
      of its words ("Can I take A with a *glass* of *milk*?");
    - a word naming a relation of `_relations` ("die", "founded", "designed", "born");
    - a figure qualifying that phrase ("the population in *1908*").

    Only the question's own clause counts: a relative clause ("the film that he co-wrote
    in 2002") describes another thing on the way to the answer. Names (`name_terms`,
    stemmed) are the subject, checked by `unnamed_subject`.
    """
    main, start = _question_clause(question)
    found: list[Asked] = []
    opened = _wh_phrase(main, start)
    if opened is not None:
        phrase, j = opened
        said = " ".join(phrase)
        qualifiers = phrase if main[start] == "who" else phrase[:-1]
        found += [Asked(w, said) for w in qualifiers if not term_set(w) <= name_terms]
        # A figure right after the phrase qualifies it: "the population *in 1908*".
        if j + 1 < len(main) and main[j] in _PREPOSITIONS and _FIGURE_WORD.fullmatch(main[j + 1]):
            found.append(Asked(main[j + 1], ""))
    if len(main) > start + 3 and main[-1] in _STRANDED and main[-3] in ("a", "an"):
        # "What was she given *a medal* for?": the thing the asked reason or use is of.
        if term_set(main[-2]) and not term_set(main[-2]) <= name_terms:
            found.append(Asked(main[-2], ""))
    if main and main[0] in _YES_NO_OPENERS:
        # "Does A interact with B?", "Can I take A with a glass of milk?": what A is with is
        # what the verdict is about; a sentence about A alone decides nothing about it.
        for i, word in enumerate(main[:-1]):
            if word != "with":
                continue
            j = i + 1
            while j < len(main) and main[j] in _DETERMINERS:
                j += 1
            phrase = []
            while j < len(main) and (term_set(main[j]) or main[j] == "of"):
                phrase.append(main[j])
                j += 1
            phrase = [w for w in phrase if term_set(w) and not term_set(w) <= name_terms]
            if phrase:
                found.append(Asked(phrase[0], "", tuple(phrase[1:])))
    # "How tall is Tarnmouth *lighthouse*?", "When was the *chapel* of X built?": the
    # common nouns of the measured or dated thing; a sentence about another thing of the
    # same place (its dam, its walls) does not answer.
    thing: list[str] = []
    if len(main) > 3 and main[0] == "how" and main[2] in _COPULA:
        thing = main[3:]
    elif len(main) > 3 and main[0] == "when" and main[1] in _COPULA:
        thing = main[2:-1]
    cut = next(
        (k for k, w in enumerate(thing) if w in _PREPOSITIONS or _PARTICIPLE.fullmatch(w)),
        len(thing),
    )
    nouns = [
        w
        for w in thing[:cut]
        if w not in _DETERMINERS
        and term_set(w)
        and not term_set(w) <= name_terms
        and not w.endswith("ly")
        and w not in _WHENEVER
        and w not in ("first", "last")
    ]
    if nouns and not any(a.word in nouns for a in found):
        found.append(Asked(nouns[-1], "", tuple(nouns[:-1])))
    # A prepositional phrase of the question's own clause narrows what is asked to a
    # group, a condition or a time ("for a child", "in pregnancy", "after 6 pm"): an answer
    # whose sentences never say it answers another question. Any of its words will do
    # ("a man with a UTI": "man"); a phrase naming the subject is `unnamed_subject`'s.
    narrowed: set[str] = set()
    for i, word in enumerate(main):
        if i <= start or word not in _NARROWING:
            continue
        if word == "in" and i + 1 < len(main) and main[i + 1] in _OWNERS:
            continue  # "a sting stuck in my arm": where the asker's own thing is
        if i + 2 < len(main) and main[i + 1] not in _DETERMINERS and main[i + 2] == "of":
            continue  # "in charge of", "in front of": a preposition of three words
        if _incidental_phrase(main[i:]):
            continue
        j = i + 1
        while j < len(main) and main[j] in _DETERMINERS:
            j += 1
        phrase = []
        while j < len(main) and (term_set(main[j]) or _FIGURE_WORD.fullmatch(main[j])):
            if phrase and j + 1 < len(main) and main[j + 1] in _PARTICLES:
                break  # "stitches in a lip *come out*": the clause's verb, not the phrase's
            phrase.append(main[j])
            j += 1
        if phrase and phrase[0] in _ANYONE:
            continue  # "for someone on X", "after someone quits": a clause, not a group
        phrase = [w for w in phrase if w not in _ANYONE and w not in _WHENEVER]
        if not phrase or any(term_set(w) and term_set(w) <= name_terms for w in phrase):
            continue
        if any(a.word in phrase for a in found):
            continue
        if main[i - 1] == "or" and found and found[-1].word in narrowed:
            # "for treatment or for prevention": the answer may say either
            last = found.pop()
            found.append(Asked(last.word, "", (*last.alternatives, *phrase)))
            continue
        narrowed.add(phrase[0])
        found.append(Asked(phrase[0], "", tuple(phrase[1:])))
    # "How many people ...": the counted noun is the kind of thing asked, as "address" is
    # after "what is the email address"; the count is an instance of it and need not say it.
    counted = {i + 2 for i in range(len(main) - 2) if main[i : i + 2] == ["how", "many"]}
    for i, token in enumerate(main):
        if i in counted:
            continue
        if token in _ANYONE:
            continue  # "why could people see it": who, not the population
        if i > 0 and main[i - 1] in _OWNERS:
            continue  # "my husband has started X": the asker's own situation
        if i + 1 < len(main) and term_set(main[i + 1]) and not _relation_word(main[i + 1]):
            continue  # "the home testing kits": a modifier of the thing asked about
        if all(a.word != token for a in found) and _relation_word(token):
            found.append(Asked(token, ""))
    return found


def _relation_word(token: str) -> bool:
    """Whether `token` is a wording of one of `_relations`' relations ("born", "home")."""
    return any(relation_of(t) for t in term_set(token))


# Time-of-telling words after a demonstrative ("put in *this morning*", "work in *these
# days*") and fixed adverbials ("just *in case*", "*in the first place*"): a prepositional
# phrase saying when or how the asker speaks, not a case the answer is narrowed to.
_DEMONSTRATIVES = frozenset("this these that those".split())
_ADVERBIAL = re.compile(
    r"(?:in|for|after) (?:case|fact|general|particular|practice|total|short|future|all"
    r"|the (?:first place|end|meantime|old days|past|future|long run|long term)"
    r"|example|instance|sure|good|a while)\b"
)
_TIME_UNITS = r"(?:years?|months?|weeks?|days?|hours?|minutes?|while|long time)"
# "for a year", "for 3 weeks": how long the asker has been doing something.
_DURATION = re.compile(
    rf"for (?:a|an|one|several|many|some|a few|a couple of|\d+|{'|'.join(NUMBER_WORDS)})?"
    rf" ?{_TIME_UNITS}\b"
)


def _incidental_phrase(words: list[str]) -> bool:
    """Whether the prepositional phrase opening `words` narrows nothing asked.

    A demonstrative's time ("this morning", "these days"), a fixed adverbial ("in case",
    "in the first place") or a duration of the asker's situation ("for a year").
    """
    if len(words) > 1 and words[1] in _DEMONSTRATIVES:
        return True
    text = " ".join(words[:5])
    return bool(_ADVERBIAL.match(text) or _DURATION.match(text))


# Verbs that say no relation of their own ("When did it happen?", "Who has the key?",
# "When is the clinic held?", "Where is it located?").
_LIGHT_VERBS = frozenset(
    "be been being do does did done have has had get gets got make makes made go goes went"
    " happen happens happened take takes took come comes came give gives gave get getting"
    " feel hold holds held located situated based found".split()
)
_AUXILIARY_WORDS = _COPULA | _YES_NO_OPENERS | frozenset({"has", "have", "had"})


def asked_verbs(question: str, name_terms: frozenset[str] = frozenset()) -> list[Asked]:
    """The verb of a "when / where / who" question, which the answer must say it did.

    "When was the lifeboat last *launched*?", "Where did she *retire*?", "Who *chairs* the
    trust?": the verb names the asked event or role, and a sentence about another event of
    the same subject (the station *founded* in 1866, a *former* chair) does not answer. The
    verb ends a "when / where" question (before a particle: "close *down*"), follows "who",
    or ends what "how long does it take to" do ("start *working*"); a light verb ("happen",
    "do", "have") names nothing.
    """
    main, start = _question_clause(question)
    if len(main) < start + 3:
        return []
    wh, second = main[start], main[start + 1]
    verb = ""
    if wh in ("when", "where") and second in _AUXILIARY_WORDS:
        tail = main[start + 2 :]
        # "when can the bandage come off *and what about* the dressing": the first question
        tail = tail[: next((k for k, w in enumerate(tail) if w in _ASKING | {"and"}), None)]
        while tail and tail[-1] in _PARTICLES | _WHENEVER:
            tail = tail[:-1]
        if len(tail) >= 2:
            verb = tail[-1]
    elif wh == "who" and second not in _AUXILIARY_WORDS and second not in _DETERMINERS:
        verb = second
    elif wh == "how" and "take" in main[start + 2 :]:
        # "How long does it take to *start working*?": the event timed, not a wait or a gap.
        rest = main[main.index("take", start + 2) + 1 :]
        after = rest[1:] if rest[:1] == ["to"] else []  # not "take for X to ..."
        after = after[: next((k for k, w in enumerate(after) if not term_set(w)), None)]
        while after and after[-1] in _PARTICLES | _WHENEVER:
            after = after[:-1]
        # "to *get* better", "to *go*": a light verb's phrase says no event of its own.
        verb = after[-1] if after and after[0] not in _LIGHT_VERBS else ""
    if (
        not verb
        or verb in _LIGHT_VERBS
        or not term_set(verb)
        or term_set(verb) <= name_terms
        or _FIGURE_WORD.fullmatch(verb)
    ):
        return []
    return [Asked(verb, "")]


# Prepositions a question can end on ("what is it used *for*?").
_STRANDED = _PREPOSITIONS | frozenset({"with", "about", "as"})
# A verb's -ing form after a noun ("the coil *going* through").
_GERUND = re.compile(r"[a-z]{2,}ing")
# "What's the chemical *they* put on ...": a clause describing the asked kind, not its owner.
_PRONOUNS = frozenset("i you he she it we they".split())

# "What kind of exercise ...": the thing after "of" is the kind of the answer, not its owner.
_KINDS = frozenset("kind kinds type types sort sorts form forms".split())


def asked_of(question: str, name_terms: frozenset[str] = frozenset()) -> list[Asked]:
    """The thing a "what <attribute> of <thing>" question asks the attribute of.

    "What dose of *itraconazole* is used?", "What is the strength of *salicylic acid*
    cream?": a note giving the dose of another medicine of the same page does not answer.
    Each word of the thing must be said; names are the subject, checked by
    `unnamed_subject`.
    """
    main, start = _question_clause(question)
    if not main or main[start] not in ("what", "which"):
        return []
    j = start + 1
    while j < len(main) and (main[j] in _COPULA or main[j] in _DETERMINERS):
        j += 1
    head = j
    while j < len(main) and main[j] != "of" and term_set(main[j]) and j - head < 3:
        j += 1
    if j == head or j >= len(main) or main[j] != "of" or main[j - 1] in _KINDS:
        return []
    j += 1
    while j < len(main) and main[j] in _DETERMINERS:
        j += 1
    thing: list[str] = []
    while j < len(main) and term_set(main[j]) and main[j] not in _AUXILIARY_WORDS:
        if main[j] in _PREPOSITIONS or _PARTICIPLE.fullmatch(main[j]):
            break
        if thing and _GERUND.fullmatch(main[j]):
            break  # "the chances of the coil *going* through ...": the clause's verb
        thing.append(main[j])
        j += 1
    return [Asked(w, "") for w in thing if not term_set(w) <= name_terms and w not in _ANYONE]


def _own_sentences(draft: AnswerDraft, evidence: Evidence) -> list[Sentence]:
    """The evidence sentences the answer says or was read from."""
    flat = " ".join(f"{draft.answer} {draft.rationale.removeprefix(FROM)}".split())
    return [s for s in evidence.sentences if len(s.text) > 8 and " ".join(s.text.split()) in flat]


def qualifier_context(draft: AnswerDraft, evidence: Evidence, own: list[Sentence]) -> str:
    """The text that decides an answer: its sentences, their headings as written, titles.

    `own` are the answer's own sentences (`_own_sentences`). Unlike `_answer_context`, no
    sentence leading to a bridged document counts: a year or an age said on the way ("MP
    from 1880 to 1895") is not said of the answer.
    """
    parts = [f"{draft.answer} {draft.rationale.removeprefix(FROM)}"]
    for sentence in own:
        parts += [evidence.titles[sentence.doc], sentence.heading]
    parts += [evidence.titles[doc] for doc in evidence.positions(draft.cited_ids)]
    return " ".join(parts)


def uncovered(judge: Judge, draft: AnswerDraft, evidence: Evidence) -> str:
    """The question's qualifier (`_qualifiers`) the answer's deciding text does not cover.

    An age, a year or season, an extreme or a pair that the sentences deciding the answer
    never cover ("" if none); comparisons read each side's own value and are left alone.
    """
    if judge.shape.kind == "choice":
        return ""
    own = _own_sentences(draft, evidence)
    context = qualifier_context(draft, evidence, own)
    short = draft.short_answer.strip()
    clause = ""
    if short:
        holding = [s for s in own if short in s.text]
        parts = [p for s in holding for p in s.text.split(";") if short in p]
        parts += [t for s in holding for t in (evidence.titles[s.doc], s.heading)]
        clause = " ".join(parts)
    words = judge.shape.text.lower().split()
    verdict = judge.shape.kind == "yesno" or bool(words and words[0] in _YES_NO_OPENERS)
    return uncovered_qualifier(judge.shape.text, context, clause, verdict=verdict)


def _answer_context(
    judged: list[Judged], draft: AnswerDraft, evidence: Evidence, names: frozenset[str]
) -> str:
    """The text an answer says its relation in: its sentences, their headings and titles.

    The sentence a span was read from, the answer's own sentences, the section heading and
    the title of each (a table row's column header, a note's subject), and the sentence
    about the question's subject (`names`) that led to a bridged document ("born in
    Orlenby" for "the river of her birthplace").
    """
    own = _own_sentences(draft, evidence)
    parts = [f"{draft.answer} {draft.rationale.removeprefix(FROM)}"]
    for sentence in own:
        parts.append(evidence.titles[sentence.doc])
        parts.append(" ".join(sorted(sentence.section)))
    for doc in evidence.positions(draft.cited_ids):
        parts.append(evidence.titles[doc])
    for judgement in judged:
        link = judgement.scored.link
        if link is None or judgement.scored.sentence not in own:
            continue
        # The sentence leading there counts when it is about the question's subject
        # ("Maud was born in Marrowick"), not another person's note naming the place.
        about = link.terms | evidence.title_terms[link.doc]
        if not names or about & names:
            parts.append(link.text)
    return " ".join(parts)


def _meant(asked: Asked, said: str, context: str, judge: Judge) -> bool:
    """Whether the answer says `asked.word` in other words, by MiniLM.

    Either a word of the context reads as the same word (`PARAMS.relation_similarity`:
    "children" for "kids"), or, for a word of a "what is the <phrase>" question, the word
    draws its phrase towards the answer's sentence:
    "warning signs" is closer than "signs" to a list of symptoms, while "email address" is
    further than "address" from "Address: 4 Tanner's Row". Without MiniLM (no embedder,
    or an answer drafted when the retrieval budget is spent) only written words count.
    """
    written = sorted({w for w in re.findall(r"[a-z][a-z-]+", context.lower()) if term_set(w)})
    if not written:
        return False
    vectors = judge.vectors([asked.word, *written])
    if vectors is None:
        return False
    if float((vectors[1:] @ vectors[0]).max()) >= PARAMS.relation_similarity:
        return True
    if not asked.phrase:
        return False
    without = " ".join(w for w in asked.phrase.split() if w.lower() != asked.word)
    pulled = judge.vectors([asked.phrase, without, said])
    if pulled is None:
        return False
    return float(pulled[0] @ pulled[2]) - float(pulled[1] @ pulled[2]) > PARAMS.relation_pull


def unsaid_relation(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> str:
    """The word of the asked relation the answer's sentences never say ("" if none).

    "What is the practice's email address?" is not answered by "Address: 4 Tanner's Row",
    "When did he die?" not by the year he climbed a mountain, "What was the population in
    1908?" not by another year's count. The relation's words (`relation_words`) must each be
    said where the answer stands (`_answer_context`): written (`says_word`: inflections,
    relation wordings such as "born" for "birthplace", misspellings) or meant (`_meant`,
    by MiniLM). A comparison reads each side's own value and is left alone.
    """
    if judge.shape.kind == "choice":
        return ""
    asked = relation_words(judge.shape.text, judge.name_terms)
    asked += [
        extra
        for extra in (
            asked_verbs(judge.shape.text, judge.name_terms)
            + asked_of(judge.shape.text, judge.name_terms)
        )
        if all(extra.word not in (a.word, *a.alternatives) for a in asked)
    ]
    if not asked:
        return ""
    said = plain(
        f"{draft.rationale.removeprefix(FROM)}"
        if draft.rationale.startswith(FROM)
        else draft.answer
    )
    context = _answer_context(judged, draft, evidence, judge.name_terms)
    unsaid = _unsaid_in(asked, context, said, judge)
    if unsaid or draft.short_answer.strip() or (judged and judged[0].scored.link is not None):
        return unsaid
    # An answer of several sentences says the relation of the subject in one of them: "He
    # died at his house" in one person's note does not say where the engineer named in
    # the sentence before died.
    own = _own_sentences(draft, evidence)
    named = subjects(judge, evidence)
    if len(own) < 2 or not named:
        return ""
    about_subject = [
        s for s in own if not _unmentioned(named, _sentence_about(s, evidence), evidence)
    ]
    if not about_subject:
        return ""  # `unnamed_subject` reads the cited notes as a whole
    for sentence in about_subject:
        frame = f"{sentence.text} {sentence.heading} {evidence.titles[sentence.doc]}"
        if not _unsaid_in(asked, frame, plain(sentence.text), judge):
            return ""
    first = about_subject[0]
    frame = f"{first.text} {first.heading} {evidence.titles[first.doc]}"
    return _unsaid_in(asked, frame, plain(first.text), judge)


def _unsaid_in(asked: list[Asked], context: str, said: str, judge: Judge) -> str:
    """The first of the `asked` words `context` neither writes nor means ("" if none)."""
    context = f"{context} {judge.acronyms.spelled(context)}"  # "MIU": "minor injuries unit"
    for each in asked:
        words = (each.word, *each.alternatives)
        if not any(
            says_word(word, context) or _meant(Asked(word, each.phrase), said, context, judge)
            for word in words
        ):
            return " ".join(words)
    return ""


def _sentence_about(sentence: Sentence, evidence: Evidence) -> frozenset[str]:
    """What one sentence is about: its words, its heading, its note's title and lead lines."""
    doc = sentence.doc
    return (
        sentence.terms | sentence.section | evidence.title_terms[doc] | _lead_terms(evidence, doc)
    )


# Heads of "what is the <phrase>" that any answer of the asked kind instantiates: a dose
# says "300 mg", not "dose"; a first choice names the drug; a sentence telling what to do
# is the warning, advice or instruction asked for without saying so, and a list of
# complaints the signs or symptoms asked for.
_GENERIC_HEADS = frozenset(
    """dose doses dosage dosages level levels amount amounts number numbers value values
    figure name names thing things way ways kind type sort reason reasons difference best
    main first last next date year years time times day days answer option options choice
    choices plan advice treatment treatments rule rules step steps warning warnings caution
    precaution precautions instruction instructions recommendation recommendations guidance
    message point problem issue concern sign signs symptom symptoms feature features effect
    effects""".split()
)


def attribute_head(question: str, name_terms: frozenset[str] = frozenset()) -> str:
    """The noun a "what / who is the <phrase>" question asks the value of ("" if none).

    "What's the half-life of eplerenone?" asks eplerenone's *half-life*, "Who was the vicar
    of X?" X's *vicar*: the phrase's last word before its first function word. A generic
    head ("dose", "level", "name", "reason") is said by any answer of its kind and is left
    out, as are names (`name_terms`) and comparisons ("Which is older, A or B?"). So is a
    question whose wh-word is a stranded preposition's object ("What is X mistaken for?")
    or whose phrase a clause describes ("the chemical they put on it"): the answer is an
    instance of the kind asked, not an attribute of a subject.
    """
    main, start = _question_clause(question)
    opened = _wh_phrase(main, start)
    if not opened or not opened[0]:
        return ""
    if main[-1] in _STRANDED:
        return ""  # "What is X often mistaken for?": the wh-word is what it is mistaken for
    phrase, after = opened
    if after < len(main) and main[after] in _PRONOUNS:
        return ""  # "the chemical they put on it": the kind asked, named by what is done
    head = phrase[-1]
    if head in _GENERIC_HEADS or term_set(head) <= name_terms or _FIGURE_WORD.fullmatch(head):
        return ""
    return head


def absent_attribute(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> str:
    """The asked attribute (`attribute_head`) that the cited documents never say ("" if none).

    The corpus may name the subject and never the asked attribute: a note on a medicine that
    gives its enzyme and dose but no half-life, an article on a village that names its
    schoolmistress but no vicar. The head counts as said when the answer's sentences, their
    headings and titles write or mean it (as for `unsaid_relation`), or when any cited
    document writes it (a table's column, a later line naming it); written includes the
    words its kind is said with (`said_attribute`: "prognosis" or "survival" for an
    outlook, "mutations" for genetic changes).
    """
    if judge.shape.kind in ("choice", "yesno"):
        return ""
    head = attribute_head(judge.shape.text, judge.name_terms)
    if not head:
        return ""
    context = _answer_context(judged, draft, evidence, judge.name_terms)
    if said_attribute(head, context):
        return ""
    cited = " ".join(evidence.docs[d].page_content for d in evidence.positions(draft.cited_ids))
    if cited and said_attribute(head, cited):
        return ""
    said = plain(
        draft.rationale.removeprefix(FROM) if draft.rationale.startswith(FROM) else draft.answer
    )
    return "" if _meant(Asked(head, ""), said, context, judge) else head


# A length's dimension: the adjective a question asks with, the words a note gives it with.
_DIMENSIONS = {
    "deep": ("deep", "depth", "below"),
    "wide": ("wide", "width", "across", "broad", "breadth"),
    "broad": ("wide", "width", "across", "broad", "breadth"),
    "tall": ("tall", "high", "height", "above"),
    "high": ("tall", "high", "height", "above"),
    "thick": ("thick", "thickness"),
    # "How big?" asks an area or a size, which a length with its dimension is not.
    "big": ("big", "large", "size", "area", "square", "acre", "hectare", "km2", "cover"),
    "large": ("big", "large", "size", "area", "square", "acre", "hectare", "km2", "cover"),
    "long": ("long", "length"),
}
_LENGTH_UNIT = (
    r"(?:kilometres?|kilometers?|km|metres?|meters?|m|miles?|feet|foot|ft|yards?|cm|inches)"
)
_TAGGED_LENGTH = re.compile(
    rf"\d[\d,.]*\s*{_LENGTH_UNIT}\b(?:\s*\([^)]*\))?\s+"
    r"(deep|wide|broad|across|tall|high|long|thick|above|below"
    r"|in (?:depth|width|height|length))\b",
    re.I,
)


_LENGTH_FIGURE = re.compile(rf"\d[\d,.]*\s*{_LENGTH_UNIT}\b", re.I)


def other_dimension(question: str, answer: str) -> str:
    """The dimension the answer's lengths give when it is not the asked one ("" if none).

    "How deep is the drain?" is not answered by "12 metres wide" or "30 km long", "How long
    is the viaduct?" not by "28 m high": every
    length the answer gives with a dimension word names another dimension, and the answer
    never says the asked one ("deep", "depth").
    """
    match = re.match(
        r"^\s*how\s+(deep|wide|broad|tall|high|thick|big|large|long)\b", question, re.I
    )
    if match is None:
        return ""
    asked = match.group(1).lower()
    words = _DIMENSIONS[asked]
    lowered = answer.lower()
    if any(re.search(rf"\b{w}", lowered) for w in words):  # "highest", "covering"
        return ""
    found = list(_TAGGED_LENGTH.finditer(answer))
    tagged = [m.group(1).lower() for m in found]
    figures = {" ".join(f.split()) for f in _LENGTH_FIGURE.findall(answer)}
    measured = {
        " ".join(figure.group().split())
        for m in found
        if (figure := _LENGTH_FIGURE.match(m.group())) is not None
    }
    if asked == "long" and figures - measured:
        # "How long?" is often answered by a bare extent ("flows for 46 km"); only an
        # answer whose every length is another dimension ("28 m high") is not one.
        return ""
    return tagged[0] if tagged else ""
