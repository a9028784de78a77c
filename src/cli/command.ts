/**
 * The command tree and its parser: the part of commander's API stn uses (`command`, `option`, `argument`,
 * `action`, help), with commander's parsing rules and messages, in plain TypeScript. Commander loads Deno's
 * Node compatibility layer (node:events, node:child_process, node:process), ~20 ms of every command's start;
 * this needs no Node module (docs/benchmarks.md, startup). The same tree gives --help (command_help.ts) and
 * the completion scripts (completions.ts).
 */

import { didYouMean } from "../lib/did_you_mean.ts";
import { formatHelp, helpWidth } from "./command_help.ts";
import { type Argument, argument, InvalidArgumentError, Option, type ParseArg } from "./command_option.ts";

export { Option };

/** Ends a parse: help or the version shown (exit code 0), or a usage error already printed (its code says which). */
export class CommandExit extends Error {
  constructor(readonly exitCode: number, readonly code: string, message: string) {
    super(message);
  }
}

// deno-lint-ignore no-explicit-any -- an action's parameters are its arguments, then opts and the command
type Action = (...args: any[]) => unknown;
type HelpPosition = "before" | "after";
type Write = (text: string) => void;

/** Writes all of text to a stream (a pipe may take a long help text in parts). */
function writeAll(stream: typeof Deno.stdout, text: string): void {
  const bytes = new TextEncoder().encode(text);
  for (let done = 0; done < bytes.length;) done += stream.writeSync(bytes.subarray(done));
}

const writeOut: Write = (text) => writeAll(Deno.stdout, text);
const writeErr: Write = (text) => writeAll(Deno.stderr, text);

/** A command: its options, arguments, subcommands and action. */
export class Command {
  readonly commands: Command[] = [];
  readonly options: Option[] = [];
  readonly registeredArguments: Argument[] = [];
  parent: Command | null = null;
  hidden = false;
  private aliasList: string[] = [];
  private text = "";
  private handler?: Action;
  private values: Record<string, unknown> = {};
  private helpTexts: Partial<Record<HelpPosition, string>> = {};
  private helpAfterError?: string | boolean;
  private errorWriter?: Write;
  private versionOption?: Option;
  private versionText = "";

  constructor(private cmdName = "") {}

  /** The command's name (what the user types). */
  name(): string {
    return this.cmdName;
  }

  /** Sets the description; without text, returns it. */
  description(): string;
  description(text: string): this;
  description(text?: string): string | this {
    if (text === undefined) return this.text;
    this.text = text;
    return this;
  }

  /** Adds another name for the command. */
  alias(name: string): this {
    this.aliasList.push(name);
    return this;
  }

  /** The command's other names. */
  aliases(): string[] {
    return this.aliasList;
  }

  /** Adds a subcommand ("name <arg> [more...]") and returns it. */
  command(nameAndArgs: string, opts: { hidden?: boolean } = {}): Command {
    const [name, ...args] = nameAndArgs.split(/ +/);
    const sub = new Command(name);
    sub.parent = this;
    sub.hidden = Boolean(opts.hidden);
    for (const a of args) sub.argument(a);
    this.commands.push(sub);
    return sub;
  }

  /** Adds a positional argument. */
  argument(spec: string, description?: string, defaultValue?: unknown): this {
    this.registeredArguments.push(argument(spec, description, defaultValue));
    return this;
  }

  /** Adds an option: flags, description, then a default value or a parser and its first `previous`. */
  option(flags: string, description?: string, parseOrDefault?: unknown, defaultValue?: unknown): this {
    const option = new Option(flags, description);
    if (typeof parseOrDefault === "function") {
      option.parseArg = parseOrDefault as ParseArg;
      option.defaultValue = defaultValue;
    } else option.defaultValue = parseOrDefault;
    return this.addOption(option);
  }

  /** An option that must be given. */
  requiredOption(
    flags: string,
    description?: string,
    parseOrDefault?: unknown,
    defaultValue?: unknown,
  ): this {
    this.option(flags, description, parseOrDefault, defaultValue);
    this.options.at(-1)!.mandatory = true;
    return this;
  }

  /** Adds a built option; its default (a `--no-x` alone: true) is set now. */
  addOption(option: Option): this {
    this.options.push(option);
    const key = option.attributeName();
    if (option.negate) {
      const positive = this.options.some((o) => o.long === option.long!.replace(/^--no-/, "--"));
      if (!positive) this.values[key] = option.defaultValue ?? true;
    } else if (option.defaultValue !== undefined) this.values[key] = option.defaultValue;
    return this;
  }

