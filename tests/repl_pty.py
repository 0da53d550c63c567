#!/usr/bin/env python3
"""The strata REPL driven as a person would, under a pseudo-terminal.

Starts `strata --init DEMO` with HOME at a fresh directory and
STRATA_HISTORY at a file in it, then types: a statement over two lines
(continuation prompt, aligned table), a bad query (the caret line), a
statement cancelled with Ctrl-C (the REPL goes on), a running statement
stopped with Ctrl-C (and undone), Tab completion of a
label, :help, :stats, :schema, :rows, an error quoting a terminal escape
from data, an unknown command, and Ctrl-D;
checks the exit status and that the history file holds the statements.

usage: repl_pty.py STRATA DEMO_SCRIPT
"""
import os
import pty
import re
import select
import sys
import tempfile
import termios
import time

PROMPT = 'strata> '
CONTINUATION = '   ...> '
TIMEOUT = 20.0
# Ctrl-C is typed again every AGAIN seconds until the REPL answers, for at
# most INTERRUPT_TIMEOUT.
AGAIN = 0.5
INTERRUPT_TIMEOUT = 30.0
# CPU seconds only a running statement uses: reading a typed line, or a
# stopped statement's rollback and error, take far less.
BUSY = 0.1

failures = []


def check(ok, what, got=''):
    if not ok:
        failures.append(what)
        print(f'FAIL: {what}\n--- output ---\n{got}\n--------------')


