"Consensus: the multipliers the reference forgot, the command line, and stored weights through the embedded MongoDB."
import json
import numpy as np
import pytest
from helpers import run_cli
from coretex.consensus.seed_rules import ConsensusConfig, evaluate_challenge, ice_responses, base_emissions, top_score_bonus


@pytest.fixture(scope="module")
def ice():
    return evaluate_challenge(ice_responses(), ConsensusConfig(heatmap=False))


def test_consensus_and_top_score_multipliers_are_applied(ice):
    rows = ice_responses()
    th = ice.theta
    base = dict(zip([r["miner"] for r in rows], base_emissions([r["response_time_ms"] for r in rows], th)))
    ranked = sorted(ice.scores, key=lambda m: -ice.scores[m])
    top, lead = ranked[0], ice.scores[ranked[0]] - ice.scores[ranked[1]]
    for m, e in ice.emissions.items():
        expect = base[m] * (1.2 if m in ice.in_consensus else 1.0) * (top_score_bonus(lead) if m == top else 1.0)
        assert e == pytest.approx(expect, rel=1e-6), m
    assert ice.emissions["m02"] == pytest.approx(base["m02"] * 1.2, rel=1e-6)


def test_scores_follow_the_documented_formula(ice):
    from coretex.toolkit.embeddings import Embedder
    rows = ice_responses()
    E = Embedder().encode([r["text"] for r in rows])
    S = E @ E.T
    surv = [i for i, r in enumerate(rows) if r["miner"] in ice.in_consensus]
    words = [len(r["text"].split()) for r in rows]
    i = 1  # m02, in consensus, confidence 0.85
    align = np.mean([S[i, j] for j in surv if j != i])
    expect = 100 * (0.5 * align + 0.2 * words[i] / max(words[j] for j in surv) + 0.2 * 0.85 + 0.1)
    assert ice.scores["m02"] == pytest.approx(expect, abs=1e-3)
    k = 10  # m11, out
    expect = 100 * (0.5 * 0.6 * np.mean([S[k, j] for j in surv]) + 0.2 * words[k] / max(words) + 0.2 * 1.0)
    assert ice.scores["m11"] == pytest.approx(expect, abs=1e-3)


def test_polarity_is_an_and(ice):
    rows = [{"miner": f"y{i}", "text": "Yes, water expands when it freezes, so ice is less dense and floats.", "response_time_ms": 100}
            for i in range(3)] + [{"miner": "n", "text": "No, water expands when it freezes, so ice is less dense and floats.", "response_time_ms": 100}]
    loose = evaluate_challenge(rows, ConsensusConfig(heatmap=False, outliers=False))
    strict = evaluate_challenge(rows, ConsensusConfig(heatmap=False, outliers=False, polarity=True))
    assert loose.consensus and not strict.consensus   # 3 of 4 agree: 75% < 80%
    assert strict.polarity["n"] == "negative"


@pytest.fixture
def data_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("CORETEX_MONGODB_URI", raising=False)
    return tmp_path


def test_cli_consensus_then_weights(data_env):
    f = data_env / "ice.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in ice_responses()))
    r = run_cli("consensus", f, "--out", data_env / "out")
    assert r.returncode == 0, r.stderr
    assert "consensus yes" in r.stdout and "m11" in r.stdout and "LOF outlier" in r.stdout and "too short" in r.stdout
    png = next((data_env / "out").glob("heatmap-*.png"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    w = run_cli("weights", "--since", "24h", "--json")
    out = json.loads(w.stdout)
    assert out["evaluations"] == 1 and sum(out["weights"].values()) == pytest.approx(1.0)
    assert max(out["weights"], key=out["weights"].get) == "m01"
    j = run_cli("consensus", f, "--json", "--no-store")
    assert json.loads(j.stdout)["in_consensus"] == [f"m{i:02d}" for i in range(1, 11)]


def test_cli_bad_input_and_empty(data_env):
    bad = data_env / "bad.jsonl"
    bad.write_text('{"miner": "a", "text": "x"}\n{not json}\n')
    r = run_cli("consensus", bad, "--no-store")
    assert r.returncode == 2 and "bad.jsonl:2: not JSON" in r.stderr and "Traceback" not in r.stderr
    empty = data_env / "empty.jsonl"
    empty.write_text("")
    r = run_cli("consensus", empty, "--no-store", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["theta"] == 0.0
    r = run_cli("weights", "--since", "soon")
    assert r.returncode == 2 and "expected a number and a unit" in r.stderr
    r = run_cli("weights", "--since", "1h")
    assert r.returncode == 0 and r.stdout.startswith("no weights")
