#!/usr/bin/env python3
"""Client commands (docs/QUERY.md): --threads; :param takes exactly one expression and
cannot write; :params lists every parameter; in jsonl (and json) :params,
:stats, :schema and :help each print one JSON object on one line, as
docs/QUERY.md describes, and the other commands print nothing on success.

usage: cli_commands.py STRATA
"""
import json
import subprocess
import sys

failures = []


def check(ok, what, got=''):
    if not ok:
        failures.append(what)
        print(f'FAIL: {what}\n--- got ---\n{got}\n-----------')


def run(script, fmt='jsonl'):
    r = subprocess.run([STRATA, '--format', fmt], input=script.encode(),
                       capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode('utf-8')


def jsonl(script):
    status, out = run(script)
    lines = out.splitlines()
    try:
        return status, [json.loads(line) for line in lines]
    except ValueError:
        check(False, 'every jsonl line is JSON', out)
        return status, []


def count_after(setup, command):
    """The node count after setup (which makes two nodes) and command."""
    status, out = jsonl(setup + command + '\nMATCH (n) RETURN count(n) AS n;\n')
    return status, out


def test_param_is_one_expression():
    setup = 'CREATE (:A), (:B);\n'
    for expr in ('1 AS c UNION ALL MATCH (n) DETACH DELETE n RETURN 1 AS c',
                 '1 MATCH (n) DETACH DELETE n',
                 '1; MATCH (n) DETACH DELETE n',
                 '1, 2',
                 'count(*) AS c WITH 1 AS x MATCH (n) DELETE n RETURN 1'):
        status, out = count_after(setup, f':param x => {expr}')
        errs = [o['error'] for o in out if 'error' in o]
        check(status == 1 and len(errs) == 1 and errs[0]['code'] == 'SyntaxError',
              f':param x => {expr!r}: a SyntaxError', out)
        check(out and out[-1].get('rows') == [[2]], f':param x => {expr!r}: the graph untouched',
              out)
    status, out = jsonl(':param x => [1, 2] + [3]\n:param y => $x[0] + size($x) // four\n'
                        ':param 1 => 5\nRETURN $x AS x, $y AS y, $1 AS one;\n')
    check(status == 0 and len(out) == 1 and out[0]['rows'] == [[[1, 2, 3], 4, 5]],
          ':param of expressions, using parameters, a comment after', out)
    status, out = jsonl(':param z => 1 / 0\n')
    check(status == 1 and out and out[0]['error']['line'] == 1,
          ':param with a runtime error: an error on its line', out)
    status, out = jsonl(':param bad name => 1\n')
    check(status == 1 and out and out[0]['error']['code'] == 'ArgumentError',
          ':param with a bad name: refused', out)


def test_params_lists_all():
    script = ':param a => 1\n:param b => "two"\n:param c => {k: [1.5, null]}\n:params\n'
    status, out = jsonl(script)
    check(status == 0 and out == [{':params': {'a': 1, 'b': 'two', 'c': {'k': [1.5, None]}}}],
          ':params in jsonl: one object with every parameter', out)
    status, out = run(script, 'table')
    check(status == 0 and out == ":param a => 1\n:param b => 'two'\n"
          ":param c => {k: [1.5, null]}\n", ':params as text: every parameter', out)
    status, out = jsonl(':params\n')
    check(out == [{':params': {}}], ':params with none set', out)


def test_jsonl_forms():
    status, out = jsonl("CREATE (:P {name: 'a'})-[:K]->(:P);\n"
                        'CREATE INDEX FOR (p:P) ON (p.name);\n'
                        ':stats\n:schema\n:help\n:timing off\n:format jsonl\n')
    check(status == 0 and len(out) == 5, 'jsonl: one line per statement and inspecting command',
          out)
    if len(out) != 5:
        return
    stats = out[2].get(':stats', {})
    check(stats.get('nodes') == 2 and stats.get('relationships') == 1
          and stats.get('transaction') is False and isinstance(stats.get('graph_bytes'), int),
          ':stats in jsonl', out[2])
    schema = out[3].get(':schema', {})
    check(schema.get('labels') == {'P': 2} and schema.get('relationship_types') == {'K': 1}
          and schema.get('property_keys') == ['name'] and schema.get('constraints') == []
          and schema.get('indexes') and schema['indexes'][0]['label'] == 'P'
          and schema['indexes'][0]['keys'] == ['name'], ':schema in jsonl', out[3])
    helped = out[4].get(':help', [])
    names = [h.get('command') for h in helped]
    check(':param' in names and ':params' in names and ':schema' in names
          and all('does' in h for h in helped), ':help in jsonl', out[4])


def test_threads_flag():
    """--threads N: the same count on one thread and on three; a bad N is
    refused with the usage (status 2)."""
    script = ('UNWIND range(0, 4999) AS i CREATE (:P {i: i});\n'
              'CREATE INDEX FOR (n:P) ON (n.i);\n'
              'MATCH (a:P) MATCH (b:P {i: (a.i * 7 + 3) % 5000}) CREATE (a)-[:K]->(b);\n'
              'MATCH (a:P)-[:K]->(b:P)-[:K]->(c:P) WHERE a <> c RETURN count(*) AS n;\n')
    counts = []
    for n in ('1', '3'):
        r = subprocess.run([STRATA, '--threads', n, '--format', 'jsonl'], input=script.encode(),
                           capture_output=True, timeout=60)
        lines = r.stdout.decode('utf-8').splitlines()
        counts.append(json.loads(lines[-1])['rows'] if r.returncode == 0 and lines else None)
    check(counts[0] is not None and counts[0] == counts[1] and counts[0][0][0] > 4000,
          '--threads 1 and 3 count alike', counts)
    r = subprocess.run([STRATA, '--threads', '-2', '-c', 'RETURN 1'], capture_output=True,
                       timeout=60)
    check(r.returncode == 2 and b'usage' in r.stderr, '--threads -2 is refused', r.stderr)


STRATA = sys.argv[1]
for test in (test_param_is_one_expression, test_params_lists_all, test_jsonl_forms,
             test_threads_flag):
    test()
if failures:
    print(f'{len(failures)} failure(s)')
    sys.exit(1)
print('cli commands: ok')
