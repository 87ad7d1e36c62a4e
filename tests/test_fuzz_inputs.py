"""Fuzzing the service's other inputs through their public entry points: a miner's request body (JSON or not),
state files, and consensus JSON-lines files. Each gives a value or its typed refusal, never another exception."""
import io, contextlib, json
from hypothesis import HealthCheck, given, settings, strategies as st
from coretex.cli import main
from coretex.network.intake import Refusal, Submission, parse_json, parse_submission

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
                           lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4), max_leaves=20)
bodies = st.one_of(st.binary(max_size=300),
                   json_values.map(lambda v: json.dumps(v).encode()),
                   st.fixed_dictionaries({"miner": json_values | st.just("0x" + "42" * 20), "patch": json_values | st.just("ff" * 60),
                                          "epochId": json_values}).map(lambda v: json.dumps(v).encode()))


@settings(max_examples=3000, deadline=None)
@given(bodies)
def test_request_bodies_give_a_submission_or_a_refusal(body):
    v = parse_json(body)
    out = v if isinstance(v, Refusal) else parse_submission(v)
    assert isinstance(out, (Submission, Refusal))
    if isinstance(out, Refusal): assert 400 <= out.status < 500 and out.code and "\n" not in out.message


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=2000), st.binary(min_size=32768, max_size=32768), st.text(alphabet="0123456789abcdefABCDEFx \n", max_size=70000).map(str.encode)))
def test_state_files_give_a_root_or_one_line(tmp_path, data):
    f = tmp_path / "state"
    f.write_bytes(data)
    rc, out, err = run("state-root", str(f))
    assert (rc, err) == (0, "") and out.startswith("0x") or rc == 2 and err.count("\n") == 1


lines = st.one_of(st.binary(max_size=200), json_values.map(json.dumps).map(str.encode),
                  st.fixed_dictionaries({"miner": json_values, "text": json_values, "response_time_ms": json_values}).map(json.dumps).map(str.encode))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(lines, min_size=1, max_size=4))
def test_consensus_files_are_read_or_refused_in_one_line(tmp_path, rows):
    from coretex.cli.common import CliError, read_jsonl
    from coretex.consensus.seed_rules import check_response
    f = tmp_path / "r.jsonl"
    f.write_bytes(b"\n".join(r.replace(b"\n", b" ") for r in rows))
    try: got = read_jsonl(f, check_response)
    except CliError as e: assert "\n" not in str(e) and str(e).startswith(str(f))
    else: assert all(isinstance(r, dict) for r in got)