  /** Adds `-V, --version`, which prints `version`. */
  version(version: string, flags: string, description: string): this {
    this.versionOption = new Option(flags, description);
    this.versionText = version;
    return this.addOption(this.versionOption);
  }

  /** What runs the command: its arguments, then its options and the command. */
  action(fn: Action): this {
    this.handler = fn;
    return this;
  }

  /** Text printed before or after the command's help. */
  addHelpText(position: HelpPosition, text: string): this {
    this.helpTexts[position] = text;
    return this;
  }

  /** After a usage error, print this line (or nothing when false). */
  showHelpAfterError(line: string | boolean): this {
    this.helpAfterError = line;
    return this;
  }

  /** Where usage errors are written (a no-op silences them). */
  configureOutput(output: { outputError: Write }): this {
    this.errorWriter = output.outputError;
    return this;
  }

  /** The command's own option values, by attribute name. */
  opts(): Record<string, unknown> {
    return { ...this.values };
  }

  /** The option values of the command and of every command above it. */
  optsWithGlobals(): Record<string, unknown> {
    return this.lineage().reduce((all, cmd) => Object.assign(all, cmd.opts()), {});
  }

  /** The help text (usage, description, arguments, options, subcommands), as --help prints it. */
  helpInformation(width = 80): string {
    return formatHelp(this, width);
  }

  /** Prints the help to stdout (or stderr for an error) with its before/after texts. */
  outputHelp(error = false): void {
    const write = error ? writeErr : writeOut;
    if (this.helpTexts.before) write(`${this.helpTexts.before}\n`);
    write(this.helpInformation(helpWidth(error)));
    if (this.helpTexts.after) write(`${this.helpTexts.after}\n`);
  }

  /** Parses args (the user's, without the program name) and runs the command they name. */
  async parseAsync(args: string[]): Promise<void> {
    await this.parseCommand([], args);
  }

  /** The command, then its parent, up to the program. */
  private lineage(): Command[] {
    return this.parent ? [this, ...this.parent.lineage()] : [this];
  }

  /** A subcommand by name or alias. */
  private find(name: string | undefined): Command | undefined {
    return this.commands.find((c) => c.cmdName === name || c.aliasList.includes(name ?? ""));
  }

  /** Whether `help [command]` is one of the subcommands. */
  hasHelpCommand(): boolean {
    return this.commands.length > 0 && !this.handler && !this.find("help");
  }

  /** A setting of the nearest command (this one, then up) that has it set. */
  private inherited<T>(read: (c: Command) => T | undefined): T | undefined {
    for (const c of this.lineage()) {
      const value = read(c);
      if (value !== undefined) return value;
    }
    return undefined;
  }

  /** Prints a usage error as commander does and ends the parse with it. */
  private fail(message: string, code: string): never {
    (this.inherited((c) => c.errorWriter) ?? writeErr)(`${message}\n`);
    const after = this.inherited((c) => c.helpAfterError);
    if (typeof after === "string") writeErr(`${after}\n`);
    throw new CommandExit(1, code, message);
  }

  private help(error: boolean): never {
    this.outputHelp(error);
    if (error) throw new CommandExit(1, "commander.help", "(outputHelp)");
    throw new CommandExit(0, "commander.helpDisplayed", "(outputHelp)");
  }

  private setValue(option: Option, value: string | undefined): void {
    if (option === this.versionOption) {
      writeOut(`${this.versionText}\n`);
      throw new CommandExit(0, "commander.version", this.versionText);
    }
    const key = option.attributeName();
    const previous = this.values[key];
    let v: unknown = value;
    if (value !== undefined && option.parseArg) {
      try {
        v = option.parseArg(value, previous);
      } catch (err) {
        if (!(err instanceof InvalidArgumentError)) throw err;
        this.fail(
          `error: option '${option.flags}' argument '${value}' is invalid. ${err.message}`,
          "commander.invalidArgument",
        );
      }
    } else if (value !== undefined && option.variadic) {
      v = Array.isArray(previous) && previous !== option.defaultValue ? [...previous, value] : [value];
    }
    if (v === undefined || v === null) v = option.negate ? false : option.required ? "" : true;
    this.values[key] = v;
  }

