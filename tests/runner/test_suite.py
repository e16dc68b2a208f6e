"""Suite files: the schema, line-numbered errors, and how a suite maps onto run configurations."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from patience import patience
from structbench.core.errors import UsageError
from structbench.runner.suite import load_suite, runs

GOOD = """\
models:
  - model: oracle
  - model: openai:Qwen/Qwen3-8B
    name: qwen3
    base_url: http://127.0.0.1:8000/v1
    system_prompt: Answer briefly.
    chat_template_args: {enable_thinking: false}
    generation: {temperature: 0.6, top_p: 0.95, seed: 1, max_tokens: 2048}
    concurrency: 32
benchmarks:
  - structext:test
  - bench: scitab
    variants: [all, 2class]
    strategies: [zero_shot, cot]
    options: {serialization: markdown}
  - bench: structfact
    strategies: [all]
limit: 20
seed: 3
data_dir: data
"""


def _suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    (tmp_path / "data").mkdir(exist_ok=True)  # its data_dir
    return path


def test_a_suite_maps_onto_one_run_config_per_model(tmp_path: Path) -> None:
    path = _suite(tmp_path, GOOD)
    planned = runs(load_suite(path), tmp_path / "out", tmp_path)
    assert [p.name for p in planned] == ["oracle", "qwen3"]
    oracle, qwen = planned
    assert oracle.run_dir == tmp_path / "out" / "oracle"
    assert qwen.config.benches == ["structext:test", "scitab:all", "scitab:2class", "structfact"]
    assert qwen.config.strategies[:4] == ["scitab:all/zero_shot", "scitab:all/cot", "scitab:2class/zero_shot",
                                          "scitab:2class/cot"]
    assert "structfact/self_refine" in qwen.config.strategies
    assert not any(s.startswith("structext") for s in qwen.config.strategies)  # its default strategy
    assert qwen.config.options == {"scitab.serialization": "markdown"}
    assert (qwen.config.limit, qwen.config.seed, qwen.config.data_dir) == (20, 3, str(tmp_path / "data"))
    assert qwen.config.system_prompt == "Answer briefly."
    assert qwen.config.chat_template_args == {"enable_thinking": False}
    assert (qwen.config.max_tokens, qwen.config.generation.temperature, qwen.config.generation.seed) == (2048, 0.6, 1)
    assert (qwen.spec.backend, qwen.spec.name, qwen.spec.concurrency) == ("openai", "Qwen/Qwen3-8B", 32)
    assert oracle.config.system_prompt is None and oracle.config.fingerprint() != qwen.config.fingerprint()


def test_a_models_base_url_may_list_replicas(tmp_path: Path) -> None:
    replicas = "http://127.0.0.1:8000/v1, http://u:secret@127.0.0.1:8001/v1/"
    path = _suite(tmp_path, GOOD.replace("http://127.0.0.1:8000/v1", replicas))
    qwen = runs(load_suite(path), tmp_path / "out", tmp_path)[1]
    assert qwen.config.base_url == "http://127.0.0.1:8000/v1,http://u:[REDACTED]@127.0.0.1:8001/v1"
    assert qwen.spec.base_url == replicas  # the password reaches the backend, never the manifest


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("    concurrency: 32", "    concurency: 32"),
         r"suite.yaml:9: models\[1\].concurency: unknown key"),
        (GOOD.replace("seed: 3", "seed: three"), r"suite.yaml:19: seed: Input should be a valid integer"),
        (GOOD.replace("variants: [all, 2class]", "variants: [all, three]"),
         r"suite.yaml:13: benchmarks\[1\].variants\[1\]: scitab has no variant 'three'"),
        (GOOD.replace("strategies: [zero_shot, cot]", "strategies: [zero_shot, cott]"),
         r"suite.yaml:14: benchmarks\[1\].strategies\[1\]: scitab has no strategy 'cott'"),
        (GOOD.replace("{serialization: markdown}", "{serialisation: markdown}"),
         r"suite.yaml:15: benchmarks\[1\].options: scitab: bad option: serialisation"),
        (GOOD.replace("  - bench: structfact", "  - bench: structfacts"),
         r"suite.yaml:16: benchmarks\[2\].bench: unknown benchmark 'structfacts'"),
        (GOOD.replace("  - model: oracle", "  - model: orcale"), r"suite.yaml:2: models\[0\].model: unknown backend"),
        (GOOD.replace("  - model: oracle", "  - model: llamacpp\n    options: {n_ctxx: 1}"),
         r"suite.yaml:3: models\[0\].options: option n_ctxx: not an option of the llamacpp backend"),
        (GOOD.replace("  - model: oracle", "  - model: mock\n    chat_template_args: {a: 1}"),
         r"suite.yaml:3: models\[0\].chat_template_args: .*mock backend cannot"),
        (GOOD.replace("    name: qwen3\n", "    name: oracle\n"), r"suite.yaml:1: models: .*'oracle' is used twice"),
        (GOOD.replace("limit: 20", "limit: 0"), r"suite.yaml:18: limit: Input should be greater than or equal to 1"),
        (GOOD.replace("data_dir: data", "data_dir: nodata"), r"suite.yaml:20: data_dir: .*nodata: no such folder"),
        (GOOD.replace("data_dir: data", "data_dir: suite.yaml"),
         r"suite.yaml:20: data_dir: .*suite.yaml: not a folder"),
        ("models: [\n", r"suite.yaml:2: not YAML"),
        ("- a\n", r"suite.yaml:1: a suite is a mapping"),
        ("models: []\nbenchmarks: [scitab]\n", r"suite.yaml:1: models: List should have at least 1 item"),
    ],
)
def test_a_bad_suite_names_file_line_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_suite(_suite(tmp_path, text))


def test_every_problem_of_a_kind_is_reported_at_once(tmp_path: Path) -> None:
    text = GOOD.replace("seed: 3", "seed: x").replace("limit: 20", "limitt: 20")
    with pytest.raises(UsageError) as err:
        load_suite(_suite(tmp_path, text))
    assert "suite.yaml:18: limitt: unknown key" in str(err.value) and "suite.yaml:19: seed:" in str(err.value)
    both = GOOD.replace("{serialization: markdown}", "{serialisation: markdown}").replace("[zero_shot, cot]",
                                                                                         "[zero_shot, cott]")
    with pytest.raises(UsageError) as err:
        load_suite(_suite(tmp_path, both))
    assert "suite.yaml:15: benchmarks[1].options: scitab: bad option: serialisation" in str(err.value)
    assert "suite.yaml:14: benchmarks[1].strategies[1]: scitab has no strategy 'cott'" in str(err.value)


def test_a_model_may_set_reasoning(tmp_path: Path) -> None:
    text = GOOD.replace("    concurrency: 32\n", "    concurrency: 32\n    reasoning: {budget: 4096, effort: high, "
                                                  "tags: [['<t>', '</t>']], opened: true}\n")
    _, qwen = runs(load_suite(_suite(tmp_path, text)), tmp_path / "out", tmp_path)
    r = qwen.config.reasoning
    assert (r.budget, r.effort, r.tags, r.opened) == (4096, "high", [("<t>", "</t>")], True)
    bad = GOOD.replace("    concurrency: 32\n", "    concurrency: 32\n    reasoning: {budgett: 1}\n")
    with pytest.raises(UsageError, match=r"suite.yaml:10: models\[1\].reasoning.budgett: unknown key"):
        load_suite(_suite(tmp_path, bad))
    effort = GOOD.replace("  - model: oracle", "  - model: mock\n    reasoning: {effort: low}")
    with pytest.raises(UsageError, match=r"suite.yaml:3: models\[0\].reasoning: .*mock backend has no reasoning"):
        load_suite(_suite(tmp_path, effort))


def test_a_suite_may_allow_modified_data(tmp_path: Path) -> None:
    plain = runs(load_suite(_suite(tmp_path, GOOD)), tmp_path / "out", tmp_path)[0].config
    allowed = runs(load_suite(_suite(tmp_path, GOOD + "allow_modified_data: true\n")), tmp_path / "out", tmp_path)[0]
    assert (plain.allow_modified_data, allowed.config.allow_modified_data) == (False, True)
    assert plain.fingerprint() != allowed.config.fingerprint()  # modified data is another run


LAUGHS = """models:
  - model: oracle
    chat_template_args:
      a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
      h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
      i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
