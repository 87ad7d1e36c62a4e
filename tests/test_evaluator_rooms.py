"""The evaluator in rooms: every name coretex 0.2 imported from `coretex.evaluator.evaluate` still imports from
there, the evaluator's face plainly and every other name with a warning naming its room; each name lives in
exactly one room; no room is a long module."""
import importlib, warnings
import pytest
from coretex.layers import written_lines

OLD_NAMES = """
STAGE1 SCOPE_KEYS ENTITY_ATOM_SLOTS SCOPE_ATOM_SLOTS NOISE_WORDS FORCED TOP_KEPT embedded_corpus temporal_marks
decode_temporal_records cross_checked structural_validity StateView state_view entity_registry name_pattern
pinned_bundle_hash default_embedder QueryStores Evaluator EvaluationError Candidate Stage1 Pool stage1_of
stage1_pool owner_scope_index scoped_stage1 owner_bm25 name_in query_subjects relation_intent lifecycle_intent
conflict_intent subjects_of QueryShape query_shape QueryContext query_context public_scope scope_matches
admit_event_truths is_memory_event role_aliases names_subject window_events admit_entity_atoms admit_scope_atoms
evidence_atoms noise_intent admit_policy_anchors lens_weights active_lenses lens_add lens_directions
category_lens_bfs validity_query is_temporal_query record_applies_to record_applies mark lifecycle temporal_bonus
validity_events admit_validity_records lookup by_code in_order first_in_order Candidates candidates reranker_cap
memory_ir_header memory_ir Bridges rendered_texts inherited_scores DocsByEvent atom_fires evidence_targets
scope_bonuses policy_bonuses evidence_path confident abstains route Ranking Ordered top_order order_query vote
rank_query query_metrics ViewReads view_reads ranking_key ranked lens_reach window_reads policy_reads lens_reads
mark_reads validity_reads any_marks_read query_reads ViewChanges view_changes query_affected PatchWork ordered
affected_flags pack_orders score_orders affected_queries score_state seed_inputs_for score_pack PackReport run_pack
EvalReport evaluate_patch render_report
""".split()   # coretex 0.2's `coretex.evaluator.evaluate.__all__`, frozen here
ROOMS = ("views", "stage1", "intents", "atoms", "lenses", "temporal", "candidates", "memory_ir", "ordering", "per_query",
         "dependency", "evaluate")   # in reading order: a query from its state to its verdict
FACE = {"Evaluator", "EvaluationError", "embedded_corpus", "StateView", "order_query", "rank_query", "ranking_key", "query_metrics"}


def test_the_face_imports_plainly():
    E = importlib.import_module("coretex.evaluator.evaluate")
    assert FACE <= set(E.__all__) and not FACE & set(E.MOVED_NAMES)


def home_of(name):
    homes = [r for r in ROOMS if name in importlib.import_module(f"coretex.evaluator.{r}").__dict__.get("__all__", ())
             and r != "evaluate" or (r == "evaluate" and name in _own_evaluate())]
    return homes


def _own_evaluate():
    E = importlib.import_module("coretex.evaluator.evaluate")
    return {n for n in E.__all__ if getattr(E.__dict__.get(n), "__module__", E.__name__) == E.__name__}


def test_the_old_list_is_the_old_module():
    assert len(OLD_NAMES) == 122 and len(set(OLD_NAMES)) == 122


@pytest.mark.parametrize("name", OLD_NAMES)
def test_an_old_name_imports_from_the_old_module(name):
    E = importlib.import_module("coretex.evaluator.evaluate")
    homes = home_of(name)
    assert len(homes) == 1, (name, homes)   # defined in exactly one room
    home = importlib.import_module(f"coretex.evaluator.{homes[0]}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(E, name)
    assert value is getattr(home, name)
    moved = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    if name in E.__dict__:   # the last room's own names, the evaluator's face, and what the last room imports to use
        assert moved == [], name
    else:
        assert E.MOVED_NAMES[name] == f"evaluator.{homes[0]}"
        assert [str(w.message) for w in moved] == [f"coretex.evaluator.evaluate.{name} is now {home.__name__}.{name}; "
                                                   "the old path goes in coretex 0.3"]


def test_an_old_from_import_still_works_and_an_unknown_name_still_fails():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from coretex.evaluator.evaluate import category_lens_bfs, load_manifest
    from coretex.evaluator.lenses import category_lens_bfs as new
    from coretex.core.seeds import load_manifest as seeds_load_manifest
    assert (category_lens_bfs, load_manifest) == (new, seeds_load_manifest)
    with pytest.raises(ImportError):
        from coretex.evaluator.evaluate import no_such_name  # noqa: F401


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_is_short(room):
    module = importlib.import_module(f"coretex.evaluator.{room}")
    assert written_lines(open(module.__file__).read()) <= 600
