// Paths: every one is reached from /workspace without following a symlink.
#ifndef STN_SUPERVISOR_PATHS_H
#define STN_SUPERVISOR_PATHS_H
#include <stdint.h>

#define WORKSPACE "/workspace"

// /workspace, opened once at start (O_PATH, O_NOFOLLOW).
extern int workspace_fd;

// Answers kind for the symlink `name` of dir, with its target (detail2) and the path asked for (detail1).
void symlink_error(uint32_t id, uint8_t kind, int dir, const char *name, const char *path);
// The parent directory of path, opened name by name; *name points at the last component. With create,
// missing parents are made. Returns the fd, or -1 after sending the error.
int open_parent(uint32_t id, char *path, int create, char **name);

#endif
