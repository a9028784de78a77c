/**
 * The sandbox channel's constants, defined once (docs/sandbox_channel.md, v1): frame types, EXIT flags,
 * ERROR kinds, entry types and limits, each with the words the protocol page shows for it. stn's
 * protocol.ts and refusals.ts read them; scripts/supervisor_protocol.ts generates the supervisor's C
 * header (supervisor/protocol.h) and the page's tables from them. After changing one, run
 * scripts/build_supervisor: `scripts/build_supervisor --check` (and the test that runs it) fails until then.
 */

/** The protocol version both sides speak (the supervisor says its own in HELLO). */
export const PROTOCOL_VERSION = 1;

/** One size both sides rely on. */
export interface LimitSpec {
  bytes: number;
  meaning: string;
}

/** The sizes both sides rely on, by name. */
export const LIMIT_SPECS = {
  max_request_payload: {
    bytes: 1024 * 1024 + 64,
    meaning: "the largest request payload the supervisor accepts; a bigger frame ends it",
  },
  max_data: {
    bytes: 256 * 1024,
    meaning: "the most data in one DATA frame (the supervisor's) or WRITE_DATA frame (stn's)",
  },
} as const satisfies Record<string, LimitSpec>;

const KIB = 1024;
/** A size as the protocol page words it: "256 KiB", "1 MiB + 64 bytes". */
export function sizeInWords(bytes: number): string {
  const mib = Math.floor(bytes / (KIB * KIB));
  if (mib > 0) return bytes % (KIB * KIB) === 0 ? `${mib} MiB` : `${mib} MiB + ${bytes % (KIB * KIB)} bytes`;
  return bytes % KIB === 0 ? `${bytes / KIB} KiB` : `${bytes} bytes`;
}

/** One request frame (stn → supervisor): its type byte, payload fields and what answers it. */
export interface RequestSpec {
  code: number;
  payload: string;
  answers: string;
}

/** One frame the supervisor sends: its type byte, payload fields and when it comes. */
export interface AnswerSpec {
  code: number;
  payload: string;
  sent: string;
}

/** The frames stn sends, by name. */
export const REQUESTS = {
  EXEC: {
    code: 0x01,
    payload: "str cwd (absolute), u32 argc, argc × str, u32 envc, envc × str `K=V`",
    answers: "STDOUT / STDERR (raw bytes) any number, then one EXIT; or one ERROR if it could not start",
  },
  KILL: {
    code: 0x02,
    payload: "(none; id = the EXEC's id)",
    answers: "none of its own: the EXEC ends with EXIT (killed flag set)",
  },
  SIGNAL: {
    code: 0x03,
    payload: "u32 signo (id = the EXEC's id)",
    answers: "none (sent to the command's main process)",
  },
  WRITE: {
    code: 0x10,
    payload: "str path (absolute, normalized, under /workspace), u32 mode (perm bits), u64 size",
    answers: "OK when ready for data, or ERROR (for size 0 the final OK or ERROR follows at once)",
  },
  WRITE_DATA: {
    code: 0x11,
    payload: `raw bytes, at most ${sizeInWords(LIMIT_SPECS.max_data.bytes)} (id = the WRITE's id)`,
    answers: "after the last byte (total == size): OK, or ERROR; more than size: ERROR size_mismatch",
  },
  WRITE_ABORT: {
    code: 0x12,
    payload: "(none)",
    answers: "none; the temporary file is removed, the old file stays",
  },
  READ: { code: 0x13, payload: "str path, u64 max bytes", answers: "SIZE (u64 size) or ERROR" },
  READ_MORE: {
    code: 0x14,
    payload: "u32 bytes wanted (id = the READ's id)",
    answers: `DATA frames (≤ ${
      sizeInWords(LIMIT_SPECS.max_data.bytes)
    } each) totalling up to that many; after the last byte of the file one END (an empty file: END answers the first READ_MORE); ERROR file_changed if the file shrank`,
  },
  READ_CLOSE: { code: 0x15, payload: "(none)", answers: "none; the file is closed" },
  LIST: {
    code: 0x16,
    payload: "str path (absolute), u8 recursive",
    answers: "ENTRIES (any number), then OK; or ERROR",
  },
  DELETE: { code: 0x17, payload: "str path, u8 recursive", answers: "OK or ERROR" },
  PING: { code: 0x20, payload: "(none)", answers: "OK" },
} as const satisfies Record<string, RequestSpec>;

/** What an ENTRIES entry's type byte means, by its value. */
export const ENTRY_TYPES = ["file", "dir", "symlink", "other"] as const;

