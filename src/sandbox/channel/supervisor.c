// The sandbox supervisor: one long-lived process per sandbox container that runs commands and file
// operations for stn over one framed stream (its stdin and stdout), instead of one Docker exec each.
// The protocol is docs/sandbox_channel.md. It runs as the sandbox user with no capabilities: every
// file operation reaches its path from /workspace one name at a time without following a symlink,
// and every command runs below a subreaper shim so a kill finds all of its processes.
//
// Built static with musl by scripts/build_supervisor (no libc needed in the image).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 1
#define MAX_PAYLOAD (1024 * 1024 + 64)
#define CHUNK (256 * 1024)
#define PIPE_CHUNK (64 * 1024)
#define ENTRIES_FLUSH (512 * 1024)
#define KILL_ROUNDS 50
#define WORKSPACE "/workspace"

enum {
  T_EXEC = 0x01, T_KILL = 0x02, T_SIGNAL = 0x03,
  T_WRITE = 0x10, T_WRITE_DATA = 0x11, T_WRITE_ABORT = 0x12,
  T_READ = 0x13, T_READ_MORE = 0x14, T_READ_CLOSE = 0x15,
  T_LIST = 0x16, T_DELETE = 0x17, T_PING = 0x20,
  A_STDOUT = 0x82, A_STDERR = 0x83, A_EXIT = 0x84, A_ERROR = 0x8F,
  A_OK = 0x90, A_SIZE = 0x91, A_DATA = 0x92, A_END = 0x93, A_ENTRIES = 0x94, A_HELLO = 0xA0,
};

enum {
  E_NOT_FOUND = 1, E_IS_DIRECTORY, E_NOT_A_FILE, E_NOT_A_DIRECTORY, E_TOO_LARGE, E_UNREADABLE,
  E_PARENT_SYMLINK, E_FINAL_SYMLINK, E_PATH_CHANGED, E_SIZE_MISMATCH, E_IO, E_EXEC_FAILED,
  E_PROTOCOL, E_FILE_CHANGED,
};

// ---------------------------------------------------------------------------------------------
// Output frames

static uint8_t *out_buf;
static size_t out_len, out_cap;

static void die(int code, const char *what) {
  fprintf(stderr, "stn-supervisor: %s\n", what);
  _exit(code);
}

static void out_reserve(size_t more) {
  if (out_len + more <= out_cap) return;
  size_t cap = out_cap ? out_cap : 4096;
  while (cap < out_len + more) cap *= 2;
  out_buf = realloc(out_buf, cap);
  if (!out_buf) die(5, "out of memory");
  out_cap = cap;
}

static void put_bytes(const void *p, size_t n) {
  out_reserve(n);
  memcpy(out_buf + out_len, p, n);
  out_len += n;
}

static void put_u8(uint8_t v) { put_bytes(&v, 1); }

static void put_u32(uint32_t v) {
  uint8_t b[4] = {v >> 24, v >> 16, v >> 8, v};
  put_bytes(b, 4);
}

static void put_u64(uint64_t v) {
  put_u32(v >> 32);
  put_u32((uint32_t)v);
}

static void put_str(const char *s, size_t n) {
  put_u32(n);
  put_bytes(s, n);
}

static void put_cstr(const char *s) { put_str(s, strlen(s)); }

static void frame_begin(uint8_t type, uint32_t id) {
  out_len = 0;
  put_u32(0);
  put_u8(type);
  put_u32(id);
}

static void write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    // stn went away: nothing can be reported any more.
    if (w <= 0) die(0, "the channel closed while answering");
    p += w;
    n -= (size_t)w;
  }
}

static void frame_send(void) {
  uint32_t n = out_len - 4;
  out_buf[0] = n >> 24;
  out_buf[1] = n >> 16;
  out_buf[2] = n >> 8;
  out_buf[3] = n;
  write_all(1, out_buf, out_len);
}

