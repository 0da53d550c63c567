/*
 * persist — saving a view to a file and loading it back (docs/FORMAT.md).
 *
 * A file is a 16-byte header (signature, format version, flags), five
 * sections in a fixed order — TOKN tokens, LSET label sets, NODE nodes,
 * RELS relationships, INDX index definitions — and a TAIL section that
 * closes it.  Every section carries its length and two CRC32Cs, one of its
 * header and one of its payload.  docs/FORMAT.md has the bytes.
 *
 * Saving reads a view, which never changes, so writers go on meanwhile.
 * It writes a temporary file in the target's directory, fsyncs it,
 * renames it over the target and fsyncs the directory.  rename() replaces
 * the name atomically, so at every moment the name points at the old file
 * or at the new one, complete and synced; a crash before the rename leaves
 * at worst a stray temporary file, never a damaged target.  The new file
 * keeps the old one's mode (and owner, where allowed), or gets 0666 less
 * the umask as any new file; a target that is not a regular file (a
 * symbolic link, a FIFO, a device node, a directory) is refused untouched,
 * since rename() would replace that node itself.
 *
 * Loading, in three steps, none of which touches anything but a new graph:
 *   1. read the file whole (opened without blocking, so a FIFO is refused
 *      rather than waited on) and check its frame: signature, version, every
 *      section's header and payload checksum, order, lengths, the trailer
 *      and that nothing follows it (load_frame);
 *   2. build into a fresh graph section by section, checking every count
 *      against the bytes left, every token and id reference against what
 *      is defined, every value's tag, range and nesting (load_*): slots
 *      are appended in id order, deleted slots allocated and then freed in
 *      the saved free-list order, so ids and their reuse order round-trip;
 *      property records get their exact size;
 *   3. rebuild each index from its definition (build_one_index).
 * Step 2 is a bulk build, because a load is bound by memory latency, not
 * by parsing: the slot vectors are filled front to back (store_builder:
 * one descent per leaf, not per slot), relationship endpoints are checked
 * against a bitmap of the live nodes rather than by descending into the
 * node vector, the label and type bitmaps are written a word at a time
 * (token_bits), and adjacency is built once every relationship is in
 * (link_all).  Indices are built bottom-up from their sorted entries.
 * Any failure frees the partial graph: the caller gets NULL and a message
 * naming the file, the section and the byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/persist.h"
#include "core/index_maint.h"
#include "core/persist_codec.h"
#include "core/stats_maint.h"

#define FILE_MAGIC "\x89SDB\r\n\x1a\n"
#define FILE_MAGIC_LEN 8
#define FILE_HEADER 16
#define FORMAT_VERSION 1u
/* 4 MiB: large sequential writes; a bigger buffer measured no faster on
   bench/save_load. */
#define WRITE_BUFFER (4u << 20)

#define TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

enum { SEC_TOKN, SEC_LSET, SEC_NODE, SEC_RELS, SEC_INDX, SEC_TAIL, NSECTIONS };

static const struct {
    uint32_t tag;
    const char *name;
} section_info[NSECTIONS] = {
    [SEC_TOKN] = { TAG('T', 'O', 'K', 'N'), "TOKN" },
    [SEC_LSET] = { TAG('L', 'S', 'E', 'T'), "LSET" },
    [SEC_NODE] = { TAG('N', 'O', 'D', 'E'), "NODE" },
    [SEC_RELS] = { TAG('R', 'E', 'L', 'S'), "RELS" },
    [SEC_INDX] = { TAG('I', 'N', 'D', 'X'), "INDX" },
    [SEC_TAIL] = { TAG('T', 'A', 'I', 'L'), "TAIL" },
};


/* The fuzz build (scripts/fuzz.sh) accepts wrong checksums, so mutated
   inputs reach the parsers behind them instead of stopping at the frame. */
#ifdef STRATA_FUZZING
#define CHECKSUMS_DIFFER(a, b) ((void)(a), (void)(b), false)
#else
#define CHECKSUMS_DIFFER(a, b) ((a) != (b))
#endif

/* ---- save --------------------------------------------------------------------- */

static void save_interner(pwriter *w, const interner *t)
{
    uint32_t n = intern_count(t);
    pw_varint(w, n);
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        const char *s = intern_name(t, i, &len);
        pw_string(w, s, len);
    }
}

static void save_tokens(pwriter *w, const catalog *c)
{
    pw_section_begin(w, section_info[SEC_TOKN].tag);
    for (int k = 0; k < 3; k++)
        save_interner(w, c->tokens[k]);
    pw_section_end(w);
}

static void save_labelsets(pwriter *w, const catalog *c)
{
    pw_section_begin(w, section_info[SEC_LSET].tag);
    uint32_t n = intern_count(c->labelsets);
    pw_varint(w, n);
    for (uint32_t i = 0; i < n; i++) {
        size_t len = labelset_len(c, i);
        pw_varint(w, len);
        for (size_t j = 0; j < len; j++)
            pw_varint(w, labelset_at(c, i, j));
    }
    pw_section_end(w);
}

static void save_props(pwriter *w, const prop_rec *r)
{
    uint32_t n = props_len(r);
    pw_varint(w, n);
    for (uint32_t i = 0; i < n; i++) {
        pw_varint(w, props_key_at(r, i));
        pw_value(w, props_val_at(r, i));
    }
}

/* The free list from its head: the slots a save lists in reuse order. */
static void save_free_list(pwriter *w, const store *s, bool rels, uint64_t nfree)
{
    pw_varint(w, nfree);
    uint32_t id = rels ? s->rel_free : s->node_free;
    for (uint64_t i = 0; i < nfree && id != SLOT_END; i++) {
        pw_varint(w, id);
        id = rels ? store_rel_link(s, id) : store_node_link(s, id);
    }
}

static void save_nodes(pwriter *w, const store *s)
{
    pw_section_begin(w, section_info[SEC_NODE].tag);
    uint64_t slots = store_node_slots(s);
    pw_varint(w, slots);
    pw_varint(w, s->node_live);
    for (uint64_t id = 0; id < slots; id++) {
        const node_meta *n = store_node(s, id);
        if (!n) {
            pw_varint(w, 0);
            continue;
        }
        pw_varint(w, (uint64_t)n->labelset + 1);
        save_props(w, store_node_props(s, id));
    }
    save_free_list(w, s, false, slots - s->node_live);
    pw_section_end(w);
}

static void save_rels(pwriter *w, const store *s)
{
    pw_section_begin(w, section_info[SEC_RELS].tag);
    uint64_t slots = store_rel_slots(s);
    pw_varint(w, slots);
    pw_varint(w, s->rel_live);
    for (uint64_t id = 0; id < slots; id++) {
        const rel_meta *r = store_rel(s, id);
        if (!r) {
            pw_varint(w, 0);
            continue;
        }
        pw_varint(w, (uint64_t)r->type + 1);
        pw_varint(w, r->start);
        pw_varint(w, r->end);
        save_props(w, store_rel_props(s, id));
    }
    save_free_list(w, s, true, slots - s->rel_live);
    pw_section_end(w);
}

