// Killing a command's processes: every live process below its shim, found from the parents in /proc.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kill.h"

#define KILL_ROUNDS 50

// Every live process below root (not root itself), from the parents in /proc/*/stat.
static int descendants(pid_t root, pid_t *found, int cap) {
  static pid_t pids[65536], ppids[65536];
  static char live[65536], in[65536];
  int n = 0;
  DIR *d = opendir("/proc");
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 65536) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) continue;
    buf[r] = 0;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
    char *close_paren = strrchr(buf, ')');
    char state;
    int ppid;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
    pids[n] = atoi(e->d_name);
    ppids[n] = ppid;
    live[n] = state != 'Z' && state != 'X';
    in[n] = 0;
    n++;
  }
  closedir(d);
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < n; i++) {
      if (in[i]) continue;
      int parent_in = ppids[i] == root;
      for (int j = 0; j < n && !parent_in; j++) parent_in = in[j] && pids[j] == ppids[i];
      if (parent_in) in[i] = changed = 1;
    }
  }
  int count = 0;
  for (int i = 0; i < n && count < cap; i++)
    if (in[i] && live[i]) found[count++] = pids[i];
  return count;
}

// Stops and kills every process below the shim, looking again until none is left.
int kill_below(pid_t shim) {
  static pid_t found[65536];
  for (int round = 0; round < KILL_ROUNDS; round++) {
    int n = descendants(shim, found, 65536);
    if (n == 0) return 0;
    for (int i = 0; i < n; i++) kill(found[i], SIGSTOP);
    for (int i = 0; i < n; i++) kill(found[i], SIGKILL);
    // A killed process stays in /proc until the kernel has torn it down, which on a busy machine takes
    // longer than a look: wait a little more each round (about 2 s over all rounds) before giving up.
    struct timespec pause = {0, (long)(round < 25 ? round + 1 : 25) * 2000000L};
    nanosleep(&pause, NULL);
  }
  return -1;
}
