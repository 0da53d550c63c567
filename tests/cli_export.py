#!/usr/bin/env python3
"""`:export` of the demo graph: dot and GraphML of the whole graph, and dot
of a query's result.  The counts to expect come from the graph itself
(Cypher counts over the same data), not from this file.

The dot files get a structural check (header, balanced braces, one
statement per node and per relationship, every edge between declared
nodes) and, when Graphviz is installed, `dot -Tsvg`.  The GraphML must be
well-formed XML, declare a key for every data element, and hold as many
nodes and edges as the graph.

usage: cli_export.py STRATA DEMO_SCRIPT
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f'FAIL: {what}')


def strata(demo, script):
    r = subprocess.run([STRATA, '--init', demo, '--format', 'jsonl'], input=script,
                       capture_output=True, text=True, timeout=60)
    return r.returncode, [json.loads(line) for line in r.stdout.splitlines() if line]


def check_dot(path, nodes, rels, what):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    check(text.startswith('digraph strata {') and text.rstrip().endswith('}'),
          f'{what}: a digraph')
    body = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)   # strings cannot unbalance it
    check(body.count('{') == body.count('}') == 1, f'{what}: balanced braces')
    declared = re.findall(r'^  (n\d+) \[label=', text, re.M)
    edges = re.findall(r'^  (n\d+) -> (n\d+) \[label=', text, re.M)
    check(len(declared) == nodes, f'{what}: {nodes} nodes, found {len(declared)}')
    check(len(edges) == rels, f'{what}: {rels} relationships, found {len(edges)}')
    check(all(a in declared and b in declared for a, b in edges),
          f'{what}: every edge joins declared nodes')
    if shutil.which('dot'):
        r = subprocess.run(['dot', '-Tsvg', path], capture_output=True, timeout=60)
        check(r.returncode == 0, f'{what}: dot -Tsvg accepts it: {r.stderr[:200]!r}')
    return text


def check_graphml(path, nodes, rels):
    ns = {'g': 'http://graphml.graphdrawing.org/xmlns'}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, f'graphml: well-formed XML ({e})')
        return
    keys = {k.get('id'): k for k in root.findall('g:key', ns)}
    graph = root.find('g:graph', ns)
    check(graph is not None and graph.get('edgedefault') == 'directed', 'graphml: a graph')
    if graph is None:
        return
    xnodes = graph.findall('g:node', ns)
    xedges = graph.findall('g:edge', ns)
    check(len(xnodes) == nodes, f'graphml: {nodes} nodes, found {len(xnodes)}')
    check(len(xedges) == rels, f'graphml: {rels} edges, found {len(xedges)}')
    ids = {n.get('id') for n in xnodes}
    check(all(e.get('source') in ids and e.get('target') in ids for e in xedges),
          'graphml: every edge joins declared nodes')
    for elem, domain in ((xnodes, 'node'), (xedges, 'edge')):
        for x in elem:
            for d in x.findall('g:data', ns):
                key = keys.get(d.get('key'))
                check(key is not None and key.get('for') == domain,
                      f'graphml: data key {d.get("key")} declared for {domain}')
                if key is not None and key.get('attr.type') == 'long':
                    check(re.fullmatch(r'-?\d+', d.text or '') is not None,
                          f'graphml: a long value is an integer: {d.text}')
    names = {k.get('attr.name') for k in keys.values()}
    check({'name', 'title', 'released', 'role'} <= names, f'graphml: property keys declared {names}')


def main():
    global STRATA
    STRATA, demo = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix='strata-export-')
    dot_all, graphml, dot_query = (os.path.join(tmp, n) for n in
                                   ('all.dot', 'all.graphml', 'query.dot'))
    query = ("MATCH p = (:Person {name: 'Grace Kelly'})-[:ACTED_IN]->(:Film) "
             "RETURN p")
    status, out = strata(demo, '\n'.join([
        'MATCH (n) RETURN count(n) AS n;',
        'MATCH ()-[r]->() RETURN count(r) AS r;',
        "MATCH p = (:Person {name: 'Grace Kelly'})-[:ACTED_IN]->(f:Film) "
        "RETURN count(DISTINCT f) AS films, count(p) AS rels;",
        f':export {dot_all}',
        f':export {graphml}',
        f':export {dot_query} {query}',
        ':export nowhere.txt',
    ]) + '\n')
    check(status == 1, f'exit status 1 (one bad export), got {status}')
    check(len(out) == 4 and 'error' in out[-1], f'three results and one error line, got {out}')
    if len(out) < 3:
        return 1
    nodes, rels = out[0]['rows'][0][0], out[1]['rows'][0][0]
    films, acted = out[2]['rows'][0]
    check(nodes > 0 and rels > 0, 'the demo graph is not empty')
    text = check_dot(dot_all, nodes, rels, 'dot of the graph')
    check(re.search(r'label=":Person:Actor(\\n[a-z]+: [^"]*)*\\nname: Grace Kelly', text),
          'dot: a node label shows labels and properties')
    check_graphml(graphml, nodes, rels)
    check_dot(dot_query, films + 1, acted, 'dot of a query')
    if failures:
        print(f'cli export: {len(failures)} failure(s)')
        return 1
    print('cli export: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