static void save_indexes(pwriter *w, const index_set *set)
{
    pw_section_begin(w, section_info[SEC_INDX].tag);
    pw_varint(w, idxset_next_id(set));
    uint32_t n = idxset_len(set);
    pw_varint(w, n);
    for (uint32_t i = 0; i < n; i++) {
        const index_def *d = idxset_def(set, i);
        pw_varint(w, d->id);
        pw_u8(w, d->kind);
        pw_u8(w, d->on_rels);
        pw_varint(w, d->token);
        pw_u8(w, d->nkeys);
        for (uint32_t k = 0; k < d->nkeys; k++)
            pw_varint(w, d->keys[k]);
        pw_string(w, d->name, strlen(d->name));
    }
    pw_section_end(w);
}

static void write_graph(pwriter *w, const version *v)
{
    unsigned char h[FILE_HEADER] = { 0 };
    memcpy(h, FILE_MAGIC, FILE_MAGIC_LEN);
    h[8] = FORMAT_VERSION & 0xFF;   /* little-endian u32; flags stay 0 */
    pw_bytes(w, h, sizeof h);
    save_tokens(w, v->cat);
    save_labelsets(w, v->cat);
    save_nodes(w, &v->st);
    save_rels(w, &v->st);
    save_indexes(w, v->indexes);
    uint64_t before = w->off + w->len;
    uint32_t nsections = w->nsections;
    pw_section_begin(w, section_info[SEC_TAIL].tag);
    pw_u64(w, before);
    pw_u32(w, nsections);
    pw_section_end(w);
}

/* What a file of mode is, for messages refusing it. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return S_ISREG(mode) ? "a regular file" : "not a file";
}

/* The directory holding path, fsynced so the rename in it is durable. */
static int sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return ENAMETOOLONG;
    return persist_sync_dir(dir);
}

int persist_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int rc = fsync(fd) != 0 ? errno : 0;
    close(fd);
    return rc;
}

/* What a save may replace at path: nothing, or a regular file.  rename()
   would replace a symbolic link, a FIFO or a device node itself, not what
   the user meant by naming it, so those are refused (*refused names the
   kind), as is a directory.  *old gets what lstat found (st_mode 0 when
   nothing is there).  0, or an errno. */
static int check_target(const char *path, struct stat *old, const char **refused)
{
    *refused = NULL;
    if (lstat(path, old) != 0) {
        old->st_mode = 0;
        return errno == ENOENT ? 0 : errno;
    }
    if (!S_ISREG(old->st_mode))
        *refused = file_kind(old->st_mode);
    return 0;
}

/* Creates the temporary file PATH.tmp-XXXXXX (six random characters) for
   writing, with mode 0666 less the umask as any new file gets (mkstemp
   would force 0600, and reading the umask is not thread-safe).  The fd,
   or -1 with errno set. */
