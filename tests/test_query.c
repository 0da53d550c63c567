/* Cypher end to end through strata_query: a table of setup statements, a
   query and the rows it must return (rendered compactly), or the error
   code and detail it must fail with; every failing statement must leave
   the graph unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

typedef struct qcase {
    const char *setup;     /* statements separated by ";\n", or NULL */
    const char *query;
    const char *expect;    /* rows rendered, or "!Code/Detail" */
} qcase;

static const qcase cases[] = {
    {NULL, "RETURN 1 + 2 AS x, 'a' + 'b', 7 / 2, 7 % 3, 2.5 * 2", "[3, 'ab', 3, 1, 5.0]"},
    {NULL, "RETURN null = null, 1 = 1.0, NOT (1 < 2), true XOR false", "[null, true, false, true]"},
    {NULL, "RETURN [1, 2, 3][-1], [1, 2, 3][0..2], 2 IN [1, 2], size('héllo')", "[3, [1, 2], true, 5]"},
    {NULL, "RETURN 9223372036854775807 + 1", "!ArgumentError/IntegerOverflow"},
    {NULL, "RETURN x", "!SyntaxError/UndefinedVariable"},
    {NULL, "MATCH (n) WHERE count(n) > 1 RETURN n", "!SyntaxError/InvalidAggregation"},
    {NULL, "WITH 1 AS a RETURN b", "!SyntaxError/UndefinedVariable"},
    {NULL, "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC SKIP 1 LIMIT 1", "[2]"},
    {NULL, "UNWIND [1, 1, 2, null] AS x RETURN count(x), count(*), count(DISTINCT x), sum(x), "
           "avg(x), min(x), max(x), collect(x)",
     "[3, 4, 2, 4, 1.3333333333333333, 1, 2, [1, 1, 2]]"},
    {NULL, "UNWIND [[1, 'a'], [2, 'b'], [1, 'c']] AS p RETURN p[0] AS k, collect(p[1]) AS v "
           "ORDER BY k",
     "[1, ['a', 'c']] [2, ['b']]"},
    {NULL, "RETURN CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END, coalesce(null, 4), "
           "toInteger('12'), toUpper('ab'), [x IN range(1, 4) WHERE x % 2 = 0 | x * 10]",
     "['two', 4, 12, 'AB', [20, 40]]"},
    {"CREATE (:P {name: 'a', age: 1})-[:K]->(:P {name: 'b', age: 2})-[:K]->(:Q {name: 'c'})",
     "MATCH (x:P)-[:K]->(y) RETURN x.name, y.name ORDER BY x.name", "['a', 'b'] ['b', 'c']"},
    {"CREATE (:P {name: 'a'})-[:K]->(:P {name: 'b'})",
     "MATCH (x)<-[:K]-(y) RETURN x.name, y.name", "['b', 'a']"},
    {"CREATE (:P {name: 'a'})-[:K]->(:P {name: 'b'})",
     "MATCH (x)-[:K]-(y) RETURN x.name, y.name ORDER BY x.name", "['a', 'b'] ['b', 'a']"},
    {"CREATE (:P {name: 'a'})", "MATCH (x:P) OPTIONAL MATCH (x)-->(y) RETURN x.name, y", "['a', null]"},
    {"CREATE (:P {name: 'a'}), (:P {name: 'b'})", "MATCH (x:P {name: 'b'}) RETURN x.name", "['b']"},
    {"CREATE (:P {v: 1}), (:P {v: 2})", "MATCH (n:P) SET n.v = n.v * 10, n:Q RETURN n.v ORDER BY n.v",
     "[10] [20]"},
    {"CREATE (:P {v: 1, w: 2})", "MATCH (n:P) SET n = {z: 3} RETURN n.v, n.w, n.z", "[null, null, 3]"},
    {"CREATE (:P {v: 1, w: 2})", "MATCH (n:P) SET n += {z: 3, v: null} RETURN n.v, n.w, n.z",
     "[null, 2, 3]"},
    {"CREATE (:P:Q {v: 1})", "MATCH (n:P) REMOVE n.v, n:Q RETURN n.v, labels(n)", "[null, ['P']]"},
    /* A start read by label (a scan or an index seek) holds that label,
       never the pattern's others. */
    {"CREATE (:P {k: 1}), (:P:Q {k: 2}), (:Q {k: 3}), (:Q {k: 4})",
     "MATCH (n:P:Q) RETURN n.k", "[2]"},
    {"CREATE INDEX FOR (n:P) ON (n.k);\nCREATE (:P {k: 1}), (:P:Q {k: 1}), (:Q {k: 1})",
     "MATCH (n:P:Q {k: 1}) RETURN labels(n)", "[['P', 'Q']]"},
    {"CREATE INDEX FOR (n:P) ON (n.k);\nCREATE (:P {k: 1}), (:P:Q {k: 2}), (:Q {k: 3}), (:Q), (:Q)",
     "MATCH (n:P:Q) WHERE n.k > 0 RETURN n.k", "[2]"},
    {"CREATE (:P)-[:K]->(:P)", "MATCH (n:P) DELETE n", "!ConstraintVerificationFailed/DeleteConnectedNode"},
    {"CREATE (:P)-[:K]->(:P)", "MATCH (n:P) DETACH DELETE n RETURN count(*)", "[2]"},
    {"CREATE (:P {v: 1})", "MERGE (n:P {v: 1}) ON MATCH SET n.m = true RETURN n.m", "[true]"},
    {NULL, "UNWIND [1, 1, 2] AS x MERGE (n:M {v: x}) RETURN count(DISTINCT n)", "[2]"},
    {NULL, "RETURN 1 AS a UNION RETURN 1 AS a UNION RETURN 2 AS a", "[1] [2]"},
    {"CREATE (:B)-[:T {w: 1}]->(:A:B)", "CALL db.labels()", "['A'] ['B']"},
    {"CREATE (:B)-[:T {w: 1}]->(:A:B)",
     "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t", "['T']"},
    {"CREATE (:B {z: 1})-[:T {w: 1}]->(:A:B)",
     "MATCH (n:A) CALL db.propertyKeys() YIELD propertyKey WHERE propertyKey > 'v' "
     "RETURN labels(n), propertyKey",
     "[['A', 'B'], 'w'] [['A', 'B'], 'z']"},
    {"CREATE INDEX byK FOR (n:P) ON (n.k);\nCREATE CONSTRAINT FOR (n:Q) REQUIRE n.u IS UNIQUE",
     "CALL db.indexes() YIELD name, labelsOrTypes, properties, uniqueness",
     "['byK', ['P'], ['k'], 'NONUNIQUE'] ['constraint_1', ['Q'], ['u'], 'UNIQUE']"},
    {NULL, "CALL db.nothing()", "!ProcedureError/ProcedureNotFound"},
    {NULL, "CALL db.labels() YIELD x RETURN x", "!SyntaxError/UndefinedVariable"},
    {"CREATE INDEX byK FOR (n:P) ON (n.k);\nDROP INDEX byK",
     "CALL db.indexes() YIELD name RETURN count(name)", "[0]"},
    {NULL, "DROP INDEX nothing", "!SemanticError/IndexNotFound"},
    {"CREATE INDEX byK FOR (n:P) ON (n.k)", "CREATE INDEX byK FOR (n:Q) ON (n.j)",
     "!SemanticError/EquivalentSchemaRuleAlreadyExists"},
    {"CREATE CONSTRAINT c FOR (n:P) REQUIRE n.k IS UNIQUE", "DROP INDEX c", "!SemanticError/"},
    /* variable-length relationships: bounds, direction, types, property
       maps, the variable bound to a list, uniqueness, OPTIONAL MATCH */
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})",
     "MATCH (:A)-[r*]->(y) RETURN y.n, size(r) ORDER BY y.n", "['b', 1] ['c', 2] ['d', 3]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})",
     "MATCH (:A)-[r*0..1]->(y) RETURN y.n, size(r) ORDER BY y.n", "['a', 0] ['b', 1]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[*2]->(y) RETURN y.n", "['c']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[*..2]->(y) RETURN y.n ORDER BY y.n", "['b'] ['c']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[*2..]->(y) RETURN y.n ORDER BY y.n", "['c'] ['d']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[*3..2]->(y) RETURN y.n", ""},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[:K*]->(y) RETURN y.n ORDER BY y.n", "['b'] ['c']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:D)<-[:L|K*2]-(y) RETURN y.n", "['b']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:C)-[*1]-(y) RETURN y.n ORDER BY y.n", "['b'] ['d']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[*{w: 1}]-(y) RETURN y.n", "['b']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:D)-[r*]-(y) RETURN [x IN r | x.w] ORDER BY size(r)",
     "[[1]] [[1, 2]] [[1, 2, 1]]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (x)-[r*]->(:D) WHERE x.n = 'a' RETURN [x IN r | x.w]", "[[1, 2, 1]]"},
    {"CREATE (a:A)-[:K]->(b:B), (b)-[:K]->(a)", "MATCH (:A)-[r*]-(y) RETURN size(r) ORDER BY size(r)",
     "[1] [1] [2] [2]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (x:A)-[*]->(y)-[r]->(z) RETURN y.n, z.n ORDER BY y.n", "['b', 'c'] ['c', 'd']"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (x:A) OPTIONAL MATCH (x)-[r*5..]->(y) RETURN x.n, r, y", "['a', null, null]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH (:A)-[r*2]->() WITH r MATCH (x)-[r*]->(y) RETURN x.n, y.n", "['a', 'c']"},
    {NULL, "CREATE (a)-[:K*2]->(b)", "!SyntaxError/CreatingVarLength"},
    /* named paths, fixed and variable length */
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH p = (:A)-->(y) RETURN length(p), [x IN nodes(p) | x.n], "
           "[x IN relationships(p) | x.w]", "[1, ['a', 'b'], [1]]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH p = (y)<-[*2]-(:A) RETURN length(p), [x IN nodes(p) | x.n], "
           "[x IN relationships(p) | x.w]", "[2, ['c', 'b', 'a'], [2, 1]]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH p = (:B)-[*0..]->(:B) RETURN length(p), [x IN nodes(p) | x.n]", "[0, ['b']]"},
    {"CREATE (:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(:C {n: 'c'})-[:L {w: 1}]->(:D {n: 'd'})", "MATCH p = (:A)-[*]->()-[:L]->(d) RETURN length(p), [x IN nodes(p) | x.n]",
     "[3, ['a', 'b', 'c', 'd']]"},
    {NULL, "RETURN nodes(null), relationships(null)", "[null, null]"},
    {NULL, "RETURN nodes(1)", "!TypeError/InvalidArgumentType"},
    {NULL, "MATCH p = (a)-->(b) RETURN p.name", "!SyntaxError/InvalidArgumentType"},
    {NULL, "MATCH (p)-->() MATCH p = ()-->() RETURN p", "!SyntaxError/VariableAlreadyBound"},
    {NULL, "MATCH p = ()-->() MATCH (p) RETURN p", "!SyntaxError/VariableTypeConflict"},
    {NULL, "MATCH ()-[r]->(r) RETURN r", "!SyntaxError/VariableTypeConflict"},
    {NULL, "WITH 1 AS n MATCH (n) RETURN n", "!SyntaxError/VariableTypeConflict"},
    {NULL, "MATCH (a)-[r]->()-[r]->(a) RETURN r", "!SyntaxError/RelationshipUniquenessViolation"},
    {"CREATE (:A)-[:T]->(:B)", "MATCH (a)-[:T|T]->(b) RETURN count(*)", "[1]"},
    /* shortestPath / allShortestPaths */
    {"CREATE (a:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(c:C {n: 'c'}), (a)-[:K {w: 5}]->(:E {n: 'e'})-[:K {w: 6}]->(c)", "MATCH (a:A), (c:C) MATCH p = shortestPath((a)-[*]->(c)) RETURN length(p)", "[2]"},
    {"CREATE (a:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(c:C {n: 'c'}), (a)-[:K {w: 5}]->(:E {n: 'e'})-[:K {w: 6}]->(c)", "MATCH (a:A), (c:C) MATCH p = allShortestPaths((a)-[*]->(c)) "
            "RETURN [x IN nodes(p) | x.n] AS ns ORDER BY ns",
     "[['a', 'b', 'c']] [['a', 'e', 'c']]"},
    {"CREATE (a:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(c:C {n: 'c'}), (a)-[:K {w: 5}]->(:E {n: 'e'})-[:K {w: 6}]->(c)", "MATCH (a:A), (c:C) MATCH p = allShortestPaths((c)-[*]-(a)) "
            "RETURN [x IN relationships(p) | x.w] AS ws ORDER BY ws",
     "[[2, 1]] [[6, 5]]"},
    {"CREATE (a:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(c:C {n: 'c'}), (a)-[:K {w: 5}]->(:E {n: 'e'})-[:K {w: 6}]->(c)", "MATCH (a:A), (c:C) MATCH p = shortestPath((c)-[*]->(a)) RETURN p", ""},
    {"CREATE (a:A {n: 'a'})-[:K {w: 1}]->(:B {n: 'b'})-[:K {w: 2}]->(c:C {n: 'c'}), (a)-[:K {w: 5}]->(:E {n: 'e'})-[:K {w: 6}]->(c)", "MATCH (a:A), (c:C) MATCH p = shortestPath((a)-[:K*..1]->(c)) RETURN p", ""},
    {NULL, "MATCH p = shortestPath((a)-->(b)-->(c)) RETURN p", "!SyntaxError/"},
    /* patterns in expressions: predicates, EXISTS subqueries, pattern
       comprehensions; outer variables bound, the pattern's own local */
