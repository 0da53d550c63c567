/*
 * What strata_save and strata_load do to the files they are given, beyond
 * their contents: a save keeps the old file's mode (a new file gets 0666
 * less the umask), and refuses a target that is not a regular file — a
 * FIFO, a symbolic link (to a file or dangling), a device node, a
 * directory — with a clear error, leaving it exactly as it was and no
 * temporary file behind; a load of a FIFO or a device is refused at once
 * instead of waiting for a writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strata.h"
#include "support/tmp_dir.h"

/* A small graph to save. */
static strata_graph *small_graph(void)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token l;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &l), STRATA_OK);
    strata_id id;
    assert_int_equal(strata_node_create(g, &l, 1, &id), STRATA_OK);
    return g;
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode;
}

/* No PATH.tmp-* file is left in the directory. */
static void assert_no_temporary_files(void)
{
    DIR *d = opendir(tmp_dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp-"))
            fail_msg("a temporary file was left behind: %s", e->d_name);
    closedir(d);
}

static void test_save_keeps_the_mode(void **state)
{
    (void)state;
    strata_graph *g = small_graph();
    static const mode_t modes[] = { 0600, 0640, 0444, 0664 };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const char *path = tmp_path("kept.db");
        assert_int_equal(strata_save(g, path), STRATA_OK);
        assert_int_equal(chmod(path, modes[i]), 0);
        assert_int_equal(strata_save(g, path), STRATA_OK);
        if ((mode_of(path) & 07777) != modes[i])
            fail_msg("saved over a %04o file: now %04o", (unsigned)modes[i],
                     (unsigned)(mode_of(path) & 07777));
        unlink(path);
    }
    /* A new file: 0666 less the umask. */
    static const mode_t masks[] = { 022, 077, 002 };
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        const char *path = tmp_path("new.db");
        mode_t old = umask(masks[i]);
        strata_status s = strata_save(g, path);
        umask(old);
        assert_int_equal(s, STRATA_OK);
        assert_int_equal(mode_of(path) & 07777, 0666 & ~masks[i]);
        unlink(path);
    }
    assert_no_temporary_files();
    strata_graph_free(&g);
}

/* A save to path fails with EIO naming the path and what it is; the node
   at path keeps its type and mode. */
static void expect_save_refused(strata_graph *g, const char *path, const char *kind)
{
    mode_t before = mode_of(path);
    assert_int_equal(strata_save(g, path), STRATA_EIO);
    const char *msg = strata_errmsg(g);
    if (!strstr(msg, path) || !strstr(msg, kind) || !strstr(msg, "not a regular file"))
        fail_msg("saving over %s (%s): message '%s'", path, kind, msg);
    assert_int_equal(mode_of(path), before);
    assert_no_temporary_files();
}

static void test_save_refuses_what_is_not_a_regular_file(void **state)
{
    (void)state;
    strata_graph *g = small_graph();

    assert_int_equal(mkfifo(tmp_path("fifo"), 0600), 0);
    expect_save_refused(g, tmp_path("fifo"), "a FIFO");

    /* A link to a saved graph: the link and the file it names stay. */
    const char *target = tmp_path("target.db");
    assert_int_equal(strata_save(g, target), STRATA_OK);
    struct stat t0;
    assert_int_equal(stat(target, &t0), 0);
    assert_int_equal(symlink("target.db", tmp_path("link.db")), 0);
    expect_save_refused(g, tmp_path("link.db"), "a symbolic link");
    char dest[64];
    ssize_t n = readlink(tmp_path("link.db"), dest, sizeof dest - 1);
    assert_true(n > 0);
    dest[n] = '\0';
    assert_string_equal(dest, "target.db");
    struct stat t1;
    assert_int_equal(stat(target, &t1), 0);
    assert_int_equal(t0.st_ino, t1.st_ino);

    assert_int_equal(symlink("nowhere.db", tmp_path("dangling.db")), 0);
    expect_save_refused(g, tmp_path("dangling.db"), "a symbolic link");
    assert_int_equal(access(tmp_path("nowhere.db"), F_OK), -1);

    assert_int_equal(mkdir(tmp_path("dir.db"), 0755), 0);
    expect_save_refused(g, tmp_path("dir.db"), "a directory");

    /* A device node of our own (the null device's numbers), where we may
       make one: never the system's. */
    if (mknod(tmp_path("null"), S_IFCHR | 0600, makedev(1, 3)) == 0)
        expect_save_refused(g, tmp_path("null"), "a character device");
    strata_graph_free(&g);
}

/* strata_load_ex(path) in a child process that an alarm kills after a few
   seconds, so a load that blocks fails the test instead of hanging it.
   Returns the load's status; *msg gets its message. */
static int load_in_child(const char *path, char *msg, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        alarm(5);
        strata_graph *g = NULL;
        char err[512] = "";
        strata_status s = strata_load_ex(path, &g, err, sizeof err);
        ssize_t w = write(fds[1], err, strlen(err));
        (void)w;
        strata_graph_free(&g);
        _exit((int)s);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], msg, cap - 1);
    msg[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("loading %s did not return (signal %d): it blocked", path, WTERMSIG(status));
    return WEXITSTATUS(status);
}

static void test_load_refuses_a_fifo_without_blocking(void **state)
{
    (void)state;
    const char *fifo = tmp_path("load-fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char msg[512];
    assert_int_equal(load_in_child(fifo, msg, sizeof msg), STRATA_EIO);
    if (!strstr(msg, fifo) || !strstr(msg, "not a regular file") || !strstr(msg, "a FIFO"))
        fail_msg("message: %s", msg);
    /* Still a FIFO, and a regular file still loads after it. */
    assert_true(S_ISFIFO(mode_of(fifo)));
    strata_graph *g = small_graph();
    assert_int_equal(strata_save(g, tmp_path("plain.db")), STRATA_OK);
    strata_graph_free(&g);
    assert_int_equal(load_in_child(tmp_path("plain.db"), msg, sizeof msg), STRATA_OK);
    if (mknod(tmp_path("load-null"), S_IFCHR | 0600, makedev(1, 3)) == 0) {
        assert_int_equal(load_in_child(tmp_path("load-null"), msg, sizeof msg), STRATA_EIO);
        assert_non_null(strstr(msg, "a character device"));
    }
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-files");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_keeps_the_mode),
        cmocka_unit_test(test_save_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(test_load_refuses_a_fifo_without_blocking),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