static int create_temp(char *tmp, size_t tlen, const char *path)
{
    static const char digits[] =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static atomic_uint_fast64_t calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
                 (atomic_fetch_add(&calls, 1) + 1) * 0x9E3779B97F4A7C15u;
    for (int attempt = 0; attempt < 100; attempt++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = x >> 20;
        char suffix[7];
        for (int i = 0; i < 6; i++, r /= 62)
            suffix[i] = digits[r % 62];
        suffix[6] = '\0';
        snprintf(tmp, tlen, "%s.tmp-%s", path, suffix);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Gives the new file the old one's owner (where we may: as root, or the
   group when we belong to it) and mode, so a save never widens who may
   read a database.  Without an old file the creation mode stays. */
static int keep_owner_and_mode(int fd, const struct stat *old)
{
    if (!old->st_mode)
        return 0;
    struct stat now;
    if (fstat(fd, &now) != 0)
        return errno;
    if ((now.st_uid != old->st_uid || now.st_gid != old->st_gid) &&
        fchown(fd, old->st_uid, old->st_gid) != 0 && errno != EPERM)
        return errno;
    return fchmod(fd, old->st_mode & 07777) != 0 ? errno : 0;
}

/* Writes v into a new temporary file beside path and renames it over path.
   0, or an errno (with *step naming what failed); -1 when out of memory;
   0 with *refused set when path is not a regular file (nothing written). */
static int save_file(const version *v, const char *path, const char **step,
                     const char **refused)
{
    size_t plen = strlen(path), tlen = plen + 16;
    char *tmp = mem_alloc(mem_scratch(), tlen);
    unsigned char *buf = tmp ? mem_alloc(mem_scratch(), WRITE_BUFFER) : NULL;
    int rc = 0, fd = -1;
    bool created = false;
    struct stat old;
    if (!buf) {
        rc = -1;
        goto cleanup;
    }
    *step = "checking";
    if ((rc = check_target(path, &old, refused)) != 0 || *refused)
        goto cleanup;
    *step = "creating a temporary file beside";
    if ((fd = create_temp(tmp, tlen, path)) < 0) {
        rc = errno;
        goto cleanup;
    }
    created = true;
    pwriter w;
    pw_init(&w, fd, buf, WRITE_BUFFER);
    write_graph(&w, v);
    pw_flush(&w);
    *step = "writing";
    if ((rc = w.err) != 0)
        goto cleanup;
    *step = "setting the mode of the file replacing";
    if ((rc = keep_owner_and_mode(fd, &old)) != 0)
        goto cleanup;
    *step = "syncing";
    if (fsync(fd) != 0) {
        rc = errno;
        goto cleanup;
    }
    *step = "closing";
    int c = close(fd);
    fd = -1;
    if (c != 0) {
        rc = errno;
        goto cleanup;
    }
    /* Again, just before the rename: the name may have changed meanwhile. */
    *step = "checking";
    struct stat again;
    if ((rc = check_target(path, &again, refused)) != 0 || *refused)
        goto cleanup;
    *step = "renaming the temporary file over";
    if (rename(tmp, path) != 0) {
        rc = errno;
        goto cleanup;
    }
    *step = "syncing the directory of";
    rc = sync_dir_of(path);
    goto done;   /* renamed: nothing to remove */
cleanup:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
done:
    if (buf)
        mem_free(mem_scratch(), buf);
    if (tmp)
        mem_free(mem_scratch(), tmp);
    return rc;
}

strata_status strata_save_view(strata_view *v, const char *path)
{
    if (!v)
        return STRATA_EINVAL;
    if (!path || !*path)
        return view_fail(v, STRATA_EINVAL, "strata_save_view: %s", path ? "empty path"
                                                                         : "path is NULL");
    const char *step = "preparing", *refused = NULL;
    int rc = save_file(v->ver, path, &step, &refused);
    if (rc < 0)
        return view_fail(v, STRATA_ENOMEM, "out of memory saving to %s", path);
    if (refused)
        return view_fail(v, STRATA_EIO, "saving to %s: it is %s, not a regular file; "
                         "refusing to replace it", path, refused);
    if (rc > 0) {
        char buf[128];
        return view_fail(v, STRATA_EIO, "saving to %s: %s %s: %s", path, step, path,
                         strerror_r(rc, buf, sizeof buf));
    }
    v->err[0] = '\0';
    return STRATA_OK;
}

strata_status strata_save(strata_graph *g, const char *path)
{
    if (!g)
        return STRATA_EINVAL;
    strata_view *v;
    strata_status s = strata_snapshot(g, &v);
    if (s)
        return s;
    s = strata_save_view(v, path);
    if (s)
        graph_fail(g, s, "%s", v->err);
    strata_view_release(&v);
    return s;
}

/* ---- load: the frame ------------------------------------------------------------ */

/* The label (or relationship type) bitmaps of one section, gathered a word
   at a time: slots arrive in id order, so each token's pending word only
   moves forward, and it is written into its bitmap once it is complete —
   one descent per (token, 64 ids) instead of two per entity. */
typedef struct token_bits {
    label_index **into;
    uint64_t *word;    /* per token: pending word index + 1, 0 when none */
    uint64_t *bits;
    uint32_t n;
} token_bits;

typedef struct loader {
    const unsigned char *file;
    size_t size;
    size_t off[NSECTIONS], len[NSECTIONS];   /* payloads */
    strata_graph *g;
    version *v;
    mem_ctx *m;
    preader r;       /* the section being read; its status is the load's */
    uint32_t count[3], nlabelsets;
    store_builder build;            /* the section's slots, appended in id order */
    token_bits tokens;              /* the section's label or type bitmaps */
    unsigned char *live_nodes;      /* a bit per node slot read live */
    size_t live_bytes;
    uint64_t node_slots;
    /* RELS: the adjacency build's node partitions (adj_plan) */
    uint64_t *part;                 /* half edges of partition p at p + 1 */
    uint64_t nparts;
    uint32_t part_bits, key_bits;
} loader;

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

/* Fails the load at file offset off in section sec (SIZE_MAX: the file
   header). */
static int frame_fail(loader *ld, int sec, size_t off, const char *what)
{
    pr_init(&ld->r, ld->file, off, 0, ld->m, sec < 0 ? "header" : section_info[sec].name);
    return pr_fail(&ld->r, "%s", what);
}

static int check_header(loader *ld)
{
    if (ld->size == 0)
        return frame_fail(ld, -1, 0, "the file is empty: not a strata file");
    if (ld->size < FILE_MAGIC_LEN || memcmp(ld->file, FILE_MAGIC, FILE_MAGIC_LEN) != 0)
        return frame_fail(ld, -1, 0, "no strata signature: not a strata file");
    if (ld->size < FILE_HEADER)
        return frame_fail(ld, -1, FILE_MAGIC_LEN, "the file ends inside its header");
    uint32_t fmt_version = (uint32_t)le(ld->file + 8, 4), flags = (uint32_t)le(ld->file + 12, 4);
    char msg[96];
    if (fmt_version != FORMAT_VERSION) {
        snprintf(msg, sizeof msg, "format version %u; this build reads version %u", fmt_version,
                 FORMAT_VERSION);
        return frame_fail(ld, -1, 8, msg);
    }
    if (flags != 0)
        return frame_fail(ld, -1, 12, "unknown flags are set");
    return 0;
}

/* Section sec's header at *pos: tag, length, checksums.  Advances *pos
   past its payload. */
static int check_section(loader *ld, int sec, size_t *pos)
{
    size_t at = *pos;
    if (ld->size - at < PCODEC_SECTION_HEADER)
        return frame_fail(ld, sec, at, at == ld->size ? "the file ends before this section: "
                                                        "truncated"
                                                      : "the file ends inside the section "
                                                        "header: truncated");
    const unsigned char *h = ld->file + at;
    if (CHECKSUMS_DIFFER((uint32_t)le(h + 20, 4), crc32c(0, h, 20)))
        return frame_fail(ld, sec, at, "the section header's checksum does not match: damaged");
    if ((uint32_t)le(h, 4) != section_info[sec].tag)
        return frame_fail(ld, sec, at, "another section stands where this one belongs");
    if (le(h + 4, 4) != 0)
        return frame_fail(ld, sec, at + 4, "unknown section flags are set");
    uint64_t len = le(h + 8, 8);
    at += PCODEC_SECTION_HEADER;
    if (len > ld->size - at)
        return frame_fail(ld, sec, at, "the section runs past the end of the file: truncated");
    if (CHECKSUMS_DIFFER((uint32_t)le(h + 16, 4), crc32c(0, ld->file + at, (size_t)len)))
        return frame_fail(ld, sec, at, "the section's checksum does not match: damaged");
    ld->off[sec] = at;
    ld->len[sec] = (size_t)len;
    *pos = at + (size_t)len;
    return 0;
}

static int check_trailer(loader *ld)
{
    const unsigned char *p = ld->file + ld->off[SEC_TAIL];
    size_t tail_header = ld->off[SEC_TAIL] - PCODEC_SECTION_HEADER;
    if (ld->len[SEC_TAIL] != 12 || le(p, 8) != tail_header || le(p + 8, 4) != SEC_TAIL)
        return frame_fail(ld, SEC_TAIL, ld->off[SEC_TAIL],
                          "the trailer does not describe this file");
    if (ld->off[SEC_TAIL] + ld->len[SEC_TAIL] != ld->size)
        return frame_fail(ld, SEC_TAIL, ld->off[SEC_TAIL] + ld->len[SEC_TAIL],
                          "bytes follow the trailer");
    return 0;
}

static int load_frame(loader *ld)
{
    if (check_header(ld))
        return -1;
    size_t pos = FILE_HEADER;
    for (int sec = 0; sec < NSECTIONS; sec++)
        if (check_section(ld, sec, &pos))
            return -1;
    return check_trailer(ld);
}

/* ---- load: the sections -------------------------------------------------------- */

static preader *open_section(loader *ld, int sec)
{
    pr_init(&ld->r, ld->file, ld->off[sec], ld->len[sec], ld->m, section_info[sec].name);
    return &ld->r;
}

static int close_section(loader *ld)
{
    if (pr_ok(&ld->r) && pr_left(&ld->r) != 0)
        return pr_fail(&ld->r, "%zu bytes are left over at the end of the section",
                       pr_left(&ld->r));
    return pr_ok(&ld->r) ? 0 : -1;
}

static int load_token_kind(loader *ld, int kind)
{
    static const char *const what[] = { "label", "relationship type", "property key" };
    preader *r = &ld->r;
    uint64_t n;
    if (pr_count(r, pr_left(r) / 2, "a token count", &n))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        uint32_t id;
        if (pr_string(r, 65535, "a token name length", &s, &len))
            return -1;
        if (len == 0 || memchr(s, '\0', len) || !value_utf8_valid(s, len))
            return pr_fail(r, "%s %llu has an empty, NUL-holding or non-UTF-8 name", what[kind],
                           (unsigned long long)i);
        if (intern_add(ld->v->cat->tokens[kind], s, len, &id) != 0)
            return pr_nomem(r, "interning a token");
        if (id != i)
            return pr_fail(r, "%s '%.*s' is listed twice", what[kind], (int)len, s);
    }
    ld->count[kind] = (uint32_t)n;
    return 0;
}

static int load_tokens(loader *ld)
{
    open_section(ld, SEC_TOKN);
    for (int k = 0; k < 3; k++)
        if (load_token_kind(ld, k))
            return -1;
    return close_section(ld);
}

