#define _POSIX_C_SOURCE 200809L /* fileno */
#include "report.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_error.h"
#include "size.h"
#include "xpose.h"

static struct {
  const char *program;
  int rank, quiet, verbose, tty;
  double start, last_print, delay;
  int progress_shown;
  int64_t passes_before; /* done by an earlier run, resumed */
  char what[700];        /* "/tas (2 of 3), move 1 of 2: ", or "" */
} report = {"xpose", 0, 0, 0, 0, 0.0, 0.0, 2.0, 0, 0, ""};

/* The library's first error on this rank: it says why a call failed, and
 * joins the tool's one error message rather than a line from every rank. */
static char library_error[512];

static void library_log(xpose_log_level level, const char *message, void *user_data) {
  (void)user_data;
  static const char *const names[] = {"error", "warning", "info", "debug"};
  if (level == XPOSE_LOG_ERROR && !library_error[0]) {
    /* without the source location the library puts first ("src/x.c:12: ") */
    const char *text =
        strstr(message, ".c:") && strstr(message, ": ") ? strstr(message, ": ") + 2 : message;
    snprintf(library_error, sizeof library_error, "%s", text);
  }
  if (level == XPOSE_LOG_ERROR ? !report.verbose : level > XPOSE_LOG_WARN && !report.verbose)
    return;
  fprintf(stderr, "%s[rank %d]: %s: %s\n", report.program, report.rank, names[level], message);
}

void tool_report_setup(const char *program, int rank, int quiet, int verbose) {
  report.program = program;
  xio_set_program_name(program);
  report.rank = rank;
  report.quiet = quiet;
  report.verbose = verbose;
  report.tty = isatty(fileno(stderr));
  const char *delay = getenv("XPOSE_PROGRESS_DELAY"); /* seconds before the first line */
  if (delay && *delay) report.delay = atof(delay);
  report.start = report.last_print = MPI_Wtime();
  xpose_set_log_handler(library_log, NULL);
}

static void vprint(FILE *stream, const char *prefix, const char *format, va_list args) {
  fprintf(stream, "%s: %s", report.program, prefix);
  vfprintf(stream, format, args);
  fputc('\n', stream);
  fflush(stream);
}

#define REPORT_BODY(condition, stream, prefix) \
  if (!(condition)) return;                    \
  va_list args;                                \
  va_start(args, format);                      \
  vprint(stream, prefix, format, args);        \
  va_end(args)

static char last_error[1200];

void tool_report_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  int used = vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  if (library_error[0] && used >= 0 && (size_t)used < sizeof last_error &&
      !strstr(last_error, library_error))
    snprintf(last_error + used, sizeof last_error - (size_t)used, " (%s)", library_error);
  library_error[0] = '\0';
  if (report.rank != 0) return;
  fprintf(stderr, "%s: error: %s\n", report.program, last_error);
  fflush(stderr);
}

const char *tool_report_last_error(void) { return last_error; }

/* ---- JSON ---- */

static void json_append(tool_json *j, const char *format, ...) TOOL_PRINTF(2, 3);
static void json_append(tool_json *j, const char *format, ...) {
  if (j->used >= sizeof j->text) return;
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(j->text + j->used, sizeof j->text - j->used, format, args);
  va_end(args);
  if (n > 0) j->used += (size_t)n;
}

static void json_key(tool_json *j, const char *key) {
  json_append(j, "%s\"%s\": ", j->fresh ? "" : ", ", key);
  j->fresh = 0;
}

void tool_json_begin(tool_json *j) {
  j->used = 0;
  json_append(j, "{");
  j->fresh = 1;
}

void tool_json_array_begin(tool_json *j, const char *key) {
  json_key(j, key);
  json_append(j, "[");
  j->fresh = 1;
}

void tool_json_object_begin(tool_json *j) {
  json_append(j, "%s{", j->fresh ? "" : ", ");
  j->fresh = 1;
}

void tool_json_object_end(tool_json *j) {
  json_append(j, "}");
  j->fresh = 0;
}

void tool_json_array_end(tool_json *j) {
  json_append(j, "]");
  j->fresh = 0;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, surrogates or code points past U+10FFFF), or 0. */
static int utf8_length(const unsigned char *p) {
  if (p[0] < 0x80) return 1;
  const int n = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
                : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                               : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
    return 0;
  return n;
}

