/*
 * Users and password hashes (auth.h).
 *
 * Hashes come from libcrypt's yescrypt ("$y$" prefix) with a random salt
 * from crypt_gensalt_rn; checking recomputes the hash with the stored
 * setting and compares in constant time.  A user that does not exist is
 * checked against a dummy hash, so both answers cost the same.
 */
#include "server/auth.h"

#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define MAX_USERS 4096
#define MAX_LINE 1024

typedef struct auth_user {
    char *name;
    char *hash;
} auth_user;

struct auth_db {
    auth_user *users;
    size_t n;
    char *dummy;   /* a hash of nothing, for unknown users */
};

static char *hash_password(const char *password)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    /* count 0: libcrypt's default cost for yescrypt */
    if (!crypt_gensalt_rn("$y$", 0, NULL, 0, salt, sizeof salt))
        return NULL;
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return NULL;
    const char *h = crypt_r(password, salt, cd);
    char *out = h && h[0] == '$' ? strdup(h) : NULL;
    free(cd);
    return out;
}

static bool hash_matches(const char *password, const char *hash)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return false;
    const char *h = crypt_r(password, hash, cd);
    bool same = false;
    if (h && h[0] == '$' && strlen(h) == strlen(hash)) {
        unsigned char diff = 0;
        for (size_t i = 0; hash[i]; i++)
            diff |= (unsigned char)(h[i] ^ hash[i]);
        same = diff == 0;
    }
    free(cd);
    return same;
}

void auth_free(auth_db **db)
{
    if (!db || !*db)
        return;
    for (size_t i = 0; i < (*db)->n; i++) {
        free((*db)->users[i].name);
        free((*db)->users[i].hash);
    }
    free((*db)->users);
    free((*db)->dummy);
    free(*db);
    *db = NULL;
}

/* Splits "name:hash\n" in place; false when the line is not one. */
static bool split_line(char *line, char **name, char **hash)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *colon = strchr(line, ':');
    if (!colon || colon == line || colon[1] != '$')
        return false;
    *colon = '\0';
    *name = line;
    *hash = colon + 1;
    return true;
}

auth_db *auth_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    auth_db *db = calloc(1, sizeof *db);
    char line[MAX_LINE];
    unsigned lineno = 0;
    if (!db || !(db->users = calloc(MAX_USERS, sizeof *db->users)) ||
        !(db->dummy = hash_password("strata"))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    while (fgets(line, sizeof line, f)) {
        char *name, *hash;
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!split_line(line, &name, &hash)) {
            snprintf(err, errlen, "%s: line %u: expected name:hash", path, lineno);
            goto fail;
        }
        if (db->n == MAX_USERS) {
            snprintf(err, errlen, "%s: more than %d users", path, MAX_USERS);
            goto fail;
        }
        db->users[db->n].name = strdup(name);
        db->users[db->n].hash = strdup(hash);
        db->n++;
        if (!db->users[db->n - 1].name || !db->users[db->n - 1].hash) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
    }
    if (db->n == 0) {
        snprintf(err, errlen, "%s: no users (add one with strata passwd)", path);
        goto fail;
    }
    fclose(f);
    return db;
fail:
    fclose(f);
    auth_free(&db);
    return NULL;
}

bool auth_check(const auth_db *db, const char *user, const char *password)
{
    const char *hash = db->dummy;
    bool known = false;
    for (size_t i = 0; i < db->n; i++)
        if (strcmp(db->users[i].name, user) == 0) {
            hash = db->users[i].hash;
            known = true;
        }
    bool ok = hash_matches(password, hash);
    return known && ok;
}

/* ---- strata passwd ---- */

static int read_password(char *buf, size_t cap)
{
    bool tty = isatty(STDIN_FILENO);
    struct termios old, quiet;
    if (tty) {
        fprintf(stderr, "password: ");
        tcgetattr(STDIN_FILENO, &old);
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    }
    char *got = fgets(buf, (int)cap, stdin);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
        fputc('\n', stderr);
    }
    if (!got)
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf[0] ? 0 : -1;
}

static bool valid_user(const char *user)
{
    if (!user[0] || strlen(user) > 128)
        return false;
    for (const char *p = user; *p; p++)
        if (*p == ':' || *p == '\n' || *p == '\r' || (unsigned char)*p < 0x20)
            return false;
    return true;
}

/* Writes path.tmp with every line of path except user's, then user's new
   one, and renames it over path. */
static int write_users(const char *path, const char *user, const char *hash)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        fprintf(stderr, "strata passwd: %s: path too long\n", path);
        return 1;
    }
    FILE *in = fopen(path, "r");
    if (!in && errno != ENOENT) {
        fprintf(stderr, "strata passwd: %s: %s\n", path, strerror(errno));
        return 1;
    }
    mode_t mask = umask(077);
    FILE *out = fopen(tmp, "w");
    umask(mask);
    if (!out) {
        fprintf(stderr, "strata passwd: %s: %s\n", tmp, strerror(errno));
        if (in)
            fclose(in);
        return 1;
    }
    char line[MAX_LINE];
    size_t ulen = strlen(user);
    while (in && fgets(line, sizeof line, in)) {
        if (strncmp(line, user, ulen) == 0 && line[ulen] == ':')
            continue;
        fputs(line, out);
    }
    fprintf(out, "%s:%s\n", user, hash);
    if (in)
        fclose(in);
    if (fflush(out) != 0 || fsync(fileno(out)) != 0 || fclose(out) != 0 ||
        rename(tmp, path) != 0) {
        fprintf(stderr, "strata passwd: %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}

int passwd_main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: strata passwd FILE USER  (the password is read from stdin)\n");
        return 2;
    }
    if (!valid_user(argv[2])) {
        fprintf(stderr, "strata passwd: a user name is 1..128 bytes without ':' or control "
                        "characters\n");
        return 2;
    }
    char password[512];
    if (read_password(password, sizeof password) != 0) {
        fprintf(stderr, "strata passwd: no password given on standard input\n");
        return 1;
    }
    char *hash = hash_password(password);
    memset(password, 0, sizeof password);
    if (!hash) {
        fprintf(stderr, "strata passwd: libcrypt could not hash the password\n");
        return 1;
    }
    int rc = write_users(argv[1], argv[2], hash);
    free(hash);
    return rc;
}
