"""Fixtures for the generated StructFact questions: a small CSV database and generated sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.generated.generator import Generator, Question
from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.tables import csv_tables, load_tables
from structbench.data.datasets import DataContext

COUNTRIES = """name,code,continent,capital,population,area_km2,un_member_since
France,FRA,Europe,Paris,68042591,551695,1945
Germany,DEU,Europe,Berlin,84358845,357588,1973
Japan,JPN,Asia,Tokyo,124516650,377975,1956
Brazil,BRA,South America,Brasilia,203062512,8515767,1945
Kenya,KEN,Africa,Nairobi,51526000,580367,1963
India,IND,Asia,New Delhi,1428627663,3287263,1945
Canada,CAN,North America,Ottawa,40097761,9984670,1945
Egypt,EGY,Africa,Cairo,105914499,1002450,1945
Chile,CHL,South America,Santiago,19629590,756102,1945
Vietnam,VNM,Asia,Hanoi,100300000,331212,1977
Norway,NOR,Europe,Oslo,5550203,385207,1945
Ghana,GHA,Africa,Accra,33475870,238533,1957
"""

CITIES = """city_name,country_code,population,latitude,longitude,first_recorded
Paris,FRA,2102650,48.86,2.35,0052-01-01
Lyon,FRA,522250,45.76,4.84,
Berlin,DEU,3850809,52.52,13.40,1237-10-28
Munich,DEU,1512491,48.14,11.58,1158-06-14
Osaka,JPN,2750000,34.69,135.50,
Sao Paulo,BRA,12330000,-23.55,-46.63,1554-01-25
Nairobi,KEN,4397073,-1.29,36.82,1899-05-30
Mumbai,IND,12442373,19.08,72.88,
Toronto,CAN,2794356,43.65,-79.38,1793-08-27
Alexandria,EGY,5200000,31.20,29.92,
Valparaiso,CHL,296655,-33.05,-71.62,1536-01-01
Hanoi,VNM,8053663,21.03,105.85,
Bergen,NOR,285911,60.39,5.32,1070-01-01
Kumasi,GHA,3490030,6.69,-1.62,
"""

MUSEUMS = """museum,city,opened,annual_visitors
Louvre,Paris,"Aug 10, 1793",8900000
Musee d'Orsay,Paris,"Dec 1, 1986",3900000
Pergamon Museum,Berlin,"Oct 2, 1930",1000000
Deutsches Museum,Munich,"May 7, 1925",1500000
Royal Ontario Museum,Toronto,"Mar 19, 1914",1440000
Grand Egyptian Museum,Alexandria,"Nov 4, 2022",5000000
National Museum of Kenya,Nairobi,"Sep 22, 1930",
KODE,Bergen,"Jan 1, 1896",300000
"""


def write_atlas(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("countries", COUNTRIES), ("cities", CITIES), ("museums", MUSEUMS)):
        (folder / f"{name}.csv").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three CSV tables (countries, cities, museums) with foreign keys, dates, places, blanks."""
    return write_atlas(tmp_path_factory.mktemp("tables") / "atlas")


@pytest.fixture(scope="session")
def atlas_world(atlas: Path) -> World:
    return World.of(csv_tables(atlas))


@pytest.fixture(scope="session")
def rfqa_world(shared_data: DataContext) -> World:
    """Every RelationalFactQA database, profiled."""
    return World.of(load_tables("rfqa", shared_data))


@pytest.fixture(scope="session")
def rfqa_questions(rfqa_world: World) -> list[Question]:
    """600 questions per task from RFQA's databases (3,000), the paper's label mix, seed 0."""
    return Generator(rfqa_world, token_counter("regex")).generate(600, seed=0)


@pytest.fixture(scope="session")
def scitab_questions(shared_data: DataContext) -> list[Question]:
    """200 questions per task SciTab's tables allow, balanced labels, seed 3."""
    world = World.of(load_tables("scitab", shared_data))
    return Generator(world, token_counter("regex")).generate(200, "balanced", seed=3)