#define CHAIN "CREATE (:A {n: 'a', v: 1})-[:T]->(:B {n: 'b', v: 2})-[:U]->(:C {n: 'c', v: 3}), (:D {n: 'd'})"
    {CHAIN, "MATCH (x) WHERE (x)-[:T]->() RETURN x.n", "['a']"},
    {CHAIN, "MATCH (x) WHERE NOT (x)-->() RETURN x.n ORDER BY x.n", "['c'] ['d']"},
    {CHAIN, "MATCH (x) WHERE (x)<--() OR (x:D) RETURN x.n ORDER BY x.n", "['b'] ['c'] ['d']"},
    {CHAIN, "MATCH (x), (y) WHERE (x)-[*2]->(y) RETURN x.n, y.n", "['a', 'c']"},
    {CHAIN, "MATCH (x) RETURN x.n, exists((x)--()) AS linked ORDER BY x.n",
     "['a', true] ['b', true] ['c', true] ['d', false]"},
    /* the MATCH in progress binds r; the predicate's pattern may reuse it */
    {CHAIN, "MATCH (x)-[r]->(y) WHERE (x)-[:T]->(y) RETURN x.n", "['a']"},
    {CHAIN, "MATCH (x) WHERE (x)-->(z) RETURN x", "!SyntaxError/UndefinedVariable"},
    {CHAIN, "MATCH (x) WHERE EXISTS { (x)-->(z) WHERE z.v > 2 } RETURN x.n", "['b']"},
    {CHAIN, "MATCH (x) WHERE EXISTS { MATCH (x)-[*]->(z) WITH x, count(z) AS c WHERE c = 2 "
            "RETURN c } RETURN x.n", "['a']"},
    {CHAIN, "MATCH (x) WHERE EXISTS { MATCH (y) WHERE EXISTS { (x)-->(y) WHERE y.v = x.v + 1 } "
            "RETURN y } RETURN x.n ORDER BY x.n", "['a'] ['b']"},
    {CHAIN, "MATCH (x) WHERE EXISTS { MATCH (x)-->(y) RETURN y UNION MATCH (x:D) RETURN x AS y } "
            "RETURN x.n ORDER BY x.n", "['a'] ['b'] ['d']"},
    {CHAIN, "MATCH (x) WHERE EXISTS { MATCH (x)-->(y) SET y.v = 0 } RETURN x", "!SyntaxError/"},
    {CHAIN, "MATCH (x:A) RETURN [(x)-[*]->(y) WHERE y.v > 1 | y.n] AS ns", "[['b', 'c']]"},
    {CHAIN, "MATCH (x:B) RETURN [p = (x)-[r]-() | type(r) + length(p)] AS ts", "[['T1', 'U1']]"},
    {CHAIN, "UNWIND ['a', 'b'] AS k MATCH (x {n: k}) "
            "RETURN [y IN [1, 2] | size([(x)-->(z) WHERE z.v > y | z])] AS s ORDER BY k",
     "[[1, 0]] [[1, 1]]"},
    {CHAIN, "MATCH (x) WITH size([(x)-->() | 1]) AS out, count(*) AS c RETURN out, c ORDER BY out",
     "[0, 2] [1, 2]"},
    {CHAIN, "MATCH (x) RETURN [(x)-->(w) | w] AS l, w", "!SyntaxError/UndefinedVariable"},