static void send_simple(uint8_t type, uint32_t id) {
  frame_begin(type, id);
  frame_send();
}

static void send_error(uint32_t id, uint8_t kind, const char *d1, const char *d2) {
  frame_begin(A_ERROR, id);
  put_u8(kind);
  put_cstr(d1 ? d1 : "");
  put_cstr(d2 ? d2 : "");
  frame_send();
}

static void send_errno(uint32_t id, uint8_t kind, const char *what, int err) {
  send_error(id, kind, what, strerror(err));
}

// ---------------------------------------------------------------------------------------------
// Input frames

struct in {
  const uint8_t *p;
  size_t left;
  int bad;
};

static const uint8_t *take(struct in *in, size_t n) {
  if (in->bad || in->left < n) {
    in->bad = 1;
    return NULL;
  }
  const uint8_t *p = in->p;
  in->p += n;
  in->left -= n;
  return p;
}

static uint8_t get_u8(struct in *in) {
  const uint8_t *p = take(in, 1);
  return p ? p[0] : 0;
}

static uint32_t get_u32(struct in *in) {
  const uint8_t *p = take(in, 4);
  return p ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : 0;
}

static uint64_t get_u64(struct in *in) {
  uint64_t hi = get_u32(in);
  return hi << 32 | get_u32(in);
}

// A NUL-terminated copy of a string field (NULL when malformed or holding a NUL).
static char *get_str(struct in *in) {
  uint32_t n = get_u32(in);
  const uint8_t *p = take(in, n);
  if (!p || memchr(p, 0, n)) {
    in->bad = 1;
    return NULL;
  }
  char *s = malloc(n + 1);
  if (!s) die(5, "out of memory");
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

static int read_full(int fd, uint8_t *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return got == 0 && r == 0 ? 0 : -1;
    got += (size_t)r;
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Paths: every one is reached from /workspace without following a symlink.

static int workspace_fd;

// Answers kind for the symlink `name` of dir, with its target (detail2) and the path asked for (detail1).
static void symlink_error(uint32_t id, uint8_t kind, int dir, const char *name, const char *path) {
  char target[PATH_MAX];
  ssize_t n = readlinkat(dir, name, target, sizeof target - 1);
  target[n < 0 ? 0 : n] = 0;
  send_error(id, kind, path, target);
}

// The parent directory of an absolute path under /workspace, opened name by name (O_PATH, never
// following a symlink); *name points at the last component. With create, missing parents are made
// and a symlink or file in the way is replaced by a directory (as extracting an archive would).
// Returns the fd, or -1 after sending the error.
static int open_parent(uint32_t id, char *path, int create, char **name) {
  size_t wl = strlen(WORKSPACE);
  if (strncmp(path, WORKSPACE "/", wl + 1) != 0 || path[wl + 1] == 0) {
    send_error(id, E_PROTOCOL, "not a path inside /workspace", path);
    return -1;
  }
  int dir = dup(workspace_fd);
  char *comp = path + wl + 1;
  for (;;) {
    char *slash = strchr(comp, '/');
    if (!comp[0] || !strcmp(comp, ".") || (slash == comp) || !strncmp(comp, "../", 3) ||
        !strcmp(comp, "..") || !strncmp(comp, "./", 2)) {
      close(dir);
      send_error(id, E_PROTOCOL, "the path is not normalized", path);
      return -1;
    }
    if (!slash) break;
    *slash = 0;
    int next = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && create) {
      struct stat st;
      if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
        unlinkat(dir, comp, 0);
      }
      mkdirat(dir, comp, 0755);
      next = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) {
        int e = errno;
        *slash = '/';
        close(dir);
        send_errno(id, E_PATH_CHANGED, path, e);
        return -1;
      }
    } else if (next < 0) {
      int e = errno;
      struct stat st;
      if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        symlink_error(id, E_PARENT_SYMLINK, dir, comp, path);
      } else if (e == ENOENT || e == ENOTDIR) {
        send_error(id, E_NOT_FOUND, NULL, NULL);
      } else if (e == EACCES || e == EPERM) {
        send_errno(id, E_UNREADABLE, path, e);
      } else if (e == ELOOP) {
        // A symlink at the open that was gone by the look after it: the path is being changed.
        send_errno(id, E_PATH_CHANGED, path, e);
      } else {
        send_errno(id, E_IO, path, e);
      }
      *slash = '/';
      close(dir);
      return -1;
    }
    *slash = '/';
    close(dir);
    dir = next;
    comp = slash + 1;
  }
  *name = comp;
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Writes: a temporary file in the pinned parent, renamed over the name once every byte is in.

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
    send_errno(w->id, E_IO, "chmod", errno);
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
    send_errno(w->id, E_PATH_CHANGED, w->path, ENOENT);
    return end_write(w, 0);
  }
  if (renameat(w->dir, w->tmp, w->dir, w->name) < 0) {
    int e = errno;
    if (e == ENOENT) send_errno(w->id, E_PATH_CHANGED, w->path, e);
    else send_errno(w->id, e == EISDIR ? E_IS_DIRECTORY : E_IO, "rename", e);
    return end_write(w, 0);
  }
  send_simple(A_OK, w->id);
  end_write(w, 1);
}