benchmarks: [scitab]
"""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (LAUGHS, "suite.yaml:9: the file stands for more than 100,000 values once its aliases are expanded"),
        ("models: [{model: oracle}]\nbenchmarks: [scitab]\nx: " + "[" * 5000 + "]" * 5000 + "\n",
         "suite.yaml:3: nested more than 64 levels deep"),
        ("models: [{model: oracle}]\nbenchmarks: [scitab]\nlimit: 5\nlimit: 7\n",
         "suite.yaml:4: key 'limit' appears twice in this mapping"),
        ("models:\n  - model: oracle\n    name: a\n    model: mock\nbenchmarks: [scitab]\n",
         "suite.yaml:4: key 'model' appears twice in this mapping"),
        ("models: [{model: oracle}]\nbenchmarks: [scitab]\nx: [" + ", ".join(["&a 1"] + ["*a"] * 300) + "]\n",
         "suite.yaml:3: more than 200 aliases"),
        ("models: &m [{model: oracle, options: *m}]\nbenchmarks: [scitab]\n",  # was a RecursionError
         "suite.yaml:1: the alias *m stands inside the value it names"),
    ],
    ids=["billion-laughs", "5000-deep", "duplicate-key", "duplicate-nested-key", "many-aliases", "self-alias"],
)
def test_hostile_suite_files_are_refused_before_they_are_built(tmp_path: Path, text: str, says: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UsageError) as info:
        load_suite(_suite(tmp_path, text))
    assert time.perf_counter() - started < patience(5)
    assert str(info.value).startswith(str(tmp_path / says)), str(info.value)


def test_an_oversized_suite_file_is_refused_unread(tmp_path: Path) -> None:
    path = _suite(tmp_path, "models: [{model: oracle}]\nbenchmarks: [scitab]\n" + "#" * (2 << 20) + "\n")
    with pytest.raises(UsageError, match=r"suite.yaml: the suite file is 2,097,.* bytes, more than the 1,048,576"):
        load_suite(path)


def test_anchors_and_merge_keys_still_work(tmp_path: Path) -> None:
    text = ("models:\n  - &base {model: oracle, name: a, concurrency: 4}\n  - <<: *base\n    name: b\n"
            "benchmarks: [scitab]\n")
    suite = load_suite(_suite(tmp_path, text))
    assert [(m.name, m.concurrency) for m in suite.models] == [("a", 4), ("b", 4)]


def test_a_suite_gives_prices_inline_or_as_a_file_and_a_bad_one_names_its_line(tmp_path: Path) -> None:
    from structbench.runner.suite import suite_prices

    inline = GOOD + "prices:\n  openai:Qwen/Qwen3-8B: {input: 0.1, output: 0.4}\n"
    path = _suite(tmp_path, inline)
    prices = suite_prices(load_suite(path), path)
    assert prices is not None and prices.find("openai:Qwen/Qwen3-8B") is not None
    (tmp_path / "prices.yaml").write_text("Qwen/Qwen3-8B: {input: 0.1, output: 0.4}\n")
    path = _suite(tmp_path, GOOD + "prices: prices.yaml\n")
    prices = suite_prices(load_suite(path), path)
    assert prices is not None and prices.source == str(tmp_path / "prices.yaml")
    bad = GOOD + "prices:\n  qwen:\n    input: 0.1\n    output: -4\n"
    with pytest.raises(UsageError, match=r"suite.yaml:24: prices.qwen.output: a price cannot be negative \(-4\)"):
        load_suite(_suite(tmp_path, bad))


def test_a_benchmark_sweeps_its_options_and_a_bad_sweep_names_its_line(tmp_path: Path) -> None:
    text = """\
