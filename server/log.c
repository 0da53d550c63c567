/* The server's log (log.h). */
#include "server/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_out;
static bool log_quiet;

void log_setup(FILE *out, bool quiet)
{
    log_out = out;
    log_quiet = quiet;
}

void log_line(const char *fmt, ...)
{
    if (log_quiet)
        return;
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    FILE *f = log_out ? log_out : stderr;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_lock);
    fprintf(f, "%s ", stamp);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
    pthread_mutex_unlock(&log_lock);
    va_end(ap);
}