#undef CHAIN
    /* ORDER BY after aggregation or DISTINCT; what an aggregating item reads */
    {NULL, "UNWIND [{k: 'a'}, {k: 'a'}, {k: 'b'}] AS m WITH m.k AS k, count(*) AS c "
           "ORDER BY m.k DESC RETURN k, c", "['b', 1] ['a', 2]"},
    {NULL, "UNWIND [{k: 'a'}, {k: 'a'}, {k: 'b'}] AS m WITH DISTINCT m.k AS k "
           "ORDER BY m.k + 'x' DESC RETURN k", "['b'] ['a']"},
    {NULL, "UNWIND [{k: 'a'}, {k: 'b'}, {k: 'b'}] AS m RETURN m.k, count(*) "
           "ORDER BY count(*) DESC, m.k", "['b', 2] ['a', 1]"},
    {NULL, "UNWIND [1, 2] AS x RETURN x ORDER BY max(x)", "!SyntaxError/InvalidAggregation"},
    {NULL, "UNWIND [1, 2] AS x WITH x AS y ORDER BY y, count(x) RETURN y",
     "!SyntaxError/InvalidAggregation"},
    {NULL, "UNWIND [1, 2] AS x RETURN DISTINCT x % 2 AS p ORDER BY x",
     "!SyntaxError/UndefinedVariable"},
    {NULL, "UNWIND [1, 2] AS x RETURN x % 2 AS p, count(*) ORDER BY x",
     "!SyntaxError/UndefinedVariable"},
    {NULL, "UNWIND [1, 2] AS x RETURN x + count(*)", "!SyntaxError/AmbiguousAggregationExpression"},
    {NULL, "UNWIND [{a: 1}, {a: 1}, {a: 2}] AS m RETURN m.a, m.a * 10 + count(*) ORDER BY m.a",
     "[1, 12] [2, 21]"},
    {NULL, "UNWIND [{a: 1}] AS m RETURN m.a + 1, m.a + 1 + count(*)",
     "!SyntaxError/AmbiguousAggregationExpression"},
    {NULL, "UNWIND [1, 2, 3] AS x RETURN [y IN collect(x) | y * 2] AS l", "[[2, 4, 6]]"},
    {NULL, "RETURN count(rand())", "!SyntaxError/NonConstantExpression"},
    /* percentiles and standard deviations */
    {NULL, "UNWIND [40, 10, 30, 20] AS x RETURN percentileDisc(x, 0.5), percentileCont(x, 0.5), "
           "percentileCont(x, 0.25), percentileDisc(x, 0), percentileDisc(x, 1)",
     "[20, 25.0, 17.5, 10, 40]"},
    {NULL, "UNWIND [2, 4, 4, 4, 5, 5, 7, 9, null] AS x RETURN stDevP(x), stDev(x)",
     "[2.0, 2.1380899352993952]"},
    {NULL, "UNWIND [1] AS x RETURN stDev(x), stDevP(null)", "[0.0, 0.0]"},
    {NULL, "UNWIND [1, 1, 3] AS x RETURN percentileCont(DISTINCT x, 0.5)", "[2.0]"},
    {NULL, "UNWIND [] AS x RETURN percentileDisc(x, 0.5)", "[null]"},
    {NULL, "UNWIND [1, 2] AS x RETURN percentileCont(x, 1.5)", "!ArgumentError/NumberOutOfRange"},
    {NULL, "UNWIND [1, 2] AS x RETURN percentileDisc(x, -0.1)", "!ArgumentError/NumberOutOfRange"},
    {NULL, "UNWIND ['a'] AS x RETURN stDev(x)", "!TypeError/InvalidArgumentType"},
    {NULL, "UNWIND [1] AS x RETURN percentileDisc(x)", "!SyntaxError/InvalidNumberOfArguments"},
    /* =~: the whole string must match; null and non-strings give null */
    {NULL, "RETURN 'abc' =~ 'a.c', 'abcd' =~ 'a.c', 'xabc' =~ 'abc', 'ab' =~ 'a|ab', "
           "'ABC' =~ '(?i)a[b]+c', 'ABC' =~ 'a[b]+c'",
     "[true, false, false, true, true, false]"},
    {NULL, "RETURN null =~ 'a', 'a' =~ null, 1 =~ 'a'", "[null, null, null]"},
    {NULL, "UNWIND ['Ada', 'Bob', 'Alan'] AS n WITH n WHERE n =~ 'A[a-z]+' RETURN n",
     "['Ada'] ['Alan']"},
    {NULL, "RETURN 'a' =~ '('", "!ArgumentError/InvalidArgumentValue"},
    /* compile-time kinds and binding checks */
    {NULL, "MATCH (n) RETURN type(n)", "!SyntaxError/InvalidArgumentType"},
    {NULL, "MATCH ()-[r]->() RETURN labels(r)", "!SyntaxError/InvalidArgumentType"},
    {NULL, "MATCH (n) RETURN length(n)", "!SyntaxError/InvalidArgumentType"},
    {NULL, "RETURN properties('x')", "!SyntaxError/InvalidArgumentType"},
    {NULL, "RETURN properties({a: 1}).a", "[1]"},
    {NULL, "MATCH (n) WHERE (n) RETURN n", "!SyntaxError/InvalidArgumentType"},
    {NULL, "MATCH (n) DELETE 1 + 1", "!SyntaxError/InvalidArgumentType"},
    {NULL, "MATCH (a) CREATE (a)", "!SyntaxError/VariableAlreadyBound"},
    {NULL, "CREATE (a:X)-[:T]->(), (a:Y)-[:T]->()", "!SyntaxError/VariableAlreadyBound"},
    {NULL, "MATCH (a) MERGE (a)", "!SyntaxError/VariableAlreadyBound"},
    {"CREATE (:A)", "MATCH (a:A) CREATE (a)-[:T]->(b:B) RETURN labels(b)", "[['B']]"},
    {NULL, "UNWIND [1, 'x'] AS v RETURN labels(v)", "!TypeError/InvalidArgumentValue"},
    {NULL, "UNWIND [1] AS v RETURN type(v)", "!TypeError/InvalidArgumentValue"},
    {NULL, "MERGE ({k: null})", "!SemanticError/MergeReadOwnWrites"},
    {"CREATE (), ()", "MATCH () CREATE () WITH * CREATE () WITH * RETURN count(*)", "[2]"},
    {NULL, "RETURN *", "!SyntaxError/NoVariablesInScope"},
    /* one clock per statement; truncation keeps the fraction above the unit */
    {NULL, "UNWIND range(1, 50) AS i WITH collect(localdatetime()) AS ts "
           "RETURN size([t IN ts WHERE t <> ts[0]]), toString(duration.inSeconds(datetime(), "
           "datetime.statement())), date() = date.transaction()",
     "[0, 'PT0S', true]"},
    {NULL, "RETURN toString(localtime.truncate('millisecond', localtime('12:31:14.645876123'), "
           "{nanosecond: 2})), toString(localtime.truncate('microsecond', "
           "localtime('12:31:14.645876123'), {nanosecond: 2})), toString(localtime.truncate("
           "'second', localtime('12:31:14.645876123'), {nanosecond: 2})), "
           "toString(localtime.truncate('millisecond', localtime('12:31:14.645876123'), "
           "{millisecond: 7}))",
     "['12:31:14.645000002', '12:31:14.645876002', '12:31:14.000000002', '12:31:14.007']"},
};

