// Reads: the file is opened once and only that descriptor is looked at afterwards.
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

struct read_op {
  uint32_t id;
  int fd;
  uint64_t size, sent;
  struct read_op *next;
};

static struct read_op *reads;

static struct read_op *find_read(uint32_t id) {
  for (struct read_op *r = reads; r; r = r->next)
    if (r->id == id) return r;
  return NULL;
}

static void end_read(struct read_op *r) {
  struct read_op **p = &reads;
  while (*p != r) p = &(*p)->next;
  *p = r->next;
  close(r->fd);
  free(r);
}

void do_read(uint32_t id, struct in *in) {
  char *path = get_str(in);
  uint64_t max = get_u64(in);
  if (in->bad) {
    free(path);
    return send_error(id, ERR_PROTOCOL, "malformed READ", NULL);
  }
  if (!strcmp(path, WORKSPACE)) {
    free(path);
    return send_error(id, ERR_IS_DIRECTORY, NULL, NULL);
  }
  char *name;
  char *walk = strdup(path);
  int dir = open_parent(id, walk, 0, &name);
  if (dir < 0) goto done;
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      symlink_error(id, ERR_FINAL_SYMLINK, dir, name, path);
    } else if (e == ENOENT || e == ENOTDIR) {
      send_error(id, ERR_NOT_FOUND, NULL, NULL);
    } else if (e == EACCES || e == EPERM) {
      send_errno(id, ERR_UNREADABLE, path, e);
    } else if (e == ENXIO || e == ENODEV) {
      send_error(id, ERR_NOT_A_FILE, NULL, NULL);
    } else if (e == ELOOP) {
      send_errno(id, ERR_PATH_CHANGED, path, e);
    } else {
      send_errno(id, ERR_IO, path, e);
    }
    close(dir);
    goto done;
  }
  close(dir);
  struct stat st;
  if (fstat(fd, &st) < 0) {
    send_errno(id, ERR_IO, path, errno);
    close(fd);
  } else if (S_ISDIR(st.st_mode)) {
    send_error(id, ERR_IS_DIRECTORY, NULL, NULL);
    close(fd);
  } else if (!S_ISREG(st.st_mode)) {
    send_error(id, ERR_NOT_A_FILE, NULL, NULL);
    close(fd);
  } else if ((uint64_t)st.st_size > max) {
    char size[32];
    snprintf(size, sizeof size, "%lld", (long long)st.st_size);
    send_error(id, ERR_TOO_LARGE, size, NULL);
    close(fd);
  } else {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    struct read_op *r = calloc(1, sizeof *r);
    if (!r) die(5, "out of memory");
    r->id = id;
    r->fd = fd;
    r->size = (uint64_t)st.st_size;
    r->next = reads;
    reads = r;
    frame_begin(FRAME_SIZE, id);
    put_u64(r->size);
    frame_send();
  }
done:
  free(walk);
  free(path);
}

void do_read_more(uint32_t id, struct in *in) {
  uint32_t want = get_u32(in);
  struct read_op *r = find_read(id);
  if (!r) return;
  while (want > 0 && r->sent < r->size) {
    size_t n = want < MAX_DATA ? want : MAX_DATA;
    if (n > r->size - r->sent) n = r->size - r->sent;
    ssize_t got = read(r->fd, chunk_buf, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      send_errno(id, ERR_IO, "reading the file", errno);
      return end_read(r);
    }
    if (got == 0) {
      char sent[32], size[32];
      snprintf(sent, sizeof sent, "%llu", (unsigned long long)r->sent);
      snprintf(size, sizeof size, "%llu", (unsigned long long)r->size);
      send_error(id, ERR_FILE_CHANGED, sent, size);
      return end_read(r);
    }
    frame_begin(FRAME_DATA, id);
    put_bytes(chunk_buf, (size_t)got);
    frame_send();
    r->sent += (uint64_t)got;
    want -= (uint32_t)got;
  }
  if (r->sent == r->size) {
    send_simple(FRAME_END, id);
    end_read(r);
  }
}

void do_read_close(uint32_t id) {
  struct read_op *r = find_read(id);
  if (r) end_read(r);
}
