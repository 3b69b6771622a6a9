/* The last word on a run that failed or stopped.  Its cleanup (closing
 * the files, the barrier before the partial is removed) makes collective
 * HDF5 and MPI calls; where the failure left the ranks out of step (a
 * failed HDF5 call on one rank leaves the others' metadata differing, and
 * its next collective unmatched), those wait forever.  Armed before the
 * cleanup, the watchdog ends this rank once the time is up, removing what
 * the run would have removed; mpirun then ends the other ranks. */
#ifndef TOOL_CLEANUP_WATCHDOG_H
#define TOOL_CLEANUP_WATCHDOG_H

/* Local.  After XPOSE_ABORT_TIMEOUT seconds (default 120: xio_agree's
 * wait) says so on stderr, writes `last_words` (NULL: nothing; --json's
 * object, which the exit would otherwise lose) as a line on stdout,
 * unlinks the `count` paths in `remove` (NULL ones skipped), and exits
 * with status 1.  Everything is copied now. */
void tool_watchdog_arm(const char *const *remove, int count, const char *last_words);

/* Local.  The cleanup finished: nothing happens. */
void tool_watchdog_disarm(void);

#endif