static int load_labelsets(loader *ld)
{
    preader *r = open_section(ld, SEC_LSET);
    uint64_t n;
    if (pr_count(r, pr_left(r), "a label set count", &n))
        return -1;
    if (n == 0)
        return pr_fail(r, "the empty label set is missing");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len, label;
        uint32_t buf[MAX_LABELS_PER_NODE], id;
        if (pr_count(r, MAX_LABELS_PER_NODE, "a label set size", &len))
            return -1;
        if (i == 0 && len != 0)
            return pr_fail(r, "label set 0 is not the empty set");
        for (uint64_t j = 0; j < len; j++) {
            if (pr_varint(r, &label))
                return -1;
            if (label >= ld->count[STRATA_LABEL] || (j && label <= buf[j - 1]))
                return pr_fail(r, "label set %llu: label %llu is undefined or out of order",
                               (unsigned long long)i, (unsigned long long)label);
            buf[j] = (uint32_t)label;
        }
        if (i == 0)
            continue;   /* the new graph holds the empty set already */
        if (intern_add(ld->v->cat->labelsets, buf, len * sizeof *buf, &id) != 0)
            return pr_nomem(r, "interning a label set");
        if (id != i)
            return pr_fail(r, "label set %llu is listed twice", (unsigned long long)i);
    }
    ld->nlabelsets = (uint32_t)n;
    return close_section(ld);
}

/* An entity's property record, exactly sized; *out NULL when it has none. */
static int load_props(loader *ld, const char *what, uint64_t id, prop_rec **out)
{
    preader *r = &ld->r;
    uint64_t n, key;
    *out = NULL;
    if (pr_count(r, PROPS_MAX, "a property count", &n) || n == 0)
        return pr_ok(r) ? 0 : -1;
    prop_rec *rec = props_new(ld->m, (uint32_t)n);
    if (!rec)
        return pr_nomem(r, "building a property record");
    for (uint64_t i = 0; i < n; i++) {
        value val;
        if (pr_varint(r, &key))
            goto fail;
        if (key >= ld->count[STRATA_KEY] || (i && key <= props_key_at(rec, (uint32_t)i - 1))) {
            pr_fail(r, "%s %llu: property key %llu is undefined or out of order", what,
                    (unsigned long long)id, (unsigned long long)key);
            goto fail;
        }
        if (pr_value(r, &val))
            goto fail;
        if (!prop_storable(&val)) {
            pr_fail(r, "%s %llu: property '%s' holds a %s, which is not a property value",
                    what, (unsigned long long)id,
                    intern_name(ld->v->cat->tokens[STRATA_KEY], (uint32_t)key, NULL),
                    value_is_null(&val) ? "null" : value_type_name(&val));
            value_release(&val);
            goto fail;
        }
        /* Keys ascend (checked above) and the record has room for n. */
        props_append(rec, (uint32_t)key, val);
    }
    *out = rec;
    return 0;
fail:
    props_release(ld->m, &rec);
    return -1;
}

static int token_bits_new(loader *ld, label_index **into, uint32_t ntokens, token_bits *t)
{
    size_t bytes = mem_array_size(ntokens, sizeof(uint64_t));
    t->into = into;
    t->n = ntokens;
    t->word = mem_calloc(mem_scratch(), bytes);
    t->bits = t->word ? mem_calloc(mem_scratch(), bytes) : NULL;
    return t->bits ? 0 : pr_nomem(&ld->r, "building the label index");
}

static void token_bits_free(token_bits *t)
{
    uint64_t **arrays[] = { &t->word, &t->bits };
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        if (*arrays[i])
            mem_free(mem_scratch(), *arrays[i]);
        *arrays[i] = NULL;
    }
}

static int token_bits_flush(loader *ld, token_bits *t, uint32_t token)
{
    if (!t->word[token])
        return 0;
    if (labelidx_or_word(ld->m, t->into, token, t->word[token] - 1, t->bits[token]) != 0)
        return pr_nomem(&ld->r, "building the label index");
    t->word[token] = 0;
    t->bits[token] = 0;
    return 0;
}

/* Entity id (ids in increasing order) carries token. */
static int token_bits_set(loader *ld, token_bits *t, uint32_t token, uint64_t id)
{
    uint64_t word = id / 64 + 1;
    if (t->word[token] != word) {
        if (token_bits_flush(ld, t, token))
            return -1;
        t->word[token] = word;
    }
    t->bits[token] |= (uint64_t)1 << (id % 64);
    return 0;
}

static int token_bits_finish(loader *ld, token_bits *t)
{
    for (uint32_t k = 0; k < t->n; k++)
        if (token_bits_flush(ld, t, k))
            return -1;
    return 0;
}

/* The free list: nfree slot ids, each a hole (bit set in holes, cleared as
   it is listed, so none repeats), from head to tail into ids. */
static int load_free_list(loader *ld, uint64_t slots, uint64_t nfree, unsigned char *holes,
                          uint32_t *ids)
{
    preader *r = &ld->r;
    uint64_t n, id;
    if (pr_varint(r, &n))
        return -1;
    if (n != nfree)
        return pr_fail(r, "the free list has %llu slots; %llu are free",
                       (unsigned long long)n, (unsigned long long)nfree);
    for (uint64_t i = 0; i < n; i++) {
        if (pr_varint(r, &id))
            return -1;
        if (id >= slots || !(holes[id / 8] & (1u << (id % 8))))
            return pr_fail(r, "free list entry %llu (slot %llu) is not a free slot, or repeats",
                           (unsigned long long)i, (unsigned long long)id);
        holes[id / 8] &= (unsigned char)~(1u << (id % 8));
        ids[i] = (uint32_t)id;
    }
    return 0;
}

/* Scratch for the holes of one kind of slot: a bitmap and the free list. */
typedef struct hole_scratch {
    unsigned char *bits;
    uint32_t *ids;
    size_t nbits, nids;
} hole_scratch;

static int holes_new(loader *ld, uint64_t slots, uint64_t nfree, hole_scratch *h)
{
    h->nbits = (size_t)(slots / 8 + 1);
    h->nids = (size_t)nfree;
    h->bits = mem_calloc(mem_scratch(), h->nbits);
    h->ids = h->bits ? mem_alloc(mem_scratch(), mem_array_size(h->nids, sizeof *h->ids)) : NULL;
    if (!h->ids)
        return pr_nomem(&ld->r, "reading the free list");
    return 0;
}

static void holes_free(hole_scratch *h)
{
    if (h->ids)
        mem_free(mem_scratch(), h->ids);
    if (h->bits)
        mem_free(mem_scratch(), h->bits);
    h->ids = NULL;
    h->bits = NULL;
}

/* Slots and live count of a NODE or RELS section; live <= slots. */
static int load_slot_counts(loader *ld, uint64_t min_bytes, uint64_t *slots, uint64_t *live)
{
    preader *r = &ld->r;
    uint64_t max = pr_left(r) / min_bytes;
    if (pr_count(r, max < SLOT_MAX_ID ? max : SLOT_MAX_ID, "a slot count", slots) ||
        pr_count(r, *slots, "a live count", live))
        return -1;
    return 0;
}

