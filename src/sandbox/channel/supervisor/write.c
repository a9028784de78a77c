// Writes: a temporary file in the pinned parent, renamed over the name once every byte is in.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "frames.h"
#include "paths.h"

struct write_op {
  uint32_t id;
  int dir, fd;
  char *path, *name, tmp[64];
  uint64_t size, written;
  uint32_t mode;
  struct write_op *next;
};

static struct write_op *writes;

static struct write_op *find_write(uint32_t id) {
  for (struct write_op *w = writes; w; w = w->next)
    if (w->id == id) return w;
  return NULL;
}

static void end_write(struct write_op *w, int keep_tmp) {
  struct write_op **p = &writes;
  while (*p != w) p = &(*p)->next;
  *p = w->next;
  if (w->fd >= 0) close(w->fd);
  if (!keep_tmp) unlinkat(w->dir, w->tmp, 0);
  close(w->dir);
  free(w->path);
  free(w->name);
  free(w);
}

static void finish_write(struct write_op *w) {
  if (fchmod(w->fd, w->mode & 07777) < 0) {
    send_errno(w->id, ERR_IO, "chmod", errno);
    return end_write(w, 0);
  }
  close(w->fd);
  w->fd = -1;
  // The parent must still be where it was asked to be: a directory renamed away meanwhile would
  // receive the file under another path.
  char *name;
  char *again = strdup(w->path);
  int dir = open_parent(0, again, 0, &name);
  struct stat a, b;
  int same = dir >= 0 && fstat(dir, &a) == 0 && fstat(w->dir, &b) == 0 && a.st_dev == b.st_dev &&
             a.st_ino == b.st_ino;
  if (dir >= 0) close(dir);
  free(again);
  if (!same) {
    send_errno(w->id, ERR_PATH_CHANGED, w->path, ENOENT);
    return end_write(w, 0);
  }
  if (renameat(w->dir, w->tmp, w->dir, w->name) < 0) {
    int e = errno;
    if (e == ENOENT) send_errno(w->id, ERR_PATH_CHANGED, w->path, e);
    else send_errno(w->id, e == EISDIR ? ERR_IS_DIRECTORY : ERR_IO, "rename", e);
    return end_write(w, 0);
  }
  send_simple(FRAME_OK, w->id);
  end_write(w, 1);
}

void do_write(uint32_t id, struct in *in) {
  char *path = get_str(in);
  uint32_t mode = get_u32(in);
  uint64_t size = get_u64(in);
  if (in->bad) {
    free(path);
    return send_error(id, ERR_PROTOCOL, "malformed WRITE", NULL);
  }
  char *name;
  char *walk = strdup(path);
  int dir = open_parent(id, walk, 1, &name);
  if (dir < 0) {
    free(walk);
    free(path);
    return;
  }
  struct stat st;
  if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    close(dir);
    free(walk);
    free(path);
    return send_error(id, ERR_IS_DIRECTORY, NULL, NULL);
  }
  struct write_op *w = calloc(1, sizeof *w);
  if (!w) die(5, "out of memory");
  w->id = id;
  w->dir = dir;
  w->path = path;
  w->name = strdup(name);
  free(walk);
  w->size = size;
  w->mode = mode;
  snprintf(w->tmp, sizeof w->tmp, ".stn-write-%d-%u", (int)getpid(), id);
  unlinkat(dir, w->tmp, 0);
  w->fd = openat(dir, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  w->next = writes;
  writes = w;
  if (w->fd < 0) {
    // ENOENT: the pinned parent was removed since it was walked.
    int e = errno;
    send_errno(id, e == ENOENT ? ERR_PATH_CHANGED : ERR_IO, e == ENOENT ? path : "creating the file", e);
    return end_write(w, 1);
  }
  send_simple(FRAME_OK, id);
  if (size == 0) finish_write(w);
}

void do_write_data(uint32_t id, struct in *in) {
  struct write_op *w = find_write(id);
  // Data of a write that already failed keeps coming until stn has read the error: dropped.
  if (!w) return;
  if (w->written + in->left > w->size) {
    send_error(id, ERR_SIZE_MISMATCH, NULL, NULL);
    return end_write(w, 0);
  }
  const uint8_t *p = in->p;
  size_t n = in->left;
  while (n > 0) {
    ssize_t r = write(w->fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      send_errno(id, ERR_IO, "writing the file", errno);
      return end_write(w, 0);
    }
    p += r;
    n -= (size_t)r;
  }
  w->written += in->left;
  if (w->written == w->size) finish_write(w);
}

void do_write_abort(uint32_t id) {
  struct write_op *w = find_write(id);
  if (w) end_write(w, 0);
}

void abort_writes(void) {
  while (writes) end_write(writes, 0);
}