/* ---- rendering ---- */

static void render(char *buf, size_t cap, const strata_value *v)
{
    size_t n = strlen(buf);
    char *p = buf + n;
    cap -= n;
    switch (strata_value_type(v)) {
    case STRATA_NULL: snprintf(p, cap, "null"); break;
    case STRATA_BOOL: {
        bool b;
        strata_value_get_bool(v, &b);
        snprintf(p, cap, "%s", b ? "true" : "false");
        break;
    }
    case STRATA_INT: {
        int64_t i;
        strata_value_get_int(v, &i);
        snprintf(p, cap, "%lld", (long long)i);
        break;
    }
    case STRATA_FLOAT: {
        double f;
        strata_value_get_float(v, &f);
        snprintf(p, cap, "%.17g", f);
        if (!strpbrk(p, ".e"))
            strncat(p, ".0", cap - strlen(p) - 1);
        break;
    }
    case STRATA_STRING: {
        const char *s;
        size_t len;
        strata_value_get_string(v, &s, &len);
        snprintf(p, cap, "'%s'", s);
        break;
    }
    case STRATA_LIST: {
        strncat(buf, "[", cap - 1);
        for (size_t i = 0; i < strata_value_list_len(v); i++) {
            strata_value *e;
            assert_int_equal(strata_value_list_get(v, i, &e), STRATA_OK);
            if (i)
                strncat(buf, ", ", cap - strlen(p) - 1);
            render(buf, cap + n, e);
            strata_value_free(&e);
        }
        strncat(buf, "]", cap - strlen(p) - 1);
        break;
    }
    default: {
        strata_id id = 0;
        strata_value_get_id(v, &id);
        snprintf(p, cap, "#%llu", (unsigned long long)id);
        break;
    }
    }
}