/* One end of a live relationship, as its node's block will hold it.  word
   packs the node's offset in its partition (high bits) above the segment
   key (type << 1 | direction, in the low key_bits). */
typedef struct half_edge {
    uint32_t rel, other, word;
} half_edge;

/* Nodes per partition of the adjacency build, at most 1 << PART_BITS: a
   partition's half edges, tallies and blocks stay in cache while they are
   sorted, counted and appended.  The node offset and the segment key
   share the 32-bit word (PACK_BITS), so a graph of very many relationship
   types gets smaller partitions.  A partition's half edges arrive in id
   order and are sorted by segment key, DIGIT_BITS a pass
   (sort_partition), which lists each node's in its block's order.  Tiny
   in test builds, so tests cross many partitions, sort in several passes
   and shrink the partitions with a dozen types. */
#ifdef STRATA_TESTING
#define PART_BITS 4
#define PACK_BITS 7
#define DIGIT_BITS 2
#else
#define PART_BITS 12
#define PACK_BITS 32
#define DIGIT_BITS 11
#endif

/* The partitions of the relationship section, sized before it is read
   so that load_rel counts each partition's half edges as it goes. */
static int adj_plan(loader *ld)
{
    uint64_t nkeys = 2 * (uint64_t)ld->count[STRATA_RELTYPE];
    uint32_t kb = 0;
    while (nkeys && (nkeys - 1) >> kb)
        kb++;
    if (kb > 32)
        return pr_fail(&ld->r, "%u relationship types are more than adjacency can tell apart",
                       ld->count[STRATA_RELTYPE]);
    ld->key_bits = kb;
    ld->part_bits = kb >= PACK_BITS ? 0 : PACK_BITS - kb < PART_BITS ? PACK_BITS - kb : PART_BITS;
    ld->nparts = (ld->node_slots >> ld->part_bits) + 1;
    ld->part = mem_calloc(mem_scratch(), mem_array_size(ld->nparts + 1, sizeof *ld->part));
    return ld->part ? 0 : pr_nomem(&ld->r, "building adjacency");
}

static void adj_plan_free(loader *ld)
{
    if (ld->part)
        mem_free(mem_scratch(), ld->part);
    ld->part = NULL;
}

/* Whether node id was read live (the relationships' endpoint check: a
   bitmap, not a descent into the node vector per endpoint). */
static bool node_is_live(const loader *ld, uint64_t id)
{
    return id < ld->node_slots && (ld->live_nodes[id / 8] >> (id % 8)) & 1;
}

static int load_node(loader *ld, uint64_t slot, hole_scratch *h, uint64_t *live)
{
    preader *r = &ld->r;
    uint64_t ls, id;
    if (pr_count(r, ld->nlabelsets, "a node's label set", &ls))
        return -1;
    if (ls == 0) {
        if (store_append_node(&ld->build, 0, NULL, &id) != 0)
            return pr_nomem(r, "allocating a node");
        h->bits[slot / 8] |= (unsigned char)(1u << (slot % 8));
        return 0;
    }
    prop_rec *rec;
    if (load_props(ld, "node", slot, &rec))
        return -1;
    if (store_append_node(&ld->build, (uint32_t)(ls - 1), rec, &id) != 0) {
        props_release(ld->m, &rec);
        return pr_nomem(r, "allocating a node");
    }
    (*live)++;
    ld->live_nodes[id / 8] |= (unsigned char)(1u << (id % 8));
    const catalog *c = ld->v->cat;
    size_t n = labelset_len(c, (uint32_t)(ls - 1));
    for (size_t i = 0; i < n; i++)
        if (token_bits_set(ld, &ld->tokens, labelset_at(c, (uint32_t)(ls - 1), i), id))
            return -1;
    return 0;
}

static int load_rel(loader *ld, uint64_t slot, hole_scratch *h, uint64_t *live)
{
    preader *r = &ld->r;
    uint64_t type, ends[2], id;
    if (pr_count(r, ld->count[STRATA_RELTYPE], "a relationship's type", &type))
        return -1;
    if (type == 0) {
        if (store_append_rel(&ld->build, 0, 0, 0, NULL, &id) != 0)
            return pr_nomem(r, "allocating a relationship");
        h->bits[slot / 8] |= (unsigned char)(1u << (slot % 8));
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        if (pr_varint(r, &ends[i]))
            return -1;
        if (!node_is_live(ld, ends[i]))
            return pr_fail(r, "relationship %llu: its %s node %llu does not exist",
                           (unsigned long long)slot, i ? "end" : "start",
                           (unsigned long long)ends[i]);
    }
    prop_rec *rec;
    if (load_props(ld, "relationship", slot, &rec))
        return -1;
    if (store_append_rel(&ld->build, (uint32_t)ends[0], (uint32_t)ends[1], (uint32_t)(type - 1),
                         rec, &id) != 0) {
        props_release(ld->m, &rec);
        return pr_nomem(r, "allocating a relationship");
    }
    (*live)++;
    ld->part[(ends[0] >> ld->part_bits) + 1]++;
    ld->part[(ends[1] >> ld->part_bits) + 1]++;
    return token_bits_set(ld, &ld->tokens, (uint32_t)(type - 1), id);
}

/* Every live relationship's two half edges into their nodes' partitions,
   read back from the relationship vector in id order: the partitions fill
   as nparts sequential streams, each in id order.  ld->part, which holds
   the counts load_rel took, becomes the partitions' starts. */
static void partition_half_edges(loader *ld, half_edge *half, uint64_t slots,
                                 const unsigned char *holes)
{
    uint64_t *fill = ld->part;
    for (uint64_t p = 0; p < ld->nparts; p++)
        fill[p + 1] += fill[p];
    /* fill[p] serves as partition p's cursor, ending at partition p + 1's
       start ... */
    pvec_seq seq;
    pvec_seq_init(&seq, &ld->v->st.rel_meta, ld->build.rel_meta.ops, ld->m);
    uint32_t pb = ld->part_bits, kb = ld->key_bits;
    uint64_t offset_mask = ((uint64_t)1 << pb) - 1;
    for (uint64_t id = 0; id < slots; id++) {
        if (holes[id / 8] & (1u << (id % 8)))
            continue;
        /* The vector is private and every leaf of a live slot exists: the
           descent cannot allocate. */
        const rel_meta *r = pvec_seq_mut(&seq, id);
        uint64_t out = (uint64_t)r->type << 1 | ADJ_OUT, in = (uint64_t)r->type << 1 | ADJ_IN;
        half[fill[r->start >> pb]++] = (half_edge){
            (uint32_t)id, r->end, (uint32_t)((r->start & offset_mask) << kb | out) };
        half[fill[r->end >> pb]++] = (half_edge){
            (uint32_t)id, r->start, (uint32_t)((r->end & offset_mask) << kb | in) };
    }
    /* ... so shifting them up one restores the starts. */
    memmove(fill + 1, fill, (size_t)ld->nparts * sizeof *fill);
    fill[0] = 0;
}