static void do_write(uint32_t id, struct in *in) {
  char *path = get_str(in);
  uint32_t mode = get_u32(in);
  uint64_t size = get_u64(in);
  if (in->bad) {
    free(path);
    return send_error(id, E_PROTOCOL, "malformed WRITE", NULL);
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
    return send_error(id, E_IS_DIRECTORY, NULL, NULL);
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
    send_errno(id, e == ENOENT ? E_PATH_CHANGED : E_IO, e == ENOENT ? path : "creating the file", e);
    return end_write(w, 1);
  }
  send_simple(A_OK, id);
  if (size == 0) finish_write(w);
}

static void do_write_data(uint32_t id, struct in *in) {
  struct write_op *w = find_write(id);
  // Data of a write that already failed keeps coming until stn has read the error: dropped.
  if (!w) return;
  if (w->written + in->left > w->size) {
    send_error(id, E_SIZE_MISMATCH, NULL, NULL);
    return end_write(w, 0);
  }
  const uint8_t *p = in->p;
  size_t n = in->left;
  while (n > 0) {
    ssize_t r = write(w->fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      send_errno(id, E_IO, "writing the file", errno);
      return end_write(w, 0);
    }
    p += r;
    n -= (size_t)r;
  }
  w->written += in->left;
  if (w->written == w->size) finish_write(w);
}

// ---------------------------------------------------------------------------------------------
// Reads: the file is opened once and only that descriptor is looked at afterwards.

struct read_op {
  uint32_t id;
  int fd;
  uint64_t size, sent;
  struct read_op *next;
};

static struct read_op *reads;
static uint8_t *chunk_buf;

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

static void do_read(uint32_t id, struct in *in) {
  char *path = get_str(in);
  uint64_t max = get_u64(in);
  if (in->bad) {
    free(path);
    return send_error(id, E_PROTOCOL, "malformed READ", NULL);
  }
  if (!strcmp(path, WORKSPACE)) {
    free(path);
    return send_error(id, E_IS_DIRECTORY, NULL, NULL);
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
      symlink_error(id, E_FINAL_SYMLINK, dir, name, path);
    } else if (e == ENOENT || e == ENOTDIR) {
      send_error(id, E_NOT_FOUND, NULL, NULL);
    } else if (e == EACCES || e == EPERM) {
      send_errno(id, E_UNREADABLE, path, e);
    } else if (e == ENXIO || e == ENODEV) {
      send_error(id, E_NOT_A_FILE, NULL, NULL);
    } else if (e == ELOOP) {
      send_errno(id, E_PATH_CHANGED, path, e);
    } else {
      send_errno(id, E_IO, path, e);
    }
    close(dir);
    goto done;
  }
  close(dir);
  struct stat st;
  if (fstat(fd, &st) < 0) {
    send_errno(id, E_IO, path, errno);
    close(fd);
  } else if (S_ISDIR(st.st_mode)) {
    send_error(id, E_IS_DIRECTORY, NULL, NULL);
    close(fd);
  } else if (!S_ISREG(st.st_mode)) {
    send_error(id, E_NOT_A_FILE, NULL, NULL);
    close(fd);
  } else if ((uint64_t)st.st_size > max) {
    char size[32];
    snprintf(size, sizeof size, "%lld", (long long)st.st_size);
    send_error(id, E_TOO_LARGE, size, NULL);
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
    frame_begin(A_SIZE, id);
    put_u64(r->size);
    frame_send();
  }