  /** Commander's parseOptions: this command's options, anywhere; the rest as operands or unknown. */
  private parseOptions(args: string[]): { operands: string[]; unknown: string[] } {
    const operands: string[] = [], unknown: string[] = [];
    let dest = operands;
    const maybeOption = (arg: string) => arg.length > 1 && arg[0] === "-";
    const own = (flag: string) => this.options.find((o) => o.is(flag));
    let group: string | undefined;
    let i = 0;
    while (i < args.length || group !== undefined) {
      const arg = group ?? args[i++];
      group = undefined;
      if (arg === "--") {
        if (dest === unknown) dest.push(arg);
        dest.push(...args.slice(i));
        break;
      }
      const option = maybeOption(arg) ? own(arg) : undefined;
      if (option) {
        if (option.required) {
          const value = args[i++];
          if (value === undefined) {
            this.fail(`error: option '${option.flags}' argument missing`, "commander.optionMissingArgument");
          }
          this.setValue(option, value);
        } else if (option.optional) {
          this.setValue(option, i < args.length && !maybeOption(args[i]) ? args[i++] : undefined);
        } else this.setValue(option, undefined);
        continue;
      }
      if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
        const short = own(`-${arg[1]}`);
        if (short) {
          if (short.required) this.setValue(short, arg.slice(2));
          else {
            this.setValue(short, undefined);
            group = `-${arg.slice(2)}`;
          }
          continue;
        }
      }
      if (/^--[^=]+=/.test(arg)) {
        const long = own(arg.slice(0, arg.indexOf("=")));
        if (long && (long.required || long.optional)) {
          this.setValue(long, arg.slice(arg.indexOf("=") + 1));
          continue;
        }
      }
      if (dest === operands && maybeOption(arg)) dest = unknown;
      dest.push(arg);
    }
    return { operands, unknown };
  }

  /** Commander's _parseCommand: dispatch to a subcommand, or check and run this one's action. */
  private async parseCommand(given: string[], rest: string[]): Promise<void> {
    const parsed = this.parseOptions(rest);
    const operands = [...given, ...parsed.operands];
    const unknown = parsed.unknown;
    const sub = this.find(operands[0]);
    if (sub) return sub.parseCommand(operands.slice(1), unknown);
    if (this.hasHelpCommand() && operands[0] === "help") {
      if (operands[1] === undefined) this.help(false);
      const named = this.find(operands[1]);
      if (!named) this.help(true);
      named.help(false);
    }
    if (this.commands.length && !operands.length && !unknown.length && !this.handler) this.help(true);
    if (unknown.some((a) => a === "-h" || a === "--help")) this.help(false);
    for (const cmd of this.lineage()) {
      const missing = cmd.options.find((o) => o.mandatory && cmd.values[o.attributeName()] === undefined);
      if (missing) {
        cmd.fail(
          `error: required option '${missing.flags}' not specified`,
          "commander.missingMandatoryOptionValue",
        );
      }
    }
    if (!this.handler && operands.length && this.commands.length) this.unknownCommand(operands[0]);
    if (unknown.length) this.unknownOption(unknown[0]);
    if (!this.handler) return this.commands.length ? this.help(true) : undefined;
    await this.handler(...this.processArguments(operands), this.opts(), this);
  }

  /** The action's positional parameters, checked against the declared arguments. */
  private processArguments(args: string[]): unknown[] {
    const declared = this.registeredArguments;
    declared.forEach((a, i) => {
      if (a.required && args[i] === undefined) {
        this.fail(`error: missing required argument '${a.name()}'`, "commander.missingArgument");
      }
    });
    if (!declared.at(-1)?.variadic && args.length > declared.length) {
      const s = declared.length === 1 ? "" : "s";
      const where = this.parent ? ` for '${this.cmdName}'` : "";
      this.fail(
        `error: too many arguments${where}. Expected ${declared.length} argument${s} but got ${args.length}: ${
          args.join(", ")
        }.`,
        "commander.excessArguments",
      );
    }
    return declared.map((a, i) =>
      a.variadic ? (i < args.length ? args.slice(i) : a.defaultValue ?? []) : args[i] ?? a.defaultValue
    );
  }

  private unknownOption(flag: string): never {
    const longs = this.lineage().flatMap((c) =>
      c.options.filter((o) => !o.hidden && o.long).map((o) => o.long!)
    );
    const near = flag.startsWith("--") ? didYouMean(flag, [...longs, "--help"]) : undefined;
    this.fail(
      `error: unknown option '${flag}'${near ? `\n(Did you mean ${near}?)` : ""}`,
      "commander.unknownOption",
    );
  }

  private unknownCommand(name: string): never {
    const names = this.commands.filter((c) => !c.hidden).flatMap((
      c,
    ) => [c.cmdName, ...c.aliasList.slice(0, 1)]);
    const near = didYouMean(name, this.hasHelpCommand() ? [...names, "help"] : names);
    this.fail(
      `error: unknown command '${name}'${near ? `\n(Did you mean ${near}?)` : ""}`,
      "commander.unknownCommand",
    );
  }
}
