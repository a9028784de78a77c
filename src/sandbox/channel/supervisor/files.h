// File operations (write.c, read.c, tree.c): each request's handler, which answers it itself.
#ifndef STN_SUPERVISOR_FILES_H
#define STN_SUPERVISOR_FILES_H
#include <stdint.h>

#include "frames.h"

void do_write(uint32_t id, struct in *in);
void do_write_data(uint32_t id, struct in *in);
void do_write_abort(uint32_t id);
// Ends every write in progress, removing its temporary file (the old files stay).
void abort_writes(void);

void do_read(uint32_t id, struct in *in);
void do_read_more(uint32_t id, struct in *in);
void do_read_close(uint32_t id);

void do_list(uint32_t id, struct in *in);
void do_delete(uint32_t id, struct in *in);

#endif