/** The frames the supervisor sends, by name. */
export const ANSWERS = {
  STDOUT: { code: 0x82, payload: "raw bytes the command wrote to stdout", sent: "to EXEC" },
  STDERR: { code: 0x83, payload: "raw bytes the command wrote to stderr", sent: "to EXEC" },
  EXIT: {
    code: 0x84,
    payload: "i32 exit code, u8 flags (EXIT flags below)",
    sent: "to EXEC, once, last",
  },
  ERROR: {
    code: 0x8f,
    payload: "u8 kind, str detail1, str detail2 (ERROR kinds below)",
    sent: "to any request, last",
  },
  OK: { code: 0x90, payload: "(none)", sent: "to WRITE, WRITE_DATA, LIST, DELETE, PING" },
  SIZE: { code: 0x91, payload: "u64 size", sent: "to READ" },
  DATA: {
    code: 0x92,
    payload: `raw bytes of the file, at most ${sizeInWords(LIMIT_SPECS.max_data.bytes)}`,
    sent: "to READ_MORE",
  },
  END: { code: 0x93, payload: "(none)", sent: "to READ_MORE, after the file's last byte" },
  ENTRIES: {
    code: 0x94,
    payload: `entries until the frame ends, each: u8 type (${
      ENTRY_TYPES.map((t, i) => `${i} ${t}`).join(", ")
    }), u32 mode (st_mode & 07777), u64 size, i64 mtime (seconds), str path (relative to the listed directory, \`a/b\` for nested)`,
    sent: "to LIST",
  },
  HELLO: {
    code: 0xa0,
    payload: `u32 protocol version (${PROTOCOL_VERSION}), u32 supervisor pid`,
    sent: "unprompted, once at start, id 0",
  },
} as const satisfies Record<string, AnswerSpec>;

/** One bit of an EXIT frame's flags. */
export interface ExitFlagSpec {
  bit: number;
  meaning: string;
}

/** The bits of an EXIT frame's flags, by name. */
export const EXIT_FLAGS = {
  killed: { bit: 1, meaning: "a KILL ended it" },
  lost: {
    bit: 2,
    meaning:
      "the command's shim died by a signal, so its processes could not be followed: stn must kill the whole group G over the exec path and drop the channel (only a command that kills its own parent causes it)",
  },
} as const satisfies Record<string, ExitFlagSpec>;

/** One ERROR kind: its number, when the supervisor answers it, and what its two details hold. */
export interface ErrorKindSpec {
  code: number;
  when: string;
  details: string;
}

/** The kinds of an ERROR frame, by name. */
export const ERROR_KINDS = {
  not_found: {
    code: 1,
    when: "a name (or a parent) does not exist; a parent is not a directory",
    details: "—",
  },
  is_directory: {
    code: 2,
    when: "WRITE/READ of a directory; DELETE of a directory without recursive",
    details: "—",
  },
  not_a_file: { code: 3, when: "READ of something that is not a regular file", details: "—" },
  not_a_directory: { code: 4, when: "LIST of something that is not a directory", details: "—" },
  too_large: { code: 5, when: "READ of a file over max", details: "size in decimal / —" },
  unreadable: { code: 6, when: "READ: open fails with EACCES/EPERM", details: "strerror / —" },
  parent_symlink: {
    code: 7,
    when:
      "a parent directory on the path is a symlink (READ, LIST, DELETE), or LIST's own directory is one (then detail1 is that link)",
    details: "the link's absolute path / its target",
  },
  final_symlink: {
    code: 8,
    when: "READ of a name that is a symlink",
    details: "the link's absolute path / its target",
  },
  path_changed: {
    code: 9,
    when: "WRITE: a parent could not be made (or kept) a directory",
    details: "strerror / —",
  },
  size_mismatch: { code: 10, when: "WRITE got more bytes than size", details: "—" },
  io: { code: 11, when: "any other failure (write error, ENOSPC, …)", details: "what failed / strerror" },
  exec_failed: { code: 12, when: "EXEC could not create its pipes or fork", details: "strerror / —" },
  protocol: { code: 13, when: "unknown request type, unknown id", details: "—" },
  file_changed: { code: 14, when: "READ: the file shrank while it was read", details: "bytes sent / size" },
} as const satisfies Record<string, ErrorKindSpec>;

/** A table's numbers by name: `{ EXEC: 1, … }` from `{ EXEC: { code: 1, … }, … }`. */
function numbers<T extends Record<string, Record<K, number>>, K extends string>(
  table: T,
  key: K,
): { readonly [N in keyof T]: T[N][K] } {
  return Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, spec[key]])) as {
    [N in keyof T]: T[N][K];
  };
}

/** Frame types, both directions, by name. */
export const FRAME = { ...numbers(REQUESTS, "code"), ...numbers(ANSWERS, "code") };

/** The sizes both sides rely on, in bytes, by name. */
export const LIMITS = numbers(LIMIT_SPECS, "bytes");

/** ERROR kinds by name. */
export const ERROR_KIND = numbers(ERROR_KINDS, "code");

/** EXIT flag bits by name. */
export const EXIT_FLAG = numbers(EXIT_FLAGS, "bit");
