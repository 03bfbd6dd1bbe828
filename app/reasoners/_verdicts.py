"""Attribute readers for yes/no "same ..." questions: nationality and short descriptions."""

from __future__ import annotations

import re

_DEMONYMS = {
    "afghan": "afghanistan",
    "albanian": "albania",
    "algerian": "algeria",
    "american": "united states",
    "argentine": "argentina",
    "argentinian": "argentina",
    "armenian": "armenia",
    "australian": "australia",
    "austrian": "austria",
    "belgian": "belgium",
    "brazilian": "brazil",
    "british": "united kingdom",
    "english": "united kingdom",
    "scottish": "united kingdom",
    "welsh": "united kingdom",
    "bulgarian": "bulgaria",
    "canadian": "canada",
    "chilean": "chile",
    "chinese": "china",
    "colombian": "colombia",
    "croatian": "croatia",
    "cuban": "cuba",
    "czech": "czech republic",
    "danish": "denmark",
    "dutch": "netherlands",
    "egyptian": "egypt",
    "estonian": "estonia",
    "filipino": "philippines",
    "finnish": "finland",
    "french": "france",
    "german": "germany",
    "greek": "greece",
    "hungarian": "hungary",
    "icelandic": "iceland",
    "indian": "india",
    "indonesian": "indonesia",
    "iranian": "iran",
    "iraqi": "iraq",
    "irish": "ireland",
    "israeli": "israel",
    "italian": "italy",
    "jamaican": "jamaica",
    "japanese": "japan",
    "korean": "korea",
    "latvian": "latvia",
    "lebanese": "lebanon",
    "lithuanian": "lithuania",
    "malaysian": "malaysia",
    "mexican": "mexico",
    "moroccan": "morocco",
    "nigerian": "nigeria",
    "norwegian": "norway",
    "pakistani": "pakistan",
    "persian": "iran",
    "peruvian": "peru",
    "polish": "poland",
    "portuguese": "portugal",
    "romanian": "romania",
    "russian": "russia",
    "serbian": "serbia",
    "singaporean": "singapore",
    "slovak": "slovakia",
    "slovenian": "slovenia",
    "soviet": "russia",
    "spanish": "spain",
    "swedish": "sweden",
    "swiss": "switzerland",
    "taiwanese": "taiwan",
    "thai": "thailand",
    "turkish": "turkey",
    "ukrainian": "ukraine",
    "venezuelan": "venezuela",
    "vietnamese": "vietnam",
    "zealander": "new zealand",
}
_COUNTRIES = {country: country for country in set(_DEMONYMS.values())}
_DESCRIPTION_RE = re.compile(
    r"\b(?:is|was|are|were)\s+(?:a|an|the|one of the)\s+(.+?)"
    r"(?=[,;:()]|\.\s|\.$|\s(?:that|which|who|whose|in|from|by|based|located|founded|with|on|of"
    r"|for|and|at|to|where|known|best)\s|$)"
)
_DESCRIPTION_STOP = frozenset("a an the former current american british".split())


def is_demonym(text: str) -> bool:
    """Whether `text` is only a nationality adjective ("American", "Danish")."""
    return text.lower().strip() in _DEMONYMS


def nationalities(text: str) -> frozenset[str]:
    """Countries named or implied (by demonym) in `text`, first mention only.

    The first nationality in a lead sentence is the subject's own; later ones are often
    places they worked or people they worked with.
    """
    lowered = text.lower()
    found: list[tuple[int, str]] = []
    for word, country in _DEMONYMS.items():
        match = re.search(rf"\b{word}\b", lowered)
        if match:
            found.append((match.start(), country))
    for country in _COUNTRIES:
        match = re.search(rf"\b{re.escape(country)}\b", lowered)
        if match:
            found.append((match.start(), country))
    if not found:
        return frozenset()
    return frozenset({min(found)[1]})


def descriptor(text: str) -> frozenset[str]:
    """Words of the first "is a ..." description in `text`, without numbers or nationalities."""
    match = _DESCRIPTION_RE.search(text)
    if not match:
        return frozenset()
    tokens = re.findall(r"[a-z][a-z\-]*", match.group(1).lower())
    return frozenset(
        t for t in tokens if t not in _DESCRIPTION_STOP and t not in _DEMONYMS and len(t) > 1
    )
