"""The malformed inputs tried on every `coretex` subcommand and HTTP endpoint, as data.

`tests/test_bad_input.py` runs each case; `python tests/bad_input_cases.py > docs/bad-input.md` writes the
table of cases for the docs from the same tuples (a test checks the file is current).
"""
from collections import namedtuple

Cli = namedtuple("Cli", "name argv rc says")            # {token}s in argv are files made by the test
Http = namedtuple("Http", "name method path body status code")   # body: bytes, or "raw:" bytes sent as is on a socket
EMPTY = None   # the code of a refusal by Granian's own HTTP parser: the status alone, with an empty body (no hook lets coretex answer it)

FILES = {                                                # token -> (what it is, bytes or None for a folder)
    "genesis": ("the all-zero state, raw", bytes(32768)),
    "short": ("a truncated state: 100 bytes", b"\x01" * 100),
    "nonutf8": ("bytes that are not UTF-8", b"\xff\xfe\xfa" * 40 + b"\n"),
    "hexbad": ("65,536 characters of non-hex text", b"zz" * 32768),
    "dir": ("an empty folder", None),
    "empty": ("an empty file", b""),
    "wrongshape": ("JSON of the wrong shape: [1, 2]", b"[1, 2]"),
    "gzbad": ("a .gz file that is not gzip", b"not gzip"),
    "deep": ("one JSON line nested 100,000 deep", b"[" * 100_000 + b"]" * 100_000 + b"\n"),
    "nan": ("a response with response_time_ms NaN", b'{"miner": "a", "text": "x", "response_time_ms": NaN}\n'),
    "inf": ("a response with confidence Infinity", b'{"miner": "a", "text": "x", "confidence": Infinity}\n'),
    "wrongtype": ("a response whose text is a number", b'{"miner": "a", "text": 5}\n'),
    "booltime": ("a response whose time is true", b'{"miner": "a", "text": "x", "response_time_ms": true}\n'),
    "array": ("a JSON line that is an array", b"[1, 2]\n"),
    "ok": ("one valid response", b'{"miner": "a", "text": "Ice floats.", "response_time_ms": 10}\n'),
    "keybad": ("a key file that is not hex", b"not a key\n"),
    "trunc": ("a truncated report", b'{"report": {"epochId": 1, '),
    "unsigned": ("a JSON object that is not a signed report", b"{}"),
    "unsigned_state": ("a report shaped like an envelope, without a parent state", b'{"artifact": {}, "transaction": {}}'),
    "claim": ("a claim as claim-proof prints it", b'{"epoch": 1, "miner": "0x' + b"aa" * 20 + b'", "bonus_botcoin": "5", "cap_botcoin": "5", "proof": [], "leaf_index": 0, "merkle_root": "0x' + b"11" * 32 + b'"}'),
    "zerofixtures": ("a fixtures folder whose beliefs.seed.json is a link to /dev/zero", {"beliefs.seed.json": "/dev/zero"}),
    "randomfixtures": ("a fixtures folder whose retrieval.cases.json is a link to /dev/urandom", {"retrieval.cases.json": "/dev/urandom"}),
    "fifo": ("a FIFO nobody writes to (opening it to read would wait for ever)", "fifo"),
}

H = "0x" + "11" * 32
SEEDS = ["seeds", "--epoch-secret", H, "--blockhash", H, "--patch-hash", H, "--parent-root", H, "--corpus-root", H, "--bundle-hash", H]
def seeds(**kw):
    "SEEDS with some arguments replaced (keys with _ for -)."
    out = list(SEEDS) + ["--epoch-id", "1"]
    for k, v in kw.items(): out[out.index("--" + k.replace("_", "-")) + 1] = v
    return out
EVAL = ["evaluate", "--state", "{genesis}", "--patch", "ff01", "--blockhash", H]

