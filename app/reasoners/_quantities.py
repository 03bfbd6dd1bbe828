"""The kind of quantity a question asks for, and whether a figure's unit is of that kind.

"How long should the course last?" asks for a duration: "5 days" answers it, "400 mg" (a
dose in the same sentence) does not. "What dose ...?" asks for a dose, "how much ...?" an
amount of anything but time (a later, narrower wording says which: "how much does it cost"
a price; "how much higher" a length), "how many people ...?" a count, "what blood pressure /
level / target ...?" a reading ("135/85 mmHg", "6.0 mmol/L"), "how high / deep / far ...?" a
length, "how far apart ...?" a separation in time or space, "what times ...?" a time of day
("1 pm to 5 pm"). Of several wordings, the one nearest the question's start decides ("what
dose ... at altitude" asks a dose); what a figure is counted per ("how much per dose") and a
condition ("... if the eGFR is 38") are not what is asked. `asks_measure` tells a question
whose asked phrase names a measured quantity ("what dose of X", "max dose of X?"): a figure
answers it. A figure is judged by the unit that follows its number (and range), hyphened
("a 21-day cycle") or after a scale word ("5 million cubic metres"): a figure whose unit is
of another kind is not the answer, whatever sentence holds it. A question whose kind is not
recognised accepts any figure, as before.
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
# The open end after a figure, part of it: "4 or more", "37.5 \u00b0C or above", "60 and over".
OPEN_END_RE = re.compile(
    r"\s+(?:or|and)\s+(?:more|above|over|higher|greater|less|below|under|lower|fewer)\b", re.I
)

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
        " puff puffs drop drops sachet sachets spray sprays patch patches".split()
    ),
    # "3 doses" counts doses: it answers "how many doses", not "what dose".
    "count": frozenset("dose doses".split()),
    "volume": frozenset("litre litres liter liters l gallon gallons cubic pint pints".split()),
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
    # How many times as much: "levels rise 8-fold".
    "factor": frozenset("fold".split()),
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

# "How much": an amount of anything but time (a dose, a weight, a sum of money, ...).
_ANY_AMOUNT = frozenset(
    {"dose", "mass", "percentage", "money", "length", "area", "volume", "factor"}
)
# A question asking for a time of day (not "what time of year").
_ASKS_CLOCK_RE = re.compile(
    r"\bwhat times?\b(?! of (?:the )?year)|\b(?:what|which) hours\b|\bopening (?:hours|times)\b"
)


_CLOCK = r"\d{1,2}(?:[.:]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)"
# A time of day, or a span of the day: "8am", "6:30pm", "1 pm to 5 pm", "9am to 12 noon".
CLOCK_RE = re.compile(
    rf"(?:\d{{1,2}}(?:[.:]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?\s*(?:to|-|\u2013|until|till)\s*"
    rf"(?:{_CLOCK}|(?:12\s+)?(?:noon|midday|midnight))|{_CLOCK})(?![a-z])",
    re.IGNORECASE,
)


def asks_clock_time(question: str) -> bool:
    """Whether the question asks for a time of day ("what times is the clinic?")."""
    return bool(_ASKS_CLOCK_RE.search(question.lower()))


# What the question asks for; the first matching wording decides. Each kind lists the unit
# kinds that answer it ("count" accepts a bare number or a unit of no other kind: "22 locks").
_ASKED: list[tuple[re.Pattern[str], frozenset[str]]] = [
    # A time of day: "what times is the clinic?", "opening hours", "until what time?".
    (_ASKS_CLOCK_RE, frozenset({"clock"})),
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
            r"|\bfor how long\b|\b(?:duration|how many times a|interval|intervals)\b"
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
        # A level is read in its units, or as a share or a factor it rises by ("8-fold").
        frozenset({"reading", "percentage", "factor"}),
    ),
    (
        re.compile(r"\b(?:doses?|dosage)\b|\b(?:most|maximum|minimum|least) \w+ (?:can|may)"),
        frozenset({"dose"}),
    ),
    # "How much higher / longer / warmer": the comparative names the dimension.
    (
        re.compile(r"\bhow much (?:higher|taller|deeper|further|farther|lower|wider|narrower)\b"),
        frozenset({"length"}),
    ),
    (
        re.compile(r"\bhow much (?:longer|shorter|later|earlier|sooner)\b"),
        frozenset({"duration", "length"}),
    ),
    (re.compile(r"\bhow much (?:heavier|lighter)\b"), frozenset({"mass"})),
    (re.compile(r"\bhow much (?:hotter|warmer|colder|cooler)\b"), frozenset({"temperature"})),
    # "How much" is an amount of anything but time: a dose, a weight, a share, a sum of
    # money ("5 million"), a length or an area ("how much fencing", "how much land"); not a
    # count of things ("after 3 cycles").
    (re.compile(r"\bhow much\b"), _ANY_AMOUNT),
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


# Nouns naming a measured quantity: "what dose ...", "the starting dose of X?", "what
# temperature ...", "what's the price of ...".
_MEASURED_NOUNS = (
    r"(?:doses?|dosages?|temperature|price|cost|fee|fare|levels?|reading|pressure|score|age"
    r"|weight|height|length|depth|size|area|population|distance|interval|half[- ]life|limit"
    r"|max|maximum|minimum|amount|range|target|threshold|value|percentage|speed|gradient)"
)
_ASKS_MEASURE_RE = re.compile(
    rf"^\W*(?:[\w'-]+\W+){{0,8}}?what(?:'s|s|\s+is|\s+was|\s+are|\s+were)?"
    rf"\s+(?:(?:the|its|their|a|an|your|my)\s+)?(?:[\w-]+\s+){{0,2}}?{_MEASURED_NOUNS}\b"
    rf"|^(?!.*\b(?:who|whom|whose|what|whats|which|where|when|why|how)\b).*\b{_MEASURED_NOUNS}\b"
)


def asks_measure(question: str) -> bool:
    """Whether the question's asked phrase names a measured quantity: a figure answers it.

    "What dose of X ...?", "what's the starting dose of X", "what temperature counts as a
    fever?", and a question with no wh-word naming one ("max dose of X on Y?", "population
    of Z 2021").
    """
    return bool(_ASKS_MEASURE_RE.search(question.lower()))


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
    # the main clause's wording decides, the whole question's only when it names none. What
    # a figure is counted per ("how much per dose", "each night") is not what is asked.
    main = _PER_RE.sub("", _CONDITION_RE.sub("", lowered))
    for text in (main, _PER_RE.sub("", lowered)) if main != lowered else (lowered,):
        # The wording nearest the question's start decides ("what dose ... for altitude
        # sickness" asks a dose); of wordings starting together, the first listed.
        found = [
            (match.start(), order, kinds)
            for order, (pattern, kinds) in enumerate(_ASKED)
            if (match := pattern.search(text)) is not None
        ]
        if found:
            found.sort(key=lambda f: (f[0], f[1]))
            kinds = found[0][2]
            if kinds == _ANY_AMOUNT:
                # "How much does X cost?": a later, narrower wording says which amount.
                narrower = [f[2] & kinds for f in found[1:] if f[2] & kinds]
                kinds = narrower[0] if narrower else kinds
            return kinds
    return None


# What a figure is counted per: "per dose", "each night", "a week" after "how much".
_PER_RE = re.compile(r"\b(?:per|each)\s+\w+")


# A conditional clause after the question's main clause: "if ...", "unless ...", "when ...".
_CONDITION_RE = re.compile(r"(?<=\w)[ ,]+(?:if|unless|once|provided|when|whenever)\b.*$")


def number_position(sentence: str, number: str) -> int:
    """Where `number` stands in `sentence` as a number of its own, or -1.

    "2" of "2 days" is not the "2" inside "125 mg", nor "4" the one of "4AT": a digit or a
    decimal point next to it makes it part of another number, a letter before it or a
    capital after it part of a name.
    """
    if not number[:1].isdigit():
        return sentence.find(number)
    match = re.search(rf"(?<![\w.,]){re.escape(number)}(?![\dA-Z]|[.,]\d)", sentence)
    return match.start() if match else sentence.find(number)


def unit_kind(figure_text: str) -> QuantityKind | None:
    """The kind of quantity a figure's unit measures, or None (no unit, or an unknown one).

    `figure_text` is a figure as `_policy.figure` reads it: an optional qualifier, the
    number and its range, then the unit ("at least 36 hours", "135/85 mmHg", "2.5 mg twice
    a day").
    """
    match = _FIGURE_RE.search(figure_text)
    if match is None:
        return None
    rest = match.group(1).strip().lower().removeprefix("-")  # "a 21-day cycle"
    # A scale word is part of the number: "5 million cubic metres" is a volume.
    rest = re.sub(r"^(?:million|billion|thousand|hundred)\s+(?=[a-z\u00b0%])", "", rest)
    if not rest:
        return None
    if rest.startswith("%"):
        return "percentage"
    if re.match(r"(?:[.:]\d\d\s*)?(?:am|pm|a\.m\.|p\.m\.)(?![a-z])|[.:]\d\d\b", rest):
        return "clock"
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
    "CLOCK_RE",
    "FIGURE_QUALIFIERS",
    "FIGURE_QUALIFIER_PATTERN",
    "OPEN_END_RE",
    "QuantityKind",
    "asked_quantity",
    "asks_clock_time",
    "asks_measure",
    "counted_figure",
    "figure_answers",
    "is_money",
    "measure_words",
    "number_position",
    "offset_not_length",
    "unit_kind",
]
