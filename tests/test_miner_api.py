"""A miner's own client against `coretex coordinator serve` (a subprocess): the network's five /coretex routes.

One served coordinator per backend (embedded defaults; a ganache node over JSON-RPC), each walked through the
miner's flow: health, status, substrate, a patch built from status's allowed types and ranges, submit, receipt
lookup by either hash, resubmission. On embedded defaults also the contract's worked examples, the rejection
codes with their HTTP status, and what /v1 shows before a reveal. Every answer is scanned for hidden keys.
"""
import json, os, re, subprocess, threading, time, urllib.error, urllib.request
import pytest
from coretex.core.keccak import from_hex, to_hex
from coretex.core.layout import (encode_atom, encode_memory_slot, encode_relation, encode_temporal, TARGET_NONE,
                                 REQUIRE_NO_EVIDENCE_PATH)
from coretex.core.patch import MIXED, POLICY_UPDATE, apply_patch, make_patch, patch_hash, semantic_bytes
from coretex.core.state import GENESIS, state_root, words_from_bytes
from coretex.network.miner_api import hidden_keys
from coretex.network.receipt import decode_calldata, receipt_digest, recover_signer, transaction_domain
from coretex.network.store import EmbeddedMongo, free_port

GENESIS_ROOT = to_hex(state_root(GENESIS))
ME, OTHER = "0x" + "42" * 20, "0x" + "77" * 20
# the union of the reference's forbidden-key patterns (contract document, gate, contract test), applied independently
FORBIDDEN = re.compile(r"qrel|truthdoc|truth|hardnegativ|answer|relevance|epochsecret|epoch_secret|gateseed|gate_seed|confirmseed|"
                       r"confirm_seed|evalseed(?!commit)|eval_seed(?!_commit)|hiddenpack|hidden_pack|failurestat|perqueryfail|"
                       r"scorebeforeppm|scoreafterppm|perfamilydelta", re.I)
# what a stored verdict holds and no answer before the reveal may: packs, seeds, scores, inner reasons, the parent state
SEALED = {"evaluation", "artifact", "pack", "seed", "before", "after", "before_ppm", "after_ppm", "delta_ppm", "reasons", "parentState",
          "gateScorePpm", "confirmScorePpm", "secret", "sealed", "salt"}
# the status fields the contract document, its gate and its contract test require
REQUIRED = ("epochId currentStateRoot confirmedTransitionCount substrate bundleHash coreVersionHash profileName pipelineVersion corpusRoot "
            "corpusMeta activeFrontierRoot allowedPatchTypes patchWordRanges patchWordBudget minImprovementPpm replayTolerancePpm "
            "stateAdvanceThresholdPpm screenerThresholdPpm perMinerScreenerCap memoryIRSchemaVersion activeSubstrateSurfaces exampleValidPatch "
            "hiddenEvalWarning artifactManifestHash profileHash rerankerRevision baselineManifestHash baselineParentScorePpm "
            "baselineVarianceSource recentNoiseFloorPpm pins thresholds qualifiedScreenerPassesSinceLastStateAdvance difficultyController "
            "runwayTelemetry acceptingSubmissions perMiner").split()
PINS = ("parentStateRoot", "coreVersionHash", "corpusRoot", "activeFrontierRoot", "baselineManifestHash", "hiddenSeedCommit")


def keys(o):
    if isinstance(o, dict): return [k for k, v in o.items() for k in [k, *keys(v)]]
    if isinstance(o, list): return [k for v in o for k in keys(v)]
    return []


class Miner:
    "A miner's HTTP client: every answer it reads is kept, to be scanned."
    def __init__(self, base: str): self.base, self.seen = base, []

    def call(self, method: str, path: str, body=None) -> tuple:
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data, {"Content-Type": "application/json"}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=120) as r: out = r.status, json.loads(r.read()), dict(r.headers)
        except urllib.error.HTTPError as e: out = e.code, json.loads(e.read()), dict(e.headers)
        self.seen.append(out[1])
        return out[:2] if "Retry-After" not in out[2] else out

    def get(self, path): return self.call("GET", path)
    def submit(self, patch: bytes, parent: str, miner: str = ME, **extra):
        return self.call("POST", "/coretex/submit", {"patchBytesHex": to_hex(patch), "parentStateRoot": parent, "minerAddress": miner, **extra})


