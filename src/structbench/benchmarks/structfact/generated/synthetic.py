"""A fictional world as tables (``tables=synthetic``): no download, and facts no model has seen.

The paper's StructFact-Unseen asks questions over data newer than the models' training; invented
countries, cities and athletes go one step further: no answer can be recalled, only read from the
evidence. The world is drawn from a seeded generator (``WORLD_SEED``), so it is the same on every
machine; the questions drawn from it still follow the run's ``--seed``.

Three tables in one database, linked the way the generator's profiles find foreign keys (the column
named after the target table holds its names): ``country`` (continent, capital, population, area in
km², independence date), ``city`` (country, population, founding year, latitude, longitude) and
``athlete`` (country, sport, medal counts, birth date).
"""

from __future__ import annotations

import datetime
import random

from structbench.benchmarks.structfact.generated.source_table import SourceTable, make_table

WORLD_SEED = 20251124
SOURCE = "synthetic/world"

_ONSETS = ("b", "br", "d", "dr", "f", "g", "k", "kr", "l", "m", "n", "p", "r", "s", "st", "t", "th", "v", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io")
_CODAS = ("", "", "n", "r", "s", "l", "th", "nd", "sk")
_COUNTRY_ENDINGS = ("ia", "land", "stan", "onia", "ar", "eth")
_CONTINENTS = ("Norvessa", "Austral Rim", "Celadon", "Ostmarch", "Sunreach")
_SPORTS = ("fencing", "rowing", "archery", "judo", "cycling", "diving")
_FIRST_NAMES = ("Ada", "Bram", "Cora", "Dov", "Elin", "Faro", "Gita", "Hale", "Isko", "Juna", "Kell", "Lior",
                "Mira", "Nilo", "Oona", "Pell", "Quin", "Rasa", "Sten", "Tova", "Ulla", "Vero", "Wim", "Yara")


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _names(rng: random.Random, count: int, make: object, taken: set[str]) -> list[str]:
    """``count`` distinct names from ``make`` (a callable of ``rng``), none already ``taken``."""
    out: list[str] = []
    while len(out) < count:
        name = make(rng)  # type: ignore[operator]
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def _date(rng: random.Random, first: int, last: int) -> str:
    day = datetime.date(first, 1, 1) + datetime.timedelta(days=rng.randrange((last - first) * 365))
    return f"{day:%B} {day.day}, {day.year}"


def synthetic_tables(countries: int = 24, cities: int = 72, athletes: int = 96) -> list[SourceTable]:
    """The fictional world's three tables (the same on every call)."""
    rng = random.Random(WORLD_SEED)
    taken: set[str] = set()
    country_names = _names(rng, countries, lambda r: (_syllable(r) + r.choice(_COUNTRY_ENDINGS)).title(), taken)
    city_names = _names(rng, cities, lambda r: (_syllable(r) + _syllable(r)).title(), taken)
    capitals = city_names[:countries]
    country_of_city = country_names + [rng.choice(country_names) for _ in city_names[countries:]]
    country_rows = [
        [name, rng.choice(_CONTINENTS), capital, f"{rng.randrange(200_000, 90_000_000):,}",
         f"{rng.randrange(2_000, 1_900_000):,}", _date(rng, 1790, 1995)]
        for name, capital in zip(country_names, capitals, strict=True)
    ]
    city_rows = [
        [name, country, f"{rng.randrange(20_000, 9_000_000):,}", str(rng.randrange(900, 1950)),
         f"{rng.uniform(-60, 70):.2f}", f"{rng.uniform(-170, 170):.2f}"]
        for name, country in zip(city_names, country_of_city, strict=True)
    ]
    people = _names(rng, athletes, lambda r: f"{r.choice(_FIRST_NAMES)} {_syllable(r).title()}{_syllable(r)}", taken)
    athlete_rows = [
        [name, rng.choice(country_names), rng.choice(_SPORTS), str(rng.randrange(0, 6)), str(rng.randrange(0, 6)),
         str(rng.randrange(0, 6)), _date(rng, 1970, 2006)]
        for name in people
    ]
    return [
        make_table(SOURCE, "country", ["name", "continent", "capital", "population", "area km2", "independence date"],
                   country_rows, SOURCE),
        make_table(SOURCE, "city", ["name", "country", "population", "founded year", "latitude", "longitude"],
                   city_rows, SOURCE),
        make_table(SOURCE, "athlete", ["name", "country", "sport", "gold", "silver", "bronze", "birth date"],
                   athlete_rows, SOURCE),
    ]
