#!/usr/bin/env python3
"""Output of the strata program (docs/QUERY.md).

- Results stream: printing ten million rows keeps memory flat in every
  format (checked on a result of 3,000,000 rows: the peak resident size of
  the program stays far under what holding its text would take).  Skipped
  under AddressSanitizer, whose quarantine makes resident size meaningless.
- A failure part way: a small result gives the error line alone; a result
  already partly written closes its jsonl line with the error, valid JSON.
- Strings holding U+0000 come out whole in csv, tables, DOT and GraphML.
- Error messages, table cells and :schema never carry raw terminal escapes
  from data.

usage: cli_output.py STRATA
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

failures = []


def check(ok, what, got=''):
    if not ok:
        failures.append(what)
        print(f'FAIL: {what}\n--- got ---\n{got!r}\n-----------'[:3000])


def run(args, stdin=b''):
    r = subprocess.run([STRATA] + args, input=stdin, capture_output=True, timeout=600)
    return r.returncode, r.stdout


def sanitized_build():
    with open(STRATA, 'rb') as f:
        return b'__asan_init' in f.read()


ROWS = 3_000_000
# 1,000 x 3,000 rows from two small lists: the query itself holds almost
# nothing, so the program's peak is the output's doing.
MANY = 'UNWIND range(1, 1000) AS a UNWIND range(1, 3000) AS b RETURN a * 10000 + b AS x'
# 32 MB: holding the text of 3,000,000 rows takes more than that in every
# format (about 11 bytes a row as jsonl, a cell struct and a string each in
# a table); streaming, the program stays under 10 MB.
PEAK_LIMIT_KB = 32 * 1024


def peak_kb(fmt):
    """The peak resident size of one run, in KiB (the child's own)."""
    code = ('import resource, subprocess, sys\n'
            'r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n'
            'print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n')
    out = subprocess.run([sys.executable, '-c', code, STRATA, '--format', fmt, '-c', MANY],
                         capture_output=True, text=True, timeout=600).stdout.split()
    return int(out[0]), int(out[1])


def test_streaming():
    if sanitized_build():
        print('streaming memory: skipped under AddressSanitizer')
        return
    for fmt in ('jsonl', 'csv', 'table'):
        status, kb = peak_kb(fmt)
        check(status == 0 and kb < PEAK_LIMIT_KB,
              f'{fmt}: {ROWS} rows printed within {PEAK_LIMIT_KB} KiB', f'{kb} KiB')


def test_failure_part_way():
    status, out = run(['--format', 'jsonl', '-c',
                       'UNWIND range(1, 100) AS x RETURN 10 / (x - 50) AS y'])
    lines = out.decode().splitlines()
    check(status == 1 and len(lines) == 1 and list(json.loads(lines[0])) == ['error'],
          'a small result failing part way: the error line alone', out)
    status, out = run(['--format', 'jsonl', '-c',
                       'UNWIND range(1, 100000) AS x RETURN 10 / (x - 60000) AS y;'
                       'RETURN 2 AS after'])
    lines = out.decode().splitlines()
    check(status == 1 and len(lines) == 2, 'a streamed result failing: one line, then the next',
          out[-400:])
    if len(lines) == 2:
        first = json.loads(lines[0])
        # whole rows, the first of them (as many as were read before the
        # failing batch)
        n = len(first.get('rows', []))
        check(first.get('columns') == ['y'] and 0 < n < 60000 and first['rows'] == [[0]] * n
              and first.get('error', {}).get('detail') == 'DivisionByZero' and 'stats' not in first,
              'a streamed result failing: its rows so far and the error, valid JSON',
              lines[0][-300:])
        check(json.loads(lines[1])['rows'] == [[2]], 'the statement after it runs', lines[1])
    status, out = run(['--format', 'csv', '-c',
                       'UNWIND range(1, 100000) AS x RETURN 10 / (x - 60000) AS y'])
    lines = out.decode().splitlines()
    check(status == 1 and lines[0] == 'y' and 'DivisionByZero' in lines[-1],
          'csv failing part way: the error after the rows', lines[-2:])


NUL = "RETURN 'a\\u0000b' AS s, ['x\\u0000y'] AS l, 1 AS n"


def test_nul_in_strings():
    status, out = run(['--format', 'csv', '-c', NUL])
    check(status == 0 and out == b's,l,n\n"a\x00b","[""x\\u0000y""]",1\n',
          'csv: U+0000 kept, the field quoted', out)
    status, out = run(['--format', 'table', '-c', NUL])
    text = out.decode('utf-8')
    check(status == 0 and '| a\u2400b |' in text and "['x\\u0000y']" in text
          and '\x00' not in text, 'table: U+0000 shown whole', text)
    with tempfile.TemporaryDirectory() as tmp:
        dot, gml = os.path.join(tmp, 'g.dot'), os.path.join(tmp, 'g.graphml')
        script = (f"CREATE (:N {{s: 'a\\u0000b', t: 'tail'}});\n"
                  f':export {dot}\n:export {gml}\n').encode()
        status, out = run(['--format', 'jsonl'], script)
        check(status == 0, ':export of a string with U+0000', out)
        with open(dot, 'rb') as f:
            text = f.read()
        check(b's: a\\\\u0000b\\ntail: tail' in text.replace(b'\nt', b'\\nt')
              or b's: a\\\\u0000b' in text, 'dot: the string whole, U+0000 escaped', text)
        with open(gml, 'rb') as f:
            raw = f.read()
        check(b'\x00' not in raw, 'GraphML: no raw U+0000', raw)
        try:
            values = [d.text for d in ET.fromstring(raw).iter()
                      if d.tag.endswith('data') and d.text and d.text.startswith('a')]
        except ET.ParseError as e:
            values = [str(e)]
        check(values == ['a\\u0000b'], 'GraphML: well-formed, the string whole', values)


def test_escapes_in_errors():
    query = "RETURN date('\\u001b]0;pwned\\u0007') AS d"
    status, out = run(['--format', 'table', '-c', query])
    check(status == 1 and b'\x1b' not in out and b'\x07' not in out and b'pwned' in out,
          'table: an error quoting data carries no raw escapes', out)
    status, out = run(['--format', 'jsonl', '-c', query])
    err = json.loads(out)['error']
    check('\x1b]0;pwned\x07' in err['message'], 'jsonl: the error message exact', err)
    status, out = run(['--format', 'table', '-c', "RETURN '\\u001b[2J' AS `x\u0007`"])
    check(status == 0 and b'\x1b' not in out and b'\x07' not in out,
          'table: cells and column names carry no raw escapes', out)
    # names in the graph (labels, keys: a quoted name holds any byte) reach
    # :schema's text
    status, out = run(['--format', 'table'],
                      b"CREATE (:`L\x1b[2J` {`k\x07`: 1});\n"
                      b"CREATE INDEX FOR (n:`L\x1b[2J`) ON (n.`k\x07`);\n:schema\n")
    check(status == 0 and b'\x1b' not in out and b'\x07' not in out and b'[2J' in out,
          ':schema as text: names carry no raw escapes', out)


def test_entities_print_whole():
    """A node's every label and property, in every format (they once
    stopped at 64 labels and 256 properties)."""
    labels = ''.join(f':L{i}' for i in range(100))
    props = ', '.join(f'p{i}: {i}' for i in range(300))
    setup = f'CREATE (n{labels} {{{props}}})-[:T {{{props}}}]->();\n'.encode()
    status, out = run(['--format', 'jsonl'], setup + b'MATCH (n)-[r]->() RETURN n, r;\n')
    rows = json.loads(out.splitlines()[-1])['rows']
    node, rel = rows[0][0]['~node'], rows[0][1]['~relationship']
    check(len(node['labels']) == 100 and len(node['properties']) == 300 and
          len(rel['properties']) == 300, 'jsonl: every label and property', out[:200])
    status, out = run(['--format', 'table'],
                      setup + b'MATCH (n)-[r]->() RETURN n, r;\n')
    check(b':L99' in out and out.count(b'p299: 299') == 2, 'table: every label and property',
          out[:200])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'g.graphml')
        status, out = run(['--format', 'jsonl'], setup + f':export {path}\n'.encode())
        text = open(path).read() if os.path.exists(path) else ''
        check(status == 0 and text.count('>299<') == 2 and 'L99' in text,
              ':export: every label and property', out)


STRATA = sys.argv[1]
for test in (test_failure_part_way, test_nul_in_strings, test_escapes_in_errors,
             test_streaming, test_entities_print_whole):
    test()
if failures:
    print(f'{len(failures)} failure(s)')
    sys.exit(1)
print('cli output: ok')
