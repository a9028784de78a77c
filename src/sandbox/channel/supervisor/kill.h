// Killing a command's processes.
#ifndef STN_SUPERVISOR_KILL_H
#define STN_SUPERVISOR_KILL_H
#include <sys/types.h>

// Stops and kills every process below the shim, looking again until none is left; -1 if some outlive it.
int kill_below(pid_t shim);

#endif
