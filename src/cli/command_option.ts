/**
 * The options and positional arguments of a command (src/cli/command.ts): how their flags and specs are
 * read, and how an option checks and keeps its value.
 */

/** A value a custom option parser refuses; its message follows "option '…' argument '…' is invalid.". */
export class InvalidArgumentError extends Error {}

export type ParseArg = (value: string, previous: unknown) => unknown;

/** An option: its flags as written ("-o, --output <file>"), what they mean, and how its value is read. */
export class Option {
  readonly short?: string;
  readonly long?: string;
  /** Takes a value (`<value>`). */
  readonly required: boolean;
  /** May take a value (`[value]`). */
  readonly optional: boolean;
  readonly variadic: boolean;
  /** `--no-x`: sets x false. */
  readonly negate: boolean;
  /** Must be given (requiredOption). */
  mandatory = false;
  hidden = false;
  defaultValue?: unknown;
  argChoices?: string[];
  parseArg?: ParseArg;

  constructor(readonly flags: string, readonly description = "") {
    const words = flags.split(/[ |,]+/).filter(Boolean);
    if (words.length > 1 && !/^[[<]/.test(words[1])) this.short = words.shift();
    this.long = words[0]?.startsWith("--") ? words.shift() : undefined;
    if (!this.long && !this.short) this.short = words.shift();
    this.required = flags.includes("<");
    this.optional = flags.includes("[");
    this.variadic = /\w\.\.\.[>\]]$/.test(flags);
    this.negate = this.long?.startsWith("--no-") ?? false;
  }

  /** The option's name: its long flag without dashes, else its short one. */
  name(): string {
    return this.long ? this.long.slice(2) : this.short!.slice(1);
  }

  /** The key of its value in `opts()`: the name in camelCase, without a `no-`. */
  attributeName(): string {
    return this.name().replace(/^no-/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  }

  /** Whether arg is one of its flags. */
  is(arg: string): boolean {
    return arg === this.short || arg === this.long;
  }

  /** A flag that takes no value. */
  isBoolean(): boolean {
    return !this.required && !this.optional && !this.negate;
  }

  /** Only these values are accepted. */
  choices(values: readonly string[]): this {
    this.argChoices = [...values];
    this.parseArg = (arg) => {
      if (!this.argChoices!.includes(arg)) {
        throw new InvalidArgumentError(`Allowed choices are ${this.argChoices!.join(", ")}.`);
      }
      return arg;
    };
    return this;
  }

  /** Left out of --help (and of completion). */
  hideHelp(): this {
    this.hidden = true;
    return this;
  }
}

/** A positional argument: `<name>` required, `[name]` optional, `name...` the rest. */
export interface Argument {
  name(): string;
  readonly description: string;
  readonly required: boolean;
  readonly variadic: boolean;
  readonly defaultValue?: unknown;
}

/** An argument from its spec ("<run>", "[path]", "<files...>"). */
export function argument(spec: string, description = "", defaultValue?: unknown): Argument {
  const variadic = spec.endsWith("...>") || spec.endsWith("...]");
  const bare = spec.slice(1, variadic ? -4 : -1);
  return { name: () => bare, description, required: spec.startsWith("<"), variadic, defaultValue };
}
