"""Every case of the validator-trust vectors (../shared/vectors/coretex/validator-trust, the reference validator's own
answers): rotation-manifest verify and hash, corpus-delta verify and hash (or the parse error), each step of every
delta chain applied (root and event count, or the step that throws), the recomputed bundleHash with its error
messages, the artifact file checks and the key-pin answers. Then `strict`: false exactly where the README lists a
laxity of the reference, the same answer everywhere else."""
import gzip, json
from pathlib import Path
import pytest
from coretex.network.trust import (TrustError, apply_corpus_delta, bundle_errors, bundle_hash, check_key_pin, corpus_delta_hash,
                                   key_pin_text, rotation_manifest_hash, verify_corpus_delta, verify_payload_file,
                                   verify_rotation_manifest)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "vectors" / "coretex"
VECTORS, BASE = SHARED / "validator-trust" / "vectors.json.gz", SHARED / "evaluator" / "corpus.json.gz"
# the README's laxities, by the case notes that exercise them
LAX_NOTES = ("signer.algorithm swapped", "private key PEM", "EC PRIVATE KEY PEM")
ORDERS = {  # SEC 2 group orders, to tell a high-S ECDSA signature independently of the module
    "prime256v1": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    "secp256k1": 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141,
    "secp384r1": 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973}


def der_s(sig_hex: str) -> int:
    "s of a DER SEQUENCE{r, s} (short-form lengths: curves up to P-384)."
    b = bytes.fromhex(sig_hex[2:])
    i = 2 + (1 if b[1] & 0x80 else 0)   # skip SEQUENCE tag and length
    i += 2 + b[i + 1]                   # skip r
    return int.from_bytes(b[i + 2:i + 2 + b[i + 1]], "big")


@pytest.fixture(scope="module")
def v():
    if not VECTORS.exists(): pytest.skip(f"the trust vectors are not beside this checkout ({VECTORS})")
    return json.load(gzip.open(VECTORS))


def pem_of(v, case): return case["publicKeyPem"] if "publicKeyPem" in case else v["keys"][case["key"]]["publicKeyPem"]


def strict_expect(case, lenient: bool, key: dict, label: str|None, signature) -> bool:
    "What strict answers: the lenient answer, less the laxities (a label not of the key's family, DSA, private PEM, high S)."
    if not lenient: return False
    family = {"rsa": "RSA-SHA256", "rsa-pss": "RSA-SHA256", "ec": "ECDSA-SHA256"}.get(key["type"])
    high_s = key["type"] == "ec" and der_s(signature) > ORDERS[key["curve"]] // 2
    return family is not None and label in (None, family) and not high_s and not any(n in case["note"] for n in LAX_NOTES)


def test_rotation_manifests(v):
    assert len(v["cases"]["rotation_verify"]) == 349
    for c in v["cases"]["rotation_verify"]:
        got, key = verify_rotation_manifest(c["dict"], pem_of(v, c)), v["keys"][c["key"]]
        assert got == c["expect"]["verify"], (c["id"], c["note"])
        assert rotation_manifest_hash(c["dict"]) == c["expect"]["manifest_hash"], (c["id"], c["note"])
        signer = c["dict"].get("signer") if isinstance(c["dict"].get("signer"), dict) else {}
        want = strict_expect(c, got, key, signer.get("algorithm"), signer.get("signature"))
        assert verify_rotation_manifest(c["dict"], pem_of(v, c), strict=True) == want, (c["id"], c["note"])


def test_corpus_deltas(v):
    assert len(v["cases"]["delta"]) == 91
    for c in v["cases"]["delta"]:
        if "parse_error" in c:
            with pytest.raises(ValueError, match=c["parse_error"]): corpus_delta_hash(c["dict"])
            with pytest.raises(ValueError): verify_corpus_delta(c["dict"], pem_of(v, c))
            continue
        got = verify_corpus_delta(c["dict"], pem_of(v, c))
        assert got == c["expect"]["verify"], (c["id"], c["note"])
        assert corpus_delta_hash(c["dict"]) == c["expect"]["hash"] == "0x" + c["expect"]["sha256"], (c["id"], c["note"])
        want = strict_expect(c, got, v["keys"][c["key"]], None, c["dict"].get("signature"))
        assert verify_corpus_delta(c["dict"], pem_of(v, c), strict=True) == want, (c["id"], c["note"])