done:
  free(walk);
  free(path);
}

static void do_read_more(uint32_t id, struct in *in) {
  uint32_t want = get_u32(in);
  struct read_op *r = find_read(id);
  if (!r) return;
  while (want > 0 && r->sent < r->size) {
    size_t n = want < CHUNK ? want : CHUNK;
    if (n > r->size - r->sent) n = r->size - r->sent;
    ssize_t got = read(r->fd, chunk_buf, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      send_errno(id, E_IO, "reading the file", errno);
      return end_read(r);
    }
    if (got == 0) {
      char sent[32], size[32];
      snprintf(sent, sizeof sent, "%llu", (unsigned long long)r->sent);
      snprintf(size, sizeof size, "%llu", (unsigned long long)r->size);
      send_error(id, E_FILE_CHANGED, sent, size);
      return end_read(r);
    }
    frame_begin(A_DATA, id);
    put_bytes(chunk_buf, (size_t)got);
    frame_send();
    r->sent += (uint64_t)got;
    want -= (uint32_t)got;
  }
  if (r->sent == r->size) {
    send_simple(A_END, id);
    end_read(r);
  }
}

// ---------------------------------------------------------------------------------------------
// Listing and deleting: directories are opened with O_NOFOLLOW, so neither ever leaves the tree.

static void put_entry(const char *rel, const struct stat *st, uint32_t id) {
  uint8_t type = S_ISREG(st->st_mode) ? 0 : S_ISDIR(st->st_mode) ? 1 : S_ISLNK(st->st_mode) ? 2 : 3;
  put_u8(type);
  put_u32(st->st_mode & 07777);
  put_u64((uint64_t)st->st_size);
  put_u64((uint64_t)(int64_t)st->st_mtim.tv_sec);
  put_cstr(rel);
  if (out_len > ENTRIES_FLUSH) {
    frame_send();
    frame_begin(A_ENTRIES, id);
  }
}

// Lists the directory fd (closed here) into the current ENTRIES frame, names prefixed with prefix.
static void list_dir(int fd, const char *prefix, int recursive, uint32_t id) {
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    size_t n = strlen(prefix) + strlen(e->d_name) + 2;
    char *rel = malloc(n);
    if (!rel) die(5, "out of memory");
    snprintf(rel, n, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
    put_entry(rel, &st, id);
    if (recursive && S_ISDIR(st.st_mode)) {
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) list_dir(sub, rel, 1, id);
    }
    free(rel);
  }
  closedir(d);
}