class Repl:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(argv[0], argv, env)
        self.buf = ''
        self.closed = False   # the end of output was read

    def read_until(self, pattern, timeout=TIMEOUT):
        """Output up to and including the first match of pattern (a regex);
        None on timeout or end of output."""
        deadline = time.time() + timeout
        while True:
            m = re.search(pattern, self.buf)
            if m:
                out, self.buf = self.buf[:m.end()], self.buf[m.end():]
                return out
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b''
            if not data:
                self.closed = True
                return None
            self.buf += data.decode('utf-8', 'replace').replace('\r\n', '\n')

    def wait(self, timeout=TIMEOUT):
        """The exit status, or None if the process still runs after timeout
        seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return status
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    os.read(self.fd, 65536)   # drain, so the child never blocks writing
                except OSError:
                    pass
        return None

    def kill(self):
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)

    def type(self, text):
        try:
            os.write(self.fd, text.encode())
        except OSError:
            pass   # the REPL has gone; what it printed says why

    def cpu_seconds(self):
        """The CPU time the REPL has used, all its threads together."""
        with open(f'/proc/{self.pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')

    def busy(self, since):
        """Whether the REPL has used BUSY CPU seconds more than since,
        waiting at most TIMEOUT."""
        deadline = time.time() + TIMEOUT
        while self.cpu_seconds() - since < BUSY:
            if time.time() > deadline:
                return False
            time.sleep(0.02)
        return True

    def editing(self):
        """Waits (at most TIMEOUT) until the line editor has the terminal.
        libedit prints its prompt before it turns the terminal's echo and
        line mode off: a key typed in between is the terminal's, so a Ctrl-D
        there is lost and a Ctrl-C comes before the read it should end."""
        deadline = time.time() + TIMEOUT
        while termios.tcgetattr(self.fd)[3] & termios.ECHO and time.time() < deadline:
            time.sleep(0.01)

    def interrupt(self, answer, running=False):
        """Types Ctrl-C, again every AGAIN seconds until answer (a regex)
        appears: the output up to it, None if it never came.  A SIGINT can
        come too soon to count: after the REPL clears its flag but before its
        read blocks (which then waits on), or before a statement starts
        (which clears the request).  With running, Ctrl-C is typed again only
        while the statement still uses CPU, so none follows the one that
        stopped it; a late one is made harmless (settle)."""
        deadline = time.time() + INTERRUPT_TIMEOUT
        sent, cpu = 0, 0.0
        while time.time() < deadline:
            if not sent or not running or self.cpu_seconds() - cpu >= BUSY:
                cpu = self.cpu_seconds()
                self.type('\x03')
                sent += 1
            out = self.read_until(answer, AGAIN)
            if out is not None and sent > 1:
                self.settle(sent - 1)
            if out is not None or self.closed:
                return out
        return None

    def settle(self, extra):
        """After extra Ctrl-C more than the one that counted: one typed while
        the REPL was already answering reaches it late, as another "^C" and
        prompt or by dropping the next line it reads.  Runs statements that
        change nothing until one runs, and reads past its output."""
        for n in range(1, extra + 2):
            self.type(f'RETURN {n} AS settled;\r')
            out = self.read_until(rf'\|\s+{n} \|\n|\^C\n' + re.escape(PROMPT))
            if out is None:
                return
            if not out.endswith(PROMPT):
                self.read_until('\n' + re.escape(PROMPT))
                return

    def line(self, text):
        """Types a line and returns everything up to the next prompt (either
        kind)."""
        self.type(text + '\r')
        return self.read_until(re.escape(PROMPT) + '|' + re.escape(CONTINUATION))

    def statement(self, text):
        self.type(text + '\r')
        return self.read_until('\n' + re.escape(PROMPT))


def main():
    strata, demo = sys.argv[1], sys.argv[2]
    home = tempfile.mkdtemp(prefix='strata-repl-')
    history = os.path.join(home, 'history')
    # the caller's environment (sanitizer options) with a home of our own
    env = dict(os.environ, HOME=home, STRATA_HISTORY=history, TERM='xterm',
               LANG='C.UTF-8', LC_ALL='C.UTF-8')
    repl = Repl([strata, '--init', demo], env)

    out = repl.read_until(re.escape(PROMPT))
    check(out is not None and ':help' in out, 'a banner and the prompt', out)

    # A statement over two lines: the continuation prompt, then a table.
    out = repl.line("MATCH (p:Person)-[r:ACTED_IN]->(f:Film {title: 'Casablanca'})")
    check(out is not None and out.endswith(CONTINUATION), 'the continuation prompt', out)
    out = repl.statement('RETURN p.name AS actor, r.role AS role ORDER BY r.billing;')
    check(out is not None, 'the table after the second line', out)
    out = out or ''
    lines = [ln for ln in out.split('\n') if ln.startswith(('|', '+'))]
    check(len(lines) == 6, 'a table of 2 rows: 3 rules, a header, 2 rows', out)
    check(len({len(ln) for ln in lines}) == 1, 'every table line the same width', out)
    check(any(re.match(r'\| Humphrey Bogart +\| Rick Blaine +\|$', ln) for ln in lines),
          'the aligned row of Humphrey Bogart', out)
    check(re.search(r'\n2 rows, [0-9.]+ ms\n', out) is not None, 'the footer "2 rows, M ms"', out)

    # A bad query: the offending line, a caret under the column, the error.
    out = repl.statement('MATCH (n:Person RETURN n;') or ''
    m = re.search(r'MATCH \(n:Person RETURN n\n( *)\^\n(SyntaxError[^\n]*)', out)
    check(m is not None, 'the caret under the error', out)
    if m:
        col = re.search(r'column (\d+)', m.group(2))
        check(col is not None and len(m.group(1)) == int(col.group(1)) - 1,
              'the caret at the column the error names', out)
        check(out.find('RETURN', out.find('MATCH')) - out.find('MATCH') == len(m.group(1)),
              'the caret under RETURN', out)

    # Ctrl-C mid-statement drops it; the REPL survives and runs the next.
    # Typed once libedit has the terminal, the echo is libedit's: the line
    # was read, and Ctrl-C ends the read that waits for more.
    out = repl.line('MATCH (n)')
    check(out is not None and out.endswith(CONTINUATION), 'continuation before Ctrl-C', out)
    repl.editing()
    repl.type('RETURN count(n) AS never')
    out = repl.read_until('AS never')
    check(out is not None, 'the line echoed before Ctrl-C', out)
    out = repl.interrupt(r'\^C\n' + re.escape(PROMPT))
    check(out is not None and '^C' in out, 'Ctrl-C gives a fresh prompt', out)
    out = repl.statement('RETURN 40 + 2 AS answer;') or ''
    check(re.search(r'\|\s+42 \|', out) is not None and 'never' not in out,
          'the statement after Ctrl-C runs alone', out)

    # Ctrl-C while a statement runs stops it (the statement is undone) and
    # the REPL goes on.  The walk over every path of a 12-node clique
    # would run for hours.
    repl.statement('CREATE (:Tmp {i: 0});')
    repl.statement('UNWIND range(1, 12) AS i CREATE (:K {i: i});')
    repl.statement('MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b);')
    # Ctrl-C once the statement has used CPU: it has started, so its start
    # no longer clears the request.
    cpu = repl.cpu_seconds()
    repl.type('MATCH (t:Tmp) SET t.i = 1 WITH t MATCH p = (a:K)-[*]->(b) '
              'WHERE length(p) > 100 RETURN count(*);\r')
    check(repl.busy(cpu), 'the long statement runs', repl.buf)
    out = repl.interrupt('Interrupted[^\n]*\n' + re.escape(PROMPT), running=True)
    check(out is not None and 'Interrupted' in out, 'Ctrl-C stops a running statement', out)
    out = repl.statement('MATCH (t:Tmp) RETURN t.i AS i;') or ''
    check(re.search(r'\|\s+0 \|', out) is not None, 'the interrupted statement was undone', out)
    repl.statement('MATCH (n) WHERE n:K OR n:Tmp DETACH DELETE n;')

    # Tab completes a label from the graph's catalog.
    repl.type('MATCH (d:Dire')
    repl.type('\t')
    out = repl.statement(') RETURN count(d) AS directors;') or ''
    check(re.search(r'\|\s+9 \|', out) is not None, 'Tab completed :Director', out)

    out = repl.statement(':help') or ''
    for cmd in (':help', ':quit', ':param', ':params', ':format', ':timing', ':rows',
                ':begin', ':commit', ':rollback', ':schema', ':stats', ':export'):
        check(cmd in out, f':help lists {cmd}', out)

    out = repl.statement(':stats') or ''
    count = re.search(r'Nodes:\s+(\d+)', out)
    check(count is not None and int(count.group(1)) > 0, ':stats counts the nodes', out)
    check('Transaction:' in out and 'Forked:' in out and 'Memory:' in out,
          ':stats shows memory, fork and transaction state', out)

    out = repl.statement(':schema') or ''
    for word in ('Person', 'Film', 'ACTED_IN', 'title', 'Constraints:', 'unique'):
        check(word in out, f':schema mentions {word}', out)

    repl.statement(':rows 2')
    out = repl.statement('MATCH (f:Film) RETURN f.title;') or ''
    check(re.search(r'not shown', out) is not None and
          len([ln for ln in out.split('\n') if ln.startswith('| ')]) == 3,
          ':rows 2 shows a header and two rows, and says more were not shown', out)

    # An error quoting data: the data's terminal escape (here one that would
    # retitle the window) reaches the terminal as visible text, not raw.
    out = repl.statement("RETURN date('\\u001b]0;pwned\\u0007');") or ''
    check('invalid date' in out and 'pwned' in out and '\x1b]0;pwned' not in out
          and 'pwned\x07' not in out, 'an error quoting data carries no raw escape', out)

    out = repl.statement(':frobnicate') or ''
    check('unknown command :frobnicate' in out, 'an unknown command is an error', out)

    # Ctrl-D on an empty line leaves, with status 0.  Typed the instant the
    # prompt appeared, on a loaded machine, a Ctrl-D was once lost (the
    # terminal not yet in raw mode takes it as its own end-of-file), so the
    # test waits for libedit to take the terminal, types Ctrl-D again when
    # the REPL is still there 2 s later, and never waits forever.
    repl.editing()
    status = None
    deadline = time.time() + TIMEOUT
    while status is None and time.time() < deadline:
        repl.type('\x04')
        status = repl.wait(2.0)
    if status is None:
        repl.kill()
    check(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
          'Ctrl-D exits with status 0', str(status))

    # The history file holds the statements (libedit writes spaces as \040).
    try:
        with open(history, encoding='utf-8') as f:
            saved = re.sub(r'\\(\d{3})', lambda m: chr(int(m.group(1), 8)), f.read())
    except OSError as e:
        saved = str(e)
    check("MATCH (p:Person)-[r:ACTED_IN]->(f:Film {title: 'Casablanca'}) RETURN p.name" in saved,
          'the two-line statement is one history entry', saved)
    check('RETURN 40 + 2 AS answer;' in saved, 'history holds the last statements', saved)
    check('never' not in saved, 'a cancelled statement is not in history', saved)
    check(not os.path.exists('.strata_history') or os.path.abspath('.strata_history') == history,
          'no history in the working directory')

    if failures:
        print(f'repl pty: {len(failures)} failure(s)')
        return 1
    print('repl pty: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
