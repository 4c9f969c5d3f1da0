"""Short strings as the programs built on python-crfsuite tag them: addresses and names.

The most used programs on python-crfsuite parse short strings (postal
addresses, person names, ingredient lines: 5 to 10 tokens) with a featurizer
that returns, per token, a dict of about ten str, bool and number values and
nested dicts for the previous and the next token, and call
``Tagger.tag(features)`` once per string.  :func:`strings` makes such strings
with their labels (a seeded generator, so both libraries see the same ones),
:func:`featurize` the per-token dicts.
"""

from __future__ import annotations

import random

NUMBERS = [str(n) for n in range(1, 400)] + ["12A", "7B", "1100", "221B"]
STREETS = ["Main", "Oak", "Elm", "Pine", "Maple", "Cedar", "Lake", "Hill", "Park", "Mill",
           "Church", "High", "Station", "Victoria", "Green", "Spring", "River", "King",
           "Queen", "Market", "North", "South", "West", "Washington", "Lincoln", "Jefferson",
           "Sunset", "Ridge", "Forest", "Meadow", "Madison", "Franklin", "Clinton", "Salem",
           "Dover", "Kingston"]
KINDS = ["St", "St.", "Street", "Ave", "Avenue", "Rd", "Road", "Blvd", "Ln", "Lane", "Dr",
         "Drive", "Way", "Ct", "Pl"]
UNITS = ["Apt", "Suite", "Unit", "#"]
CITIES = ["Springfield", "Riverton", "Fairview", "Salem", "Georgetown", "Madison", "Franklin",
          "Clinton", "Arlington", "Ashland", "Dover", "Milton", "Newport", "Oxford", "Bristol",
          "Burlington", "Kingston", "Manchester"]
STATES = ["CA", "NY", "TX", "WA", "IL", "OH", "MA", "OR", "GA", "NC", "MI", "PA"]
GIVEN = ["John", "Mary", "James", "Anna", "Robert", "Linda", "Michael", "Sarah", "David",
         "Laura", "Ana", "Luis", "Wei", "Mei", "Olga", "Ivan", "Fatima", "Omar", "Lincoln",
         "Jefferson", "Madison", "Taylor", "Lee", "Morgan"]
SURNAMES = ["Smith", "Johnson", "Garcia", "Miller", "Davis", "Lopez", "Wilson", "Anderson",
            "Taylor", "Moore", "Martin", "Lee", "Chen", "Wang", "Ivanova", "Petrov", "Khan"]
TITLES = ["Mr", "Mr.", "Mrs", "Ms.", "Dr", "Dr.", "Prof."]
SUFFIXES = ["Jr", "Jr.", "Sr", "III", "PhD"]


def _address(rng: random.Random) -> tuple[list[str], list[str]]:
    words = [rng.choice(NUMBERS)]
    labels = ["AddressNumber"]
    for _ in range(rng.choice([1, 1, 1, 2])):
        words.append(rng.choice(STREETS) if rng.random() < 0.85
                     else f"{rng.randint(1, 60)}{rng.choice(['st', 'nd', 'rd', 'th'])}")
        labels.append("StreetName")
    words.append(rng.choice(KINDS))
    labels.append("StreetNamePostType")
    if rng.random() < 0.25:
        words += [rng.choice(UNITS), str(rng.randint(1, 40))]
        labels += ["OccupancyType", "OccupancyIdentifier"]
    words[-1] += ","
    if rng.random() < 0.85:
        words.append(rng.choice(CITIES) + ",")
        labels.append("PlaceName")
    words.append(rng.choice(STATES))
    labels.append("StateName")
    if rng.random() < 0.5:
        words.append(f"{rng.randint(10000, 99999)}")
        labels.append("ZipCode")
    return words, labels


def _name(rng: random.Random) -> tuple[list[str], list[str]]:
    words, labels = [], []
    if rng.random() < 0.3:
        words.append(rng.choice(TITLES))
        labels.append("PrefixMarital")
    if rng.random() < 0.3:  # "Surname, Given"
        words += [rng.choice(SURNAMES + GIVEN) + ",", rng.choice(GIVEN)]
        labels += ["Surname", "GivenName"]
        return words, labels
    words.append(rng.choice(GIVEN))
    labels.append("GivenName")
    if rng.random() < 0.3:
        words.append(rng.choice(GIVEN)[0] + ".")
        labels.append("MiddleInitial")
    words.append(rng.choice(SURNAMES + GIVEN[-6:]))
    labels.append("Surname")
    if rng.random() < 0.2:
        words.append(rng.choice(SUFFIXES))
        labels.append("SuffixGenerational")
    return words, labels


def _noisy(rng: random.Random, words: list[str]) -> list[str]:
    """What typed strings do: commas left out, words in lower or upper case."""
    out = []
    for w in words:
        if w.endswith(",") and rng.random() < 0.4:
            w = w[:-1]
        if rng.random() < 0.15:
            w = w.lower() if rng.random() < 0.7 else w.upper()
        out.append(w)
    return out


def strings(n: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """``n`` address-like and name-like token lists (about 2:1) with their labels.

    Street, city and given names overlap (Madison, Lincoln, Salem, ...), and
    some strings lose their commas or their case, so that the labels take
    the context to get right.
    """
    rng = random.Random(seed)
    words, labels = [], []
    for _ in range(n):
        w, lab = _address(rng) if rng.random() < 0.67 else _name(rng)
        words.append(_noisy(rng, w))
        labels.append(lab)
    return words, labels


def _token(word: str) -> dict:
    lower = word.lower().strip(".,")
    return {"lower": lower, "is_title": word.istitle(), "is_upper": word.isupper(),
            "is_digit": word.isdigit(), "has_digit": any(c.isdigit() for c in word),
            "length": len(word), "ends_comma": word.endswith(","),
            "has_period": "." in word, "prefix": lower[:3], "suffix": lower[-3:]}


def featurize(words: list[str]) -> list[dict]:
    """One dict per token: ten values of the token and nested ones of its neighbours."""
    base = [_token(w) for w in words]
    out = []
    for i, feats in enumerate(base):
        item = {"bias": 1.0, **feats}
        if i:
            item["previous"] = {k: base[i - 1][k] for k in ("lower", "is_title", "ends_comma")}
        else:
            item["address.start"] = True
        if i + 1 < len(base):
            item["next"] = {k: base[i + 1][k] for k in ("lower", "is_title", "is_digit")}
        else:
            item["address.end"] = True
        out.append(item)
    return out