/* One partition's working set. */
typedef struct part_scratch {
    uint32_t degree[1 << PART_BITS], in[1 << PART_BITS], segments[1 << PART_BITS];
    uint64_t last_key[1 << PART_BITS];   /* key + 1 of the last segment counted */
    adj_block *block[1 << PART_BITS];
    uint64_t digit[1 << DIGIT_BITS];
} part_scratch;

/* Sorts a partition's n > 0 half edges by their word's low bits (the
   segment key), stably, so each node's half edges come in its block's
   order — segment key, then relationship id — with the nodes
   interleaved: least significant digit first, one counting pass per
   digit in cache, skipping a digit that every edge shares.  Returns the
   buffer holding the result, h or tmp. */
static half_edge *sort_partition(half_edge *h, half_edge *tmp, uint64_t n, uint32_t bits,
                                 uint64_t *count)
{
    const uint32_t mask = (1u << DIGIT_BITS) - 1;
    for (uint32_t shift = 0; shift < bits; shift += DIGIT_BITS) {
        memset(count, 0, sizeof(uint64_t) << DIGIT_BITS);
        for (uint64_t i = 0; i < n; i++)
            count[h[i].word >> shift & mask]++;
        if (count[h[0].word >> shift & mask] == n)
            continue;
        uint64_t sum = 0;
        for (uint32_t d = 0; d <= mask; d++) {
            uint64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            tmp[count[h[i].word >> shift & mask]++] = h[i];
        half_edge *t = h;
        h = tmp;
        tmp = t;
    }
    return h;
}

/* One partition's nodes, from first on, with their n half edges sorted
   by segment key: each node's degree and distinct
   segments counted, its block allocated once at its final size and set
   (in node order), then the entries appended in O(1) each. */
static int link_partition(loader *ld, part_scratch *ps, uint64_t first, uint64_t nodes,
                          const half_edge *h, uint64_t n)
{
    uint32_t kb = ld->key_bits;
    uint64_t key_mask = ((uint64_t)1 << kb) - 1;
    memset(ps->degree, 0, (size_t)nodes * sizeof *ps->degree);
    memset(ps->in, 0, (size_t)nodes * sizeof *ps->in);
    memset(ps->segments, 0, (size_t)nodes * sizeof *ps->segments);
    memset(ps->last_key, 0, (size_t)nodes * sizeof *ps->last_key);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)h[i].word >> kb, key = h[i].word & key_mask;
        if (ps->degree[k] == UINT32_MAX)
            return pr_fail(&ld->r, "node %llu has more than %u relationships",
                           (unsigned long long)(first + k), UINT32_MAX);
        ps->degree[k]++;
        ps->in[k] += (uint32_t)(key & 1);   /* ADJ_IN */
        if (ps->last_key[k] != key + 1) {
            ps->last_key[k] = key + 1;
            ps->segments[k]++;
        }
    }
    for (uint64_t k = 0; k < nodes; k++)
        if (ps->segments[k] > ADJ_MAX_SEGMENTS)
            return pr_fail(&ld->r, "node %llu has relationships of %u direction-type pairs "
                           "(at most %d)", (unsigned long long)(first + k), ps->segments[k],
                           ADJ_MAX_SEGMENTS);
    memset(ps->block, 0, (size_t)nodes * sizeof *ps->block);
    uint64_t k = 0;
    for (; k < nodes; k++)
        if (ps->degree[k] &&
            adj_reserve_segments(ld->m, &ps->block[k], ps->degree[k], ps->segments[k]) != 0)
            goto nomem;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t key = (uint32_t)(h[i].word & key_mask);
        adj_append(ps->block[(uint64_t)h[i].word >> kb], (int)(key & 1), key >> 1, h[i].rel,
                   h[i].other);
    }
    /* A hub's block becomes trees; every block then goes to its slot, in
       node order. */
    for (k = 0; k < nodes; k++) {
        if (!ps->block[k])
            continue;
        if (adj_bulk_done(ld->m, &ps->block[k]) != 0 ||
            store_set_adj(&ld->build, first + k, ps->block[k], ps->degree[k] - ps->in[k],
                          ps->in[k]) != 0)
            goto nomem;
        ps->block[k] = NULL;
    }
    return 0;
nomem:
    for (k = 0; k < nodes; k++)
        adj_release(ld->m, &ps->block[k]);
    return pr_nomem(&ld->r, "building adjacency");
}

/* The adjacency of every node, built once the relationships are in: the
   half edges are streamed into partitions of neighbouring nodes, and each
   partition is sorted by segment key and its blocks are counted,
   allocated once at their final size and filled while they sit in
   cache.  Linking one relationship at a time would touch two random
   blocks per relationship and grow them again and again; appending to
   blocks all over memory would miss the cache at every step.  Scratch:
   the half edges, 24 bytes per relationship, and a copy of the largest
   partition. */
static int link_all(loader *ld, uint64_t slots, const unsigned char *holes)
{
    uint64_t nhalf = 2 * ld->v->st.rel_live, nodes = store_node_slots(&ld->v->st), largest = 0;
    for (uint64_t p = 0; p < ld->nparts; p++)
        largest = ld->part[p + 1] > largest ? ld->part[p + 1] : largest;
    mem_ctx *s = mem_scratch();
    size_t half_bytes = mem_array_size(nhalf, sizeof(half_edge));
    size_t tmp_bytes = mem_array_size(largest, sizeof(half_edge));
    half_edge *half = mem_alloc(s, half_bytes);
    half_edge *tmp = half ? mem_alloc(s, tmp_bytes) : NULL;
    part_scratch *ps = tmp ? mem_alloc(s, sizeof *ps) : NULL;
    int rc = -1;
    if (!ps) {
        pr_nomem(&ld->r, "building adjacency");
        goto done;
    }
    mem_prefault(half, half_bytes);
    partition_half_edges(ld, half, slots, holes);
    store_builder_init(&ld->build, &ld->v->st, ld->m);
    for (uint64_t p = 0; p < ld->nparts; p++) {
        uint64_t first = p << ld->part_bits, n = ld->part[p + 1] - ld->part[p];
        if (n == 0)
            continue;
        uint64_t count = nodes - first < ((uint64_t)1 << ld->part_bits)
                             ? nodes - first : (uint64_t)1 << ld->part_bits;
        const half_edge *h = sort_partition(half + ld->part[p], tmp, n, ld->key_bits, ps->digit);
        if (link_partition(ld, ps, first, count, h, n))
            goto done;
    }
    rc = 0;
done:
    if (ps)
        mem_free_sized(s, ps, sizeof *ps);
    if (tmp)
        mem_free_sized(s, tmp, tmp_bytes);
    if (half)
        mem_free_sized(s, half, half_bytes);
    return rc;
}

/* A section of slots: nodes or relationships. */
typedef struct slot_section {
    int sec;
    const char *plural;
    int (*load_one)(loader *ld, uint64_t slot, hole_scratch *h, uint64_t *live);
    int (*own)(store *s, mem_ctx *m, uint64_t id);
    void (*release)(store *s, mem_ctx *m, uint64_t id);
    /* run once every slot is in (or NULL) */
    int (*finish)(loader *ld, uint64_t slots, const unsigned char *holes);
    bool rels;
} slot_section;

