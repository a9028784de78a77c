// Commands. Each runs below its own shim: a subreaper in a new session that forks the command,
// reports its pid and status on the info pipe, reaps whatever reparents to it, and exits only once
// it has no descendant left. While it lives no process of the command can leave its subtree.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"
#include "frames.h"
#include "kill.h"

#define PIPE_CHUNK (64 * 1024)

struct exec_op *execs;
int null_fd;
int child_pipe[2];

static struct exec_op *find_exec(uint32_t id) {
  for (struct exec_op *x = execs; x; x = x->next)
    if (x->id == id) return x;
  return NULL;
}

static void close_fds_except(int a, int b, int c, int d4) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int own = dirfd(d);
  struct dirent *e;
  int fds[1024], n = 0;
  while ((e = readdir(d)) && n < 1024) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (fd > 2 && fd != own && fd != a && fd != b && fd != c && fd != d4) fds[n++] = fd;
  }
  closedir(d);
  for (int i = 0; i < n; i++) close(fds[i]);
}

static void put_int(int fd, int32_t v) {
  while (write(fd, &v, sizeof v) < 0 && errno == EINTR) {
  }
}

extern char **environ;

// Runs in the shim: never returns.
static void run_shim(char *cwd, char **argv, char **env, int out_w, int err_w, int info_w) {
  close_fds_except(out_w, err_w, info_w, null_fd);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  setsid();
  signal(SIGCHLD, SIG_DFL);
  pid_t main = fork();
  if (main == 0) {
    // Its own process group, so a `kill 0` in the command does not reach the shim.
    setpgid(0, 0);
    dup2(null_fd, 0);
    dup2(out_w, 1);
    dup2(err_w, 2);
    close(out_w);
    close(err_w);
    close(info_w);
    close(null_fd);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (chdir(cwd) < 0) {
      dprintf(2, "stn: cwd %s: %s\n", cwd, strerror(errno));
      _exit(126);
    }
    environ = env;
    execvp(argv[0], argv);
    int e = errno;
    dprintf(2, "stn: exec %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  close(out_w);
  close(err_w);
  dup2(null_fd, 0);
  dup2(null_fd, 1);
  dup2(null_fd, 2);
  if (main < 0) _exit(125);
  put_int(info_w, main);
  for (;;) {
    int st;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) _exit(0);
    if (pid == main) {
      put_int(info_w, WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
      close(info_w);
    }
  }
}

// The environment of a command: the supervisor's own (the container's), overridden by the request.
static char **command_env(char **extra, uint32_t n) {
  size_t base = 0;
  while (environ[base]) base++;
  char **env = calloc(base + n + 1, sizeof *env);
  if (!env) die(5, "out of memory");
  size_t len = 0;
  for (size_t i = 0; i < base; i++) env[len++] = environ[i];
  for (uint32_t i = 0; i < n; i++) {
    size_t key = strcspn(extra[i], "=");
    size_t j = 0;
    while (j < len && !(strncmp(env[j], extra[i], key) == 0 && env[j][key] == '=')) j++;
    env[j] = extra[i];
    if (j == len) len++;
  }
  return env;
}

static void free_strs(char **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

// A vector of n string fields (n bounded by what the frame can hold), NULL-terminated.
static char **get_strs(struct in *in, uint32_t *n) {
  *n = in->bad ? 0 : get_u32(in);
  if (*n > in->left / 4) {
    in->bad = 1;
    *n = 0;
  }
  char **v = calloc(*n + 1, sizeof *v);
  if (!v) die(5, "out of memory");
  for (uint32_t i = 0; i < *n && !in->bad; i++) v[i] = get_str(in);
  return v;
}

void do_exec(uint32_t id, struct in *in) {
  char *cwd = get_str(in);
  uint32_t argc, envc;
  char **argv = get_strs(in, &argc);
  char **env = get_strs(in, &envc);
  int out[2] = {-1, -1}, err[2] = {-1, -1}, info[2] = {-1, -1};
  if (in->bad || argc == 0 || !cwd || cwd[0] != '/') {
    send_error(id, ERR_PROTOCOL, "malformed EXEC", NULL);
  } else if (find_exec(id)) {
    send_error(id, ERR_PROTOCOL, "the id is in use", NULL);
  } else if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(info, O_CLOEXEC) < 0) {
    send_errno(id, ERR_EXEC_FAILED, "pipe", errno);
  } else {
    char **command_environ = command_env(env, envc);
    pid_t shim = fork();
    if (shim == 0) run_shim(cwd, argv, command_environ, out[1], err[1], info[1]);
    free(command_environ);
    if (shim < 0) {
      send_errno(id, ERR_EXEC_FAILED, "fork", errno);
    } else {
      struct exec_op *x = calloc(1, sizeof *x);
      if (!x) die(5, "out of memory");
      x->id = id;
      x->shim = shim;
      x->out = out[0];
      x->err = err[0];
      x->info = info[0];
      out[0] = err[0] = info[0] = -1;
      x->next = execs;
      execs = x;
    }
  }
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (info[i] >= 0) close(info[i]);
  }
  free(cwd);
  free_strs(argv, argc);
  free_strs(env, envc);
}


static int shim_alive(struct exec_op *x) {
  return x->shim > 0 && kill(x->shim, 0) == 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void do_kill(uint32_t id) {
  struct exec_op *x = find_exec(id);
  if (!x) return;
  x->killed = 1;
  if (!shim_alive(x) || kill_below(x->shim) < 0) {
    // Its processes cannot be found from here any more: stn kills the whole group instead.
    x->lost = 1;
    close_fd(&x->out);
    close_fd(&x->err);
    close_fd(&x->info);
  }
}

void do_signal(uint32_t id, struct in *in) {
  uint32_t signo = get_u32(in);
  struct exec_op *x = find_exec(id);
  if (x && x->main > 0 && !x->status_known) kill(x->main, (int)signo);
}

// Sends EXIT once the command has ended and both of its pipes are closed, and forgets it.
void maybe_exit(struct exec_op *x) {
  if (x->out >= 0 || x->err >= 0 || x->info >= 0) return;
  frame_begin(FRAME_EXIT, x->id);
  put_u32((uint32_t)(x->status_known ? x->status : x->lost ? -1 : 128 + SIGKILL));
  put_u8((x->killed ? EXIT_FLAG_KILLED : 0) | (x->lost ? EXIT_FLAG_LOST : 0));
  frame_send();
  struct exec_op **p = &execs;
  while (*p != x) p = &(*p)->next;
  *p = x->next;
  free(x);
}

void on_pipe(struct exec_op *x, int *fd, uint8_t type) {
  ssize_t r = read(*fd, chunk_buf, PIPE_CHUNK);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (r <= 0) {
    close_fd(fd);
    return;
  }
  frame_begin(type, x->id);
  put_bytes(chunk_buf, (size_t)r);
  frame_send();
}

void on_info(struct exec_op *x) {
  ssize_t r = read(x->info, x->info_buf + x->info_got, sizeof x->info_buf - x->info_got);
  if (r < 0 && errno == EINTR) return;
  if (r > 0) {
    x->info_got += r;
    if (x->info_got >= 4) memcpy(&x->main, x->info_buf, 4);
    if (x->info_got == 8) {
      memcpy(&x->status, x->info_buf + 4, 4);
      x->status_known = 1;
    }
    return;
  }
  // The shim closed it: after the status, or by dying, which loses track of the command.
  if (!x->status_known) x->lost = 1;
  close_fd(&x->info);
}

void on_sigchld(int sig) {
  (void)sig;
  int saved = errno;
  ssize_t ignored = write(child_pipe[1], "c", 1);
  (void)ignored;
  errno = saved;
}

void reap(void) {
  char drain[64];
  while (read(child_pipe[0], drain, sizeof drain) > 0) {
  }
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    for (struct exec_op *x = execs; x; x = x->next)
      if (x->shim == pid) x->shim = 0;
  }
}

void kill_commands(void) {
  for (struct exec_op *x = execs; x; x = x->next)
    if (shim_alive(x)) kill_below(x->shim);
}
