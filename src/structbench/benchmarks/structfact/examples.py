"""The few-shot pool: the five examples of the official ``src/common.py`` (``EXAMPLES``).

The paper (Appendix K.1.1) describes one example "from the same task"; the official code samples ``n``
of these five fixed, task-independent examples per question, which is what we do (seeded per sample).
The official prompt shows ``[data example]`` instead of each example's data (``generate_few_shot_examples``;
the variant with the data, ``generate_few_shot_examples_v2``, is unused): we show the data, and keep the
placeholder behind the ``few_shot_placeholder`` option. The data's code indentation is removed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """A solved example: question, Markdown data, gold answer (Yes/No) and a one-line explanation."""

    question: str
    data: str
    answer: str
    explanation: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        question="The Infection Fatality Rate (IFR) is higher for people aged 75 to 84 compared to those "
        "aged 35 to 44?",
        data="""### IFR estimate per age group
| Age Group | IFR (%)    |
|-----------|------------|
| 0–34       | 0.004%     |
| 35–44     | 0.068%     |
| 45–54     | 0.23%      |
| 55–64     | 0.75%      |
| 65–74     | 2.5%       |
| 75–84     | 8.5%       |
| 85+        | 28.3%      |""",
        answer="Yes",
        explanation="The IFR for people aged 75 and above is 8.5%, while the IFR for the age group 35–44 is 0.068%.",
    ),
    Example(
        question="Did Justin Gatlin maintain his exact position in the top 3 of the 100m final from the "
        "2012 Olympics to the 2016 Olympics?",
        data="""### 2012 Olympics 100m Final Top 3 Results
| Rank | Athlete           | Time (seconds) |
|------|-------------------|----------------|
| 1    | Usain Bolt        | 9.63           |
| 2    | Yohan Blake       | 9.75           |
| 3    | Justin Gatlin     | 9.79           |

### 2016 Olympics 100m Final Top 3 Results
| Rank | Athlete           | Time (seconds) |
|------|-------------------|----------------|
| 1    | Usain Bolt        | 9.81           |
| 2    | Justin Gatlin     | 9.89           |
| 3    | Andre De Grasse   | 9.91           |""",
        answer="No",
        explanation="In 2012, Justin Gatlin finished 3rd, but in 2016, he moved up to 2nd place.",
    ),
    Example(
        question="In this election, was Donald Trump's vote percentage higher than that of any other "
        "candidate besides Hillary Clinton?",
        data="""### 2016 U.S. Presidential Election Vote Percentages
| Candidate         | Party          | Vote Percentage |
| ----------------- | -------------- | --------------- |
| Donald Trump      | Republican     | 46.1%           |
| Hillary Clinton   | Democratic     | 48.2%           |
| Gary Johnson      | Libertarian    |                 |
| Jill Stein        | Green          |                 |
| Evan McMullin     | Independent    |                 |
| Other Candidates  |                |                 |""",
        answer="Yes",
        explanation="With 46.1%, Donald Trump's vote share exceeds any other candidate besides Hillary "
        "Clinton, who had 48.2%, leaving only 5.7% for all others combined.",
    ),
    Example(
        question="In the tenth year after Constantinople was renamed Istanbul, was the population 1000,000?",
        data="""Up until the year 330 Istanbul was known as Byzantium, and then until 1453 Constantinople. \
Its current name of Istanbul only came into being on the 28th March 1930.
| Year |    Population  | ±% p.a. |
|  -- | ---------------- | ----- |
| 1925 |       881,000      |         |
| 1927 |       691,000      | -11.44% |
| 1935 |       740,800      | +0.87%  |
| 1940 |       793,900      | +1.39%  |
| 1945 |       845,300      | +1.26%  |
| 1950 |       983,000      | +3.06%  |
| 1960 |     1,459,500      | +4.03%  |
| 1965 |     1,743,000      | +3.61%  |
| 1970 |     2,132,400      | +4.12%  |
| 1975 |     2,547,400      | +3.62%  |""",
        answer="No",
        explanation="In the tenth year after the renaming, which was 1940, the population was 793,900.",
    ),
    Example(
        question="Was the series named international formula master from 2007 to 2009?",
        data="""### international formula master
| Season | Series Name                  | Champion                     | Team Champion            | \
Secondary Class Champion                   |
|--------|--------------------------------|--------------------------------|------------------------\
----------------|--------------------------------------------|
| 2005   | 3000 Pro Series                | Norbert Siedler / Max Busnelli  | Drako Junior Team        \
  | Iago Rego Rosende (Master Junior Formula)  |
| 2006   | F3000 International Masters    | Jan Charouz                    | Charouz Racing System    \
  | Daniel Campos - Hull (Master Junior Formula) |
| 2007   | International Formula Master   | Jerome Dambrosio               | Cram Competition         \
  | Isaac Lopez Navarro (Master Junior Formula)  |
| 2008   | International Formula Master   | Chris van der Drift            | JD Motorsport            \
  | Marcello Puglisi (Formula Master Italia)   |
| 2009   | International Formula Master   | Fabio Leimer                   | JD Motorsport            \
  | Alexander Rossi (Rookie of the Year)         |""",
        answer="Yes",
        explanation="Series was named 'International Formula Master' from 2007-2009.",
    ),
)

DATA_PLACEHOLDER = "[data example]"
"""What the official prompt shows in place of an example's data."""
