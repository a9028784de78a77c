// Paths: every one is reached from /workspace without following a symlink.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frames.h"
#include "paths.h"

int workspace_fd;

// Answers kind for the symlink `name` of dir, with its target (detail2) and the path asked for (detail1).
void symlink_error(uint32_t id, uint8_t kind, int dir, const char *name, const char *path) {
  char target[PATH_MAX];
  ssize_t n = readlinkat(dir, name, target, sizeof target - 1);
  target[n < 0 ? 0 : n] = 0;
  send_error(id, kind, path, target);
}

// The parent directory of an absolute path under /workspace, opened name by name (O_PATH, never
// following a symlink); *name points at the last component. With create, missing parents are made
// and a symlink or file in the way is replaced by a directory (as extracting an archive would).
// Returns the fd, or -1 after sending the error.
int open_parent(uint32_t id, char *path, int create, char **name) {
  size_t wl = strlen(WORKSPACE);
  if (strncmp(path, WORKSPACE "/", wl + 1) != 0 || path[wl + 1] == 0) {
    send_error(id, ERR_PROTOCOL, "not a path inside /workspace", path);
    return -1;
  }
  int dir = dup(workspace_fd);
  char *comp = path + wl + 1;
  for (;;) {
    char *slash = strchr(comp, '/');
    if (!comp[0] || !strcmp(comp, ".") || (slash == comp) || !strncmp(comp, "../", 3) ||
        !strcmp(comp, "..") || !strncmp(comp, "./", 2)) {
      close(dir);
      send_error(id, ERR_PROTOCOL, "the path is not normalized", path);
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
        send_errno(id, ERR_PATH_CHANGED, path, e);
        return -1;
      }
    } else if (next < 0) {
      int e = errno;
      struct stat st;
      if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        symlink_error(id, ERR_PARENT_SYMLINK, dir, comp, path);
      } else if (e == ENOENT || e == ENOTDIR) {
        send_error(id, ERR_NOT_FOUND, NULL, NULL);
      } else if (e == EACCES || e == EPERM) {
        send_errno(id, ERR_UNREADABLE, path, e);
      } else if (e == ELOOP) {
        // A symlink at the open that was gone by the look after it: the path is being changed.
        send_errno(id, ERR_PATH_CHANGED, path, e);
      } else {
        send_errno(id, ERR_IO, path, e);
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
