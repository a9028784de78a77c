/**
 * A command's --help text, laid out as commander lays it out: usage, description, then arguments, options
 * and subcommands as two columns, descriptions wrapped to the terminal's width (80 when not a terminal).
 */

/** An option as help shows it. */
interface HelpOption {
  readonly flags: string;
  readonly description: string;
  readonly hidden: boolean;
  readonly required: boolean;
  readonly optional: boolean;
  readonly defaultValue?: unknown;
  readonly argChoices?: string[];
  isBoolean(): boolean;
}

/** An argument as help shows it. */
interface HelpArgument {
  name(): string;
  readonly description: string;
  readonly required: boolean;
  readonly variadic: boolean;
  readonly defaultValue?: unknown;
}

/** What help reads of a command (src/cli/command.ts's Command). */
export interface HelpSubject {
  name(): string;
  description(): string;
  aliases(): string[];
  hasHelpCommand(): boolean;
  readonly parent: HelpSubject | null;
  readonly hidden: boolean;
  readonly options: readonly HelpOption[];
  readonly registeredArguments: readonly HelpArgument[];
  readonly commands: readonly HelpSubject[];
}

/** Descriptions narrower than this are not wrapped. */
const MIN_WIDTH_TO_WRAP = 40;

const HELP_OPTION = { flags: "-h, --help", description: "display help for command" };
const HELP_COMMAND = { term: "help [command]", description: "display help for command" };

/** The width help is wrapped to: the terminal's, when the stream is one. */
export function helpWidth(stderr: boolean): number {
  const stream = stderr ? Deno.stderr : Deno.stdout;
  return stream.isTerminal() ? Deno.consoleSize().columns : 80;
}

function argumentName(a: HelpArgument): string {
  const name = a.name() + (a.variadic ? "..." : "");
  return a.required ? `<${name}>` : `[${name}]`;
}

/** The name with its first alias: `workflow|workflows`. */
function nameAndAlias(cmd: HelpSubject): string {
  return cmd.name() + (cmd.aliases()[0] ? `|${cmd.aliases()[0]}` : "");
}

function usage(cmd: HelpSubject): string {
  let ancestors = "";
  for (let c = cmd.parent; c; c = c.parent) ancestors = `${c.name()} ${ancestors}`;
  const parts = ["[options]", ...(cmd.commands.length ? ["[command]"] : [])];
  return `${ancestors}${nameAndAlias(cmd)} ${
    [...parts, ...cmd.registeredArguments.map(argumentName)].join(" ")
  }`;
}

function subcommandTerm(cmd: HelpSubject): string {
  const args = cmd.registeredArguments.map(argumentName).join(" ");
  return nameAndAlias(cmd) + (cmd.options.length ? " [options]" : "") + (args ? ` ${args}` : "");
}

function optionDescription(o: HelpOption): string {
  const extra: string[] = [];
  if (o.argChoices) extra.push(`choices: ${o.argChoices.map((c) => JSON.stringify(c)).join(", ")}`);
  const showDefault = o.required || o.optional || (o.isBoolean() && typeof o.defaultValue === "boolean");
  if (o.defaultValue !== undefined && showDefault) extra.push(`default: ${JSON.stringify(o.defaultValue)}`);
  if (!extra.length) return o.description;
  return o.description ? `${o.description} (${extra.join(", ")})` : `(${extra.join(", ")})`;
}

function argumentDescription(a: HelpArgument): string {
  if (a.defaultValue === undefined) return a.description;
  const extra = `(default: ${JSON.stringify(a.defaultValue)})`;
  return a.description ? `${a.description} ${extra}` : extra;
}

/** Wraps text at spaces to width; each line of the text is wrapped on its own. */
function wrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  return text.split(/\r\n|\n/).map((line) => {
    const chunks = line.match(/\s*\S+/g);
    if (!chunks) return "";
    const lines: string[] = [];
    let current = chunks.shift()!;
    for (const chunk of chunks) {
      if (current.length + chunk.length <= width) current += chunk;
      else {
        lines.push(current);
        current = chunk.trimStart();
      }
    }
    lines.push(current);
    return lines.join("\n");
  }).join("\n");
}

/** One row: the term padded to the column, the description wrapped beside it. */
function item(term: string, termWidth: number, description: string, width: number): string {
  if (!description) return `  ${term}`;
  const remaining = width - termWidth - 4;
  // A description whose lines are indented is laid out by its author.
  const text = remaining < MIN_WIDTH_TO_WRAP || /\n[^\S\r\n]/.test(description)
    ? description
    : wrap(description, remaining).replace(/\n/g, "\n" + " ".repeat(termWidth + 2));
  return `  ${term.padEnd(termWidth)}  ${text.replace(/\n/g, "\n  ")}`;
}

/** The help text of a command, wrapped to width. */
export function formatHelp(cmd: HelpSubject, width: number): string {
  const args = cmd.registeredArguments.some((a) => a.description)
    ? cmd.registeredArguments.map((a) => [a.name(), argumentDescription(a)])
    : [];
  const options = [
    ...cmd.options.filter((o) => !o.hidden).map((o) => [o.flags, optionDescription(o)]),
    [HELP_OPTION.flags, HELP_OPTION.description],
  ];
  const commands = [
    ...cmd.commands.filter((c) => !c.hidden).map((c) => [subcommandTerm(c), c.description()]),
    ...(cmd.hasHelpCommand() ? [[HELP_COMMAND.term, HELP_COMMAND.description]] : []),
  ];
  const termWidth = Math.max(...[...args, ...options, ...commands].map(([term]) => term.length));
  const section = (title: string, rows: string[][]) =>
    rows.length ? [title, ...rows.map(([term, text]) => item(term, termWidth, text, width)), ""] : [];
  return [
    `Usage: ${usage(cmd)}`,
    "",
    ...(cmd.description() ? [wrap(cmd.description(), width), ""] : []),
    ...section("Arguments:", args),
    ...section("Options:", options),
    ...section("Commands:", commands),
  ].join("\n");
}
