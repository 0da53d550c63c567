/*
 * parser — openCypher 9 text to a syntax tree.
 *
 * A recursive-descent parser over the lexer's tokens; each function opens
 * with the grammar rule it implements.  Expressions are parsed by
 * precedence climbing over one operator table.  The parser checks syntax
 * only, plus the few rules that need no knowledge of variables or
 * functions and that openCypher reports as syntax errors:
 *   - clause composition: RETURN ends a query; a reading clause after an
 *     updating one needs a WITH in between; a query ends with RETURN, an
 *     updating clause or a CALL that yields nothing (or is the whole
 *     query); UNION and UNION ALL do not mix; EXISTS subqueries do not
 *     update (InvalidClauseComposition);
 *   - CALL inside a query has an argument list (InvalidArgumentPassingMode)
 *     and no YIELD * (UnexpectedSyntax);
 *   - a pattern is an expression only where a predicate is expected: in a
 *     WHERE, or as the argument of exists() (UnexpectedSyntax);
 *   - parameter maps do not describe nodes or relationships to match
 *     (InvalidParameterUse); SKIP and LIMIT literals are not negative
 *     (NegativeIntegerArgument); DELETE takes no label predicate
 *     (InvalidDelete); variable-length bounds are written *min..max
 *     (InvalidRelationshipPattern).
 * Everything that needs scopes or types (undefined variables, aggregation
 * rules, argument types) belongs to semantic analysis, a later pass.
 *
 * The tree's shape (see ast.h): a minus sign before a numeric literal is
 * folded into the literal (-1 is an INT_LIT, which is how the smallest
 * integer is written at all); a comparison chain a < b <= c is one
 * COMPARISON node; a pattern standing as a predicate is a PATH node in
 * expression position; EXISTS { pattern WHERE p } is EXISTS over a QUERY
 * holding one MATCH.  Reserved words (lexer.h) name variables only when
 * `quoted`; as labels, types and keys any word will do.
 *
 * Nesting deeper than CYPHER_AST_MAX_DEPTH is an error, so neither the
 * parser nor a recursive pass over its tree can overflow the stack.
 */
#ifndef STRATA_QUERY_PARSER_H
#define STRATA_QUERY_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "query/ast.h"
#include "storage/mem.h"

typedef struct cypher_error {
    const char *category;   /* "SyntaxError" or "OutOfMemory" (static) */
    const char *detail;     /* TCK detail code ("UnexpectedSyntax",
                               "IntegerOverflow", ...) or NULL (static) */
    char message[256];      /* "expected ')' but found 'RETURN'" */
    uint32_t line, column;  /* 1-based, of the offending token */
    size_t offset;          /* its byte offset */
} cypher_error;

/* Parses one statement (an optional trailing ';' is allowed) from
   text[0..len), which need not be NUL-terminated and is only borrowed:
   the tree copies what it keeps.  On success returns 0 and *out owns a
   new tree allocated from m (free with cypher_ast_free); on failure
   returns -1, *out is NULL, *err says why and where, and nothing stays
   allocated.  err may be NULL. */
int cypher_parse(const char *text, size_t len, mem_ctx *m, cypher_ast **out, cypher_error *err);
/* The same for text that must be exactly one expression and nothing more
   (no clause, no second expression, no ';'): the root is the expression.
   strata_view_eval checks its text with it. */
int cypher_parse_expression(const char *text, size_t len, mem_ctx *m, cypher_ast **out,
                            cypher_error *err);

#endif
