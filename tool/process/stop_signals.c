#define _POSIX_C_SOURCE 200809L
#include "stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

static volatile sig_atomic_t first_signal;

static void request_stop(int signal_number) {
  if (!first_signal) first_signal = signal_number;
}

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

static int stop_signal_set(sigset_t *set) {
  sigemptyset(set);
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
    if (sigaddset(set, stop_signals[i]) != 0) return -1;
  return 0;
}

int tool_stop_signals_hold(void) {
  sigset_t set;
  return stop_signal_set(&set) == 0 && pthread_sigmask(SIG_BLOCK, &set, NULL) == 0 ? 0 : -1;
}

int tool_stop_signals_install(void) {
  struct sigaction action = {0};
  action.sa_handler = request_stop;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
    if (sigaction(stop_signals[i], &action, NULL) != 0) return -1;
  /* A closed stdout (`xpose ... | head`) fails the print, not the run: the
   * output may already be published, and the exit status must say so. */
  struct sigaction ignore = {0};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigset_t held;
  if (sigaction(SIGPIPE, &ignore, NULL) != 0 || stop_signal_set(&held) != 0) return -1;
  return pthread_sigmask(SIG_UNBLOCK, &held, NULL) == 0 ? 0 : -1;
}

int tool_stop_requested(void) { return first_signal; }

const char *tool_signal_name(int signal_number) {
  switch (signal_number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
  }
}

int tool_stop_signal_agreed(MPI_Comm comm) {
  int mine = tool_stop_requested(), any = 0;
  return MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) == MPI_SUCCESS ? any : 0;
}
