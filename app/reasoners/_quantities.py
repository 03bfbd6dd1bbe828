"""The kind of quantity a question asks for, and whether a figure's unit is of that kind.

"How long should the course last?" asks for a duration: "5 days" answers it, "400 mg" (a
dose in the same sentence) does not. "What dose ...?" and "how much ...?" ask for a dose or an
amount, "how many people ...?" a count, "what blood pressure / level / target ...?" a reading
("135/85 mmHg", "6.0 mmol/L"), "how high / deep / far ...?" a length, "how far apart ...?"
a separation in time or space. A figure is judged by
the unit that follows its number (and range): a figure whose unit is of another kind is not
the answer, whatever sentence holds it. A question whose kind is not recognised accepts any
figure, as before.
"""

from __future__ import annotations

import re

QuantityKind = str

# Words that qualify a figure ("at least 6 weeks", "up to 4 weeks", "below 130/80"): one list
# for reading a figure with its qualifier (`_policy.figure`, `_shapes.duration_span`), for
# telling that a short answer opens with a figure (`_spans.span_type`) and for cutting it off
# a short answer (`counted_figure`). Longest first, so "no more than" wins over "more than".
FIGURE_QUALIFIERS: tuple[str, ...] = tuple(
    sorted(
        (
            "at least|at most|no more than|no less than|more than|less than|fewer than"
            "|just over|just under|up to|about|around|over|under|below|above|within|between"
            "|approximately|roughly|nearly|almost|some"
        ).split("|"),
        key=len,
        reverse=True,
    )
)
FIGURE_QUALIFIER_PATTERN = "|".join(q.replace(" ", r"\s+") for q in FIGURE_QUALIFIERS)

# Units, by the kind of quantity they measure (lower case; matched on the unit's first word).
_UNIT_KINDS: dict[str, frozenset[str]] = {
    "duration": frozenset(
        "second seconds sec secs minute minutes min mins hour hours hr hrs h day days week"
        " weeks wk wks month months year years yr yrs night nights fortnight fortnights"
        " decade decades century centuries".split()
    ),
    "dose": frozenset(
        "mg milligram milligrams milligramme milligrammes g gram grams gramme grammes mcg"
        " microgram micrograms microgramme microgrammes \u00b5g \u03bcg ug ml millilitre"
        " millilitres milliliter milliliters unit units iu tablet tablets capsule capsules"
        " puff puffs drop drops sachet sachets dose doses spray sprays patch patches".split()
    ),
    "length": frozenset(
        "km kilometre kilometres kilometer kilometers m metre metres meter meters mile miles"
        " nautical"
        " ft foot feet cm centimetre centimetres mm millimetre millimetres yard yards".split()
    ),
    "mass": frozenset(
        "kg kilogram kilograms kilogramme kilogrammes tonne tonnes ton tons lb lbs pound"
        " pounds stone".split()
    ),
    # A share, in per cent or as a fraction ("two thirds", "a quarter").
    "percentage": frozenset("% percent per third thirds quarter quarters half halves".split()),
    # How often, not how much or how long: "three times a day".
    "frequency": frozenset("times".split()),
    "area": frozenset(
        "hectare hectares ha acre acres km2 km\u00b2 m2 m\u00b2 square sq sq.".split()
    ),
    "temperature": frozenset("\u00b0c \u00b0f degree degrees celsius fahrenheit".split()),
    "rate": frozenset("beats beat bpm breaths breath".split()),
}
# Words after a number that make it a sum of money ("5 million", "300 guineas"); a currency
# sign before it ("£48,000") does too.
_MONEY_WORDS = frozenset(
    "pound pounds dollar dollars euro euros shilling shillings guinea guineas pence penny"
    " crowns million millions billion thousand".split()
)
_CURRENCY_RE = re.compile(r"[£$€¥]\s*\d")
# Readings are measured in compound units ("mmHg", "mmol/L", "L/min"); a mass per body
# weight or per day ("mg/kg", "mg/day") is a dose.
_READING_UNITS = frozenset("mmhg mmol micromol \u00b5mol \u03bcmol nmol pmol iu/l".split())
_DOSE_PER_RE = re.compile(r"^(?:mg|g|mcg|\u00b5g|\u03bcg|ml|units?)/(?:kg|day|d|dose|week)\b")