static void do_list(uint32_t id, struct in *in) {
  char *path = get_str(in);
  int recursive = get_u8(in);
  if (in->bad) {
    free(path);
    return send_error(id, E_PROTOCOL, "malformed LIST", NULL);
  }
  int fd;
  char *walk = NULL;
  if (!strcmp(path, WORKSPACE)) {
    fd = openat(workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) send_errno(id, E_IO, path, errno);
  } else {
    char *name;
    walk = strdup(path);
    int dir = open_parent(id, walk, 0, &name);
    fd = -1;
    if (dir >= 0) {
      fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        int e = errno;
        struct stat st;
        int found = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (found && S_ISLNK(st.st_mode)) symlink_error(id, E_PARENT_SYMLINK, dir, name, path);
        else if (found && !S_ISDIR(st.st_mode)) send_error(id, E_NOT_A_DIRECTORY, NULL, NULL);
        else if (e == ENOENT) send_error(id, E_NOT_FOUND, NULL, NULL);
        else if (e == EACCES || e == EPERM) send_errno(id, E_UNREADABLE, path, e);
        else if (e == ELOOP) send_errno(id, E_PATH_CHANGED, path, e);
        else send_errno(id, E_IO, path, e);
      }
      close(dir);
    }
  }
  if (fd >= 0) {
    frame_begin(A_ENTRIES, id);
    list_dir(fd, "", recursive, id);
    if (out_len > 9) frame_send();
    send_simple(A_OK, id);
  }
  free(walk);
  free(path);
}

// Removes everything inside the directory `name` of dir (like rm -rf, never through a link).
static int remove_tree(int dir, const char *name) {
  int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return -1;
  }
  int failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (remove_tree(dirfd(d), e->d_name) < 0 && errno != ENOENT) failed = errno;
      if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT) failed = errno;
    } else if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT) {
      failed = errno;
    }
  }
  closedir(d);
  if (failed) errno = failed;
  return failed ? -1 : 0;
}

static void do_delete(uint32_t id, struct in *in) {
  char *path = get_str(in);
  int recursive = get_u8(in);
  if (in->bad) {
    free(path);
    return send_error(id, E_PROTOCOL, "malformed DELETE", NULL);
  }
  char *name;
  char *walk = strdup(path);
  int dir = open_parent(id, walk, 0, &name);
  if (dir >= 0) {
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      send_error(id, E_NOT_FOUND, NULL, NULL);
    } else if (S_ISDIR(st.st_mode) && !recursive) {
      send_error(id, E_IS_DIRECTORY, NULL, NULL);
    } else if (S_ISDIR(st.st_mode) &&
               (remove_tree(dir, name) < 0 || unlinkat(dir, name, AT_REMOVEDIR) < 0)) {
      send_errno(id, E_IO, path, errno);
    } else if (!S_ISDIR(st.st_mode) && unlinkat(dir, name, 0) < 0) {
      send_errno(id, E_IO, path, errno);
    } else {
      send_simple(A_OK, id);
    }
    close(dir);
  }
  free(walk);
  free(path);
}

// ---------------------------------------------------------------------------------------------
// Commands. Each runs below its own shim: a subreaper in a new session that forks the command,
// reports its pid and status on the info pipe, reaps whatever reparents to it, and exits only once
// it has no descendant left. While it lives no process of the command can leave its subtree.

struct exec_op {
  uint32_t id;
  pid_t shim, main;
  int out, err, info;
  uint8_t info_buf[8];
  int info_got;
  int status, status_known, killed, lost;
  struct exec_op *next;
};

static struct exec_op *execs;
static int null_fd;
static int child_pipe[2];

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