CLI = [
    Cli("state-root /dev/zero (endless)", ["state-root", "/dev/zero"], 2, "state /dev/zero: not a regular file"),
    Cli("state-root missing file", ["state-root", "{dir}/missing"], 2, "cannot read state"),
    Cli("state-root truncated file", ["state-root", "{short}"], 2, "neither 32768 raw bytes"),
    Cli("state-root non-UTF-8 file", ["state-root", "{nonutf8}"], 2, "neither 32768 raw bytes"),
    Cli("state-root bad hex", ["state-root", "{hexbad}"], 2, "not hex"),
    Cli("state-root a folder", ["state-root", "{dir}"], 2, "Is a directory"),
    Cli("patch-apply bad hex", ["patch-apply", "{genesis}", "zz"], 1, '"code": "DECODE"'),
    Cli("patch-apply wrong length", ["patch-apply", "{genesis}", "ff01"], 1, '"code": "DECODE"'),
    Cli("patch-apply truncated state", ["patch-apply", "{short}", "ff01"], 2, "state"),
    Cli("patch-apply /dev/zero (endless)", ["patch-apply", "/dev/zero", "ff01"], 2, "state /dev/zero: not a regular file"),
    Cli("evaluate --state /dev/zero (endless)", ["evaluate", "--state", "/dev/zero", "--patch", "ff01", "--blockhash", H], 2, "/dev/zero: not a regular file"),
    Cli("seeds bad hex", seeds(blockhash="0xzz"), 2, "--blockhash: not hex"),
    Cli("seeds wrong length", seeds(parent_root="0x1234"), 2, "--parent-root: expected 32 bytes, got 2"),
    Cli("seeds --epoch-id 2^70", seeds(epoch_id=str(2**70)), 2, "not a u64"),
    Cli("seeds --epoch-id not a number", seeds(epoch_id="one"), 2, "--epoch-id: not an integer"),
    Cli("seeds zero blockhash", seeds(blockhash="0x" + "00" * 32), 2, "blockhash is zero"),
    Cli("evaluate --corpus empty file", EVAL + ["--corpus", "{empty}"], 2, "--corpus"),
    Cli("evaluate --corpus wrong shape", EVAL + ["--corpus", "{wrongshape}"], 2, "expected a JSON object with an 'events' list"),
    Cli("evaluate --corpus not UTF-8", EVAL + ["--corpus", "{nonutf8}"], 2, "not JSON"),
    Cli("evaluate --corpus bad gzip", EVAL + ["--corpus", "{gzbad}"], 2, "--corpus"),
    Cli("evaluate --corpus a folder that is not a packed corpus", EVAL + ["--corpus", "{dir}"], 2, "not a packed corpus"),
    Cli("corpus-pack an empty file", ["corpus-pack", "{empty}", "never-written.packed"], 2, "--corpus"),
    Cli("corpus-pack into an existing folder", ["corpus-pack", "{ok}", "{dir}"], 2, "already exists"),
    Cli("evaluate --reranker empty folder", EVAL + ["--reranker", "{dir}"], 2, "--reranker"),
    Cli("evaluate truncated --state", ["evaluate", "--state", "{short}", "--patch", "ff01", "--blockhash", H], 2, "state"),
    Cli("evaluate bad --blockhash", ["evaluate", "--state", "{genesis}", "--patch", "ff01", "--blockhash", "zz"], 2, "--blockhash"),
    Cli("consensus 100,000-deep nesting", ["consensus", "{deep}"], 2, "nested too deeply"),
    Cli("consensus --out a file", ["consensus", "{ok}", "--out", "{ok}"], 2, "exists and is not a folder"),
    Cli("consensus NaN", ["consensus", "{nan}"], 2, "NaN is not JSON"),
    Cli("consensus Infinity", ["consensus", "{inf}"], 2, "Infinity is not JSON"),
    Cli("consensus text of the wrong type", ["consensus", "{wrongtype}"], 2, "text must be a string"),
    Cli("consensus time true", ["consensus", "{booltime}"], 2, "response_time_ms must be a finite number"),
    Cli("consensus a line that is not an object", ["consensus", "{array}"], 2, "expected a JSON object"),
    Cli("consensus non-UTF-8 file", ["consensus", "{nonutf8}"], 2, "not JSON"),
    Cli("consensus missing file", ["consensus", "{dir}/missing.jsonl"], 2, "cannot read"),
    Cli("consensus --narrator-url notaurl", ["consensus", "{ok}", "--narrator-url", "notaurl"], 2, "not an http(s) URL"),
    Cli("consensus --mongodb-uri http://x", ["consensus", "{ok}", "--mongodb-uri", "http://x"], 2, "not a MongoDB URI"),
    Cli("weights --since 1000000d", ["weights", "--since", "1000000d"], 2, "longer than 3650 days"),
    Cli("weights --since 24x", ["weights", "--since", "24x"], 2, "expected a number and a unit"),
    Cli("weights --alpha nan", ["weights", "--alpha", "nan"], 2, "not a number in (0, 1]"),
    Cli("weights --alpha 2", ["weights", "--alpha", "2"], 2, "not a number in (0, 1]"),
    Cli("weights --mongodb-uri http://x", ["weights", "--mongodb-uri", "http://x"], 2, "not a MongoDB URI"),
    Cli("consensus-service --interval soon", ["consensus-service", "--interval", "soon"], 2, "expected a number and a unit"),
    Cli("consensus-service --alpha 0", ["consensus-service", "--alpha", "0"], 2, "not a number in (0, 1]"),
    Cli("coordinator reveal --epoch 2^70", ["coordinator", "reveal", "--epoch", str(2**70)], 2, "outside 0..9223372036854775807"),
    Cli("coordinator reveal --epoch 1.5", ["coordinator", "reveal", "--epoch", "1.5"], 2, "not an integer"),
    Cli("coordinator reveal of no epoch", ["coordinator", "reveal", "--epoch", "99"], 2, "no such epoch"),
    Cli("coordinator work --key-file a folder", ["coordinator", "work", "--once", "--key-file", "{dir}"], 2, "Is a directory"),
    Cli("coordinator work --key-file not hex", ["coordinator", "work", "--once", "--key-file", "{keybad}"], 2, "--key-file"),
    Cli("coordinator work --rpc notaurl", ["coordinator", "work", "--rpc", "notaurl"], 2, "not an http(s) URL"),
    Cli("coordinator work --rpc nothing listening", ["coordinator", "work", "--rpc", "http://127.0.0.1:1"], 2, "cannot reach the JSON-RPC node"),
    Cli("coordinator serve --port -1", ["coordinator", "serve", "--port", "-1"], 2, "outside 0..65535"),
    Cli("coordinator serve --port 99999", ["coordinator", "serve", "--port", "99999"], 2, "outside 0..65535"),
    Cli("coordinator serve --epoch -1", ["coordinator", "serve", "--epoch", "-1"], 2, "outside 0..9223372036854775807"),
    Cli("coordinator serve --confirmations -1", ["coordinator", "serve", "--confirmations", "-1"], 2, "outside 0..1000"),
    Cli("coordinator serve --rate 0", ["coordinator", "serve", "--rate", "0"], 2, "outside 1..1000000"),
    Cli("coordinator serve truncated --state", ["coordinator", "serve", "--state", "{short}"], 2, "--state"),
    Cli("coordinator serve --mongodb-uri http://x", ["coordinator", "serve", "--mongodb-uri", "http://x"], 2, "not a MongoDB URI"),
    Cli("validator sync --registry not hex", ["validator", "sync", "--registry", "0xzz", "--data", "{dir}/v"], 2, "--registry: not hex"),
    Cli("validator sync --registry 2 bytes", ["validator", "sync", "--registry", "0x1234", "--data", "{dir}/v"], 2, "--registry: expected 20 bytes, got 2"),
    Cli("validator sync --state without --from-block", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--state", "{genesis}"], 2, "--state needs --from-block"),
    Cli("validator sync truncated --state", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--from-block", "5", "--state", "{short}"], 2, "--state"),
    Cli("validator sync --watch 0", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--watch", "0"], 2, "outside 1..86400"),
    Cli("validator sync --once --watch", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--once", "--watch", "5"], 2, "not allowed with argument --once"),
    Cli("validator sync --bundle-manifest not a manifest", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--bundle-manifest", "{wrongshape}"], 2, "not a bundle manifest"),
    Cli("validator sync --bundle-manifest /dev/zero", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v", "--bundle-manifest", "/dev/zero"], 2, "not a regular file"),
    Cli("validator sync without a node", ["validator", "sync", "--registry", "0x" + "12" * 20, "--data", "{dir}/v"], 2, "give --rpc URL"),
    Cli("coordinator finalize --registry without --rpc", ["coordinator", "finalize", "--epoch", "1", "--registry", "0x" + "12" * 20], 2, "--registry needs --rpc"),
    Cli("claim-proof --verify --root and --registry", ["claim-proof", "--verify", "{claim}", "--root", H, "--registry", "0x" + "12" * 20], 2, "give --root or --registry, not both"),
    Cli("replay 100,000-deep report", ["replay", "{deep}", "--epoch-secret", H], 2, "cannot read report"),
    Cli("replay non-UTF-8 report", ["replay", "{nonutf8}", "--epoch-secret", H], 2, "cannot read report"),
    Cli("replay truncated report", ["replay", "{trunc}", "--epoch-secret", H], 2, "cannot read report"),
    Cli("replay an object that is not a report", ["replay", "{unsigned}", "--epoch-secret", H], 2, "is not a signed receipt envelope"),
    Cli("beliefs eval --mongodb-uri http://x", ["beliefs", "eval", "--mongodb-uri", "http://x"], 2, "not a MongoDB URI"),
    Cli("beliefs eval --backend nope", ["beliefs", "eval", "--backend", "nope"], 2, "invalid choice"),
    # every reader is bounded (these run under a 1 GiB address-space cap), integers are ASCII digits
    *[Cli(f"{name} {dev} (endless)", [a.replace("DEV", dev) for a in argv], 2, says.replace("DEV", dev)) for dev in ("/dev/zero", "/dev/urandom") for name, argv, says in [
        ("state-root", ["state-root", "DEV"], "state DEV: not a regular file"),
        ("evaluate --corpus", EVAL + ["--corpus", "DEV"], "not a regular file"),
        ("corpus-pack", ["corpus-pack", "DEV", "never-written.packed"], "not a regular file"),
        ("evaluate-batch", ["evaluate-batch", "DEV", "--workers", "0"], "DEV: not a regular file"),
        ("consensus", ["consensus", "DEV", "--no-store"], "/dev/"),
        ("replay", ["replay", "DEV", "--epoch-secret", H], "report DEV: not a regular file"),
        ("replay --state", ["replay", "{unsigned_state}", "--epoch-secret", H, "--state", "DEV"], "--state DEV: not a regular file"),
        ("coordinator reveal --key-file", ["coordinator", "reveal", "--epoch", "1", "--key-file", "DEV"], "--key-file DEV: not a regular file"),
        ("coordinator work --key-file", ["coordinator", "work", "--once", "--key-file", "DEV"], "--key-file DEV: not a regular file"),
        ("coordinator serve --state", ["coordinator", "serve", "--state", "DEV"], "--state DEV: not a regular file")]
      if (name, dev) != ("state-root", "/dev/zero")],   # that one is above
    Cli("coordinator reveal --epoch fullwidth 1", ["coordinator", "reveal", "--epoch", "\uff11"], 2, "not an integer"),
    Cli("coordinator serve --port fullwidth 8750", ["coordinator", "serve", "--port", "\uff18\uff17\uff15\uff10"], 2, "not an integer"),
    Cli("coordinator serve --confirmations Arabic-Indic 2", ["coordinator", "serve", "--confirmations", "\u0662"], 2, "not an integer"),
    Cli("coordinator serve --port 8_750", ["coordinator", "serve", "--port", "8_750"], 2, "not an integer"),
    Cli("seeds --epoch-id fullwidth 1", seeds(epoch_id="\uff11"), 2, "--epoch-id: not an integer"),
    Cli("evaluate-batch --workers fullwidth 2", ["evaluate-batch", "{ok}", "--workers", "\uff12"], 2, "--workers: not an integer"),
    Cli("evaluate-batch --workers -1", ["evaluate-batch", "{ok}", "--workers", "-1"], 2, "-1 is outside 0..1024"),
    Cli("beliefs eval --fixtures with /dev/zero", ["beliefs", "eval", "--fixtures", "{zerofixtures}"], 2, "beliefs.seed.json: not a regular file"),
    # the last readers capped, and nothing but a regular file opened (a FIFO once hung 19 of 22 readers)
    *[Cli(f"{name} {what}", [a.replace("DEV", dev) for a in argv], 2, f"{opt} {dev}: not a regular file")
      for what, dev in (("/dev/zero (endless)", "/dev/zero"), ("a FIFO", "{fifo}")) for name, argv, opt in [
        ("consensus --embeddings", ["consensus", "{ok}", "--embeddings", "DEV", "--no-store"], "--embeddings"),
        ("weights --scenario", ["weights", "--reference", "loosh-1.2.8", "--scenario", "DEV"], "--scenario"),
        ("weights --sybil-scores", ["weights", "--reference", "loosh-1.2.8", "--sybil-scores", "DEV"], "--sybil-scores"),
        ("verify-epoch", ["verify-epoch", "DEV"], "EVENTS.json"),
        ("claim-proof --verify", ["claim-proof", "--verify", "DEV"], "claim")]],
    *[Cli(f"{name} a FIFO", argv, 2, f"{opt}{{fifo}}: not a regular file") for name, argv, opt in [
        ("state-root", ["state-root", "{fifo}"], "state "), ("consensus", ["consensus", "{fifo}", "--no-store"], ""),
        ("evaluate-batch", ["evaluate-batch", "{fifo}", "--workers", "0"], ""), ("replay", ["replay", "{fifo}", "--epoch-secret", H], "report "),
        ("coordinator serve --key-file", ["coordinator", "serve", "--key-file", "{fifo}"], "--key-file ")]],
    Cli("beliefs eval --fixtures with /dev/urandom", ["beliefs", "eval", "--fixtures", "{randomfixtures}"], 2, "retrieval.cases.json: not a regular file"),
]

M = "0x" + "42" * 20
def submission(**kw) -> bytes:
    "A POST body: a valid submission to epoch 1 with some fields replaced by raw JSON text."
    f = {"miner": f'"{M}"', "patch": '"{patch}"', "epochId": "1", **kw}
    return ("{" + ", ".join(f'"{k}": {v}' for k, v in f.items()) + "}").encode()

HTTP = [
    Http("body announced as 1 GB", "RAW", "POST /v1/patches",
         b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n" + b"x" * 1000, 413, "request_entity_too_large"),
    Http("body of 200 KiB", "POST", "/v1/patches", b"x" * 200 * 1024, 413, "request_entity_too_large"),
    Http("body of 16 KiB + 1", "POST", "/v1/patches", b"x" * (16 * 1024 + 1), 413, "request_entity_too_large"),
    Http("a patch of 100,000 hex characters", "POST", "/v1/patches", submission(patch='"' + "ab" * 50_000 + '"'), 413, "request_entity_too_large"),
    Http("body not UTF-8", "POST", "/v1/patches", b"\xff\xfe{}", 400, "bad_json"),
    Http("body nested 8,000 deep", "POST", "/v1/patches", b"[" * 8000 + b"]" * 8000, 400, "bad_json"),
    Http("body not JSON", "POST", "/v1/patches", b"{miner:", 400, "bad_json"),
    Http("body a JSON array", "POST", "/v1/patches", b"[]", 400, "bad_json"),
    Http("epochId NaN", "POST", "/v1/patches", submission(epochId="NaN"), 400, "bad_json"),
    Http("epochId Infinity", "POST", "/v1/patches", submission(epochId="Infinity"), 400, "bad_json"),
    Http("epochId 1e400", "POST", "/v1/patches", submission(epochId="1e400"), 400, "bad_epoch"),
    Http("epochId 2^63", "POST", "/v1/patches", submission(epochId=str(2**63)), 400, "bad_epoch"),
    Http("epochId 1.9", "POST", "/v1/patches", submission(epochId="1.9"), 400, "bad_epoch"),
    Http('epochId "1"', "POST", "/v1/patches", submission(epochId='"1"'), 400, "bad_epoch"),
    Http("epochId true", "POST", "/v1/patches", submission(epochId="true"), 400, "bad_epoch"),
    Http("epochId missing", "POST", "/v1/patches", b'{"miner": "%s", "patch": "{patch}"}' % M.encode(), 400, "bad_epoch"),
    Http("miner padded with a space", "POST", "/v1/patches", submission(miner=f'" {M}"'), 400, "bad_miner"),
    Http("miner of 19 bytes", "POST", "/v1/patches", submission(miner='"0x' + "42" * 19 + '"'), 400, "bad_miner"),
    Http("miner a number", "POST", "/v1/patches", submission(miner="42"), 400, "bad_miner"),
    Http("patch bad hex", "POST", "/v1/patches", submission(patch='"0xzz"'), 400, "malformed_hex"),
    Http("patch of the wrong length", "POST", "/v1/patches", submission(patch='"ff01"'), 400, "wrong_size"),
    Http("patch truncated", "POST", "/v1/patches", submission(patch='"{patch_truncated}"'), 400, "DECODE"),
    Http("patch a number", "POST", "/v1/patches", submission(patch="7"), 400, "malformed_hex"),
    Http("an epoch that is not open", "POST", "/v1/patches", submission(epochId="7"), 404, "unknown_epoch"),
    Http("job id not UTF-8", "GET", "/v1/jobs/%ff%fe", None, 404, "unknown_job"),
    Http("unknown result", "GET", "/v1/results/0x00", None, 404, "unknown_result"),
    Http("unknown route", "GET", "/v1/nowhere", None, 404, "not_found"),
    Http("wrong method", "DELETE", "/v1/patches", None, 405, "method_not_allowed"),
    Http("malformed HTTP request", "RAW", "GARBAGE", b"GARBAGE\r\n\r\n", 400, "bad_request"),
    Http("Content-Length not a number", "RAW", "POST /v1/patches", b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n", 400, EMPTY),
    # limiter and front attacks
    Http("100 MB announced with Expect: 100-continue", "RAW", "POST /v1/patches",
         b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n", 413, "request_entity_too_large"),
    Http("Content-Length in fullwidth digits", "RAW", "POST /v1/patches",
         "POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: \uff11\uff10\r\n\r\n".encode(), 400, EMPTY),
    Http("two different Content-Lengths", "RAW", "POST /v1/patches",
         b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, EMPTY),
    Http("a chunked body", "RAW", "POST /v1/patches",
         b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 411, "length_required"),
    Http("a head over 16 KiB", "RAW", "GET /v1/jobs/x", b"GET /v1/jobs/x HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n",
         431, "request_header_fields_too_large"),
    Http("OPTIONS on the intake", "OPTIONS", "/v1/patches", None, 405, "method_not_allowed"),
    Http("OPTIONS on a job", "OPTIONS", "/v1/jobs/x", None, 405, "method_not_allowed"),
    Http("an unregistered method", "PURGE", "/v1/results/x", None, 501, "not_implemented"),
    Http("HEAD of an unknown job (the GET's status and length, no body)", "HEAD", "/v1/jobs/x", None, 404, "unknown_job"),
    Http("patch with a leading space", "POST", "/v1/patches", submission(patch='" {patch}"'), 400, "malformed_hex"),
    Http("patch with a trailing newline", "POST", "/v1/patches", submission(patch='"{patch}\\n"'), 400, "malformed_hex"),
    # Connection: close, as a raw case is read to its end and the app keeps an HTTP/1.1 connection alive
    Http("a body sent as text/plain", "RAW", "POST /v1/patches", b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
         b"Content-Length: 2\r\nConnection: close\r\n\r\n{}", 415, "unsupported_media_type"),
    # what RFC 9112 refuses and hyper would take: refused by the head's reader before Granian parses it
    Http("a bare LF hiding a Content-Length", "RAW", "GET /v1/jobs/x", b"GET /v1/jobs/x HTTP/1.1\r\nHost: x\r\nX-A: b\nContent-Length: 40\r\n\r\n"
         + b"A" * 40, 400, "bad_request"),
    Http("absolute-form target, no Host", "RAW", "GET http://x/v1/jobs/x", b"GET http://x/v1/jobs/x HTTP/1.1\r\n\r\n", 400, "bad_request"),
    Http("a lower-case method", "RAW", "get /v1/jobs/x", b"get /v1/jobs/x HTTP/1.1\r\nHost: x\r\n\r\n", 501, "not_implemented"),
    Http("the HTTP/2 preface", "RAW", "PRI *", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "http_version_not_supported"),
    # the read routes: one valid miner or none, a bounded target, UTF-8 headers
    Http("status of miner notanaddress", "GET", "/coretex/status?miner=notanaddress", None, 400, "coretex-bad-request"),
    Http("status of a miner of 41 hex digits", "GET", "/coretex/status?miner=0x" + "4" * 41, None, 400, "coretex-bad-request"),
    Http("status of miner %00", "GET", "/coretex/status?miner=%00", None, 400, "coretex-bad-request"),
    Http("status of miner[]=1", "GET", "/coretex/status?miner[]=1", None, 400, "coretex-bad-request"),
    Http("status with miner twice", "GET", f"/coretex/status?miner={M}&miner={M}", None, 400, "coretex-bad-request"),
    Http("a query of 15 KB", "GET", "/coretex/status?miner=" + "a" * 15_000, None, 414, "uri_too_long"),
    Http("a query of 15 KB on /v1", "GET", "/v1/jobs/x?q=" + "a" * 15_000, None, 414, "uri_too_long"),
    Http("a header that is not UTF-8 on status", "RAW", "GET /coretex/status", b"GET /coretex/status HTTP/1.1\r\nHost: x\r\nX-A: caf\xe9\r\n\r\n",
         400, "bad_request"),
    Http("a header that is not UTF-8 on a job", "RAW", "GET /v1/jobs/x", b"GET /v1/jobs/x HTTP/1.1\r\nHost: x\r\nUser-Agent: \xff\xfe\r\n\r\n",
         400, "bad_request"),
]


def markdown() -> str:
    "The table of cases for the docs."
    def cell(s) -> str: return str(s).replace("|", "\\|")
    out = ["# Malformed input: what coretex answers", "",
           "Generated from `tests/bad_input_cases.py` (the parameters of `tests/test_bad_input.py`) by",
           "`python tests/bad_input_cases.py > docs/bad-input.md`. Every case: one line naming the input, the exit",
           "status or HTTP status below, a JSON body for HTTP, no traceback, nothing written to the database.",
           "An HTTP error marked *(empty)* is refused by the server's own parser (Granian's, hyper's HTTP/1) after",
           "coretex's reader of heads passed the request on: the status is the contract there, and the body is empty.",
           "Where the reference's contract answers a rejected submission 200 (`POST /coretex/submit` with an unknown key",
           "or a patch on another parent), so does coretex: the rejection is in the envelope's `code`.", "",
           "## Command line", "", "| case | command | exit | the line says |", "|---|---|---|---|"]
    short = lambda a: a if len(a) <= 30 else a[:27] + "..."
    out += [f"| {cell(c.name)} | `{cell(' '.join(short(a) for a in c.argv))}` | {c.rc} | {cell(c.says)} |" for c in CLI]
    out += ["", "Files named in braces:", ""] + [f"- `{{{k}}}`: {v[0]}" for k, v in FILES.items()]
    out += ["", "## HTTP (`coretex coordinator serve`)", "", "| case | request | status | error |", "|---|---|---|---|"]
    out += [f"| {cell(h.name)} | {h.method} {h.path} | {h.status} | " + (f"`{h.code}` |" if h.code else "*(empty)* |") for h in HTTP]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
