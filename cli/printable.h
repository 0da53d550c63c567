/* printable — text from data made safe for a terminal.  A string from the
   graph or from an error message may hold control characters (U+0000,
   ESC, ...); written raw they would cut the text short in a C string or be
   run by the terminal as an escape sequence.  Tables and error messages
   for people go through here. */
#ifndef STRATA_CLI_PRINTABLE_H
#define STRATA_CLI_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/strbuf.h"

/* Appends s[0..len) with each control character replaced: newline,
   carriage return and tab (unless keep_tabs) by a space, so a cell or a
   message stays on one line; every other C0 control (U+0000 among them)
   and DEL by its Unicode control picture (U+2400 + code, U+2421 for DEL),
   one column wide and visible. */
void printable_put(strbuf *b, const char *s, size_t len, bool keep_tabs);
/* The same, written to f. */
void printable_write(FILE *f, const char *s, size_t len, bool keep_tabs);

#endif
