// Listing and deleting: directories are opened with O_NOFOLLOW, so neither ever leaves the tree.
#include <dirent.h>
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

#define ENTRIES_FLUSH (512 * 1024)

static void put_entry(const char *rel, const struct stat *st, uint32_t id) {
  uint8_t type = S_ISREG(st->st_mode)   ? ENTRY_FILE
                 : S_ISDIR(st->st_mode) ? ENTRY_DIR
                 : S_ISLNK(st->st_mode) ? ENTRY_SYMLINK
                                        : ENTRY_OTHER;
  put_u8(type);
  put_u32(st->st_mode & 07777);
  put_u64((uint64_t)st->st_size);
  put_u64((uint64_t)(int64_t)st->st_mtim.tv_sec);
  put_cstr(rel);
  if (out_len > ENTRIES_FLUSH) {
    frame_send();
    frame_begin(FRAME_ENTRIES, id);
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

void do_list(uint32_t id, struct in *in) {
  char *path = get_str(in);
  int recursive = get_u8(in);
  if (in->bad) {
    free(path);
    return send_error(id, ERR_PROTOCOL, "malformed LIST", NULL);
  }
  int fd;
  char *walk = NULL;
  if (!strcmp(path, WORKSPACE)) {
    fd = openat(workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) send_errno(id, ERR_IO, path, errno);
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
        if (found && S_ISLNK(st.st_mode)) symlink_error(id, ERR_PARENT_SYMLINK, dir, name, path);
        else if (found && !S_ISDIR(st.st_mode)) send_error(id, ERR_NOT_A_DIRECTORY, NULL, NULL);
        else if (e == ENOENT) send_error(id, ERR_NOT_FOUND, NULL, NULL);
        else if (e == EACCES || e == EPERM) send_errno(id, ERR_UNREADABLE, path, e);
        else if (e == ELOOP) send_errno(id, ERR_PATH_CHANGED, path, e);
        else send_errno(id, ERR_IO, path, e);
      }
      close(dir);
    }
  }
  if (fd >= 0) {
    frame_begin(FRAME_ENTRIES, id);
    list_dir(fd, "", recursive, id);
    if (out_len > 9) frame_send();
    send_simple(FRAME_OK, id);
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

void do_delete(uint32_t id, struct in *in) {
  char *path = get_str(in);
  int recursive = get_u8(in);
  if (in->bad) {
    free(path);
    return send_error(id, ERR_PROTOCOL, "malformed DELETE", NULL);
  }
  char *name;
  char *walk = strdup(path);
  int dir = open_parent(id, walk, 0, &name);
  if (dir >= 0) {
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      send_error(id, ERR_NOT_FOUND, NULL, NULL);
    } else if (S_ISDIR(st.st_mode) && !recursive) {
      send_error(id, ERR_IS_DIRECTORY, NULL, NULL);
    } else if (S_ISDIR(st.st_mode) &&
               (remove_tree(dir, name) < 0 || unlinkat(dir, name, AT_REMOVEDIR) < 0)) {
      send_errno(id, ERR_IO, path, errno);
    } else if (!S_ISDIR(st.st_mode) && unlinkat(dir, name, 0) < 0) {
      send_errno(id, ERR_IO, path, errno);
    } else {
      send_simple(FRAME_OK, id);
    }
    close(dir);
  }
  free(walk);
  free(path);
}