static void release_node(store *s, mem_ctx *m, uint64_t id) { store_node_free(s, m, id, NULL, NULL); }
static void release_rel(store *s, mem_ctx *m, uint64_t id) { store_rel_free(s, m, id, NULL); }

static const slot_section node_section = {SEC_NODE, "nodes", load_node, store_node_own,
                                          release_node, NULL, false};
static const slot_section rel_section = {SEC_RELS, "relationships", load_rel, store_rel_own,
                                         release_rel, link_all, true};

/* Every slot in id order, deleted ones included so that ids round-trip,
   then the deleted ones freed in the saved free-list order. */
static int load_slots(loader *ld, const slot_section *k)
{
    preader *r = open_section(ld, k->sec);
    store *st = &ld->v->st;
    uint64_t slots, live, seen = 0;
    hole_scratch h = { 0 };
    int rc = -1;
    if (load_slot_counts(ld, 1, &slots, &live) || holes_new(ld, slots, slots - live, &h))
        goto cleanup;
    if (k->rels ? token_bits_new(ld, &ld->v->rel_types, ld->count[STRATA_RELTYPE], &ld->tokens)
                : token_bits_new(ld, &ld->v->labels, ld->count[STRATA_LABEL], &ld->tokens))
        goto cleanup;
    if (k->rels && adj_plan(ld))
        goto cleanup;
    if (!k->rels) {
        ld->live_bytes = (size_t)(slots / 8 + 1);
        if (!(ld->live_nodes = mem_calloc(mem_scratch(), ld->live_bytes))) {
            pr_nomem(r, "reading the nodes");
            goto cleanup;
        }
        ld->node_slots = slots;
    }
    store_builder_init(&ld->build, st, ld->m);
    for (uint64_t id = 0; id < slots; id++)
        if (k->load_one(ld, id, &h, &seen))
            goto cleanup;
    if (seen != live) {
        pr_fail(r, "%llu %s are live; the section said %llu", (unsigned long long)seen,
                k->plural, (unsigned long long)live);
        goto cleanup;
    }
    if (token_bits_finish(ld, &ld->tokens))
        goto cleanup;
    if (k->finish && k->finish(ld, slots, h.bits))
        goto cleanup;
    if (load_free_list(ld, slots, slots - live, h.bits, h.ids))
        goto cleanup;
    /* Freed last to first, so the last freed (the list's head) is reused
       first, as in the saved graph. */
    for (uint64_t i = slots - live; i-- > 0;) {
        if (k->own(st, ld->m, h.ids[i]) != 0) {
            pr_nomem(r, "freeing a deleted slot");
            goto cleanup;
        }
        k->release(st, ld->m, h.ids[i]);
    }
    rc = close_section(ld);
cleanup:
    token_bits_free(&ld->tokens);
    adj_plan_free(ld);
    holes_free(&h);
    return rc;
}

/* One index definition, checked against the tokens. */
static int load_index_def(loader *ld, uint32_t next_id, index_def *d)
{
    preader *r = &ld->r;
    uint64_t id, token, key;
    uint8_t kind, on_rels, nkeys;
    const char *name;
    size_t name_len;
    memset(d, 0, sizeof *d);
    if (pr_varint(r, &id) || pr_u8(r, &kind) || pr_u8(r, &on_rels) || pr_varint(r, &token) ||
        pr_u8(r, &nkeys))
        return -1;
    if (id >= next_id || idxset_find(ld->v->indexes, (uint32_t)id) >= 0)
        return pr_fail(r, "index id %llu repeats or is not below the next id %u",
                       (unsigned long long)id, next_id);
    if (kind > IDX_UNIQUE || on_rels > 1 || nkeys < 1 || nkeys > IDX_MAX_KEYS)
        return pr_fail(r, "index %llu: kind %u, entity flag %u or key count %u is invalid",
                       (unsigned long long)id, kind, on_rels, nkeys);
    if (token >= ld->count[on_rels ? STRATA_RELTYPE : STRATA_LABEL])
        return pr_fail(r, "index %llu: token %llu is undefined", (unsigned long long)id,
                       (unsigned long long)token);
    *d = (index_def){ .id = (uint32_t)id, .kind = kind, .on_rels = on_rels, .nkeys = nkeys,
                      .token = (uint32_t)token };
    for (uint8_t k = 0; k < nkeys; k++) {
        if (pr_varint(r, &key))
            return -1;
        bool repeated = false;
        for (uint8_t j = 0; j < k; j++)
            repeated |= d->keys[j] == key;
        if (key >= ld->count[STRATA_KEY] || repeated)
            return pr_fail(r, "index %llu: property key %llu is undefined or repeated",
                           (unsigned long long)id, (unsigned long long)key);
        d->keys[k] = (uint32_t)key;
    }
    if (pr_string(r, IDX_NAME_MAX - 1, "an index name length", &name, &name_len))
        return -1;
    if (memchr(name, '\0', name_len) || !value_utf8_valid(name, name_len))
        return pr_fail(r, "index %llu: its name is not UTF-8 text", (unsigned long long)id);
    memcpy(d->name, name, name_len);
    d->name[name_len] = '\0';
    if (name_len && idxset_find_name(ld->v->indexes, d->name) >= 0)
        return pr_fail(r, "index %llu: the name %s is taken by another index",
                       (unsigned long long)id, d->name);
    if (idxset_find_same(ld->v->indexes, d) >= 0)
        return pr_fail(r, "index %llu repeats another index's definition",
                       (unsigned long long)id);
    return 0;
}

/* An index's entries, gathered in id order for a bulk build. */
typedef struct entry_list {
    pbtree_entry *e;
    uint64_t n, cap;
} entry_list;

static void entry_list_free(entry_list *l)
{
    for (uint64_t i = 0; i < l->n; i++)
        value_release(&l->e[i].key);
    if (l->e)
        mem_free(mem_scratch(), l->e);
    *l = (entry_list){ 0 };
}

static int entry_list_push(entry_list *l, value key, uint64_t id)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 1024;
        pbtree_entry *e = mem_realloc(mem_scratch(), l->e, mem_array_size(cap, sizeof *e));
        if (!e)
            return -1;
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = (pbtree_entry){ key, id };
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const pbtree_entry *x = a, *y = b;
    return pbtree_entry_cmp(&x->key, x->id, &y->key, y->id);
}

/* In a unique index's sorted entries, the duplicate a build inserting in
   id order meets first: the smallest second id of any key, and that key's
   first id.  false when every key is held once. */
static bool first_duplicate(const entry_list *l, uint64_t *first, uint64_t *second)
{
    bool found = false;
    for (uint64_t i = 1; i < l->n; i++) {
        if (value_order(&l->e[i - 1].key, &l->e[i].key) != 0)
            continue;
        uint64_t g = i - 1;   /* the group's first entry */
        while (g > 0 && value_order(&l->e[g - 1].key, &l->e[g].key) == 0)
            g--;
        if (g == i - 1 && (!found || l->e[i].id < *second)) {
            *first = l->e[g].id;
            *second = l->e[i].id;
            found = true;
        }
    }
    return found;
}

/* Index d over what the graph now holds, built in bulk: every member's
   key gathered in id order, sorted (a no-op check when the keys already
   ascend with the ids), and the tree built bottom-up — not one insert
   and one descent per entry. */