# What the question asks for; the first matching wording decides. Each kind lists the unit
# kinds that answer it ("count" accepts a bare number or a unit of no other kind: "22 locks").
_ASKED: list[tuple[re.Pattern[str], frozenset[str]]] = [
    (re.compile(r"\bhow many times\b"), frozenset({"duration", "frequency", "count"})),
    (re.compile(r"\bhow (?:often|frequently)\b"), frozenset({"duration", "frequency"})),
    (re.compile(r"\bhow old\b|\bwhat age\b|\bat what age\b"), frozenset({"age"})),
    (
        re.compile(r"\b(?:what|which) (?:percentage|percent|proportion|share)\b|\bwhat %"),
        frozenset({"percentage"}),
    ),
    (
        re.compile(
            r"\bhow (?:soon|often|frequently)\b|\bhow long (?:after|before|until|for|should"
            r"|does|do|did|will|can|must|is the course|is a course|is the treatment)\b"
            r"|\bfor how long\b|\b(?:duration|how many times a)\b"
        ),
        frozenset({"duration"}),
    ),
    # "How far apart" asks for a separation, in time ("4 hours apart") or in space; "how
    # far back" asks since when, no length.
    (re.compile(r"\bhow (?:far|long) apart\b"), frozenset({"duration", "length"})),
    (
        re.compile(
            r"\bhow (?:high|tall|deep|far(?! back)|wide)\b|\b(?:height|depth|distance|elevation"
            r"|altitude|width)\b"
        ),
        frozenset({"length"}),
    ),
    (re.compile(r"\bhow long\b|\blength\b"), frozenset({"duration", "length"})),
    (re.compile(r"\btemperature\b|\bfever\b"), frozenset({"temperature", "reading"})),
    # A rate is counted per minute ("over 100 a minute", "50 beats per minute"); a pressure
    # in mmHg read from the same note is another reading.
    (
        re.compile(r"\b(?:heart|pulse|respiratory|breathing) rate\b|\bpulse\b"),
        frozenset({"rate"}),
    ),
    # A sum of money ("£48,000", "5 million pounds"), not a count of anything else.
    (
        re.compile(
            r"\b(?:cost|costs|costing|price|priced|paid|spent|fee|fees|fare|fares|budget)\b"
        ),
        frozenset({"money"}),
    ),
    (
        re.compile(
            r"\b(?:blood pressure|bp|pressure|level|levels|reading|readings|hba1c|inr"
            r"|cholesterol|concentration|peak flow|saturation|egfr|score)\b"
        ),
        frozenset({"reading", "percentage"}),
    ),
    (
        re.compile(r"\b(?:doses?|dosage)\b|\b(?:most|maximum|minimum|least) \w+ (?:can|may)"),
        frozenset({"dose"}),
    ),
    # "How much" is an amount of anything but time or length: a dose, a weight, a share,
    # or a sum of money ("5 million"); not a count of things ("after 3 cycles").
    (re.compile(r"\bhow much\b"), frozenset({"dose", "mass", "percentage", "money"})),
    (
        re.compile(r"\bhow many\b|\bpopulation\b|\bnumber of\b"),
        frozenset({"count"}),
    ),
]


# A number in digits or words, its range ("6 to 8", "135/85", "three to five"), then the rest.
_NUMBER = (
    r"(?:\d(?:[\d.,]*\d)?|(?<![a-z])(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|twenty|thirty|forty|fifty|hundred|a few|several)\b)"
)
_FIGURE_RE = re.compile(
    rf"{_NUMBER}\s*(?:(?:to|-|\u2013|/|and|or)\s*{_NUMBER}\s*)*(.*)$", re.IGNORECASE
)


# Words of a question that name the measured quantity itself ("how tall", "the half-life",
# "the population"): a sentence giving a figure of the asked kind says them with its figure.
_MEASURE_RE = re.compile(
    r"\bhow (tall|high|long|big|large|deep|wide|far(?! back)|heavy|old|often|soon)\b"
    r"|\b(size|area|height|length|depth|width|distance|weight|population|dose|dosage"
    r"|half[- ]life|temperature|age)\b"
)


def measure_words(question: str) -> str:
    """The question's words naming the quantity it asks for ("tall", "half-life"), joined."""
    return " ".join(m.group(m.lastindex or 0) for m in _MEASURE_RE.finditer(question.lower()))


def asked_quantity(question: str) -> frozenset[QuantityKind] | None:
    """The kinds of quantity that answer `question`, or None when any figure may.

    "How many <unit>?" asks for that unit's kind ("how many acres": an area, "how many
    weeks": a duration), whatever else the question says.
    """
    lowered = question.lower()
    counted = re.search(r"\bhow many (?:more |extra )?([a-z]+)", lowered)
    if counted is not None:
        for kind, units in _UNIT_KINDS.items():
            if kind not in ("percentage", "frequency") and counted.group(1) in units:
                return frozenset({kind})
    # A condition ("... dose if the eGFR is 38") names a quantity that is given, not asked:
    # the main clause's wording decides, the whole question's only when it names none.
    main = _CONDITION_RE.sub("", lowered)
    for text in (main, lowered) if main != lowered else (lowered,):
        for pattern, kinds in _ASKED:
            if pattern.search(text):
                return kinds
    return None


