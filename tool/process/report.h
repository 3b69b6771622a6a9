/* What the tools print: errors once (rank 0), library messages, progress
 * on long runs, verbose details.  Results go to stdout, the rest to stderr. */
#ifndef TOOL_REPORT_H
#define TOOL_REPORT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TOOL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TOOL_PRINTF(fmt, args)
#endif

/* Call once after MPI_Init; installs the library's log handler. */
void tool_report_setup(const char *program, int rank, int quiet, int verbose);

/* Rank 0 only. "program: error: ..." on stderr. */
void tool_report_error(const char *format, ...) TOOL_PRINTF(1, 2);
/* Rank 0 only. "program: warning: ..." on stderr, unless quiet. */
void tool_report_warning(const char *format, ...) TOOL_PRINTF(1, 2);
/* Rank 0 only. "program: note: ..." on stderr, unless quiet. */
void tool_report_note(const char *format, ...) TOOL_PRINTF(1, 2);
/* Rank 0 only. A result line on stdout, unless quiet. */
void tool_report_result(const char *format, ...) TOOL_PRINTF(1, 2);
/* Rank 0 only. A detail on stderr with --verbose. */
void tool_report_verbose(const char *format, ...) TOOL_PRINTF(1, 2);

/* --json: the run's summary as one JSON object on stdout (rank 0), in
 * place of the result line; errors still go to stderr as well. */
typedef struct {
  char text[65536];
  size_t used;
  int fresh; /* just after '{' or '[': no comma before what comes */
} tool_json;

void tool_json_begin(tool_json *j);
void tool_json_string(tool_json *j, const char *key, const char *value);
void tool_json_int(tool_json *j, const char *key, long long value);
void tool_json_number(tool_json *j, const char *key, double value);
void tool_json_bool(tool_json *j, const char *key, int value);
/* An array of objects: "key": [{...}, {...}], each object's members given
 * between tool_json_object_begin and tool_json_object_end. */
void tool_json_array_begin(tool_json *j, const char *key);
void tool_json_object_begin(tool_json *j);
void tool_json_object_end(tool_json *j);
void tool_json_array_end(tool_json *j);
/* Closes the object: its one line, without the newline (an object too
 * long for the buffer is replaced by one that says so, never cut). */
const char *tool_json_end(tool_json *j);
/* Rank 0: closes the object and prints it on one line. */
void tool_json_print(tool_json *j);
/* The same from whichever rank calls it (one about to abort the job). */
void tool_json_print_here(tool_json *j);

/* The last error reported, for the JSON summary of a failed run. */
const char *tool_report_last_error(void);

/* Starts the clock the progress line measures rates against; passes_before
 * were done by an earlier run (resumed), and do not count towards the rate.
 * The lines begin with `what` (the dataset and move; "" for none). */
void tool_report_progress_begin(int64_t passes_before, const char *what);

/* Progress callback (see xio_progress_fn): after a couple of seconds, rank 0
 * shows passes, percentage, rate and time left on stderr, redrawn in place
 * on a terminal and every 10 s otherwise (batch logs). */
void tool_report_progress(int64_t passes_done, int64_t passes, uint64_t bytes_done,
                          uint64_t bytes_total, void *user_data);

#endif