static int build_one_index(loader *ld, const index_def *d)
{
    entry_list l = { 0 };
    level_stack *ls = NULL;
    int rc = -1;
    for (uint64_t id = idx_next_member(ld->v, d, 0); id != UINT64_MAX;
         id = idx_next_member(ld->v, d, id + 1)) {
        value key;
        int r = idx_entity_key(ld->v, d, ld->m, id, &key);
        if (r < 0 || (r > 0 && entry_list_push(&l, key, id) != 0)) {
            if (r > 0)
                value_release(&key);
            pr_nomem(&ld->r, "rebuilding an index");
            goto done;
        }
    }
    bool sorted = true;
    for (uint64_t i = 1; i < l.n && sorted; i++)
        sorted = cmp_entry(&l.e[i - 1], &l.e[i]) < 0;
    if (!sorted)
        qsort(l.e, l.n, sizeof *l.e, cmp_entry);
    uint64_t first = 0, second = 0;
    if (d->kind == IDX_UNIQUE && first_duplicate(&l, &first, &second)) {
        /* The data do not fit the index. */
        pr_fail(&ld->r, "index %u: cannot create the unique index: %s %llu and %llu have the "
                "same value", d->id, d->on_rels ? "relationships" : "nodes",
                (unsigned long long)first, (unsigned long long)second);
        goto done;
    }
    if (lstack_build(&ls, ld->m, l.e, l.n, idx_hashed(d)) != 0) {
        pr_nomem(&ld->r, "rebuilding an index");
        goto done;
    }
    if (idxset_add_as(ld->m, &ld->v->indexes, d, ls) != 0) {
        pr_nomem(&ld->r, "adding an index");
        goto done;
    }
    rc = 0;
done:
    entry_list_free(&l);
    return rc;
}

static int load_indexes(loader *ld)
{
    preader *r = open_section(ld, SEC_INDX);
    uint64_t next_id, n;
    if (pr_count(r, UINT32_MAX, "the next index id", &next_id) ||
        pr_count(r, pr_left(r) / 6, "an index count", &n))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        index_def d;
        if (load_index_def(ld, (uint32_t)next_id, &d) || build_one_index(ld, &d))
            return -1;
    }
    if (next_id != idxset_next_id(ld->v->indexes) &&
        idxset_set_next_id(ld->m, &ld->v->indexes, (uint32_t)next_id) != 0)
        return pr_nomem(r, "restoring the index ids");
    return close_section(ld);
}

/* The relationship statistics are not saved: recomputed from the loaded
   store in one pass over the nodes (core/stats_maint.h), they cannot
   disagree with it, and the file format stays as it was. */
static int load_stats(loader *ld)
{
    if (stats_compute(ld->v->cat, &ld->v->st, ld->m, &ld->v->stats) == 0)
        return 0;
    return pr_nomem(&ld->r, "computing the relationship statistics (or a label or type id "
                    "beyond the most they count)");
}

static int load_graph(loader *ld)
{
    if (strata_graph_new(&ld->g) != STRATA_OK) {
        pr_init(&ld->r, ld->file, 0, 0, ld->m, "TOKN");
        return pr_nomem(&ld->r, "creating the graph");
    }
    ld->v = ld->g->current;
    ld->m = ld->g->m;
    /* Millions of allocations from the graph's context, on this thread
       alone: its fast path (storage/mem.h). */
    mem_binding bound = mem_ctx_bind(ld->m);
    int rc = load_tokens(ld) || load_labelsets(ld) || load_slots(ld, &node_section) ||
                     load_slots(ld, &rel_section) || load_indexes(ld) || load_stats(ld)
                 ? -1
                 : 0;
    mem_ctx_unbind(&bound);
    return rc;
}

/* ---- load: the file ------------------------------------------------------------- */

static strata_status os_error(int err, const char *doing, const char *path, char *msg,
                              size_t cap)
{
    char buf[128];
    snprintf(msg, cap, "%s: %s: %s", path, doing, strerror_r(err, buf, sizeof buf));
    return err == ENOENT ? STRATA_ENOTFOUND : STRATA_EIO;
}

/* The whole file into scratch memory (*size bytes, at least one allocated). */
static strata_status read_file(const char *path, unsigned char **out, size_t *size, char *msg,
                               size_t cap)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
       writer, forever, before the type check below could refuse it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return os_error(errno, "cannot open", path, msg, cap);
    struct stat st;
    strata_status s = STRATA_OK;
    if (fstat(fd, &st) != 0) {
        s = os_error(errno, "cannot stat", path, msg, cap);
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, cap, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
        s = STRATA_EIO;
        goto done;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        s = os_error(errno, "cannot read", path, msg, cap);
        goto done;
    }
    *size = (size_t)st.st_size;
    if (!(*out = mem_alloc(mem_scratch(), *size))) {
        snprintf(msg, cap, "%s: out of memory reading %zu bytes", path, *size);
        s = STRATA_ENOMEM;
        goto done;
    }
    mem_prefault(*out, *size);
    size_t got = 0;
    while (got < *size) {
        ssize_t k = read(fd, *out + got, *size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                snprintf(msg, cap, "%s: the file shrank while it was read", path);
            s = k == 0 ? STRATA_EIO : os_error(errno, "cannot read", path, msg, cap);
            mem_free(mem_scratch(), *out);
            *out = NULL;
            goto done;
        }
        got += (size_t)k;
    }
done:
    close(fd);
    return s;
}

strata_status persist_load_bytes(const unsigned char *bytes, size_t size, strata_graph **out,
                                 char *err, size_t errlen)
{
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.file = bytes;
    ld.size = size;
    ld.m = mem_scratch();
    *out = NULL;
    int rc = load_frame(&ld) == 0 && load_graph(&ld) == 0 ? 0 : -1;
    if (ld.live_nodes)
        mem_free(mem_scratch(), ld.live_nodes);
    if (rc == 0) {
        *out = ld.g;
        if (errlen)
            err[0] = '\0';
        return STRATA_OK;
    }
    strata_graph_free(&ld.g);
    if (errlen)
        snprintf(err, errlen, "%s", ld.r.err);
    return ld.r.status;
}

strata_status strata_load_ex(const char *path, strata_graph **out, char *err, size_t errlen)
{
    char msg[PCODEC_ERR_MAX + 256] = "", why[PCODEC_ERR_MAX];
    strata_status s;
    if (out)
        *out = NULL;
    if (!path || !out) {
        snprintf(msg, sizeof msg, "strata_load: %s is NULL", path ? "out" : "path");
        s = STRATA_EINVAL;
        goto done;
    }
    unsigned char *file;
    size_t size = 0;
    s = read_file(path, &file, &size, msg, sizeof msg);
    if (s)
        goto done;
    s = persist_load_bytes(file, size, out, why, sizeof why);
    if (s)
        snprintf(msg, sizeof msg, "%s: %s", path, why);
    mem_free(mem_scratch(), file);
done:
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return s;
}

strata_status strata_load(const char *path, strata_graph **out)
{
    return strata_load_ex(path, out, NULL, 0);
}