# A conditional clause after the question's main clause: "if ...", "unless ...", "when ...".
_CONDITION_RE = re.compile(r"(?<=\w)[ ,]+(?:if|unless|once|provided|when|whenever)\b.*$")


def unit_kind(figure_text: str) -> QuantityKind | None:
    """The kind of quantity a figure's unit measures, or None (no unit, or an unknown one).

    `figure_text` is a figure as `_policy.figure` reads it: an optional qualifier, the
    number and its range, then the unit ("at least 36 hours", "135/85 mmHg", "2.5 mg twice
    a day").
    """
    match = _FIGURE_RE.search(figure_text)
    if match is None:
        return None
    rest = match.group(1).strip().lower()
    if not rest:
        return None
    if rest.startswith("%"):
        return "percentage"
    if _DOSE_PER_RE.match(rest):
        return "dose"
    first = re.split(r"[\s,;()]+", rest, maxsplit=1)[0]
    if "/" in first or first.split("/")[0] in _READING_UNITS:
        return "reading"
    for kind, units in _UNIT_KINDS.items():
        if first in units:
            return kind
    return None


def figure_answers(asked: frozenset[QuantityKind] | None, figure_text: str) -> bool:
    """Whether a figure (with its unit, if any) is of a kind the question asks for."""
    if asked is None:
        return True
    if "money" in asked and is_money(figure_text):
        return True
    kind = unit_kind(figure_text)
    if kind == "reading" and "rate" in asked:
        # "/min" is a rate; a pressure ("under 90 mmHg") is not.
        return "/min" in figure_text.lower()
    if kind is None:
        # A bare number or a unit of no known kind ("22 locks", "48,300 residents").
        return bool(asked & {"count", "age", "reading", "rate"})
    if kind == "duration" and "age" in asked:
        return True  # "41 years" old
    return kind in asked


def is_money(figure_text: str) -> bool:
    """Whether a figure is a sum of money: a currency sign before it or a money word after."""
    if _CURRENCY_RE.search(figure_text):
        return True
    match = _FIGURE_RE.search(figure_text)
    rest = match.group(1).strip().lower() if match else ""
    return bool(rest) and re.split(r"[\s,;()]+", rest, maxsplit=1)[0] in _MONEY_WORDS


_QUALIFIER_RE = re.compile(rf"^(?:{FIGURE_QUALIFIER_PATTERN})\s+(?=\d)", re.IGNORECASE)


def counted_figure(question: str, figure_text: str) -> str:
    """The figure as a short answer: its number and unit, without qualifier or counted noun.

    A qualifier ("more than 60", "about 5 km") belongs to the sentence the figure is read
    from, which the answer keeps; the short answer is the figure itself ("60", "5 km").
    "How many victories did she have?" -> "44 victories" reads "44": the question says what
    is counted. Any other unit stays ("18 km", "5 days").
    """
    stripped = _QUALIFIER_RE.sub("", figure_text.strip())
    if re.match(r"between\s", figure_text.strip(), re.IGNORECASE):
        stripped = stripped.replace(" and ", " to ", 1)  # "between 5 and 10 mg" -> "5 to 10 mg"
    figure_text = stripped
    lowered = question.lower()
    match = re.search(r"\bhow many (?:more |extra )?([a-z]+)", lowered)
    if match is None:
        return figure_text
    noun = match.group(1)
    words = figure_text.split()
    if len(words) >= 2 and words[-1].lower().rstrip("s") == noun.rstrip("s"):
        return " ".join(words[:-1])
    return figure_text


# A stretch of time that places something before or after another ("one hour before bed",
# "2 weeks after the last dose") is a when, not a how long.
_OFFSET_RE = re.compile(r"\s*(?:before|after|ago|earlier|later|beforehand|afterwards)\b", re.I)
_ASKS_OFFSET_RE = re.compile(
    r"\b(?:before|after|until|since|ago|apart|prior|soon|when|stop|stopped|start|started)\b"
)


def offset_not_length(question: str, sentence: str, figure_end: int) -> bool:
    """Whether the figure ending at `figure_end` is an offset, and the question asks a length.

    "How long do we give Dorvex?" is not answered by "one hour before bed" but by "a course
    lasts 5 weeks"; "How long before the test ...?" is answered by an offset.
    """
    asked = asked_quantity(question)
    if asked is None or "duration" not in asked or _ASKS_OFFSET_RE.search(question.lower()):
        return False
    return bool(_OFFSET_RE.match(sentence, figure_end))


__all__ = [
    "FIGURE_QUALIFIERS",
    "FIGURE_QUALIFIER_PATTERN",
    "QuantityKind",
    "asked_quantity",
    "counted_figure",
    "figure_answers",
    "is_money",
    "measure_words",
    "offset_not_length",
    "unit_kind",
]