/* File names are bytes: one that is not UTF-8 keeps each stray byte as
 * the escape \udcXX (Python's surrogateescape, PEP 383), so the object
 * stays valid JSON and the name can be recovered (os.fsencode). */
void tool_json_string(tool_json *j, const char *key, const char *value) {
  json_key(j, key);
  json_append(j, "\"");
  for (const unsigned char *p = (const unsigned char *)value; *p;) {
    const int n = utf8_length(p);
    if (*p == '"' || *p == '\\')
      json_append(j, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      json_append(j, "\\u%04x", *p);
    else if (n == 0)
      json_append(j, "\\udc%02x", *p);
    else
      json_append(j, "%.*s", n, (const char *)p);
    p += n ? n : 1;
  }
  json_append(j, "\"");
}

void tool_json_int(tool_json *j, const char *key, long long value) {
  json_key(j, key);
  json_append(j, "%lld", value);
}

void tool_json_number(tool_json *j, const char *key, double value) {
  json_key(j, key);
  json_append(j, "%.6g", value);
}

void tool_json_bool(tool_json *j, const char *key, int value) {
  json_key(j, key);
  json_append(j, "%s", value ? "true" : "false");
}

void tool_json_print(tool_json *j) {
  if (report.rank == 0) tool_json_print_here(j);
}

const char *tool_json_end(tool_json *j) {
  json_append(j, "}");
  if (j->used >= sizeof j->text)
    return "{\"status\": \"error\", \"message\": \"summary too long\"}";
  return j->text;
}

void tool_json_print_here(tool_json *j) {
  fputs(tool_json_end(j), stdout);
  fputc('\n', stdout);
  fflush(stdout);
}
void tool_report_warning(const char *format, ...) {
  REPORT_BODY(report.rank == 0 && !report.quiet, stderr, "warning: ");
}
void tool_report_note(const char *format, ...) {
  REPORT_BODY(report.rank == 0 && !report.quiet, stderr, "note: ");
}
void tool_report_result(const char *format, ...) {
  REPORT_BODY(report.rank == 0 && !report.quiet, stdout, "");
}
void tool_report_verbose(const char *format, ...) {
  REPORT_BODY(report.rank == 0 && report.verbose, stderr, "");
}

void tool_report_progress_begin(int64_t passes_before, const char *what) {
  report.start = report.last_print = MPI_Wtime();
  report.passes_before = passes_before;
  report.progress_shown = 0; /* each dataset and move: its own lines, from its start */
  snprintf(report.what, sizeof report.what, "%s%s", what, what[0] ? ": " : "");
}

void tool_report_progress(int64_t passes_done, int64_t passes, uint64_t bytes_done,
                          uint64_t bytes_total, void *user_data) {
  (void)user_data;
  if (report.rank != 0 || report.quiet) return;
  const double now = MPI_Wtime(), elapsed = now - report.start;
  const int last = passes_done == passes;
  /* Nothing for short runs; the first line after 2 s, then a redraw twice a
   * second on a terminal or a new line every 10 s in a log, and the end. */
  if (elapsed < report.delay || (last && !report.progress_shown)) return;
  if (!last && report.progress_shown && now - report.last_print < (report.tty ? 0.5 : 10.0)) return;
  char done[32], total[32];
  tool_format_bytes(bytes_done, done, sizeof done);
  tool_format_bytes(bytes_total, total, sizeof total);
  const double fraction = bytes_total ? (double)bytes_done / (double)bytes_total : 1.0;
  const double before = passes ? (double)report.passes_before / (double)passes : 0.0;
  const double rate = fraction > before ? (fraction - before) / elapsed : 0.0; /* per second */
  const double left = rate > 0 ? (1.0 - fraction) / rate : 0.0;
  const double speed = 2.0 * rate * (double)bytes_total; /* bytes read and written per second */
  fprintf(stderr, "%s%s: %spass %lld/%lld, %3.0f%% (%s of %s), %.2f %s, %.0f s left%s",
          report.tty ? "\r" : "", report.program, report.what, (long long)passes_done,
          (long long)passes, 100.0 * fraction, done, total,
          speed >= 1e9 ? speed / 1e9 : speed / 1e6, speed >= 1e9 ? "GB/s" : "MB/s", left,
          report.tty && !last ? "   " : "\n");
  fflush(stderr);
  report.last_print = now;
  report.progress_shown = 1;
}
