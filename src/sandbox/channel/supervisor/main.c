// The sandbox supervisor: one long-lived process per sandbox container that runs commands and file
// operations for stn over one framed stream (its stdin and stdout), instead of one Docker exec each.
// The protocol is docs/sandbox_channel.md. It runs as the sandbox user with no capabilities: every
// file operation reaches its path from /workspace one name at a time without following a symlink,
// and every command runs below a subreaper shim so a kill finds all of its processes.
//
// Built static with musl by scripts/build_supervisor from this folder's .c files (no libc needed in
// the image): main.c reads requests and runs the loop, frames.c speaks the framing, paths.c walks paths,
// write.c, read.c and tree.c do the file operations, exec.c and kill.c run and end commands. The
// protocol's numbers are in protocol.h, generated from ../protocol_table.ts.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "exec.h"
#include "files.h"
#include "frames.h"
#include "paths.h"

// stn went away: no command can report any more, so none is left running; half-written files go.
static void shutdown_all(void) {
  kill_commands();
  abort_writes();
  exit(0);
}

static void handle(uint8_t type, uint32_t id, struct in *in) {
  switch (type) {
    case FRAME_EXEC: return do_exec(id, in);
    case FRAME_KILL: return do_kill(id);
    case FRAME_SIGNAL: return do_signal(id, in);
    case FRAME_WRITE: return do_write(id, in);
    case FRAME_WRITE_DATA: return do_write_data(id, in);
    case FRAME_WRITE_ABORT: return do_write_abort(id);
    case FRAME_READ: return do_read(id, in);
    case FRAME_READ_MORE: return do_read_more(id, in);
    case FRAME_READ_CLOSE: return do_read_close(id);
    case FRAME_LIST: return do_list(id, in);
    case FRAME_DELETE: return do_delete(id, in);
    case FRAME_PING: return send_simple(FRAME_OK, id);
    default: return send_error(id, ERR_PROTOCOL, "unknown request type", NULL);
  }
}

static void read_request(uint8_t *buf) {
  uint8_t head[4];
  int r = read_full(0, head, 4);
  if (r == 0) shutdown_all();
  if (r < 0) die(3, "the channel broke inside a frame");
  uint32_t n = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
  if (n < 5 || n > MAX_REQUEST_PAYLOAD + 5) die(3, "a frame has an impossible length");
  if (read_full(0, buf, n) != 1) die(3, "the channel broke inside a frame");
  struct in in = {buf + 5, n - 5, 0};
  uint32_t id = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
  handle(buf[0], id, &in);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  workspace_fd = open(WORKSPACE, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (workspace_fd < 0) die(4, "cannot open /workspace");
  null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) die(4, "cannot open /dev/null");
  if (pipe2(child_pipe, O_CLOEXEC | O_NONBLOCK) < 0) die(4, "cannot make a pipe");
  struct sigaction sa = {0};
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  uint8_t *in_buf = malloc(MAX_REQUEST_PAYLOAD + 5);
  chunk_buf = malloc(MAX_DATA);
  if (!in_buf || !chunk_buf) die(5, "out of memory");
  frame_begin(FRAME_HELLO, 0);
  put_u32(PROTOCOL_VERSION);
  put_u32((uint32_t)getpid());
  frame_send();
  for (;;) {
    size_t count = 2;
    for (struct exec_op *x = execs; x; x = x->next) count += 3;
    struct pollfd fds[count];
    struct exec_op *owner[count];
    int which[count];
    size_t n = 0;
    fds[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = child_pipe[0], .events = POLLIN};
    for (struct exec_op *x = execs; x; x = x->next) {
      int own[3] = {x->out, x->err, x->info};
      for (int k = 0; k < 3; k++) {
        if (own[k] < 0) continue;
        owner[n] = x;
        which[n] = k;
        fds[n++] = (struct pollfd){.fd = own[k], .events = POLLIN};
      }
    }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      die(4, "poll failed");
    }
    if (fds[1].revents) reap();
    // Output before requests: a KILL read below may free an exec the pollfds still point at.
    for (size_t i = 2; i < n; i++) {
      if (!fds[i].revents) continue;
      struct exec_op *x = owner[i];
      if (which[i] == 0 && x->out == fds[i].fd) on_pipe(x, &x->out, FRAME_STDOUT);
      else if (which[i] == 1 && x->err == fds[i].fd) on_pipe(x, &x->err, FRAME_STDERR);
      else if (which[i] == 2 && x->info == fds[i].fd) on_info(x);
    }
    for (struct exec_op *x = execs, *next; x; x = next) {
      next = x->next;
      maybe_exit(x);
    }
    if (fds[0].revents) read_request(in_buf);
  }
}
