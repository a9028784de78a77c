// Frames: the answer being built and sent on stdout, and the fields of a request read from stdin.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"

// ---------------------------------------------------------------------------------------------
// Output frames

static uint8_t *out_buf;
static size_t out_cap;
size_t out_len;
uint8_t *chunk_buf;

void die(int code, const char *what) {
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

void put_bytes(const void *p, size_t n) {
  out_reserve(n);
  memcpy(out_buf + out_len, p, n);
  out_len += n;
}

void put_u8(uint8_t v) { put_bytes(&v, 1); }

void put_u32(uint32_t v) {
  uint8_t b[4] = {v >> 24, v >> 16, v >> 8, v};
  put_bytes(b, 4);
}

void put_u64(uint64_t v) {
  put_u32(v >> 32);
  put_u32((uint32_t)v);
}

void put_str(const char *s, size_t n) {
  put_u32(n);
  put_bytes(s, n);
}

void put_cstr(const char *s) { put_str(s, strlen(s)); }

void frame_begin(uint8_t type, uint32_t id) {
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

void frame_send(void) {
  uint32_t n = out_len - 4;
  out_buf[0] = n >> 24;
  out_buf[1] = n >> 16;
  out_buf[2] = n >> 8;
  out_buf[3] = n;
  write_all(1, out_buf, out_len);
}

void send_simple(uint8_t type, uint32_t id) {
  frame_begin(type, id);
  frame_send();
}

void send_error(uint32_t id, uint8_t kind, const char *d1, const char *d2) {
  frame_begin(FRAME_ERROR, id);
  put_u8(kind);
  put_cstr(d1 ? d1 : "");
  put_cstr(d2 ? d2 : "");
  frame_send();
}

void send_errno(uint32_t id, uint8_t kind, const char *what, int err) {
  send_error(id, kind, what, strerror(err));
}

// ---------------------------------------------------------------------------------------------
// Input frames

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

uint8_t get_u8(struct in *in) {
  const uint8_t *p = take(in, 1);
  return p ? p[0] : 0;
}

uint32_t get_u32(struct in *in) {
  const uint8_t *p = take(in, 4);
  return p ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : 0;
}

uint64_t get_u64(struct in *in) {
  uint64_t hi = get_u32(in);
  return hi << 32 | get_u32(in);
}

// A NUL-terminated copy of a string field (NULL when malformed or holding a NUL).
char *get_str(struct in *in) {
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

int read_full(int fd, uint8_t *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return got == 0 && r == 0 ? 0 : -1;
    got += (size_t)r;
  }
  return 1;
}
