/* The start and the end of a tool's run under MPI, for both tools. */
#ifndef TOOL_SESSION_H
#define TOOL_SESSION_H

/* Starts MPI and takes HDF5's error printing over (the tools report each
 * error once, themselves).  Returns TOOL_EXIT_OK, or an exit status after
 * saying why on stderr (MPI is then finalized already). */
int tool_session_start(const char *program, int *argc, char ***argv, int *rank);

/* Finalizes MPI.  Returns exit_code, or an error status where finalizing
 * fails after a run that succeeded. */
int tool_session_end(const char *program, int rank, int exit_code);

#endif
