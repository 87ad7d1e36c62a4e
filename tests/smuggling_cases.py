"""The 59 request-smuggling and malformed-head probes an attacker sent to the coordinator's front, with the one answer each gets.

Each case: (the bytes sent on one connection, [(status, error code or None for an empty body), ...] every answer in
order, whether the front closes the connection). Used by tests/test_attacks.py and bench/bench_service.py.
"""
SMUGGLED = b"GET /nowhere/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"   # 43 bytes: a second request hidden in a body
GET = b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
BAD = [(400, "bad_request")]
NOT_FOUND = (404, "not_found")


def post(*headers: bytes, body: bytes = b"") -> bytes:
    "A POST to a route that does not exist, with `headers` (CRLF added) and `body`."
    return b"POST /nowhere HTTP/1.1\r\nHost: x\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


SMUGGLING = {
    # line endings: RFC 9112 2.2 lets a server take a bare LF; behind a proxy that splits on CRLF only, it must not
    "bare LF before Content-Length": (b"POST /nowhere HTTP/1.1\r\nHost: x\nContent-Length: 43\r\n\r\n" + SMUGGLED, BAD, True),
    "bare LF hiding Content-Length in a GET": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-A: b\nContent-Length: 40\r\n\r\n" + b"A" * 40, BAD, True),
    "bare LF after the request line": (b"GET /nowhere HTTP/1.1\nHost: x\r\n\r\n", BAD, True),
    "bare LF everywhere": (b"GET /nowhere HTTP/1.1\nHost: x\n\n", BAD, True),
    "bare LF ending the head": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\n", BAD, True),
    "bare LF before the request line": (b"\nGET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "bare CR in a header value": (b"GET /nowhere HTTP/1.1\r\nHost: x\rContent-Length: 43\r\n\r\n" + SMUGGLED, BAD, True),
    "bare CR ending the request line": (b"GET /nowhere HTTP/1.1\rHost: x\r\n\r\n", BAD, True),
    "CRLF before the request line": (b"\r\n" + GET, [NOT_FOUND], False),
    # the request line
    "lower-case method": (b"get /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [(501, "not_implemented")], True),
    "mixed-case method": (b"Get /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [(501, "not_implemented")], True),
    "unregistered method": (b"FROB /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [(501, "not_implemented")], True),
    "HTTP/2 preface": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [(505, "http_version_not_supported")], True),
    "HTTP/2.0 request line": (b"GET /nowhere HTTP/2.0\r\nHost: x\r\n\r\n", [(505, "http_version_not_supported")], True),
    "HTTP/3.0 request line": (b"GET /nowhere HTTP/3.0\r\nHost: x\r\n\r\n", [(505, "http_version_not_supported")], True),
    "no version (HTTP/0.9)": (b"GET /nowhere\r\n\r\n", BAD, True),
    "lower-case version": (b"GET /nowhere http/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "two-digit minor version": (b"GET /nowhere HTTP/1.10\r\nHost: x\r\n\r\n", BAD, True),
    "tab between method and target": (b"GET\t/nowhere HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "two spaces before the target": (b"GET  /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "space after the version": (b"GET /nowhere HTTP/1.1 \r\nHost: x\r\n\r\n", BAD, True),
    "space inside the target": (b"GET /no where HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "NUL in the target": (b"GET /nowhere\0y HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "byte over 0x7f in the target": (b"GET /nowh\xe9re HTTP/1.1\r\nHost: x\r\n\r\n", BAD, True),
    "absolute-form, no Host": (b"GET http://x/nowhere HTTP/1.1\r\n\r\n", BAD, True),
    "absolute-form, a Host": (b"GET http://x/nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [NOT_FOUND], False),
    "absolute-form https, no Host": (b"POST https://x/v1/patches HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", BAD, True),
    # header lines
    "no Host": (b"GET /nowhere HTTP/1.1\r\n\r\n", BAD, True),
    "two Hosts": (b"GET /nowhere HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", BAD, True),
    "empty Host": (b"GET /nowhere HTTP/1.1\r\nHost:\r\n\r\n", BAD, True),
    "space before the colon": (b"GET /nowhere HTTP/1.1\r\nHost : x\r\n\r\n", BAD, True),
    "Content-Length with a space before the colon": (post(b"Content-Length : 43") + SMUGGLED, BAD, True),
    "header line with no colon": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-A b\r\n\r\n", BAD, True),
    "empty header name": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n: b\r\n\r\n", BAD, True),
    "header name not a token": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX(A): b\r\n\r\n", BAD, True),
    "NUL in a header value": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n", BAD, True),
    "NUL in a header name": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX\0A: b\r\n\r\n", BAD, True),
    "DEL in a header value": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n", BAD, True),
    "obs-fold of Content-Length": (post(b"X-A: a", b" Content-Length: 43") + SMUGGLED, BAD, True),
    "obs-fold with a tab": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n", BAD, True),
    "10,000 headers": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(10_000)) + b"\r\n",
                       [(431, "request_header_fields_too_large")], True),
    "Connection: keep-alive, close": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", [NOT_FOUND], True),
    # framing the body
    "Content-Length and Transfer-Encoding": (post(b"Content-Length: 48", b"Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED),
                                             [(411, "length_required")], True),
    "Transfer-Encoding before Content-Length": (post(b"Transfer-Encoding: chunked", b"Content-Length: 5", body=b"0\r\n\r\n"),
                                                [(411, "length_required")], True),
    "Transfer-Encoding: xchunked": (post(b"Transfer-Encoding: xchunked", body=b"0\r\n\r\n" + SMUGGLED), [(400, None)], True),
    "Transfer-Encoding with a tab": (post(b"Transfer-Encoding:\tchunked", body=b"0\r\n\r\n" + SMUGGLED), [(411, "length_required")], True),
    "two different Content-Lengths": (post(b"Content-Length: 2", b"Content-Length: 45", body=b"{}" + SMUGGLED), [(400, None)], True),
    "Content-Length list": (post(b"Content-Length: 43, 43", body=SMUGGLED), [(400, None)], True),
    "Content-Length with a plus sign": (post(b"Content-Length: +43", body=SMUGGLED), [(400, None)], True),
    "negative Content-Length": (post(b"Content-Length: -1", body=SMUGGLED), [(400, None)], True),
    "hexadecimal Content-Length": (post(b"Content-Length: 0x2b", body=SMUGGLED), [(400, None)], True),
    "Content-Length with a space inside": (post(b"Content-Length: 4 3", body=SMUGGLED), [(400, None)], True),
    "oversized Content-Length with Expect": (post(b"Content-Length: 100000000", b"Expect: 100-continue"), [(413, "request_entity_too_large")], True),
    # what a body holds is not a request; what follows a whole request is the next one, answered in order
    "a request in a POST's body": (post(b"Content-Length: 43", body=SMUGGLED), [NOT_FOUND], False),
    "a GET with a body": (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 43\r\n\r\n" + SMUGGLED, [NOT_FOUND], False),
    "three pipelined GETs": (GET * 3, [NOT_FOUND] * 3, False),
    "a GET, then a bare LF": (GET + b"GET /nowhere HTTP/1.1\nHost: x\r\n\r\n", [NOT_FOUND, (400, "bad_request")], True),
    "a GET, then a lower-case method": (GET + b"get /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [NOT_FOUND, (501, "not_implemented")], True),
    "a GET, then the HTTP/2 preface": (GET + b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [NOT_FOUND, (505, "http_version_not_supported")], True),
}
