"""The rule set `loosh-1.2.8` in rooms, and the sybil pages in two (issue 38): every name `coretex.consensus.loosh` gave before the split still
imports from there, as the object in its new room, with a DeprecationWarning naming that room; the names of
`coretex.consensus` are untouched; and no room is a long module."""
import importlib, re, warnings
from pathlib import Path
import pytest
import coretex.consensus
from coretex.consensus import loosh, seed_rules
from coretex.layers import written_lines

ROOT = Path(__file__).resolve().parents[1]
# `coretex.consensus.loosh.__all__` at the commit before the split (333cec8), the surface this release keeps
OLD_NAMES = ['MINILM', 'MPNET', 'SEED_RULES', 'LOOSH_128', 'SYBIL_128', 'RULE_SETS', 'TEST_MODE', 'RuleSetError', 'QualityRules',
             'SybilRules', 'WeightRules', 'RuleSet', 'rule_set', 'entity_caps', 'split_sentences', 'sigmoid_clamp',
             'prompt_parts', 'sentence_relevance', 'coverage', 'heuristic_coherence', 'chain_coherence', 'complexity',
             'density', 'specificity', 'Quality', 'response_quality', 'prompt_cosines', 'score_quality', 'smart_outliers',
             'dominant_cluster', 'weighted_theta', 'polarity_agreement', 'polarity_consensus', 'diversity_bonus',
             'survivor_scores', 'outsider_score', 'top_bonus', 'emissions_128', 'length_gate', 'gated_pairs',
             'adaptive_thresholds', 'SybilPair', 'semantic_pairs', 'shape_features', 'shape_similarity',
             'tfidf_similarity', 'fusion_pairs', 'fingerprint', 'trajectory_pairs', 'deduplicate_pairs', 'SybilGroup',
             'prune_group', 'components', 'sybil_groups_128', 'SybilReport', 'similarity_matrix', 'detect_sybil_128',
             'SybilFindings', 'sybil_findings_128', 'LooshEvaluation', 'single_answer', 'consensus_128', 'evaluate_128',
             'Node', 'MinerRow', 'WeightInputs', 'operation_mode', 'serving_miners', 'ema_by_hotkey', 'freshness_gate',
             'sybil_penalty', 'WeightOutcome', 'set_weights_128', 'weight_inputs', 'store_weights_128',
             'sybil_scores_from_records', 'EmbeddingMissing', 'VectorTable', 'load_vector_table', 'model_embedder',
             'ResponseError', 'check_response_128', 'evaluate_responses']
ROOMS = ["loosh", "loosh_inputs", "loosh_quality", "loosh_theta", "loosh_scores", "loosh_sybil", "loosh_evaluate", "loosh_weights"]


def home_of(name: str) -> str:
    "The one room whose `__all__` holds `name`."
    homes = [r for r in ROOMS if name in importlib.import_module(f"coretex.consensus.{r}").__all__]
    assert len(homes) == 1, (name, homes)
    return homes[0]


def test_the_rooms_hold_the_old_names_exactly_once():
    rooms = [n for r in ROOMS for n in importlib.import_module(f"coretex.consensus.{r}").__all__]
    assert sorted(rooms) == sorted(OLD_NAMES)


@pytest.mark.parametrize("name", OLD_NAMES)
def test_an_old_name_imports_from_loosh(name):
    home = home_of(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module("coretex.consensus.loosh"), name)
    assert value is getattr(importlib.import_module(f"coretex.consensus.{home}"), name)
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    if home == "loosh": assert said == []     # the rule set's own names did not move
    else: assert said == [f"coretex.consensus.loosh.{name} is now coretex.consensus.{home}.{name}; the old path goes in coretex 0.3"]


def test_the_from_import_form_warns_at_the_callers_line():
    with pytest.warns(DeprecationWarning, match=re.escape("coretex.consensus.loosh_evaluate.evaluate_responses")) as w:
        from coretex.consensus.loosh import evaluate_responses   # noqa: F401
    assert w[0].filename == __file__


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_rule"):
        loosh.no_such_rule
    assert not hasattr(loosh, "_cos")


def test_the_package_surface_is_the_seed_rules_unchanged():
    assert coretex.consensus.__all__ == seed_rules.__all__
    assert all(getattr(coretex.consensus, n) is getattr(seed_rules, n) for n in seed_rules.__all__)


def test_no_room_is_a_long_module():
    lines = {r: written_lines((ROOT / "coretex" / "consensus" / f"{r}.py").read_text()) for r in ROOMS}
    print(lines)
    assert max(lines.values()) <= 600, lines


# `coretex.consensus.sybil.__all__` before its detectors moved to coretex.consensus.sybil_detector (issue 38)
OLD_SYBIL_NAMES = ['TOPICS', 'SLOTS', 'THESAURUS', 'FILLER', 'OPENERS', 'CLOSERS', 'FUNCTION_WORDS', 'HONEST_BIGRAM_SHARE', 'SPREADS', 'EDIT_LEVELS', 'GROUP_SIZES', 'DUPLICATES', 'SYBIL_RULE_SETS', 'generator_tables', 'words', 'writer_style', 'honest_answer', 'bigram_share', 'GeneratorError', 'honest_answers', 'sentences', 'edit_copy', 'Answer', 'Response', 'Attack', 'Scenario', 'make_scenario', 'attack_suite', 'EmbeddingCache', 'units', 'in_order_share', 'word_overlap', 'word_containment', 'unit_alignment', 'TextSignals', 'text_signals', 'linked_groups', 'TextDetector', 'detect_copies', 'CopyDetector', 'copy_pairs', 'copy_groups', 'overlap_copies', 'RuleSetUnderTest', 'seed_findings', 'seed_emissions', 'loosh_findings', 'loosh_emissions', 'coretex_findings', 'overlap_findings', 'pay_groups_as_one', 'pay_duplicates', 'paid_under', 'coretex_emissions', 'overlap_emissions', 'true_pairs', 'flagged_pairs', 'SuiteScore', 'score_rule_set', 'recall_table', 'share_table']


@pytest.mark.parametrize("name", OLD_SYBIL_NAMES)
def test_an_old_sybil_name_imports_from_sybil(name):
    from coretex.consensus import sybil_detector
    moved = name in sybil_detector.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module("coretex.consensus.sybil"), name)
    assert value is getattr(sybil_detector if moved else importlib.import_module("coretex.consensus.sybil"), name)
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert said == ([f"coretex.consensus.sybil.{name} is now coretex.consensus.sybil_detector.{name}; the old path goes in coretex 0.3"]
                    if moved else [])


def test_the_sybil_pages_split_keeps_every_name_once():
    from coretex.consensus import sybil, sybil_detector
    assert sorted(sybil.__all__ + sybil_detector.__all__) == sorted(OLD_SYBIL_NAMES)
    assert max(written_lines((ROOT / "coretex" / "consensus" / f"{m}.py").read_text()) for m in ("sybil", "sybil_detector")) <= 600