static void run_setup(strata_graph *g, const char *setup)
{
    if (!setup)
        return;
    char *copy = strdup(setup);
    for (char *save, *s = strtok_r(copy, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
        strata_result *r = NULL;
        strata_status st = strata_query(g, s, NULL, &r);
        if (st != STRATA_OK)
            fail_msg("setup `%s` failed: %s", s, strata_errmsg(g));
        strata_result_free(&r);
    }
    free(copy);
}

static uint64_t node_count(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    uint64_t n = strata_node_count(v) * 1000 + strata_rel_count(v);
    strata_view_release(&v);
    return n;
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const qcase *c = &cases[i];
        if (!c->query)
            continue;
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        run_setup(g, c->setup);
        uint64_t before = node_count(g);
        strata_result *r = NULL;
        strata_status st = strata_query(g, c->query, NULL, &r);
        assert_non_null(r);
        char got[2048] = "";
        if (c->expect[0] == '!') {
            const strata_query_error *e = strata_result_error(r);
            if (st == STRATA_OK || !e)
                fail_msg("case %zu `%s`: expected %s, succeeded", i, c->query, c->expect);
            snprintf(got, sizeof got, "!%s/%s", e->code, e->detail ? e->detail : "");
            if (strncmp(got, c->expect, strlen(c->expect)) != 0)
                fail_msg("case %zu `%s`: expected %s, got %s (%s)", i, c->query, c->expect, got,
                         e->message);
            assert_int_equal(node_count(g), before);   /* rolled back */
        } else {
            if (st != STRATA_OK)
                fail_msg("case %zu `%s` failed: %s", i, c->query, strata_errmsg(g));
            size_t nc = strata_result_columns(r, NULL);
            const strata_value *const *row;
            while (strata_result_next(r, &row)) {
                if (got[0])
                    strncat(got, " ", sizeof got - strlen(got) - 1);
                strncat(got, "[", sizeof got - strlen(got) - 1);
                for (size_t k = 0; k < nc; k++) {
                    if (k)
                        strncat(got, ", ", sizeof got - strlen(got) - 1);
                    render(got, sizeof got, row[k]);
                }
                strncat(got, "]", sizeof got - strlen(got) - 1);
            }
            if (strcmp(got, c->expect) != 0)
                fail_msg("case %zu `%s`: expected %s, got %s", i, c->query, c->expect, got);
        }
        strata_result_free(&r);
        strata_view *v;
        assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
        assert_int_equal(strata_integrity_check(v), STRATA_OK);
        strata_view_release(&v);
        strata_graph_free(&g);
    }
}

