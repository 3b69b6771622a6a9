/* Stopping a long run cleanly.  TERM, INT, HUP, USR1 and USR2 (what
 * mpirun, Slurm's scancel and time-limit warnings and terminals send) only
 * ask for a stop: the run ends after the pass in progress, with the work
 * done kept for --resume.  A second signal changes nothing; only SIGKILL
 * ends a run at once, and even then the last checkpoint stands. */
#ifndef TOOL_STOP_SIGNALS_H
#define TOOL_STOP_SIGNALS_H

#include <mpi.h>

/* Holds the stop signals back (blocked, so pending) while MPI starts: one
 * that arrives before the handlers would end the rank at once, with nothing
 * kept.  The mask survives the heap's re-exec and reaches MPI's threads, so
 * the signal later goes to the main thread's handler. */
int tool_stop_signals_hold(void);

/* Installs the handlers (restarting interrupted system calls, so I/O in
 * progress completes), ignores SIGPIPE, then lets held signals in.  -1
 * with errno when the system refuses. */
int tool_stop_signals_install(void);

/* Local: the first stop signal this process received, or 0. */
int tool_stop_requested(void);

/* Collective: the signal that stopped the run, as any rank got it, or 0. */
int tool_stop_signal_agreed(MPI_Comm comm);

/* "SIGTERM" and so on. */
const char *tool_signal_name(int signal_number);

#endif
