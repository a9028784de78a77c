import type { Buffer } from "node:buffer";
import { StationError } from "../../errors.ts";
import {
  changedWhileOpened,
  deleteNeedsRecursive,
  fileChanged,
  fileUnreadable,
  isDirectory,
  notADirectory,
  notAFile,
  notFound,
  pathChanged,
  sizeMismatch,
  symlinkNotAFile,
  throughSymlink,
  tooLarge,
} from "../errors.ts";
import { FieldReader } from "./protocol.ts";
import { ERROR_KIND } from "./protocol_table.ts";

/** What the refused request was about, to word the error as the exec path words it. */
export interface RefusedOp {
  op: "exec" | "write" | "read" | "list" | "delete";
  /** The path as the caller gave it. */
  path: string;
  /** The absolute workspace path. */
  target: string;
  /** READ's limit; WRITE's announced size. */
  bytes?: number;
}

const VERBS = { write: "writing", read: "reading", list: "listing", delete: "deleting" } as const;

/** An ERROR frame's payload as the StationError the Docker exec path throws for the same refusal. */
export function refusal(payload: Buffer, req: RefusedOp): StationError {
  const r = new FieldReader(payload);
  const kind = r.u8();
  const d1 = r.done ? "" : r.str();
  const d2 = r.done ? "" : r.str();
  const { op, path, target } = req;
  switch (kind) {
    case ERROR_KIND.not_found:
      return notFound(path);
    case ERROR_KIND.is_directory:
      return op === "delete" ? deleteNeedsRecursive(target) : isDirectory(path);
    case ERROR_KIND.not_a_file:
      return notAFile(target);
    case ERROR_KIND.not_a_directory:
      return notADirectory(target);
    case ERROR_KIND.too_large:
      return tooLarge(target, Number(d1), req.bytes ?? 0);
    case ERROR_KIND.unreadable:
      return fileUnreadable(target);
    case ERROR_KIND.parent_symlink:
      return throughSymlink(path, d1, d2);
    case ERROR_KIND.final_symlink:
      return symlinkNotAFile(target, d2);
    case ERROR_KIND.path_changed:
      return op === "write" ? pathChanged(target, d1) : changedWhileOpened(target);
    case ERROR_KIND.size_mismatch:
      return sizeMismatch(target, req.bytes ?? 0);
    case ERROR_KIND.file_changed:
      return fileChanged(target, Number(d2), Number(d1));
    default: {
      const what = op === "exec" ? "starting the command" : `${VERBS[op]} ${target}`;
      const name = Object.entries(ERROR_KIND).find(([, k]) => k === kind)?.[0] ?? `kind ${kind}`;
      return new StationError(
        "sandbox_command_failed",
        `${what} failed in the sandbox (${name}): ${[d1, d2].filter(Boolean).join(": ")}`,
        { status: 500 },
      );
    }
  }
}
