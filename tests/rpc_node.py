"""A JSON-RPC node on loopback that can be stopped and started again on the same port with its chain intact: the
in-process eth-tester chain (`Chain.connect()`) served over HTTP, for tests of commands that take `--rpc`."""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from coretex.network.chain import Chain


class RpcNode:
    "An in-process chain behind http://127.0.0.1:<port>; stop() makes the port refuse connections, start() serves again."
    def __init__(self):
        self.chain, self.port, self.httpd = Chain.connect(), 0, None
        self.lock = threading.Lock()   # eth-tester is not thread-safe; the test also writes to the chain directly

    def start(self) -> str:
        provider, lock = self.chain.w3.provider, self.lock
        sender, w3 = provider.ethereum_tester.get_accounts()[0], self.chain.w3
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_POST(self):
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                def one(r):
                    params = r.get("params", [])
                    if r["method"] in ("eth_call", "eth_estimateGas") and params and "from" not in params[0]:
                        params = [{**params[0], "from": sender}, *params[1:]]   # web3's middleware does this in process
                    params = _block_numbers(r["method"], params)
                    try: answer = {"result": _logs(w3, params[0])} if r["method"] == "eth_getLogs" else provider.make_request(r["method"], params)
                    except Exception as e: answer = {"error": {"code": -32000, "message": f"execution reverted: {e}"}}
                    return {**answer, "id": r.get("id"), "jsonrpc": "2.0"}
                with lock: body = json.dumps([one(r) for r in req] if isinstance(req, list) else one(req), default=_hex).encode()
                self.send_response(200); self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.allow_reuse_address = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.httpd: self.httpd.shutdown(); self.httpd.server_close(); self.httpd = None


_BLOCK_LAST = {"eth_getCode", "eth_getBalance", "eth_getStorageAt", "eth_call", "eth_getTransactionCount"}

def _number(b): return int(b, 16) if isinstance(b, str) and b.startswith("0x") else b

def _block_numbers(method: str, params: list) -> list:
    "The params with hex block numbers as integers, as eth-tester's provider takes them (a node takes hex)."
    if method in _BLOCK_LAST and params: return [*params[:-1], _number(params[-1])]
    if method == "eth_getBlockByNumber" and params: return [_number(params[0]), *params[1:]]
    return params


def _logs(w3, query: dict) -> list:
    "eth_getLogs answered as a node answers it: every number and byte string in hex."
    h = lambda b: "0x" + bytes(b).hex()
    return [{"address": l["address"], "topics": [h(t) for t in l["topics"]], "data": h(l["data"]), "blockNumber": hex(l["blockNumber"]),
             "blockHash": h(l["blockHash"]), "transactionHash": h(l["transactionHash"]), "transactionIndex": hex(l["transactionIndex"]),
             "logIndex": hex(l["logIndex"]), "removed": False} for l in w3.eth.get_logs(query)]


def _hex(x):
    "JSON for what eth-tester answers beyond JSON: bytes as 0x-hex."
    if isinstance(x, (bytes, bytearray)): return "0x" + bytes(x).hex()
    raise TypeError(f"{type(x).__name__} is not JSON")
