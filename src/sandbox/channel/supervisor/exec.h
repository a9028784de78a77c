// Commands: each runs below its own shim, a subreaper that follows all of its processes.
#ifndef STN_SUPERVISOR_EXEC_H
#define STN_SUPERVISOR_EXEC_H
#include <stdint.h>
#include <sys/types.h>

#include "frames.h"

// One command: its shim and main process, the pipes still open, and what is known of its end.
struct exec_op {
  uint32_t id;
  pid_t shim, main;
  int out, err, info;
  uint8_t info_buf[8];
  int info_got;
  int status, status_known, killed, lost;
  struct exec_op *next;
};

// The commands running (or with output still to send), newest first.
extern struct exec_op *execs;
// /dev/null, the stdin of every command; the self-pipe SIGCHLD writes to (both opened by main).
extern int null_fd;
extern int child_pipe[2];

void do_exec(uint32_t id, struct in *in);
void do_kill(uint32_t id);
void do_signal(uint32_t id, struct in *in);
// Sends EXIT once the command has ended and both of its pipes are closed, and forgets it.
void maybe_exit(struct exec_op *x);
// Forwards what one of the command's pipes holds as a frame of type (closing it at its end).
void on_pipe(struct exec_op *x, int *fd, uint8_t type);
// Reads the shim's report: the command's pid, then its status.
void on_info(struct exec_op *x);
void on_sigchld(int sig);
// Reaps ended shims (after SIGCHLD).
void reap(void);
// Kills every running command's processes (stn went away).
void kill_commands(void);

#endif