static void do_exec(uint32_t id, struct in *in) {
  char *cwd = get_str(in);
  uint32_t argc, envc;
  char **argv = get_strs(in, &argc);
  char **env = get_strs(in, &envc);
  int out[2] = {-1, -1}, err[2] = {-1, -1}, info[2] = {-1, -1};
  if (in->bad || argc == 0 || !cwd || cwd[0] != '/') {
    send_error(id, E_PROTOCOL, "malformed EXEC", NULL);
  } else if (find_exec(id)) {
    send_error(id, E_PROTOCOL, "the id is in use", NULL);
  } else if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(info, O_CLOEXEC) < 0) {
    send_errno(id, E_EXEC_FAILED, "pipe", errno);
  } else {
    char **command_environ = command_env(env, envc);
    pid_t shim = fork();
    if (shim == 0) run_shim(cwd, argv, command_environ, out[1], err[1], info[1]);
    free(command_environ);
    if (shim < 0) {
      send_errno(id, E_EXEC_FAILED, "fork", errno);
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
static int kill_below(pid_t shim) {
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

static int shim_alive(struct exec_op *x) {
  return x->shim > 0 && kill(x->shim, 0) == 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void do_kill(uint32_t id) {
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

static void do_signal(uint32_t id, struct in *in) {
  uint32_t signo = get_u32(in);
  struct exec_op *x = find_exec(id);
  if (x && x->main > 0 && !x->status_known) kill(x->main, (int)signo);
}

// Sends EXIT once the command has ended and both of its pipes are closed, and forgets it.
static void maybe_exit(struct exec_op *x) {
  if (x->out >= 0 || x->err >= 0 || x->info >= 0) return;
  frame_begin(A_EXIT, x->id);
  put_u32((uint32_t)(x->status_known ? x->status : x->lost ? -1 : 128 + SIGKILL));
  put_u8((x->killed ? 1 : 0) | (x->lost ? 2 : 0));
  frame_send();
  struct exec_op **p = &execs;
  while (*p != x) p = &(*p)->next;
  *p = x->next;
  free(x);
}

static void on_pipe(struct exec_op *x, int *fd, uint8_t type) {
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

static void on_info(struct exec_op *x) {
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

static void on_sigchld(int sig) {
  (void)sig;
  int saved = errno;
  ssize_t ignored = write(child_pipe[1], "c", 1);
  (void)ignored;
  errno = saved;
}

static void reap(void) {
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

// stn went away: no command can report any more, so none is left running; half-written files go.
static void shutdown_all(void) {
  for (struct exec_op *x = execs; x; x = x->next)
    if (shim_alive(x)) kill_below(x->shim);
  while (writes) end_write(writes, 0);
  exit(0);
}

static void handle(uint8_t type, uint32_t id, struct in *in) {
  switch (type) {
    case T_EXEC: return do_exec(id, in);
    case T_KILL: return do_kill(id);
    case T_SIGNAL: return do_signal(id, in);
    case T_WRITE: return do_write(id, in);
    case T_WRITE_DATA: return do_write_data(id, in);
    case T_WRITE_ABORT: {
      struct write_op *w = find_write(id);
      if (w) end_write(w, 0);
      return;
    }
    case T_READ: return do_read(id, in);
    case T_READ_MORE: return do_read_more(id, in);
    case T_READ_CLOSE: {
      struct read_op *r = find_read(id);
      if (r) end_read(r);
      return;
    }
    case T_LIST: return do_list(id, in);
    case T_DELETE: return do_delete(id, in);
    case T_PING: return send_simple(A_OK, id);
    default: return send_error(id, E_PROTOCOL, "unknown request type", NULL);
  }
}

static void read_request(uint8_t *buf) {
  uint8_t head[4];
  int r = read_full(0, head, 4);
  if (r == 0) shutdown_all();
  if (r < 0) die(3, "the channel broke inside a frame");
  uint32_t n = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
  if (n < 5 || n > MAX_PAYLOAD + 5) die(3, "a frame has an impossible length");
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
  uint8_t *in_buf = malloc(MAX_PAYLOAD + 5);
  chunk_buf = malloc(CHUNK);
  if (!in_buf || !chunk_buf) die(5, "out of memory");
  frame_begin(A_HELLO, 0);
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
      if (which[i] == 0 && x->out == fds[i].fd) on_pipe(x, &x->out, A_STDOUT);
      else if (which[i] == 1 && x->err == fds[i].fd) on_pipe(x, &x->err, A_STDERR);
      else if (which[i] == 2 && x->info == fds[i].fd) on_info(x);
    }
    for (struct exec_op *x = execs, *next; x; x = next) {
      next = x->next;
      maybe_exit(x);
    }
    if (fds[0].revents) read_request(in_buf);
  }
}
