#!/usr/bin/env python3
"""Branches in the program (docs/BRANCHES.md): :branch, :branches, :use,
:diff, :discard and :save on the graph in use, in jsonl; writes stay on
their branch; a database opened on a directory logs only main's writes.

usage: cli_branches.py STRATA
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(ok, what, got=''):
    if not ok:
        failures.append(what)
        print(f'FAIL: {what}\n--- got ---\n{got}\n-----------')


def jsonl(script, *args):
    r = subprocess.run([STRATA, '--format', 'jsonl', *args], input=script.encode(),
                       capture_output=True, timeout=60)
    out = r.stdout.decode('utf-8')
    try:
        return r.returncode, [json.loads(line) for line in out.splitlines()]
    except ValueError:
        check(False, 'every jsonl line is JSON', out)
        return r.returncode, []


def rows(out):
    """The rows of each result that has columns (not of bare writes)."""
    return [o['rows'] for o in out if o.get('columns')]


def errors(out):
    return [o['error'] for o in out if 'error' in o]


SETUP = 'UNWIND range(1, 5) AS i CREATE (:Account {id: i, balance: 100});\n'


def test_what_if():
    status, out = jsonl(SETUP + ':branch what_if\n'
                        'MATCH (a:Account) WHERE a.id <= 2 SET a.balance = 50;\n'
                        'CREATE (:Audit {note: "x"});\n'
                        ':diff main\n'
                        'MATCH (a:Account) RETURN sum(a.balance) AS s;\n'
                        ':use main\n'
                        'MATCH (a:Account) RETURN sum(a.balance) AS s;\n'
                        ':branches\n')
    check(status == 0 and not errors(out), 'the what-if runs without errors', out)
    r = rows(out)
    want = [['property set', 0, 'balance', None, None, 100, 50],
            ['property set', 1, 'balance', None, None, 100, 50],
            ['node created', 5, None, None, None, None, None],
            ['label added', 5, 'Audit', None, None, None, None],
            ['property set', 5, 'note', None, None, None, 'x']]
    check(len(r) == 4 and r[0] == want, ':diff main lists the branch\'s changes in order', out)
    check(len(r) == 4 and r[1] == [[400]] and r[2] == [[500]],
          'the branch sees its writes, main does not', out)
    b = r[3] if len(r) == 4 else []
    check([x[:5] for x in b] == [['main', None, True, 5, 0], ['what_if', 'main', False, 6, 0]],
          ':branches: name, created from, in use, counts', out)
    check(all(isinstance(x[5], int) and x[5] > 0 for x in b), ':branches: private bytes', out)


def test_diff_both_ways_and_relationships():
    status, out = jsonl('CREATE (:A {k: 1})-[:T {w: 2}]->(:B);\n'
                        ':branch x\n'
                        'MATCH ()-[r:T]->() DELETE r;\n'
                        'MATCH (a:A), (b:B) CREATE (b)-[:U]->(a);\n'
                        ':use main\n'
                        ':diff x\n')
    r = rows(out)
    want = [['relationship created', 0, 'T', 0, 1, None, None],
            ['relationship property set', 0, 'w', None, None, None, 2],
            ['relationship deleted', 0, 'U', 1, 0, None, None]]
    # main against x: what main changed since x is the inverse of x's writes
    got = r[-1] if r else None
    check(status == 0 and got is not None and sorted(map(str, got)) == sorted(map(str, want)),
          ':diff x from main is the inverse, relationships with endpoints', out)
    kinds = [x[0] for x in got or []]
    check(kinds == ['relationship deleted', 'relationship created', 'relationship property set'],
          ':diff order: deletions first, creations after', out)


def test_errors():
    status, out = jsonl(':branch\n:branch bad name\n:branch a\n:branch a\n:use nope\n'
                        ':discard a\n:use main\n:discard main\n:discard a\n:diff a\n'
                        ':begin\n:branch b\n:use main\n:rollback\n:diff\n')
    msgs = [e['message'] for e in errors(out)]
    check(status == 1 and len(msgs) == 9, 'nine commands fail', msgs)
    expect = ['usage: :branch NAME', 'usage: :branch NAME', 'exists already', 'no graph named',
              'in use', 'in use', 'no graph named', 'transaction is open',
              'usage: :diff NAME']
    got = [any(e in m for m in msgs) for e in expect]
    check(all(got), 'each failure names its reason', msgs)


def test_save_in_use_and_unrelated():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'b.strata')
        status, out = jsonl(SETUP + f':branch b\nMATCH (a:Account {{id: 1}}) DELETE a;\n'
                            f':save {path}\n:use main\n:open {path}\n'
                            'MATCH (a:Account) RETURN count(a) AS n;\n:diff b\n')
        r = rows(out)
        check(r and r[0] == [[4]], ':save saves the graph in use (the branch)', out)
        e = errors(out)
        check(status == 1 and len(e) == 1 and 'unrelated' in e[0]['message'],
              ':diff with a graph :open replaced is refused, naming why', out)


def test_database_logs_main_only():
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, 'db') + '/'
        status, out = jsonl(SETUP + ':branch b\nCREATE (:OnlyInBranch);\n:use main\n'
                            'CREATE (:InMain);\n', db)
        check(status == 0, 'a branch of a database', out)
        status, out = jsonl('MATCH (n) RETURN labels(n)[0] AS l, count(*) AS c ORDER BY l;\n',
                            db)
        check(rows(out) == [[['Account', 5], ['InMain', 1]]],
              'reopening finds main\'s writes, not the branch\'s', out)


if __name__ == '__main__':
    STRATA = sys.argv[1]
    for name, fn in list(globals().items()):
        if name.startswith('test_'):
            fn()
    print(f'{len(failures)} failure(s)')
    sys.exit(1 if failures else 0)
