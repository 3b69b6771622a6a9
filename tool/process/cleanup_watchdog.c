#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "cleanup_watchdog.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_PATHS = 6, PATH_BYTES = 4400, LAST_WORDS_BYTES = 16384 };

/* What the handler needs, set up before the alarm: it may only make
 * async-signal-safe calls. */
static char paths[MAX_PATHS][PATH_BYTES];
static int path_count;
static char message[256];
static char last_words[LAST_WORDS_BYTES]; /* "" for none; a whole line or nothing */

static void on_alarm(int signal_number) {
  (void)signal_number;
  ssize_t written = write(STDERR_FILENO, message, strlen(message));
  for (int i = 0; i < path_count; i++) (void)unlink(paths[i]);
  if (last_words[0]) written = write(STDOUT_FILENO, last_words, strlen(last_words));
  (void)written; /* nothing else to do about it */
  _exit(1);
}

void tool_watchdog_arm(const char *const *remove, int count, const char *words) {
  const char *text = getenv("XPOSE_ABORT_TIMEOUT");
  const long seconds = text && *text && atol(text) > 0 ? atol(text) : 120;
  snprintf(message, sizeof message,
           "xpose: cleaning up after the run's end did not finish in %ld s (the ranks are out "
           "of step): ending it\n",
           seconds);
  const int fits =
      words && (size_t)snprintf(last_words, sizeof last_words, "%s\n", words) < sizeof last_words;
  if (!fits) last_words[0] = '\0';
  path_count = 0;
  for (int i = 0; i < count && path_count < MAX_PATHS; i++)
    if (remove[i] && remove[i][0]) snprintf(paths[path_count++], PATH_BYTES, "%s", remove[i]);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_alarm;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGALRM, &action, NULL) == 0) alarm((unsigned)seconds);
}

void tool_watchdog_disarm(void) { alarm(0); }