def ganache_node(stack):
    from test_ganache import ganache_bin
    from coretex.network.chain import Chain
    port = free_port()
    p = subprocess.Popen([str(ganache_bin()), "--server.host", "127.0.0.1", "--server.port", str(port), "--miner.blockTime", "0.05",
                          "--logging.quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stack.append(lambda: (p.terminate(), p.wait(10)))
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while True:
        try: Chain.connect(url); return url
        except Exception:
            assert p.poll() is None and time.monotonic() < deadline, "ganache did not start"
            time.sleep(0.2)


@pytest.fixture(scope="module", params=["embedded", "ganache"])
def served(request, tmp_path_factory):
    "`coretex coordinator serve` on its own database (and, for ganache, its own node): (Miner, signer address, chain id expected)."
    tmp, stack = tmp_path_factory.mktemp(request.param), []
    try:
        rpc = ganache_node(stack) if request.param == "ganache" else None
        db = EmbeddedMongo(tmp / "db").start(); stack.append(db.stop)
        env = {**os.environ, "CORETEX_DATA": str(tmp / "data")}
        for k in ("CORETEX_RPC_URL", "CORETEX_SIGNING_KEY", "CORETEX_MONGODB_URI"): env.pop(k, None)
        port = free_port()
        p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", db.uri, "--rate", "100000",
                              "--submit-wait", "60", *(["--rpc", rpc] if rpc else [])], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        stack.append(lambda: (p.terminate(), p.wait(30)))
        lines = []
        while not any("listening" in l for l in lines):
            line = p.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()   # keep the pipe drained
        signer = re.search(r"signer (0x[0-9a-fA-F]{40})", lines[-1]).group(1)
        yield Miner(f"http://127.0.0.1:{port}"), signer, 1337 if rpc else None
    finally:
        for stop in reversed(stack): stop()


def policy_patch(status: dict, k: int) -> bytes:
    "An abstention atom in cell 640 + k of status's currentStateRoot, typed and ranged as status allows."
    t = next(t for t in status["allowedPatchTypes"] if t["name"] == "POLICY_UPDATE")
    lo, hi = t["wordIndexRange"]
    assert lo <= 640 + k <= hi
    atom = encode_atom("missing_evidence", "top1_score", "abstain", "owner", 0xFFFF, budget=80, flags=1)
    return make_patch(from_hex(status["currentStateRoot"]), {640 + k: atom}, t["byte"])


def assert_public(miner: Miner):
    for body in miner.seen:
        assert hidden_keys(body) == [], hidden_keys(body)
        assert not [k for k in keys(body) if FORBIDDEN.search(k) or k in SEALED], body


def test_a_miner_mines(served):
    miner, signer, chain_id = served
    status, health = miner.get("/coretex/health")
    assert status == 200 and health["ok"] and health["acceptingSubmissions"] and health["version"] == "v0" and "perMiner" not in health
    assert health["chainId"] == chain_id if chain_id else health["chainId"] not in (None, 8453)
    assert sorted(health["epochPins"]) == sorted(PINS) and health["confirmedLiveRoot"] == health["chainLiveRoot"] == GENESIS_ROOT
    status, st = miner.get(f"/coretex/status?miner={ME}")
    assert status == 200 and [k for k in REQUIRED if k not in st] == [] and not {"stateRoot", "transitionCount", "perMinerCap"} & set(st)
    assert sorted(st["pins"]) == sorted(PINS) and st["perMinerScreenerCap"] == st["perMiner"]["cap"] == 50 and st["patchWordBudget"] == 4
    assert (st["stateAdvanceThresholdPpm"], st["screenerThresholdPpm"]) == (750, 375)
    assert st["perMiner"] == {"address": ME, "screenersThisEpoch": 0, "remaining": 50, "cap": 50, "nextIndex": 0, "lastReceiptHash": "0x" + "00" * 32}
    assert miner.get("/coretex/status")[1]["perMiner"] is None
    status, sub = miner.get(st["substrate"]["uri"])
    words = words_from_bytes(from_hex(sub["packedHex"]))
    assert status == 200 and to_hex(state_root(words)) == sub["stateRoot"] == st["currentStateRoot"] and sub["wordCount"] == 1024
    assert apply_patch(words, from_hex(st["exampleValidPatch"]["encodedHex"])).words != words   # the offered example applies
    for k in range(1, 17):                                  # a new patch each time: a new draw
        sent = policy_patch(st, k)
        status, won = miner.submit(sent, st["currentStateRoot"])
        assert status == 200 and won["status"] in ("accepted", "rejected"), won
        if won["status"] == "accepted": break
        assert won["code"] in ("gate-acceptance-floor", "confirm-acceptance-floor") and set(won) == {"status", "code", "reason"}
    assert won["status"] == "accepted", "no abstention patch accepted in 16 draws"
    assert won["outcome"] in ("SCREENER_PASS", "STATE_ADVANCE") and won["transaction"]["data"].startswith("0x5dc95d4a")
    rc, _, sig = decode_calldata(from_hex(won["transaction"]["data"]), ME)
    assert recover_signer(receipt_digest(rc, transaction_domain(won["transaction"])), sig) == signer
    assert won["transaction"]["chainId"] == health["chainId"]
    mine = to_hex(patch_hash(semantic_bytes(sent)))
    for h in {won["patchHash"], mine}:
        status, again = miner.get(f"/coretex/receipt/{h}")
        assert status == 200 and again["receipt"] == won["receipt"] and again["confirmedOnChain"] == (won["outcome"] == "STATE_ADVANCE")
    status, dup = miner.submit(sent, st["currentStateRoot"])       # the same bytes again
    st2 = miner.get(f"/coretex/status?miner={ME}")[1]
    assert st2["perMiner"]["nextIndex"] == int(won["receipt"]["solveIndex"]) + 1
    if won["outcome"] == "STATE_ADVANCE":                            # the root moved: the parent check answers first
        assert (status, dup["code"], dup["currentStateRoot"]) == (200, "E01", won["newStateRoot"])
        assert st2["currentStateRoot"] == won["newStateRoot"] and miner.get(f"/coretex/substrate/{won['newStateRoot']}")[0] == 200
        assert st2["pins"]["parentStateRoot"] == GENESIS_ROOT and st2["confirmedTransitionCount"] == 1   # the epoch keeps its opening root
        assert miner.get(f"/coretex/substrate/{GENESIS_ROOT}")[0] == 200                                 # still a confirmed root
    else:
        assert (status, dup["code"], dup["patchHash"]) == (200, "DuplicateCoreTexPatch", won["patchHash"])
        assert st2["perMiner"]["screenersThisEpoch"] == 1 and won["perMinerScreenerCount"] == 1
    assert miner.get("/coretex/receipt/0x" + "00" * 32) == (404, {"status": "rejected", "reason": "unknown patchHash (not signed by this coordinator)"})
    assert miner.get("/coretex/substrate/0x" + "00" * 32)[0] == 404
    for method, path in (("POST", "/coretex/health"), ("GET", "/coretex/submit"), ("GET", "/coretex/challenge"), ("DELETE", "/coretex/status")):
        assert miner.call(method, path) == (404, {"error": "coretex-not-found"})
    assert_public(miner)


EXAMPLES = {   # the contract's worked examples, as the reference's example script builds them
    "temporal MIXED": (MIXED, {32: encode_memory_slot("mem_doc_stale", "temporal", revoked=True, domain=1),
                               33: encode_memory_slot("mem_doc_current", "temporal", domain=1),
                               800: encode_temporal(memory_slot=0, superseded_by=1, valid_from=1, valid_until=2**40 - 1, current_stale=True)}),
    "relation lens": (0x04, {799: encode_relation("supports", 0x8000)}),
    "evidence bootstrap": (MIXED, {37: encode_memory_slot("mem_relation_anchor", "multi_hop_relation", domain=1, policy_anchor=True),
                                   384: encode_atom("answer_density", "support_in_degree", "bundle", "relation_path", target_slot=5, budget=250)}),
    "conflict bootstrap": (MIXED, {38: encode_memory_slot("mem_conflict_anchor", "multi_hop_relation", domain=1, policy_anchor=True),
                                   512: encode_atom("conflict_set_member", "contradicts_edge", "boost", "conflict_set", target_slot=6, budget=200)}),
    "guarded abstention": (POLICY_UPDATE, {640: encode_atom("missing_evidence", "no_public_evidence_path", "abstain", "entity",
                                                            target_slot=TARGET_NONE, budget=0, flags=REQUIRE_NO_EVIDENCE_PATH)}),
}


def on_embedded(served):
    if served[2] is not None: pytest.skip("the worked examples and the code table run once, on embedded defaults")
    return served[0]


def test_the_contracts_worked_examples(served):
    miner = on_embedded(served)
    root = miner.get("/coretex/status")[1]["currentStateRoot"]
    built = {name: make_patch(from_hex(root), cells, t) for name, (t, cells) in EXAMPLES.items()}
    answers = {name: miner.submit(b, root) for name, b in built.items()}
    assert all(status == 200 for status, _ in answers.values()), answers
    for name in list(EXAMPLES)[:4]: assert answers[name][1]["code"] == "gate-acceptance-floor", (name, answers[name])
    last = answers["guarded abstention"][1]
    assert last.get("outcome") == "STATE_ADVANCE" or last.get("code") in ("gate-acceptance-floor", "confirm-acceptance-floor"), last
    assert_public(miner)


def test_each_rejection_code_and_its_http_status(served):
    miner = on_embedded(served)
    root = miner.get("/coretex/status")[1]["currentStateRoot"]
    on = lambda cells, t=0x02: make_patch(from_hex(root), cells, t)
    good = on({40: 1 << 48})
    raw = lambda body: miner.call("POST", "/coretex/submit", body)
    cases = [
        ("BODY", 400, raw(b"[1]")), ("BODY", 400, raw(b"{")), ("BODY", 400, raw({"patchBytesHex": good.hex(), "parentStateRoot": root, "minerAddress": ME})),
        ("BODY", 400, miner.submit(good, root, miner="0x42")), ("BODY", 400, miner.submit(good, root[2:])),
        ("BODY_UNKNOWN_KEY", 200, miner.submit(good, root, epochId=1)), ("PATCH_TOO_LARGE", 200, miner.submit(b"\xab" * 300, root)),
        ("E01", 200, miner.submit(good, "0x" + "11" * 32)), ("DECODE", 400, miner.submit(good[:-1], root)),
        ("E01", 200, miner.submit(make_patch(from_hex("0x" + "22" * 32), {40: 1 << 48}, 0x02), root)),
        ("E02", 400, miner.submit(on({3: 1}, MIXED), root)), ("E04", 400, miner.submit(on({900: 1}, MIXED), root)),
        ("E05", 400, miner.submit(on({41: 0}), root)),
    ]
    for code, http, (status, body) in cases:
        assert (status, body["status"], body["code"]) == (http, "rejected", code), (code, body)
        assert isinstance(body["reason"], str) and "\n" not in body["reason"]
    assert cases[7][2][1]["currentStateRoot"] == root
    first = miner.submit(on({45: 1 << 48}), root)               # evaluated: a rejection, its code again for its miner, duplicate_submission for others
    assert first[0] == 200 and first[1]["status"] == "rejected"
    assert miner.submit(on({45: 1 << 48}), root)[1]["code"] == first[1]["code"]
    assert miner.submit(on({45: 1 << 48}), root, miner=OTHER) == (200, {"status": "rejected", "code": "duplicate_submission", "reason": "this patch was already evaluated"})
    assert_public(miner)


def test_v1_shows_no_hidden_key_before_the_reveal(served):
    miner = on_embedded(served)
    root = miner.get("/coretex/status")[1]["currentStateRoot"]
    patch = make_patch(from_hex(root), {46: 1 << 48}, 0x02)
    status, job = miner.call("POST", "/v1/patches", {"miner": ME, "patch": patch.hex(), "epochId": 1})
    assert status == 202
    deadline = time.monotonic() + 60
    while miner.get(f"/v1/jobs/{job['jobId']}")[1]["status"] != "done": assert time.monotonic() < deadline; time.sleep(0.2)
    status, env = miner.get(f"/v1/results/{job['dedupKey']}")
    assert status == 200 and env["outcome"] == "REJECT" and env["code"] in ("gate-acceptance-floor", "confirm-acceptance-floor")
    assert miner.call("POST", "/v1/patches", {"miner": ME, "patch": patch.hex(), "epochId": 1})[1]["envelope"] == env   # cached
    assert_public(miner)


def test_finalize_reads_verdicts_refused_at_signing(tmp_path):
    "A W02 or screener-cap verdict carries no evaluation; finalization counts it as a rejection with no gain."
    import coretex.network.finalize   # noqa: F401  (adds epoch_verdicts to the store)
    from coretex.network.coordinator import CoordinatorStore, Job, refused_verdict
    from coretex.network.receipt import Signer
    from coretex.network.store import open_db
    db, close = open_db(path=tmp_path / "db")
    try:
        store = CoordinatorStore(db, Signer(b"\x01" * 32))
        patch = make_patch(state_root(GENESIS), {40: 1 << 48}, 0x02)
        job = Job("0x01", "done", ME, to_hex(patch), 1, GENESIS_ROOT, "0x02", "0x03", 1, 31)
        store.add_job(job)
        store.save_verdict(job.dedup_key, refused_verdict(job, "W02_STALE_PARENT_AT_SIGNING", currentStateRoot="0x" + "11" * 32), job.id)
        [s] = store.epoch_verdicts(1)
        assert (s.job_id, s.outcome, s.delta_ppm) == ("0x01", "REJECT", 0)
    finally: close()
