/*
 * The auth file: one user per line, "name:hash", where hash is a salted,
 * slow yescrypt hash as libcrypt writes it ("$y$...").  `strata passwd`
 * adds or replaces a line; the server loads the file once at start.
 */
#ifndef SERVER_AUTH_H
#define SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct auth_db auth_db;

/* Loads path; NULL with a message in err on failure. */
auth_db *auth_load(const char *path, char *err, size_t errlen);
void auth_free(auth_db **db);
/* Whether user's password is password (constant work whether or not the
   user exists, so a probe cannot tell names apart by timing). */
bool auth_check(const auth_db *db, const char *user, const char *password);

/* `strata passwd FILE USER`: reads the password from standard input (no
   echo on a terminal), writes the file atomically with mode 0600. */
int passwd_main(int argc, char **argv);

#endif
