/**
 * Writes what is derived from the sandbox channel's one protocol table (src/sandbox/channel/protocol_table.ts):
 * the supervisor's C header and the tables of docs/sandbox_channel.md. scripts/build_supervisor runs it
 * before compiling, `deno task docs` writes the tables too; with --check it writes nothing and exits 1
 * naming every file that is not what the table generates (scripts/build_supervisor --check runs that).
 */
import {
  ANSWERS,
  ENTRY_TYPES,
  ERROR_KINDS,
  EXIT_FLAGS,
  LIMIT_SPECS,
  PROTOCOL_VERSION,
  REQUESTS,
  sizeInWords,
} from "../src/sandbox/channel/protocol_table.ts";
import { markdownTable, withSection } from "./lib/markdown.ts";

/** The header the supervisor's C sources include, relative to the repository. */
export const SUPERVISOR_HEADER = "src/sandbox/channel/supervisor/protocol.h";
/** The page whose protocol tables are generated. */
export const CHANNEL_PAGE = "docs/sandbox_channel.md";

const hex = (n: number) => "0x" + n.toString(16).toUpperCase().padStart(2, "0");

function cEnum(comment: string, entries: [string, string][]): string {
  return [`// ${comment}`, "enum {", ...entries.map(([name, value]) => `  ${name} = ${value},`), "};"].join(
    "\n",
  );
}

/** The C header: every constant of the table as the supervisor's names. */
export function supervisorHeader(): string {
  return [
    "// Generated from src/sandbox/channel/protocol_table.ts by scripts/build_supervisor — do not edit.",
    "// The sandbox channel's constants (docs/sandbox_channel.md); stn reads the same table.",
    "#ifndef STN_SUPERVISOR_PROTOCOL_H",
    "#define STN_SUPERVISOR_PROTOCOL_H",
    "",
    `#define PROTOCOL_VERSION ${PROTOCOL_VERSION}`,
    ...Object.entries(LIMIT_SPECS).flatMap(([name, l]) => [
      `// ${l.meaning[0].toUpperCase()}${l.meaning.slice(1)}.`,
      `#define ${name.toUpperCase()} ${l.bytes}`,
    ]),
    "",
    cEnum(
      "Frame types: requests (stn → supervisor), then answers (supervisor → stn).",
      [...Object.entries(REQUESTS), ...Object.entries(ANSWERS)].map(([name, f]) => [
        `FRAME_${name}`,
        hex(f.code),
      ]),
    ),
    "",
    cEnum(
      "The kinds of an ERROR frame.",
      Object.entries(ERROR_KINDS).map(([name, e]) => [
        `ERR_${name.toUpperCase()}`,
        String(e.code),
      ]),
    ),
    "",
    cEnum(
      "The bits of an EXIT frame's flags.",
      Object.entries(EXIT_FLAGS).map(([name, f]) => [
        `EXIT_FLAG_${name.toUpperCase()}`,
        String(f.bit),
      ]),
    ),
    "",
    cEnum(
      "The type byte of an ENTRIES entry.",
      ENTRY_TYPES.map((t, i) => [`ENTRY_${t.toUpperCase()}`, String(i)]),
    ),
    "",
    "#endif",
    "",
  ].join("\n");
}

/** The page's generated sections: marker name and table. */
export function channelSections(): { section: string; table: () => string }[] {
  return [
    {
      section: "channel-limits",
      table: () =>
        markdownTable(
          ["limit", "bytes", "meaning"],
          Object.entries(LIMIT_SPECS).map(([name, l]) => [
            `\`${name}\``,
            `${l.bytes} (${sizeInWords(l.bytes)})`,
            l.meaning,
          ]),
        ),
    },
    {
      section: "channel-requests",
      table: () =>
        markdownTable(
          ["type", "name", "payload", "answers (same id)"],
          Object.entries(REQUESTS).map(([name, f]) => [hex(f.code), name, f.payload, f.answers]),
        ),
    },
    {
      section: "channel-answers",
      table: () =>
        markdownTable(
          ["type", "name", "payload", "sent"],
          Object.entries(ANSWERS).map(([name, f]) => [hex(f.code), name, f.payload, f.sent]),
        ),
    },
    {
      section: "channel-exit-flags",
      table: () =>
        markdownTable(
          ["bit", "value", "name", "meaning"],
          Object.entries(EXIT_FLAGS).map(([name, f]) => [
            String(Math.log2(f.bit)),
            String(f.bit),
            `\`${name}\``,
            f.meaning,
          ]),
        ),
    },
    {
      section: "channel-errors",
      table: () =>
        markdownTable(
          ["kind", "name", "when", "detail1 / detail2"],
          Object.entries(ERROR_KINDS).map(([name, e]) => [String(e.code), name, e.when, e.details]),
        ),
    },
  ];
}

/** Each generated file: its path and the text the table makes of its current text. */
function generated(root: URL): { path: string; current: string; wanted: string }[] {
  const read = (path: string) => {
    try {
      return Deno.readTextFileSync(new URL(path, root));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "";
      throw err;
    }
  };
  const page = read(CHANNEL_PAGE);
  return [
    { path: SUPERVISOR_HEADER, current: read(SUPERVISOR_HEADER), wanted: supervisorHeader() },
    {
      path: CHANNEL_PAGE,
      current: page,
      wanted: channelSections().reduce((text, s) => withSection(text, s.section, s.table()), page),
    },
  ];
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  const check = Deno.args.includes("--check");
  const stale = generated(root).filter((g) => g.current !== g.wanted);
  for (const g of stale) {
    if (check) console.error(`supervisor_protocol: ${g.path} is not what protocol_table.ts generates`);
    else Deno.writeTextFileSync(new URL(g.path, root), g.wanted);
  }
  if (check && stale.length > 0) {
    console.error("supervisor_protocol: run scripts/build_supervisor to regenerate it");
    Deno.exit(1);
  }
}