models:
  - model: oracle
benchmarks:
  - bench: scitab
    options: {markup: keep}
    sweep:
      serialization: [paper, csv]
      perturbation: [none, transpose]
  - bench: structfact
    sweep: {perturbation_seed: [0, 1], logprobs: [true, false]}
"""
    (plan,) = runs(load_suite(_suite(tmp_path, text)), tmp_path / "out", tmp_path)
    assert plan.config.sweeps == {
        "scitab.serialization": ["paper", "csv"], "scitab.perturbation": ["none", "transpose"],
        "structfact.perturbation_seed": ["0", "1"], "structfact.logprobs": ["true", "false"]}
    assert plan.config.options == {"scitab.markup": "keep"}
    bad = text.replace("[none, transpose]", "[none, transpos]").replace("perturbation_seed", "perturbation_sed")
    bad = bad.replace("options: {markup: keep}", "options: {markup: keep, serialization: csv}")
    bad = bad.replace("logprobs: [true, false]", "logprobs: [true, true]")
    with pytest.raises(UsageError) as err:
        load_suite(_suite(tmp_path, bad))
    where = tmp_path / "suite.yaml"
    assert str(err.value).split("; ") == [
        f"{where}:7: benchmarks[0].sweep.serialization: serialization is also set in options: drop one",
        f"{where}:8: benchmarks[0].sweep.perturbation[1]: scitab: bad sweep: perturbation: Value error, unknown "
        "perturbation 'transpos'. Did you mean: transpose? Known: none, shuffle_rows, shuffle_columns, transpose, "
        "empty_rows, no_header, thousands, dates (several joined by +)",
        f"{where}:10: benchmarks[1].sweep.perturbation_sed: structfact has no option 'perturbation_sed'",
        f"{where}:10: benchmarks[1].sweep.logprobs: value 'true' is given twice",
    ]
