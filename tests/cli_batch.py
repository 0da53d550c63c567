#!/usr/bin/env python3
"""Batch mode drops nothing in silence (docs/QUERY.md).

Each fault in the input is an error naming the source and line, with exit
status 1, and nothing after it runs as if the fault were not there: a
string left open at the end, a NUL byte in a line, -f or --init on a
directory, a transaction still open at the end (rolled back, said on
standard error), :save inside a transaction.  Every -c and -f runs, in the
order given.

usage: cli_batch.py STRATA
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


def run(args, stdin=b''):
    r = subprocess.run([STRATA, '--format', 'jsonl'] + args, input=stdin,
                       capture_output=True, timeout=60)
    out = r.stdout.decode('utf-8')
    return r.returncode, [json.loads(line) for line in out.splitlines() if line], \
        r.stderr.decode('utf-8', 'replace')


def rows(objs):
    """The rows of each result line, None for an error line."""
    return [o['rows'] if 'rows' in o else None for o in objs]


def errors(objs):
    return [o['error'] for o in objs if 'error' in o]


def test_open_string(tmp):
    # The quote opened on line 2 swallows lines 3 and 4: an error naming
    # line 2, and no statement after it runs.
    script = os.path.join(tmp, 'open.cypher')
    with open(script, 'w') as f:
        f.write("RETURN 1 AS a;\nRETURN 'abc AS b;\nCREATE (:X);\nRETURN 3 AS c;\n")
    status, out, _ = run(['-f', script])
    check(status == 1, 'open string: exit status 1', status)
    check(rows(out)[:1] == [[[1]]], 'open string: the statement before it ran', out)
    errs = errors(out)
    check(len(errs) == 1 and errs[0]['code'] == 'SyntaxError' and errs[0]['line'] == 2
          and f'{script}:2:' in errs[0]['message'] and 'never closed' in errs[0]['message'],
          'open string: a SyntaxError naming file:2', out)
    for quote, what in (('`', 'quoted name'), ('/*', 'comment')):
        status, out, _ = run([], f'RETURN 1;\nRETURN {quote}x;\n'.encode())
        errs = errors(out)
        check(status == 1 and len(errs) == 1 and '<stdin>:2:' in errs[0]['message']
              and what in errs[0]['message'], f'open {what} on stdin: named', out)
    status, out, _ = run(['-c', "RETURN 'x"])
    check(status == 1 and len(errors(out)) == 1 and 'never closed' in errors(out)[0]['message'],
          '-c with an open string: an error', out)


def test_nul_byte(tmp):
    status, out, _ = run([], b'RETURN 0 AS z;\nRETURN 1\0 AS renamed;\nRETURN 2 AS y;\n')
    check(status == 1, 'NUL byte: exit status 1', status)
    errs = errors(out)
    check(len(errs) == 1 and errs[0]['line'] == 2 and errs[0]['column'] == 9
          and '<stdin>:2:' in errs[0]['message'] and 'NUL' in errs[0]['message'],
          'NUL byte: an error at line 2, column 9', out)
    check(rows(out)[0] == [[0]] and len(out) == 2, 'NUL byte: nothing of its line ran', out)


def test_not_a_file(tmp):
    for flag in ('-f', '--init'):
        status, out, _ = run([flag, tmp, '-c', 'CREATE (:Y) RETURN 1 AS one'])
        check(status == 1, f'{flag} DIRECTORY: exit status 1', status)
        errs = errors(out)
        check(len(errs) >= 1 and errs[0]['code'] == 'IOError' and tmp in errs[0]['message']
              and 'directory' in errs[0]['message'], f'{flag} DIRECTORY: an IOError naming it',
              out)
    # a file that fails to read: /proc/self/mem fails at offset 0 (EIO)
    if os.path.exists('/proc/self/mem'):
        status, out, _ = run(['-f', '/proc/self/mem', '-c', 'RETURN 1 AS one'])
        errs = errors(out)
        check(status == 1 and errs and errs[0]['code'] == 'IOError'
              and '/proc/self/mem:1:' in errs[0]['message']
              and 'read error' in errs[0]['message'], 'a read error: an IOError naming it', out)
    status, out, _ = run(['-f', os.path.join(tmp, 'absent.cypher')])
    check(status == 1 and errors(out) and errors(out)[0]['code'] == 'IOError',
          '-f of a missing file: an IOError', out)


def test_open_transaction(tmp):
    status, out, err = run([], b':begin\nCREATE (:T);\n')
    check(status == 1, 'open transaction at the end: exit status 1', status)
    check('rolled back' in err and 'transaction' in err,
          'open transaction at the end: said on stderr', err)
    # the same graph, saved: the rolled-back write is not in it
    db = os.path.join(tmp, 'tx.db')
    status, out, err = run([db], b'CREATE (:Kept);\n:begin\nCREATE (:Lost);\n')
    check(status == 1 and 'rolled back' in err, 'open transaction with a file: reported', err)


def test_save_in_transaction(tmp):
    db = os.path.join(tmp, 'save.db')
    status, out, _ = run([], f':begin\nCREATE (:W);\n:save {db}\n:commit\n'.encode())
    errs = errors(out)
    check(status == 1 and len(errs) == 1 and 'transaction' in errs[0]['message'],
          ':save in a transaction: refused with an error', out)
    check(not os.path.exists(db), ':save in a transaction: nothing written')
    status, out, _ = run([], f':begin\nCREATE (:W);\n:commit\n:save {db}\n'.encode())
    check(status == 0 and os.path.exists(db), ':save after :commit: saved', out)
    status, out, _ = run([db, '-c', 'MATCH (w:W) RETURN count(w) AS n'])
    check(rows(out) == [[[1]]], ':save after :commit: the write is in the file', out)


def test_scripts_in_order(tmp):
    a = os.path.join(tmp, 'a.cypher')
    with open(a, 'w') as f:
        f.write('CREATE (:S {at: 2});\n')
    status, out, _ = run(['-c', 'CREATE (:S {at: 1})', '-f', a, '-c',
                          'MATCH (s:S) RETURN s.at AS at ORDER BY at', '-c', 'RETURN 4 AS four'])
    check(status == 0 and rows(out) == [[], [], [[1], [2]], [[4]]],
          '-c -f -c -c: every one runs, in order', out)
    status, out, _ = run(['-c', 'RETURN 1 AS a', '-c', 'RETURN 2 AS b'])
    check(rows(out) == [[[1]], [[2]]], '-c A -c B: both run', out)
    status, out, _ = run(['--bail', '-c', 'RETURN nope', '-c', 'RETURN 2 AS b'])
    check(status == 1 and len(out) == 1, '--bail stops at the first failing -c', out)


STRATA = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    for test in (test_open_string, test_nul_byte, test_not_a_file, test_open_transaction,
                 test_save_in_transaction, test_scripts_in_order):
        test(tmp)
if failures:
    print(f'{len(failures)} failure(s)')
    sys.exit(1)
print('cli batch: ok')
