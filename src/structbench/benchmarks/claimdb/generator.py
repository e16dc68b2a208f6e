"""A small ClaimDB set, seeded, in the release's layout: ``structbench generate claimdb --out DIR`` writes
``DIR/claimdb/test-public.jsonl`` and ``DIR/claimdb/test_databases.zip``, which ``--data-dir DIR`` reads as it reads the
Hub's files (the real data never goes into the repository).

Three SQLite databases of two related tables each (a school, a library, a racing season), their rows drawn from the
seed; each claim is written from a query run on its database, so its label is what the data says: the query's
answer (entailed), a changed answer (contradicted), or a claim about something the schema does not hold or about a
world that did not happen (not enough info, as the paper's out-of-schema and counterfactual claims)."""

from __future__ import annotations

import json
import random
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.benchmarks.claimdb.claims import CONTRADICTED, ENTAILED, NEI
from structbench.benchmarks.claimdb.source import NAME, SPLITS
from structbench.core.atomic import atomic_path

FIRST = ("Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gia", "Hugo", "Iris", "Jon", "Kai", "Lena", "Milo", "Nora")
LAST = ("Ahl", "Berg", "Costa", "Dietz", "Engel", "Frey", "Gallo", "Holm", "Ito", "Jung", "Klein", "Lund")
CITIES = ("Oslo", "Lima", "Kyiv", "Pune", "Quito")
SUBJECTS = ("math", "history", "biology", "music")


@dataclass(frozen=True)
class Claim:
    label: str
    claim: str
    extra_info: str
    category: str | None = None


def _one(con: sqlite3.Connection, sql: str, *args: object) -> Any:
    row = con.execute(sql, args).fetchone()
    return row[0] if row else None


def _school(con: sqlite3.Connection, rng: random.Random) -> list[Claim]:
    con.execute("CREATE TABLE teachers(teacher_id INTEGER PRIMARY KEY, name TEXT, subject TEXT)")
    con.execute("CREATE TABLE students(student_id INTEGER PRIMARY KEY, name TEXT, grade INTEGER, city TEXT, "
                "score REAL, teacher_id INTEGER REFERENCES teachers(teacher_id))")
    teachers = [(i, f"{rng.choice(FIRST)} {rng.choice(LAST)}", SUBJECTS[i % len(SUBJECTS)]) for i in range(1, 7)]
    con.executemany("INSERT INTO teachers VALUES (?, ?, ?)", teachers)
    con.executemany("INSERT INTO students VALUES (?, ?, ?, ?, ?, ?)", [
        (i, f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.randint(1, 6), rng.choice(CITIES),
         round(rng.uniform(40, 100), 1), rng.randint(1, 6)) for i in range(1, 301)])
    grade = rng.randint(1, 6)
    n = int(_one(con, "SELECT count(*) FROM students WHERE grade = ?", grade) or 0)
    city = rng.choice(CITIES)
    top = con.execute("SELECT name, score FROM students WHERE city = ? ORDER BY score DESC, student_id LIMIT 1",
                      (city,)).fetchone()
    subject = rng.choice(SUBJECTS)
    taught = int(_one(con, "SELECT count(*) FROM students s JOIN teachers t ON s.teacher_id = t.teacher_id "
                           "WHERE t.subject = ?", subject) or 0)
    return [
        Claim(ENTAILED, f"There are {n} students in grade {grade}.", f"grade {grade} refers to grade = {grade}"),
        Claim(CONTRADICTED, f"There are {n + rng.randint(3, 9)} students in grade {grade}.",
              f"grade {grade} refers to grade = {grade}"),
        Claim(ENTAILED, f"{top[0]} has the highest score among the students of {city}, {top[1]}.",
              "the highest score refers to MAX(score)"),
        Claim(CONTRADICTED, f"{top[0]} has the highest score among the students of {city}, {round(top[1] - 7.5, 1)}.",
              "the highest score refers to MAX(score)"),
        Claim(ENTAILED, f"{taught} students are taught by a {subject} teacher.",
              f"a {subject} teacher refers to subject = '{subject}'"),
        Claim(NEI, f"The {subject} teachers earn more than the history teachers on average.",
              "earnings refer to the teachers' salaries", "OUT-OF-SCHEMA"),
        Claim(NEI, f"Had the school opened a branch in {city}, more than half of its students would live there.",
              f"living in {city} refers to city = '{city}'", "COUNTERFACTUAL"),
    ]


