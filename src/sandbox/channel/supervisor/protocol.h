// Generated from src/sandbox/channel/protocol_table.ts by scripts/build_supervisor — do not edit.
// The sandbox channel's constants (docs/sandbox_channel.md); stn reads the same table.
#ifndef STN_SUPERVISOR_PROTOCOL_H
#define STN_SUPERVISOR_PROTOCOL_H

#define PROTOCOL_VERSION 1
// The largest request payload the supervisor accepts; a bigger frame ends it.
#define MAX_REQUEST_PAYLOAD 1048640
// The most data in one DATA frame (the supervisor's) or WRITE_DATA frame (stn's).
#define MAX_DATA 262144

// Frame types: requests (stn → supervisor), then answers (supervisor → stn).
enum {
  FRAME_EXEC = 0x01,
  FRAME_KILL = 0x02,
  FRAME_SIGNAL = 0x03,
  FRAME_WRITE = 0x10,
  FRAME_WRITE_DATA = 0x11,
  FRAME_WRITE_ABORT = 0x12,
  FRAME_READ = 0x13,
  FRAME_READ_MORE = 0x14,
  FRAME_READ_CLOSE = 0x15,
  FRAME_LIST = 0x16,
  FRAME_DELETE = 0x17,
  FRAME_PING = 0x20,
  FRAME_STDOUT = 0x82,
  FRAME_STDERR = 0x83,
  FRAME_EXIT = 0x84,
  FRAME_ERROR = 0x8F,
  FRAME_OK = 0x90,
  FRAME_SIZE = 0x91,
  FRAME_DATA = 0x92,
  FRAME_END = 0x93,
  FRAME_ENTRIES = 0x94,
  FRAME_HELLO = 0xA0,
};

// The kinds of an ERROR frame.
enum {
  ERR_NOT_FOUND = 1,
  ERR_IS_DIRECTORY = 2,
  ERR_NOT_A_FILE = 3,
  ERR_NOT_A_DIRECTORY = 4,
  ERR_TOO_LARGE = 5,
  ERR_UNREADABLE = 6,
  ERR_PARENT_SYMLINK = 7,
  ERR_FINAL_SYMLINK = 8,
  ERR_PATH_CHANGED = 9,
  ERR_SIZE_MISMATCH = 10,
  ERR_IO = 11,
  ERR_EXEC_FAILED = 12,
  ERR_PROTOCOL = 13,
  ERR_FILE_CHANGED = 14,
};

// The bits of an EXIT frame's flags.
enum {
  EXIT_FLAG_KILLED = 1,
  EXIT_FLAG_LOST = 2,
};

// The type byte of an ENTRIES entry.
enum {
  ENTRY_FILE = 0,
  ENTRY_DIR = 1,
  ENTRY_SYMLINK = 2,
  ENTRY_OTHER = 3,
};

#endif
