/* The cleanup watchdog: a child that arms it and then waits forever (as a
 * rank stuck in a collective call) exits with status 1 after the timeout,
 * having said so, removed the files and printed its last words (--json's
 * object) on stdout; one that disarms it in time is left alone. */
#define _DEFAULT_SOURCE /* mkdtemp, setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup_watchdog.h"
#include "test_util.h"

static int exists(const char *path) { return access(path, F_OK) == 0; }

int main(void) {
  char dir[] = "/tmp/xpose-watchdog-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char partial[256], record[256];
  snprintf(partial, sizeof partial, "%s/out.h5.xpose-partial", dir);
  snprintf(record, sizeof record, "%s/out.h5.xpose-resume", dir);
  setenv("XPOSE_ABORT_TIMEOUT", "1", 1);
  for (int stuck = 0; stuck < 2; stuck++) {
    fclose(fopen(partial, "w"));
    fclose(fopen(record, "w"));
    int out[2];
    if (pipe(out) != 0) return 1;
    const pid_t child = fork();
    if (child == 0) {
      dup2(out[1], STDOUT_FILENO);
      const char *const remove[] = {partial, NULL, record};
      tool_watchdog_arm(remove, 3, "{\"status\": \"error\"}");
      if (stuck)
        for (;;) pause(); /* a collective call that never returns */
      tool_watchdog_disarm();
      sleep(2);
      _exit(0);
    }
    close(out[1]);
    char said[64] = "";
    const ssize_t got = read(out[0], said, sizeof said - 1);
    close(out[0]);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(
        strcmp(said, stuck ? "{\"status\": \"error\"}\n" : "") == 0 && got == (ssize_t)strlen(said),
        "stuck %d: stdout \"%s\"", stuck, said);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == (stuck ? 1 : 0), "stuck %d: status %d",
           stuck, status);
    EXPECT(exists(partial) == !stuck && exists(record) == !stuck, "stuck %d: files", stuck);
  }
  unlink(partial);
  unlink(record);
  rmdir(dir);
  if (test_failures) return 1;
  printf("cleanup watchdog: ok\n");
  return 0;
}