def _library(con: sqlite3.Connection, rng: random.Random) -> list[Claim]:
    con.execute("CREATE TABLE books(book_id INTEGER PRIMARY KEY, title TEXT, author TEXT, year INTEGER, pages INTEGER)")
    con.execute("CREATE TABLE loans(loan_id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES books(book_id), "
                "member TEXT, days INTEGER)")
    words = ("Silent", "River", "Glass", "Winter", "Atlas", "Harbor", "Ember", "Cedar")
    con.executemany("INSERT INTO books VALUES (?, ?, ?, ?, ?)", [
        (i, f"The {rng.choice(words)} {rng.choice(words)} {i}", f"{rng.choice(FIRST)} {rng.choice(LAST)}",
         rng.randint(1950, 2023), rng.randint(90, 900)) for i in range(1, 201)])
    con.executemany("INSERT INTO loans VALUES (?, ?, ?, ?)", [
        (i, rng.randint(1, 200), rng.choice(FIRST), rng.randint(1, 60)) for i in range(1, 1501)])
    year = rng.randint(1980, 2010)
    n = int(_one(con, "SELECT count(*) FROM books WHERE year > ?", year) or 0)
    longest = con.execute("SELECT title, pages FROM books ORDER BY pages DESC, book_id LIMIT 1").fetchone()
    member = rng.choice(FIRST)
    loans = int(_one(con, "SELECT count(*) FROM loans WHERE member = ?", member) or 0)
    days = _one(con, "SELECT round(avg(l.days), 1) FROM loans l JOIN books b ON l.book_id = b.book_id "
                     "WHERE b.year > ?", year)
    return [
        Claim(ENTAILED, f"The library holds {n} books published after {year}.",
              f"after {year} refers to year > {year}"),
        Claim(CONTRADICTED, f"The library holds {max(0, n - rng.randint(4, 12))} books published after {year}.",
              f"after {year} refers to year > {year}"),
        Claim(ENTAILED, f"'{longest[0]}' is the longest book, with {longest[1]} pages.",
              "the longest book refers to MAX(pages)"),
        Claim(ENTAILED, f"{member} borrowed books {loans} times.", f"{member} refers to member = '{member}'"),
        Claim(CONTRADICTED, f"Books published after {year} were kept {round(float(days or 0) + 4.0, 1)} days on "
                            "average per loan.", "days kept refers to AVG(days)"),
        Claim(NEI, f"Most loans by {member} were returned late.", "late returns refer to a due date",
              "OUT-OF-SCHEMA"),
    ]


def _racing(con: sqlite3.Connection, rng: random.Random) -> list[Claim]:
    con.execute("CREATE TABLE drivers(driver_id INTEGER PRIMARY KEY, forename TEXT, surname TEXT, nationality TEXT)")
    con.execute("CREATE TABLE results(result_id INTEGER PRIMARY KEY, driver_id INTEGER REFERENCES "
                "drivers(driver_id), race INTEGER, position INTEGER, points REAL)")
    nations = ("German", "Brazilian", "Japanese", "Finnish")
    drivers = [(i, FIRST[i % len(FIRST)], LAST[i % len(LAST)], rng.choice(nations)) for i in range(1, 13)]
    con.executemany("INSERT INTO drivers VALUES (?, ?, ?, ?)", drivers)
    points = (25, 18, 15, 12, 10, 8, 6, 4, 2, 1, 0, 0)
    rows, k = [], 1
    for race in range(1, 16):
        order = list(range(1, 13))
        rng.shuffle(order)
        for position, who in enumerate(order, 1):
            rows.append((k, who, race, position, float(points[position - 1])))
            k += 1
    con.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?)", rows)
    best = con.execute("SELECT d.forename, d.surname, sum(r.points) AS total FROM results r JOIN drivers d ON "
                       "r.driver_id = d.driver_id GROUP BY d.driver_id ORDER BY total DESC, d.driver_id LIMIT 1"
                       ).fetchone()
    driver = rng.choice(drivers)
    wins = int(_one(con, "SELECT count(*) FROM results WHERE driver_id = ? AND position = 1", driver[0]) or 0)
    return [
        Claim(ENTAILED, f"{best[0]} {best[1]} is the driver with the most points, totaling {best[2]}.",
              "the most points refers to MAX(SUM(points)); the full name refers to forename and surname"),
        Claim(CONTRADICTED, f"{best[0]} {best[1]} is the driver with the most points, totaling {best[2] + 21.0}.",
              "the most points refers to MAX(SUM(points)); the full name refers to forename and surname"),
        Claim(ENTAILED, f"{driver[1]} {driver[2]} won {wins} races.", "a win refers to position = 1"),
        Claim(CONTRADICTED, f"{driver[1]} {driver[2]} won {wins + rng.randint(2, 4)} races.",
              "a win refers to position = 1"),
        Claim(NEI, f"A faulty gearbox cost {driver[1]} {driver[2]} the win in race 3.",
              "race 3 refers to race = 3", "OUT-OF-SCHEMA"),
    ]


DATABASES: dict[str, Callable[[sqlite3.Connection, random.Random], list[Claim]]] = {
    "school": _school,
    "library": _library,
    "racing": _racing,
}
"""Each database's name and how it is filled and its claims written."""


def write_set(out: Path, *, seed: int = 0) -> list[str]:
    """Write the set under ``out/claimdb/`` (whole or not at all, file by file); return lines to print."""
    split = SPLITS["test"]
    folder = out / NAME
    folder.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for k, (db, build) in enumerate(DATABASES.items()):
            path = Path(tmp) / f"{db}.sqlite"
            with sqlite3.connect(path) as con:
                claims = build(con, random.Random(f"claimdb:{seed}:{db}"))
            con.close()
            files[db] = path
            records += [{"claim_id": 1000 * (k + 1) + i, "bird_id": 100 * (k + 1) + i // 2, "db_name": db,
                         "label": c.label, **({"category": c.category} if c.category else {}), "claim": c.claim,
                         "extra_info": c.extra_info} for i, c in enumerate(claims)]
        random.Random(f"claimdb:{seed}:order").shuffle(records)
        with atomic_path(folder / split.databases) as target, \
                zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
            stem = split.databases.removesuffix(".zip")
            for db, path in files.items():
                info = zipfile.ZipInfo(f"{stem}/{db}/{db}.sqlite", date_time=(2026, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
    with atomic_path(folder / split.claims) as target:
        target.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    labels = {label: sum(r["label"] == label for r in records) for label in (ENTAILED, CONTRADICTED, NEI)}
    return [f"wrote {len(records)} claims over {len(files)} databases to {folder} "
            f"({', '.join(f'{n} {label}' for label, n in labels.items())}); read it with --data-dir {out}"]