def test_apply_chains(v):
    if not BASE.exists(): pytest.skip("the evaluator vectors' corpus is not beside this checkout")
    base = json.load(gzip.open(BASE))
    assert base["corpusRoot"] == v["base_corpus"]["corpusRoot"]
    steps = 0
    for c in v["cases"]["apply"]:
        corpus = base
        for delta, want in zip(c["deltas"], c["expect"]):
            steps += 1
            if "error" in want:
                with pytest.raises(ValueError) as e: apply_corpus_delta(corpus, delta)
                assert str(e.value) == want["error"], (c["id"], c["note"])
                break
            corpus = apply_corpus_delta(corpus, delta)
            assert (corpus["corpus_root"], len(corpus["events"])) == (want["corpus_root"], want["event_count"]), (c["id"], c["note"])
    assert len(v["cases"]["apply"]) == 22 and steps >= 22


def test_bundle_hashes(v):
    assert len(v["cases"]["bundle"]) == 51
    for c in v["cases"]["bundle"]:
        e = c["expect"]
        assert bundle_hash(c["dict"]) == e["bundle_hash"], (c["id"], c["note"])
        want = ([] if e["hash_check_passes"] else [e["hash_error"]]) + e["structural_errors"]
        assert bundle_errors(c["dict"]) == want, (c["id"], c["note"])


def test_artifact_files(v, tmp_path):
    for i, c in enumerate(v["cases"]["hydration"]):
        path = tmp_path / f"payload-{i}"
        if c["file_hex"] is not None: path.write_bytes(bytes.fromhex(c["file_hex"]))
        assert verify_payload_file(path, c["expected"]) == c["expect"], c["note"]
        zero_x = str(c["expected"]["sha256"]).startswith("0x")
        strict_ok = verify_payload_file(path, c["expected"], strict=True)["ok"]
        assert strict_ok == (c["expect"]["ok"] or zero_x), c["note"]   # strict closes only the 0x laxity


def test_key_pins(v, tmp_path):
    for i, c in enumerate(v["cases"]["tofu"]):
        pin_file, served = tmp_path / f"pin-{i}.json", c.get("servedPublicKeyPem") or v["keys"][c["servedKey"]]["publicKeyPem"]
        if "pinnedKey" in c: pin_file.write_text(key_pin_text(v["keys"][c["pinnedKey"]]["publicKeyPem"], "2026-06-11T00:00:00.000Z"))
        if "error" in c["expect"]:
            with pytest.raises(TrustError) as e: check_key_pin(pin_file, served)
            assert e.value.message == c["expect"]["error"].replace("<pin-file>", str(pin_file)), c["note"]
            assert e.value.code == "KEY_PIN_MISMATCH"
        else: assert check_key_pin(pin_file, served) == c["expect"], c["note"]


def test_rotation_delta_bindings(v):
    for c in v["cases"]["rotation_delta_binding"]:
        m, d = v["rotation_manifests"][c["manifest"]], v["deltas"][c["delta"]]
        assert corpus_delta_hash(d["signed"]) == c["delta_hash"] == m["signed"]["corpusDeltaHash"]


def test_strict_refuses_half_the_reference_ec_signatures(v):
    "The reference signs ECDSA without normalising S: strict (low S only) refuses those of its signatures that are high."
    ec = [m for m in v["rotation_manifests"].values() if v["keys"][m["signedBy"]]["type"] == "ec"]
    highs = [der_s(m["signed"]["signer"]["signature"]) > ORDERS[v["keys"][m["signedBy"]]["curve"]] // 2 for m in ec]
    for m, high in zip(ec, highs):
        assert verify_rotation_manifest(m["signed"], v["keys"][m["signedBy"]]["publicKeyPem"], strict=True) == (not high)
    print(f"{sum(highs)} of {len(ec)} reference EC manifest signatures are high-S")


def test_case_count(v):
    compared = sum(len(v["cases"][k]) for k in ("rotation_verify", "delta", "apply", "bundle"))
    assert compared == 513
