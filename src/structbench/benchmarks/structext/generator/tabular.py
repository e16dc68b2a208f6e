"""CSV: a ``bio`` and a ``work`` table of the same people, joined on ``primeKey`` (one row per person).

Columns, value ranges and vocabularies are those of the released files; the number of people is
``depth * width`` (the release's ``node_number`` rows at width 1).
"""

from __future__ import annotations

from random import Random

from structbench.benchmarks.structext.generator.common import QA, Shape
from structbench.benchmarks.structext.generator.naming import UP

BIO = ("primeKey", "gender", "age", "name", "height", "weight", "color")
WORK = ("primeKey", "status", "salary", "company", "location")
COLORS = ("black", "brown", "mulatto", "olive", "swarthy", "white")
STATUSES = ("employed", "retired", "unemployed")
COMPANIES = ("Apple", "Google", "Meta", "Microsoft", "NVIDIA", "OPENAI", "Twitter")
STATES = ("CA", "GA", "HI", "IL", "NY", "TX", "WA")
HEIGHTS = (120, 220)
SALARIES = (10_000, 999_999)


def generate_csv(rng: Random, shape: Shape) -> list[QA]:
    """The four CSV questions (lookup, salary count, gender count, join count) about one table pair."""
    n = shape.branching
    keys = UP.upto(n)
    name_off = rng.randrange(26)
    names = UP.upto(name_off + n)
    bio = [
        (keys[i], rng.choice(("female", "male")), str(rng.randint(10, 70)), names[name_off + i],
         str(rng.randint(*HEIGHTS)), str(rng.randint(40, 180)), rng.choice(COLORS))
        for i in range(n)
    ]
    work = [
        (keys[i], rng.choice(STATUSES), str(rng.randint(*SALARIES)), rng.choice(COMPANIES), rng.choice(STATES))
        for i in range(n)
    ]
    text = "\n".join(
        [",".join(BIO), *[",".join(r) for r in bio], "", ",".join(WORK), *[",".join(r) for r in work]]
    )
    row = rng.randrange(n)
    field = rng.choice(BIO[1:] + WORK[1:])
    value = bio[row][BIO.index(field)] if field in BIO else work[row][WORK.index(field)]
    salary = rng.randint(*SALARIES)
    gender = rng.choice(("female", "male"))
    state = rng.choice(STATES)
    height = rng.randint(*HEIGHTS)
    rich = sum(int(r[2]) > salary for r in work)
    same = sum(r[1] == gender for r in bio)
    joined = sum(int(b[4]) > height and w[4] == state for b, w in zip(bio, work, strict=True))
    return [
        QA("csv.lookup", {"field": field, "key": keys[row]}, value, text),
        QA("csv.salary", {"threshold": salary}, str(rich), text),
        QA("csv.gender", {"gender": gender}, str(same), text),
        QA("csv.join", {"state": state, "height": height}, str(joined), text),
    ]
