/*
 * functions_string — Cypher's string functions, by code point.
 *
 * Rules (docs/QUERY.md, "Strings"):
 *   1. Every string is well-formed UTF-8 (storage/utf8.h), and every
 *      function here returns well-formed UTF-8: lengths and offsets count
 *      code points, so no cut falls inside a character.
 *   2. Case mapping is Unicode's, from libutf8proc: each code point's
 *      simple mapping, except that a lowercase letter whose full case
 *      folding is several characters uppercases to that folding's
 *      uppercase ("ß" -> "SS", "ﬁ" -> "FI", as SpecialCasing says), and
 *      a capital sigma lowers to the final form "ς" at the end of a word
 *      (Unicode's Final_Sigma condition).
 *   3. trim/ltrim/rtrim strip what Java's Character.isWhitespace calls
 *      white space (as Neo4j does): the space, line and paragraph
 *      separators other than the no-break ones, and U+0009..U+000D,
 *      U+001C..U+001F.
 *
 * Each implementation has the function table's signature (functions.c):
 * it borrows its arguments, returns a new value in *out, and a null
 * argument has already given null where the table says so.
 */
#ifndef STRATA_QUERY_FUNCTIONS_STRING_H
#define STRATA_QUERY_FUNCTIONS_STRING_H

#include "query/exec.h"

#define STRFN(name)                                                                        \
    int name(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)

STRFN(strfn_upper);
STRFN(strfn_lower);
STRFN(strfn_trim);
STRFN(strfn_ltrim);
STRFN(strfn_rtrim);
STRFN(strfn_substring);
STRFN(strfn_left);
STRFN(strfn_right);
STRFN(strfn_replace);
STRFN(strfn_split);
/* reverse() of a string (reverse() of a list is functions.c's). */
STRFN(strfn_reverse);

#undef STRFN

#endif