/* A failing write statement part way through is undone whole, ids
   included. */
static void test_rollback(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run_setup(g, "CREATE (:A {v: 1})");
    strata_result *r = NULL;
    assert_int_not_equal(strata_query(g, "UNWIND [1, 2, 0] AS x CREATE (:B {v: 10 / x})", NULL, &r),
                         STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "CREATE (n) RETURN id(n)", NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t id;
    assert_int_equal(strata_value_get_int(row[0], &id), STRATA_OK);
    assert_int_equal(id, 1);   /* the ids the failed statement took are free again */
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* Parameters, and the index seek giving the same rows as a scan. */
static void test_params_and_index(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run_setup(g, "UNWIND range(1, 50) AS i CREATE (:P {k: i % 7, i: i})");
    strata_token label, key;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "P", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &key), STRATA_OK);
    strata_index idx;
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, label, &key, 1, &idx),
                     STRATA_OK);
    strata_value *three = strata_value_int(3);
    const char *names[] = {"k"};
    const strata_value *vals[] = {three};
    strata_value *params = strata_value_map(names, vals, 1);
    const char *queries[] = {"MATCH (n:P {k: $k}) RETURN count(*), sum(n.i)",
                             "MATCH (n:P) WHERE n.k = $k RETURN count(*), sum(n.i)",
                             "MATCH (n) WHERE n.k = $k RETURN count(*), sum(n.i)"};
    for (size_t q = 0; q < 3; q++) {
        strata_result *r = NULL;
        assert_int_equal(strata_query(g, queries[q], params, &r), STRATA_OK);
        const strata_value *const *row;
        assert_true(strata_result_next(r, &row));
        int64_t count, sum;
        strata_value_get_int(row[0], &count);
        strata_value_get_int(row[1], &sum);
        assert_int_equal(count, 7);       /* 3, 10, ..., 45 */
        assert_int_equal(sum, 168);
        strata_result_free(&r);
    }
    strata_value_free(&params);
    strata_value_free(&three);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_rollback),
        cmocka_unit_test(test_params_and_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
