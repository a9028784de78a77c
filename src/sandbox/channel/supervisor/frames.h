// Frames: building and sending answers, reading the fields of a request.
#ifndef STN_SUPERVISOR_FRAMES_H
#define STN_SUPERVISOR_FRAMES_H
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

// Ends the supervisor with a line on stderr.
void die(int code, const char *what);

// The answer being built: frame_begin starts it, put_* append fields, frame_send sends it.
extern size_t out_len;
void frame_begin(uint8_t type, uint32_t id);
void put_bytes(const void *p, size_t n);
void put_u8(uint8_t v);
void put_u32(uint32_t v);
void put_u64(uint64_t v);
void put_str(const char *s, size_t n);
void put_cstr(const char *s);
void frame_send(void);
void send_simple(uint8_t type, uint32_t id);
void send_error(uint32_t id, uint8_t kind, const char *d1, const char *d2);
void send_errno(uint32_t id, uint8_t kind, const char *what, int err);

// A buffer of MAX_DATA bytes for data read from files and pipes (allocated by main).
extern uint8_t *chunk_buf;

// A request's payload being read; a field past its end sets bad.
struct in {
  const uint8_t *p;
  size_t left;
  int bad;
};

uint8_t get_u8(struct in *in);
uint32_t get_u32(struct in *in);
uint64_t get_u64(struct in *in);
// A NUL-terminated copy of a string field (NULL when malformed or holding a NUL).
char *get_str(struct in *in);
// Reads n bytes: 1 when read, 0 at the end of the stream before any, -1 when it ends inside them.
int read_full(int fd, uint8_t *p, size_t n);

#endif
